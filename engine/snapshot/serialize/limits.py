"""Limits said out loud, by the serializers themselves: when the walk stopped at its node budget,
every serialization says so in its own text — how many nodes were kept and after which node the
rest of the page is missing. The serializers' own budgets are here too; holding a printed output
to a byte budget is `engine.snapshot.budget`'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.snapshot.serialize.tokens import clean_text, cut

if TYPE_CHECKING:
    from engine.snapshot.view import SnapshotView
    from engine.snapshot.vnode import VirtualNode

DEFAULT_FULL_MAX_BYTES = 2_000_000  # `full` stops here on its own (of a 200k-element page it would be ~12 MB)
TREE_MAX_NODES = 1500  # the `tree` serializer's own default node budget
SKELETON_MAX_NODES = 400


def describe_node(n: VirtualNode) -> str:
    """`12 (button "Save")` — how a marker names a node."""
    words = clean_text(cut(n.name or n.text or "", 40))
    return f'{n.node_id} ({n.role if n.role not in ("", "generic") else n.tag}' + (f' "{words}")' if words else ")")


def walk_cut(snap: SnapshotView) -> str | None:
    """The sentence every format carries when the walk stopped at its node budget, else None."""
    if not snap.stats.truncated:
        return None
    nodes = snap.nodes()
    last = nodes[-1] if nodes else None
    where = f" at node {describe_node(last)}" if last is not None else ""
    return (f"TRUNCATED: the page has more elements than the snapshot's node budget; it was cut after "
            f"{snap.stats.nodes:,} nodes{where}. Nothing after that point is in this output. Raise the "
            "budget (--max-nodes, or snapshot(max_nodes=…)) to see the rest.")


def status_words(snap: SnapshotView) -> str | None:
    """A status line's words when the walk stopped at its node budget ("TRUNCATED: cut after 200,000
    nodes, at …"), else None."""
    if not snap.stats.truncated:
        return None
    nodes = snap.nodes()
    where = f" at node {describe_node(nodes[-1])}" if nodes else ""
    return f"TRUNCATED: cut after {snap.stats.nodes:,} nodes{where}; the rest of the page is not in this snapshot"
