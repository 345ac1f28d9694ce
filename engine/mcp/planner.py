"""The MCP client as a planner: each action tool call is one step of an `AgentLoop`.

The loop calls `propose()`; it waits for the next tool call's step. The tool call that proposed a
step is answered at the loop's next `propose()` — by then the step has been decided, run, verified
and recorded (its `StepRecorded` event published, so the session store holds it; an after picture
still being taken then follows it into the store), and the loop has observed the page again, so the
answer carries the page as the next step will see it. A run that
ends (a crashed tab, a person's stop, `finish`) answers the call it was working on from its
`RunResult`, and every call still queued with the reason.

Gates for an MCP server without a person in reach are here too (`NoPersonGate`).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from engine.models import ApprovalRequest, Decision, ProposedStep, RunResult, StepRecord

if TYPE_CHECKING:
    from engine.loop.planner import Observation
    from engine.snapshot.dom_snapshot import DomSnapshot

log = logging.getLogger("vigil.mcp")

StepStatus = Literal["completed", "failed", "skipped", "rejected", "taken_over", "stale", "ended"]


@dataclass
class StepOutcome:
    """What became of one tool call's step."""

    status: StepStatus
    records: list[StepRecord] = field(default_factory=list)  # what the loop recorded for it (usually one)
    feedback: str | None = None               # the loop's words to the planner (a person's reason, why not run)
    snapshot: DomSnapshot | None = None     # the page after the step, as the loop observed it
    run: RunResult | None = None              # set when the run ended with (or before) this step
    before: DomSnapshot | None = None         # the page the step was proposed on

    @property
    def record(self) -> StepRecord | None:
        return self.records[-1] if self.records else None


@dataclass
class _Call:
    proposal: ProposedStep
    future: asyncio.Future
    index: int | None = None  # the loop's step index, once proposed
    withdrawn: bool = False   # the client cancelled the call before the loop took it: it never runs
    before: DomSnapshot | None = None  # the page the loop proposed it on


class ToolCallPlanner:
    """`await planner.submit(proposal)` from a tool call → StepOutcome; the loop's `propose()`
    hands the submitted proposals over one at a time."""

    name = "mcp"

    def __init__(self) -> None:
        self._queue: asyncio.Queue[_Call] = asyncio.Queue()
        self._current: _Call | None = None
        self._idle = asyncio.Event()
        self._idle.set()
        self.ended: RunResult | None = None
        self.last_snapshot: DomSnapshot | None = None

    async def submit(self, proposal: ProposedStep) -> StepOutcome:
        if self.ended is not None:
            return StepOutcome("ended", feedback=_ended_text(self.ended), run=self.ended)
        call = _Call(proposal, asyncio.get_running_loop().create_future())
        self._idle.clear()
        self._queue.put_nowait(call)
        try:
            return await asyncio.shield(call.future)
        except asyncio.CancelledError:
            if call.index is None:
                call.withdrawn = True  # not taken yet: it will not run
            else:  # already proposed: it goes on through the gate and is recorded; `wait_idle` covers it
                log.info("a tool call was cancelled while its step was under way")
            raise

    @property
    def pending(self) -> bool:
        """A step is proposed (waiting for the gate, running) or queued."""
        return not self._idle.is_set()

    async def wait_idle(self) -> None:
        """Until no step is proposed or queued (a step whose caller gave up still runs to its end)."""
        await self._idle.wait()

    async def propose(self, obs: Observation) -> ProposedStep:
        self.last_snapshot = obs.snapshot
        if self._current is not None:
            call, self._current = self._current, None
            status = obs.last_outcome or "failed"
            records = [r for r in obs.history if r.index == call.index]
            _resolve(call, StepOutcome(status, records, obs.feedback, obs.snapshot, before=call.before))
        while True:
            if self._queue.empty():
                self._idle.set()
            call = await self._queue.get()
            if not call.withdrawn:
                break
        self._idle.clear()
        call.index, call.before = obs.step_index, obs.snapshot
        self._current = call
        return call.proposal

    def run_ended(self, result: RunResult, snapshot: DomSnapshot | None = None) -> None:
        """The loop's run is over: answer the call in progress and every queued one."""
        self.ended = result
        why = _ended_text(result)
        if self._current is not None:
            call, self._current = self._current, None
            records = [r for r in result.steps if r.index == call.index]
            _resolve(call, StepOutcome("ended", records, why, snapshot or self.last_snapshot, result,
                                       before=call.before))
        while not self._queue.empty():
            _resolve(self._queue.get_nowait(), StepOutcome("ended", feedback=why, run=result))
        self._idle.set()


def _resolve(call: _Call, outcome: StepOutcome) -> None:
    if not call.future.done():
        call.future.set_result(outcome)


def _ended_text(result: RunResult) -> str:
    if result.status == "success":
        return "The session was closed" + (f": {result.answer}" if result.answer else ".")
    if result.status == "interrupted":
        return f"The run was stopped: {result.reason or 'by request'}"
    return f"The run ended with an error: {result.reason}"


class NoPersonGate:
    """The gate of a server nobody watches (`--approve auto-safe` without a window or terminal): a
    step that needs a person is refused, with the reasons, and nothing runs. What the browser holds
    during a step (a script leaving the site, a download the step was not approved for) is refused too
    (`person_present`)."""

    person_present = False
    PREFIX = "Needs a person's approval ("
    SUFFIX = "), and no person is watching this server"

    def __init__(self) -> None:
        self.requests: list[ApprovalRequest] = []

    async def decide(self, request: ApprovalRequest) -> Decision:
        self.requests.append(request)
        why = "; ".join(request.sensitive_reasons) or "the policy asks for a person"
        return Decision(kind="reject", reason=f"{self.PREFIX}{why}{self.SUFFIX}")

    @classmethod
    def reasons(cls, record: StepRecord) -> str:
        """Why the refused step needed a person (the loop's words, which quote the page)."""
        reason = (record.decision.reason or "") if record.decision is not None else ""
        return reason[len(cls.PREFIX):len(reason) - len(cls.SUFFIX)] if reason.endswith(cls.SUFFIX) else reason

    @classmethod
    def refused(cls, record: StepRecord | None) -> bool:
        """Was this record's step refused by this gate (rather than by a person)?"""
        return (record is not None and record.status == "rejected" and record.decision is not None
                and (record.decision.reason or "").startswith(cls.PREFIX))
