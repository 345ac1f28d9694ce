"""Grounding a `TargetSpec` in a snapshot without a model: role family, fuzzy name match
(rapidfuzz), ordinals, "both"/"all", and anchors ("the Archive button next to Invoice 4411").

Scores are 0–100. A named target must reach `MIN_NAME_SCORE` against the node's accessible name
(or its placeholder, title, value or own text); below that nothing is returned and the planner
says what it could not find instead of guessing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rapidfuzz import fuzz

from engine.names import norm
from engine.planners.task_parse import Intent, TargetSpec

if TYPE_CHECKING:
    from collections.abc import Callable

    from engine.models import Action
    from engine.snapshot.dom_snapshot import DomSnapshot
    from engine.snapshot.vnode import VirtualNode

MIN_NAME_SCORE = 75
EDITABLE = ("textbox", "searchbox", "combobox", "spinbutton")
TOGGLES = ("checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio")
ROW_ROLES = ("row", "listitem", "article", "group", "form", "dialog", "region")
ROW_TAGS = ("tr", "li", "article", "section", "fieldset", "form", "dialog")
SYNONYMS = {"x": ("close", "×", "✕", "✖", "dismiss"), "close": ("x", "×", "✕"), "login": ("log in", "sign in"),
            "log in": ("login", "sign in"), "sign in": ("login", "log in"), "ok": ("okay",), "okay": ("ok",)}


@dataclass
class Candidate:
    node: VirtualNode
    score: float
    order: int


def labels(node: VirtualNode) -> list[str]:
    """What a person could call this node: name, placeholder, title, aria-label, own text, value."""
    a = node.attrs or {}
    out = [node.name, a.get("placeholder"), a.get("title"), a.get("aria-label"), a.get("value"), node.text]
    if node.value and node.role in ("button", "combobox"):
        out.append(node.value)
    if node.tag == "input" and a.get("type") in ("date", "time", "datetime-local", "month", "week", "email", "password",
                                                 "search", "tel", "url", "number", "color", "file"):
        out.append(a["type"].replace("datetime-local", "date and time"))  # "the date", "the email field"
    return [norm(x) for x in out if x and norm(x)]


def name_score(want: str, node: VirtualNode, quoted: bool = False) -> float:
    w = norm(want)
    if not w:
        return 0.0
    best = 0.0
    alts = (w,) + SYNONYMS.get(w, ())
    for lab in labels(node):
        for a in alts:
            if lab == a:
                return 100.0
            if re.sub(r"[^\w ]", "", lab).strip() == re.sub(r"[^\w ]", "", a).strip() and a.strip():
                best = max(best, 97.0)
            elif re.search(rf"(^|\W){re.escape(a)}(\W|$)", lab):
                # the wanted words stand whole inside a longer label ("Submit" in "Submit order")
                best = max(best, 88.0 - min(40.0, (len(lab) - len(a)) / 3))
            elif not quoted and len(a) >= 3:
                best = max(best, fuzz.token_set_ratio(a, lab) * 0.95, fuzz.partial_ratio(a, lab) * 0.85)
            elif quoted and len(a) >= 4:
                best = max(best, fuzz.ratio(a, lab) * 0.9)
    return best


def _row(node: VirtualNode) -> VirtualNode | None:
    return node.container(ROW_ROLES, ROW_TAGS)


def _anchor_bonus(node: VirtualNode, anchors: list[VirtualNode]) -> float:
    if not anchors:
        return 0.0
    row = _row(node)
    best = 0.0
    for a in anchors:
        if row is not None and _row(a) is row:
            return 40.0
        (x1, y1, w1, h1), (x2, y2, w2, h2) = node.bounds, a.bounds
        dy = abs((y1 + h1 / 2) - (y2 + h2 / 2))
        dx = abs((x1 + w1 / 2) - (x2 + w2 / 2))
        best = max(best, 30.0 - dy / 4 - dx / 40)
    return best


def find_anchor_nodes(snap: DomSnapshot, text: str) -> list[VirtualNode]:
    want = norm(text)
    return [n for n in snap.nodes() if n.rendered and want and (want in norm(n.text) or want == norm(n.name))]


def ground(snap: DomSnapshot, spec: TargetSpec, *, roles: Iterable[str] | None = None, rendered: bool = True,
           exclude: set[str] | frozenset = frozenset(), interactive_only: bool = True) -> list[Candidate]:
    """Nodes that match `spec`, best first (or in document order for ordinals and "both")."""
    want_roles = tuple(roles) if roles else ()
    spec_roles = spec.roles
    anchors = find_anchor_nodes(snap, spec.anchor) if spec.anchor else []
    out: list[Candidate] = []
    for i, n in enumerate(snap.nodes()):
        if n.node_id in exclude or (rendered and not n.rendered) or (not rendered and n.rendered):
            continue
        if interactive_only and not n.interactive and not (spec_roles and n.role in spec_roles):
            continue
        if want_roles and n.role not in want_roles:
            continue
        score = 60.0
        if spec_roles:
            if n.role in spec_roles:
                score += 15
            elif not spec.name:
                continue
            else:
                score -= 10
        if spec.name:
            ns = name_score(spec.name, n, spec.quoted)
            if ns < MIN_NAME_SCORE:
                continue
            score = ns + (score - 60.0)
        if n.visible:
            score += 3
        if n.tier == "semantic":
            score += 2  # a real button beats a div that merely listens for clicks
        if n.occluded:
            score -= 5
        if anchors:
            score += _anchor_bonus(n, anchors)
        out.append(Candidate(n, score, i))
    if spec.name and not spec.quoted:
        # a partial match loses to an exact one: drop weak ones when a strong one exists
        top = max((c.score for c in out), default=0)
        out = [c for c in out if c.score >= top - 15]
    if spec.ordinal is not None or spec.every:
        out.sort(key=lambda c: c.order)
        if spec.ordinal is not None:
            k = spec.ordinal - 1 if spec.ordinal > 0 else len(out) - 1
            return [out[k]] if 0 <= k < len(out) else []
        return out
    out.sort(key=lambda c: (-c.score, c.order))
    return out


def closest(snap: DomSnapshot, spec: TargetSpec, limit: int = 4) -> list[VirtualNode]:
    """The nodes most like what was asked for, for an honest "could not find" message."""
    want = norm(spec.name)
    scored = []
    for n in snap.nodes():
        if not n.interactive or not n.rendered:
            continue
        s = max((fuzz.WRatio(want, lab) for lab in labels(n)), default=0) if want else 0
        if spec.roles and n.role in spec.roles:
            s += 20
        scored.append((s, n))
    scored.sort(key=lambda t: -t[0])
    return [n for s, n in scored[:limit] if s >= 60]


def openers(snap: DomSnapshot, hidden: VirtualNode, tried: set[str]) -> list[VirtualNode]:
    """Rendered controls that may reveal a hidden node. From its outermost hidden ancestor H: the
    tab that labels H when H is a tab panel, then controls just before H among its siblings (an
    accordion header, a tree folder's toggle and label) — never content elsewhere on the page."""
    h = hidden
    while h.parent is not None and not h.parent.rendered:
        h = h.parent
    out: list[VirtualNode] = []
    if h.role == "tabpanel" and h.name:
        out += [n for n in snap.nodes() if n.role == "tab" and n.rendered and norm(n.name) == norm(h.name)]
    if h.parent is not None:
        sibs = h.parent.children
        for sib in reversed(sibs[:sibs.index(h)]):
            found = [n for n in sib.iter() if n.rendered and n.interactive and n.depth <= h.depth + 2]
            out += sorted(found, key=lambda n: ((n.states or {}).get("expanded") is not False, n.depth))
            if found:
                break
    seen: set[str] = set()
    unique = []
    for n in out:
        if n.node_id not in tried and n.node_id not in seen:
            seen.add(n.node_id)
            unique.append(n)
    return unique


def expanders(snap: DomSnapshot, tried: set[str]) -> list[VirtualNode]:
    """Collapsed sections and unselected tabs, in document order."""
    out = []
    for n in snap.nodes():
        if not n.rendered or n.node_id in tried:
            continue
        st = n.states or {}
        if st.get("expanded") is False or (n.role == "tab" and not st.get("selected")) or \
                (n.role == "treeitem" and st.get("expanded") is False):
            out.append(n)
    return out


PAGER = re.compile(r"^(\d+|[<>«»‹›]+|next|next page|previous|prev|previous page|first|last|more|older|newer)$", re.I)


def results_and_next(snap: DomSnapshot) -> tuple[list[VirtualNode], VirtualNode | None]:
    """Result links on this page (pagination excluded), and the control that shows the next page."""
    links = [n for n in snap.nodes() if n.rendered and n.role == "link" and n.name]
    results = [n for n in links if not PAGER.match(n.name.strip())]
    pager = [n for n in links if PAGER.match(n.name.strip())]
    nxt = next((n for n in pager if n.name.strip().casefold() in (">", "›", "»", "next", "next page", "more")), None)
    if nxt is None:
        current = next((n for n in pager if (n.states or {}).get("selected") or (n.attrs or {}).get("aria-current")),
                       None)
        nums = [n for n in pager if n.name.strip().isdigit()]
        if current is not None and current.name.strip().isdigit():
            nxt = next((n for n in nums if int(n.name) == int(current.name) + 1), None)
    return results, nxt


def describe(n: VirtualNode) -> str:
    return f'{n.role} "{n.name}" [{n.node_id}]' if n.name else f"{n.role} [{n.node_id}]"


# -- whether an intent is done -------------------------------------------------------------------
def done_on_page(it: Intent, snap: DomSnapshot, value_of: Callable[[Intent, DomSnapshot], str | None]) -> bool | None:
    """Whether the page shows the intent done — its box checked (unchecked), its field holding the text, its list
    showing the option — or None when the page cannot tell (a click leaves nothing to see; the target is not
    found; a secret field's value is not shown). `value_of` gives the text a type intent puts in."""
    k, spec = it.kind, it.target
    if k in ("check", "uncheck") and spec.name:
        found = ground(snap, spec, roles=TOGGLES)
        if not found:
            return None
        return ((found[0].node.states or {}).get("checked") is True) == (k == "check")
    if k == "type" and spec.name:
        text = value_of(it, snap)
        found = ground(snap, spec, roles=EDITABLE)
        if text is None or not found or found[0].node.redacted:
            return None
        return norm(found[0].node.value) == norm(text)
    if k == "select" and spec.name and it.value:
        found = ground(snap, spec, roles=("combobox", "listbox"))
        if not found or found[0].node.tag != "select":
            return None
        return norm(found[0].node.value) == norm(it.value)
    return None


def did_by_hand(it: Intent, actions: list[tuple[Action, dict | None]], snap: DomSnapshot,
                value_of: Callable[[Intent, DomSnapshot], str | None]) -> bool:
    """Whether the person's own actions of a take-over (each with the node it was on, as recorded) did the intent:
    the page shows it done, or, for a click, they clicked what it names."""
    shown = done_on_page(it, snap, value_of)
    if shown is not None:
        return shown
    if it.kind not in ("click", "open", "focus", "submit") or not it.target.name:
        return False
    for action, target in actions:
        if action.name in ("click", "double_click") and target and _names_fit(it.target, target):
            return True
    return False


def _names_fit(spec: TargetSpec, target: dict) -> bool:
    """A recorded target (`{"role": …, "name": …}`) is what the spec names: the same words, or nearly."""
    if spec.roles and target.get("role") not in spec.roles:
        return False
    want, have = norm(spec.name), norm(target.get("name"))
    return bool(want and have) and (want == have or fuzz.ratio(want, have) >= 90)
