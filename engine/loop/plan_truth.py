"""What a step really did to the plan: the plan's steps are ticked for the action that ran, not for the one
proposed. A step approved as proposed, or edited or taken over on the same element with the same kind of action,
completes the plan step it was proposed for. An edit or a take-over that acted on another element leaves that plan
step as it was ("not done: the person did … instead") and completes the plan step whose words name what it did
("Click Create account" for the person's click on Create account), if one does. The plan is what the window's
stepper, `vigil run`, the report and the planner's next payload say about the task, so it must not tick a box the
page never saw checked."""

from __future__ import annotations

import re

from engine.loop.journal import RunJournal
from engine.models import Action, ProposedStep
from engine.names import norm
from engine.secret_values import MASK

# the words a plan step may start with for each action that ran (a click on a box checks it)
VERBS: dict[str, tuple[str, ...]] = {
    "click": ("click", "press", "tap", "open", "submit", "select", "choose", "check", "uncheck", "toggle", "focus"),
    "double_click": ("double-click", "double click", "click", "open"),
    "check": ("check", "tick", "select", "enable", "turn on"),
    "uncheck": ("uncheck", "untick", "clear", "disable", "turn off"),
    "type": ("type", "enter", "fill", "write", "input", "search", "set", "put"),
    "select": ("select", "choose", "pick", "set"),
}


def same_action(proposed: Action, ran: Action) -> bool:
    """`ran` does what `proposed` meant: the same element, the same kind of action (a click on the box proposed to
    be checked counts); an action with no element (press, scroll) only by its name."""
    kinds = ran.name == proposed.name or (proposed.name in ("check", "uncheck") and ran.name == "click")
    if not kinds:
        return False
    if proposed.target is None:
        return ran.target is None
    return ran.target is not None and str(ran.target) == str(proposed.target)


def fits(description: str, action: Action, target: dict | None) -> bool:
    """A plan step's words name what `action` did: the element's name and a verb for the action (and the text or
    option it quotes, when it quotes one)."""
    name = norm((target or {}).get("name"))
    words = norm(description)
    if not name or not re.search(rf"(^|\W){re.escape(name)}(\W|$)", words):
        return False
    if not words.startswith(VERBS.get(action.name, (action.name,))):
        return False
    quoted = re.findall(r'"([^"]*)"', description)
    if action.name == "type" and quoted and action.text != MASK:
        return norm(action.text) in {norm(q) for q in quoted}
    if action.name == "select" and action.option:
        return norm(action.option) in words
    return True


def elsewhere(who: str, action: Action, target: dict | None) -> str:
    """Why a plan step is not done though a step for it ran: what ran instead, and on what."""
    t = target or {}
    on = f' on {t.get("role") or "the element"} "{t["name"]}"' if t.get("name") else ""
    return f"not done: {who} {action.to_string()}{on} instead"


def mark_ran(j: RunJournal, p: ProposedStep, action: Action, target: dict | None, *, ok: bool, who: str,
             note: str | None = None) -> None:
    """Step `p` ran `action` (on `target`; `ok`: it ran and its check held): the plan step it really did is
    completed, the one proposed is left as it was when the action was another's."""
    if same_action(p.action, action):
        j.mark_plan(p.plan_index, "completed" if ok else "failed", note)
        return
    if p.plan_index is not None:
        j.mark_plan(p.plan_index, "pending", elsewhere(who, action, target))
    if not ok:
        return
    plan = j.plan
    steps = plan.steps if plan is not None else []
    named = [s.index for s in steps if s.status != "completed" and s.index != p.plan_index
             and fits(s.description, action, target)]
    if named:
        j.mark_plan(named[0], "completed", note)
