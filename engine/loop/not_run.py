"""Steps that end without their action running: the target never appeared, the chosen action could
not be run as given (an edit naming an element that is not there), the target changed while the step
waited for approval, or the person skipped or rejected it. Each is told in the chat and the plan (and
recorded, but for the changed target: the planner proposes again), and turned into what the planner hears
next."""

from __future__ import annotations

from typing import Any

from engine.errors import ErrorCode, UnknownNodeError
from engine.loop.events import EventBus
from engine.loop.grounding import target_label
from engine.loop.journal import RunJournal
from engine.loop.redact import mask_action, mask_proposal
from engine.loop.steps import StepDraft, Turn
from engine.loop.target_guard import Drift
from engine.models import ActionDone, ActionResult, ChatMessage, Decision, ProposedStep, StepRecord
from engine.snapshot.dom_snapshot import DomSnapshot
from engine.snapshot.vnode import VirtualNode


def target_missing(j: RunJournal, bus: EventBus, index: int, p: ProposedStep, snap: DomSnapshot, msg: ChatMessage,
                   exc: UnknownNodeError, waited_s: float, timings: dict[str, float],
                   exchange: dict[str, Any] | None) -> Turn:
    """The step's target did not appear within `waited_s`."""
    text = f"The target {target_label(p.action.target)} did not appear within {waited_s:g} s. {exc.message}"
    shown = mask_proposal(p)
    result = ActionResult(success=False, action=shown.action.to_string(), error_code=exc.code, message=text)
    bus.publish(ActionDone(step_index=index, actor="agent", result=result))
    j.record(StepRecord(index=index, proposal=shown, action=shown.action, result=result, url_before=snap.url,
                        url_after=snap.url, snapshot_nodes=len(snap), timings_ms=timings, exchange=exchange,
                        status="failed", note="The target never appeared; nothing ran."))
    j.update_message(msg, status="error", error=text)
    j.mark_plan(p.plan_index, "failed")
    return Turn("failed", text, result)


def refused(j: RunJournal, bus: EventBus, p: ProposedStep, snap: DomSnapshot, msg: ChatMessage, why: str,
            draft: StepDraft) -> Turn:
    """The action approved cannot be run as given (`why`), and there is nobody to ask again."""
    text = f"Not run: {why}."
    shown = mask_proposal(p)
    result = ActionResult(success=False, action=shown.action.to_string(), error_code=ErrorCode.REFUSED, message=text)
    bus.publish(ActionDone(step_index=draft.index, actor="agent", result=result))
    j.record(draft.record("failed", note=text, action=shown.action, result=result, url_before=snap.url,
                          url_after=snap.url))
    j.update_message(msg, status="error", error=text)
    j.mark_plan(p.plan_index, "failed")
    return Turn("failed", text, result)


def target_changed(j: RunJournal, p: ProposedStep, msg: ChatMessage, node: VirtualNode, drift: Drift) -> Turn:
    """The target changed while the step waited for approval in a way the approval does not cover: nothing
    ran (not recorded: the planner is asked again on the page as it is now)."""
    note = (f"The page changed while this step waited for approval ({ErrorCode.TARGET_CHANGED}): "
            f"{drift.describe()}. Nothing ran; asking again.")
    j.update_message(msg, status="error", error="Not run: the target changed before it could run.")
    j.message("system", note)
    said = mask_action(p.action, node).to_string()
    return Turn("stale", note, ActionResult(success=False, action=said, error_code=ErrorCode.TARGET_CHANGED,
                                            message=note))


def declined(j: RunJournal, d: Decision, p: ProposedStep, msg: ChatMessage, draft: StepDraft) -> Turn:
    """The person skipped the step (`d.kind == "skip"`) or rejected it, with their reason."""
    if d.kind == "skip":
        j.record(draft.record("skipped", note="Skipped by the person."))
        j.update_message(msg, status="error", error="Skipped by the person.")
        j.message("user", "Skip this step.", metadata={"decision": "skip"})
        j.mark_plan(p.plan_index, "pending", "skipped by the person")
        return Turn("skipped", "The person skipped this step; nothing ran. Go on with the task.")
    reason = (d.reason or "").strip() or "no reason given"
    j.record(draft.record("rejected", note=f"Rejected: {reason}"))
    j.update_message(msg, status="error", error=f"Rejected: {reason}")
    j.message("user", d.reason or "Rejected.", metadata={"decision": "reject"})
    j.mark_plan(p.plan_index, None, f"rejected: {reason}")
    return Turn("rejected", f"The person rejected this step (nothing ran). Their reason: {reason}")
