"""Snapshots at rest: a `DomSnapshot` as JSON bytes for the session store, and back.

A restored snapshot is detached (no tab): its nodes, lookups, serializations and Set-of-Mark
drawing work as on the live one, but nothing that needs the page (backend node ids, screenshots).
Password and one-time-code values were never read by the walker, so they are not in the bytes.
"""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Any

from engine.errors import SnapshotError
from engine.models import FrameInfo, PageContext, SnapshotStats
from engine.snapshot.dom_snapshot import DomSnapshot
from engine.snapshot.vnode import (F_FRAME, F_INTERACTIVE, F_OCCLUDED, F_REDACTED, F_RENDERED, F_SHADOW,
                                   VirtualNode)

FORMAT = "vigil-snapshot/1"
_FLAG_KEYS = (("rendered", F_RENDERED), ("occluded", F_OCCLUDED), ("in_shadow", F_SHADOW),
              ("interactive", F_INTERACTIVE), ("redacted", F_REDACTED), ("frame_owner", F_FRAME))


def _node_row(n: VirtualNode) -> dict[str, Any]:
    d = n.to_dict()
    for k in ("visible",):  # derived again on load
        d.pop(k, None)
    if n.is_frame_owner:
        d["frame_owner"] = True
    return d


def snapshot_bytes(snap: DomSnapshot) -> bytes:
    """The whole tree (every node with its parent) plus context, frames and stats, as UTF-8 JSON."""
    body = {"format": FORMAT, "taken_at": snap.taken_at, "context": snap.context.model_dump(mode="json"),
            "frames": [f.model_dump(mode="json") for f in snap.frames], "stats": snap.stats.model_dump(mode="json"),
            "nodes": [_node_row(n) for n in snap.nodes()]}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def load_snapshot(data: bytes) -> DomSnapshot:
    """A detached DomSnapshot from `snapshot_bytes` output; SnapshotError if the bytes are not one."""
    try:
        body = json.loads(data)
        if body.get("format") != FORMAT:
            raise ValueError(f"format {body.get('format')!r}")
        nodes: list[VirtualNode] = []
        by_id: dict[str, VirtualNode] = {}
        root = None
        for d in body["nodes"]:
            flags = sum(bit for key, bit in _FLAG_KEYS if d.get(key))
            n = VirtualNode(d["node_id"], d["tag"], d["role"], d["name"], d.get("text") or "", d.get("value"),
                            d.get("states") or {}, tuple(d["bounds"]), d.get("visible_ratio", 0.0), flags,
                            d["tier"], d.get("frame_id") or "", d.get("attrs") or {}, d.get("scroll"),
                            d.get("occluded_by"), d.get("occluded_by_desc"))
            parent = by_id.get(d["parent_id"]) if d.get("parent_id") is not None else None
            if parent is not None:
                n.parent, n.depth = parent, parent.depth + 1
                parent.children.append(n)
            elif root is None:
                root = n
            nodes.append(n)
            by_id[n.node_id] = n
        ctx = PageContext.model_validate(body["context"])
        frames = tuple(FrameInfo.model_validate(f) for f in body.get("frames", ()))
        stats = SnapshotStats.model_validate(body["stats"])
    except (ValueError, KeyError, TypeError) as exc:
        raise SnapshotError(f"A stored snapshot could not be read ({exc}); the session store may be from another "
                            "Vigil version.", code="BAD_STORED_SNAPSHOT") from None
    snap = object.__new__(DomSnapshot)
    for key, value in (("_root", root), ("_by_id", MappingProxyType(by_id)), ("_nodes", tuple(nodes)),
                       ("context", ctx), ("frames", frames), ("stats", stats), ("taken_at", body.get("taken_at", 0.0)),
                       ("generation", -1), ("_tab", None), ("_cache", {}), ("_sessions", MappingProxyType({})),
                       ("_frozen", True)):
        object.__setattr__(snap, key, value)
    return snap
