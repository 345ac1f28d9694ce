"""Top-level navigations held at the browser: `ExitHold`.

The DOM can say a button stays on the site while its `onclick` sets `location` elsewhere, a link can
point at the site and be redirected away, a form can post to another site: what the page *does* is
only seen on the network. While a run that needs it is on, `start(decide)` enables the CDP Fetch
domain on each tab's own session for documents only (`Fetch.enable` with a Document pattern at the
Request stage); every main-frame document request — the first one and each redirect hop — is paused
and `decide(target, request)` says whether it may go on (`Fetch.continueRequest`) or not
(`Fetch.failRequest` with `Aborted`). Chromium's `BlockedByClient` would replace the page with its own
error page (chrome-error://chromewebdata/); `Aborted` leaves the page where it was, so the run can go
on from it. A refused request never leaves the browser. Frames' documents, subresources and
non-HTTP(S) URLs are let through at once; `decide` is expected to answer fast for same-site requests.
When no run needs it, Fetch is off (`stop()`): plain steps pay nothing.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from engine.browser.cdp import CDPConnection
from engine.errors import VigilError

log = logging.getLogger("vigil.browser")

# (the page's PageTarget, the paused request: url, method, headers …) → let it go on?
ExitDecider = Callable[[Any, dict], Awaitable[bool]]
_DOCUMENTS = [{"urlPattern": "*", "resourceType": "Document", "requestStage": "Request"}]


class ExitHold:
    def __init__(self, cdp: Callable[[], CDPConnection]) -> None:
        self._cdp = cdp
        self.decide: ExitDecider | None = None
        self._sessions: dict[str, Any] = {}     # session id → PageTarget, for the tabs held
        self._listening = False
        self.pending = 0                        # requests waiting for a decision now

    @property
    def on(self) -> bool:
        return self.decide is not None

    async def start(self, targets: list[Any], decide: ExitDecider) -> None:
        """Hold the main-frame navigations of `targets` (and of every tab `enable`d later) until `stop()`."""
        c = self._cdp()
        if not self._listening:
            c.on("Fetch.requestPaused", self._paused)
            self._listening = True
        self.decide = decide
        for t in targets:
            await self.enable(t)

    async def enable(self, target: Any) -> None:
        """Hold this tab's navigations too (a tab opened during the run)."""
        sid = getattr(target, "session_id", "")
        if self.decide is None or not sid or sid in self._sessions or getattr(target, "closed", False):
            return
        self._sessions[sid] = target
        try:
            await self._cdp().send("Fetch.enable", {"patterns": _DOCUMENTS}, session_id=sid, timeout=10)
        except VigilError as exc:
            self._sessions.pop(sid, None)
            log.debug("could not hold navigations of a tab: %s", exc)

    async def stop(self) -> None:
        """Hold nothing any more (requests paused now go on: Fetch.disable releases them)."""
        self.decide = None
        sessions, self._sessions = list(self._sessions), {}
        for sid in sessions:
            with contextlib.suppress(VigilError):
                await self._cdp().send("Fetch.disable", session_id=sid, timeout=5)

    async def _paused(self, p: dict, sid: str | None) -> None:
        target = self._sessions.get(sid or "")
        if target is None:
            return  # not a session this hold enabled
        request = p.get("request") or {}
        url = str(request.get("url") or "")
        go = True
        decide = self.decide
        held = (decide is not None and p.get("resourceType") == "Document"
                and p.get("frameId") == getattr(target, "main_frame_id", None)
                and url.lower().startswith(("http://", "https://")))
        if held and decide is not None:
            self.pending += 1
            try:
                go = bool(await decide(target, request))
            except Exception:  # a broken decision never lets the page out
                log.exception("deciding a navigation failed")
                go = False
            finally:
                self.pending -= 1
        c = self._cdp()
        with contextlib.suppress(VigilError):
            if go:
                await c.send("Fetch.continueRequest", {"requestId": p["requestId"]}, session_id=sid)
            else:
                await c.send("Fetch.failRequest", {"requestId": p["requestId"], "errorReason": "Aborted"},
                             session_id=sid)
