"""Snapshots at rest: a `DomSnapshot` as JSON bytes for the session store, and back.

A restored snapshot is detached (no tab): its nodes, lookups, serializations and Set-of-Mark
drawing work as on the live one, but nothing that needs the page (backend node ids, screenshots).
Password and one-time-code values were never read by the walker, so they are not in the bytes.
"""

from __future__ import annotations

import json
from types import MappingProxyType

from engine.errors import ErrorCode, SnapshotError
from engine.models import FrameInfo, PageContext, SnapshotStats
from engine.snapshot.dom_snapshot import DomSnapshot
from engine.snapshot.incremental import WalkInfo
from engine.snapshot.vnode import VirtualNode

FORMAT = "vigil-snapshot/2"
# one positional row per node, in document order (parents before children): half the bytes of
# keyed rows and about three times faster to write, which matters since a step commits its
# snapshots before the next step runs
COLUMNS_1 = ("node_id", "parent_id", "tag", "role", "name", "text", "value", "states", "bounds", "visible_ratio",
             "flags", "tier", "frame_id", "attrs", "scroll", "occluded_by", "occluded_by_desc")
# format 2 adds where a person sees the box: the part a scroll area leaves, and one box per line of a wrapped link
COLUMNS = (*COLUMNS_1, "visible_bounds", "line_rects")
READABLE = {"vigil-snapshot/1": COLUMNS_1, FORMAT: COLUMNS}  # sessions stored by an older Vigil still open


def _row(n: VirtualNode) -> list:
    return [n.node_id, n.parent.node_id if n.parent is not None else None, n.tag, n.role, n.name, n.text, n.value,
            n.states or None, n.bounds, n.visible_ratio, n.flags, n.tier, n.frame_id, n.attrs or None, n.scroll,
            n.occluded_by, n.occluded_by_desc, n.visible_bounds, n.line_rects]


def snapshot_bytes(snap: DomSnapshot) -> bytes:
    """The whole tree (every node with its parent) plus context, frames and stats, as UTF-8 JSON."""
    body = {"format": FORMAT, "taken_at": snap.taken_at, "context": snap.context.model_dump(mode="json"),
            "frames": [f.model_dump(mode="json") for f in snap.frames], "stats": snap.stats.model_dump(mode="json"),
            "columns": COLUMNS, "nodes": [_row(n) for n in snap.nodes()]}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def load_snapshot(data: bytes) -> DomSnapshot:
    """A detached DomSnapshot from `snapshot_bytes` output; SnapshotError if the bytes are not one."""
    try:
        body = json.loads(data)
        columns = READABLE.get(body.get("format"))
        if columns is None or tuple(body.get("columns", ())) != columns:
            raise ValueError(f"format {body.get('format')!r}")
        extra = len(columns) - len(COLUMNS_1)
        nodes: list[VirtualNode] = []
        by_id: dict[str, VirtualNode] = {}
        root = None
        for row in body["nodes"]:
            (nid, pid, tag, role, name, text, value, states, bounds, ratio, flags, tier, frame, attrs, scroll,
             occ_by, occ_desc) = row[:len(COLUMNS_1)]
            shown, lines = row[len(COLUMNS_1):] if extra else (None, None)
            n = VirtualNode(nid, tag, role, name, text or "", value, states or {}, tuple(bounds), ratio, flags,
                            tier, frame or "", attrs or {}, scroll, occ_by, occ_desc,
                            line_rects=[tuple(r) for r in lines] if lines else None,
                            visible_bounds=tuple(shown) if shown else None)
            parent = by_id.get(pid) if pid is not None else None
            if parent is not None:
                n.parent, n.depth = parent, parent.depth + 1
                parent.children.append(n)
            elif root is None:
                root = n
            nodes.append(n)
            by_id[nid] = n
        ctx = PageContext.model_validate(body["context"])
        frames = tuple(FrameInfo.model_validate(f) for f in body.get("frames", ()))
        stats = SnapshotStats.model_validate(body["stats"])
    except (ValueError, KeyError, TypeError) as exc:
        raise SnapshotError(f"A stored snapshot could not be read ({exc}); the session store may be from another "
                            "Vigil version.", code=ErrorCode.BAD_STORED_SNAPSHOT) from None
    snap = object.__new__(DomSnapshot)
    for key, value in (("_root", root), ("_by_id", MappingProxyType(by_id)), ("_nodes", tuple(nodes)),
                       ("context", ctx), ("frames", frames), ("stats", stats), ("taken_at", body.get("taken_at", 0.0)),
                       ("generation", -1), ("_page", None), ("_cache", {}), ("_sessions", MappingProxyType({})),
                       ("walk", WalkInfo("stored", "loaded from the session store")), ("_frozen", True)):
        object.__setattr__(snap, key, value)
    return snap
