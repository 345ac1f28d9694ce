"""The node tree: the complete VirtualNode tree of a snapshot, and the flattened list the model sees.

`NodeTreeModel` is a lazy `QAbstractItemModel` straight over the VirtualNode objects: Qt asks only
for the rows it paints, `index()`/`parent()`/`rowCount()` read `node.children` / `node.parent`, and
one dict (node ID → row in its parent) built once per snapshot keeps `parent()` O(1). Nothing
walks the tree recursively in Python (pages nest a thousand levels deep).

`FlatModel` is a table over the semantic payload's `interactive_tree` items (columns i, r, n, v, s).

`NodeTreePanel` puts either model in a `QTreeView` behind a filter bar (text matching ID, role or
name; role; tier). Filters keep the ancestors of every match visible. The match set (plus the
ancestors of matches) is computed once per filter change in one pass over the snapshot, so the
proxy's per-row check is a set lookup; Qt's own recursive filtering would call back into Python
for every descendant of every rejected row, which is far slower on a 25k-node page.

Page content is untrusted: everything is shown as plain item text (never rich text), and the
value of a password or one-time-code field is never shown.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import (QAbstractItemModel, QAbstractTableModel, QItemSelectionModel, QModelIndex,
                            QSortFilterProxyModel, Qt, QTimer, Signal, Slot)
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (QAbstractItemView, QButtonGroup, QComboBox, QHBoxLayout, QHeaderView, QLabel,
                               QLineEdit, QRadioButton, QTreeView, QVBoxLayout, QWidget)


NODE_ID_ROLE = Qt.ItemDataRole.UserRole + 1   # the node ID of a row (both models)
NODE_ROLE = Qt.ItemDataRole.UserRole + 2      # the VirtualNode of a row (tree model)
IS_NEW_ROLE = Qt.ItemDataRole.UserRole + 3    # True when the ID is new since the previous snapshot

NEW_TOOLTIP = "new since the previous snapshot"
NEW_BRUSH = QBrush(QColor(255, 236, 160))     # pale amber: ID drift made visible
GREY_BRUSH = QBrush(QColor(150, 150, 150))    # not rendered
REDACTED = "•••• (redacted: password / one-time code)"
_NAME_MAX = 160


def _cut(s: str | None, n: int = _NAME_MAX) -> str:
    s = (s or "").replace("\n", " ")
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
    return "\n".join(lines)


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

    def node_id_at(self, row: int, parent: QModelIndex) -> str | None:
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
    def index(self, row: int, column: int, parent: QModelIndex = QModelIndex()) -> QModelIndex:
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

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:
        if parent.column() > 0:
            return 0
        if not parent.isValid():
            return 1 if self._snap is not None and self._snap.root is not None else 0
        return len(self._nodes[parent.internalId()].children)

    def hasChildren(self, parent: QModelIndex = QModelIndex()) -> bool:
        return self.rowCount(parent) > 0

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:
        return len(self.COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole and 0 <= section < 4:
            return self.COLUMNS[section]
        return None

    def flags(self, index: QModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    # -- data out --------------------------------------------------------------------------------
    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        n = self._nodes[index.internalId()]
        if role == Qt.ItemDataRole.DisplayRole:
            c = index.column()
            if c == 0:
                return n.node_id
            if c == 1:
                return n.role or f"<{n.tag}>"
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

    def node_id_at(self, row: int, parent: QModelIndex = QModelIndex()) -> str | None:
        if parent.isValid() or not 0 <= row < len(self._items):
            return None
        return str(self._items[row].get("i"))

    def row_of(self, node_id: str) -> int:
        for r, it in enumerate(self._items):
            if str(it.get("i")) == str(node_id):
                return r
        return -1

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._items)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal and 0 <= section < 5:
            return self.COLUMNS[section]
        return None

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
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


class _FilterProxy(QSortFilterProxyModel):
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

    def filterAcceptsRow(self, source_row: int, source_parent: QModelIndex) -> bool:
        if self._accept is None:
            return True
        # ask the source model in Python: cheaper than a round trip through QModelIndex.data()
        return self.sourceModel().node_id_at(source_row, source_parent) in self._accept


class NodeTreePanel(QWidget):
    """A QTreeView over the complete tree (or the flattened list), a filter bar and counts.

    Signals: `node_selected(str)` when the user selects a row (not when `select_node` does).
    Slots: `select_node(node_id)` expands to and selects a row; `set_snapshot(snap, previous=None)`.
    """

    node_selected = Signal(str)
    ANY = "any"

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.model = NodeTreeModel(self)
        self.flat_model = FlatModel(self)
        self.proxy = _FilterProxy(self)
        self.proxy.setSourceModel(self.model)
        self.flat_proxy = _FilterProxy(self)
        self.flat_proxy.setSourceModel(self.flat_model)
        self._snap: Any = None
        self._flat = False
        self._programmatic = False
        self._match_count: int | None = None

        self.filter_edit = QLineEdit(self)
        self.filter_edit.setPlaceholderText("Filter by ID, role or name…")
        self.filter_edit.setClearButtonEnabled(True)
        self.role_combo = QComboBox(self)
        self.role_combo.setToolTip("Only nodes with this role")
        self.tier_combo = QComboBox(self)
        self.tier_combo.addItems([self.ANY, "semantic", "non-semantic", "structural"])
        self.tier_combo.setToolTip("Only nodes of this tier")
        self.complete_button = QRadioButton("Complete", self)
        self.flat_button = QRadioButton("Flattened (what the model sees)", self)
        self.complete_button.setChecked(True)
        self._mode_group = QButtonGroup(self)
        self._mode_group.addButton(self.complete_button)
        self._mode_group.addButton(self.flat_button)
        self.counts_label = QLabel(self)
        self.counts_label.setTextFormat(Qt.TextFormat.PlainText)

        self.view = QTreeView(self)
        self.view.setIndentation(14)
        self.view.setUniformRowHeights(True)   # lets Qt skip measuring rows it does not paint
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setAlternatingRowColors(True)
        self.view.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.view.setModel(self.model)   # no filter: no proxy in between (see _view_model)
        self._tune_header()

        bar = QHBoxLayout()
        bar.addWidget(self.filter_edit, 3)
        bar.addWidget(QLabel("role", self))
        bar.addWidget(self.role_combo, 1)
        bar.addWidget(QLabel("tier", self))
        bar.addWidget(self.tier_combo, 1)
        modes = QHBoxLayout()
        modes.addWidget(self.complete_button)
        modes.addWidget(self.flat_button)
        modes.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(bar)
        lay.addLayout(modes)
        lay.addWidget(self.view, 1)
        lay.addWidget(self.counts_label)

        self._filter_timer = QTimer(self)
        self._filter_timer.setSingleShot(True)
        self._filter_timer.setInterval(150)
        self._filter_timer.timeout.connect(self.apply_filter)
        self.filter_edit.textChanged.connect(lambda _t: self._filter_timer.start())
        self.role_combo.currentIndexChanged.connect(lambda _i: self.apply_filter())
        self.tier_combo.currentIndexChanged.connect(lambda _i: self.apply_filter())
        self.flat_button.toggled.connect(self.set_flattened)
        self._connect_selection()

    # -- setup helpers -----------------------------------------------------------------------------
    def _tune_header(self) -> None:
        h = self.view.header()
        h.setStretchLastSection(False)
        h.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        n = self.view.model().columnCount() if self.view.model() is not None else 0
        widths = (190, 110, 320, 100) if not self._flat else (70, 70, 320, 140, 120)
        for c in range(min(n, len(widths))):
            self.view.setColumnWidth(c, widths[c])
        if n > 2:
            h.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)

    def _connect_selection(self) -> None:
        sm = self.view.selectionModel()
        sm.currentChanged.connect(self._on_current_changed)

    def _on_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if self._programmatic or not current.isValid():
            return
        nid = self._id_of(current)
        if nid:
            self.node_selected.emit(str(nid))

    # -- public API --------------------------------------------------------------------------------
    @property
    def flattened(self) -> bool:
        return self._flat

    @Slot(object)
    def set_snapshot(self, snap: Any, previous: Any = None) -> None:
        """Show a new snapshot; IDs new since `previous` are marked. Filters stay as typed."""
        self._snap = snap
        self.model.set_snapshot(snap, previous)
        self.flat_model.set_snapshot(snap, previous)
        self._fill_roles()
        self.apply_filter()
        vm = self.view.model()
        if not self._flat and vm.rowCount() and self._accept_all():
            self.view.expand(vm.index(0, 0))
            body = self._find_child_tag(vm.index(0, 0), "body")
            if body.isValid():
                self.view.expand(body)

    def _find_child_tag(self, parent: QModelIndex, tag: str) -> QModelIndex:
        m = self.view.model()
        for r in range(min(m.rowCount(parent), 10)):
            idx = m.index(r, 0, parent)
            node = self.model.node(self._to_source(idx))
            if node is not None and node.tag == tag:
                return idx
        return QModelIndex()

    def _fill_roles(self) -> None:
        keep = self.role_combo.currentText() or self.ANY
        roles = sorted({n.role for n in self._snap.nodes() if n.role}) if self._snap is not None else []
        self.role_combo.blockSignals(True)
        self.role_combo.clear()
        self.role_combo.addItems([self.ANY, *roles])
        i = self.role_combo.findText(keep)
        self.role_combo.setCurrentIndex(i if i >= 0 else 0)
        self.role_combo.blockSignals(False)

    @Slot(bool)
    def set_flattened(self, on: bool) -> None:
        """Switch between the complete tree and the flattened list the model sees."""
        on = bool(on)
        if on != self.flat_button.isChecked():
            (self.flat_button if on else self.complete_button).setChecked(True)
            return  # toggled → comes back here
        if on == self._flat:
            return
        self._flat = on
        self.view.setModel(self._view_model(on))
        self.view.setRootIsDecorated(not on)
        self._tune_header()
        self._connect_selection()
        self.apply_filter()

    def _accept_all(self) -> bool:
        return not self.filter_edit.text().strip() and self.role_combo.currentText() in ("", self.ANY) \
            and self.tier_combo.currentText() in ("", self.ANY)

    def set_filter(self, text: str | None = None, role: str | None = None, tier: str | None = None) -> None:
        """Set any of the filters programmatically and apply them at once."""
        if text is not None:
            self.filter_edit.blockSignals(True)
            self.filter_edit.setText(text)
            self.filter_edit.blockSignals(False)
        for combo, v in ((self.role_combo, role), (self.tier_combo, tier)):
            if v is not None:
                combo.blockSignals(True)
                i = combo.findText(v or self.ANY)
                combo.setCurrentIndex(i if i >= 0 else 0)
                combo.blockSignals(False)
        self.apply_filter()

    def clear_filter(self) -> None:
        self.set_filter("", self.ANY, self.ANY)

    @Slot()
    def apply_filter(self) -> None:
        """Recompute the matches (one pass over the snapshot) and the ancestors that keep them reachable."""
        self._filter_timer.stop()
        snap = self._snap
        if snap is None or self._accept_all():
            self._match_count = None
            self._install(False, None)
            self._install(True, None)
            self._update_counts()
            return
        text = self.filter_edit.text().strip().casefold()
        role = self.role_combo.currentText()
        role = None if role in ("", self.ANY) else role
        tier = self.tier_combo.currentText()
        tier = None if tier in ("", self.ANY) else tier

        def ok(n: Any) -> bool:
            if role is not None and n.role != role:
                return False
            if tier is not None and n.tier != tier:
                return False
            if text and not (text in n.node_id.casefold() or text in (n.role or "").casefold()
                             or text in (n.name or "").casefold()):
                return False
            return True

        if self._flat:
            nm = snap.node_map
            accept: set[str] = set()
            for it in self.flat_model.items():
                iid = str(it.get("i"))
                n = nm.get(iid)
                if n is not None and ok(n):
                    accept.add(iid)
                elif n is None and text and (text in iid.casefold() or text in str(it.get("n", "")).casefold()):
                    accept.add(iid)
            self._match_count = len(accept)
            self._install(True, accept)
        else:
            matches = [n for n in snap.nodes() if ok(n)]
            accept = set()
            for n in matches:
                while n is not None and n.node_id not in accept:   # walk up until a known ancestor
                    accept.add(n.node_id)
                    n = n.parent
            self._match_count = len(matches)
            self._install(False, accept)
            self._expand_to(matches[:200])
        self._update_counts()

    def _view_model(self, flat: bool) -> Any:
        """What the view shows: the filter proxy while a filter is on, else the model itself
        (a proxy in between doubles the work of every paint on deep pages)."""
        proxy = self.flat_proxy if flat else self.proxy
        if proxy.accept is not None:
            return proxy
        return self.flat_model if flat else self.model

    def _map(self, flat: bool, src: QModelIndex) -> QModelIndex:
        """A source index as an index of what the view shows (invalid when filtered out)."""
        vm = self._view_model(flat)
        if vm is self.model or vm is self.flat_model:
            return src
        return vm.mapFromSource(src)

    def view_index(self, node_id: str) -> QModelIndex:
        """The view's index of a node ID in the current mode (invalid when unknown or filtered out)."""
        if self._flat:
            row = self.flat_model.row_of(node_id)
            return self._map(True, self.flat_model.index(row, 0)) if row >= 0 else QModelIndex()
        return self._map(False, self.model.index_of(node_id))

    def _install(self, flat: bool, accept: set[str] | None) -> None:
        """Filter with a fresh proxy: re-filtering a proxy that has mapped thousands of expanded
        rows costs Qt hundreds of thousands of parent() calls (seconds on a 25k-node page); a new
        proxy maps only what the view asks for. The current node stays selected when it passes."""
        old = self.flat_proxy if flat else self.proxy
        if old.accept is None and accept is None:
            return
        shown = self._flat == flat
        keep = self.selected_node_id() if shown else None
        new = _FilterProxy(self)
        new.set_accept(accept)
        new.setSourceModel(self.flat_model if flat else self.model)
        if flat:
            self.flat_proxy = new
        else:
            self.proxy = new
        if shown:
            self.view.setModel(self._view_model(flat))
            self._tune_header()
            self._connect_selection()
        old.deleteLater()
        if keep and (accept is None or keep in accept):
            self.select_node(keep)

    def _expand_to(self, nodes: list) -> None:
        """Expand the ancestors of (the first few) matches so they show without clicking."""
        done: set[str] = set()
        for n in nodes:
            chain = []
            p = n.parent
            while p is not None and p.node_id not in done:
                chain.append(p)
                p = p.parent
            for a in chain:   # deepest first: hidden ones are only recorded
                done.add(a.node_id)
                idx = self._map(False, self.model.index_of(a.node_id))
                if idx.isValid():
                    self.view.expand(idx)

    def _update_counts(self) -> None:
        s = self._snap
        if s is None:
            self.counts_label.setText("no snapshot")
            return
        t = s.stats.tiers
        parts = [f"{s.stats.nodes:,} nodes", f"{t.get('semantic', 0):,} semantic",
                 f"{t.get('non-semantic', 0):,} non-semantic", f"{t.get('structural', 0):,} structural",
                 f"{s.stats.interactive:,} interactive", f"{len(self.flat_model.items()):,} sent to the model"]
        if self.model.new_ids:
            parts.append(f"{len(self.model.new_ids):,} new IDs")
        if self._match_count is not None:
            parts.append(f"{self._match_count:,} match the filter")
        self.counts_label.setText(" · ".join(parts))

    @Slot(str)
    def select_node(self, node_id: str) -> bool:
        """Expand to and select a node (e.g. picked on the overlay). Does not emit `node_selected`.
        A node hidden by the filter clears the filter. Returns False when the ID is unknown."""
        node_id = str(node_id)
        if self._flat:
            row = self.flat_model.row_of(node_id)
            if row < 0:
                return False
            idx = self._map(True, self.flat_model.index(row, 0))
            if not idx.isValid():
                self.clear_filter()
                idx = self._map(True, self.flat_model.index(row, 0))
        else:
            src = self.model.index_of(node_id)
            if not src.isValid():
                return False
            idx = self._map(False, src)
            if not idx.isValid():
                self.clear_filter()
                idx = self._map(False, src)
            if idx.isValid():
                chain = []
                p = idx.parent()
                while p.isValid():
                    chain.append(p)
                    p = p.parent()
                for a in chain:   # deepest first: hidden ones are only recorded, one layout at the top
                    if not self.view.isExpanded(a):
                        self.view.expand(a)
        if not idx.isValid():
            return False
        self._programmatic = True
        try:
            self.view.selectionModel().setCurrentIndex(
                idx, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
            self.view.scrollTo(idx, QAbstractItemView.ScrollHint.PositionAtCenter)
        finally:
            self._programmatic = False
        return True

    def selected_node_id(self) -> str | None:
        idx = self.view.currentIndex()
        return self._id_of(idx)

    def _to_source(self, idx: QModelIndex) -> QModelIndex:
        m = idx.model()
        return m.mapToSource(idx) if isinstance(m, QSortFilterProxyModel) else idx

    def _id_of(self, idx: QModelIndex) -> str | None:
        """The node ID of a view index (None when invalid)."""
        if not idx.isValid():
            return None
        src = self._to_source(idx)
        if not src.isValid():
            return None
        m = src.model()
        return m.node_id_at(src.row(), src.parent()) if hasattr(m, "node_id_at") else None

    def focus_filter(self) -> None:
        """For the 'focus the tree filter' shortcut."""
        self.filter_edit.setFocus()
        self.filter_edit.selectAll()
