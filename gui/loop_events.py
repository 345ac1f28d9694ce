"""The supervised loop's events, as the window hears them (a part of `Supervisor`): one handler per event
type, each passing it on as a Qt signal. Actions and verifications show with the step record; each recorded
step's after-screenshot is drawn with its Set-of-Mark off the UI thread (`step_picture`)."""

from __future__ import annotations

import asyncio
import io
import logging
from typing import Any

from engine.loop.person_steps import PersonSteps
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

log = logging.getLogger("vigil.gui")


class LoopEvents:
    """Mixed into `Supervisor` (its signals, tab, recorder and `_publish` are used here)."""

    _handlers: dict[type, Any]
    tab: Any
    snapshot: Any
    recorder: Any
    person: PersonSteps | None
    _person_feed: asyncio.Future | None
    loop_state: str
    message: Any
    plan_changed: Any
    record: Any
    request: Any
    status: Any
    step_picture: Any

    def _event_handlers(self) -> dict[type, Any]:
        """The handler of each event type the window listens to."""
        return {MessageAdded: self._on_message, PlanUpdated: self._on_plan, StepRecorded: self._on_step_recorded,
                StepPictureTaken: self._on_step_picture,
                AwaitingApproval: self._on_awaiting, StatusChanged: self._on_status,
                SnapshotTaken: self._on_snapshot_taken}

    def _on_event(self, ev: LoopEvent) -> None:
        handler = self._handlers.get(type(ev))
        if handler is not None:
            handler(ev)

    def _on_message(self, ev: MessageAdded) -> None:
        self.message.emit(ev.message)

    def _on_plan(self, ev: PlanUpdated) -> None:
        self.plan_changed.emit(ev.plan)

    def _on_step_recorded(self, ev: StepRecorded) -> None:
        self.record.emit(ev.record)
        a = ev.artifacts
        if ev.record.result is not None and a is not None and a.screenshot_after:
            asyncio.ensure_future(self._marked(ev.record.index, a.screenshot_after, a.snapshot_after,
                                               ev.record.screenshot_after or ""))
        if self.recorder is not None:  # the recorder hears the step after us: look once it has
            asyncio.get_running_loop().call_soon(self._report_recorder)

    def _on_step_picture(self, ev: StepPictureTaken) -> None:  # the after picture, taken after its record
        a = ev.artifacts
        if a is not None and a.screenshot_after:
            asyncio.ensure_future(self._marked(ev.step_index, a.screenshot_after, a.snapshot_after,
                                               ev.screenshot_after))

    def _on_awaiting(self, ev: AwaitingApproval) -> None:
        tab = self.tab
        self.person = PersonSteps(lambda: tab.latest_snapshot if tab is not None else None)
        self._person_feed = None
        self.request.emit(ev.request)

    def _on_status(self, ev: StatusChanged) -> None:
        self.loop_state = ev.state
        self.status.emit(ev.status, ev.state, ev.detail)
        self._resize_if_waiting()

    def _on_snapshot_taken(self, ev: SnapshotTaken) -> None:
        snap = self.tab.latest_snapshot if self.tab is not None else None
        if snap is not None and snap is not self.snapshot:
            self._publish(snap)

    async def _marked(self, index: int, jpeg: bytes, snap, phash: str) -> None:
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
            self.step_picture.emit(index, png, h)
        except Exception as exc:  # a missing picture never disturbs the run
            log.debug("step picture failed: %s", exc)
