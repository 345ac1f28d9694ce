"""A native `<select>`'s list, drawn over the live page by the view (a part of `PageInput`).

Chromium draws a select's open list in a popup of its own, which the screencast does not paint: a person
clicking Country in the live view saw nothing, and their keys went to a list they could not see. So a press
on a closed single-choice select (or Space, F4, Alt+Down or Alt+Up while one has focus) does not reach the
page: the view asks the engine for the select under the pointer (or the focused one:
`engine.browser.native_select`), and shows its options in `SelectList`, a list over the page under the
select's box. A click, or Enter or Space on the current option, chooses it; arrows, Page Up/Down, Home, End
and typed letters move; Escape, a click elsewhere or leaving the list closes it unchanged.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QAbstractItemView, QFrame, QListWidget, QListWidgetItem, QWidget

from engine.browser.native_select import SelectInfo

MAX_ROWS = 20           # rows shown before the list scrolls (as Chromium's own popup)


class SelectList(QListWidget):
    """The options of one select, over the page view: `chosen(index)` (the option's index in the select) or
    `closed()` once, then it hides."""

    def __init__(self, view: QWidget, chosen: Callable[[int], None], closed: Callable[[], None]) -> None:
        super().__init__(view)
        self.view = view
        self._chosen, self._closed = chosen, closed
        self.setFrameShape(QFrame.Shape.Box)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setMouseTracking(True)
        self.itemEntered.connect(lambda it: self.setCurrentItem(it) if it.flags() & Qt.ItemFlag.ItemIsEnabled else None)
        self.itemClicked.connect(self._clicked)
        self.hide()

    def open(self, info: SelectInfo, box: QRectF, scale: float = 1.0) -> None:
        """Show `info`'s options under (or above) `box`, the select in widget px, inside the view, in the
        select's font size as the page is shown (`scale` widget px per CSS px)."""
        self.clear()
        f = QFont(self.view.font())
        f.setPixelSize(max(10, round(info.font_px * scale)))
        self.setFont(f)
        current, last_group = None, None
        for i, (label, disabled, group, hidden) in enumerate(info.options):
            if hidden:
                continue
            if group is not None and group != last_group:
                self._group_row(group)
            last_group = group
            it = QListWidgetItem(("    " if group is not None else "") + label)
            it.setData(Qt.ItemDataRole.UserRole, i)
            if disabled:
                it.setFlags(Qt.ItemFlag.NoItemFlags)
            self.addItem(it)
            if i == info.index:
                current = it
        self._place(box)
        self.show()
        self.raise_()
        if current is not None:
            self.setCurrentItem(current)
            self.scrollToItem(current, QAbstractItemView.ScrollHint.PositionAtCenter)
        self.setFocus(Qt.FocusReason.PopupFocusReason)

    def _group_row(self, group: str) -> None:
        it = QListWidgetItem(group)
        f = QFont(self.font())
        f.setBold(True)
        it.setFont(f)
        it.setFlags(Qt.ItemFlag.NoItemFlags)
        self.addItem(it)

    def _place(self, box: QRectF) -> None:
        view = self.view
        rows = min(self.count(), MAX_ROWS)
        row_h = max(self.sizeHintForRow(0), 1) if self.count() else 20
        want_h = rows * row_h + 2 * self.frameWidth()
        below = view.height() - box.bottom()
        above = box.top()
        h = int(min(want_h, max(below, above)))
        y = box.bottom() if below >= want_h or below >= above else box.top() - h
        w = int(max(box.width(), self.sizeHintForColumn(0) + 2 * self.frameWidth()
                    + (self.verticalScrollBar().sizeHint().width() if self.count() > rows else 0)))
        w = min(w, view.width())
        x = min(max(0, int(box.left())), view.width() - w)
        self.setGeometry(x, int(max(0, y)), w, max(h, row_h))

    def _clicked(self, it: QListWidgetItem) -> None:
        if it.flags() & Qt.ItemFlag.ItemIsEnabled:
            self._finish(int(it.data(Qt.ItemDataRole.UserRole)))

    def _finish(self, index: int | None) -> None:
        if not self.isVisible():
            return
        self.hide()
        self.view.setFocus(Qt.FocusReason.PopupFocusReason)
        if index is None:
            self._closed()
        else:
            self._chosen(index)

    def close_list(self) -> None:
        """Close without a choice (a click elsewhere, the page going away)."""
        self._finish(None)

    def keyPressEvent(self, ev) -> None:  # noqa: N802 - Qt name
        k = ev.key()
        if k == Qt.Key.Key_Escape:
            self._finish(None)
        elif k in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space) or (
                k in (Qt.Key.Key_Up, Qt.Key.Key_Down) and ev.modifiers() & Qt.KeyboardModifier.AltModifier):
            it = self.currentItem()
            if it is not None and it.flags() & Qt.ItemFlag.ItemIsEnabled:
                self._finish(int(it.data(Qt.ItemDataRole.UserRole)))
            else:
                self._finish(None)
        elif k == Qt.Key.Key_Tab or k == Qt.Key.Key_Backtab:
            self._finish(None)
        else:
            super().keyPressEvent(ev)
        ev.accept()

    def focusOutEvent(self, ev) -> None:  # noqa: N802 - Qt name
        super().focusOutEvent(ev)
        if ev.reason() != Qt.FocusReason.PopupFocusReason:
            self._finish(None)
