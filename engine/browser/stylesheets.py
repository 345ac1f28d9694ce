"""The style sheets a page's documents applied, as the browser itself reports them (CDP's CSS domain).

A page cannot read the rules of a sheet from another origin (a CDN, another host, every sheet of a
`file://` page): `cssRules` throws. The browser can. `StyleSheets` follows the sheets of one page
through `CSS.styleSheetAdded` / `styleSheetRemoved` (per frame: id, address, whether inline) and
reads a sheet's text on request (`CSS.getStyleSheetText`), once per sheet id: what a caller makes of
the text is kept instead of the text, and forgotten with the sheet (removed, changed, or its document
replaced). The CSS domain is enabled per session only when first asked (`enable`): a page whose
sheets all read from the page never pays for it, and once enabled it costs nothing per step (its
events come only when sheets are added or removed).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.errors import CDPTimeoutError, VigilError


@dataclass(frozen=True)
class Sheet:
    """One style sheet the browser applied: its id, session and frame, its address (`url`: the page's
    own for an inline sheet) and whether it is inline (<style>) or constructed."""

    sheet_id: str
    session_id: str
    frame_id: str
    url: str
    inline: bool


UNREAD = object()  # what `derive` keeps for a sheet whose text the browser would not give


class StyleSheets:
    """The sheets of one page's sessions (the page's and its out-of-process frames')."""

    def __init__(self, send: Callable[..., Any], mine: Callable[[str | None], bool]) -> None:
        self._send = send            # CDPConnection.send
        self._mine = mine            # whether a session id is one of this page's
        self._enabling: dict[str, asyncio.Future] = {}   # session → its CSS.enable, once
        self.sheets: dict[str, Sheet] = {}
        self._derived: dict[tuple[str, str], Any] = {}   # (sheet id, what) → fn(text)

    # -- events ----------------------------------------------------------------------------------
    def on_added(self, p: dict, sid: str | None) -> None:
        if sid is None or not self._mine(sid):
            return
        h = p.get("header") or {}
        if h.get("origin", "regular") != "regular" or not h.get("styleSheetId"):
            return  # the browser's own sheets, an extension's, the inspector's
        self.sheets[h["styleSheetId"]] = Sheet(h["styleSheetId"], sid, h.get("frameId", ""), h.get("sourceURL", ""),
                                               bool(h.get("isInline") or h.get("isConstructed")))

    def on_removed(self, p: dict, sid: str | None) -> None:
        if self._mine(sid):
            self._forget(p.get("styleSheetId", ""))

    def on_changed(self, p: dict, sid: str | None) -> None:
        if self._mine(sid):  # its text is not the one read: read it again when asked
            sh = p.get("styleSheetId", "")
            for key in [k for k in self._derived if k[0] == sh]:
                del self._derived[key]

    def frame_navigated(self, frame_id: str, session_id: str, top: bool) -> None:
        """A frame has a new document: its sheets are gone (the top frame of a session: every sheet of
        that session — the browser sends no removals then)."""
        for s in [s for s in self.sheets.values()
                  if (s.session_id == session_id if top else s.frame_id == frame_id)]:
            self._forget(s.sheet_id)

    def session_gone(self, session_id: str) -> None:
        self._enabling.pop(session_id, None)
        for s in [s for s in self.sheets.values() if s.session_id == session_id]:
            self._forget(s.sheet_id)

    def _forget(self, sheet_id: str) -> None:
        self.sheets.pop(sheet_id, None)
        for key in [k for k in self._derived if k[0] == sheet_id]:
            del self._derived[key]

    # -- requests --------------------------------------------------------------------------------
    async def enable(self, session_id: str, timeout: float = 60.0) -> bool:
        """Follow the sheets of this session's documents (once; the browser first reports every sheet
        it already applied). False when the session cannot (closed, or the browser refused). The browser
        answers once the page's main thread is free: a page busy for seconds (another tool's long script)
        delays it, so the wait is long — callers do not wait for it (`enabled` says when it is done)."""
        fut = self._enabling.get(session_id)
        if fut is None:
            fut = self._enabling[session_id] = asyncio.ensure_future(self._enable(session_id, timeout))
            fut.add_done_callback(lambda f: f.cancelled() or f.exception())  # (retrieved: never logged as lost)
        try:
            return bool(await asyncio.shield(fut))
        except VigilError:
            self._enabling.pop(session_id, None)
            return False

    async def _enable(self, session_id: str, timeout: float) -> bool:
        await self._send("DOM.enable", session_id=session_id, timeout=timeout)  # the CSS domain needs it
        await self._send("CSS.enable", session_id=session_id, timeout=timeout)
        return True

    def enabled(self, session_id: str) -> bool:
        fut = self._enabling.get(session_id)
        return fut is not None and fut.done() and not fut.cancelled() and fut.exception() is None

    def at(self, frame_id: str, url: str) -> list[Sheet]:
        """The sheets at this address in this frame's document (imported ones included)."""
        return [s for s in self.sheets.values() if s.frame_id == frame_id and s.url == url and not s.inline]

    def known(self, sheet: Sheet, what: str) -> Any:
        """What `derive` made of this sheet's text before (None: not read yet; UNREAD: it could not be)."""
        return self._derived.get((sheet.sheet_id, what))

    async def derive(self, sheet: Sheet, what: str, fn: Callable[[str], Any], timeout: float = 30.0) -> Any:
        """fn(the sheet's text), read once per sheet (UNREAD when the browser would not give it; None, and
        nothing kept, when it did not answer in time: a busy page is asked again later)."""
        key = (sheet.sheet_id, what)
        if key in self._derived:
            return self._derived[key]
        try:
            r = await self._send("CSS.getStyleSheetText", {"styleSheetId": sheet.sheet_id},
                                 session_id=sheet.session_id, timeout=timeout)
            out = fn(r.get("text") or "")
        except CDPTimeoutError:
            return None
        except VigilError:
            out = UNREAD
        if sheet.sheet_id in self.sheets:  # (removed meanwhile: not kept)
            self._derived[key] = out
        return out
