"""Where the asked step's target is in a snapshot: the window and the Fleet view outline it there, and keep
the outline on its element as newer snapshots come."""

from __future__ import annotations

from typing import Any


def target_in(snap: Any, target: dict | None) -> str | None:
    """The ID of a step's target in `snap`: its own while the element lives, else the one node with its
    role and name; None when it is not there."""
    if snap is None or not target:
        return None
    nid = target.get("id")
    if nid and nid in snap:
        return str(nid)
    role, name = target.get("role"), target.get("name")
    if not role or not name:
        return None
    hits = snap.find(role, name, exact=True)
    return hits[0].node_id if len(hits) == 1 else None
