"""A layout that places its widgets left to right and starts a new row when the next one does not fit:
a row of buttons in a side panel stays whole at any width (a 1024 px window leaves the panel about
300 px) instead of squeezing its buttons until their words are cut. Its minimum width is its widest
item, so it never widens the panel; its height follows its width (heightForWidth)."""

from __future__ import annotations

from PySide6.QtCore import QMargins, QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QLayout, QLayoutItem, QSizePolicy, QWidget


class FlowLayout(QLayout):
    def __init__(self, parent: QWidget | None = None, spacing: int = 6) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self.setSpacing(spacing)
        self.setContentsMargins(QMargins(0, 0, 0, 0))

    # -- QLayout ---------------------------------------------------------------------------------
    def addItem(self, item: QLayoutItem) -> None:  # noqa: N802 - Qt name
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:  # noqa: N802 - Qt name
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:  # noqa: N802 - Qt name
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:  # noqa: N802 - Qt name
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802 - Qt name
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt name
        return self._place(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802 - Qt name
        super().setGeometry(rect)
        self._place(rect, move=True)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt name
        """All the items on one row."""
        m = self.contentsMargins()
        shown = [it for it in self._items if not it.isEmpty()]
        w = sum(it.sizeHint().width() for it in shown) + self.spacing() * max(0, len(shown) - 1)
        h = max((it.sizeHint().height() for it in shown), default=0)
        return QSize(w + m.left() + m.right(), h + m.top() + m.bottom())

    def minimumSize(self) -> QSize:  # noqa: N802 - Qt name
        """The widest item: the rows wrap down to one item each."""
        size = QSize()
        for it in self._items:
            if not it.isEmpty():
                size = size.expandedTo(it.minimumSize())
        m = self.contentsMargins()
        return size + QSize(m.left() + m.right(), m.top() + m.bottom())

    # -- placing ---------------------------------------------------------------------------------
    def rows(self) -> list[list[QWidget]]:
        """The widgets as they are placed now, row by row (for tests and for a person reading code)."""
        out: dict[int, list[tuple[int, QWidget]]] = {}
        for it in self._items:
            w = it.widget()
            if w is not None and not it.isEmpty():
                out.setdefault(w.y(), []).append((w.x(), w))
        return [[w for _, w in sorted(row, key=lambda p: p[0])] for _, row in sorted(out.items())]

    def _gap(self, it: QLayoutItem, axis: Qt.Orientation) -> int:
        if self.spacing() >= 0:
            return self.spacing()
        w = it.widget()
        style = w.style() if w is not None else None
        if style is None:
            return 6
        return style.layoutSpacing(QSizePolicy.ControlType.PushButton, QSizePolicy.ControlType.PushButton, axis)

    def _place(self, rect: QRect, *, move: bool) -> int:
        """Lay the items out in `rect` (only measure when not `move`); the height used."""
        m = self.contentsMargins()
        area = rect.adjusted(m.left(), m.top(), -m.right(), -m.bottom())
        x, y, row_h = area.x(), area.y(), 0
        for it in self._items:
            if it.isEmpty():
                continue
            hint = it.sizeHint().boundedTo(it.maximumSize()).expandedTo(it.minimumSize())
            gap = self._gap(it, Qt.Orientation.Horizontal)
            if x > area.x() and x + hint.width() > area.right() + 1:  # does not fit: a new row
                x, y = area.x(), y + row_h + self._gap(it, Qt.Orientation.Vertical)
                row_h = 0
            if move:
                it.setGeometry(QRect(QPoint(x, y), QSize(min(hint.width(), area.width()), hint.height())))
            x += hint.width() + gap
            row_h = max(row_h, hint.height())
        return y + row_h - rect.y() + m.bottom()

