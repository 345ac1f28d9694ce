"""In-flight request tracking for one tab, from Playwright's request events (all frames,
out-of-process iframes included), and the HTTP status each main-frame document was answered with."""

from __future__ import annotations

import time
import urllib.parse
from typing import Any

# Long-lived connections never "finish": they must not hold a stability wait open.
IGNORED_TYPES = frozenset({"websocket", "eventsource", "manifest", "ping"})
MAX_DOCUMENTS = 64  # main-frame documents whose status is remembered (back and forward reach the older ones)


def _document(url: str) -> str:
    return urllib.parse.urldefrag(url or "")[0]


class NetworkMonitor:
    def __init__(self, page: Any) -> None:
        self.inflight: set[Any] = set()
        self.last_activity = time.monotonic()
        self.requests = 0
        self.failed: list[str] = []
        self.documents: dict[str, int] = {}  # main-frame document address (no #fragment) → its HTTP status
        page.on("request", self._on_request)
        page.on("requestfinished", self._on_done)
        page.on("requestfailed", self._on_failed)
        page.on("response", self._on_response)

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

    def _on_response(self, resp: Any) -> None:
        try:
            if resp.request.resource_type != "document" or resp.frame.parent_frame is not None:
                return
            url, status = _document(resp.url), int(resp.status)
        except Exception:  # noqa: BLE001 - a response without a frame (a service worker's): not a page's document
            return
        self.note_document(url, status)

    def note_document(self, url: str, status: int) -> None:
        """The main-frame document at `url` was answered with `status` (from a response event, or from the
        document itself: its navigation timing entry)."""
        url = _document(url)
        self.documents.pop(url, None)  # (the newest last: the oldest is forgotten first)
        self.documents[url] = status
        while len(self.documents) > MAX_DOCUMENTS:
            del self.documents[next(iter(self.documents))]

    def status_of(self, url: str) -> int | None:
        """The HTTP status the main-frame document at `url` was last answered with (None: not fetched over HTTP
        in this tab, e.g. a file, about: or data: page, or an address reached by history.pushState)."""
        return self.documents.get(_document(url))

    def quiet_for(self) -> float:
        """Seconds since the last request started or ended; 0 while any request is in flight."""
        if self.inflight:
            return 0.0
        return time.monotonic() - self.last_activity
