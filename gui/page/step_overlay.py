"""The approval bar floats over the live page's panel instead of taking room from it: the page panel —
and so the page's viewport — keeps its size while a step is asked, approved and the next one comes
(no re-layout, no stretched or offset frame in between, at any step).

The bar sits at the bottom of the panel, as wide as the panel, as tall as its content needs (at most
MAX_SHARE of the panel, scrolling beyond that); when the step's target would be under it, it moves
to the top of the panel so the outlined element stays in sight."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QRect, QRectF, Qt, QTimer
from PySide6.QtWidgets import QFrame, QPushButton, QScrollArea, QWidget

MAX_SHARE = 0.8   # of the panel's height
MARGIN = 6        # px between the bar and the panel's edges


class StepOverlay(QObject):
    """`StepOverlay(panel, bar)`: `bar` (hidden or shown by its owner) is laid over `panel`'s bottom or top.
    `place(target)` re-places it (target: the step's element as a rect in `panel`'s coordinates, or None)."""

    def __init__(self, panel: QWidget, bar: QWidget):
        super().__init__(panel)
        self.panel, self.bar = panel, bar
        self.at_top = False
        self._target: QRectF | None = None
        self.scroll = QScrollArea(panel)
        self.scroll.setObjectName("stepOverlay")
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll.setStyleSheet("#stepOverlay { background:transparent; }")
        self.scroll.viewport().setAutoFillBackground(False)
        self.scroll.setWidget(bar)
        bar.hide()  # reparented, it would show with the scroll area: it shows when its owner asks a step
        self.scroll.hide()
        self._later = QTimer(self)  # once the bar's layout has taken in what changed (a panel opened)
        self._later.setSingleShot(True)
        self._later.setInterval(0)
        self._later.timeout.connect(self._place)
        panel.installEventFilter(self)
        bar.installEventFilter(self)
        # a button that opens or closes a panel of the bar re-places it at once (its LayoutRequest comes a turn
        # later: a click that follows at once must find the panel's buttons where they are shown)
        for b in bar.findChildren(QPushButton):
            b.clicked.connect(lambda *_: self._place())

    def place(self, target: QRectF | None = None) -> None:
        self._target = target
        self._place()

    def refresh(self) -> None:
        """The bar's content changed (a line shown or hidden): fit it again now."""
        self._place()

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt name
        kind = event.type()
        if obj is self.panel and kind == QEvent.Type.Resize:
            self._place()
        elif obj is self.bar and kind in (QEvent.Type.ShowToParent, QEvent.Type.HideToParent, QEvent.Type.Show,
                                          QEvent.Type.Hide, QEvent.Type.LayoutRequest):
            self._place()
            self._later.start()
        return False

    def _place(self) -> None:
        if not self.bar.isVisibleTo(self.scroll):
            self.scroll.hide()
            return
        room = self.panel.rect().adjusted(MARGIN, MARGIN, -MARGIN, -MARGIN)
        width = max(200, room.width())
        layout = self.bar.layout()
        if layout is not None:
            layout.activate()  # its size hint takes in a panel just opened or closed
        want = self.bar.heightForWidth(width) if self.bar.hasHeightForWidth() else -1
        if want <= 0:
            want = self.bar.sizeHint().height()
        height = min(want, int(self.panel.height() * MAX_SHARE))
        bottom = QRect(room.left(), room.bottom() + 1 - height, width, height)
        top = QRect(room.left(), room.top(), width, height)
        t = self._target
        self.at_top = bool(t is not None and QRectF(bottom).intersects(t) and not QRectF(top).intersects(t))
        self.scroll.setGeometry(top if self.at_top else bottom)
        self.scroll.show()
        self.scroll.raise_()
        if want > height:  # taller than its room: keep the focused control (Approve, Apply …) in sight
            focus = self.bar.focusWidget()
            if focus is not None and self.bar.isAncestorOf(focus):
                self.scroll.ensureWidgetVisible(focus)

    def covers(self, w: QWidget) -> bool:
        """`w` (a control of the bar) is in the visible part of the overlay."""
        r = QRect(w.mapTo(self.scroll.viewport(), w.rect().topLeft()), w.size())
        return self.scroll.isVisible() and self.scroll.viewport().rect().contains(r)
