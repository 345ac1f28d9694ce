"""The node tree: the complete VirtualNode tree of a snapshot, and the flattened list the model sees.

The models themselves (`NodeTreeModel`, lazy over the VirtualNode objects, and `FlatModel`, the
semantic items) live in `node_models`.

`NodeTreePanel` puts either model in a `QTreeView` behind a filter bar (text matching ID, role or
name; role; tier). Filters keep the ancestors of every match visible; which nodes match, and the proxy
that shows only them, are in `node_filter`.

Page content is untrusted: everything is shown as plain item text (never rich text), and the
value of a password or one-time-code field is never shown.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QItemSelectionModel, QModelIndex, QSortFilterProxyModel, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from gui.kit.elided_label import ElidedLabel
from gui.kit.look import MUTED
from gui.nodes.node_columns import NAME_MIN_WIDTH, ColumnFitter
from gui.nodes.node_filter import FilterProxy, flat_matches, tree_matches
from gui.nodes.node_models import FlatModel, NodeTreeModel, locator_code, locator_missing

MAX_OPEN = 5000  # node IDs remembered as open in the tree


def _doc(snap: Any) -> str:
    """The document a snapshot is of (its address without the fragment): node IDs are kept within one."""
    return str(getattr(snap, "url", "") or "").split("#", 1)[0]

__all__ = ["NAME_MIN_WIDTH", "NodeTreePanel"]


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
        self.proxy = FilterProxy(self)
        self.proxy.setSourceModel(self.model)
        self.flat_proxy = FilterProxy(self)
        self.flat_proxy.setSourceModel(self.flat_model)
        self._snap: Any = None
        self._flat = False
        self._programmatic = False
        self._match_count: int | None = None
        self._open: set[str] = set()   # node IDs open in the complete tree (kept across the live view's snapshots)

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
        self.counts_label.setWordWrap(True)  # wraps in a narrow panel instead of widening it
        # the selected node's Playwright locator (engine.snapshot.locators), with Copy locator: one line,
        # elided in the middle when it does not fit (the full locator is in its tooltip and copied whole)
        self.locator_label = ElidedLabel("", self, mode=Qt.TextElideMode.ElideMiddle,
                                         tooltip_prefix="Playwright locator (unique on this snapshot):\n",
                                         tooltip_always=True)
        self.locator_label.setObjectName("locatorLine")
        self.locator_label.setTextInteractionFlags(Qt.TextInteractionFlag.NoTextInteraction)
        self.locator_label.setStyleSheet("#locatorLine { font-family:monospace; }")
        self.copy_locator_btn = QPushButton("Copy locator", self)
        self.copy_locator_btn.setToolTip("Copy the whole locator")
        self.copy_locator_btn.setEnabled(False)
        self.copy_locator_btn.clicked.connect(self.copy_locator)

        self.view = QTreeView(self)
        self.view.setIndentation(14)
        self.view.setUniformRowHeights(True)   # lets Qt skip measuring rows it does not paint
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setAlternatingRowColors(True)
        self.view.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.view.setModel(self.model)   # no filter: no proxy in between (see _view_model)
        self.columns = ColumnFitter(self)   # ID, role, tier as wide as their content; name the rest
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
        loc_row = QHBoxLayout()
        loc_row.addWidget(self.locator_label, 1)   # no caption: the line says what it is (placeholder, tooltip)
        loc_row.addWidget(self.copy_locator_btn)
        lay.addLayout(loc_row)
        lay.addWidget(self.counts_label)

        self._filter_timer = QTimer(self)
        self._filter_timer.setSingleShot(True)
        self._filter_timer.setInterval(150)
        self._filter_timer.timeout.connect(self.apply_filter)
        self.filter_edit.textChanged.connect(lambda _t: self._filter_timer.start())
        self.role_combo.currentIndexChanged.connect(lambda _i: self.apply_filter())
        self.tier_combo.currentIndexChanged.connect(lambda _i: self.apply_filter())
        self.flat_button.toggled.connect(self.set_flattened)
        self.view.expanded.connect(lambda idx: self._track_open(idx, True))
        self.view.collapsed.connect(lambda idx: self._track_open(idx, False))
        self._connect_selection()

    # -- setup helpers -----------------------------------------------------------------------------
    def _tune_header(self) -> None:
        self.view.header().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.columns.fit()

    def fit_columns(self) -> None:
        """Size the columns now (see node_columns)."""
        self.columns.fit()

    def _connect_selection(self) -> None:
        sm = self.view.selectionModel()
        sm.currentChanged.connect(self._on_current_changed)

    def _on_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self._show_locator(self._id_of(current) if current.isValid() else None)
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
        """Show a new snapshot; IDs new since `previous` are marked. Filters stay as typed. The live view
        sends snapshots as the page changes: the selected node (when it is still there), the nodes opened
        in the tree and the scroll position stay as the person left them; a new document starts afresh."""
        same_doc = self._snap is not None and snap is not None and _doc(self._snap) == _doc(snap)
        keep = self.selected_node_id() if same_doc else None
        scroll = (self.view.verticalScrollBar().value(), self.view.horizontalScrollBar().value())
        if not same_doc:
            self._open.clear()
        opened = list(self._open)
        self._snap = snap
        self._show_locator(None)
        self.columns.reset(keep_depth=same_doc)
        self.model.set_snapshot(snap, previous)
        self.flat_model.set_snapshot(snap, previous)
        self._fill_roles()
        self.apply_filter()
        vm = self.view.model()
        if not self._flat and vm.rowCount() and self._accept_all():
            if opened:
                self._reopen(opened)
            else:
                self.view.expand(vm.index(0, 0))
                body = self._find_child_tag(vm.index(0, 0), "body")
                if body.isValid():
                    self.view.expand(body)
        if keep and self._reselect(keep):
            self.view.verticalScrollBar().setValue(scroll[0])
            self.view.horizontalScrollBar().setValue(scroll[1])
        elif same_doc:
            self.view.verticalScrollBar().setValue(scroll[0])

    def _track_open(self, idx: QModelIndex, is_open: bool) -> None:
        nid = self._id_of(idx) if not self._flat else None
        if nid is None:
            return
        if is_open:
            if len(self._open) < MAX_OPEN:
                self._open.add(nid)
        else:
            self._open.discard(nid)

    def _reopen(self, ids: list[str]) -> None:
        """Open again the nodes the person had open (those still in the snapshot)."""
        for nid in ids:
            idx = self._map(False, self.model.index_of(nid))
            if idx.isValid():
                self.view.expand(idx)

    def _reselect(self, node_id: str) -> bool:
        """Select the node again after a new snapshot, without scrolling to it or telling anyone."""
        idx = self.view_index(node_id)
        if not idx.isValid():
            return False
        self._programmatic = True
        try:
            self.view.selectionModel().setCurrentIndex(
                idx, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
        finally:
            self._programmatic = False
        return True

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
        self.columns.reset(keep_depth=True)
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
        role_text, tier_text = self.role_combo.currentText(), self.tier_combo.currentText()
        role = None if role_text in ("", self.ANY) else role_text
        tier = None if tier_text in ("", self.ANY) else tier_text

        if self._flat:
            accept = flat_matches(snap, self.flat_model.items(), text, role, tier)
            self._match_count = len(accept)
            self._install(True, accept)
        else:
            matches, accept = tree_matches(snap, text, role, tier)
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
        new = FilterProxy(self)
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

    def _show_locator(self, node_id: str | None) -> None:
        code = locator_code(self._snap, node_id)
        why = locator_missing(self._snap, node_id) if not code else ""
        self.locator_label.set_placeholder("Select a node to see its Playwright locator" if node_id is None
                                           else f"No locator: {why}" if why
                                           else "No locator for this node")
        self.locator_label.set_full_text(code)
        self.locator_label.setStyleSheet("#locatorLine { font-family:monospace; }" if code
                                         else f"#locatorLine {{ color:{MUTED}; font-style:italic; }}")
        self.copy_locator_btn.setEnabled(bool(code))

    def locator(self) -> str:
        """The selected node's whole locator ("" when none); the line may show it elided."""
        return self.locator_label.full_text()

    def copy_locator(self) -> None:
        """Copy locator: the selected node's whole locator to the clipboard."""
        if self.locator():
            QGuiApplication.clipboard().setText(self.locator())

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
