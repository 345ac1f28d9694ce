"""The planner protocol: what every planner (scripted, offline, model-backed, backend) implements.

A planner sees one `Observation` per cycle and proposes one step. It is told what became of its
previous proposal through `last_outcome`, `last_result` and `feedback`, so it can advance, retry,
re-plan or give up. Planners never act on the page themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from engine.loop.driver import PageDriver
from engine.models import ActionResult, PageEvent, Plan, ProposedStep, StepRecord
from engine.models.browsing import TabInfo
from engine.snapshot.dom_snapshot import DomSnapshot

Outcome = Literal["completed", "failed", "skipped", "rejected", "taken_over", "stale"]
"""What became of the previous proposal:
- `completed` — it ran (its verification, if any, in `last_result`);
- `failed` — it ran and failed, or its target never appeared (`last_result` says why);
- `skipped` — the person skipped it; nothing ran;
- `rejected` — the person rejected it; `feedback` holds their reason;
- `taken_over` — the person did it their own way (an action of theirs ran, or they acted in the
  page directly); `feedback` says what they did;
- `stale` — the page changed while it waited for approval (its target is gone or changed);
  nothing ran, propose again from the new snapshot."""


@dataclass
class Observation:
    """Everything a planner sees before proposing a step."""

    task: str
    step_index: int
    snapshot: DomSnapshot
    url: str
    recent_events: list[PageEvent] = field(default_factory=list)
    last_result: ActionResult | None = None
    history: list[StepRecord] = field(default_factory=list)
    feedback: str | None = None
    plan: Plan | None = None
    last_outcome: Outcome | None = None   # None on the first proposal
    # the page itself, for a planner that asks for more than the snapshot (a screenshot); None when the
    # observation is built without one (a one-off grounding, a test)
    page: PageDriver | None = None
    # the browser's open tabs (index, title, URL, which is active), when the page is a tab of a browser
    tabs: list[TabInfo] = field(default_factory=list)


@runtime_checkable
class Planner(Protocol):
    """Proposes one step per observation. An optional `async def aclose()` releases resources
    (its owner calls it; the loop does not)."""

    async def propose(self, obs: Observation) -> ProposedStep:
        ...


async def close_planner(planner: object) -> None:
    """Call the planner's `aclose()` when it has one."""
    fn = getattr(planner, "aclose", None)
    if fn is not None:
        await fn()
