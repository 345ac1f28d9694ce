"""Incremental snapshots, Python side: the rows each frame's walker last sent, and how a walk went.

The walker (the parts in js/walker/, joined by engine.browser.target.walker_source) keeps its
previous walk in the page and re-walks only what can have changed; it then sends only the rows that
differ from the ones the caller says it holds (`base`: the page-side token and sequence number of
those rows) and the parents its runs of unchanged rows do not imply (`pd`, the compact form; `par`,
every row's parent, is still read when sent). `RowMemo` holds those rows per frame, rebuilds the
complete list from a diff, and holds the last tree built from them; `build_reusing` makes the next
tree from it, with new nodes only for changed rows (and copies of their ancestors), so Python's
share of an incremental snapshot follows the size of the change, not of the page. A forced walk
always builds afresh: it is the reference the tests compare with. `WalkInfo` is what a snapshot says
of its walk: `full` or `incremental`, why, how many rows were walked again and nodes made.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

from engine.snapshot.stylesheets import CrossOriginCss
from engine.snapshot.vnode import VirtualNode, node_from_row


@dataclass(frozen=True)
class WalkInfo:
    """How a snapshot was taken: `mode` is `full` or `incremental` (or `stored` for a loaded one);
    `reason` says why a walk was full or what an incremental one re-walked; `dirty` is the number of
    rows computed again (every row in a full walk), `copied` the rows carried over unchanged."""

    mode: str = "full"
    reason: str = ""
    dirty: int = 0
    copied: int = 0
    nodes_made: int = -1  # Python nodes made anew (-1: every node; else the rest were reused)

    def describe(self) -> str:
        if self.mode == "incremental":
            made = f", {self.nodes_made} nodes made" if self.nodes_made >= 0 else ""
            return f"incremental ({self.dirty} re-walked, {self.copied} kept{made})"
        return f"{self.mode} ({self.reason})" if self.reason else self.mode


@dataclass
class _Held:
    """One frame's rows as last received (`par`: each row's parent index; a row's own field 0 may be
    stale after a diff), the nodes last built from them, and which of those were built from a row
    changed after the walk (`mod`: cross-frame occlusion), so not from the row held here."""

    tok: str
    seq: int
    rows: list
    par: list
    nodes: list | None = None
    mod: frozenset = frozenset()


@dataclass(frozen=True)
class Prev:
    """What a diff is against: the held nodes and parent indices, the unchanged runs and the changed rows."""

    nodes: list
    par: list
    same: list
    ch: list
    mod: frozenset = frozenset()


@dataclass
class Built:
    """A page's tree: root, the main document's nodes in row order, ID lookup, the counts a snapshot
    reports; per document its nodes in row order and the rows changed after the walk (`mods`), and
    the documents' shape: (frame, parent frame, owner node ID) of each, in walk order."""

    frame_id: str
    root: VirtualNode | None
    nodes: list
    by_id: dict
    counts: dict
    made: int = -1  # nodes made anew when built from the last tree (-1: all of them, built afresh)
    docs: dict = field(default_factory=dict)
    mods: dict = field(default_factory=dict)
    shape: tuple = ()


class RowMemo:
    """Per frame: (page token, sequence number, rows) of the last rows received from its walker, and
    the last single-document tree built from them (what an incremental build reuses)."""

    def __init__(self) -> None:
        self._rows: dict[str, _Held] = {}
        self.last: Built | None = None
        self.css = CrossOriginCss()  # the sheets each frame's walker could not read, as the browser reads them

    def opts_for(self, frame_id: str, opts: dict, *, full: bool) -> dict:
        held = self._rows.get(frame_id)
        out = dict(opts)
        if full:
            out["full"] = True
        if held is not None:
            out["base"] = [held.tok, held.seq]
        return out

    def take(self, frame_id: str, data: dict) -> None:
        """Complete `data["rows"]` from a diff against the held rows (`data["par"]`: every row's parent
        index, authoritative; a reused row's own field 0 may be stale), and hold the result. With a
        diff against rows whose nodes are held, `data["_prev"]` says what an incremental build reuses."""
        diff = data.get("diff")
        held = self._rows.get(frame_id)
        if diff is not None:
            if held is None or held.seq != diff.get("base"):
                raise ValueError("the page sent a diff against rows that are not held")
            rows = patch_runs(held.rows, diff, data.get("rows") or [])
            data["rows"] = rows
            par = parents(diff, held.par, rows)
            if held.nodes is not None:
                data["_prev"] = Prev(held.nodes, held.par, diff["same"], diff["ch"], held.mod)
        else:
            rows = data.get("rows") or []
            par = [r[0] for r in rows]
        data["par"] = par
        if data.get("tok") is not None and data.get("seq") is not None:
            # a list of its own: later passes replace rows in data["rows"] (never change them in place)
            self._rows[frame_id] = _Held(data["tok"], data["seq"], list(rows), par)

    def keep(self, built: Built | None) -> None:
        """Remember the tree just built from the held rows of each frame (None: nothing to reuse)."""
        self.last = built
        for fid, h in self._rows.items():
            nodes = built.docs.get(fid) if built is not None else None
            if nodes is not None and len(nodes) == len(h.rows):
                h.nodes, h.mod = nodes, frozenset(built.mods.get(fid) or ()) if built is not None else frozenset()
            else:
                h.nodes, h.mod = None, frozenset()

    def forget(self, frame_id: str | None = None) -> None:
        self.last = None
        if frame_id is None:
            self._rows.clear()
        else:
            self._rows.pop(frame_id, None)

    def keep_only(self, frame_ids) -> None:
        for fid in [f for f in self._rows if f not in frame_ids]:
            del self._rows[fid]
        self.css.keep_only(frame_ids)


def patch(held: list, diff: dict, changed: list) -> list:
    """The new row list: runs of unchanged rows taken from `held` (with their new parent index),
    changed rows as sent."""
    par = diff["par"]
    return [r if r[0] == p else [p, *r[1:]] for r, p in zip(patch_runs(held, diff, changed), par, strict=True)]


def parents(diff: dict, held_par: list, rows: list) -> list:
    """Every row's parent index after a diff: `diff["par"]` when the page sends them all; else (the
    compact form, `diff["pd"]`: flat [row, parent, …] pairs) a row of an unchanged run keeps its old
    parent moved by the run's shift, a changed row says its parent itself (field 0), and `pd` lists
    the rows whose parent moved otherwise (e.g. later children of a parent that precedes an insertion)."""
    if diff.get("par") is not None:
        return diff["par"]
    n = diff["n"]
    out: list = [-2] * n
    same = diff["same"]
    for a in range(0, len(same), 3):
        i, j, ln = same[a], same[a + 1], same[a + 2]
        d = i - j
        out[i:i + ln] = [p + d if p >= 0 else p for p in held_par[j:j + ln]] if d else held_par[j:j + ln]
    for i in diff["ch"]:
        out[i] = rows[i][0]
    pd = diff.get("pd") or []
    for a in range(0, len(pd), 2):
        out[pd[a]] = pd[a + 1]
    if len(out) != n or -2 in out:
        raise ValueError("the page's diff left parents undefined")
    return out


def patch_runs(held: list, diff: dict, changed: list) -> list:
    """The new row list as `patch`, without rewriting parent indices (they are in diff["par"]):
    runs of unchanged rows are copied from `held` as slices."""
    n = diff["n"]
    out: list = [None] * n
    same = diff["same"]
    m = len(held)
    for a in range(0, len(same), 3):
        i, j, ln = same[a], same[a + 1], same[a + 2]
        if i < 0 or j < 0 or ln < 0 or i + ln > n or j + ln > m:
            raise ValueError("the page's diff names rows outside the lists")
        out[i:i + ln] = held[j:j + ln]
    for i, r in zip(diff["ch"], changed, strict=True):
        out[i] = r
    if len(out) != n or (diff.get("par") is not None and len(diff["par"]) != n) or None in out:
        raise ValueError("the page's diff left rows undefined")
    return out


def summarize(infos: list[dict]) -> WalkInfo:
    """One WalkInfo for a capture from each walked document's `inc` report (main frame first)."""
    if not infos:
        return WalkInfo("full", "empty page", 0, 0)
    dirty = sum(int(i.get("walked", 0)) for i in infos)
    copied = sum(int(i.get("copied", 0)) for i in infos)
    full = [i for i in infos if i.get("mode") != "incremental"]
    if full:
        return WalkInfo("full", str(full[0].get("why") or ""), dirty, copied)
    return WalkInfo("incremental", str(infos[0].get("why") or ""), dirty, copied)


def _count(counts: dict, n: VirtualNode, sign: int) -> None:
    counts[n.tier] += sign
    f = n.flags
    if f & 4:
        counts["shadow"] += sign
    if f & 8:
        counts["interactive"] += sign
        if n.visible:
            counts["visible_interactive"] += sign


def build_reusing(docs: list[tuple[str, dict, str | None, str | None]], last: Built) -> Built | None:
    """The page's tree after a walk, reusing the nodes of the last tree for every row that kept its
    facts, its parent element and its depth. Only changed rows get new nodes, and their ancestors new
    copies (a node's children list is never changed once a snapshot holds it; a frame's owner is
    copied when the frame's root is new); an unchanged child of a copied node is re-pointed to the
    copy (same element, same facts — so an older snapshot keeps its nodes, lookups and children,
    while a reused node's `parent` is the newest node of its parent element). `docs`: (frame, walk
    data with "rows" and "par", parent frame, owner node ID), parents first. None when the last tree
    cannot be reused (other frames, or a diff that does not apply): then build afresh."""
    shape = tuple((fid, pf, oid) for fid, _, pf, oid in docs)
    if not docs or shape != last.shape:
        return None
    try:
        plans = _plan_all(docs, last)
    except (IndexError, KeyError, TypeError, ValueError, StopIteration):
        return None
    if plans is None:
        return None
    return _link(docs, plans, last, shape)


@dataclass
class _Plan:
    nodes: list           # the document's nodes in row order: reused ones and the new ones
    order: list           # row indices of the new nodes, ascending
    fresh: set            # of those, the ones made from their row (the rest are copies)
    gone: list            # nodes of the last tree that are not in this one
    base: int             # depth of the document's root
    owner_index: int      # the owner's row in the parent document (-1: the main document)


def _plan_all(docs: list, last: Built) -> dict[str, _Plan] | None:
    base: dict[str, int] = {}
    owner_index: dict[str, int] = {}
    data_of = {fid: data for fid, data, _, _ in docs}
    for fid, _data, pf, oid in docs:  # parents first: each document's depth from its owner's
        if pf is None:
            base[fid], owner_index[fid] = 0, -1
            continue
        pdata = data_of[pf]
        prow, ppar = pdata["rows"], pdata["par"]
        k = next(e[0] for e in pdata.get("frames") or () if prow[e[0]][1] == oid)
        owner_index[fid] = k
        d = 0
        while ppar[k] >= 0:
            d, k = d + 1, ppar[k]
        base[fid] = base[pf] + d + 1
    marks: dict[str, set] = {fid: set() for fid, _, _, _ in docs}
    plans: dict[str, _Plan] = {}
    for fid, data, pf, oid in reversed(docs):  # children first: a new frame root copies its owner
        plan = _plan(fid, data, oid, base[fid], marks[fid], last)
        if plan is None:
            return None
        plan.owner_index = owner_index[fid]
        plans[fid] = plan
        old_doc = last.docs.get(fid) or []
        if pf is not None and (plan.nodes[0] if plan.nodes else None) is not (old_doc[0] if old_doc else None):
            marks[pf].add(owner_index[fid])  # the owner's children list changes
    return plans


def _plan(fid: str, data: dict, owner_id: str | None, base: int, extra: set, last: Built) -> _Plan | None:
    rows, par = data["rows"], data["par"]
    n = len(rows)
    prev: Prev | None = data.get("_prev")
    old_doc = last.docs.get(fid) or []
    if n != len(par):
        return None
    if not n:
        return _Plan([], [], set(), list(old_doc), base, -1)
    if par[0] != -1:
        return None
    if prev is None or prev.nodes is not old_doc or not old_doc:
        made = [node_from_row(r, fid) for r in rows]  # nothing to reuse in this document
        made[0].depth = base
        for i in range(1, n):
            q = made[par[i]]
            made[i].parent, made[i].depth = q, q.depth + 1
        return _Plan(made, list(range(n)), set(range(n)), list(old_doc), base, -1)
    old, old_par, same = prev.nodes, prev.par, prev.same
    m = len(old)
    if len(old_par) != m:
        return None
    nodes: list[Any] = [None] * n
    covered = bytearray(m)
    runs = [(same[a], same[a + 1], same[a + 2]) for a in range(0, len(same), 3)]
    for i, j, ln in runs:
        nodes[i:i + ln] = old[j:j + ln]
        covered[j:j + ln] = b"\x01" * ln
    if len(nodes) != n:
        return None
    by_j = sorted(runs, key=lambda r: r[1])
    j_starts = [r[1] for r in by_j]
    i_starts = [r[0] for r in runs]

    def new_index(j: int) -> int:
        k = bisect_right(j_starts, j) - 1
        if k >= 0:
            i0, j0, ln = by_j[k]
            if j < j0 + ln:
                return i0 + j - j0
        return -1

    fresh = set(prev.ch)
    moved: list[tuple[VirtualNode, int]] = []  # kept facts, but another parent element or depth
    # rows whose node was (or is to be) made from a row changed after the walk: never reused
    suspect = {new_index(j) for j in prev.mod} | set(data.get("_occ_mod") or ())
    suspect.discard(-1)
    for i in suspect:
        if nodes[i] is not None:
            moved.append((nodes[i], i))
            nodes[i] = None
            fresh.add(i)
    depth_new: dict[int, int] = {}
    o = nodes[0]
    if o is not None:
        op = o.parent
        if o.depth != base or (op is None) != (owner_id is None) or (op is not None and op.node_id != owner_id):
            moved.append((o, 0))
            nodes[0] = None
    if nodes[0] is None:
        fresh.add(0)
        depth_new[0] = base
    for i in range(1, n):  # parents before children: each row's parent is decided first
        o = nodes[i]
        p = par[i]
        q = nodes[p]
        if o is None:
            depth_new[i] = (q.depth if q is not None else depth_new[p]) + 1
            continue
        op = o.parent
        if q is op:
            continue
        if q is not None:
            pid, pd = q.node_id, q.depth
        else:
            pid, pd = rows[p][1], depth_new[p]
        if op is not None and pid == op.node_id and pd == op.depth:
            continue
        nodes[i] = None
        depth_new[i] = pd + 1
        fresh.add(i)
        moved.append((o, i))
    # Nodes whose children list changes: parents of new nodes, the new place of the old parent of
    # every row that left or moved, (for order) the parents at every run's start, old and new, and
    # owners whose frame has a new root (`extra`).
    marks = {par[i] for i in fresh if i > 0} | extra
    for i, j, ln in runs:
        if ln:
            if i > 0:
                marks.add(par[i])
            if old_par[j] >= 0:
                marks.add(new_index(old_par[j]))
    gone: list[VirtualNode] = [o for o, _ in moved]
    for _o, i in moved:
        k = bisect_right(i_starts, i) - 1
        i0, j0, _ = runs[k]
        pj = old_par[j0 + i - i0]
        if pj >= 0:
            marks.add(new_index(pj))
    j = covered.find(0)
    while j != -1:
        gone.append(old[j])
        if old_par[j] >= 0:
            marks.add(new_index(old_par[j]))
        j = covered.find(0, j + 1)
    marks.discard(-1)
    copied: set[int] = set()
    for k in marks:
        while k >= 0 and k not in copied and k not in fresh:
            copied.add(k)
            k = par[k]
    order = sorted(fresh | copied)
    for i in order:
        node = node_from_row(rows[i], fid) if i in fresh else nodes[i].copy_unlinked()
        nodes[i] = node
        p = par[i]
        if p >= 0:
            q = nodes[p]
            node.parent = q
            node.depth = q.depth + 1
        else:
            node.depth = base
    return _Plan(nodes, order, fresh, gone, base, -1)


def _link(docs: list, plans: dict[str, _Plan], last: Built, shape: tuple) -> Built | None:
    """Counts and lookups by difference, then the links of the new nodes (the only changes to nodes
    the last tree holds — its nodes' `parent` — come after every check)."""
    counts = dict(last.counts)
    by_id = dict(last.by_id)
    total = made = 0
    for plan in plans.values():
        g: VirtualNode
        for g in plan.gone:
            _count(counts, g, -1)
            if by_id.get(g.node_id) is g:
                del by_id[g.node_id]
    for plan in plans.values():
        total += len(plan.nodes)
        made += len(plan.order)
        nodes, fresh = plan.nodes, plan.fresh
        for i in plan.order:
            node = nodes[i]
            by_id[node.node_id] = node
            if i in fresh:
                _count(counts, node, 1)
    if len(by_id) != total:
        return None
    news = {fid: set(plan.order) for fid, plan in plans.items()}
    for fid, data, _, _ in docs:
        plan = plans[fid]
        if plan.order:
            new = news[fid]
            nodes, par = plan.nodes, data["par"]
            # (the rows under a new node found in one pass over the parents, then linked in row order)
            for i in [i for i, p in enumerate(par) if p in new and i]:
                c = nodes[i]
                q = nodes[par[i]]
                q.children.append(c)
                if c.parent is not q:
                    c.parent = q
    for fid, _, pf, _ in docs:  # a frame's root is its owner's last child
        plan = plans[fid]
        if pf is None or not plan.nodes:
            continue
        owner = plans[pf].nodes[plan.owner_index]
        root = plan.nodes[0]
        if plan.owner_index in news[pf]:  # a new owner: its children so far are its own document's
            owner.children.append(root)
        if root.parent is not owner:
            root.parent = owner
    main = plans[docs[0][0]]
    mods = {fid: set(d.get("_occ_mod") or ()) for fid, d, _, _ in docs}
    return Built(docs[0][0], main.nodes[0] if main.nodes else None, main.nodes, by_id, counts, made,
                 {fid: p.nodes for fid, p in plans.items()}, mods, shape)
