"""Item models over a snapshot: `NodeTreeModel`, a lazy `QAbstractItemModel` straight over the
VirtualNode objects (Qt asks only for the rows it paints; `index()`/`parent()`/`rowCount()` read
`node.children` / `node.parent`, and one dict node ID → row in its parent, built once per
snapshot, keeps `parent()` O(1) — nothing walks the tree recursively in Python, and pages nest a
thousand levels deep), and `FlatModel`, a table over the semantic payload's `interactive_tree`
items (columns i, r, n, v, s). Page content is shown as plain item text only, its bidi controls as
markers (`⟦U+202E⟧`, `engine.models.text`); the value of a password or one-time-code field is never shown.
"""

from __future__ import annotations

from typing import Any, TypeAlias

from PySide6.QtCore import QAbstractItemModel, QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor

from engine.models.text import bidi_safe

# what Qt hands a model's overrides: an index, or a persistent one (a proxy's, a selection's)
AnyIndex: TypeAlias = "QModelIndex | QPersistentModelIndex"

NODE_ID_ROLE = Qt.ItemDataRole.UserRole + 1   # the node ID of a row (both models)
NODE_ROLE = Qt.ItemDataRole.UserRole + 2      # the VirtualNode of a row (tree model)
IS_NEW_ROLE = Qt.ItemDataRole.UserRole + 3    # True when the ID is new since the previous snapshot

NEW_TOOLTIP = "new since the previous snapshot"
NEW_BRUSH = QBrush(QColor(255, 236, 160))     # pale amber: ID drift made visible
GREY_BRUSH = QBrush(QColor(150, 150, 150))    # not rendered
REDACTED = "•••• (redacted: password / one-time code)"
_NAME_MAX = 160


def _cut(s: str | None, n: int = _NAME_MAX) -> str:
    """Page text as a cell shows it: one line, bidi controls as markers, cut at `n` characters."""
    s = bidi_safe(s or "").replace("\n", " ")
    return s if len(s) <= n else s[: n - 1] + "…"


def _node_tooltip(node: Any, is_new: bool) -> str:
    lines = [f"ID {node.node_id} · <{node.tag}> · {node.role or '(no role)'} · {node.tier}"]
    if node.name:
        lines.append(f"name: {_cut(node.name, 300)}")
    if node.redacted:
        lines.append(f"value: {REDACTED}")
    elif node.value is not None:
        lines.append(f"value: {_cut(str(node.value), 300)}")
    if node.states:
        lines.append("states: " + ", ".join(f"{k}={v}" for k, v in node.states.items()))
    x, y, w, h = node.bounds
    lines.append(f"box: {x:.0f}, {y:.0f}, {w:.0f}×{h:.0f} · visible {node.visible_ratio:.0%}")
    flags = [f for f, on in (("not rendered", not node.rendered), ("occluded", node.occluded),
                             ("interactive", node.interactive), ("in shadow DOM", node.in_shadow)) if on]
    if node.occluded and getattr(node, "occluded_by_desc", None):
        flags.append(f"covered by {_cut(node.occluded_by_desc, 80)}")
    if flags:
        lines.append(" · ".join(flags))
    if is_new:
        lines.append(NEW_TOOLTIP)
    return bidi_safe("\n".join(lines))  # a role or tag the page wrote, too


class NodeTreeModel(QAbstractItemModel):
    """Lazy model over the complete VirtualNode tree of one snapshot. Columns: ID, role, name, tier.

    An index's internal ID is the node's position in `snap.nodes()`; the root is the one top-level row.
    """

    COLUMNS = ("ID", "role", "name", "tier")

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._snap: Any = None
        self._nodes: tuple = ()
        self._pos: dict[str, int] = {}   # node ID → index in self._nodes (the internal ID)
        self._row: dict[str, int] = {}   # node ID → row in its parent's children
        self._new: set[str] = set()
        self._parents: dict[int, QModelIndex] = {}

    # -- data in ---------------------------------------------------------------------------------
    def set_snapshot(self, snap: Any, previous: Any = None) -> None:
        """Show `snap`; IDs not in `previous` are marked new. `snap=None` empties the model."""
        self.beginResetModel()
        self._snap = snap
        self._parents = {}
        self._nodes = tuple(snap.nodes()) if snap is not None else ()
        self._pos = {n.node_id: i for i, n in enumerate(self._nodes)}
        row: dict[str, int] = {}
        for n in self._nodes:
            if n.children:
                for r, c in enumerate(n.children):
                    row[c.node_id] = r
        if snap is not None and snap.root is not None:
            row[snap.root.node_id] = 0
        self._row = row
        self._new = set(snap.new_ids_since(previous)) if snap is not None and previous is not None else set()
        self.endResetModel()

    @property
    def snapshot(self) -> Any:
        return self._snap

    @property
    def new_ids(self) -> set[str]:
        return self._new

    def node(self, index: QModelIndex) -> Any:
        """The VirtualNode of an index (None when invalid)."""
        if not index.isValid():
            return None
        return self._nodes[index.internalId()]

    def node_id_at(self, row: int, parent: AnyIndex) -> str | None:
        """The node ID at (row, parent) without going through Qt."""
        if not parent.isValid():
            root = self._snap.root if self._snap is not None else None
            return root.node_id if root is not None and row == 0 else None
        kids = self._nodes[parent.internalId()].children
        return kids[row].node_id if 0 <= row < len(kids) else None

    def index_of(self, node_id: str) -> QModelIndex:
        """The column-0 index of a node ID (invalid when the ID is not in this snapshot)."""
        p = self._pos.get(str(node_id))
        if p is None:
            return QModelIndex()
        return self.createIndex(self._row.get(str(node_id), 0), 0, p)

    # -- structure -------------------------------------------------------------------------------
    def index(self, row: int, column: int, parent: AnyIndex = QModelIndex()) -> QModelIndex:
        if column < 0 or column >= len(self.COLUMNS) or row < 0:
            return QModelIndex()
        if not parent.isValid():
            root = self._snap.root if self._snap is not None else None
            if root is None or row != 0:
                return QModelIndex()
            return self.createIndex(0, column, self._pos[root.node_id])
        kids = self._nodes[parent.internalId()].children
        if row >= len(kids):
            return QModelIndex()
        return self.createIndex(row, column, self._pos[kids[row].node_id])

    def parent(self, index: QModelIndex = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        # Qt calls this a lot (branch lines and proxies walk up to the root for every painted row on
        # a deep page), so the answer is cached per node.
        if not index.isValid():
            return QModelIndex()
        i = index.internalId()
        got = self._parents.get(i)
        if got is not None:
            return got
        p = self._nodes[i].parent
        pos = self._pos.get(p.node_id) if p is not None else None
        got = QModelIndex() if pos is None else self.createIndex(self._row.get(p.node_id, 0), 0, pos)
        self._parents[i] = got
        return got

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:
        if parent.column() > 0:
            return 0
        if not parent.isValid():
            return 1 if self._snap is not None and self._snap.root is not None else 0
        return len(self._nodes[parent.internalId()].children)

    def hasChildren(self, parent: AnyIndex = QModelIndex()) -> bool:
        return self.rowCount(parent) > 0

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:
        return len(self.COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole and 0 <= section < 4:
            return self.COLUMNS[section]
        return None

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    # -- data out --------------------------------------------------------------------------------
    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        n = self._nodes[index.internalId()]
        if role == Qt.ItemDataRole.DisplayRole:
            c = index.column()
            if c == 0:
                return n.node_id
            if c == 1:
                return bidi_safe(n.role or f"<{n.tag}>")
            if c == 2:
                return _cut(n.name)
            return n.tier
        if role == Qt.ItemDataRole.ToolTipRole:
            return _node_tooltip(n, n.node_id in self._new)
        if role == Qt.ItemDataRole.BackgroundRole:
            return NEW_BRUSH if n.node_id in self._new else None
        if role == Qt.ItemDataRole.ForegroundRole:
            return GREY_BRUSH if not n.rendered else None
        if role == NODE_ID_ROLE:
            return n.node_id
        if role == NODE_ROLE:
            return n
        if role == IS_NEW_ROLE:
            return n.node_id in self._new
        return None


class FlatModel(QAbstractTableModel):
    """The flattened list the model sees: the semantic payload's `interactive_tree` items."""

    COLUMNS = ("i", "r", "n", "v", "s")

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._items: list[dict] = []
        self._snap: Any = None
        self._new: set[str] = set()

    def set_snapshot(self, snap: Any, previous: Any = None, **semantic_options: Any) -> None:
        self.beginResetModel()
        self._snap = snap
        if snap is None:
            self._items = []
        else:
            data = snap.serialize("semantic", **semantic_options).data or {}
            self._items = list(data.get("interactive_tree") or [])
        self._new = set(snap.new_ids_since(previous)) if snap is not None and previous is not None else set()
        self.endResetModel()

    def items(self) -> list[dict]:
        return self._items

    def item(self, row: int) -> dict:
        return self._items[row]

    def node(self, row: int) -> Any:
        """The VirtualNode behind a flat row (None when the snapshot does not know it)."""
        try:
            return self._snap.node_map.get(str(self._items[row].get("i"))) if self._snap is not None else None
        except (IndexError, AttributeError):
            return None

    def node_id_at(self, row: int, parent: AnyIndex = QModelIndex()) -> str | None:
        if parent.isValid() or not 0 <= row < len(self._items):
            return None
        return str(self._items[row].get("i"))

    def row_of(self, node_id: str) -> int:
        for r, it in enumerate(self._items):
            if str(it.get("i")) == str(node_id):
                return r
        return -1

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._items)

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal and 0 <= section < 5:
            return self.COLUMNS[section]
        return None

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self._items):
            return None
        it = self._items[index.row()]
        iid = str(it.get("i"))
        if role == Qt.ItemDataRole.DisplayRole:
            key = self.COLUMNS[index.column()]
            v = it.get(key)
            if v is None:
                return ""
            if key == "v":
                node = self.node(index.row())
                if node is not None and node.redacted:
                    return REDACTED
            return _cut(str(v))
        if role == NODE_ID_ROLE:
            return iid
        if role == Qt.ItemDataRole.ToolTipRole:
            node = self.node(index.row())
            if node is not None:
                return _node_tooltip(node, iid in self._new)
            return None
        if role == Qt.ItemDataRole.BackgroundRole:
            return NEW_BRUSH if iid in self._new else None
        if role == IS_NEW_ROLE:
            return iid in self._new
        return None


# -- locators (issue [14]) ----------------------------------------------------------------------------
_LOCATORS: list[Any] = []  # [(snapshot, Locators)] for the last few snapshots shown


def locator_code(snap: Any, node_id: str | None) -> str:
    """The Playwright locator of a node as a line of Python ("" when there is none); the snapshot's
    indexes are built once and kept for the last few snapshots."""
    if snap is None or not node_id or node_id not in snap:
        return ""
    loc = _locators(snap).for_node(node_id)
    return loc.code() if loc is not None else ""


def locator_missing(snap: Any, node_id: str | None) -> str:
    """Why a node has no Playwright locator ("" when it has one, or there is no such node)."""
    if snap is None or not node_id or node_id not in snap:
        return ""
    return _locators(snap).unreachable(node_id) or ""


def _locators(snap: Any) -> Any:
    from engine.snapshot.locators import Locators
    hit = next((locs for s, locs in _LOCATORS if s is snap), None)
    if hit is None:
        hit = Locators(snap)
        _LOCATORS.insert(0, (snap, hit))
        del _LOCATORS[4:]
    return hit
