"""The window's side of the browser's tabs and of page dialogs outside a run (a part of `Supervisor`).

The window shows the browser's active tab: a tab the person opens in the live view is shown, a run's
switch_tab or a popup closing itself moves the view, and a tab picked in the strip is shown or closed (not
while a run works: the loop decides which tab it acts in). A dialog a page raises outside a run is put to the
person in the approval bar; a run's own policy and gate decide the dialogs while it runs."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from engine.errors import VigilError
from engine.models import Decision

log = logging.getLogger("vigil.gui")


class BrowserTabs:
    """Mixed into `Supervisor` (its signals, browser, tab and loop are used here)."""

    browser: Any
    tab: Any
    loop: Any
    _followed: set[int]
    _dialog_answer: asyncio.Future | None

    def _on_tabs(self, what: str, tab: Any) -> None:
        """A tab opened, closed or became active (a link, a popup, a run's switch_tab, the person)."""
        if what == "opened":
            self._watch_dialogs(tab)
            if not self.running() and tab is not self.browser.active_tab:
                # the person opened it in the live view (a target=_blank link, a popup): show it, as a browser
                # would; during a run the loop decides which tab is worked on
                asyncio.ensure_future(self._show_opened(tab))
        if what == "active" and tab is not self.tab:
            self.tab = tab
            if id(tab) not in self._followed:
                self._followed.add(id(tab))
                tab.on_navigated(self._on_navigated)
            self.tab_switched.emit(tab)
            self.page_changed.emit(tab.url)
            if not self.running():  # during a run the loop's own snapshots of the new tab are shown
                asyncio.ensure_future(self.refresh())
        asyncio.ensure_future(self.publish_tabs())

    async def _show_opened(self, tab: Any) -> None:
        index = self.browser.index_of(tab) if self.browser is not None else None
        if index is not None and not self.running():
            with contextlib.suppress(VigilError):
                await self.browser.switch_to(index)

    def _watch_dialogs(self, tab: Any) -> None:
        """Outside a run, a dialog the page raises (the person clicking in the live view) is put to the
        person in the approval bar; a run's own policy and gate take over while it runs."""
        if tab.dialogs.handler is None:
            tab.dialogs.handler = self._ask_dialog

    async def _ask_dialog(self, d: Any) -> Any:
        from engine.models import Action, ApprovalRequest, ProposedStep
        from engine.models.browsing import DialogAnswer
        while self._dialog_answer is not None and not self._dialog_answer.done():
            await asyncio.sleep(0.05)  # one question at a time
        fut: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
        self._dialog_answer = fut
        proposal = ProposedStep(action=Action(name="dialog", accept=True), description=f"Answer {d.call()}")
        self.request.emit(ApprovalRequest(step_index=0, proposal=proposal, dialog=d,
                                          policy=self.loop.policy if self.loop is not None else "ask",
                                          summary=f"The page asks: {d.call()} — OK or Cancel?"))
        try:
            decision = await fut
        finally:
            self._dialog_answer = None
        accept = decision.kind in ("approve", "edit", "take_over")
        self.notice.emit(f"The page asked {d.call()}: you answered {'OK' if accept else 'Cancel'}.")
        if accept:
            return DialogAnswer(accept=True, text=decision.text if d.kind == "prompt" else None, by="person")
        return DialogAnswer(accept=False, by="person")

    async def publish_tabs(self) -> None:
        """Tell the window the open tabs, with their titles read now."""
        if self.browser is None:
            return
        try:
            infos = await self.browser.refresh_titles()
        except VigilError as exc:
            log.debug("tab titles not read: %s", exc)
            infos = self.browser.tab_infos()
        self.tabs_changed.emit(infos, next((t.index for t in infos if t.active), None))

    def _retitle_tabs(self) -> None:
        """A new snapshot may come with a new title (a tab that was still loading): the strip shows it."""
        if self.browser is not None and len(self.browser.tabs) > 1:
            asyncio.ensure_future(self.publish_tabs())

    async def close_tab(self, index: int) -> bool:
        """The person closed a tab in the strip: its page's beforeunload may ask first (in the approval bar,
        as any dialog outside a run). Not while a run works (its tabs are the run's), nor the last tab."""
        if self.browser is None:
            return False
        if self.running():
            self.notice.emit("A run is working in the browser: stop it to close a tab.")
            await self.publish_tabs()
            return False
        if len(self.browser.tabs) <= 1:
            self.notice.emit("The last tab stays open: the window always shows a page.")
            return False
        try:
            closed = bool(await self.browser.close_tab(index, ask_page=True))
        except VigilError as exc:
            self.error.emit(exc.message)
            return False
        if not closed:
            self.notice.emit("The page asked to stay open: the tab was not closed.")
        await self.publish_tabs()
        return closed

    async def switch_tab(self, index: int) -> bool:
        """The person picked a tab: show it (not while a run works: the run decides which tab it acts in)."""
        if self.browser is None:
            return False
        if self.running():
            self.notice.emit("A run is working in its own tab: stop it to look at another one.")
            await self.publish_tabs()
            return False
        try:
            await self.browser.switch_to(index)
        except VigilError as exc:
            self.error.emit(exc.message)
            return False
        return True

