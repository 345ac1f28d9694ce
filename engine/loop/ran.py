"""Steps whose action ran: whether the step went well (`verdict`), its record (`ran_record`), and how the chat
and the plan tell it and what the planner hears next (`told`); finish() and fail() (`ended`). The steps that
end before their action runs are `engine.loop.not_run`'s."""

from __future__ import annotations

from engine.loop.grounding import target_record
from engine.loop.journal import RunJournal
from engine.loop.plan_truth import mark_ran
from engine.loop.redact import mask_action
from engine.loop.steps import StepDraft, Turn
from engine.models import (
    Action,
    ActionResult,
    ChatMessage,
    Decision,
    ExpectedOutcome,
    PageEvent,
    ProposedStep,
    StepRecord,
)
from engine.models.browsing import PageIncidents
from engine.models.loop import Actor, TaskStatus
from engine.snapshot.dom_snapshot import DomSnapshot
from engine.snapshot.vnode import VirtualNode
from engine.vision.screenshot import hash_distance


def verdict(result: ActionResult, expect: ExpectedOutcome | None, incidents: PageIncidents,
            dead: str | None) -> tuple[bool, str]:
    """(failed, note): the action failed, or its expected outcome was not seen; a check that failed without an
    expected outcome only notes it. A page that misbehaved (a flood of dialogs or popups) or a tab that died
    under the action (`dead`: why) fails the step too."""
    v = result.verification
    failed = not result.success or (v is not None and not v.success and expect is not None)
    note = f"Not verified: {v.feedback}" if v is not None and not v.success and not failed else ""
    if incidents.dialog_flood or incidents.popups_blocked:
        failed = True
        note = "; ".join(x for x in incidents.lines() if "flood" in x)
    if dead is not None:
        failed, note = True, dead
    return failed, note


def ran_record(draft: StepDraft, *, failed: bool, note: str, actor: Actor, run: Action, node: VirtualNode | None,
               result: ActionResult, incidents: PageIncidents, fresh: DomSnapshot, events: list[PageEvent],
               url_after: str, before: str | None, after: str | None) -> StepRecord:
    """The record of a step whose action ran (`run`, on `node` of `fresh`): its events, where the page went and
    the hashes of its pictures (`after` None: still being taken, it follows the record)."""
    distance = hash_distance(before, after) if before and after else None
    rec = draft.record(
        "failed" if failed else "completed", note=note, actor=actor, action=mask_action(run, node), result=result,
        verification=result.verification, events=events, url_before=fresh.url, url_after=url_after,
        snapshot_nodes=len(fresh), screenshots=(before, after, distance),
        target=target_record(node, fresh) if node is not None else None)
    return rec.model_copy(update={"incidents": None if incidents.empty() else incidents})


def told(j: RunJournal, p: ProposedStep, msg: ChatMessage, rec: StepRecord, result: ActionResult, actor: Actor,
         decision: Decision, said: str) -> Turn:
    """The chat and the plan say how the step went (`said`: its action as shown), and the planner hears it: a
    step the person took over as theirs; one that ran but whose check failed is not shown as a success."""
    ok = rec.status == "completed"
    if actor == "human":
        j.update_message(msg, status="error", error="The person took over this step.")
        j.message("user", f"Took over: {said}", actionString=said,
                  status="success" if ok else "error", error=None if ok else result.message)
        if rec.action is not None:
            mark_ran(j, p, rec.action, rec.target, ok=ok, who="the person did", note="done by the person")
        return Turn("taken_over", f"The person took over and ran {said} instead of your step: "
                                   f"{result.message}", result)
    unverified = rec.unverified
    j.update_message(msg, status="success" if ok and not unverified else "error", actionString=said,
                     error=(f"Unverified: {rec.verification.feedback}" if unverified and rec.verification
                            else None if ok else result.message),
                     metadata={**msg.metadata, "edited": decision.kind == "edit", "unverified": unverified,
                               **({"incidents": rec.incidents.lines()} if rec.incidents else {})})
    if decision.kind == "edit" and rec.action is not None:  # an edit may have moved the step to another element
        mark_ran(j, p, rec.action, rec.target, ok=ok, who="the edited step did")
    else:
        j.mark_plan(p.plan_index, "completed" if ok else "failed")
    return Turn("completed" if ok else "failed", None if ok else result.message, result)


def ended(j: RunJournal, action: Action, actor: Actor, p: ProposedStep, msg: ChatMessage,
          draft: StepDraft) -> tuple[TaskStatus, str | None, str | None]:
    """finish() or fail() ran: recorded, told in the chat and the plan; how the run ends (status, answer, reason)."""
    j.record(draft.record("completed", actor=actor, action=action))
    if action.name == "finish":
        j.update_message(msg, status="success", actionString=action.to_string())
        j.mark_plan(p.plan_index, "completed")
        return "success", action.answer, None
    reason = action.reason or "The planner gave up without giving a reason."
    j.update_message(msg, status="error", actionString=action.to_string(), error=reason)
    return "error", None, reason
