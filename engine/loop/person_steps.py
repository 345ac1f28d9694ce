"""The person's own actions in the live view, as steps (issue [14]).

While a step waits for approval the person may act in the page themselves (Take over → "I'll do it
in the page"). `PersonSteps` hears the input the live view sends to the page — mouse, keys, wheel,
in page CSS px — and turns it into actions on node IDs of the latest snapshot, each with the node
as it was and its Playwright locator: a click or double click on the element under the pointer;
the characters typed into the field clicked last, as one `type(id, "…", clear=false)` (Backspace
taken into account); Enter, Tab, Escape, arrows and chords as `press`; the wheel as one `scroll`
per direction; and a native `<select>` whose choice changed as `select(id, "option")` (its clicks
and arrow keys then dropped). Text typed into a password, one-time-code or other secret field is
never kept: the action carries `••••••••`, as every agent step does. After Tab the view does not
know where focus went: what is typed next is held, and goes to the field the page reports focused
(the snapshot's `focused` state) when it ends — never key by key, and masked if that field is secret.
`person_acted` records what the person did as the run's steps once they hand the step back.
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Callable
from typing import Any

from engine.loop.events import EventBus
from engine.loop.grounding import target_record
from engine.loop.journal import RunJournal
from engine.loop.plan_truth import mark_ran
from engine.loop.steps import StepDraft, Turn
from engine.models import (
    Action,
    ActionDone,
    ActionResult,
    ChatMessage,
    PageEvent,
    PerformedAction,
    ProposedStep,
    StepArtifacts,
)
from engine.secret_values import MASK
from engine.snapshot.dom_snapshot import DomSnapshot
from engine.snapshot.locators import Locators
from engine.snapshot.vnode import VirtualNode

log = logging.getLogger(__name__)

_FIELD_ROLES = frozenset({"textbox", "searchbox", "combobox", "spinbutton"})
_CHOICE_ROLES = frozenset({"checkbox", "radio", "switch", "slider", "listbox"})
_CONTROL_ROLES = _FIELD_ROLES | _CHOICE_ROLES | {"button"}
_CONTROL_TAGS = frozenset({"input", "select", "textarea", "button"})
_CLICK_SLOP_PX = 6.0
_MODIFIER_KEYS = frozenset({"Shift", "Control", "Alt", "Meta"})
_MOD_NAMES = ((2, "Control"), (1, "Alt"), (4, "Meta"), (8, "Shift"))


def _holds(n: VirtualNode, x: float, y: float) -> bool:
    bx, by, bw, bh = n.bounds
    return bw > 0 and bh > 0 and bx <= x <= bx + bw and by <= y <= by + bh


def _area(n: VirtualNode) -> float:
    return n.bounds[2] * n.bounds[3]


def node_at(snap: DomSnapshot, x: float, y: float) -> VirtualNode | None:
    """The element a person clicking at (x, y) (viewport CSS px) means: the smallest rendered
    interactive node whose box holds the point, else the smallest rendered node's nearest
    interactive ancestor."""
    best: VirtualNode | None = None
    best_any: VirtualNode | None = None
    for n in snap.nodes():
        if not n.rendered or not _holds(n, x, y):
            continue
        if n.interactive and (best is None or _area(n) <= _area(best)):
            best = n
        if best_any is None or _area(n) <= _area(best_any):
            best_any = n
    if best is not None:
        return best
    p = best_any
    while p is not None and not p.interactive:
        p = p.parent
    return p


def _smallest_at(snap: DomSnapshot, x: float, y: float) -> VirtualNode | None:
    best: VirtualNode | None = None
    for n in snap.nodes():
        if n.rendered and _holds(n, x, y) and (best is None or _area(n) <= _area(best)):
            best = n
    return best


def _usable(n: VirtualNode) -> bool:
    """Drawn big enough to be the thing a person uses (not a native control a library shrank to 1×1 px
    and replaced with a widget of its own)."""
    return n.rendered and n.bounds[2] >= 2 and n.bounds[3] >= 2


def _is_control(n: VirtualNode) -> bool:
    return n.tag in _CONTROL_TAGS or (n.interactive and n.role in _CONTROL_ROLES)


def label_control(snap: DomSnapshot, label: VirtualNode) -> VirtualNode | None:
    """The control a <label> is for: its `for` element, else the control inside it. A control a library
    hid behind a widget of its own (select2, choices, tom-select keep the native <select>) stands for
    that widget: its nearest control ancestor, else the first control that follows it."""
    want = (label.attrs or {}).get("for")
    ctrl = None
    if want:
        ctrl = next((n for n in snap.nodes() if n.frame_id == label.frame_id and (n.attrs or {}).get("id") == want),
                    None)
    else:
        ctrl = next((n for n in label.iter() if n is not label and _is_control(n)), None)
    if ctrl is None or _usable(ctrl):
        return ctrl
    p, hops = ctrl.parent, 0
    while p is not None and hops < 4:  # choices: the <select> sits inside its role=combobox box
        if p.interactive and p.role in _CONTROL_ROLES and _usable(p):
            return p
        p, hops = p.parent, hops + 1
    if ctrl.parent is not None:  # select2: its widget comes right after the hidden <select>
        seen = False
        for n in ctrl.parent.iter():
            if n is ctrl:
                seen = True
            elif seen and n.interactive and n.role in _CONTROL_ROLES and _usable(n) and ctrl not in _ancestors(n):
                return n
    return None


def _ancestors(n: VirtualNode) -> list[VirtualNode]:
    out, p = [], n.parent
    while p is not None:
        out.append(p)
        p = p.parent
    return out


def widget_control(node: VirtualNode) -> VirtualNode | None:
    """A listener-only box around one form control (a select's field, chevron and value shown around its
    input): that control. None when the box holds none, or more than one."""
    if node.role != "clickable":
        return None
    inner = [n for n in node.iter() if n is not node and n.interactive and n.role in _FIELD_ROLES | _CHOICE_ROLES
             and _usable(n)]
    return inner[0] if len(inner) == 1 else None


def control_at(snap: DomSnapshot, x: float, y: float, *, widgets: bool = True) -> tuple[VirtualNode | None, str]:
    """What a person pointing at (x, y) means to use, and how it was found: a label's text means its
    control ("label"); with `widgets`, a listener-only box around one form control (its field, chevron,
    shown value) means that control ("widget"); else the node under the point (`node_at`, ""). (None, "")
    where nothing there takes input."""
    small = _smallest_at(snap, x, y)
    p = small
    while p is not None:
        if p.tag == "label":
            ctrl = label_control(snap, p)
            if ctrl is not None:
                return ctrl, "label"
            break
        if p.interactive:
            break
        p = p.parent
    node = node_at(snap, x, y)
    if node is None:
        return None, ""
    if node.tag == "label":  # a label that listens itself (tom-select's)
        ctrl = label_control(snap, node)
        if ctrl is not None:
            return ctrl, "label"
    if widgets:
        inner = widget_control(node)
        if inner is not None:
            return inner, "widget"
    return node, ""


def is_field(n: VirtualNode) -> bool:
    return n.tag in ("input", "textarea") or n.role in _FIELD_ROLES or "contenteditable" in (n.attrs or {})


class PersonSteps:
    """Collects the person's input while they act in the page; `finish()` gives the actions."""

    def __init__(self, snapshot: Callable[[], DomSnapshot | None]) -> None:
        self._snapshot = snapshot            # the latest snapshot of the page (the window's)
        self.steps: list[PerformedAction] = []
        self._start: DomSnapshot | None = snapshot()
        self._down: tuple[float, float, int] | None = None
        self._focus: tuple[VirtualNode, DomSnapshot] | None = None
        self._typed = ""
        self._blind = False                  # focus moved by a key (Tab): typing waits to learn where
        self._scroll: tuple[str, float] | None = None
        self.started_at = time.monotonic()   # input the page had before this is not the person's answer
        self.heard = 0                       # presses, keys, wheel turns and text heard (not moves)

    @property
    def typing_blind(self) -> bool:
        """Text is held for a field the view has not seen focused yet: a fresh snapshot before the next
        key lets it find out."""
        return self._blind and bool(self._typed)

    # -- input, as the live view sends it -------------------------------------------------------
    def feed(self, method: str, args: tuple, kw: dict[str, Any]) -> None:
        """One input event as `PageInput` queues it for the page (mouse / key / wheel / insert_text)."""
        if not (method == "mouse" and args and args[0] == "move"):
            self.heard += 1
        try:
            if method == "mouse":
                self._mouse(args[0], float(args[1]), float(args[2]), int(kw.get("click_count", 1)),
                            kw.get("button", "left"))
            elif method == "key" and args[0] == "down":
                self._key(str(args[1]), str(args[3]) if len(args) > 3 else "", int(args[4]) if len(args) > 4 else 0)
            elif method == "wheel":
                self._wheel(float(args[2]), float(args[3]))
            elif method == "insert_text":
                self._text(str(args[0]))
        except (IndexError, TypeError, ValueError):
            pass  # an event of another shape: not the person's step

    def _mouse(self, kind: str, x: float, y: float, clicks: int, button: str) -> None:
        if button != "left":
            return
        if kind == "down":
            self._down = (x, y, clicks)
            return
        if kind != "up" or self._down is None:
            return
        dx, dy, n = self._down
        self._down = None
        if abs(dx - x) > _CLICK_SLOP_PX or abs(dy - y) > _CLICK_SLOP_PX:
            return  # a drag (text selection, a slider): not a click
        snap = self._snapshot()
        # a label's text stands for its control (clicking it clicks the control)
        node = control_at(snap, x, y, widgets=False)[0] if snap is not None else None
        if node is None or snap is None:
            return
        self._flush()
        if n >= 2 and self.steps and self.steps[-1].action.name == "click" and \
                self.steps[-1].action.target == node.node_id:
            self.steps[-1] = self._step(Action(name="double_click", target=node.node_id), node, snap)
        else:
            self.steps.append(self._step(Action(name="click", target=node.node_id), node, snap))
        self._focus = (node, snap) if is_field(node) or node.tag == "select" else None
        self._blind = False

    def _key(self, key: str, text: str, mods: int) -> None:
        if key in _MODIFIER_KEYS:
            return
        if text and text != "\r" and not mods & 0b111 and (
                self._blind or (self._focus is not None and is_field(self._focus[0]))):
            self._typed += text
            return
        if key == "Backspace" and self._typed:
            self._typed = self._typed[:-1]
            return
        self._flush()
        chord = "+".join([name for bit, name in _MOD_NAMES if mods & bit] + [key])
        node, snap = self._focus if self._focus is not None else (None, None)
        target = node.node_id if node is not None else None
        last = self.steps[-1].action if self.steps else None
        if last is not None and last.name == "press" and last.key == chord and last.target == target:
            self.steps[-1] = self.steps[-1].model_copy(
                update={"action": last.model_copy(update={"repeat": min(500, last.repeat + 1)})})
            return
        self.steps.append(self._step(Action(name="press", key=chord, target=target), node, snap))
        if key == "Tab":
            self._focus = None  # focus moved somewhere the view does not know (yet)
            self._blind = True

    def _text(self, text: str) -> None:
        if self._blind or (self._focus is not None and is_field(self._focus[0])):
            self._typed += text

    def _wheel(self, dx: float, dy: float) -> None:
        self._flush(scroll=False)
        direction = ("down" if dy > 0 else "up") if abs(dy) >= abs(dx) else ("right" if dx > 0 else "left")
        amount = abs(dy) if direction in ("up", "down") else abs(dx)
        if self._scroll is not None and self._scroll[0] == direction:
            self._scroll = (direction, self._scroll[1] + amount)
        else:
            self._flush()
            self._scroll = (direction, amount)

    def _flush(self, *, scroll: bool = True) -> None:
        if self._typed and self._blind:
            self._focus = self._focused_field()
            self._blind = False
            if self._focus is None:  # nowhere to put it: dropped, never recorded key by key
                log.info("the person typed %d character(s) where no field had focus", len(self._typed))
                self._typed = ""
        if self._typed and self._focus is not None:
            node, snap = self._focus
            text = MASK if node.redacted or _secret_field(node) else self._typed
            self.steps.append(self._step(Action(name="type", target=node.node_id, text=text, clear=False), node, snap))
            self._typed = ""
        if scroll and self._scroll is not None:
            d, amount = self._scroll
            act = Action.model_validate({"name": "scroll", "direction": d, "amount": max(1, round(amount))})
            self.steps.append(PerformedAction(action=act))
            self._scroll = None

    def _focused_field(self) -> tuple[VirtualNode, DomSnapshot] | None:
        """The field the page says has focus in the latest snapshot."""
        snap = self._snapshot()
        if snap is None:
            return None
        node = next((n for n in snap.nodes() if n.states and n.states.get("focused")), None)
        return (node, snap) if node is not None and is_field(node) else None

    @staticmethod
    def _step(action: Action, node: VirtualNode | None, snap: DomSnapshot | None) -> PerformedAction:
        if node is None or snap is None:
            return PerformedAction(action=action)
        target = target_record(node, snap)
        loc = Locators(snap).for_node(node)
        if loc is not None:
            target["locator"] = loc.to_dict()
        return PerformedAction(action=action, target=target)

    # -- the end -------------------------------------------------------------------------------
    def so_far(self) -> list[PerformedAction]:
        """The actions heard so far, typing and scrolling still under way included (nothing is ended:
        what is typed next still joins the same step)."""
        peek = copy.copy(self)
        peek.steps = list(self.steps)
        peek._flush()
        return peek.steps

    def finish(self, after: DomSnapshot | None = None) -> list[PerformedAction]:
        """The person's actions, in order. `after` (the page once they are done) turns a native
        <select> whose choice changed into one `select` step."""
        self._flush()
        start, after = self._start, after or self._snapshot()
        if start is not None and after is not None:
            for n in after.nodes():
                if n.tag != "select" or n.node_id not in start:
                    continue
                old = start.get(n.node_id)
                if (old.value or "") == (n.value or "") or not n.value:
                    continue
                self.steps = [s for s in self.steps
                              if not (s.action.target == n.node_id and s.action.name in ("click", "press"))]
                self.steps.append(self._step(Action(name="select", target=n.node_id, option=n.value), n, after))
        return list(self.steps)


def _secret_field(n: VirtualNode) -> bool:
    a = n.attrs or {}
    return (a.get("type") or "").lower() == "password" or (a.get("autocomplete") or "") in (
        "one-time-code", "current-password", "new-password")


def person_acted(j: RunJournal, bus: EventBus, p: ProposedStep, msg: ChatMessage, draft: StepDraft,
                 fresh: DomSnapshot, events: list[PageEvent], artifacts: StepArtifacts | None) -> Turn:
    """The person took over a step and acted in the page themselves: each of their actions the live view
    heard (`Decision.performed`) is recorded as a step of its own (not run again), or one step saying
    they acted when none was heard; the chat and plan say so, and the planner hears what the page is now."""
    done = draft.decision.performed if draft.decision is not None else []
    if not done:
        j.record(draft.record("completed", actor="human", events=events, url_after=fresh.url,
                              snapshot_nodes=len(fresh), note="The person acted in the page directly."), artifacts)
    for i, pa in enumerate(done):  # the person's own actions, one step each (recorded, not run again)
        last = i == len(done) - 1
        result = ActionResult(success=True, action=pa.action.to_string(), node_id=pa.action.node_id,
                              message="Done by the person in the page.")
        bus.publish(ActionDone(step_index=draft.index + i, actor="human", result=result))
        rec = draft.record("completed", actor="human", action=pa.action, result=result, target=pa.target,
                           events=events if last else [], url_after=fresh.url, snapshot_nodes=len(fresh),
                           note="Done by the person in the page.")
        if i:
            rec = rec.model_copy(update={"index": draft.index + i, "proposal": None, "decision": None})
        j.record(rec, artifacts if last else None)
    j.update_message(msg, status="error", error="The person took over this step.",
                     metadata={**msg.metadata, "taken_over": True})
    said = "; ".join(f"{k}. {pa.action.to_string()}" for k, pa in enumerate(done, 1))
    j.message("user", f"I acted in the page myself: {said}" if said else "I acted in the page myself.",
              metadata={"decision": "take_over", "performed": len(done)})
    for pa in done:  # the plan step each of their actions did (not the one proposed, if they did another)
        mark_ran(j, p, pa.action, pa.target, ok=True, who="the person did", note="done by the person")
    if not done:
        j.mark_plan(p.plan_index, None, "the person acted in the page; Vigil did not see what they did")
    seen = "; ".join(e.describe() for e in events[-5:])
    return Turn("taken_over", f"The person took over and acted in the page directly instead of your step. "
                               f"The page is now {fresh.url}." + (f" Recent page events: {seen}." if seen else ""))
