"""The window's side of the browser's tabs and of page dialogs outside a run (a part of `Supervisor`:
`sup.tabs`).

The window shows the browser's active tab: a tab the person opens in the live view is shown, a run's
switch_tab or a popup closing itself moves the view, and a tab picked in the strip is shown or closed (not
while a run works: the loop decides which tab it acts in). A dialog a page raises outside a run is put to the
person in the approval bar; a run's own policy and gate decide the dialogs while it runs."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any, Protocol

from PySide6.QtCore import SignalInstance

from engine.browser.browser import Browser
from engine.errors import VigilError
from engine.loop import AgentLoop
from engine.models import Decision
from engine.models.browsing import DialogAnswer, DialogInfo
from engine.tab import Tab

log = logging.getLogger("vigil.gui")


class TabsHost(Protocol):
    """What the tabs use of their supervisor (they move its `tab` to the browser's active one)."""

    tab_switched: SignalInstance
    page_changed: SignalInstance
    tabs_changed: SignalInstance
    request: SignalInstance
    notice: SignalInstance
    error: SignalInstance
    tab: Tab | None

    @property
    def browser(self) -> Browser[Tab] | None: ...
    @property
    def loop(self) -> AgentLoop | None: ...
    def running(self) -> bool: ...
    def on_navigated(self, url: str) -> None: ...
    async def refresh(self, *, force: bool = False) -> Any: ...


class BrowserTabs:
    """`BrowserTabs(sup)`: `watch(tab)` the first tab, then `on_tabs` hears the browser's."""

    def __init__(self, sup: TabsHost) -> None:
        self.sup = sup
        self._followed: set[int] = set()  # tabs whose navigations this window listens to (by id)
        self._dialog_answer: asyncio.Future[Decision] | None = None  # a page dialog outside a run waits for the person

    def watch(self, tab: Tab) -> None:
        """Follow this tab's navigations and put its dialogs outside a run to the person (once per tab)."""
        if id(tab) not in self._followed:
            self._followed.add(id(tab))
            tab.on_navigated(self.sup.on_navigated)
        self._watch_dialogs(tab)

    def on_tabs(self, what: str, tab: Any) -> None:
        """A tab opened, closed or became active (a link, a popup, a run's switch_tab, the person)."""
        sup, browser = self.sup, self.sup.browser
        if what == "opened":
            self._watch_dialogs(tab)
            if not sup.running() and browser is not None and tab is not browser.active_tab:
                # the person opened it in the live view (a target=_blank link, a popup): show it, as a browser
                # would; during a run the loop decides which tab is worked on
                asyncio.ensure_future(self._show_opened(tab))
        if what == "active" and tab is not sup.tab:
            sup.tab = tab
            if id(tab) not in self._followed:
                self._followed.add(id(tab))
                tab.on_navigated(sup.on_navigated)
            sup.tab_switched.emit(tab)
            sup.page_changed.emit(tab.url)
            if not sup.running():  # during a run the loop's own snapshots of the new tab are shown
                asyncio.ensure_future(sup.refresh())
        asyncio.ensure_future(self.publish())

    async def _show_opened(self, tab: Tab) -> None:
        browser = self.sup.browser
        index = browser.index_of(tab) if browser is not None else None
        if browser is not None and index is not None and not self.sup.running():
            with contextlib.suppress(VigilError):
                await browser.switch_to(index)

    def _watch_dialogs(self, tab: Tab) -> None:
        """Outside a run, a dialog the page raises (the person clicking in the live view) is put to the
        person in the approval bar; a run's own policy and gate take over while it runs."""
        if tab.dialogs.handler is None:
            tab.dialogs.handler = self._ask_dialog

    def answer_dialog(self, decision: Decision) -> bool:
        """The person answered a page's dialog outside a run: True when one was waiting for it."""
        fut = self._dialog_answer
        if fut is None or fut.done():
            return False
        fut.set_result(decision)
        return True

    async def _ask_dialog(self, d: DialogInfo) -> DialogAnswer:
        from engine.models import Action, ApprovalRequest, ProposedStep
        while self._dialog_answer is not None and not self._dialog_answer.done():
            await asyncio.sleep(0.05)  # one question at a time
        fut: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
        self._dialog_answer = fut
        proposal = ProposedStep(action=Action(name="dialog", accept=True), description=f"Answer {d.call()}")
        loop = self.sup.loop
        self.sup.request.emit(ApprovalRequest(step_index=0, proposal=proposal, dialog=d,
                                              policy=loop.policy if loop is not None else "ask",
                                              summary=f"The page asks: {d.call()} — OK or Cancel?"))
        try:
            decision = await fut
        finally:
            self._dialog_answer = None
        accept = decision.kind in ("approve", "edit", "take_over")
        self.sup.notice.emit(f"The page asked {d.call()}: you answered {'OK' if accept else 'Cancel'}.")
        if accept:
            return DialogAnswer(accept=True, text=decision.text if d.kind == "prompt" else None, by="person")
        return DialogAnswer(accept=False, by="person")

    async def publish(self) -> None:
        """Tell the window the open tabs, with their titles read now."""
        browser = self.sup.browser
        if browser is None:
            return
        try:
            infos = await browser.refresh_titles()
        except VigilError as exc:
            log.debug("tab titles not read: %s", exc)
            infos = browser.tab_infos()
        self.sup.tabs_changed.emit(infos, next((t.index for t in infos if t.active), None))

    def retitle(self) -> None:
        """A new snapshot may come with a new title (a tab that was still loading): the strip shows it."""
        browser = self.sup.browser
        if browser is not None and len(browser.tabs) > 1:
            asyncio.ensure_future(self.publish())

    async def close(self, index: int) -> bool:
        """The person closed a tab in the strip: its page's beforeunload may ask first (in the approval bar,
        as any dialog outside a run). Not while a run works (its tabs are the run's), nor the last tab."""
        browser = self.sup.browser
        if browser is None:
            return False
        if self.sup.running():
            self.sup.notice.emit("A run is working in the browser: stop it to close a tab.")
            await self.publish()
            return False
        if len(browser.tabs) <= 1:
            self.sup.notice.emit("The last tab stays open: the window always shows a page.")
            return False
        try:
            closed = bool(await browser.close_tab(index, ask_page=True))
        except VigilError as exc:
            self.sup.error.emit(exc.message)
            return False
        if not closed:
            self.sup.notice.emit("The page asked to stay open: the tab was not closed.")
        await self.publish()
        return closed

    async def switch(self, index: int) -> bool:
        """The person picked a tab: show it (not while a run works: the run decides which tab it acts in)."""
        browser = self.sup.browser
        if browser is None:
            return False
        if self.sup.running():
            self.sup.notice.emit("A run is working in its own tab: stop it to look at another one.")
            await self.publish()
            return False
        try:
            await browser.switch_to(index)
        except VigilError as exc:
            self.sup.error.emit(exc.message)
            return False
        return True
