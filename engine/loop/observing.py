"""`PageObserver`: what the loop sees of the page it works on — a settled, fresh snapshot at each cycle
(published as `SnapshotTaken`, with the node IDs new since the last one), a step's target waited for until
it appears, the page's recent events, and where the page is."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from engine.errors import BrowserClosedError, TabCrashedError, UnknownNodeError, VigilError
from engine.loop.driver import PageDriver
from engine.loop.events import EventBus
from engine.loop.grounding import resolve_target
from engine.loop.pictures import StepPictures
from engine.loop.stopping import StopSignal
from engine.loop.timings import ms_since
from engine.models import Action, PageEvent, SnapshotTaken, StepEffect, TargetQuery
from engine.snapshot.dom_snapshot import DomSnapshot
from engine.snapshot.vnode import VirtualNode

log = logging.getLogger("vigil.loop")


class PageObserver:
    """Observes `page` (the page the loop works on now) for one loop; `pictures` knows whether the last step
    left it settled."""

    def __init__(self, page: Callable[[], PageDriver], bus: EventBus, pictures: StepPictures,
                 stopping: StopSignal) -> None:
        self.page, self.bus, self.pictures, self.stopping = page, bus, pictures, stopping
        self.last: DomSnapshot | None = None  # the last snapshot published

    def forget(self) -> None:
        """Another run, or another tab: the last snapshot's IDs are not this page's."""
        self.last = None

    async def observe(self, index: int) -> DomSnapshot:
        """The page once it is settled (not waited for again when the last step left it settled and unchanged)."""
        page = self.page()
        page.check_alive()
        t = time.monotonic()
        left = self.pictures.settled_snapshot()
        if left is not None:
            # the last step ended on a settled page and took this snapshot after it: when the page still
            # has that very snapshot (nothing changed since), it is still settled and needs no wait
            snap = await page.snapshot()
            if snap is left:
                self.publish(snap, index, ms_since(t))
                return snap
        try:
            await page.wait_stable(since=0.0)  # quiet measured from the last change, not from now
        except (TabCrashedError, BrowserClosedError):
            raise
        except VigilError as exc:  # an unsettled page is still observed
            log.debug("stability wait failed: %s", exc)
        snap = await page.snapshot()
        self.publish(snap, index, ms_since(t))
        return snap

    async def now(self, index: int) -> DomSnapshot:
        """The page as it is now (a new snapshot only when it changed), published."""
        snap = await self.page().snapshot()
        self.publish(snap, index, 0)
        return snap

    def publish(self, snap: DomSnapshot, index: int, ms: float) -> None:
        """`SnapshotTaken` for a snapshot not published yet, with the node IDs new since the last one."""
        if snap is self.last:
            return
        new = sorted(snap.new_ids_since(self.last), key=lambda s: (len(s), s))
        self.last = snap
        self.bus.publish(SnapshotTaken(step_index=index, url=snap.url, nodes=len(snap),
                                       interactive=snap.stats.interactive,
                                       capture_ms=snap.stats.timings_ms.get("capture", ms),
                                       tokens=snap.stats.tokens.get("semantic"), new_ids=new))

    async def ground(self, target: str | TargetQuery, snap: DomSnapshot, index: int,
                     timeout_ms: int) -> tuple[VirtualNode, DomSnapshot]:
        """Resolve the target, re-observing until it appears or `timeout_ms` passes (UnknownNodeError)."""
        deadline = time.monotonic() + timeout_ms / 1000
        while True:
            try:
                return resolve_target(snap, target), snap
            except UnknownNodeError:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise
            await self.stopping.until(asyncio.sleep(min(0.25, left)))
            snap = await self.now(index)

    async def effect(self, action: Action, node: VirtualNode | None, snap: DomSnapshot) -> StepEffect | None:
        """What `action` on `node` (of `snap`) will do, computed in the page before it runs; None when unknown."""
        if node is None and (action.target is not None or action.name != "press"):
            return None
        run = action.model_copy(update={"target": node.node_id}) if node is not None else action
        return await self.page().effect(run, snap)  # (None, never an error, when the page would not say)

    async def events(self, max_age_ms: int) -> list[PageEvent]:
        """The page's meaningful changes of the last `max_age_ms` (none when they cannot be read)."""
        try:
            return await self.page().recent_events(max_age_ms=max_age_ms)
        except VigilError as exc:
            log.debug("could not read page events: %s", exc)
            return []

    def url(self) -> str:
        """Where the page is; where it last was when it is gone."""
        try:
            return self.page().url
        except Exception:  # the page is gone: where it last was
            return self.last.url if self.last is not None else ""
