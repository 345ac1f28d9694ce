"""The window's live view (a part of `Supervisor`): between steps the overlay, the tree and the status bar
follow the page. The page says when it changed (engine.observe.live: a MutationObserver and scroll, resize,
input and transition-end listeners in an isolated world, reported through a CDP binding); a snapshot is taken
then, throttled, and shown like any other; `page_ahead` says while the snapshot shown is older than the page.

When it runs: while no run is on, and while a run's step waits for the person (the page is theirs then:
they may act in it, and the step's target outline follows its element); never while the loop observes,
plans, acts or verifies (the loop owns the page then, and shows its own snapshots), nor while a JavaScript
dialog stops the page or a resize is applied (it takes its own snapshot)."""

from __future__ import annotations

import asyncio
from typing import Any

from engine.observe.live import LiveFollower


class LiveView:
    """Mixed into `Supervisor` (its signals, tab, loop state and `_publish` are used here)."""

    tab: Any
    live: LiveFollower | None
    live_enabled: bool
    loop_state: str
    _resizing: bool
    page_ahead: Any

    def _follow(self, tab) -> None:
        """Follow this tab's changes (the one shown); the last tab's follower stops."""
        old, self.live = self.live, None
        if old is not None:
            asyncio.ensure_future(old.stop())
        if tab is None or not self.live_enabled:
            return
        self.live = LiveFollower(tab.target, tab.snapshot, may_run=self.live_may_run, on_change=self._live_changed,
                                 on_snapshot=lambda snap, _cost: self._live_show(tab, snap))
        self.live.start()

    def set_live(self, on: bool) -> None:
        """Turn the live view on or off (off: the picture changes only with Snapshot and the loop's steps)."""
        self.live_enabled = bool(on)
        self._follow(self.tab if on else None)
        if not on:
            self.page_ahead.emit(0.0)

    def live_may_run(self) -> bool:
        """A live snapshot may be taken now: no step runs (the loop owns the page while it observes, plans,
        acts and verifies; a step waiting for the person is the person's page), no JavaScript dialog stops
        the page, no resize is being applied (it takes its own snapshot)."""
        tab = self.tab
        if tab is None or tab.pending_dialog is not None or self._resizing:
            return False
        return not self.running() or self.loop_state in ("awaiting_approval", "finished")

    def _live_changed(self, _bits: int, at: float) -> None:
        self.page_ahead.emit(at)

    def _live_show(self, tab, snap) -> None:
        if tab is self.tab and self.live_may_run():
            self._publish(snap)
