"""A fake seed backend (`POST /api/agent/interact`): a real local HTTP server that serves scripted replies in
order and keeps every request it was sent."""

from __future__ import annotations

import json

from engine.loop import Observation

from support.recording_server import RecordingServer, Reply, Request


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
        self.server = RecordingServer({"POST /*": self._answer})
        self.url = self.server.origin()
        self.requests = self.server.view(Request.json)
        self.paths = self.server.view(lambda r: r.target)

    def _answer(self, request: Request) -> Reply:
        reply = self.replies.pop(0) if self.replies else Raw(500, {"error": "no scripted reply left"})
        if callable(reply):
            reply = reply(request.json())
        if not isinstance(reply, Raw):
            reply = Raw(200, reply)
        return Reply(reply.body, status=reply.status, content_type="application/json", delay=reply.delay)

    def close(self) -> None:
        self.server.close()


def backend_observation(snap, index=0, **kw) -> Observation:
    return Observation(task="Join the newsletter as ada@example.com", step_index=index, snapshot=snap, url=snap.url,
                       **kw)
