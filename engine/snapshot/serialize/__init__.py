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
    from engine.snapshot.dom_snapshot import DomSnapshot


def render(snap: "DomSnapshot", fmt: str, **options: Any) -> Serialization:
    if fmt == "tree":
        from engine.snapshot.serialize.tree import serialize_tree as fn
    elif fmt == "semantic":
        from engine.snapshot.serialize.semantic import serialize_semantic as fn
    elif fmt == "skeleton":
        from engine.snapshot.serialize.html import serialize_skeleton as fn
    elif fmt == "full":
        from engine.snapshot.serialize.html import serialize_full as fn
    else:  # pragma: no cover - guarded by DomSnapshot.serialize
        raise ValueError(fmt)
    return fn(snap, **options)


__all__ = ["render", "estimate_tokens"]
