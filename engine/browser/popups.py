"""Popup floods ended at the browser: `PopupGuard`.

While a run is on (`arm(limit)`), every new page target the browser creates is counted against the
tab that opened it (`Target.targetCreated`'s `openerId`; a page opened without an opener — a
`noopener` link — is counted against the active tab). Once one opener passes `limit` new tabs in one
step it is *flooding*: that popup and every further one it opens, for the rest of the run, is
refused — closed as soon as the browser has it, never adopted as a tab (`Browser._adopt` asks
`refused`; closing it any earlier, while the browser still holds the new window for the debugger,
stalls the opener's `window.open` call). The loop never moves into a popup of a flooding page.
`disarm()` ends it (the run is over): nothing is refused when no run is on.

The browser alone cannot end a synchronous flood quickly: each `window.open` is a round trip to the
browser process (about 0.2 s each here with Playwright attached, so 200 of them keep the click's
handler — and the step — busy for 40 s; `Runtime.terminateExecution` is not served while it runs).
So every tab also gets a small page-side cap, installed before the page's scripts (`install`): at
most `PAGE_CAP` `window.open` calls in one task open a window; the rest return null at once (as a
blocked popup does) and are reported back (`Runtime.addBinding`), so they count as refused and mark
the opener as flooding."""

from __future__ import annotations

import contextlib
import json
import logging
import secrets
from collections.abc import Callable

from engine.browser.cdp import CDPConnection
from engine.errors import VigilError

log = logging.getLogger("vigil.browser")
PAGE_CAP = 10   # window.open calls that open a window in one task of one document

# the page-side cap: `window.open` counts its calls in the current task (reset by a timer that runs
# once the task is over) and past the cap returns null and reports how many it blocked
_CAP_SOURCE = """(() => {
  const open = window.open, report = window[%(name)s], later = window.setTimeout;
  try { delete window[%(name)s]; } catch (e) {}
  if (typeof open !== "function" || typeof report !== "function") return;
  let calls = 0, blocked = 0, pending = false;
  const capped = {open(...args) {
    if (!pending) {
      pending = true;
      later.call(window, () => {
        if (blocked) { try { report(String(blocked)); } catch (e) {} }
        calls = 0; blocked = 0; pending = false;
      }, 0);
    }
    calls += 1;
    if (calls > %(cap)d) { blocked += 1; return null; }
    return open.apply(this, args);
  }}.open;
  window.open = capped;
})();"""


class PopupGuard:
    def __init__(self, cdp: Callable[[], CDPConnection], default_opener: Callable[[], str | None]) -> None:
        self._cdp = cdp
        self._default_opener = default_opener   # the active tab's target id (for pages with no opener)
        self.limit: int | None = None           # None: not armed
        self.flooding: set[str] = set()         # opener target ids whose popups are closed at once
        self.refused: set[str] = set()          # target ids of the popups closed at once
        self.closed = 0                         # popups closed at once since the last `take_closed()`
        self._counts: dict[str, int] = {}       # new tabs per opener in the current step
        self._listening = False
        self._binding = "__vigil_popups_" + secrets.token_hex(6)
        self._session_targets: dict[str, str] = {}   # a tab's main session id → its target id
        self.opened_by: dict[str, str | None] = {}     # every new page's target id → its opener's (None: Vigil's)
        self.context_id: str | None = None  # set: pages of other browser contexts are not ours (Browser.open_context)

    async def listen(self) -> None:
        """Have the browser announce every new target (once per browser)."""
        if self._listening:
            return
        c = self._cdp()
        c.on("Target.targetCreated", self._created)
        c.on("Runtime.bindingCalled", self._blocked_in_page)
        await c.send("Target.setDiscoverTargets", {"discover": True})
        self._listening = True

    async def install(self, target_id: str, session_id: str) -> None:
        """The page-side cap in this tab: its documents from now on, and the ones it has now."""
        c = self._cdp()
        self._session_targets[session_id] = target_id
        source = _CAP_SOURCE % {"name": json.dumps(self._binding), "cap": PAGE_CAP}
        try:
            await c.send("Runtime.addBinding", {"name": self._binding}, session_id=session_id)
            await c.send("Page.addScriptToEvaluateOnNewDocument", {"source": source, "runImmediately": True},
                         session_id=session_id)
        except VigilError as exc:
            log.debug("could not cap the popups of a tab: %s", exc)

    def _blocked_in_page(self, p: dict, sid: str | None) -> None:
        if p.get("name") != self._binding or sid not in self._session_targets:
            return
        try:
            n = max(0, min(int(p.get("payload") or 0), 100_000))
        except ValueError:
            return
        self.closed += n
        if self.limit is not None and n:
            self.flooding.add(self._session_targets[sid])

    def arm(self, limit: int) -> None:
        """A run starts: popups past `limit` per opener per step are refused, until `disarm()`."""
        self.limit = limit
        self.flooding.clear()
        self._counts.clear()
        self.closed = 0

    def disarm(self) -> None:
        self.limit = None
        self.flooding.clear()
        self._counts.clear()

    def begin_step(self) -> None:
        self._counts.clear()

    def take_closed(self) -> int:
        """How many popups were refused (blocked in the page or closed) since the last call."""
        n, self.closed = self.closed, 0
        return n

    def is_flooding(self, opener_id: str | None) -> bool:
        return opener_id is not None and opener_id in self.flooding

    def _created(self, p: dict, sid: str | None) -> None:
        info = p.get("targetInfo") or {}
        if sid is not None or info.get("type") != "page":
            return
        if self.context_id is not None and info.get("browserContextId") != self.context_id:
            return  # a page of another context of the same Chromium (another run's)
        opener = info.get("openerId") or self._default_opener()
        self.opened_by[str(info.get("targetId") or "")] = opener or None
        if self.limit is None or not opener:
            return  # no run is on, or a tab Vigil opened itself
        self._counts[opener] = self._counts.get(opener, 0) + 1
        if opener not in self.flooding and self._counts[opener] <= self.limit:
            return
        self.flooding.add(opener)
        self.refused.add(str(info.get("targetId") or ""))
        self.closed += 1

    async def close(self, target_id: str) -> None:
        """Close a refused popup (once the browser let it start)."""
        with contextlib.suppress(VigilError):
            await self._cdp().send("Target.closeTarget", {"targetId": target_id}, timeout=5)
