"""The planner protocol: what every planner (scripted, offline, model-backed, backend) implements.

A planner sees one `Observation` per cycle and proposes one step. It is told what became of its
previous proposal through `last_outcome`, `last_result` and `feedback`, so it can advance, retry,
re-plan or give up. Planners never act on the page themselves.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from engine.errors import ErrorCode, VigilError
from engine.loop.driver import PageDriver
from engine.loop.stopping import Stopped, StopSignal
from engine.models import ActionResult, PageEvent, Plan, ProposedStep, StepRecord
from engine.models.browsing import TabInfo
from engine.snapshot.dom_snapshot import DomSnapshot

log = logging.getLogger("vigil.loop")

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


async def ask_planner(planner: Planner, obs: Observation, stopping: StopSignal) -> ProposedStep:
    """The planner's proposal, unless a stop comes first (Stopped); a planner that fails or answers something
    else than a `ProposedStep` is a VigilError (PLANNER_FAILED)."""
    try:
        p = await stopping.until(planner.propose(obs))
    except (Stopped, VigilError):
        raise
    except Exception as exc:
        log.exception("planner failed")
        raise VigilError(f"The planner failed: {type(exc).__name__}: {exc}",
                         code=ErrorCode.PLANNER_FAILED) from None
    if not isinstance(p, ProposedStep):
        raise VigilError(f"The planner returned {type(p).__name__}, not a ProposedStep.",
                         code=ErrorCode.PLANNER_FAILED)
    return p


async def close_planner(planner: object) -> None:
    """Call the planner's `aclose()` when it has one."""
    fn = getattr(planner, "aclose", None)
    if fn is not None:
        await fn()
