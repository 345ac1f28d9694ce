"""Incremental snapshots, Python side: the rows each frame's walker last sent, and how a walk went.

The walker (js/walker.js) keeps its previous walk in the page and re-walks only what can have
changed; it then sends only the rows that differ from the ones the caller says it holds (`base`:
the page-side token and sequence number of those rows) plus every row's parent. `RowMemo` holds
those rows per frame and rebuilds the complete list from a diff. `WalkInfo` is what a snapshot says
of its walk: `full` or `incremental`, why, and how many rows were walked again.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

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
    stale after a diff), and the nodes built from them when they were built alone (one document)."""

    tok: str
    seq: int
    rows: list
    par: list
    nodes: list | None = None


@dataclass(frozen=True)
class Prev:
    """What a diff is against: the held nodes and parent indices, the unchanged runs and the changed rows."""

    nodes: list
    par: list
    same: list
    ch: list


@dataclass
class Built:
    """A document's tree: root, nodes in row order, ID lookup and the counts a snapshot reports."""

    frame_id: str
    root: VirtualNode | None
    nodes: list
    by_id: dict
    counts: dict
    made: int = -1  # nodes made anew when built from the last tree (-1: all of them, built afresh)


class RowMemo:
    """Per frame: (page token, sequence number, rows) of the last rows received from its walker, and
    the last single-document tree built from them (what an incremental build reuses)."""

    def __init__(self) -> None:
        self._rows: dict[str, _Held] = {}
        self.last: Built | None = None

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
                data["_prev"] = Prev(held.nodes, held.par, diff["same"], diff["ch"])
        else:
            rows = data.get("rows") or []
            par = [r[0] for r in rows]
        data["par"] = par
        if data.get("tok") is not None and data.get("seq") is not None:
            # a list of its own: later passes replace rows in data["rows"] (never change them in place)
            self._rows[frame_id] = _Held(data["tok"], data["seq"], list(rows), par)

    def keep(self, built: Built | None) -> None:
        """Remember the tree just built from the held rows of its frame (None: nothing to reuse)."""
        self.last = None
        for h in self._rows.values():
            h.nodes = None
        if built is not None:
            held = self._rows.get(built.frame_id)
            if held is not None and len(held.rows) == len(built.nodes):
                held.nodes = built.nodes
                self.last = built

    def forget(self, frame_id: str | None = None) -> None:
        self.last = None
        if frame_id is None:
            self._rows.clear()
        else:
            self._rows.pop(frame_id, None)

    def keep_only(self, frame_ids) -> None:
        for fid in [f for f in self._rows if f not in frame_ids]:
            del self._rows[fid]


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


def build_reusing(frame_id: str, rows: list, par: list, prev: Prev, last: Built) -> Built | None:
    """The tree of one document after a diff, reusing the nodes of the last tree for every row that
    kept its facts, its parent element and its depth. Only changed rows get new nodes, and their
    ancestors new copies (a node's children list is never changed once a snapshot holds it); an
    unchanged child of a copied node is re-pointed to the copy (same element, same facts — so an
    older snapshot keeps its nodes, lookups and children, while a reused node's `parent` is the
    newest node of its parent element). None when the diff cannot be applied (build afresh)."""
    try:
        return _build_reusing(frame_id, rows, par, prev, last)
    except (IndexError, KeyError, TypeError):
        return None


def _build_reusing(frame_id: str, rows: list, par: list, prev: Prev, last: Built) -> Built | None:
    old, old_par, same = prev.nodes, prev.par, prev.same
    n, m = len(rows), len(old)
    if not n or not m or len(par) != n or len(old_par) != m or last.nodes is not old or par[0] != -1:
        return None
    nodes: list[Any] = [None] * n
    covered = bytearray(m)
    runs = [(same[a], same[a + 1], same[a + 2]) for a in range(0, len(same), 3)]
    for i, j, ln in runs:
        nodes[i:i + ln] = old[j:j + ln]
        covered[j:j + ln] = b"\x01" * ln
    if len(nodes) != n:
        return None
    fresh = set(prev.ch)
    moved: list[tuple[VirtualNode, int]] = []  # kept facts, but another parent element or depth
    depth_new: dict[int, int] = {}
    o = nodes[0]
    if o is None or o.parent is not None:
        if o is not None:
            moved.append((o, 0))
        nodes[0] = None
        fresh.add(0)
        depth_new[0] = 0
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
    # every row that left or moved, and (for order) the parents at every run's start, old and new.
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

    marks = {par[i] for i in fresh if i > 0}
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
    counts = dict(last.counts)
    by_id = dict(last.by_id)
    for g in gone:
        _count(counts, g, -1)
        if by_id.get(g.node_id) is g:
            del by_id[g.node_id]
    order = sorted(fresh | copied)
    for i in order:
        if i in fresh:
            node = node_from_row(rows[i], frame_id)
            _count(counts, node, 1)
        else:
            node = nodes[i].copy_unlinked()
        nodes[i] = node
        by_id[node.node_id] = node
        p = par[i]
        if p >= 0:
            q = nodes[p]
            node.parent = q
            node.depth = q.depth + 1
    if len(by_id) != n:
        return None
    if order:
        new = set(order)
        for i in range(1, n):
            p = par[i]
            if p in new:
                c = nodes[i]
                q = nodes[p]
                q.children.append(c)
                if c.parent is not q:
                    c.parent = q
    return Built(frame_id, nodes[0], nodes, by_id, counts, len(order))
