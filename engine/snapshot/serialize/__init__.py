"""Pass 2: flattened serializations of a snapshot for models and people.

tree      — the flattened hierarchy (seed 003 §7.3 shape)
semantic  — the minified V3 interactive payload with viewport pruning (seed 000)
skeleton  — minimal HTML of interactive elements (seed 001 §5.6)
full      — annotated HTML of the whole tree, only when asked
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.models import Serialization
from engine.snapshot.serialize.tokens import estimate_tokens

if TYPE_CHECKING:
    from engine.snapshot.view import SnapshotView


def render(snap: SnapshotView, fmt: str, **options: Any) -> Serialization:
    if fmt == "tree":
        from engine.snapshot.serialize.tree import serialize_tree
        return serialize_tree(snap, **options)
    if fmt == "semantic":
        from engine.snapshot.serialize.semantic import serialize_semantic
        return serialize_semantic(snap, **options)
    if fmt == "skeleton":
        from engine.snapshot.serialize.html import serialize_skeleton
        return serialize_skeleton(snap, **options)
    if fmt == "full":
        from engine.snapshot.serialize.html import serialize_full
        return serialize_full(snap, **options)
    raise ValueError(fmt)  # pragma: no cover - guarded by DomSnapshot.serialize


__all__ = ["render", "estimate_tokens"]
