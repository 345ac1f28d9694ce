"""When each request of a tab started and ended (epoch ms), so a settle can tell the requests an
action started — which it waits for — from the polling, analytics and long-poll requests that were
already under way, which never hold a step. Installed once per page target (`track`), from Playwright's
request events; the in-flight set itself stays the NetworkMonitor's.

A request is the action's when it started at or after the action and its address (without the query)
is not one the page was already fetching over and over before it (polling that happens to fire just
after a click is not the click's). A page that fetches the same address on each of two clicks is then
not waited for on the second: the check of the step's expected outcome still waits for what it expects.

A request answered with a small body the page has not read `UNREAD_MS` after the answer came is ended at its
answer: Chromium reports a fetch of an answer it may not cache (`Cache-Control: no-store`) finished only once the
page reads its body, and a fire-and-forget fetch (a keepalive POST, an analytics call) is never read — it would hold
every step that sends one to the settle's cap."""

from __future__ import annotations

import collections
import time
import weakref
from typing import Any

PERIODIC_WINDOW_MS = 30_000  # an address started twice within this before the action is polling
UNREAD_MS = 250              # an answer the page has not read this long after it came: not read because of the step
SMALL_BODY = 32_768          # bytes: a body this small is in once its answer came (a larger one may still stream)


class RequestClock:
    def __init__(self, page: Any) -> None:
        self.started: dict[int, float] = {}   # id(request) → epoch ms, while in flight
        self.keys: dict[int, str] = {}        # id(request) → method and address without the query
        self.history: dict[str, collections.deque[float]] = {}  # address → its latest start times
        self.last_done: list[tuple[float, float]] = []  # (started, ended) of the latest finished requests
        self.answered: dict[int, float] = {}  # id(request) → epoch ms its small answer came, while not finished
        page.on("request", self._on_request)
        page.on("response", self._on_response)
        page.on("requestfinished", self._on_done)
        page.on("requestfailed", self._on_done)

    def _on_request(self, req: Any) -> None:
        now = time.time() * 1000
        self.started[id(req)] = now
        try:
            key = f"{req.method} {str(req.url).split('?', 1)[0][:300]}"
        except Exception:  # noqa: BLE001 - a request object without an address: not tracked by address
            key = ""
        self.keys[id(req)] = key
        h = self.history.get(key)
        if h is None:
            if len(self.history) > 500:
                self.history.clear()
            h = self.history[key] = collections.deque(maxlen=8)
        h.append(now)
        if len(self.started) > 5000:  # events lost somewhere: forget the oldest
            for k in list(self.started)[:1000]:
                del self.started[k]
                self.keys.pop(k, None)
                self.answered.pop(k, None)

    def _on_response(self, resp: Any) -> None:
        try:
            req = resp.request
            size = int(resp.headers.get("content-length", ""))
        except Exception:  # noqa: BLE001 - no length given (a body that may stream): finished only when it is
            return
        if id(req) in self.started and 0 <= size <= SMALL_BODY:
            self.answered[id(req)] = time.time() * 1000

    def _unread(self, key: int, now: float) -> bool:
        at = self.answered.get(key)
        return at is not None and now - at >= UNREAD_MS

    def _on_done(self, req: Any) -> None:
        t0 = self.started.pop(id(req), None)
        self.keys.pop(id(req), None)
        self.answered.pop(id(req), None)
        if t0 is not None:
            self.last_done.append((t0, time.time() * 1000))
            del self.last_done[:-50]

    def start_of(self, req: Any) -> float | None:
        return self.started.get(id(req))

    def is_actions(self, req: Any, action_ms: float) -> bool:
        """Whether this in-flight request was started by an action at `action_ms` (epoch ms)."""
        t0 = self.started.get(id(req))
        if t0 is None or t0 < action_ms or self._unread(id(req), time.time() * 1000):
            return False
        starts = self.history.get(self.keys.get(id(req), ""), ())
        return sum(1 for t in starts if action_ms - PERIODIC_WINDOW_MS <= t < action_ms) < 2

    def last_end_since(self, start_ms: float) -> float | None:
        """When the last request started at or after `start_ms` finished (epoch ms), if any did (an answer left
        unread: when it came)."""
        now = time.time() * 1000
        ends = [e for s, e in self.last_done if s >= start_ms]
        ends += [self.answered[k] for k, s in self.started.items() if s >= start_ms and self._unread(k, now)]
        return max(ends) if ends else None


_clocks: weakref.WeakKeyDictionary[Any, RequestClock] = weakref.WeakKeyDictionary()


def track(target: Any) -> RequestClock | None:
    """The request clock of a page target (created on first use); None for a page without events."""
    clock = _clocks.get(target)
    if clock is None:
        pw = getattr(target, "page", None)
        if pw is None or not hasattr(pw, "on"):
            return None
        clock = _clocks[target] = RequestClock(pw)
    return clock
