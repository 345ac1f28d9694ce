"""ActionContext: what one action works with (the page and its snapshots) and what it learns on its way
(the element it acts on, a recovery, its message and extras) — passed to every step of the action."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.actions.locate import Target
from engine.browser.target import PageTarget
from engine.snapshot.cache import SnapshotCache
from engine.snapshot.dom_snapshot import DomSnapshot


@dataclass
class ActionContext:
    page: PageTarget
    snapshots: SnapshotCache
    target: Target | None = None          # the element acted on, once located
    snap: DomSnapshot | None = None       # the snapshot it was located in
    recovered_from: str | None = None     # the stale ID it was recovered from (ghost match)
    message: str = ""
    data: dict[str, Any] = field(default_factory=dict)
    point: tuple[float, float] | None = None  # where the pointer went, top-level CSS px
    masked: bool = False                  # the target holds a secret: never echo typed text
    mark: dict | None = None              # the page just before the action's last step (see PreState.mark)

    def element(self) -> Target:
        """The located element (node actions only: the frame locates it before any body runs)."""
        if self.target is None:
            raise RuntimeError("this action has no element: it was not located first")
        return self.target

    def located_snapshot(self) -> DomSnapshot:
        if self.snap is None:
            raise RuntimeError("this action has no snapshot: it was not located first")
        return self.snap
