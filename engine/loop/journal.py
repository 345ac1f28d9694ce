"""RunJournal: the bookkeeping of one run — chat messages, the plan, step records, status — each
change published on the event bus as it happens.

The plan is never changed in place once it is published: a step's new status makes a new `Plan` that shares
the other steps (copy on write). So a plan update is published as it is, without a deep copy, and what a
subscriber holds (the store's background writer, a window) never changes under it; the plan is kept scrubbed
of the run's secrets, so publishing it does not walk it either. A step of a long plan costs what a step of a
short one does (issue 38)."""

from __future__ import annotations

import time
from typing import Any, Literal

from engine.loop.events import EventBus
from engine.models import (
    ChatMessage,
    MessageAdded,
    Plan,
    PlanUpdated,
    ProposedStep,
    StatusChanged,
    StepArtifacts,
    StepRecord,
    StepRecorded,
)
from engine.models.loop import LoopState, StepStatus, TaskStatus
from engine.secret_values import scrub


class RunJournal:
    def __init__(self, bus: EventBus) -> None:
        self.bus = bus
        self.messages: list[ChatMessage] = []
        self.records: list[StepRecord] = []
        self._plan: Plan | None = None
        self.status: TaskStatus = "idle"
        self.state: LoopState = "idle"
        # text typed into password / one-time-code fields this run (memory only): a GET form or a
        # page may echo it into a URL or a message, so everything published is scrubbed of it
        self.secrets: set[str] = set()
        # when the current step began (its observation): each record is stamped with its wall time
        self.step_started: float | None = None

    # -- status ------------------------------------------------------------------------------
    def set_state(self, state: LoopState, status: TaskStatus | None = None, detail: str = "") -> None:
        """Publish StatusChanged when the task status or the loop state changes."""
        status = status or self.status
        if state == self.state and status == self.status and not detail:
            return
        self.state, self.status = state, status
        self.bus.publish(StatusChanged(status=status, state=state, detail=detail))

    # -- chat --------------------------------------------------------------------------------
    def message(self, role: Literal["user", "assistant", "system"], content: str, **fields: Any) -> ChatMessage:
        """Append a chat message with the next sequence number and publish it."""
        msg = scrub(ChatMessage(role=role, content=content, sequenceNumber=len(self.messages), **fields),
                          self.secrets)
        self.messages.append(msg)
        self.bus.publish(MessageAdded(message=msg))
        return msg

    def update_message(self, msg: ChatMessage, **changes: Any) -> ChatMessage:
        """Replace a message in place (same messageId and sequence number) and publish it again;
        a UI updates the turn it already shows."""
        new = scrub(msg.model_copy(update=changes), self.secrets)
        self.messages[msg.sequenceNumber] = new
        self.bus.publish(MessageAdded(message=new))
        return new

    # -- plan --------------------------------------------------------------------------------
    @property
    def plan(self) -> Plan | None:
        """The current plan: read it, never change it in place (it may be published already)."""
        return self._plan

    @plan.setter
    def plan(self, plan: Plan | None) -> None:
        self._plan = scrub(plan, self.secrets) if plan is not None else None

    def apply_proposal(self, p: ProposedStep) -> None:
        """Adopt the proposal's plan update (keeping the status of unchanged steps) and mark the
        step it works on active."""
        changed = False
        update = scrub(p.plan, self.secrets) if p.plan is not None else None  # as the kept plan reads
        if update is not None and not self._plan_reads(update):
            old = {(s.index, s.description): s for s in self._plan.steps} if self._plan else {}
            new = Plan.from_descriptions(update, current=p.plan_index or 0)
            for s in new.steps:
                prev = old.get((s.index, s.description))
                if prev is not None:
                    s.status, s.reasoning, s.expectedOutcome = prev.status, prev.reasoning, prev.expectedOutcome
                elif old and s.status == "completed":
                    s.status = "pending"  # a re-plan does not mark new steps done
            self.plan = new
            changed = True
        terminal = p.action.name in ("finish", "fail")
        plan = self._plan
        working_on = plan is not None and p.plan_index is not None and 0 <= p.plan_index < len(plan.steps)
        if plan is not None and p.plan_index is not None and working_on and not terminal:
            st = plan.steps[p.plan_index]
            self._change_step(p.plan_index, current=True, status="active", reasoning=p.thought or st.reasoning,
                              expectedOutcome=p.expected_outcome.describe() if p.expected_outcome
                              else st.expectedOutcome)
            changed = True
        if changed:
            self.publish_plan()

    def _plan_reads(self, descriptions: list[str]) -> bool:
        """Whether the current plan's steps are these descriptions."""
        steps = self._plan.steps if self._plan is not None else None
        return (steps is not None and len(steps) == len(descriptions)
                and all(s.description == d for s, d in zip(steps, descriptions, strict=True)))

    def _change_step(self, index: int, *, current: bool = False, **changes: Any) -> None:
        """A new plan with step `index` changed (and made the current step): the published plan stays as it was."""
        plan = self._plan
        assert plan is not None
        steps = list(plan.steps)  # the other steps are shared: only this one is copied
        steps[index] = scrub(steps[index].model_copy(update=changes), self.secrets)
        update: dict[str, Any] = {"steps": steps}
        if current:
            update["currentStepIndex"] = index
        self._plan = plan.model_copy(update=update)

    def mark_plan(self, index: int | None, status: StepStatus | None, note: str | None = None) -> None:
        if self._plan is None or index is None or not 0 <= index < len(self._plan.steps):
            return
        changes: dict[str, Any] = {}
        if status is not None:
            changes["status"] = status
        if note:
            changes["reasoning"] = note
        if changes:
            self._change_step(index, **changes)
        self.publish_plan()

    def publish_plan(self) -> None:
        if self._plan is not None:  # (kept scrubbed: a plan step may quote a secret, "Type \"…\" into Password")
            self.bus.publish(PlanUpdated(plan=self._plan))

    # -- secrets -----------------------------------------------------------------------------
    def learn_secret(self, text: str) -> None:
        """Remember text typed into a secret field; what was already shown with it (the person's task
        in the chat, a plan step that quoted it) is published again without it, so a window replaces it."""
        if not text or text in self.secrets:
            return
        self.secrets.add(text)
        for msg in list(self.messages):
            if scrub(msg, self.secrets) is not msg:
                self.update_message(msg)
        if self._plan is not None:
            self.plan = self._plan  # scrubbed again, now of this secret too
            self.publish_plan()

    # -- steps -------------------------------------------------------------------------------
    def record(self, rec: StepRecord, artifacts: StepArtifacts | None = None) -> StepRecord:
        """Keep the record and publish it; synchronous subscribers (the session store) have finished
        with it when this returns, so a step is stored before the next one begins."""
        if self.step_started is not None:
            rec.timings_ms["total"] = round((time.monotonic() - self.step_started) * 1000, 1)
        rec = scrub(rec, self.secrets)
        self.records.append(rec)
        self.bus.publish(StepRecorded(record=rec, artifacts=artifacts))
        return rec
