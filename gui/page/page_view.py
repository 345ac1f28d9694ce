"""The live page: screencast frames painted into a Qt widget, input forwarded back to the page.

By default the page follows the panel, like a browser window: when the view is resized it asks
(`viewport_wanted`, debounced) for a page viewport of its own size in CSS px, so the page re-lays
out and fills the panel at 1:1. With a device preset (`set_preset((w, h))`) the page keeps that size
and the frame is scaled to fit, aspect kept (letterboxed). Either way frames are requested at the
panel's device pixels, and `to_page` / `to_widget` are the exact inverse mappings between widget
px and page CSS px.

The view is made of three layers, each a class built on the last: `page_input.PageInput` (below),
`snapshot_layer.SnapshotLayer` (the snapshot drawn over the frame: the Set-of-Mark overlay with its ID
badges, the highlights, and the live view's lag — boxes moved with the page's scroll, drawn faint, and
the "updating…" / "stale · 3 s" mark) and this module (the frames, fitting the page to the panel,
geometry); `PageInput` sends mouse, wheel and keys to the page (Ctrl+Shift+click or Alt+click selecting a node,
pick mode, a native select's list drawn over the page).

Lifecycle: `attach(tab)`, `await start()`, … `await stop()` — always stop before the browser
closes (a frame arriving while Chromium shuts down must not reach a dying widget).
"""

from __future__ import annotations

import asyncio
import logging
import time

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QSizePolicy, QWidget

from engine.browser.screencast import InputForwarder, Screencast
from engine.vision.mask import FILL, LiveMasker, device_rect
from gui.page.page_input import cdp_modifiers  # noqa: F401  (cdp_modifiers: part of this API)
from gui.page.snapshot_layer import STALE_AFTER_S, SnapshotLayer  # noqa: F401  (STALE_AFTER_S: part of this API)

log = logging.getLogger("vigil.gui.page_view")

MIN_VIEWPORT = (240, 160)  # CSS px: a page squeezed below this is scaled instead
FIT_DELAY_MS = 150         # a window being dragged bigger resizes the page once it rests


class PageView(SnapshotLayer):
    frame_painted = Signal()
    viewport_wanted = Signal(int, int)  # the page viewport (CSS px) that fills this view (fit mode)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMouseTracking(True)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, True)
        self.setAttribute(Qt.WidgetAttribute.WA_InputMethodEnabled, True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(160, 100)
        self.interactive = True
        self._masking = True  # secret fields painted over in the live frames (set_masking)
        self.tab = None
        self._screencast: Screencast | None = None
        self._forwarder: InputForwarder | None = None
        self._image: QImage | None = None
        self._jpeg: bytes | None = None  # latest frame, not yet decoded
        self._meta: dict = {}
        self._page_size: tuple[float, float] = (0.0, 0.0)
        self._asked_size_at = 0.0  # time.monotonic() when a frame was last asked for, the last one off size
        self.frame_count = 0  # frames received since start()
        self.paint_count = 0  # frames painted
        self._painted_frame = -1
        self._accepting = False
        # fitting the page to the panel
        self._preset: tuple[int, int] | None = None  # None: the page follows the panel
        self._fit_timer = QTimer(self, singleShot=True, interval=FIT_DELAY_MS)
        self._fit_timer.timeout.connect(self._refit)

    # -- lifecycle ---------------------------------------------------------------------------
    def attach(self, tab) -> None:
        """Show this tab (call `start()` next). Stops nothing: call `stop()` first when switching."""
        self.tab = tab
        self._screencast = Screencast(tab)
        self._forwarder = InputForwarder(tab)
        self.set_masking(self._masking)

    def set_masking(self, on: bool) -> None:
        """Paint secret fields (and any text showing a secret typed in this browser) over in the live
        frames — the same boxes as every screenshot (engine.vision.mask). On by default; the window
        lets the person turn it off for the session. Takes effect with the next frame (one is asked for)."""
        self._masking = bool(on)
        sc = self._screencast
        if sc is None:
            return
        # the boxes follow the page's scroll; painted here as the frame is decoded (_masked)
        sc.frame_filter = LiveMasker(sc.tab, paint=False, again=self._ask_frame) if self._masking else None
        if sc.running:
            self._ask_frame()

    def _ask_frame(self) -> None:
        sc = self._screencast
        if sc is None or not sc.running:
            return
        try:
            asyncio.ensure_future(sc.request_frame())
        except RuntimeError:  # no event loop (a view used without the engine)
            pass

    @property
    def masking(self) -> bool:
        return self._masking

    async def request_frame(self) -> None:
        """Ask the page for a new frame now (a still page sends none by itself)."""
        if self._screencast is not None:
            await self._screencast.request_frame()

    async def start(self, *, quality: int = 70, every_nth: int = 1) -> None:
        """Stream frames at this view's device pixels (see `device_size`)."""
        if self._screencast is None:
            raise RuntimeError("PageView.start(): attach(tab) first")
        self.frame_count = 0
        self._accepting = True
        w, h = self.device_size()
        await self._screencast.start(self._on_frame, max_width=w, max_height=h, quality=quality, every_nth=every_nth)

    async def stop(self) -> None:
        """Stop the screencast and input; keeps the last frame on screen. Idempotent."""
        self._accepting = False
        self.close_select_list()
        self._queue.clear()
        self._held, self._swallow_up, self._eaten_key = None, False, ""
        task, self._pump_task = self._pump_task, None
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        if self._screencast is not None:
            await self._screencast.stop()

    @property
    def running(self) -> bool:
        return bool(self._accepting and self._screencast and self._screencast.running)

    @property
    def fps(self) -> float:
        return self._screencast.fps if self._screencast else 0.0

    def last_frame_image(self) -> QImage | None:
        img = self._current_image()
        return QImage(img) if img is not None else None

    def _current_image(self) -> QImage | None:
        """The latest frame, decoded on first use (frames that are never painted are never decoded)."""
        data, self._jpeg = self._jpeg, None
        if data is not None:
            # PySide6's stub types the format as bytes; the binding takes a str and refuses bytes
            img = QImage.fromData(data, "JPEG")  # type: ignore[arg-type]
            if not img.isNull():
                self._image = self._masked(img, self._meta)
        return self._image

    @staticmethod
    def _masked(img: QImage, meta: dict) -> QImage:
        """The frame with the secret boxes its masking found (meta "secret_boxes", CSS px) painted
        solid, as engine.vision.mask paints every screenshot — before it is ever shown."""
        boxes = meta.get("secret_boxes")
        css_width = float(meta.get("deviceWidth") or 0)
        if boxes:
            scale = img.width() / css_width if css_width > 0 else 1.0
            img = img.convertToFormat(QImage.Format.Format_RGB32)
            p = QPainter(img)
            for box in boxes:
                r = device_rect(box, scale, img.width(), img.height())
                if r is not None:
                    p.fillRect(r[0], r[1], r[2] - r[0], r[3] - r[1], QColor(*FILL))
            p.end()
        return img

    @property
    def page_size(self) -> tuple[float, float]:
        """The page viewport in CSS px, from the latest frame."""
        return self._page_size

    def _on_frame(self, data: bytes, meta: dict) -> None:
        if not self._accepting:
            return
        self._jpeg = data
        self._meta = meta
        w, h = float(meta.get("deviceWidth") or 0), float(meta.get("deviceHeight") or 0)
        if w <= 0 or h <= 0:
            img = self._current_image()
            if img is None:
                return
            w, h = float(img.width()), float(img.height())
        self._page_size = (w, h)
        self.frame_count += 1
        snap = self._snapshot
        if snap is not None and self._frame_off_size(snap) and time.monotonic() - self._asked_size_at > 0.3:
            # a frame at another size than the page's (painted while a screenshot was scaled): a still page
            # sends no other, so one is asked for (at most every 0.3 s: a real resize brings its own)
            self._asked_size_at = time.monotonic()
            try:
                asyncio.ensure_future(self.request_frame())
            except RuntimeError:  # no event loop (a view used without the engine)
                pass
        self.update()

    # -- fitting the page to the panel --------------------------------------------------------
    @property
    def fit(self) -> bool:
        """The page follows the panel (no preset)."""
        return self._preset is None

    @property
    def preset(self) -> tuple[int, int] | None:
        return self._preset

    def set_preset(self, size: tuple[int, int] | None) -> None:
        """A device size the page keeps (scaled to fit), or None to follow the panel again (asks for
        the fitting viewport at once)."""
        self._preset = (int(size[0]), int(size[1])) if size else None
        if self._preset is None:
            self._refit()

    def fit_size(self) -> tuple[int, int]:
        """The page viewport, in CSS px, that fills this view at 1:1."""
        return max(MIN_VIEWPORT[0], self.width()), max(MIN_VIEWPORT[1], self.height())

    def wanted_viewport(self) -> tuple[int, int]:
        """The viewport the page should have now: the preset, or the panel's size."""
        return self._preset or self.fit_size()

    def device_size(self) -> tuple[int, int]:
        """This view in device pixels: the size frames are asked for, so text is drawn sharp."""
        dpr = self.devicePixelRatioF() or 1.0
        return max(1, round(self.width() * dpr)), max(1, round(self.height() * dpr))

    def painted_rect(self) -> QRectF | None:
        """Where the page is painted in this view (widget px), or None before the first frame."""
        return self._target_rect()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt name
        super().resizeEvent(event)
        self._fit_timer.start()  # debounced: the page is resized once the panel rests

    def _refit(self) -> None:
        self._fit_timer.stop()
        if self._screencast is not None and self._screencast.running:
            w, h = self.device_size()
            try:
                asyncio.ensure_future(self._screencast.set_size(w, h))
            except RuntimeError:  # no event loop (a view used without the engine)
                pass
        if self.fit:
            self.viewport_wanted.emit(*self.fit_size())

    # -- geometry ----------------------------------------------------------------------------
    def _target_rect(self) -> QRectF | None:
        pw, ph = self._page_size
        if pw <= 0 or ph <= 0 or self.width() <= 0 or self.height() <= 0:
            return None
        s = min(self.width() / pw, self.height() / ph)
        w, h = pw * s, ph * s
        return QRectF((self.width() - w) / 2, (self.height() - h) / 2, w, h)

    @property
    def scale(self) -> float:
        """Widget px per page CSS px (0 before the first frame)."""
        r = self._target_rect()
        return r.width() / self._page_size[0] if r is not None else 0.0

    def to_page(self, p: QPointF) -> tuple[float, float] | None:
        """Widget point → page CSS px, or None outside the painted page (letterbox)."""
        r = self._target_rect()
        if r is None:
            return None
        x, y = p.x(), p.y()
        if not (r.left() <= x <= r.right() and r.top() <= y <= r.bottom()):
            return None
        s = r.width() / self._page_size[0]
        px = min(max((x - r.left()) / s, 0.0), self._page_size[0])
        py = min(max((y - r.top()) / s, 0.0), self._page_size[1])
        return (px, py)

    def to_widget(self, x: float, y: float) -> QPointF:
        """Page CSS px → widget point."""
        r = self._target_rect()
        if r is None:
            return QPointF(x, y)
        s = r.width() / self._page_size[0]
        return QPointF(r.left() + x * s, r.top() + y * s)

    def page_rect_to_widget(self, rect: tuple[float, float, float, float]) -> QRectF:
        x, y, w, h = rect
        tl = self.to_widget(x, y)
        s = self.scale or 1.0
        return QRectF(tl.x(), tl.y(), w * s, h * s)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt name
        return QSize(800, 500)

    # -- painting ----------------------------------------------------------------------------
    def paintEvent(self, event) -> None:  # noqa: N802 - Qt name
        p = QPainter(self)
        try:
            p.fillRect(self.rect(), QColor(40, 42, 48))
            r = self._target_rect()
            img = self._current_image()
            if img is None or r is None:
                p.setPen(QColor(180, 180, 190))
                p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "No page yet")
                return
            p.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, True)
            p.drawImage(r, img)
            p.setClipRect(r)
            p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            self._paint_layer(p, r)
        finally:
            p.end()
        if self._painted_frame != self.frame_count:
            self._painted_frame = self.frame_count
            self.paint_count += 1
        self.frame_painted.emit()
