"""Choosing a locator for a node: the first of Playwright's preferred forms that is unique.

For the element itself, in order: test id, role + accessible name, label, placeholder, text,
then CSS (`#id`, `tag[attr="v"]`) — never on an id or name a library generated (`stable.py`:
Select2's `select2-…-result-x4ki-…`, React's `:r1:`, `mui-123` …), which the next load changes.
The chain starts with a `frame_locator` per frame between the page and the node. When nothing is
unique in the frame, the nearest ancestor that has a unique locator of its own (a shadow host, a
form, a row, a dialog …) scopes it; `nth` is used only when that fails too, on the shortest form
inside the nearest unique scope.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from engine.snapshot.dom_snapshot import DomSnapshot
from engine.snapshot.locators.match import (
    FrameScope,
    SnapshotScopes,
    descendants,
    keys,
    label_texts,
    name_official,
    node_text,
    predicate,
    pw_order,
    resolve,
    role_ok,
    whole_text,
)
from engine.snapshot.locators.model import Locator, Step, css_str
from engine.snapshot.locators.stable import generated_id
from engine.snapshot.vnode import VirtualNode

_IDENT = re.compile(r"^[A-Za-z_][\w-]*$")
CSS_ATTRS = ("data-testid", "data-test", "data-cy", "name", "aria-label", "title", "placeholder", "type", "href",
             "role")
MAX_TEXT = 80          # longer texts make poor locators
MAX_ANCESTORS = 12     # how far up a scope is looked for
MAX_SCOPE_NODES = 4000  # a scope larger than this is not scanned for uniqueness


class Locators:
    """Locators for the nodes of one snapshot (indexes built once, on first use)."""

    def __init__(self, snap: DomSnapshot):
        self.snap = snap
        self.scopes = SnapshotScopes(snap)
        self._memo: dict[str, Locator | None] = {}
        self._anchors: dict[str, tuple[Step, ...] | None] = {}   # per ancestor: its own unique locator
        self._pools: dict[str, list[VirtualNode]] = {}           # per ancestor: its descendants in its frame

    def for_node(self, node: VirtualNode | str) -> Locator | None:
        """The locator of a node, or None when Playwright cannot reach it (`unreachable` says why)."""
        n = self.snap.get(node) if isinstance(node, str) else node
        if n.in_closed_shadow:
            return None
        if n.node_id not in self._memo:
            self._memo[n.node_id] = self._build(n)
        return self._memo[n.node_id]

    def unreachable(self, node: VirtualNode | str) -> str | None:
        """Why no Playwright locator can reach the node, or None when one can."""
        n = self.snap.get(node) if isinstance(node, str) else node
        if n.in_closed_shadow:
            return ("inside a closed shadow root, which Playwright's locators cannot enter "
                    "(Vigil reaches it through the page itself)")
        if self.for_node(n) is None:
            return "in a frame whose <iframe> has no locator of its own"
        return None

    def resolve(self, loc: Locator) -> list[VirtualNode]:
        return resolve(loc, self.snap, self.scopes)

    def alternatives(self, node: VirtualNode | str) -> list[Locator]:
        """Every locator of the node that is unique in this snapshot, the chosen one first: what is
        kept of a node to find it again once its ID goes stale (a renamed button keeps its test id
        or #id; a moved one keeps its name)."""
        n = self.snap.get(node) if isinstance(node, str) else node
        if n.in_closed_shadow:
            return []
        best = self.for_node(n)
        out = [best] if best is not None else []
        prefix = self._frame_chain(n.frame_id)
        if prefix is None:
            return out
        fs = self.scopes.scope(n.frame_id)
        for step in own_steps(n, fs):
            loc = Locator((*prefix, step))
            if loc not in out and self._unique_in_frame(step, n, fs):
                out.append(loc)
        return out

    # -- building --------------------------------------------------------------------------
    def _build(self, n: VirtualNode) -> Locator | None:
        prefix = self._frame_chain(n.frame_id)
        if prefix is None:
            return None
        fs = self.scopes.scope(n.frame_id)
        for step in own_steps(n, fs):
            if self._unique_in_frame(step, n, fs):
                return Locator((*prefix, step))
        # a scope: the nearest ancestor with a unique locator of its own
        scope_steps: tuple[Step, ...] | None = None
        scope_node: VirtualNode | None = None
        p, depth = n.parent, 0
        while p is not None and p.frame_id == n.frame_id and depth < MAX_ANCESTORS:
            if p.node_id not in self._anchors:
                self._anchors[p.node_id] = self._anchor(p, fs)
            anchor = self._anchors[p.node_id]
            if anchor is not None:
                pool = self._pool(p)
                if len(pool) > MAX_SCOPE_NODES:
                    break
                for step in own_steps(n, fs):
                    if _only(step, n, pool, fs):
                        return Locator((*prefix, *anchor, step))
                if scope_steps is None:
                    scope_steps, scope_node = anchor, p
            p, depth = p.parent, depth + 1
        # nth: the shortest form, counted inside the nearest unique scope (or the frame)
        pool = self._pool(scope_node) if scope_node is not None else fs.nodes
        base = _nth_form(n, fs, pool)
        pred = predicate(base, fs.labels)
        # get_by_role skips hidden elements, so its index counts rendered ones
        hits = pw_order([m for m in pool if pred(m) and (m.rendered or base.kind != "role")], scope_node, self.scopes)
        if n not in hits:
            return None
        return Locator((*prefix, *(scope_steps or ()), base, Step("nth", str(hits.index(n)))))

    def _pool(self, p: VirtualNode) -> list[VirtualNode]:
        got = self._pools.get(p.node_id)
        if got is None:
            got = self._pools[p.node_id] = list(descendants(p, p.frame_id))
        return got

    def _frame_chain(self, frame_id: str) -> tuple[Step, ...] | None:
        chain: list[Step] = []
        fid, guard = frame_id, 0
        while fid != self.scopes.main_frame and guard < 16:
            owner_id = self.scopes.owner.get(fid)
            owner = self.scopes.by_id.get(owner_id or "")
            if owner is None:
                return None
            fs = self.scopes.scope(owner.frame_id)
            sel = next((s.value for s in css_steps(owner, fs) if self._unique_in_frame(s, owner, fs)), None)
            if sel is None:
                hits = [m for m in fs.nodes if m.tag == "iframe" or m.tag == "frame"]
                if owner not in hits:
                    return None
                sel = f"{owner.tag} >> nth={hits.index(owner)}"
            chain.append(Step("frame", sel))
            fid, guard = owner.frame_id, guard + 1
        return tuple(reversed(chain))

    def _unique_in_frame(self, step: Step, n: VirtualNode, fs: FrameScope) -> bool:
        if step.kind == "css":
            return _only(step, n, fs.nodes, fs)
        key: object = (step.value, step.name) if step.kind == "role" else step.value
        hits = fs.index(step.kind).get(key, [])
        return len(hits) == 1 and hits[0] is n

    def _anchor(self, p: VirtualNode, fs: FrameScope) -> tuple[Step, ...] | None:
        """A locator for a scope: test id, #id or an attribute, or a role with a name."""
        a = p.attrs or {}
        if "data-testid" in a and self._unique_in_frame(Step("testid", a["data-testid"]), p, fs):
            return (Step("testid", a["data-testid"]),)
        for s in css_steps(p, fs):
            if self._unique_in_frame(s, p, fs):
                return (s,)
        if role_ok(p) and name_official(p, fs.labels):
            s = Step("role", p.role, p.name)
            if self._unique_in_frame(s, p, fs):
                return (s,)
        return None


def own_steps(n: VirtualNode, fs: FrameScope) -> Iterator[Step]:
    """Candidate steps for the element itself, in Playwright's order of preference."""
    a = n.attrs or {}
    if a.get("data-testid"):
        yield Step("testid", a["data-testid"])
    if role_ok(n):
        if name_official(n, fs.labels):
            yield Step("role", n.role, n.name)
        else:
            yield Step("role", n.role)
    for t in dict.fromkeys(label_texts(n, fs.labels)):
        if t:
            yield Step("label", t)
    if a.get("placeholder"):
        yield Step("placeholder", a["placeholder"])
    t = node_text(n)
    if t and len(t) <= MAX_TEXT and whole_text(n, t) and t in keys("text", n, fs.labels):
        yield Step("text", t)
    yield from css_steps(n, fs)


def css_steps(n: VirtualNode, fs: FrameScope) -> Iterator[Step]:
    """`#id`, then `tag[attr="v"]`: none on an id or name a library generated (it changes by the next run)."""
    a = n.attrs or {}
    ident = a.get("id")
    known = _FrameIds(fs)
    if ident and not generated_id(ident, known):
        yield Step("css", f"#{ident}" if _IDENT.match(ident) else f"{n.tag}[id={css_str(ident)}]")
    for k in CSS_ATTRS:
        v = a.get(k)
        if v and "\n" not in v and len(v) <= 120 and not (k in _ID_LIKE and generated_id(v, known)):
            yield Step("css", f"{n.tag}[{k}={css_str(v)}]")


_ID_LIKE = ("name",)  # attributes a library fills with a generated value as it does ids (an iframe's name)


class _FrameIds:
    """The ids of a frame, indexed only when asked (a Select2 container's id is checked against its <select>'s)."""

    def __init__(self, fs: FrameScope):
        self.fs = fs

    def __contains__(self, ident: object) -> bool:
        return ident in self.fs.index("id")


def _nth_form(n: VirtualNode, fs: FrameScope, pool: list[VirtualNode] | tuple[VirtualNode, ...]) -> Step:
    """The role (and name) when every element with it here is rendered — Playwright's idea of a
    hidden element is not always Vigil's, and get_by_role skips hidden ones — else the tag."""
    if role_ok(n):
        step = Step("role", n.role, n.name if name_official(n, fs.labels) else "")
        pred = predicate(step, fs.labels)
        if all(m.rendered for m in pool if pred(m)):
            return step
    return Step("css", n.tag)


def _only(step: Step, n: VirtualNode, pool: list[VirtualNode] | tuple[VirtualNode, ...], fs: FrameScope) -> bool:
    pred = predicate(step, fs.labels)
    found = False
    for m in pool:
        if pred(m):
            if m is not n or found:
                return False
            found = True
    return found


def locator_for(snap: DomSnapshot, node: VirtualNode | str) -> Locator | None:
    """The locator of one node (builds the snapshot's indexes: for many nodes use `Locators`)."""
    return Locators(snap).for_node(node)
