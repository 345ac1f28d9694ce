"""What the loop does about everything a page does besides its own document: `PageWatch`.

- **Dialogs.** The loop decides every confirm, prompt and beforeunload a page raises (alerts are
  acknowledged and reported by the page's `DialogWatcher`): under `ask` the person answers through
  the same gate as steps (an `ApprovalRequest` with `dialog` set: approve = OK, with `Decision.text`
  for a prompt; reject or skip = Cancel; stop = Cancel and stop the run); under `auto-safe` the answer
  is Cancel unless the step that raised it was approved by the person as sensitive (then OK); under
  `auto` OK. A planner can answer in advance with `dialog(accept, text?)`. Who answered is kept.
- **Tabs.** After each step the tabs opened during it are reported ("opened a new tab: Title — URL")
  and, with `follow_new_tabs`, the newest becomes the page the loop works on; when the page the loop
  works on closes itself (a sign-in popup) the loop goes back to its opener. The watch switches the
  browser to that tab and hands it back: the loop makes it its page. More than `popup_limit`
  new tabs from one page in one step are a flood: the extra ones are closed at once, as is every
  further popup of that page for the rest of the run (`engine.browser.popups.PopupGuard`, at the
  browser, before they become tabs), it is said, and the loop never moves into a popup of that step.
- **Downloads** made during a step are waited for (briefly) and reported with name, size, type and
  where they were saved — or why they were not (refused, stopped at the size limit).
- **Leaving the site and downloads the step was not approved for** are held at the browser and asked
  or refused (`engine.loop.holds.BrowserHolds`); a refusal during a step fails it with BLOCKED.

Everything seen during a step comes back as `PageIncidents` for its record and its result's message.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from engine.browser.browser import Browser
from engine.browser.dialogs import DialogWatcher
from engine.errors import ErrorCode, VigilError
from engine.loop.asker import GateAsker
from engine.loop.driver import PageDriver
from engine.loop.holds import BrowserHolds
from engine.models import (
    Action,
    ActionResult,
    ApprovalRequest,
    DialogRaised,
    PageEvent,
    ProposedStep,
    TabsChanged,
)
from engine.models.actions import EventCategory
from engine.models.browsing import DialogAnswer, DialogInfo, PageIncidents, TabInfo
from engine.models.effect import StepEffect
from engine.snapshot.vnode import VirtualNode

log = logging.getLogger("vigil.loop")
POPUP_LIMIT = 10   # new tabs from one page in one step before the rest are closed at once
NEW_PAGE_QUIET_S = 0.15  # a step that opened pages ends once none came for this long (a flood is counted whole)


class PageWatch:
    """Dialogs, tabs and downloads for one `AgentLoop` (see the module docstring): its questions go through
    `asker`; `page` is the page the loop works on now, `start_site` the domain its run started on. What moves
    the loop to another tab returns that tab (the loop makes it its page)."""

    def __init__(self, asker: GateAsker, page: Callable[[], PageDriver], start_site: Callable[[], str], *,
                 follow_new_tabs: bool = True, popup_limit: int = POPUP_LIMIT) -> None:
        self.asker, self.page = asker, page
        self.follow_new_tabs = follow_new_tabs
        self.popup_limit = popup_limit
        self.step_index = 0
        self.sensitive_ok = False       # the running step was approved by the person as sensitive
        self.totals = {"dialogs": 0, "dialog_floods": 0, "popups_blocked": 0, "downloads": 0, "exits_refused": 0,
                       "downloads_stopped": 0}
        self._opened_mark = 0
        self._downloads_mark = 0
        self._stops: list[Callable[[], None]] = []
        self._hooked: set[int] = set()
        self._before: list[tuple[DialogWatcher, Any]] = []  # (dialog watcher, the handler it had before the run)
        self._watchers: list[DialogWatcher] = []
        # exits to other sites and downloads held at the browser
        self.holds = BrowserHolds(asker, page, start_site)

    # -- the browser and its tabs ----------------------------------------------------------------
    @property
    def browser(self) -> Browser[Any] | None:
        b: Browser[Any] | None = getattr(self.page(), "browser", None)
        return b

    def start(self) -> None:
        """Hook the dialogs of every tab of the browser (and of the page when it has no browser)."""
        b = self.browser
        page = self.page()
        for tab in (list(b.tabs) if b is not None else [page]):
            self._hook(tab)
        if b is not None:
            if b.active_tab is not page and page in b.tabs:
                b._set_active(page)
            self._stops.append(b.on_tabs(self._tab_event))
            b.popups.arm(self.popup_limit)
        self.holds.start(b)

    def stop(self) -> None:
        self.holds.stop()
        b = self.browser
        if b is not None:
            b.popups.disarm()
        for s in self._stops:
            with contextlib.suppress(Exception):
                s()
        self._stops.clear()
        for d, before in self._before:  # whoever decided the dialogs before the run does again
            if d.handler == self._answer:
                d.handler = before
        self._before.clear()
        self._hooked.clear()

    def _hook(self, tab: object) -> None:
        d: DialogWatcher | None = getattr(tab, "dialogs", None)
        if d is None or id(tab) in self._hooked:
            return
        self._hooked.add(id(tab))
        self._before.append((d, d.handler))
        d.handler = self._answer
        self._stops.append(d.on_dialog(self._dialog_event))

    def _tab_event(self, what: str, tab: object) -> None:
        if what == "opened":
            self._hook(tab)
        self.publish_tabs(what)

    def publish_tabs(self, reason: str = "") -> None:
        b = self.browser
        if b is None:
            return
        infos = b.tab_infos()
        active = next((i.index for i in infos if i.active), None)
        self.asker.bus.publish(TabsChanged(tabs=infos, active=active, reason=reason))

    async def tabs(self) -> list[TabInfo]:
        """The open tabs with their titles read now (for the planner's observation)."""
        await self.holds.ready()  # the hold is in place before a step acts
        b = self.browser
        return await b.refresh_titles() if b is not None else []

    def tab_info(self) -> TabInfo | None:
        b = self.browser
        if b is None:
            return None
        return next((i for i in b.tab_infos() if i.active), None)

    def _dialog_event(self, d: DialogInfo) -> None:
        if d.kind == "alert" and d.answer is not None and d.id > 3 and not d.flood:
            return  # a run of alerts: the first few are shown, the rest counted in the step's incidents
        self.asker.bus.publish(DialogRaised(step_index=self.step_index, dialog=d.model_copy()))

    # -- steps -----------------------------------------------------------------------------------
    def begin_step(self, index: int) -> None:
        self.step_index = self.holds.step_index = index
        self.sensitive_ok = False
        b = self.browser
        self._watchers = []  # the step's tabs' dialogs, also of a tab the step closes
        for tab in (list(b.tabs) if b is not None else [self.page()]):
            d: DialogWatcher | None = getattr(tab, "dialogs", None)
            if d is not None:
                d.begin_window()
                self._watchers.append(d)
        if b is not None:
            self._opened_mark = len(b.opened)
            self._downloads_mark = len(b.downloads.items)
            b.popups.begin_step()

    def did_besides(self) -> bool:
        """The running step already did something besides the page: a download began, a dialog was raised (its
        incidents will say so, and that is the change it made)."""
        b = self.browser
        if b is not None and len(b.downloads.items) > self._downloads_mark:
            return True
        return any(d.window()[1] for d in self._watchers)

    def approved(self, action: Action, node: VirtualNode | None, base_url: str, reasons: list[str],
                 asked: bool, effect: StepEffect | None = None) -> None:
        """The step about to run, and what the gate approved it for (`BrowserHolds.approved`)."""
        self.holds.approved(action, node, base_url, reasons, asked, effect)

    async def end_step(self) -> tuple[PageIncidents, PageDriver | None]:
        """What happened besides the page during the step, up to the tab it leaves the loop on: its dialogs and
        new tabs, and the tab to work on now when that is another one (a new tab followed, or a closed one's
        opener; the browser is switched to it). `finish_step` adds the rest once the loop works on that tab."""
        inc = PageIncidents()
        b = self.browser
        page = self.page()
        tabs = list(b.tabs) if b is not None else [page]
        watchers = list(self._watchers)
        for tab in tabs:
            d: DialogWatcher | None = getattr(tab, "dialogs", None)
            if d is not None and all(d is not w for w in watchers):
                watchers.append(d)
        for d in watchers:
            items, count, flood = d.window()
            inc.dialogs.extend(x.model_copy() for x in items[:10])
            inc.dialog_count += count
            inc.dialog_flood = inc.dialog_flood or flood
        if b is None:
            return inc, None
        while self.holds.busy:  # a held navigation or download is being decided: its answer is part of the step
            await asyncio.sleep(0.05)
        await b.settle_new_tabs(quiet=NEW_PAGE_QUIET_S)
        new = [t for t in b.opened[self._opened_mark:] if t in b.tabs]
        self._opened_mark = len(b.opened)
        inc.popups_blocked = b.popups.take_closed()
        if len(new) > self.popup_limit:
            extra = new[self.popup_limit:]
            new = new[:self.popup_limit]
            for t in extra:
                with contextlib.suppress(VigilError):
                    await t.close()
            inc.popups_blocked += len(extra)
        if new:
            await b.refresh_titles()
            for t in new:
                i = b.index_of(t)
                if i is not None:
                    inc.tabs_opened.append(next(x for x in b.tab_infos() if x.index == i))
        # never into a popup of a flood: the page that flooded does not get to choose where the run goes
        follow = [] if inc.popups_blocked else [t for t in new if not b.popups.is_flooding(
            getattr(b._target_of(t), "opener_id", None))]
        if follow and self.follow_new_tabs:
            newest = follow[-1]
            if newest in b.tabs and newest is not page:
                moved: PageDriver | None = await self.switch(newest)
                inc.switched_to = self.tab_info()
                return inc, moved
        elif page not in b.tabs or getattr(page, "closed", False):
            return inc, await self.back_to_opener(inc)
        return inc, None

    async def finish_step(self, inc: PageIncidents) -> None:
        """The rest of what happened besides the page during the step (`end_step` first): its downloads and
        held exits; the run's totals."""
        b = self.browser
        if b is None:
            return
        await b.downloads.announced(2.0)  # a download the browser began: decided within this step, not after the run
        if b.downloads.busy:
            await b.downloads.settle(10.0)
        inc.downloads = [x.model_copy() for x in b.downloads.items[self._downloads_mark:]]
        self._downloads_mark = len(b.downloads.items)
        self.holds.end_step(inc)
        self.totals["dialogs"] += inc.dialog_count
        self.totals["dialog_floods"] += int(inc.dialog_flood)
        self.totals["popups_blocked"] += inc.popups_blocked
        self.totals["downloads"] += sum(1 for d in inc.downloads if d.saved)
        self.totals["downloads_stopped"] += sum(1 for d in inc.downloads if d.status in ("refused", "over_limit"))
        self.totals["exits_refused"] += sum(1 for x in inc.exits if not x.allowed)

    async def back_to_opener(self, inc: PageIncidents | None = None) -> PageDriver | None:
        """The page the loop worked on closed (a popup closed itself): the browser's active tab (its opener,
        else the last tab), switched to, for the loop to work on. None when the page is still open or no tab
        is left."""
        b = self.browser
        if b is None:
            return None
        page = self.page()
        if page in b.tabs and not getattr(page, "closed", False):
            return None
        nxt = b.active_tab if b.active_tab in b.tabs else (b.tabs[-1] if b.tabs else None)
        if nxt is None:
            return None
        if inc is not None:
            inc.tabs_closed.append(f"{getattr(page, 'url', '') or 'the tab'} closed itself")
        moved = await self.switch(nxt)
        if inc is not None:
            inc.switched_to = self.tab_info()
        return moved

    async def switch(self, tab: PageDriver) -> PageDriver:
        """Bring `tab` to the front and watch its dialogs: the tab for the loop to work on."""
        b = self.browser
        index = b.index_of(tab) if b is not None else None  # (None: not one of the browser's tabs)
        if b is not None and index is not None:
            await b.switch_to(index)
        self._hook(tab)
        self.publish_tabs("active")
        return tab

    def run_incidents(self) -> list[str]:
        """The run's incidents in words, for its result (never a quiet "finished" after a flood)."""
        t = self.totals
        out = []
        if t["dialog_floods"]:
            out.append(f"dialog flood: the page raised {t['dialogs']} dialogs in all; past the limit per step they "
                       "were dismissed without asking")
        elif t["dialogs"]:
            out.append(f"the page raised {t['dialogs']} dialog(s)")
        if t["popups_blocked"]:
            out.append(f"popup flood: {t['popups_blocked']} popup(s) were blocked or closed at once")
        if t["downloads"]:
            out.append(f"{t['downloads']} file(s) downloaded")
        if t["downloads_stopped"]:
            out.append(f"{t['downloads_stopped']} download(s) refused or stopped at the size limit, nothing kept")
        if t["exits_refused"]:
            out.append(f"the page tried {t['exits_refused']} time(s) to leave the site on its own; held and refused")
        return out

    # -- the tab actions -------------------------------------------------------------------------------
    async def tab_action(self, action: Action) -> tuple[PageDriver | None, ActionResult | None]:
        """switch_tab / close_tab / new_tab on the browser the page belongs to: the tab the loop works on now
        when that is another one, and the action's result — None after switch_tab, whose result
        (`switched`) reads the tabs' titles once the loop works on the tab."""
        s = action.to_string()
        b = self.browser
        if b is None:
            return None, ActionResult(success=False, action=s, error_code=ErrorCode.BAD_ARGUMENT,
                                      message=f"{action.name} needs a browser with tabs; this page has none.")
        if action.name == "new_tab":
            tab = await self.switch(await b.new_tab(action.url) if action.url else await b.new_tab())
            return tab, ActionResult(success=True, action=s, message=f"Opened a new tab ({b.index_of(tab)}) on "
                                                                     f"{tab.url} and switched to it.")
        if action.name == "switch_tab":
            return await self.switch(b.tab_at(action.tab or 0)), None
        page = self.page()
        index = action.tab if action.tab is not None else b.index_of(page)
        gone = b.tab_at(index)  # type: ignore[arg-type]  # (a page that is not one of the tabs: no index, fails)
        url = gone.url
        if not await b.close_tab(index, ask_page=True):
            return None, ActionResult(success=False, action=s, error_code=ErrorCode.REFUSED,
                                      message=f"Tab {index} ({url}) asked before closing (beforeunload) and the "
                                              "answer was to stay: it is still open.")
        moved = await self.back_to_opener() if gone is page or page not in b.tabs else None
        now = moved if moved is not None else page
        return moved, ActionResult(success=True, action=s, message=f"Closed tab {index} ({url}); now in tab "
                                                                   f"{b.index_of(now)}: {now.url}.")

    async def switched(self, action: Action) -> ActionResult:
        """switch_tab's result, once the loop works on the tab it switched to (`tab_action`)."""
        b = self.browser
        tab = self.page()
        if b is not None:
            await b.refresh_titles()
        return ActionResult(success=True, action=action.to_string(),
                            message=f"Switched to tab {action.tab}: {getattr(tab, 'title', '') or '(untitled)'} — "
                                    f"{tab.url}.")

    # -- deciding a dialog -------------------------------------------------------------------------
    async def _answer(self, d: DialogInfo) -> DialogAnswer | None:
        policy = self.asker.policy
        if policy == "auto":
            return DialogAnswer(accept=True, text=d.default_prompt if d.kind == "prompt" else None, by="policy",
                                reason="the auto policy accepts dialogs")
        if policy == "auto-safe":
            if self.sensitive_ok and d.kind != "prompt":
                return DialogAnswer(accept=True, by="policy", reason="the step that raised it was approved as "
                                                                     "sensitive")
            return DialogAnswer(accept=False, by="policy", reason="auto-safe answers Cancel unless the step was "
                                                                  "approved as sensitive")
        return await self._ask(d)

    async def _ask(self, d: DialogInfo) -> DialogAnswer:
        proposal = ProposedStep(thought="", action=Action(name="dialog", accept=True,
                                                          text=d.default_prompt if d.kind == "prompt" else None),
                                description=f"Answer {d.call()}")
        what = {"confirm": "OK or Cancel?", "prompt": "OK (with the text) or Cancel?",
                "beforeunload": "Leave the page (OK) or stay (Cancel)?"}.get(d.kind, "OK?")
        request = ApprovalRequest(step_index=self.step_index, proposal=proposal,
                                  summary=f"The page asks: {d.call()} — {what}", policy=self.asker.policy,
                                  sensitive_reasons=[f"a {d.kind} dialog from {d.url or 'the page'}: nothing "
                                                     "answers it without you"], dialog=d)
        decision = await self.asker.ask_about_page(request)
        if decision.kind in ("approve", "edit", "take_over"):
            text = decision.text if decision.text is not None else (d.default_prompt if d.kind == "prompt" else None)
            return DialogAnswer(accept=True, text=text, by="person")
        if decision.kind == "stop":  # (the run is stopped by now)
            return DialogAnswer(accept=False, by="person", reason="the person stopped the run")
        return DialogAnswer(accept=False, by="person", reason=decision.reason or "")


def with_incidents(result: ActionResult, inc: PageIncidents, acted_on: object, now: object) -> ActionResult:
    """The action's result with what happened besides the page: a popup that closed itself under the action
    is not a dead browser, and new tabs, dialogs and downloads are said in its message."""
    update: dict[str, Any] = {}
    message = result.message
    gone = result.error_code in (ErrorCode.TAB_CRASHED, ErrorCode.BROWSER_CLOSED)
    if acted_on is not now and getattr(acted_on, "closed", False) and gone:
        update.update(success=True, error_code=None)
        message = "The action ran and its tab closed itself (a popup finishing its work)."
    v = result.verification
    done = ([f"opened a new tab ({t.title or t.url})" for t in inc.tabs_opened]
            + [f"downloaded {d.name}" for d in inc.downloads if d.saved]
            + [f"raised {d.call()}" for d in inc.dialogs[:1]])
    if v is not None and not v.success and done and (v.expected is None or v.expected.type == "any_change"):
        # what it did happened besides the page (a new tab, a download, a dialog): that is the change
        feedback = f"Verified: it {done[0]}."
        update["verification"] = v.model_copy(update={"success": True, "feedback": feedback,
                                                      "actual_outcome": feedback})
        message = message.replace(v.feedback, feedback)
    lines = inc.lines()
    if result.error_code == ErrorCode.CDP_TIMEOUT and any(d.kind != "alert" and d.answer for d in inc.dialogs):
        # the input waited on the dialog while it was decided (past the DevTools timeout): it did run
        update.update(success=True, error_code=None)
        message = "The action ran; the page waited while its dialog was answered."
    blocked = inc.blocked()
    if blocked:  # the browser held what the step was not approved for, and it was refused
        update.update(success=False, error_code=ErrorCode.BLOCKED)
        lines = [x for x in lines if x not in blocked]
        message = f"{blocked_line(blocked, now)} The action: {message}"
    if lines:
        message = (message + " " if message else "") + "Besides the page: " + "; ".join(lines) + "."
    if message != result.message:
        update["message"] = message
    return result.model_copy(update=update) if update else result


def blocked_line(blocked: list[str], page: object) -> str:
    """What the browser held and refused during a step, in one line a person and a model can act on."""
    more = f" (and {len(blocked) - 1} more)" if len(blocked) > 1 else ""
    first = blocked[0]
    if first.startswith(("the page tried to leave", "the page tried to submit")):
        where = getattr(page, "url", "") or "where it was"
        todo = (f"The page stays on {where}. If the task needs the other site, navigate there as a step of its own "
                "(a person is asked).")
    else:
        todo = ("Nothing was kept. If the task needs the file, ask the person to approve the step that downloads it "
                "(or raise VIGIL_DOWNLOAD_LIMIT_MB).")
    return f"{ErrorCode.BLOCKED}: {first}{more}. {todo}"


def incident_events(inc: PageIncidents) -> list[PageEvent]:
    """The step's dialogs, tabs and downloads as page events (what the chat and the report list)."""
    out: list[PageEvent] = []
    for line in inc.lines():
        held = "refused" in line or "stopped at" in line
        category: EventCategory = "warning" if "flood" in line or held else "text"
        out.append(PageEvent(category=category, kind="browser", text=line, age_ms=0))
    return out
