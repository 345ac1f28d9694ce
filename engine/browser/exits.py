"""Top-level navigations held at the browser: `ExitHold`.

The DOM can say a button stays on the site while its `onclick` sets `location` elsewhere, a link can
point at the site and be redirected away, a form can post to another site, a popup can open on
another site: what the page *does* is only seen on the network. While a run that needs it is on,
`start(decide)` enables the CDP Fetch domain at the browser level for documents only (`Fetch.enable`
on the browser's own session, a Document pattern at the Request stage — every tab's and every new
popup's requests, before the popup is even adopted as a tab). Each top-level document request of a
page Vigil knows (`page_of(frame id)`: a tab, or a popup a tab opened — the first request and each
redirect hop) is paused and `decide(from_url, request)` says whether it may go on
(`Fetch.continueRequest`) or not (`Fetch.failRequest` with `Aborted`). Chromium's `BlockedByClient`
would replace the page with its own error page (chrome-error://chromewebdata/); `Aborted` leaves the
page where it was, so the run can go on from it. A refused request never leaves the browser. Frames'
documents, pages Vigil does not know (another context of an attached browser) and non-HTTP(S) URLs
are let through at once; `decide` is expected to answer fast for same-site requests. When no run
needs it, Fetch is off (`stop()`): plain steps pay nothing."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from engine.browser.cdp import CDPConnection
from engine.errors import VigilError

log = logging.getLogger("vigil.browser")

# (the URL of the page being left, the paused request: url, method, headers …) → let it go on?
ExitDecider = Callable[[str, dict], Awaitable[bool]]
# a frame id → the URL of the page it is the top of (a tab's, or a new popup's opener's), None otherwise
PageOf = Callable[[str], "str | None"]
_DOCUMENTS = [{"urlPattern": "*", "resourceType": "Document", "requestStage": "Request"}]


class ExitHold:
    def __init__(self, cdp: Callable[[], CDPConnection], page_of: PageOf,
                 refused: Callable[[str], Awaitable[None]] | None = None) -> None:
        self._cdp = cdp
        self._page_of = page_of
        self._refused = refused   # told the frame id of each refused request (a blank popup is closed)
        self.decide: ExitDecider | None = None
        self._listening = False
        self._enabled = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self.pending = 0                        # requests waiting for a decision now
        # frame id → (the URL it was asked to go to, why: formSubmissionGet/Post, anchorClick …), as the page
        # asked for it (Page.frameRequestedNavigation): what tells a form's GET from a link's
        self._requested: dict[str, tuple[str, str]] = {}

    @property
    def on(self) -> bool:
        return self.decide is not None

    async def start(self, decide: ExitDecider) -> None:
        """Hold the top-level navigations of every page Vigil knows until `stop()`."""
        c = self._cdp()
        if not self._listening:
            c.on("Fetch.requestPaused", self._paused)
            c.on("Page.frameRequestedNavigation", self._navigation_requested)
            self._listening = True
        self.decide = decide
        if not self._enabled:
            await c.send("Fetch.enable", {"patterns": _DOCUMENTS}, timeout=10)
            self._enabled = True

    def release(self) -> None:
        """Hold nothing any more: at once (requests paused now go on when Fetch is disabled, right after),
        unless a new run starts holding before that."""
        self.decide = None
        task = asyncio.ensure_future(self._disable())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def stop(self) -> None:
        self.decide = None
        await self._disable()

    async def _disable(self) -> None:
        if self._enabled and self.decide is None:
            self._enabled = False
            with contextlib.suppress(VigilError):
                await self._cdp().send("Fetch.disable", timeout=5)

    async def _navigation_requested(self, p: dict, sid: str | None) -> None:
        if self.decide is not None and p.get("frameId"):
            if len(self._requested) > 256:
                self._requested.clear()
            self._requested[str(p["frameId"])] = (str(p.get("url") or ""), str(p.get("reason") or ""))

    def submission(self, frame_id: str, request: dict) -> str:
        """Why this document request is a form submission ("formSubmissionPost", "formSubmissionGet", "a request
        with a body"), or "" when it is not one."""
        url, reason = self._requested.pop(frame_id, ("", ""))
        if reason.startswith("formSubmission") and url.split("#", 1)[0] == str(request.get("url") or "").split(
                "#", 1)[0]:
            return reason
        if str(request.get("method") or "GET").upper() != "GET" or request.get("hasPostData"):
            return "a request with a body"
        return ""

    async def _paused(self, p: dict, sid: str | None) -> None:
        if sid is not None:
            return  # a page session's own interception: not this hold's
        request = p.get("request") or {}
        url = str(request.get("url") or "")
        go = True
        decide = self.decide
        from_url = self._page_of(str(p.get("frameId") or "")) if decide is not None else None
        held = (decide is not None and from_url is not None and p.get("resourceType") == "Document"
                and url.lower().startswith(("http://", "https://")))
        if held and decide is not None and from_url is not None:
            self.pending += 1
            try:
                go = bool(await decide(from_url, {**request, "submission": self.submission(str(p.get("frameId") or ""),
                                                                                         request)}))
            except Exception:  # a broken decision never lets the page out
                log.exception("deciding a navigation failed")
                go = False
            finally:
                self.pending -= 1
        c = self._cdp()
        with contextlib.suppress(VigilError):
            if go:
                await c.send("Fetch.continueRequest", {"requestId": p["requestId"]})
            else:
                await c.send("Fetch.failRequest", {"requestId": p["requestId"], "errorReason": "Aborted"})
        if not go and self._refused is not None:
            await self._refused(str(p.get("frameId") or ""))
