"""The node tree's filter: which nodes a filter (text matching ID, role or name; role; tier) lets through,
and the proxy model that shows only those.

The match set (plus the ancestors of matches, so every match stays reachable) is computed once per filter
change in one pass over the snapshot, so the proxy's per-row check is a set lookup; Qt's own recursive
filtering would call back into Python for every descendant of every rejected row, which is far slower on
a 25k-node page.
"""

from __future__ import annotations

from typing import Any, Protocol, cast

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSortFilterProxyModel


class NodeIds(Protocol):
    """What the proxy asks of its source model (gui.nodes.node_models: both models answer it)."""

    def node_id_at(self, row: int, parent: QModelIndex | QPersistentModelIndex) -> str | None: ...


class FilterProxy(QSortFilterProxyModel):
    """Accepts rows whose node ID is in a precomputed set (None = accept everything)."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._accept: set[str] | None = None
        self.setDynamicSortFilter(False)

    def set_accept(self, ids: set[str] | None) -> None:
        """Change the accepted set in place (cheap on a fresh or lightly used proxy; the panel
        installs a new proxy instead when the view has mapped many rows)."""
        self.beginFilterChange()
        self._accept = ids
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    @property
    def accept(self) -> set[str] | None:
        return self._accept

    def filterAcceptsRow(self, source_row: int, source_parent: QModelIndex | QPersistentModelIndex) -> bool:
        if self._accept is None:
            return True
        # ask the source model in Python: cheaper than a round trip through QModelIndex.data()
        return cast(NodeIds, self.sourceModel()).node_id_at(source_row, source_parent) in self._accept


def node_matcher(text: str, role: str | None, tier: str | None):
    """A test of one node against the filter: `text` (casefolded) in its ID, role or name; its role; its tier
    (None: any)."""
    def ok(n: Any) -> bool:
        if role is not None and n.role != role:
            return False
        if tier is not None and n.tier != tier:
            return False
        if text and not (text in n.node_id.casefold() or text in (n.role or "").casefold()
                         or text in (n.name or "").casefold()):
            return False
        return True
    return ok


def flat_matches(snap: Any, items: list[dict], text: str, role: str | None, tier: str | None) -> set[str]:
    """The IDs of the flattened list's items that pass the filter (an item with no node in the snapshot
    passes on its ID or name text)."""
    ok = node_matcher(text, role, tier)
    nm = snap.node_map
    accept: set[str] = set()
    for it in items:
        iid = str(it.get("i"))
        n = nm.get(iid)
        if n is not None and ok(n):
            accept.add(iid)
        elif n is None and text and (text in iid.casefold() or text in str(it.get("n", "")).casefold()):
            accept.add(iid)
    return accept


def tree_matches(snap: Any, text: str, role: str | None, tier: str | None) -> tuple[list, set[str]]:
    """The nodes of the complete tree that pass the filter (document order), and the IDs to accept: theirs
    and those of their ancestors."""
    ok = node_matcher(text, role, tier)
    matches = [n for n in snap.nodes() if ok(n)]
    accept: set[str] = set()
    for n in matches:
        while n is not None and n.node_id not in accept:   # walk up until a known ancestor
            accept.add(n.node_id)
            n = n.parent
    return matches, accept
