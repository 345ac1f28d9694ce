"""Matching a locator against a snapshot, the way Playwright would match it against the page.

Each kind of step has a predicate over snapshot nodes that follows Playwright's rule for it:
`get_by_role` sees only rendered elements with that role (and exact name); `get_by_test_id`
reads `data-testid`; `get_by_label` an `aria-label` or a `<label>`'s text; `get_by_placeholder`
the placeholder; `get_by_text` the innermost elements whose whole text is the text; CSS the
subset Vigil writes (`#id`, `tag`, `[attr="v"]`, `tag#id[attr="v"]`). A locator on a page looks
in one frame (shadow roots included), a chained one in its scope's descendants, a
`frame_locator` in the frame its `<iframe>` holds.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from engine.snapshot.locators.css import css_predicate
from engine.snapshot.locators.model import Locator, Step
from engine.snapshot.locators.roles import own_aria_role
from engine.snapshot.vnode import VirtualNode

if TYPE_CHECKING:
    from engine.snapshot.dom_snapshot import DomSnapshot

Pred = Callable[[VirtualNode], bool]
_INDEXED = frozenset({"testid", "role", "label", "placeholder", "text"})
def norm_text(s: str | None) -> str:
    return " ".join((s or "").split())


def node_text(n: VirtualNode) -> str:
    """What get_by_text compares with: the element's text, or a button input's value."""
    if n.tag == "input" and (n.attrs or {}).get("type") in ("button", "submit", "reset"):
        return norm_text(n.value or n.name)
    return norm_text(n.text)


def whole_text(n: VirtualNode, t: str) -> bool:
    """The node's text is all of its text content: it has no child elements, or its name (read
    from its content) says the same (a text block's own text leaves out its links and code). Only
    for rendered nodes: the text of a hidden one may have left hidden parts out."""
    return n.rendered and (not n.children or norm_text(n.name) == t or n.tag == "input")


class FrameScope:
    """The snapshot's nodes of one frame, indexed by what the locator steps look at."""

    def __init__(self, nodes: list[VirtualNode], labels: dict[str, list[str]]):
        self.nodes = nodes
        self.labels = labels  # element id → texts of the <label for=id> elements naming it
        self._index: dict[str, dict[object, list[VirtualNode]]] = {}

    def index(self, kind: str) -> dict[object, list[VirtualNode]]:
        got = self._index.get(kind)
        if got is None:
            got = defaultdict(list)
            for n in self.nodes:
                for k in keys(kind, n, self.labels):
                    got[k].append(n)
            self._index[kind] = got
        return got


def keys(kind: str, n: VirtualNode, labels: dict[str, list[str]]) -> Iterator[object]:
    """The index keys under which a node is found by a step of this kind."""
    a = n.attrs or {}
    if kind == "testid":
        if "data-testid" in a:
            yield a["data-testid"]
    elif kind == "role":
        # hidden elements too: Playwright's idea of hidden is not always Vigil's (an <option> of a
        # hidden <select>), so counting them keeps a role locator from matching two elements
        if n.role:
            yield (n.role, "")
            yield (n.role, n.name or "")
    elif kind == "label":
        yield from label_texts(n, labels)
    elif kind == "placeholder":
        if "placeholder" in a:
            yield a["placeholder"]
    elif kind == "text":
        t = node_text(n)
        if t and not any(node_text(c) == t for c in n.children):
            yield t
    elif kind == "id":
        if "id" in a:
            yield a["id"]
    elif kind == "tag":
        yield n.tag


def label_texts(n: VirtualNode, labels: dict[str, list[str]]) -> list[str]:
    a = n.attrs or {}
    out = []
    if a.get("aria-label"):
        out.append(norm_text(a["aria-label"]))
    if a.get("id") and a["id"] in labels:
        out.extend(labels[a["id"]])
    p = n.parent
    for _ in range(3):  # a <label> wrapping the control
        if p is None:
            break
        if p.tag == "label" and n.tag in ("input", "select", "textarea", "button") and (p.text or p.name):
            out.append(norm_text(p.text or p.name))
            break
        p = p.parent
    return out


def predicate(step: Step, labels: dict[str, list[str]]) -> Pred:
    k, v = step.kind, step.value
    if k == "role":
        name = step.name
        return lambda n: n.role == v and (not name or (n.name or "") == name)
    if k == "css":
        return css_predicate(v)
    if k in ("testid", "label", "placeholder", "text"):
        return lambda n: v in keys(k, n, labels)
    raise ValueError(f"no predicate for a {k} step")


class SnapshotScopes:
    """Per-frame scopes of one snapshot, and the <iframe> node that holds each child frame."""

    def __init__(self, snap: DomSnapshot):
        by_frame: dict[str, list[VirtualNode]] = defaultdict(list)
        labels: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        self.pos: dict[int, int] = {}      # id(node) → its place in the snapshot's (flat tree) pre-order
        tops = False
        for i, n in enumerate(snap.nodes()):
            self.pos[id(n)] = i
            tops = tops or n.shadow_top
            if n.in_closed_shadow:  # Playwright does not see into closed shadow roots: neither may its twin here
                continue
            by_frame[n.frame_id].append(n)
            if n.tag == "label" and (n.attrs or {}).get("for"):
                t = norm_text(n.text or n.name)
                if t:
                    labels[n.frame_id][n.attrs["for"]].append(t)
        # a snapshot that marks the tops of shadow trees orders matches exactly as Playwright does; an older
        # stored one only knows light from shadow
        self.exact_order = tops
        self._scope_keys: dict[int, tuple[int, ...]] = {}
        self.frames = {fid: FrameScope(nodes, dict(labels.get(fid, {}))) for fid, nodes in by_frame.items()}
        root = snap.root
        self.main_frame = root.frame_id if root is not None else ""
        self.owner: dict[str, str] = {}    # child frame id → its <iframe> node id
        self.by_id = snap.node_map
        for f in getattr(snap, "frames", ()):
            if f.owner_node_id:
                self.owner[f.frame_id] = f.owner_node_id
        self.child_frame = {v: k for k, v in self.owner.items()}  # <iframe> node id → frame id

    def scope(self, frame_id: str) -> FrameScope:
        return self.frames.get(frame_id) or FrameScope([], {})

    def order_key(self, n: VirtualNode) -> tuple[int, ...]:
        """Where Playwright lists `n` among the matches of a query that pierces shadow roots: each tree
        scope's own elements in document order, then, host by host in that order, what is in their shadow
        roots (the same rule, recursively); from an element, its shadow root comes before those of its
        descendants. As a sort key: the scope's key, then (0, document order) — a scope's key being its
        host's scope key, then (1, the host's document order)."""
        return (*self._scope_key(n), 0, self.pos.get(id(n), 0))

    def _scope_key(self, n: VirtualNode) -> tuple[int, ...]:
        got = self._scope_keys.get(id(n))
        if got is not None:
            return got
        chain = []  # n and its ancestors in the same tree scope, up to one whose key is known or the top
        p = n
        while True:
            if id(p) in self._scope_keys:
                key = self._scope_keys[id(p)]
                break
            chain.append(p)
            if p.shadow_top and p.parent is not None:
                host = p.parent
                key = (*self._scope_key(host), 1, self.pos.get(id(host), 0))
                break
            if p.parent is None or p.parent.frame_id != p.frame_id:
                key = ()
                break
            p = p.parent
        for m in chain:
            self._scope_keys[id(m)] = key
        return key


def descendants(root: VirtualNode, frame_id: str) -> Iterator[VirtualNode]:
    for n in root.iter():
        if n is not root and n.frame_id == frame_id and not n.in_closed_shadow:
            yield n


def resolve(loc: Locator, snap: DomSnapshot, scopes: SnapshotScopes | None = None) -> list[VirtualNode]:
    """The snapshot nodes the locator matches (document order). A frame step that does not lead
    to exactly one <iframe> matches nothing."""
    sc = scopes or SnapshotScopes(snap)
    frame = sc.main_frame
    roots: list[VirtualNode] | None = None  # None: the whole frame
    current: list[VirtualNode] = []
    prev = ""
    for step in loc.steps:
        kind, prev = prev, step.kind
        if step.kind == "nth":
            if kind == "role":  # get_by_role skips hidden elements: its index counts rendered ones
                current = [m for m in current if m.rendered]
            i = int(step.value)
            current = [current[i]] if -len(current) <= i < len(current) else []
            roots = current
            continue
        if step.kind == "frame":
            sel, _, nth = step.value.partition(" >> nth=")
            owners = _find(Step("css", sel), sc, frame, roots)
            if nth:
                owners = owners[int(nth):int(nth) + 1] if nth.isdigit() else []
            if len(owners) != 1 or owners[0].node_id not in sc.child_frame:
                return []
            frame = sc.child_frame[owners[0].node_id]
            roots = [owners[0]]
            current = []
            continue
        current = _find(step, sc, frame, roots)
        roots = current
    return current


def _find(step: Step, sc: SnapshotScopes, frame: str, roots: list[VirtualNode] | None) -> list[VirtualNode]:
    fs = sc.scope(frame)
    whole = roots is None or (len(roots) == 1 and roots[0].node_id in sc.child_frame)
    if whole and step.kind in _INDEXED:  # the frame's index answers at once (same rule as the predicate)
        key: object = (step.value, step.name) if step.kind == "role" else step.value
        return pw_order(list(fs.index(step.kind).get(key, [])), None, sc)
    if whole:
        pool: Iterable[VirtualNode] = fs.nodes
    else:
        assert roots is not None
        pool = list({id(n): n for r in roots for n in descendants(r, frame)}.values())
    pred = predicate(step, fs.labels)
    scope = roots[0] if roots and len(roots) == 1 else None
    return pw_order([n for n in pool if pred(n)], scope, sc)


def pw_order(nodes: list[VirtualNode], scope: VirtualNode | None, sc: SnapshotScopes) -> list[VirtualNode]:
    """The order Playwright lists matches in when it pierces shadow roots (`SnapshotScopes.order_key`;
    the same key serves a query from the frame and one from an element). A snapshot stored before the
    tops of shadow trees were marked only tells light from shadow: the light DOM's matches first."""
    if sc.exact_order:
        return sorted(nodes, key=sc.order_key)
    if scope is not None and scope.in_shadow:
        return nodes
    return sorted(nodes, key=lambda n: n.in_shadow)


_F_HIDDEN, _ARIA_HIDDEN = 2048, 1  # the walker's "no person sees it" flag, and its reason aria-hidden (bits 12-14)


def role_ok(node: VirtualNode) -> bool:
    """get_by_role may be written for this node: its role is its own ARIA role, it is rendered, and it is not
    under aria-hidden (get_by_role leaves such elements out: a library's hidden native <select>, as Select2's)."""
    aria_hidden = bool(node.flags & _F_HIDDEN) and (node.flags >> 12) & 7 == _ARIA_HIDDEN
    return node.rendered and not aria_hidden and bool(own_aria_role(node))


_FIELD_TAGS = ("input", "textarea", "select")
_NAMED_INPUTS = ("submit", "reset", "button", "image")


def name_official(n: VirtualNode, labels: dict[str, list[str]]) -> bool:
    """Whether the node's name is one Playwright computes too. Vigil names an unlabelled field
    from the text before it (label hunting); Playwright leaves it unnamed, so such a name is only
    trusted when it is the field's aria-label, title, placeholder or <label>."""
    if not n.name:
        return False
    a = n.attrs or {}
    if n.tag not in _FIELD_TAGS and n.role not in ("textbox", "combobox"):
        return True
    if n.tag == "input" and (a.get("type") or "").lower() in _NAMED_INPUTS:
        return True
    official = {norm_text(a.get(k)) for k in ("aria-label", "title") if a.get(k)}
    if n.tag in ("input", "textarea") and a.get("placeholder"):
        official.add(norm_text(a["placeholder"]))
    official.update(label_texts(n, labels))
    return n.name in official


def match_selector(snap: DomSnapshot, selector: str) -> list[VirtualNode]:
    """Every node of the snapshot (any frame, shadow roots included) a CSS selector matches;
    ValueError for a selector outside what a snapshot can answer (see `locators.css`)."""
    pred = css_predicate(selector)
    return [n for n in snap.nodes() if pred(n)]
