"""In-flight request tracking for one tab, from Playwright's request events (all frames,
out-of-process iframes included)."""

from __future__ import annotations

import time
from typing import Any

# Long-lived connections never "finish": they must not hold a stability wait open.
IGNORED_TYPES = frozenset({"websocket", "eventsource", "manifest", "ping"})


class NetworkMonitor:
    def __init__(self, page: Any) -> None:
        self.inflight: set[Any] = set()
        self.last_activity = time.monotonic()
        self.requests = 0
        self.failed: list[str] = []
        page.on("request", self._on_request)
        page.on("requestfinished", self._on_done)
        page.on("requestfailed", self._on_failed)

    def _on_request(self, req: Any) -> None:
        if req.resource_type in IGNORED_TYPES:
            return
        self.inflight.add(req)
        self.requests += 1
        self.last_activity = time.monotonic()

    def _on_done(self, req: Any) -> None:
        if req in self.inflight:
            self.inflight.discard(req)
            self.last_activity = time.monotonic()

    def _on_failed(self, req: Any) -> None:
        if req in self.inflight:
            self.inflight.discard(req)
            self.last_activity = time.monotonic()
            failure = req.failure or "failed"
            if "ERR_ABORTED" not in failure:
                self.failed.append(f"{req.method} {req.url[:120]}: {failure}")
                del self.failed[:-20]

    def quiet_for(self) -> float:
        """Seconds since the last request started or ended; 0 while any request is in flight."""
        if self.inflight:
            return 0.0
        return time.monotonic() - self.last_activity
