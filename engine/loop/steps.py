"""What the loop keeps about the step it is working on: `StepDraft` (the facts gathered before it
runs, which every way a step can end turns into its `StepRecord`), `Judged` (the step as it is put to
the gate), `Approved` (what the gate let it run) and `Turn` (what the planner hears about its proposal
at the next observation)."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from engine.loop.grounding import resolve_target
from engine.loop.planner import Outcome
from engine.models import (
    Action,
    ActionResult,
    ApprovalRequest,
    Decision,
    ExpectedOutcome,
    PageEvent,
    ProposedStep,
    StepRecord,
    VerificationResult,
)
from engine.models.browsing import TabInfo
from engine.models.effect import StepEffect
from engine.models.loop import Actor, RecordStatus
from engine.secret_values import MASK
from engine.snapshot.dom_snapshot import DomSnapshot
from engine.snapshot.vnode import VirtualNode
from engine.vision.screenshot import Screenshot

log = logging.getLogger("vigil.loop")


@dataclass
class Turn:
    """What the planner hears about its proposal at the next observation."""

    outcome: Outcome
    feedback: str | None = None
    result: ActionResult | None = None


@dataclass
class StepDraft:
    """A step between its proposal and its record: where it started and what has been decided."""

    index: int
    proposal: ProposedStep          # as shown (typed secrets masked)
    auto_approved: bool
    url: str                        # the page when it was proposed
    snapshot_nodes: int
    timings_ms: dict[str, float]    # filled in as the step goes: observe, model, approval, act …
    exchange: dict[str, Any] | None = None  # what a model or backend planner was sent and answered
    decision: Decision | None = None
    tab: TabInfo | None = None      # the tab the step was proposed in (its index, title, URL)
    effect: StepEffect | None = None  # what the step will do, as the page computed it before it ran

    def record(self, status: RecordStatus, *, note: str = "", actor: Actor = "agent", action: Action | None = None,
               result: ActionResult | None = None, verification: VerificationResult | None = None,
               events: list[PageEvent] | None = None, url_before: str | None = None, url_after: str | None = None,
               snapshot_nodes: int | None = None, screenshots: tuple[str | None, str | None, int | None] = (None, None,
                                                                                                           None),
               target: dict[str, Any] | None = None) -> StepRecord:
        """The step's record: the draft's facts, with what the step's end adds or replaces."""
        before, after, distance = screenshots
        return StepRecord(index=self.index, proposal=self.proposal, decision=self.decision,
                          auto_approved=self.auto_approved, exchange=self.exchange, timings_ms=self.timings_ms,
                          url_before=url_before or self.url, url_after=url_after or self.url,
                          snapshot_nodes=self.snapshot_nodes if snapshot_nodes is None else snapshot_nodes,
                          actor=actor, action=action, result=result,
                          verification=verification, events=events or [], screenshot_before=before,
                          screenshot_after=after, screenshot_distance=distance, target=target, status=status,
                          note=note, tab=self.tab, effect=self.effect)


@dataclass
class Judged:
    """A step as it is put to the gate: its target and the snapshot it is shown on, why it is sensitive, whether a
    person is asked (else the policy or a standing grant approves it) and the question. The question changes when
    it is asked again (the target changed after it was shown)."""

    node: VirtualNode | None
    seen: DomSnapshot
    reasons: list[str]
    ask: bool
    granted: str | None             # the standing grant that covers the step (then nobody is asked)
    request: ApprovalRequest
    draft: StepDraft
    reasked: int = 0                # how often it was put to the gate again because what it does changed


@dataclass
class Approved:
    """What the gate let a step run: the action, the node it runs on and the outcome it expects, checked on the
    page as it is right before input (`fresh`, with its picture)."""

    decision: Decision
    action: Action
    node: VirtualNode | None
    expect: ExpectedOutcome | None
    fresh: DomSnapshot
    shot_before: Screenshot | None


def chosen(d: Decision, p: ProposedStep, node: VirtualNode | None, fresh: DomSnapshot
           ) -> tuple[Action, VirtualNode | None, ExpectedOutcome | None]:
    """(action, node, expected outcome) to run after approve / edit / take over with an action: the
    proposal's, or the person's, checked against the fresh snapshot (UnknownNodeError, ValueError)."""
    if d.kind == "edit" and d.action is None and d.expected_outcome is None:
        raise ValueError("an edit needs a new action or a new expected outcome")
    a = d.action if d.action is not None else p.action
    if a.name == "type" and a.text == MASK:
        raise ValueError("its text is the mask of a secret that Vigil never records; edit the step with the "
                         "real value, or take over and type it in the page")
    if d.action is None:
        return p.action, node, d.expected_outcome if d.expected_outcome is not None else p.expected_outcome
    target_node = resolve_target(fresh, a.target) if a.target is not None else None
    keep = d.kind == "edit" and a.name == p.action.name
    return a, target_node, d.expected_outcome if d.expected_outcome is not None else (
        p.expected_outcome if keep else None)


def exchange_of(planner: object) -> dict[str, Any] | None:
    """A planner's `last_exchange` (what it sent to a model or backend and got back) as plain JSON
    data for the step record, or None for planners that talk to nobody."""
    ex = getattr(planner, "last_exchange", None)
    if ex is None:
        return None
    try:
        data = ex.model_dump(mode="json") if hasattr(ex, "model_dump") else json.loads(json.dumps(ex, default=str))
    except (TypeError, ValueError) as exc:
        log.debug("planner exchange not kept: %s", exc)
        return None
    return data if isinstance(data, dict) else {"exchange": data}
