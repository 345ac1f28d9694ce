"""The window's link to the engine: one browser, one tab, one supervised loop at a time.

Every engine call is a coroutine on the qasync loop; results and loop events come back as Qt
signals, so widgets never wait on the engine and hold no browser logic of their own."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from PySide6.QtCore import QObject, Signal

from engine.errors import VigilError
from engine.loop import AgentLoop, QueueGate
from engine.loop.planner import Observation, close_planner
from engine.models import (AwaitingApproval, Decision, MessageAdded, PlanUpdated, SnapshotTaken, StatusChanged,
                           StepRecorded)

log = logging.getLogger("vigil.gui")


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

    # -- browser -------------------------------------------------------------------------------
    async def start(self, url: str | None) -> bool:
        from engine import launch
        self.busy.emit("Starting Chromium…")
        try:
            self._cm = launch(headless=self.headless, viewport=self.viewport)
            self.browser = await self._cm.__aenter__()
            self.tab = await self.browser.new_tab()
        except VigilError as exc:
            self.error.emit(f"Could not start the browser: {exc.message}")
            self.busy.emit("")
            return False
        self.busy.emit("")
        if url:
            await self.navigate(url)
        return True

    async def navigate(self, url: str) -> None:
        if self.tab is None:
            return
        self.busy.emit(f"Opening {url}…")
        try:
            await self.tab.goto(url)
        except VigilError as exc:
            self.error.emit(exc.message)
        finally:
            self.busy.emit("")
        self.page_changed.emit(self.tab.page.url)
        await self.refresh()

    async def history(self, step: int) -> None:
        if self.tab is None:
            return
        with contextlib.suppress(Exception):
            if step < 0:
                await self.tab.page.go_back(timeout=15000)
            elif step > 0:
                await self.tab.page.go_forward(timeout=15000)
            else:
                await self.tab.page.reload(timeout=30000)
        self.tab.invalidate()
        self.page_changed.emit(self.tab.page.url)
        await self.refresh()

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
        if snap is not self.snapshot:
            self.previous, self.snapshot = self.snapshot, snap
            self.snapshot_changed.emit(snap, self.previous)
        return snap

    # -- the supervised loop ----------------------------------------------------------------------
    def running(self) -> bool:
        return self.run_task_handle is not None and not self.run_task_handle.done()

    async def run_task(self, task: str, planner: str, policy: str) -> None:
        from engine.planners.registry import make_planner
        if self.tab is None or self.running():
            return
        try:
            self.planner = make_planner(planner, base_url=self.settings.get("base_url") or None,
                                        model=self.settings.get("model") or None,
                                        api_key=self.settings.get("api_key") or None,
                                        backend_url=self.settings.get("backend_url") or None)
        except VigilError as exc:
            self.error.emit(f"{exc.message} Open Settings to fill it in.")
            return
        self.gate = QueueGate()
        self.loop = AgentLoop(self.tab, self.planner, gate=self.gate, policy=policy)
        self.loop.bus.subscribe(self._on_event)
        self.run_task_handle = asyncio.ensure_future(self._run(task))

    async def _run(self, task: str) -> None:
        try:
            result = await self.loop.run(task)
            self.status.emit(result.status, "finished", result.reason or result.answer or "")
        finally:
            await close_planner(self.planner)
            self.request_done.emit()
            await self.refresh()

    def set_policy(self, policy: str) -> None:
        if self.loop is not None:
            self.loop.policy = policy

    def decide(self, decision: Decision) -> None:
        if self.gate is not None:
            self.gate.submit(decision)
            self.request_done.emit()

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

    def _on_event(self, ev) -> None:
        if isinstance(ev, MessageAdded):
            self.message.emit(ev.message)
        elif isinstance(ev, PlanUpdated):
            self.plan_changed.emit(ev.plan)
        elif isinstance(ev, StepRecorded):
            self.record.emit(ev.record)
            if ev.record.result is not None:
                asyncio.ensure_future(self._picture(ev.record.index))
        elif isinstance(ev, AwaitingApproval):
            self.request.emit(ev.request)
        elif isinstance(ev, StatusChanged):
            self.status.emit(ev.status, ev.state, ev.detail)
        elif isinstance(ev, SnapshotTaken):  # actions and verifications are shown with the step record
            snap = getattr(self.tab, "_snapshot", None)
            if snap is not None and snap is not self.snapshot:
                self.previous, self.snapshot = self.snapshot, snap
                self.snapshot_changed.emit(snap, self.previous)

    async def _picture(self, index: int) -> None:
        """The page right after a step, with the Set-of-Mark overlay of the snapshot taken then."""
        from engine.vision.screenshot import capture_screenshot
        from engine.vision.som import draw_som
        tab, snap = self.tab, getattr(self.tab, "_snapshot", None)
        if tab is None or snap is None:
            return
        try:
            shot = await capture_screenshot(tab)
            res = draw_som(shot.image(), snap, scale=shot.scale)
            self.step_picture.emit(index, res.png(), shot.phash)
        except Exception as exc:  # a missing picture never disturbs the run
            log.debug("step picture failed: %s", exc)

    # -- shutdown ------------------------------------------------------------------------------
    async def shutdown(self) -> None:
        """Stop the loop, then close the browser (the window stops its screencast first)."""
        t0 = time.monotonic()
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
        log.debug("shut down in %.0f ms", (time.monotonic() - t0) * 1000)
