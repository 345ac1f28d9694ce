"""The window's live view (a part of `Supervisor`: `sup.live`): between steps the overlay, the tree and the
status bar follow the page. The page says when it changed (engine.observe.live: a MutationObserver and scroll,
resize, input and transition-end listeners in an isolated world, reported through a CDP binding); a snapshot is
taken then, throttled, and shown like any other; `page_ahead` says while the snapshot shown is older than the
page.

When it runs: while no run is on, and while a run's step waits for the person (the page is theirs then:
they may act in it, and the step's target outline follows its element); never while the loop observes,
plans, acts or verifies (the loop owns the page then, and shows its own snapshots), nor while a JavaScript
dialog stops the page or a resize is applied (it takes its own snapshot)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Protocol

from PySide6.QtCore import SignalInstance

from engine.observe.live import LiveFollower
from engine.snapshot.dom_snapshot import DomSnapshot
from engine.tab import Tab


class LiveHost(Protocol):
    """What the live view uses of its supervisor."""

    page_ahead: SignalInstance

    @property
    def tab(self) -> Tab | None: ...
    @property
    def loop_state(self) -> str: ...
    @property
    def resizing(self) -> bool: ...
    def running(self) -> bool: ...
    def publish(self, snap: DomSnapshot) -> None: ...


class LiveView:
    """`LiveView(sup)`: follows the shown tab (`follow(tab)`) with a `LiveFollower` (`follower`, None while
    off or without a tab)."""

    def __init__(self, sup: LiveHost) -> None:
        self.sup = sup
        self.follower: LiveFollower | None = None
        self.enabled = True

    def follow(self, tab: Tab | None) -> None:
        """Follow this tab's changes (the one shown); the last tab's follower stops."""
        old, self.follower = self.follower, None
        if old is not None:
            asyncio.ensure_future(old.stop())
        if tab is None or not self.enabled:
            return
        self.follower = LiveFollower(tab.target, tab.snapshot, may_run=self.may_run, on_change=self._changed,
                                     on_snapshot=lambda snap, _cost: self._show(tab, snap))
        self.follower.start()

    def set_on(self, on: bool) -> None:
        """Turn the live view on or off (off: the picture changes only with Snapshot and the loop's steps)."""
        self.enabled = bool(on)
        self.follow(self.sup.tab if on else None)
        if not on:
            self.sup.page_ahead.emit(0.0)

    def may_run(self) -> bool:
        """A live snapshot may be taken now: no step runs (the loop owns the page while it observes, plans,
        acts and verifies; a step waiting for the person is the person's page), no JavaScript dialog stops
        the page, no resize is being applied (it takes its own snapshot)."""
        tab = self.sup.tab
        if tab is None or tab.pending_dialog is not None or self.sup.resizing:
            return False
        return not self.sup.running() or self.sup.loop_state in ("awaiting_approval", "finished")

    def ahead_since(self) -> float:
        """When the page changed after the snapshot just published (monotonic), or 0.0: it is caught up.
        Asked as a snapshot is published; a caught-up follower forgets the change it reported."""
        live = self.follower
        if live is None or not live.watch.pending():
            if live is not None:
                live.changed_at = None
            return 0.0
        return live.changed_at or live.snapshot_at or time.monotonic()  # it changed again meanwhile

    async def stop(self) -> None:
        """Stop following for good (the window closes)."""
        self.enabled = False
        live, self.follower = self.follower, None
        if live is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(live.stop(), 5)

    def _changed(self, _bits: int, at: float) -> None:
        self.sup.page_ahead.emit(at)

    def _show(self, tab: Tab, snap: DomSnapshot) -> None:
        if tab is self.sup.tab and self.may_run():
            self.sup.publish(snap)
