"""A fake seed backend (`POST /api/agent/interact`): a real local HTTP server that serves scripted replies in
order and keeps every request it was sent."""

from __future__ import annotations

import http.server
import json
import threading
import time

from engine.loop import Observation


def ok(**data) -> dict:
    return {"success": True, "data": data}


class Raw:
    """A reply given exactly: HTTP status, body (bytes, or JSON-encoded), after a delay."""

    def __init__(self, status: int, body, delay: float = 0.0):
        self.status, self.delay = status, delay
        self.body = body if isinstance(body, bytes) else json.dumps(body).encode()


class FakeBackend:
    """Serves scripted replies in order (a dict is a 200 JSON reply, a callable gets the request
    body and returns a reply) and keeps every request body in `requests`."""

    def __init__(self, *replies):
        self.replies = list(replies)
        self.requests: list[dict] = []
        self.paths: list[str] = []
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - stdlib name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append(body)
                fake.paths.append(self.path)
                reply = fake.replies.pop(0) if fake.replies else Raw(500, {"error": "no scripted reply left"})
                if callable(reply):
                    reply = reply(body)
                if not isinstance(reply, Raw):
                    reply = Raw(200, reply)
                time.sleep(reply.delay)
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                except OSError:  # the client gave up (timeout test)
                    pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def backend_observation(snap, index=0, **kw) -> Observation:
    return Observation(task="Join the newsletter as ada@example.com", step_index=index, snapshot=snap, url=snap.url,
                       **kw)
