"""How wide the node tree's columns are (`NodeTreePanel` owns one `ColumnFitter`).

ID, role and tier (flattened: i, r, v, s) are as wide as their content and the name column takes
the rest, NAME_MIN_WIDTH at least while there is room for it; in a narrower panel the name column
gives way (its text elides), down to NAME_FLOOR, then the role column (down to ROLE_FLOOR), then the
ID column (down to ID_FLOOR), so the tier column stays in view — only below that does the view scroll sideways. What a
column needs is measured once per snapshot and mode from the distinct values (one pass over the
nodes, or the flattened items) — never by asking the model row by row, which on a 25k-node page
costs a call into Python per row. The tree's ID column also holds the indentation, so it is as wide as
the widest ID at each shown depth after that depth's indentation (the deepest shown: the children of
the deepest expanded node), up to ID_COLUMN_SHARE of the view (a page nests a thousand
levels deep: rows deeper than that elide).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QModelIndex, QObject, QTimer
from PySide6.QtWidgets import QHeaderView

from gui.nodes.node_models import FlatModel

NAME_MIN_WIDTH = 120      # px the name column keeps while the panel has room for it
NAME_FLOOR = 60           # px it keeps in a narrower panel, so the columns after it stay in view
ROLE_FLOOR = 56           # px the role column keeps when the panel is narrow (its words elide)
ID_FLOOR = 48             # px the ID column keeps when a deep tree in a narrow panel leaves no more
ID_COLUMN_SHARE = 0.4     # at most this share of the view for the ID column
SIDE_COLUMN_SHARE = 0.25  # at most this share of the view for each of value / states (flattened)
NAME_COLUMN = 2           # in both models


class ColumnFitter(QObject):
    """`reset()` on a new snapshot or mode; `fit()` sizes the columns now (it also runs on the next
    turn of the event loop after the view is resized or a deeper node is expanded)."""

    def __init__(self, panel: Any) -> None:  # a NodeTreePanel (not imported: it imports this module)
        super().__init__(panel)
        self.panel = panel
        self.view = panel.view
        self.deepest = -1   # the depth of the deepest expanded node: how far the ID column is indented
        self.needs: dict[int, int] = {}   # column → width its content needs (per snapshot and mode)
        self.id_text: dict[int, int] = {}  # depth → px of the longest ID at that depth (the tree)
        self.id_pad = 0
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(0)
        self.timer.timeout.connect(self.fit)
        self.view.expanded.connect(self._on_expanded)
        self._viewport = self.view.viewport()  # kept: while the panel is destroyed, the view may be gone
        self._viewport.installEventFilter(self)
        h = self.view.header()
        h.setStretchLastSection(False)
        h.setMinimumSectionSize(24)

    def reset(self, *, keep_depth: bool = False) -> None:
        if not keep_depth:
            self.deepest = -1
        self.needs = {}
        self.timer.start()

    def _measure(self) -> None:
        fm = self.view.fontMetrics()
        style = self.view.style()
        pad = 2 * style.pixelMetric(style.PixelMetric.PM_FocusFrameHMargin) + 12

        def width(values: Any, header: str) -> int:
            return max([fm.horizontalAdvance(header), *(fm.horizontalAdvance(str(v)) for v in values)]) + pad

        if self.panel.flattened:
            items = self.panel.flat_model.items()
            self.needs = {c: width({str(it.get(k, "")) for it in items}, k)
                          for c, k in enumerate(FlatModel.COLUMNS) if c != NAME_COLUMN}
            return
        longest: dict[int, str] = {}   # depth → the longest ID at that depth
        roles, tiers = set(), set()
        snap = self.panel.model.snapshot
        if snap is not None:
            for n in snap.nodes():
                if len(n.node_id) > len(longest.get(n.depth, "")):
                    longest[n.depth] = n.node_id
                roles.add(n.role or f"<{n.tag}>")
                tiers.add(n.tier)
        self.id_text = {d: fm.horizontalAdvance(t) for d, t in longest.items()}
        self.id_pad = pad
        self.needs = {0: width(longest.values(), "ID"), 1: width(roles, "role"), 3: width(tiers, "tier")}

    def id_need(self) -> int:
        """The tree's ID column: the widest ID at each shown depth after that depth's indentation (a row at
        depth d is indented d + 1 steps; the deepest shown rows are the children of the deepest expanded)."""
        step = self.view.indentation()
        shown = [w + step * (d + 1) for d, w in self.id_text.items() if d <= self.deepest + 1]
        header = self.view.fontMetrics().horizontalAdvance("ID")
        return max([header, *shown]) + self.id_pad

    def fit(self) -> None:
        self.timer.stop()
        vm = self.view.model()
        n = vm.columnCount() if vm is not None else 0
        if n <= NAME_COLUMN:
            return
        if not self.needs:
            self._measure()
        room = self.view.viewport().width()
        widths = dict(self.needs)
        if not self.panel.flattened:
            widths[0] = self.id_need()
        widths[0] = min(widths[0], max(60, int(room * ID_COLUMN_SHARE)))
        for c in (3, 4) if self.panel.flattened else ():
            widths[c] = min(widths[c], max(60, int(room * SIDE_COLUMN_SHARE)))
        over = sum(w for c, w in widths.items() if c < n) + NAME_FLOOR - room
        if over > 0:  # a narrow panel: the role column gives way first (its words elide) …
            take = min(over, max(0, widths[1] - ROLE_FLOOR))
            widths[1] -= take
            over -= take
        if over > 0:  # … then, for a deep tree, the ID column (deep rows' IDs elide)
            widths[0] = max(ID_FLOOR, widths[0] - over)
        h = self.view.header()
        for c, w in widths.items():
            if c < n:
                h.setSectionResizeMode(c, QHeaderView.ResizeMode.Interactive)
                h.resizeSection(c, w)
        if room - sum(w for c, w in widths.items() if c < n) >= NAME_MIN_WIDTH:
            h.setSectionResizeMode(NAME_COLUMN, QHeaderView.ResizeMode.Stretch)
        else:
            h.setSectionResizeMode(NAME_COLUMN, QHeaderView.ResizeMode.Interactive)
            left = room - sum(w for c, w in widths.items() if c < n)
            h.resizeSection(NAME_COLUMN, max(NAME_FLOOR, left))

    def _on_expanded(self, idx: QModelIndex) -> None:
        if self.panel.flattened:
            return
        node = self.panel.model.node(self.panel._to_source(idx))
        if node is not None and node.depth > self.deepest:
            self.deepest = node.depth
            self.timer.start()

    def eventFilter(self, obj: Any, event: Any) -> bool:  # noqa: N802 - Qt name
        if obj is self._viewport and event.type() == QEvent.Type.Resize:
            self.timer.start()
        return super().eventFilter(obj, event)
