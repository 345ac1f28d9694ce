"""A fake OpenAI-compatible chat-completions server for planner tests: a real local HTTP server that
answers from a queue of scripted replies and records every request (body and Authorization header)."""

from __future__ import annotations

import collections
import http.server
import json
import threading
import time


def call(name: str, args: dict | None = None, *, raw: str | None = None, content: str | None = None) -> tuple:
    """A reply with one tool call (`raw`: the arguments string exactly as given)."""
    tc = {"id": f"call_{name}_{time.monotonic_ns()}", "type": "function",
          "function": {"name": name, "arguments": raw if raw is not None else json.dumps(args or {})}}
    return ("ok", {"role": "assistant", "content": content, "tool_calls": [tc]})


def say(content: str) -> tuple:
    return ("ok", {"role": "assistant", "content": content})


def status(code: int, message: str) -> tuple:
    return ("status", code, {"error": {"message": message, "type": "invalid_request_error"}})


def hang(seconds: float) -> tuple:
    return ("hang", seconds)


class FakeLLM:
    """`POST /v1/chat/completions` answers from a queue of scripted replies and records each request."""

    def __init__(self) -> None:
        self.replies: collections.deque = collections.deque()
        self.requests: list[dict] = []
        self.auth: list[str] = []
        llm = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - stdlib name
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                llm.requests.append(body)
                llm.auth.append(self.headers.get("Authorization", ""))
                reply = llm.replies.popleft() if llm.replies else status(500, "no scripted reply left")
                if reply[0] == "hang":
                    time.sleep(reply[1])
                    reply = say("too late")
                code, payload = (reply[1], reply[2]) if reply[0] == "status" else (200, {
                    "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body.get("model", ""),
                    "choices": [{"index": 0, "message": reply[1], "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
                data = json.dumps(payload).encode()
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client gave up (timeout test)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def add(self, *replies: tuple) -> None:
        self.replies.extend(replies)

    def reset(self) -> None:
        self.replies.clear()
        self.requests.clear()
        self.auth.clear()


