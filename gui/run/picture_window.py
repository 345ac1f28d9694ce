"""A picture in a window of its own ("Picture after this step", a stored step's picture at full size):
it opens whole — scaled to fit the window (never above its own size), never cropped — and can be
zoomed (Ctrl+wheel, +/−, the buttons; 0 or "Fit" fits it again, 1 shows it at its own size) and
scrolled when zoomed (wheel, scroll bars, dragging). The window fits its screen and closes with Escape or Ctrl+W
(`gui.kit.window_fit`)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QKeySequence, QPainter, QPixmap, QShortcut
from PySide6.QtWidgets import (
    QFrame,
    QGraphicsPixmapItem,
    QGraphicsScene,
    QGraphicsView,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gui.kit.elided_label import ElidedLabel
from gui.kit.look import TEXT
from gui.kit.window_fit import close_keys, fit_window

ZOOM_STEP = 1.25
MIN_ZOOM, MAX_ZOOM = 0.05, 8.0


class PictureView(QGraphicsView):
    """The picture, fitted while `fitting` (the default; every resize fits it again), else at `zoom()`."""

    def __init__(self, pm: QPixmap, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("pictureView")
        self.scene_ = QGraphicsScene(self)
        self.item = QGraphicsPixmapItem(pm)
        self.item.setTransformationMode(Qt.TransformationMode.SmoothTransformation)
        self.scene_.addItem(self.item)
        self.scene_.setSceneRect(QRectF(pm.rect()))
        self.setScene(self.scene_)
        self.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setBackgroundBrush(QColor(TEXT))  # around a fitted picture
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.fitting = True
        self.on_zoom: Callable[[float], None] | None = None  # called with the zoom after every change

    def zoom(self) -> float:
        return self.transform().m11()

    def fit(self) -> None:
        """The whole picture in the view (never above its own size); no scroll bars while fitted."""
        self.fitting = True
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self.resetTransform()
        r = self.scene_.sceneRect()
        room = self.viewport().size()
        if r.width() > 0 and r.height() > 0 and room.width() > 0 and room.height() > 0:
            s = min(1.0, (room.width() - 1) / r.width(), (room.height() - 1) / r.height())
            self.scale(s, s)
        self.centerOn(r.center())
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self._said()

    def set_zoom(self, z: float) -> None:
        z = max(MIN_ZOOM, min(MAX_ZOOM, z))
        self.fitting = False
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)  # zoomed: scroll to see the rest
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.scale(z / self.zoom(), z / self.zoom())
        self._said()

    def zoom_by(self, factor: float) -> None:
        self.set_zoom(self.zoom() * factor)

    def whole_in_view(self) -> bool:
        """Every pixel of the picture is inside the visible part of the view."""
        shown = self.mapFromScene(self.scene_.sceneRect()).boundingRect()
        return self.viewport().rect().adjusted(-1, -1, 1, 1).contains(shown)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt name
        super().resizeEvent(event)
        if self.fitting:
            self.fit()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt name
        super().showEvent(event)
        if self.fitting:
            self.fit()

    def wheelEvent(self, event) -> None:  # noqa: N802 - Qt name
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            steps = event.angleDelta().y() / 120
            if steps:
                self.zoom_by(ZOOM_STEP ** steps)
            event.accept()
            return
        super().wheelEvent(event)  # scrolls when zoomed in

    def _said(self) -> None:
        if self.on_zoom is not None:
            self.on_zoom(self.zoom())


class PictureWindow(QWidget):
    """`PictureWindow(pixmap, title, anchor=window)`; `.show()`. Deletes itself when closed."""

    def __init__(self, pm: QPixmap, title: str, anchor: QWidget | None = None, caption: str = ""):
        super().__init__(None, Qt.WindowType.Window)
        self._pixmap = pm
        self.setObjectName("pictureWindow")
        self.setWindowTitle(title)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.view = PictureView(pm)
        bar = QHBoxLayout()
        bar.setContentsMargins(6, 4, 6, 4)
        bar.setSpacing(6)  # its own: a nested layout would take the window's 0 and run the words together
        # the caption gives way (elided, whole in its tooltip) before the zoom and the buttons do
        self.caption = ElidedLabel(caption or f"{pm.width()}×{pm.height()} px", mode=Qt.TextElideMode.ElideRight)
        self.caption.setObjectName("pictureCaption")
        self.zoom_label = QLabel()
        self.zoom_label.setObjectName("pictureZoom")
        # as wide as its widest text, right-aligned: the buttons stay where they are while the zoom changes
        self.zoom_label.setMinimumWidth(self.zoom_label.fontMetrics().horizontalAdvance("800 % (fit)") + 4)
        self.zoom_label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.fit_btn = QPushButton("Fit")
        self.fit_btn.setToolTip("The whole picture in the window (0)")
        self.actual_btn = QPushButton("100 %")
        self.actual_btn.setToolTip("The picture at its own size (1)")
        self.out_btn = QPushButton("−")
        self.out_btn.setToolTip("Zoom out (−, Ctrl+wheel)")
        self.in_btn = QPushButton("+")
        self.in_btn.setToolTip("Zoom in (+, Ctrl+wheel); scroll with the wheel or by dragging")
        self.fit_btn.clicked.connect(self.view.fit)
        self.actual_btn.clicked.connect(lambda: self.view.set_zoom(1.0))
        self.out_btn.clicked.connect(lambda: self.view.zoom_by(1 / ZOOM_STEP))
        self.in_btn.clicked.connect(lambda: self.view.zoom_by(ZOOM_STEP))
        bar.addWidget(self.caption, 1)
        for b in (self.out_btn, self.in_btn, self.fit_btn, self.actual_btn):  # as narrow as their words: room
            b.setFixedWidth(max(32, b.fontMetrics().horizontalAdvance(b.text()) + 24))  # for the caption
        for w in (self.zoom_label, self.out_btn, self.in_btn, self.fit_btn, self.actual_btn):
            bar.addWidget(w)
        v = QVBoxLayout(self)
        v.setContentsMargins(0, 0, 0, 0)
        v.setSpacing(0)
        v.addLayout(bar)
        v.addWidget(self.view, 1)
        self.view.on_zoom = lambda z: self.zoom_label.setText(f"{z * 100:.0f} %" + (" (fit)" if self.view.fitting
                                                                                     else ""))
        for seq, slot in (("+", lambda: self.view.zoom_by(ZOOM_STEP)), ("=", lambda: self.view.zoom_by(ZOOM_STEP)),
                          ("-", lambda: self.view.zoom_by(1 / ZOOM_STEP)), ("0", self.view.fit),
                          ("1", lambda: self.view.set_zoom(1.0))):
            QShortcut(QKeySequence(seq), self, slot)
        self.close_shortcuts = close_keys(self)
        # the picture at its own size when the screen has room for it, else as large as the screen allows
        fit_window(self, QSize(pm.width() + 4, pm.height() + 4 + bar.sizeHint().height()), anchor)

    def pixmap(self) -> QPixmap:
        """The picture at its own size."""
        return self._pixmap
