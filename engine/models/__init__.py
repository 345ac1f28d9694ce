"""Contracts: the typed shapes that cross module, process and GUI boundaries — all in this package."""

from engine.models.actions import (ACTION_NAMES, NODE_ACTIONS, TERMINAL_ACTIONS, Action, ActionResult,  # noqa: F401
                                   ExpectedOutcome, OutcomeLike, PageEvent, PageState, TargetQuery,
                                   VerificationResult)
from engine.models.loop import (POLICIES, ActionDone, ApprovalRequest, AwaitingApproval, ChatMessage,  # noqa: F401
                                Decision, LoopEvent, MessageAdded, Plan, PlanStep, PlanUpdated, Policy,
                                ProposedStep, RunResult, SnapshotTaken, StatusChanged, StepProposed, StepRecord,
                                StepArtifacts, StepRecorded, TaskStatus, VerificationDone)
from engine.models.snapshot import (FORMATS, FrameInfo, PageContext, Serialization, SnapshotStats,  # noqa: F401
                                    Viewport)
