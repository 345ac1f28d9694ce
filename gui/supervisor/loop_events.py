"""The supervised loop's events, as the window hears them (a part of `Supervisor`: `sup.events`): one handler
per event type, each passing it on as a Qt signal. Actions and verifications show with the step record; each
recorded step's after-screenshot is drawn with its Set-of-Mark off the UI thread (`step_picture`)."""

from __future__ import annotations

import asyncio
import io
import logging
from collections.abc import Callable
from typing import Any, Protocol

from PySide6.QtCore import SignalInstance

from engine.models import (
    AwaitingApproval,
    MessageAdded,
    PlanUpdated,
    SnapshotTaken,
    StatusChanged,
    StepPictureTaken,
    StepRecorded,
)
from engine.models.loop import LoopEvent
from engine.snapshot.dom_snapshot import DomSnapshot
from engine.tab import Tab
from gui.supervisor.person_input import PersonInput
from gui.supervisor.recording import SessionRecording

log = logging.getLogger("vigil.gui")


class EventsHost(Protocol):
    """What the loop's events use of their supervisor."""

    message: SignalInstance
    plan_changed: SignalInstance
    record: SignalInstance
    request: SignalInstance
    status: SignalInstance
    step_picture: SignalInstance
    loop_state: str

    @property
    def tab(self) -> Tab | None: ...
    @property
    def snapshot(self) -> DomSnapshot | None: ...
    @property
    def recording(self) -> SessionRecording: ...
    @property
    def person_input(self) -> PersonInput: ...
    def publish(self, snap: DomSnapshot) -> None: ...
    def resize_if_waiting(self) -> None: ...


class LoopEvents:
    """`LoopEvents(sup)`; `on_event` is what a loop's bus is subscribed to."""

    def __init__(self, sup: EventsHost) -> None:
        self.sup = sup
        # the handler of each event type the window listens to
        self._handlers: dict[type, Callable[[Any], None]] = {
            MessageAdded: self._on_message, PlanUpdated: self._on_plan, StepRecorded: self._on_step_recorded,
            StepPictureTaken: self._on_step_picture, AwaitingApproval: self._on_awaiting,
            StatusChanged: self._on_status, SnapshotTaken: self._on_snapshot_taken}

    def on_event(self, ev: LoopEvent) -> None:
        handler = self._handlers.get(type(ev))
        if handler is not None:
            handler(ev)

    def _on_message(self, ev: MessageAdded) -> None:
        self.sup.message.emit(ev.message)

    def _on_plan(self, ev: PlanUpdated) -> None:
        self.sup.plan_changed.emit(ev.plan)

    def _on_step_recorded(self, ev: StepRecorded) -> None:
        self.sup.record.emit(ev.record)
        a = ev.artifacts
        if ev.record.result is not None and a is not None and a.screenshot_after:
            asyncio.ensure_future(self._marked(ev.record.index, a.screenshot_after, a.snapshot_after,
                                               ev.record.screenshot_after or ""))
        if self.sup.recording.recorder is not None:  # the recorder hears the step after us: look once it has
            asyncio.get_running_loop().call_soon(self.sup.recording.report)

    def _on_step_picture(self, ev: StepPictureTaken) -> None:  # the after picture, taken after its record
        a = ev.artifacts
        if a is not None and a.screenshot_after:
            asyncio.ensure_future(self._marked(ev.step_index, a.screenshot_after, a.snapshot_after,
                                               ev.screenshot_after))

    def _on_awaiting(self, ev: AwaitingApproval) -> None:
        self.sup.person_input.begin(self.sup.tab)
        self.sup.request.emit(ev.request)

    def _on_status(self, ev: StatusChanged) -> None:
        self.sup.loop_state = ev.state
        self.sup.status.emit(ev.status, ev.state, ev.detail)
        self.sup.resize_if_waiting()

    def _on_snapshot_taken(self, ev: SnapshotTaken) -> None:
        tab = self.sup.tab
        snap = tab.latest_snapshot if tab is not None else None
        if snap is not None and snap is not self.sup.snapshot:
            self.sup.publish(snap)

    async def _marked(self, index: int, jpeg: bytes, snap: Any, phash: str) -> None:
        """The step's own after-screenshot with the Set-of-Mark of the snapshot taken with it (drawn
        off the UI thread)."""
        def draw() -> tuple[bytes, str]:
            from PIL import Image

            from engine.vision.screenshot import phash_of
            from engine.vision.som import draw_som
            img = Image.open(io.BytesIO(jpeg))
            img.load()
            if snap is None:
                buf = io.BytesIO()
                img.save(buf, format="PNG")
                return buf.getvalue(), phash or phash_of(img)
            return draw_som(img, snap).png(), phash or phash_of(img)
        try:
            png, h = await asyncio.get_running_loop().run_in_executor(None, draw)
            self.sup.step_picture.emit(index, png, h)
        except Exception as exc:  # a missing picture never disturbs the run
            log.debug("step picture failed: %s", exc)
