"""The offline planner: a deterministic, grounded instruction follower (no model, no network).

It reads the task once into intents (`task_parse`), then at every observation grounds the
current intent in the fresh snapshot (`matching`) and proposes one step. When a named target is
not on screen it explores a little — opens the control that precedes a hidden match (an
accordion header, a tree folder), tries collapsed sections and other tabs, scrolls — and when
nothing grounds it fails the step saying what it looked for and what came closest, rather than
guessing. It also serves the GUI's quick-command box: `await planner.propose(obs)` on
"click Place order" gives a grounded, approvable step.
"""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from engine.loop.planner import Observation
from engine.models import Action, ProposedStep
from engine.models.actions import ScrollDirection
from engine.planners import matching as m
from engine.planners.task_parse import Intent, TargetSpec, TaskParseError, parse_task

if TYPE_CHECKING:
    from engine.snapshot.dom_snapshot import DomSnapshot
    from engine.snapshot.vnode import VirtualNode

MAX_EXPLORE = 6   # exploration steps per intent
MAX_RETRIES = 2   # failed or rejected attempts per intent
STRONG_ALTERNATIVE = 97  # after a rejection, only an element of the very same name is offered instead


class _NoTarget(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class _Declined(Exception):
    """The person turned the intent's step down and nothing else fits it well: go on with the next intent."""


@dataclass
class _State:
    intents: list[Intent]
    pos: int = 0                 # current intent
    done_nodes: list[str] = field(default_factory=list)  # "both"/"all": nodes already handled
    tried: set[str] = field(default_factory=set)          # nodes explored or rejected for this intent
    explored: int = 0
    retries: int = 0
    pending: str = ""            # "main" or "explore": what the last proposal was
    pending_node: str | None = None
    offset: int = 0              # results counted on earlier pages ("the 7th result")
    page_size: int = 0           # results on the page whose "next" control was just clicked
    rejected: bool = False       # the person rejected this intent's last step: only a close alternative now
    not_done: list[str] = field(default_factory=list)  # intents left undone, and why ("… (skipped by the person)")
    done_ahead: set[int] = field(default_factory=set)  # later intents the person already did in a take-over


class HeuristicPlanner:
    """`HeuristicPlanner()` — implements the Planner protocol for any task text."""

    def __init__(self) -> None:
        self._state: _State | None = None
        self._task = ""
        self._may_browse = False
        self._readings: list[str] = []   # values read for the task ("read its total"), the answer

    @property
    def _st(self) -> _State:
        """The state of the task being worked on (read by `propose` before anything else runs)."""
        if self._state is None:
            raise RuntimeError("HeuristicPlanner: no task read yet")
        return self._state

    # -- protocol ------------------------------------------------------------------------------
    async def propose(self, obs: Observation) -> ProposedStep:
        if self._state is None or obs.task != self._task:
            self._task = obs.task
            self._readings = []
            try:
                self._state = _State(parse_task(obs.task))
            except TaskParseError as exc:
                return _fail(str(exc))
            self._may_browse = bool(re.search(r"\b(find|look for|search|switch|expand|tabs|sections|browse|navigate)\b",
                                              obs.task, re.I))
        st = self._st
        if obs.last_outcome is not None:
            verdict = self._absorb(obs)
            if verdict is not None:
                return verdict
        while st.pos < len(st.intents):
            intent = st.intents[st.pos]
            if st.pos in st.done_ahead:  # the person did it already in a take-over
                self._advance()
                continue
            try:
                step = self._step(intent, obs.snapshot)
            except _NoTarget as exc:
                return self._give_up(exc.message, index=st.pos)
            except _Declined:
                self._leave(f"{intent.describe()} (rejected by the person)")
                continue
            if step is None:  # this intent needs nothing (more)
                self._advance()
                continue
            step.plan, step.plan_index = self._plan(), st.pos
            return step
        return self._end()

    async def aclose(self) -> None:
        return None

    # -- bookkeeping ----------------------------------------------------------------------------
    def _plan(self) -> list[str]:
        return [i.describe() for i in self._state.intents] if self._state else []

    def _advance(self) -> None:
        st = self._st
        st.pos += 1
        st.done_nodes, st.tried, st.explored, st.retries, st.pending, st.pending_node = [], set(), 0, 0, "", None
        st.offset = st.page_size = 0
        st.rejected = False

    def _leave(self, why: str) -> None:
        """Go on with the next intent, leaving this one undone (`why` is said at the end)."""
        self._st.not_done.append(why)
        self._advance()

    def _give_up(self, reason: str, index: int | None) -> ProposedStep:
        """A fail step for the current intent; declined (skip, reject), the planner goes on with the next one."""
        self._st.pending, self._st.pending_node = "fail", None
        return _fail(reason, plan=self._plan(), index=index)

    def _end(self) -> ProposedStep:
        """Every intent was worked on: finish, saying which were left undone; fail when none was done."""
        st = self._st
        n, left = len(st.intents), st.not_done
        if not left:
            return ProposedStep(thought="Every instruction of the task has been carried out.",
                                action=Action(name="finish", answer=f"Done: {n} instruction(s) carried out."),
                                plan=self._plan(), description="Finish: all instructions done")
        said = "; ".join(left)
        if len(left) >= n:
            st.pending = "fail"
            return _fail(f"None of the {n} instruction(s) was carried out: {said}.", plan=self._plan())
        answer = f"Done: {n - len(left)} of {n} instruction(s) carried out; not done: {said}."
        return ProposedStep(thought=answer, action=Action(name="finish", answer=answer), plan=self._plan(),
                            description=f"Finish: {n - len(left)} of {n} instructions done")

    def _absorb(self, obs: Observation) -> ProposedStep | None:
        """Learn from what became of the last proposal; a fail step when retries are used up."""
        st = self._st
        out = obs.last_outcome
        if st.pos >= len(st.intents):
            return None
        if st.pending == "fail" and out in ("skipped", "rejected", "taken_over"):
            # the person would not let it give up on this intent (or did it themselves): on with the next one
            if out == "taken_over":
                self._after_take_over(obs)
            else:
                self._leave(f'{st.intents[st.pos].describe()} ({"skipped" if out == "skipped" else "rejected"} '
                            "by the person)")
            return None
        if out == "taken_over" and st.pending in ("main", "explore", "page") and not (
                st.pending == "main" and st.pending_node and st.intents[st.pos].target.every):
            self._after_take_over(obs)
            return None
        if out == "skipped" and not (st.pending == "main" and st.pending_node and st.intents[st.pos].target.every):
            self._leave(f"{st.intents[st.pos].describe()} (skipped by the person)")
            return None
        if out == "rejected" and st.pending in ("main", "explore", "page"):
            st.retries += 1
            if st.pending_node:
                st.tried.add(st.pending_node)
            if st.retries > MAX_RETRIES or not st.pending_node:
                self._leave(f"{st.intents[st.pos].describe()} (rejected by the person)")
                return None
            st.rejected = True  # the next proposal for it is a close alternative, or none (_Declined)
            st.pending, st.pending_node = "", None
            return None
        if out in ("completed", "taken_over", "skipped"):
            if st.pending == "page":
                st.offset += st.page_size
            elif st.pending == "explore":
                if st.pending_node:
                    st.tried.add(st.pending_node)
            elif st.pending == "main":
                intent = st.intents[st.pos]
                if st.pending_node and intent.target.every and out != "taken_over":
                    st.done_nodes.append(st.pending_node)
                else:
                    self._advance()
        elif out in ("failed", "rejected"):
            st.retries += 1
            if st.pending_node:
                st.tried.add(st.pending_node)
            if st.retries > MAX_RETRIES or (out == "failed" and st.pending == "main" and st.retries > 1):
                why = obs.feedback or (obs.last_result.message if obs.last_result else "it did not work")
                return self._give_up(f'Gave up on "{st.intents[st.pos].describe()}" after {st.retries} attempts: '
                                     f"{why}", index=st.pos)
        st.pending, st.pending_node = "", None
        return None

    def _after_take_over(self, obs: Observation) -> None:
        """The person took the step over. The intent is done when the page shows it (the box checked, the field
        filled) or, for a click, when they clicked what it names (or acted in a way Vigil did not see); it is
        proposed again when it is seen not done. Later intents their own actions did are not proposed again."""
        st = self._st
        it = st.intents[st.pos]
        done = m.done_on_page(it, obs.snapshot, self._value_or_none)
        st.pending, st.pending_node = "", None
        theirs = _persons_actions(obs)
        if done is None and theirs and it.kind in ("click", "open") and it.target.name:
            done = m.did_by_hand(it, theirs, obs.snapshot, self._value_or_none)  # a click: what they clicked
        for k in range(st.pos + 1, len(st.intents)):
            if k not in st.done_ahead and m.did_by_hand(st.intents[k], theirs, obs.snapshot, self._value_or_none):
                st.done_ahead.add(k)
        if done is False:
            # the same element may be proposed again
            st.tried, st.explored, st.retries, st.rejected = set(), 0, 0, False
            return
        self._advance()

    def _value_or_none(self, it: Intent, snap: DomSnapshot) -> str | None:
        try:
            return self._value(it, snap)
        except _NoTarget:
            return None

    def _propose(self, kind: str, node: VirtualNode | None, action: Action, thought: str) -> ProposedStep:
        st = self._st
        st.pending, st.pending_node = kind, node.node_id if node is not None else None
        return ProposedStep(thought=thought, action=action, description=thought)

    # -- one intent → one step ------------------------------------------------------------------
    def _step(self, it: Intent, snap: DomSnapshot) -> ProposedStep | None:
        k = it.kind
        if k == "navigate":
            return self._propose("main", None, Action(name="navigate", url=_url(it.value)), f"Go to {it.value}.")
        if k == "press":
            if it.value == "__back__":
                return self._propose("main", None, Action(name="back"), "Go back.")
            return self._propose("main", None, Action(name="press", key=it.value), f"Press {it.value}.")
        if k == "read":
            return self._read(it, snap)
        if k == "switch_tab":
            return self._propose("main", None, Action(name="switch_tab", tab=int(it.value or 0)),
                                 f"Switch to tab {it.value}.")
        if k == "close_tab":
            return self._propose("main", None, Action(name="close_tab"), "Close this tab.")
        if k == "dialog":
            accept = it.value == "accept"
            return self._propose("main", None, Action(name="dialog", accept=accept, text=it.value_from or None),
                                 f"Answer the page's next dialog {'OK' if accept else 'Cancel'}"
                                 + (f' with "{it.value_from}"' if it.value_from else "") + ".")
        if k == "scroll":
            return self._scroll(it, snap)
        if k == "expand":
            return self._expand(it, snap)
        if k == "select":
            return self._select(it, snap)
        if k == "slider":
            return self._slider(it, snap)
        if k == "submit":
            return self._submit(it, snap)
        if k == "click" and it.target.result and it.target.ordinal:
            return self._nth_result(it, snap)
        roles = {"type": m.EDITABLE, "search": ("searchbox", "textbox", "combobox"), "check": m.TOGGLES,
                 "uncheck": m.TOGGLES}.get(k)
        spec = it.target
        if k == "search" and not spec.name and not spec.roles:
            spec = TargetSpec(name="search", roles=("searchbox", "textbox"))
        nodes = self._find(it, spec, snap, roles)
        if nodes is None or isinstance(nodes, ProposedStep):
            return nodes
        node = nodes[0]
        if k in ("type", "search"):
            text = self._value(it, snap)
            if node.role == "combobox" and node.tag == "select":
                return self._propose("main", node, Action(name="select", target=node.node_id, option=text),
                                     f'Choose "{text}" in {m.describe(node)}.')
            shown = "the password" if node.redacted else f'"{text}"'
            return self._propose("main", node, Action(name="type", target=node.node_id, text=text,
                                                      submit=k == "search" or it.submit),
                                 f"Type {shown} into {m.describe(node)}" + (" and submit." if k == "search" else "."))
        if k in ("check", "uncheck"):
            return self._propose("main", node, Action(name="check" if k == "check" else "uncheck",
                                                      target=node.node_id), f"{k.capitalize()} {m.describe(node)}.")
        verb = "Focus" if k == "focus" else "Open" if k == "open" else "Click"
        href = str((node.attrs or {}).get("href") or "")
        if it.new_tab and href and not href.lower().startswith(("javascript:", "#")):
            url = urllib.parse.urljoin(snap.url, href)
            return self._propose("main", node, Action(name="new_tab", url=url),
                                 f"Open {m.describe(node)} in a new tab ({url}).")
        return self._propose("main", node, Action(name="click", target=node.node_id), f"{verb} {m.describe(node)}.")

    def _read(self, it: Intent, snap: DomSnapshot) -> ProposedStep | None:
        """Read the value shown for a label; the last instruction's reading is the run's answer."""
        value = _read_value(snap, it.value_from)
        last = self._st.pos >= len(self._st.intents) - 1
        if value is None:
            if not last:
                return None  # "read the terms and check I agree": reading is not the point, go on
            raise _NoTarget(f'Could not find "{it.value_from}" on {snap.url} to read its value.')
        self._readings.append(f"{it.value_from}: {value}")
        if not last:
            return None  # more to do; the reading is kept for the answer
        return ProposedStep(thought=f'The page shows {it.value_from} as "{value}".',
                            action=Action(name="finish", answer="; ".join(self._readings)),
                            description=f"Finish: {it.value_from} is {value}")

    def _find(self, it: Intent, spec: TargetSpec, snap: DomSnapshot, roles) -> list[VirtualNode] | ProposedStep | None:
        """The node(s) to act on, an exploring step, None when a "both"/"all" intent is complete,
        or _NoTarget."""
        st = self._st
        exclude = set(st.done_nodes) | (st.tried if st.retries else set())
        found = m.ground(snap, spec, roles=roles, exclude=exclude)
        if st.rejected and not spec.every and not (
                found and (not spec.name or m.name_score(spec.name, found[0].node, spec.quoted) >= STRONG_ALTERNATIVE)):
            raise _Declined  # no look-alike, no exploring after a "no": the person decided
        if spec.every:
            if found:
                return [found[0].node]
            if st.done_nodes:
                return None
        elif found:
            if spec.quoted and found[0].score < 97 and st.explored < MAX_EXPLORE and \
                    any(c.score >= 97 for c in m.ground(snap, spec, roles=roles, rendered=False,
                                                        interactive_only=False)):
                step = self._explore(it, spec, snap, roles)  # the exact one is hidden: reveal it, not a look-alike
                if step is not None:
                    return step
            return [c.node for c in found]
        if spec.name and not roles and it.kind in ("click", "focus", "open"):
            # plain text a person would click (a file name in a tree, a label): only a close match
            text = [c for c in m.ground(snap, spec, exclude=exclude, interactive_only=False) if c.score >= 90]
            if text:
                return [text[0].node]
        step = self._explore(it, spec, snap, roles)
        if step is not None:
            return step
        near = m.closest(snap, spec)
        hint = (" Closest: " + ", ".join(m.describe(n) for n in near) + ".") if near else ""
        raise _NoTarget(f'Could not find {spec.describe()} on {snap.url}.{hint}')

    def _explore(self, it: Intent, spec: TargetSpec, snap: DomSnapshot, roles) -> ProposedStep | None:
        st = self._st
        if st.explored >= MAX_EXPLORE or not (spec.name or spec.ordinal):
            return None
        st.explored += 1
        hidden = m.ground(snap, spec, roles=roles, rendered=False, interactive_only=False) if spec.name else []
        for c in hidden[:3]:
            for opener in m.openers(snap, c.node, st.tried):
                return self._propose("explore", opener, Action(name="click", target=opener.node_id),
                                     f"{spec.describe()} is hidden; open {m.describe(opener)} to reveal it.")
        if self._may_browse:  # only when the task asks to look around ("switch between the tabs to find …")
            for ex in m.expanders(snap, st.tried):
                return self._propose("explore", ex, Action(name="click", target=ex.node_id),
                                     f"{spec.describe()} is not shown; try {m.describe(ex)}.")
        declined = [c.node for c in m.ground(snap, spec, roles=roles) if c.node.node_id in st.tried and c.node.visible]
        if declined:
            # it is in view: the person turned that step down (or it failed) — scrolling would not find another
            raise _NoTarget(f"{spec.describe()} is in view ({m.describe(declined[0])}), but the step on it was "
                            "declined or failed, and nothing else matches. Edit the step or take over.")
        if st.explored <= 2 and snap.context.page_height - snap.context.scroll_y - snap.context.viewport.height > 20:
            return self._propose("explore", None, Action(name="scroll", direction="down"),
                                 f"{spec.describe()} is not in view; scroll down.")
        return None

    def _nth_result(self, it: Intent, snap: DomSnapshot) -> ProposedStep:
        """The n-th result, counting across pages: follow "next" until the page holds it."""
        st = self._st
        n = it.target.ordinal
        if n is None:
            raise _NoTarget(f"{it.describe()} names no result number.")
        results, nxt = m.results_and_next(snap)
        if n == -1 and results:
            node = results[-1]
        elif 0 < n - st.offset <= len(results):
            node = results[n - st.offset - 1]
        elif n > st.offset + len(results) and nxt is not None and results:
            st.page_size = len(results)
            step = self._propose("page", nxt, Action(name="click", target=nxt.node_id),
                                 f"Result {n} is not on this page ({st.offset + 1}–{st.offset + len(results)}); "
                                 f"open the next page with {m.describe(nxt)}.")
            return step
        else:
            raise _NoTarget(f"There is no result {n} on {snap.url} ({st.offset + len(results)} results seen).")
        return self._propose("main", node, Action(name="click", target=node.node_id),
                             f"Click result {n}: {m.describe(node)}.")

    def _value(self, it: Intent, snap: DomSnapshot) -> str:
        text = it.value or ""
        if it.value_from:
            shown = _read_value(snap, it.value_from)
            if shown is None:
                raise _NoTarget(f'Could not find a value shown for "{it.value_from}" on {snap.url}.')
            text = shown
        return text.lower() if it.transform == "lower" else text.upper() if it.transform == "upper" else text

    def _select(self, it: Intent, snap: DomSnapshot) -> ProposedStep | None:
        want = it.value or ""
        if it.target.name or it.target.roles:  # select X in <a list>
            lists = m.ground(snap, it.target, roles=("combobox", "listbox", "radiogroup", "menu", "tablist"))
            if lists:
                node = lists[0].node
                return self._propose("main", node, Action(name="select", target=node.node_id, option=want),
                                     f'Choose "{want}" in {m.describe(node)}.')
        spec = TargetSpec(name=want, quoted=True)
        # an <option> of a list on the page
        for c in m.ground(snap, spec, roles=("option",), rendered=False) + m.ground(snap, spec, roles=("option",)):
            owner = c.node.parent
            while owner is not None and owner.role not in ("combobox", "listbox"):
                owner = owner.parent
            if owner is not None and owner.rendered:
                return self._propose("main", owner, Action(name="select", target=owner.node_id,
                                                           option=c.node.name or want),
                                     f'Choose "{c.node.name or want}" in {m.describe(owner)}.')
        toggles = m.ground(snap, spec, roles=m.TOGGLES)
        if toggles:
            node = toggles[0].node
            if (node.states or {}).get("checked") is True:
                return None  # already selected
            return self._propose("main", node, Action(name="check", target=node.node_id), f"Select {m.describe(node)}.")
        nodes = self._find(it, spec, snap, None)
        if nodes is None or isinstance(nodes, ProposedStep):
            return nodes
        return self._propose("main", nodes[0], Action(name="click", target=nodes[0].node_id),
                             f"Select {m.describe(nodes[0])}.")

    def _expand(self, it: Intent, snap: DomSnapshot) -> ProposedStep | None:
        st = self._st
        if it.target.name:
            nodes = self._find(it, it.target, snap, None)
            if nodes is None or isinstance(nodes, ProposedStep):
                return nodes
            node = nodes[0]
            if (node.states or {}).get("expanded") is True:
                return None
            return self._propose("main", node, Action(name="click", target=node.node_id), f"Expand {m.describe(node)}.")
        for ex in m.expanders(snap, st.tried | set(st.done_nodes)):
            if ex.role != "tab" or ex.states.get("expanded") is False:
                return self._propose("main", ex, Action(name="click", target=ex.node_id), f"Expand {m.describe(ex)}.")
        return None

    def _scroll(self, it: Intent, snap: DomSnapshot) -> ProposedStep | None:
        spec, d = it.target, cast(ScrollDirection, it.direction or "down")  # the task parser's words
        if not (spec.name or spec.roles):
            return self._propose("main", None, Action(name="scroll", direction=d), f"Scroll the page {d}.")
        found = m.ground(snap, spec, interactive_only=False)
        if spec.roles and not spec.name:
            found = [c for c in found if c.node.scroll] or found
        if found:
            node = found[0].node
            if d in ("top", "bottom") or node.scroll:
                return self._propose("main", node, Action(name="scroll", target=node.node_id, direction=d),
                                     f"Scroll {m.describe(node)} to the {d}." if d in ("top", "bottom")
                                     else f"Scroll {m.describe(node)} {d}.")
            return self._propose("main", node, Action(name="scroll", target=node.node_id, direction=d),
                                 f"Scroll {m.describe(node)} into view.")
        hidden = self._explore(it, spec, snap, None)
        if hidden is not None:
            return hidden
        raise _NoTarget(f"Could not find {spec.describe()} to scroll to on {snap.url}.")

    def _slider(self, it: Intent, snap: DomSnapshot) -> ProposedStep | None:
        """Set a slider with its keyboard: Home (the minimum), then arrows; reads the shown value."""
        st = self._st
        spin = [c.node for c in m.ground(snap, TargetSpec(), roles=("spinbutton",)) if c.node.tag == "input"]
        if spin and "slider" not in it.target.describe():
            return self._propose("main", spin[0], Action(name="type", target=spin[0].node_id, text=it.value or ""),
                                 f"Set {m.describe(spin[0])} to {it.value}.")
        handle = _slider_handle(snap)
        try:
            want = float(it.value or "")
        except ValueError:
            raise _NoTarget(f"{it.value!r} is not a number a slider can be set to.") from None
        if handle is None:
            raise _NoTarget(f"No slider on {snap.url} (nothing with role slider, nor a focusable handle in a track).")
        now = _slider_value(snap, handle)
        if st.explored == 0 or now is None:
            st.explored += 1
            return self._propose("explore", handle, Action(name="press", key="Home", target=handle.node_id),
                                 f"Move {m.describe(handle)} to its minimum to learn where it starts.")
        if now == want:
            return None
        if st.explored > 4:
            raise _NoTarget(f"The slider shows {now:g}, not {want:g}, after several tries.")
        st.explored += 1
        diff = int(round(want - now))
        key = "ArrowRight" if diff > 0 else "ArrowLeft"
        return self._propose("explore", handle, Action(name="press", key=key, target=handle.node_id, repeat=abs(diff)),
                             f"The slider shows {now:g}; press {key} {abs(diff)} times to reach {want:g}.")

    def _submit(self, it: Intent, snap: DomSnapshot) -> ProposedStep | None:
        for name in ([it.target.name] if it.target.name else []) + ["submit", "send", "save", "continue", "ok"]:
            found = m.ground(snap, TargetSpec(name=name), roles=("button",))
            if found:
                n = found[0].node
                return self._propose("main", n, Action(name="click", target=n.node_id), f"Submit with {m.describe(n)}.")
        return self._propose("main", None, Action(name="press", key="Enter"), "Submit with Enter.")


def _fail(reason: str, plan: list[str] | None = None, index: int | None = None) -> ProposedStep:
    return ProposedStep(thought=reason, action=Action(name="fail", reason=reason), plan=plan, plan_index=index,
                        description="Give up: " + reason[:120])


def _persons_actions(obs: Observation) -> list[tuple[Action, dict | None]]:
    """What the person did in the take-over that just ended: the actions of the run's last records by them."""
    out: list[tuple[Action, dict | None]] = []
    for rec in reversed(obs.history):
        if rec.actor != "human":
            break
        if rec.action is not None:
            out.append((rec.action, rec.target))
    return out[::-1]


def _url(v: str | None) -> str:
    v = (v or "").strip()
    return v if "://" in v or v.startswith(("about:", "data:")) else "http://" + v


_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")


def _slider_handle(snap: DomSnapshot) -> VirtualNode | None:
    """A role=slider control, else a focusable unnamed handle inside an unnamed track: the track is
    clickable, or a small box of handles (a track whose listener the snapshot counts as delegation to its
    handle is not a click target of its own: jQuery UI's slider)."""
    for n in snap.nodes():
        if n.rendered and n.role == "slider":
            return n
    for n in snap.nodes():
        p = n.parent
        if n.rendered and n.interactive and not n.name and "tabindex" in (n.attrs or {}) and p is not None \
                and not p.name and not [c for c in p.children if c.name] \
                and (p.interactive or 0 < len(p.children) <= 2):
            return n
    return None


def _slider_value(snap: DomSnapshot, handle: VirtualNode) -> float | None:
    """The slider's value: aria-valuenow / the input's value, else a number shown next to it."""
    a = handle.attrs or {}
    for v in (a.get("aria-valuenow"), handle.value if handle.tag == "input" else None):
        if v is not None and _NUMBER.match(str(v).strip()):
            return float(v)
    track = handle.parent if handle.role != "slider" else handle
    scope = track.parent if track is not None and track.parent is not None else track
    for n in (scope.iter() if scope is not None else ()):
        t = (n.text or "").strip()
        if n.rendered and _NUMBER.match(t):
            return float(t)
    return None


def _read_value(snap: DomSnapshot, label: str) -> str | None:
    """The value shown next to a label: a field's value, or the text that follows the label."""
    want = label.casefold().strip()
    nodes = snap.nodes()
    for i, n in enumerate(nodes):
        own = (n.name or n.text or "").casefold().strip().rstrip(":")
        if not own or want not in own or not n.rendered:
            continue
        if n.value:
            return n.value
        rest = (n.text or "").strip()
        if ":" in rest and rest.split(":", 1)[1].strip():
            return rest.split(":", 1)[1].strip()
        for nxt in nodes[i + 1:i + 8]:
            t = (nxt.value or nxt.text or "").strip()
            if t and nxt.rendered and want not in t.casefold():
                return t
    return None
