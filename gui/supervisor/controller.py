"""The window's link to the engine: one browser, one tab, one supervised loop at a time.

Every engine call is a coroutine on the qasync loop; results and loop events come back as Qt
signals, so widgets never wait on the engine and hold no browser logic of their own.

This module holds the browser (start, navigate, history, viewport), publishing snapshots, and the
supervised loop (run, replay, a run adopted from the MCP host, decisions, shutdown). The rest is in the
supervisor's parts (modules beside this one), each holding its own state as Playwright's Page holds its
keyboard and mouse: `recording` (the session store and the tab's session), `events` (`loop_events`: the loop's
events as Qt signals, the step pictures), `person_input` (the person's own steps while a step waits), `live`
(`live_view`: snapshots as the page changes between steps) and `tabs` (`browser_tabs`: the browser's tabs,
page dialogs outside a run)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from contextlib import AbstractAsyncContextManager
from typing import Any, cast

from PySide6.QtCore import QObject, Signal

from engine.browser.browser import Browser
from engine.errors import VigilError
from engine.loop import AgentLoop, QueueGate
from engine.loop.person_steps import PersonSteps
from engine.loop.planner import Observation, close_planner
from engine.models import POLICIES, Decision, RunResult
from engine.models.loop import Policy
from engine.snapshot.dom_snapshot import DomSnapshot
from engine.store.recorder import SessionRecorder
from engine.tab import Tab
from gui.supervisor.browser_tabs import BrowserTabs
from gui.supervisor.live_view import LiveView
from gui.supervisor.loop_events import LoopEvents
from gui.supervisor.person_input import PersonInput
from gui.supervisor.recording import SessionRecording
from gui.supervisor.session_library import SessionLibrary

log = logging.getLogger("vigil.gui")
ERROR_PAGE = "chrome-error:"  # Chromium's own page for an address it could not load: never shown as the address


class Supervisor(QObject):
    snapshot_changed = Signal(object, object)   # (snapshot, previous snapshot)
    message = Signal(object)                    # ChatMessage (added or updated in place by id)
    plan_changed = Signal(object)               # Plan
    record = Signal(object)                     # StepRecord
    request = Signal(object)                    # ApprovalRequest
    request_done = Signal()
    status = Signal(str, str, str)              # task status, loop state, detail
    error = Signal(str)                         # something the analyst must see, with the fix
    busy = Signal(str)                          # progress text ("" when idle)
    page_changed = Signal(str)                  # URL
    step_picture = Signal(int, bytes, str)      # step index, PNG (screenshot + Set-of-Mark), perceptual hash
    session_changed = Signal(str)               # the tab's session id ("" when the next task starts a new one)
    sessions_changed = Signal()                 # a session was created, changed or ended: lists re-read
    notice = Signal(str)                        # something worth a line in the chat (not an error)
    tabs_changed = Signal(object, object)       # the browser's tabs (list[TabInfo]), the active index (or None)
    tab_switched = Signal(object)               # the Tab the window now shows (a new tab, a closed popup's opener)
    viewport_changed = Signal(int, int)         # the page was resized to (width, height) CSS px
    page_ahead = Signal(float)                  # page changed at (monotonic) after the shown snapshot; 0: caught up

    def __init__(self, *, headless: bool = True, viewport: tuple[int, int] = (1280, 800)) -> None:
        super().__init__()
        self.headless, self.viewport = headless, viewport
        self.browser: Browser[Tab] | None = None
        self.tab: Tab | None = None
        self._cm: AbstractAsyncContextManager[Browser[Tab]] | None = None
        self.snapshot: DomSnapshot | None = None
        self.previous: DomSnapshot | None = None
        self.loop: AgentLoop | None = None
        self.gate: QueueGate | None = None
        self.planner: Any = None
        self.run_task_handle: asyncio.Task[Any] | None = None
        self.settings: dict[str, Any] = {}
        self.load_error = ""        # why the last page could not be opened ("" when it was)
        self._failed_url = ""       # the address being opened, or the last that could not be (as typed)
        self._wanted_viewport: tuple[int, int] | None = None
        self._resizing = False
        self.loop_state = "idle"     # the running loop's state (engine LoopState), "idle" without a run
        self.snapshot_at = 0.0       # time.monotonic() when the shown snapshot was published
        # the parts
        self.recording = SessionRecording(self)
        self.events = LoopEvents(self)
        self.person_input = PersonInput(self)
        self.live = LiveView(self)
        self.tabs = BrowserTabs(self)
        self.tab_switched.connect(self.live.follow)

    # -- what the window reads of the parts ------------------------------------------------------
    @property
    def sessions(self) -> SessionLibrary | None:
        """What the window reads and changes of the session store (None without one)."""
        return self.recording.library

    @property
    def store_error(self) -> str:
        """Why sessions are not recorded ("" while they are)."""
        return self.recording.error

    def open_store(self) -> bool:
        return self.recording.open()

    def current_session(self) -> str | None:
        return self.recording.current_session()

    def new_session(self) -> bool:
        return self.recording.new_session()

    def delete_session(self, session_id: str) -> None:
        self.recording.delete_session(session_id)

    @property
    def recorder(self) -> SessionRecorder | None:
        """The tab's recorder (None without a store): what the MCP host records with."""
        return self.recording.recorder

    @property
    def person(self) -> PersonSteps | None:
        """The person's own steps while a step waits for approval (None otherwise)."""
        return self.person_input.steps

    @property
    def resizing(self) -> bool:
        """A viewport change is being applied."""
        return self._resizing

    # -- browser -------------------------------------------------------------------------------
    def on_navigated(self, url: str) -> None:
        """The tab's main frame navigated (a run, the person, or the page itself)."""
        if self.tab is None:
            return
        if url.startswith(ERROR_PAGE):  # Chromium's error page: the address stays the one that failed
            if self._failed_url:
                self.page_changed.emit(self._failed_url)
            return
        self.page_changed.emit(url)
        self.recording.page_moved(url)

    async def start(self, url: str | None) -> bool:
        from engine import launch
        self.open_store()
        self.busy.emit("Starting Chromium…")
        try:
            self._cm = cm = launch(headless=self.headless, viewport=self.viewport)
            self.browser = browser = await cm.__aenter__()
            self.tab = tab = await browser.new_tab()
            self.tabs.watch(tab)
            browser.on_tabs(self.tabs.on_tabs)
            self.live.follow(tab)
        except VigilError as exc:
            self.error.emit(f"Could not start the browser: {exc.message}")
            self.busy.emit("")
            return False
        self.busy.emit("")
        if url:
            await self.navigate(url)
        return True

    async def navigate(self, url: str) -> bool:
        if self.tab is None:
            return False
        self.busy.emit(f"Opening {url}…")
        ok = True
        self.load_error = ""
        self._failed_url = url  # until it loads: Chromium's error page in between stands for it
        try:
            await self.tab.goto(url)
            self._failed_url = ""
        except VigilError as exc:
            self.load_error = exc.message
            self.error.emit(exc.message)
            ok = False
        finally:
            self.busy.emit("")
        if self.tab is None:
            return False
        # a failed address stays in the field as it was typed (never chrome-error://…), to be corrected
        self.page_changed.emit(self.tab.url if ok else url)
        if ok or not self.tab.url.startswith(ERROR_PAGE):
            self.recording.page_moved(self.tab.url)
        await self.refresh()
        return ok

    async def history(self, step: int) -> bool:
        """Back (`step` < 0), forward (> 0) or reload (0); a page that cannot be loaded is reported on
        `error`, as `navigate()` reports it. False when nothing moved."""
        if self.tab is None:
            return False
        what = "Going back" if step < 0 else "Going forward" if step > 0 else "Reloading"
        self.busy.emit(f"{what}…")
        moved = False
        try:
            if step < 0:
                moved = await self.tab.go_back(timeout=15)
            elif step > 0:
                moved = await self.tab.go_forward(timeout=15)
            else:
                await self.tab.reload(timeout=30)
                moved = True
        except VigilError as exc:
            self.error.emit(exc.message)
        finally:
            self.busy.emit("")
        if self.tab is None:
            return False
        if not self.tab.url.startswith(ERROR_PAGE):  # (a failed reload: the field keeps the address)
            self.page_changed.emit(self.tab.url)
            self.recording.page_moved(self.tab.url)
        await self.refresh()
        return moved

    def can_resize(self) -> bool:
        """The page may be resized now: no run, or the run waits for a person. Never while the loop
        observes, plans or acts: a page re-laid out between locating an element and clicking it
        would be clicked in the wrong place. Nor while a JavaScript dialog stops the page: the resize
        would wait for the dialog's answer, and the answer would wait for the resize."""
        if self.tab is not None and self.tab.pending_dialog is not None:
            return False
        return not self.running() or self.loop_state in ("awaiting_approval", "finished", "idle")

    async def set_viewport(self, width: int, height: int) -> bool:
        """Resize the page's viewport to `width` x `height` CSS px, then take the snapshot of the new
        layout. Requests that come while one is applied are coalesced (the latest wins); during a
        run they wait until the loop waits for approval or ends (`can_resize`)."""
        self._wanted_viewport = (int(width), int(height))
        if self._resizing or self.tab is None or not self.can_resize():
            return False
        self._resizing = True
        changed = False
        try:
            while self.tab is not None and self._wanted_viewport != self.viewport:
                w, h = self._wanted_viewport
                await self.tab.set_viewport(w, h)
                self.viewport, changed = (w, h), True
        except (VigilError, ValueError) as exc:
            log.info("viewport not changed: %s", exc)
            return False
        finally:
            self._resizing = False
        if changed:
            self.viewport_changed.emit(*self.viewport)
            await self.refresh()
        return changed

    async def refresh(self, *, force: bool = False) -> DomSnapshot | None:
        """Take a snapshot (reused while the page is unchanged) and publish it."""
        if self.tab is None:
            return None
        try:
            await self.tab.wait_stable()
            snap = await self.tab.snapshot(force=force)
        except VigilError as exc:
            self.error.emit(f"Snapshot failed: {exc.message}")
            return None
        self.publish(snap)
        return snap

    def publish(self, snap: DomSnapshot) -> None:
        """Show a snapshot (the window's, the loop's or the live view's); the page is caught up with it
        unless it changed again since."""
        self.snapshot_at = time.monotonic()
        if snap is not self.snapshot:
            self.previous, self.snapshot = self.snapshot, snap
            self.snapshot_changed.emit(snap, self.previous)
            self.tabs.retitle()
        self.page_ahead.emit(self.live.ahead_since())

    # -- the supervised loop ----------------------------------------------------------------------
    def running(self) -> bool:
        return self.run_task_handle is not None and not self.run_task_handle.done()

    async def run_task(self, task: str, planner: str, policy: str) -> None:
        from engine.planners.registry import make_planner
        if self.tab is None or self.running():
            return
        try:
            made = make_planner(planner, base_url=self.settings.get("base_url") or None,
                                model=self.settings.get("model") or None,
                                api_key=self.settings.get("api_key") or None,
                                backend_url=self.settings.get("backend_url") or None)
        except VigilError as exc:
            self.error.emit(f"{exc.message} Open Settings to fill it in.")
            return
        self._launch(made, planner, task, policy)

    async def replay(self, session_id: str, policy: str) -> bool:
        """Run a stored session's steps again in this tab, from where it began, as a new session."""
        from engine.store.replay import replay_planner
        if self.tab is None or self.running():
            return False
        store = self.recording.store
        if store is None:
            self.error.emit(self.store_error or "There is no session store to replay from.")
            return False
        try:
            planner = replay_planner(store, session_id)
        except VigilError as exc:
            self.error.emit(exc.message)
            return False
        self.new_session()  # a replay is a session of its own (then the tab's session); the old one stays put
        if not await self.navigate(planner.start_url) or self.running():
            return False
        if planner.skipped:
            self.notice.emit("Not replayed: " + "; ".join(planner.skipped) + ".")
        self._launch(planner, "replay", planner.task, policy, metadata={"replayOf": planner.session_id})
        return True

    def _launch(self, planner: Any, planner_name: str, task: str, policy: str,
                metadata: dict[str, Any] | None = None) -> None:
        tab = self.tab
        if tab is None:
            return
        self.planner = planner
        self.gate = QueueGate()
        # artifacts: each step record comes with its screenshots and snapshots (kept by the recorder,
        # and the after-step picture here costs no capture of its own)
        self.loop = loop = AgentLoop(tab, planner, gate=self.gate, policy=policy, artifacts=True)
        loop.bus.subscribe(self.events.on_event)
        recorder = self.recording.recorder
        if recorder is not None:
            self.recording.forget_reported()
            sid = recorder.start(loop, task, tab.url, planner=planner_name, policy=policy, metadata=metadata)
            self.recording.report()
            if sid:
                self.session_changed.emit(sid)
        self.run_task_handle = asyncio.ensure_future(self._run(loop, task))

    async def _run(self, loop: AgentLoop, task: str) -> None:
        result: RunResult | None = None
        try:
            result = await loop.run(task)
            self.status.emit(result.status, "finished", result.reason or result.answer or "")
        except BaseException as exc:  # cancelled (the window closed), or a bug: the session still ends
            cancelled = isinstance(exc, asyncio.CancelledError)
            result = RunResult(task=task, status="interrupted" if cancelled else "error",
                               reason="The run was cancelled." if cancelled else f"{type(exc).__name__}: {exc}",
                               url=self.tab.url if self.tab is not None else "")
            raise
        finally:
            recorder = self.recording.recorder
            if recorder is not None and result is not None:  # (set on every way out of the try)
                recorder.finish(result)
                self.recording.report()
            self.sessions_changed.emit()
            await close_planner(self.planner)
            self.loop_state = "idle"
            self.request_done.emit()
            await self.refresh()
            self.resize_if_waiting()

    # -- a run another client of the engine drives on this tab (the MCP server the window hosts) ----------
    def adopt_run(self, loop: AgentLoop, planner: Any, gate: QueueGate, task: asyncio.Task[Any]) -> None:
        """Serve a run that another client of the engine started on this tab (gui.app.mcp_host): its events
        reach the window, the approval bar answers its gate, Stop stops it, as for the window's own runs."""
        self.planner, self.gate, self.loop, self.run_task_handle = planner, gate, loop, task
        loop.bus.subscribe(self.events.on_event)
        self.recording.forget_reported()
        self.recording.report()
        self.session_changed.emit(self.current_session() or "")
        self.sessions_changed.emit()

    def adopted_run_ended(self) -> None:
        """That run is over (its client stored it): the window is idle again."""
        self.recording.report()
        self.sessions_changed.emit()
        self.loop_state = "idle"
        self.request_done.emit()
        if self.tab is not None:
            asyncio.ensure_future(self.refresh())
        self.resize_if_waiting()

    def last_exchange(self) -> Any:
        """What the current planner last sent to a model or backend and got back (None for planners
        that talk to nobody)."""
        return getattr(self.planner, "last_exchange", None)

    def set_policy(self, policy: str) -> None:
        if self.loop is not None and policy in POLICIES:  # (the loop checks its first policy the same way)
            self.loop.policy = cast(Policy, policy)

    def decide(self, decision: Decision) -> None:
        if self.tabs.answer_dialog(decision):  # a dialog outside a run
            self.request_done.emit()
            return
        if self.gate is not None:
            person = self.person_input.take()
            if person is not None and decision.kind == "take_over" and decision.action is None:
                asyncio.ensure_future(self.person_input.submit(self.gate, decision, person))
            elif self._resizing and not self._answers_dialog():
                # the step runs on the page as it will be, not as it was being re-laid out (a dialog's
                # answer never waits: the page cannot finish a resize until the dialog is answered)
                asyncio.ensure_future(self._submit_when_resized(self.gate, decision))
            else:
                self.gate.submit(decision)
            self.request_done.emit()

    def _answers_dialog(self) -> bool:
        pending = self.gate.pending if self.gate is not None else None
        return (pending is not None and pending.dialog is not None) or (
            self.tab is not None and self.tab.pending_dialog is not None)

    async def _submit_when_resized(self, gate: QueueGate, decision: Decision) -> None:
        while self._resizing:
            await asyncio.sleep(0.02)
        gate.submit(decision)

    def resize_if_waiting(self) -> None:
        """A resize that waited for the loop is applied once it may be."""
        want = self._wanted_viewport
        if want is not None and want != self.viewport and not self._resizing and self.can_resize():
            asyncio.ensure_future(self.set_viewport(*want))

    async def quick_command(self, text: str) -> Decision | None:
        """Ground a typed command ("click Place order") with the offline planner: a take-over decision."""
        from engine.planners.heuristic import HeuristicPlanner
        snap = await self.refresh()
        if snap is None:
            return None
        step = await HeuristicPlanner().propose(Observation(task=text, step_index=0, snapshot=snap, url=snap.url))
        if step.action.name == "fail":
            self.error.emit(step.action.reason or f"Could not ground {text!r}.")
            return None
        return Decision(kind="take_over", action=step.action)

    def stop_task(self) -> None:
        if self.loop is not None and self.running():
            self.loop.stop()

    # -- shutdown ------------------------------------------------------------------------------
    async def shutdown(self) -> None:
        """Stop the loop, then close the browser (the window stops its screencast first)."""
        t0 = time.monotonic()
        await self.live.stop()
        handle = self.run_task_handle
        if self.loop is not None and handle is not None and self.running():
            self.loop.stop()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(handle), 5)
        if self.run_task_handle is not None and not self.run_task_handle.done():
            self.run_task_handle.cancel()
            with contextlib.suppress(BaseException):
                await self.run_task_handle
        if self._cm is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._cm.__aexit__(None, None, None), 15)
        self._cm = self.browser = self.tab = None
        self.recording.close()
        log.debug("shut down in %.0f ms", (time.monotonic() - t0) * 1000)
