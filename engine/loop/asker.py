"""`GateAsker`: the one way a run puts a question to its approval gate.

Three things are asked: a step (`AgentLoop`), a dialog the page raised (`engine.loop.browsing.PageWatch`),
and what the browser holds until someone decides — the page leaving the site, a download
(`engine.loop.holds.BrowserHolds`). They are asked one at a time: a dialog that opens while a step waits
is asked after it, never answered by the decision meant for the step (and the other way round). While a
question is open the run's state says it waits at the gate; a stop asked for meanwhile answers it.
"""

from __future__ import annotations

import asyncio
import logging

from engine.errors import ErrorCode, VigilError
from engine.loop.events import EventBus
from engine.loop.gates import ApprovalGate, person_present
from engine.loop.journal import RunJournal
from engine.loop.stopping import Stopped, StopSignal
from engine.models import ApprovalRequest, AwaitingApproval, Decision
from engine.models.loop import Policy

log = logging.getLogger("vigil.loop")


class GateAsker:
    """A run's questions to `gate` under `policy` (which a window may change during the run). `journal` is the
    run's (a new one for each run): its state says when the run waits at the gate."""

    def __init__(self, gate: ApprovalGate, policy: Policy, bus: EventBus, stopping: StopSignal) -> None:
        self.gate, self.policy, self.bus, self.stopping = gate, policy, bus, stopping
        self.journal = RunJournal(bus)
        self.lock = asyncio.Lock()  # one question at a time (steps, dialogs, what the browser holds)
        self.asking_page = 0        # questions about what the page did (dialogs, held exits) open now

    @property
    def person_present(self) -> bool:
        """Does a person answer the gate (`engine.loop.gates.person_present`)?"""
        return person_present(self.gate)

    @property
    def asking_about_step(self) -> bool:
        """A person is being asked about a step now (not about something the page did)."""
        return self.person_present and self.lock.locked() and not self.asking_page

    async def ask(self, request: ApprovalRequest) -> Decision:
        """The gate's decision on `request`, once no other question is open."""
        async with self.lock:
            return await self._ask_now(request)

    async def ask_about_page(self, request: ApprovalRequest) -> Decision:
        """A question about what the page did (a dialog, a held exit or download), asked as a step is; the
        run is acting again after it, and a stop answered to it stops the run."""
        self.asking_page += 1
        try:
            decision = await self.ask(request)
        finally:
            self.asking_page -= 1
        self.journal.set_state("acting")
        if decision.kind == "stop":
            self.stopping.request()
        return decision

    async def _ask_now(self, request: ApprovalRequest) -> Decision:
        self.journal.set_state("awaiting_approval")
        self.bus.publish(AwaitingApproval(request=request))
        try:
            d = await self.stopping.until(self.gate.decide(request))
        except Stopped:
            return Decision(kind="stop", reason="Stop requested while waiting for approval.")
        except Exception as exc:
            log.exception("approval gate failed")
            raise VigilError(f"The approval gate failed: {type(exc).__name__}: {exc}",
                             code=ErrorCode.GATE_FAILED) from None
        if not isinstance(d, Decision):
            raise VigilError(f"The approval gate returned {type(d).__name__}, not a Decision.",
                             code=ErrorCode.GATE_FAILED)
        return d
