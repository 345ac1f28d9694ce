"""Limits said out loud: when the walk stopped at its node budget, every serialization says so in
its own text — how many nodes were kept and after which node the rest of the page is missing — and
the formats that can grow without bound (`full`) stop at a size budget with a marker where they stop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.snapshot.serialize.tokens import clean_text, cut

if TYPE_CHECKING:
    from engine.snapshot.dom_snapshot import DomSnapshot
    from engine.snapshot.vnode import VirtualNode

DEFAULT_FULL_MAX_BYTES = 2_000_000  # `full` of a 200k-element page would be ~12 MB


def describe_node(n: "VirtualNode") -> str:
    """`12 (button "Save")` — how a marker names a node."""
    words = clean_text(cut(n.name or n.text or "", 40))
    return f'{n.node_id} ({n.role if n.role not in ("", "generic") else n.tag}' + (f' "{words}")' if words else ")")


def walk_cut(snap: "DomSnapshot") -> str | None:
    """The sentence every format carries when the walk stopped at its node budget, else None."""
    if not snap.stats.truncated:
        return None
    nodes = snap.nodes()
    last = nodes[-1] if nodes else None
    where = f" at node {describe_node(last)}" if last is not None else ""
    return (f"TRUNCATED: the page has more elements than the snapshot's node budget; it was cut after "
            f"{snap.stats.nodes:,} nodes{where}. Nothing after that point is in this output. Raise the "
            "budget (--max-nodes, or snapshot(max_nodes=…)) to see the rest.")
