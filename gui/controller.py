"""The window's link to the engine: one browser, one tab, one supervised loop at a time.

Every engine call is a coroutine on the qasync loop; results and loop events come back as Qt
signals, so widgets never wait on the engine and hold no browser logic of their own.

This module holds the browser (start, navigate, history, viewport), publishing snapshots, and the
supervised loop (run, replay, a run adopted from the MCP host, decisions, shutdown). The rest of
`Supervisor` is in its parts: gui.recording (the session store and the tab's session), gui.loop_events
(the loop's events as Qt signals, the step pictures), gui.person_input (the person's own steps while a step
waits), gui.live_view (snapshots as the page changes between steps), gui.browser_tabs (the browser's tabs,
page dialogs outside a run)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from engine.errors import VigilError
from engine.loop import AgentLoop, QueueGate
from engine.loop.person_steps import PersonSteps
from engine.loop.planner import Observation, close_planner
from engine.models import Decision, RunResult
from engine.store import Store
from gui.browser_tabs import BrowserTabs
from gui.live_view import LiveView
from gui.loop_events import LoopEvents
from gui.person_input import PersonInput
from gui.recording import SessionRecording
from gui.sessions import SessionLibrary

log = logging.getLogger("vigil.gui")


class Supervisor(SessionRecording, LoopEvents, PersonInput, LiveView, BrowserTabs, QObject):
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
        self.browser = None
        self.tab = None
        self._cm = None
        self.snapshot = None
        self.previous = None
        self.loop: AgentLoop | None = None
        self.gate: QueueGate | None = None
        self.planner: Any = None
        self.run_task_handle: asyncio.Task | None = None
        self.settings: dict[str, Any] = {}
        self._store: Store | None = None  # the session store, or None when it could not be opened (store_error)
        self.sessions: SessionLibrary | None = None  # what the window reads and changes of the store
        self.store_error = ""
        self.recorder = None        # the tab's SessionRecorder
        self._reported: str | None = None
        self.load_error = ""        # why the last page could not be opened ("" when it was)
        self._wanted_viewport: tuple[int, int] | None = None
        self._resizing = False
        self.loop_state = "idle"     # the running loop's state (engine LoopState), "idle" without a run
        self._followed: set[int] = set()  # tabs whose navigations this window listens to (by id)
        self._dialog_answer: asyncio.Future | None = None  # a page dialog outside a run waits for the person
        self.person: PersonSteps | None = None  # the person's input while a step waits (their own steps)
        self._person_feed: asyncio.Future | None = None
        self._handlers: dict[type, Callable[[Any], None]] = self._event_handlers()
        self.live = None                        # the live view (LiveFollower): snapshots as the page changes
        self.live_enabled = True
        self.snapshot_at = 0.0                  # time.monotonic() when the shown snapshot was published
        self.tab_switched.connect(self._follow)

    # -- browser -------------------------------------------------------------------------------
    def _on_navigated(self, url: str) -> None:
        """The tab's main frame navigated (a run, the person, or the page itself)."""
        if self.tab is None:
            return
        self.page_changed.emit(url)
        self._page_moved(url)

    async def start(self, url: str | None) -> bool:
        from engine import launch
        self.open_store()
        self.busy.emit("Starting Chromium…")
        try:
            self._cm = launch(headless=self.headless, viewport=self.viewport)
            self.browser = await self._cm.__aenter__()
            self.tab = await self.browser.new_tab()
            self.tab.on_navigated(self._on_navigated)
            self._followed.add(id(self.tab))
            self._watch_dialogs(self.tab)
            self.browser.on_tabs(self._on_tabs)
            self._follow(self.tab)
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
        try:
            await self.tab.goto(url)
        except VigilError as exc:
            self.load_error = exc.message
            self.error.emit(exc.message)
            ok = False
        finally:
            self.busy.emit("")
        self.page_changed.emit(self.tab.url)
        self._page_moved(self.tab.url)
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
        self.page_changed.emit(self.tab.url)
        self._page_moved(self.tab.url)
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

    async def refresh(self, *, force: bool = False):
        """Take a snapshot (reused while the page is unchanged) and publish it."""
        if self.tab is None:
            return None
        try:
            await self.tab.wait_stable()
            snap = await self.tab.snapshot(force=force)
        except VigilError as exc:
            self.error.emit(f"Snapshot failed: {exc.message}")
            return None
        self._publish(snap)
        return snap

    def _publish(self, snap) -> None:
        """Show a snapshot (the window's, the loop's or the live view's); the page is caught up with it
        unless it changed again since."""
        self.snapshot_at = time.monotonic()
        if snap is not self.snapshot:
            self.previous, self.snapshot = self.snapshot, snap
            self.snapshot_changed.emit(snap, self.previous)
            self._retitle_tabs()
        live = self.live
        if live is None or not live.watch.pending():
            if live is not None:
                live.changed_at = None
            self.page_ahead.emit(0.0)
        else:  # the page changed again while this snapshot was taken
            self.page_ahead.emit(live.changed_at or live.snapshot_at or time.monotonic())

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
        if self._store is None:
            self.error.emit(self.store_error or "There is no session store to replay from.")
            return False
        try:
            planner = replay_planner(self._store, session_id)
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
        self.planner = planner
        self.gate = QueueGate()
        # artifacts: each step record comes with its screenshots and snapshots (kept by the recorder,
        # and the after-step picture here costs no capture of its own)
        self.loop = AgentLoop(self.tab, planner, gate=self.gate, policy=policy, artifacts=True)
        self.loop.bus.subscribe(self._on_event)
        if self.recorder is not None:
            self._reported = None
            sid = self.recorder.start(self.loop, task, self.tab.url, planner=planner_name, policy=policy,
                                      metadata=metadata)
            self._report_recorder()
            if sid:
                self.session_changed.emit(sid)
        self.run_task_handle = asyncio.ensure_future(self._run(task))

    async def _run(self, task: str) -> None:
        result: RunResult | None = None
        try:
            result = await self.loop.run(task)
            self.status.emit(result.status, "finished", result.reason or result.answer or "")
        except BaseException as exc:  # cancelled (the window closed), or a bug: the session still ends
            cancelled = isinstance(exc, asyncio.CancelledError)
            result = RunResult(task=task, status="interrupted" if cancelled else "error",
                               reason="The run was cancelled." if cancelled else f"{type(exc).__name__}: {exc}",
                               url=self.tab.url if self.tab is not None else "")
            raise
        finally:
            if self.recorder is not None:
                self.recorder.finish(result)
                self._report_recorder()
            self.sessions_changed.emit()
            await close_planner(self.planner)
            self.loop_state = "idle"
            self.request_done.emit()
            await self.refresh()
            self._resize_if_waiting()

    # -- a run another client of the engine drives on this tab (the MCP server the window hosts) ----------
    def adopt_run(self, loop: AgentLoop, planner: Any, gate: QueueGate, task: asyncio.Task) -> None:
        """Serve a run that another client of the engine started on this tab (gui.mcp_host): its events
        reach the window, the approval bar answers its gate, Stop stops it, as for the window's own runs."""
        self.planner, self.gate, self.loop, self.run_task_handle = planner, gate, loop, task
        loop.bus.subscribe(self._on_event)
        self._reported = None
        self._report_recorder()
        self.session_changed.emit(self.current_session() or "")
        self.sessions_changed.emit()

    def adopted_run_ended(self) -> None:
        """That run is over (its client stored it): the window is idle again."""
        self._report_recorder()
        self.sessions_changed.emit()
        self.loop_state = "idle"
        self.request_done.emit()
        if self.tab is not None:
            asyncio.ensure_future(self.refresh())
        self._resize_if_waiting()

    def last_exchange(self) -> Any:
        """What the current planner last sent to a model or backend and got back (None for planners
        that talk to nobody)."""
        return getattr(self.planner, "last_exchange", None)

    def set_policy(self, policy: str) -> None:
        if self.loop is not None:
            self.loop.policy = policy

    def decide(self, decision: Decision) -> None:
        if self._dialog_answer is not None and not self._dialog_answer.done():  # a dialog outside a run
            self._dialog_answer.set_result(decision)
            self.request_done.emit()
            return
        if self.gate is not None:
            person, self.person = self.person, None
            if person is not None and decision.kind == "take_over" and decision.action is None:
                asyncio.ensure_future(self._submit_person_steps(self.gate, decision, person))
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

    def _resize_if_waiting(self) -> None:
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
        self.live_enabled = False
        live, self.live = self.live, None
        if live is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(live.stop(), 5)
        if self.loop is not None and self.running():
            self.loop.stop()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(self.run_task_handle), 5)
        if self.run_task_handle is not None and not self.run_task_handle.done():
            self.run_task_handle.cancel()
            with contextlib.suppress(BaseException):
                await self.run_task_handle
        if self._cm is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._cm.__aexit__(None, None, None), 15)
        self._cm = self.browser = self.tab = None
        if self._store is not None:
            with contextlib.suppress(Exception):
                self._store.close()
            self._store = self.sessions = self.recorder = None
        log.debug("shut down in %.0f ms", (time.monotonic() - t0) * 1000)
