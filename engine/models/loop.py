"""Contracts of the supervised observe–act loop: plans and chat messages (seed 001 §3), proposed
steps, approval decisions, step records and the typed events a UI subscribes to."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from engine.models.actions import Action, ActionResult, ExpectedOutcome, PageEvent, VerificationResult
from engine.models.browsing import DialogInfo, PageIncidents, TabInfo
from engine.models.effect import StepEffect

TaskStatus = Literal["idle", "running", "success", "error", "interrupted"]
StepStatus = Literal["pending", "active", "completed", "failed"]
Policy = Literal["ask", "auto", "auto-safe"]
POLICIES: tuple[str, ...] = ("ask", "auto", "auto-safe")
DecisionKind = Literal["approve", "edit", "skip", "reject", "take_over", "stop"]
LoopState = Literal["idle", "observing", "planning", "awaiting_approval", "acting", "verifying", "finished"]
RecordStatus = Literal["completed", "failed", "skipped", "rejected", "stopped"]  # how a step ended
Actor = Literal["agent", "human"]


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class PlanStep(BaseModel):
    """One line of the plan stepper (seed 001 §3.2); `id` is "step_{index}"."""

    id: str
    index: int
    description: str
    status: StepStatus = "pending"
    reasoning: str | None = None
    toolType: str = "DOM"
    expectedOutcome: str | None = None


class Plan(BaseModel):
    steps: list[PlanStep] = Field(default_factory=list)
    currentStepIndex: int = 0
    createdAt: str = Field(default_factory=_now_iso)

    @classmethod
    def from_descriptions(cls, descriptions: list[str], current: int = 0) -> Plan:
        steps = [PlanStep(id=f"step_{i}", index=i, description=d,
                          status="completed" if i < current else "active" if i == current else "pending")
                 for i, d in enumerate(descriptions)]
        return cls(steps=steps, currentStepIndex=min(current, max(0, len(steps) - 1)))


class ChatMessage(BaseModel):
    messageId: str = Field(default_factory=lambda: str(uuid.uuid4()))
    role: Literal["user", "assistant", "system"]
    content: str
    timestamp: str = Field(default_factory=_now_iso)
    sequenceNumber: int = 0
    status: Literal["pending", "success", "error"] | None = None
    actionString: str | None = None
    error: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class ProposedStep(BaseModel):
    """What a planner proposes: one action, why, and what it should achieve."""

    thought: str = ""
    action: Action
    expected_outcome: ExpectedOutcome | None = None
    plan: list[str] | None = None          # a plan update (descriptions), when the planner has one
    plan_index: int | None = None          # which plan step this works on
    description: str = ""                  # the step in plain words
    sensitive: bool = False                # the planner flags this step: always ask
    sensitive_reason: str | None = None
    timeout_ms: int | None = Field(default=None, ge=0)  # how long to wait for the target to appear
    details: dict[str, Any] = Field(default_factory=dict)  # planner-specific extras kept for the record


class PerformedAction(BaseModel):
    """An action the person did in the page themselves (take over in the page): recorded, never run
    again by the loop. `target` is the node as it was (id, role, name, query, locator)."""

    action: Action
    target: dict[str, Any] | None = None


class Decision(BaseModel):
    """A person's answer at the approval gate."""

    kind: DecisionKind
    action: Action | None = None                     # edit / take_over: the action to run instead
    expected_outcome: ExpectedOutcome | None = None  # edit: a new expected outcome
    reason: str | None = None                        # reject: handed back to the planner
    text: str | None = None                          # a dialog request: the text to answer a prompt with
    # take_over in the page (no action): what the person did there, in order (engine.loop.person_steps)
    performed: list[PerformedAction] = Field(default_factory=list)

    @classmethod
    def approve(cls) -> Decision:
        return cls(kind="approve")


class ApprovalRequest(BaseModel):
    """Everything the gate shows a person before a step runs."""

    step_index: int
    proposal: ProposedStep
    target: dict[str, Any] | None = None  # the resolved target node: id, role, name, bounds, frame
    summary: str                          # the step in plain words, target included
    sensitive_reasons: list[str] = Field(default_factory=list)
    policy: Policy = "ask"
    error: str | None = None              # why the previous answer (an invalid edit) was refused
    # page text the planner was sent that reads like an instruction to the agent (prompt injection)
    warnings: list[str] = Field(default_factory=list)
    # a JavaScript dialog the page raised, put to the person: approve = OK (with `Decision.text` for a
    # prompt), reject or skip = Cancel, stop = Cancel and stop the run
    dialog: DialogInfo | None = None
    # what the step will do, computed in the page before dispatch (who receives the input, what it submits …)
    effect: StepEffect | None = None


class StepRecord(BaseModel):
    """One step of a run, as it happened."""

    index: int
    actor: Actor = "agent"
    proposal: ProposedStep | None = None
    decision: Decision | None = None
    auto_approved: bool = False
    action: Action | None = None       # what actually ran (after edit / take over), None if nothing ran
    result: ActionResult | None = None
    verification: VerificationResult | None = None
    events: list[PageEvent] = Field(default_factory=list)
    url_before: str = ""
    url_after: str = ""
    screenshot_before: str | None = None  # perceptual hash (hex)
    screenshot_after: str | None = None
    screenshot_distance: int | None = None
    snapshot_nodes: int = 0
    target: dict[str, Any] | None = None  # the node acted on, as it was: id, role, name, nth (for replay), box …
    exchange: dict[str, Any] | None = None  # what a model / backend planner was sent and answered for it
    started_at: float = Field(default_factory=time.time)
    timings_ms: dict[str, float] = Field(default_factory=dict)
    status: RecordStatus = "completed"
    note: str = ""
    tab: TabInfo | None = None            # the tab the step ran in (index, title, URL, target id)
    incidents: PageIncidents | None = None  # dialogs, tabs opened or closed, downloads during the step
    effect: StepEffect | None = None      # what the step was approved to do, computed in the page before it ran

    @property
    def unverified(self) -> bool:
        """The agent's action ran, but what it should have done was not seen: shown as such in the chat and
        plan, and counted in the sessions list (a person's own steps and the planner's fail() are not)."""
        v = self.verification or (self.result.verification if self.result else None)
        return (self.status == "completed" and self.actor != "human" and v is not None and not v.success
                and (self.action is None or self.action.name != "fail"))


class RunResult(BaseModel):
    task: str
    status: TaskStatus
    answer: str | None = None
    reason: str | None = None
    steps: list[StepRecord] = Field(default_factory=list)
    plan: Plan | None = None
    messages: list[ChatMessage] = Field(default_factory=list)
    url: str = ""
    # what the page did besides itself over the run, in words (dialog and popup floods, downloads …)
    incidents: list[str] = Field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return 0 if self.status == "success" else 1


# -- events ----------------------------------------------------------------------------------
class _Event(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    at: float = Field(default_factory=time.time)


class SnapshotTaken(_Event):
    type: Literal["snapshot_taken"] = "snapshot_taken"
    step_index: int
    url: str
    nodes: int
    interactive: int
    capture_ms: float
    tokens: int | None = None
    new_ids: list[str] = Field(default_factory=list)


class StepProposed(_Event):
    type: Literal["step_proposed"] = "step_proposed"
    step_index: int
    proposal: ProposedStep


class AwaitingApproval(_Event):
    type: Literal["awaiting_approval"] = "awaiting_approval"
    request: ApprovalRequest


class ActionDone(_Event):
    type: Literal["action_done"] = "action_done"
    step_index: int
    actor: Actor
    result: ActionResult


class VerificationDone(_Event):
    type: Literal["verification"] = "verification"
    step_index: int
    result: VerificationResult


class PlanUpdated(_Event):
    type: Literal["plan_updated"] = "plan_updated"
    plan: Plan


class MessageAdded(_Event):
    type: Literal["message_added"] = "message_added"
    message: ChatMessage


class StatusChanged(_Event):
    type: Literal["status_changed"] = "status_changed"
    status: TaskStatus
    state: LoopState
    detail: str = ""


class TabsChanged(_Event):
    """The browser's tabs changed (opened, closed, another made active): the window follows `active`."""

    type: Literal["tabs_changed"] = "tabs_changed"
    tabs: list[TabInfo]
    active: int | None = None
    reason: str = ""


class DialogRaised(_Event):
    """A JavaScript dialog opened (`dialog.answer` None) or was answered."""

    type: Literal["dialog"] = "dialog"
    step_index: int
    dialog: DialogInfo


class StepArtifacts(BaseModel):
    """The heavy, in-process companions of a step record: the viewport JPEGs and the snapshots they
    were taken with (a `DomSnapshot` each), before and after the action. Never serialized with the
    event; the session store keeps them as blobs."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    screenshot_before: bytes | None = Field(default=None, repr=False)
    screenshot_after: bytes | None = Field(default=None, repr=False)
    snapshot_before: Any = Field(default=None, repr=False)
    snapshot_after: Any = Field(default=None, repr=False)


class StepRecorded(_Event):
    type: Literal["step_recorded"] = "step_recorded"
    record: StepRecord
    artifacts: StepArtifacts | None = Field(default=None, exclude=True, repr=False)


class StepPictureTaken(_Event):
    """A recorded step's after picture, taken after its record was published (the step's result did not wait
    for it): `screenshot_after` and `screenshot_distance` are now also in that record (the loop's `RunResult`
    has them); `artifacts` carries the JPEG and the snapshot it was taken with, for the store and the window."""

    type: Literal["step_picture"] = "step_picture"
    step_index: int
    screenshot_after: str                 # perceptual hash (hex)
    screenshot_distance: int | None = None
    artifacts: StepArtifacts | None = Field(default=None, exclude=True, repr=False)


LoopEvent = Annotated[SnapshotTaken | StepProposed | AwaitingApproval | ActionDone | VerificationDone | PlanUpdated
                      | MessageAdded | StatusChanged | StepRecorded | StepPictureTaken | TabsChanged | DialogRaised,
                      Field(discriminator="type")]
