"""A fake OpenAI-compatible chat-completions server for planner tests: a real local HTTP server that
answers from a queue of scripted replies and records every request (body and Authorization header)."""

from __future__ import annotations

import collections
import json
import time

from support.recording_server import RecordingServer, Reply, Request


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
        self.server = RecordingServer({"POST /*": self._answer})
        self.base_url = self.server.url("v1")
        self.requests = self.server.view(Request.json)  # each request's body
        self.auth = self.server.view(lambda r: r.header("Authorization"))

    def _answer(self, request: Request) -> Reply:
        body = request.json()
        reply = self.replies.popleft() if self.replies else status(500, "no scripted reply left")
        delay = 0.0
        if reply[0] == "hang":
            delay, reply = reply[1], say("too late")
        code, payload = (reply[1], reply[2]) if reply[0] == "status" else (200, {
            "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body.get("model", ""),
            "choices": [{"index": 0, "message": reply[1], "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
        return Reply(json.dumps(payload).encode(), status=code, content_type="application/json", delay=delay)

    def add(self, *replies: tuple) -> None:
        self.replies.extend(replies)

    def reset(self) -> None:
        self.replies.clear()
        self.server.log.clear()

    def close(self) -> None:
        self.server.close()
