"""PageDriver: exactly what the observe–act loop (and a planner asking for a picture) needs of a page.

`engine.Tab` is the real one. Anything else with these members can stand in for it — the tests drive
the loop's decisions on a page made of stored snapshots (`tests/support/fake_page.py`), in milliseconds and
without a browser."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from engine.models import Action, ActionResult, OutcomeLike, PageEvent
from engine.models.effect import StepEffect
from engine.observe.stability import StabilityConfig, StabilityResult
from engine.snapshot.dom_snapshot import DomSnapshot
from engine.vision.screenshot import Screenshot


@runtime_checkable
class PageDriver(Protocol):
    @property
    def url(self) -> str:
        """The page's address now."""
        ...

    def check_alive(self) -> None:
        """Raise TabCrashedError / BrowserClosedError when the page is gone."""
        ...

    async def wait_stable(self, config: StabilityConfig | None = None, *, since: float | None = None
                          ) -> StabilityResult:
        """Wait until the page settles (or a cap passes)."""
        ...

    async def snapshot(self, *, force: bool = False, max_nodes: int | None = None,
                       timeout: float = 30.0) -> DomSnapshot:
        """The current snapshot (reused while the page is unchanged)."""
        ...

    async def act(self, action: Action, expect: OutcomeLike = None) -> ActionResult:
        """Run one action on a node ID and verify it; page problems come back in the result."""
        ...

    async def recent_events(self, max_age_ms: int = 10_000) -> list[PageEvent]:
        """Meaningful page changes of the last `max_age_ms`."""
        ...

    async def screenshot(self, *, max_width: int = 1024, quality: int = 70, full: bool = False) -> Screenshot:
        """The viewport as a JPEG payload with its hash; ScreenshotError when it cannot be taken."""
        ...

    async def effect(self, action: Action, snap: DomSnapshot) -> StepEffect | None:
        """What the action (a node ID of `snap`) will do, computed in the page before it runs; None when
        unknown (never an error: a page that would not say is judged on the step's target alone)."""
        ...

    def remember_secret(self, value: str) -> None:
        """A secret was typed: no picture of this page may show it from now on."""
        ...
