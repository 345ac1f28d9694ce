"""RunJournal: the bookkeeping of one run — chat messages, the plan, step records, status — each
change published on the event bus as it happens."""

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
        self.plan: Plan | None = None
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
    def apply_proposal(self, p: ProposedStep) -> None:
        """Adopt the proposal's plan update (keeping the status of unchanged steps) and mark the
        step it works on active."""
        changed = False
        if p.plan is not None and (self.plan is None or [s.description for s in self.plan.steps] != p.plan):
            old = {(s.index, s.description): s for s in self.plan.steps} if self.plan else {}
            new = Plan.from_descriptions(p.plan, current=p.plan_index or 0)
            for s in new.steps:
                prev = old.get((s.index, s.description))
                if prev is not None:
                    s.status, s.reasoning, s.expectedOutcome = prev.status, prev.reasoning, prev.expectedOutcome
                elif old and s.status == "completed":
                    s.status = "pending"  # a re-plan does not mark new steps done
            self.plan = new
            changed = True
        terminal = p.action.name in ("finish", "fail")
        working_on = self.plan is not None and p.plan_index is not None and 0 <= p.plan_index < len(self.plan.steps)
        if self.plan is not None and p.plan_index is not None and working_on and not terminal:
            st = self.plan.steps[p.plan_index]
            self.plan.currentStepIndex = p.plan_index
            st.status = "active"
            st.reasoning = p.thought or st.reasoning
            st.expectedOutcome = p.expected_outcome.describe() if p.expected_outcome else st.expectedOutcome
            changed = True
        if changed:
            self.publish_plan()

    def mark_plan(self, index: int | None, status: StepStatus | None, note: str | None = None) -> None:
        if self.plan is None or index is None or not 0 <= index < len(self.plan.steps):
            return
        st = self.plan.steps[index]
        if status is not None:
            st.status = status
        if note:
            st.reasoning = note
        self.publish_plan()

    def publish_plan(self) -> None:
        if self.plan is not None:  # a plan step may quote a secret ("Type \"…\" into Password")
            self.bus.publish(PlanUpdated(plan=scrub(self.plan.model_copy(deep=True), self.secrets)))

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
        if self.plan is not None:
            self.plan = scrub(self.plan, self.secrets)
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
