"""The live page: screencast frames painted into a Qt widget, input forwarded back to the page.

By default the page follows the panel, like a browser window: when the view is resized it asks
(`viewport_wanted`, debounced) for a page viewport of its own size in CSS px, so the page re-lays
out and fills the panel at 1:1. With a device preset (`set_preset((w, h))`) the page keeps that size
and the frame is scaled to fit, aspect kept (letterboxed). Either way frames are requested at the
panel's device pixels, and `to_page` / `to_widget` are the exact inverse mappings between widget
px and page CSS px.

With the Set-of-Mark overlay on, every interactive rendered node of the last snapshot is drawn
over the frame as a Qt layer (nothing is injected into the page) with its ID badge beside it;
hovering a box or a badge shows the node (and brings its badge to the front), and clicking one
selects the node (`node_clicked`) instead of clicking the page.

The live view: the window's supervisor takes a new snapshot whenever the page changes between steps
(engine.observe.live). Until it lands, what is drawn is older than the page, and says so: after a scroll
of the page the boxes move with it at once (shifted by the scroll the frame's metadata reports, except
the boxes seen to stay put when the page scrolled before: fixed headers, sticky bars), every box is drawn
faint, and a small mark at the top right of the page says "updating…", or "stale · 3 s" once the
snapshot lags by more than STALE_AFTER_S (`set_page_ahead`).

Lifecycle: `attach(tab)`, `await start()`, … `await stop()` — always stop before the browser
closes (a frame arriving while Chromium shuts down must not reach a dying widget).
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time

from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from engine.browser.screencast import InputForwarder, Screencast
from engine.vision.mask import FILL, LiveMasker, device_rect
from gui.widgets.live_shift import InnerScrolls, pinned_ids, shift_boxes
from gui.widgets.overlay import (
    HIGHLIGHT_STYLES,
    OverlayBox,
    badge_font,
    layout_badges,
    node_tooltip,
    overlay_items,
    paint_boxes,
    paint_highlights,
)
from gui.widgets.page_input import PageInput, cdp_modifiers  # noqa: F401  (cdp_modifiers: part of this API)

log = logging.getLogger("vigil.gui.page_view")

MIN_VIEWPORT = (240, 160)  # CSS px: a page squeezed below this is scaled instead
FIT_DELAY_MS = 150         # a window being dragged bigger resizes the page once it rests
STALE_AFTER_S = 1.0        # a snapshot lagging the page longer than this is called stale, with its lag


class PageView(PageInput, QWidget):
    node_clicked = Signal(str)
    frame_painted = Signal()
    viewport_wanted = Signal(int, int)  # the page viewport (CSS px) that fills this view (fit mode)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setFocusPolicy(Qt.StrongFocus)
        self.setMouseTracking(True)
        self.setAttribute(Qt.WA_OpaquePaintEvent, True)
        self.setAttribute(Qt.WA_InputMethodEnabled, True)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
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
        self.frame_count = 0  # frames received since start()
        self.paint_count = 0  # frames painted
        self._painted_frame = -1
        self._accepting = False
        # input: one ordered queue, one event in flight; consecutive moves collapse into the latest
        self._queue: collections.deque[tuple[str, tuple, dict]] = collections.deque()
        self._pump_task: asyncio.Task | None = None
        self._click_count = 1
        self.moves_coalesced = 0
        # overlay
        self._snapshot = None
        self._overlay = False
        self._boxes: list[OverlayBox] = []
        self._highlights: dict[str, str] = {}
        self._hover_id: str | None = None
        self._press_on_box: str | None = None
        self._text_rects: list[tuple[float, float, float, float]] = []  # page text to keep readable
        self._badges: dict = {}
        self._badge_key: tuple | None = None
        self._font = badge_font(self.font())
        # the live view: how far the drawn snapshot lags the page
        self._ahead_since = 0.0            # time.monotonic() when the page changed after the snapshot; 0: caught up
        self._pinned: set[str] = set()     # boxes that stay put when the page scrolls (fixed, sticky)
        self._inner = InnerScrolls()       # scroll areas the wheel moved since the snapshot
        self._shifted: tuple[tuple, list[OverlayBox]] | None = None
        self._mark_font = QFont(self.font())
        self._mark_font.setPixelSize(11)
        self._stale_timer = QTimer(self, interval=500)
        self._stale_timer.timeout.connect(self.update)
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
        sc.frame_filter = LiveMasker(sc.tab, paint=False) if self._masking else None  # painted in _decoded
        if sc.running:
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
        self._queue.clear()
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
            img = QImage.fromData(data, "JPEG")
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
            img = img.convertToFormat(QImage.Format_RGB32)
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

    # -- overlay -----------------------------------------------------------------------------
    def set_snapshot(self, snap) -> None:
        """Use this snapshot for the overlay and highlights (redraws)."""
        prev, self._snapshot = self._snapshot, snap
        self._pinned = pinned_ids(prev, snap, self._pinned)
        self._inner.clear()
        if snap is not None and self.running and any(self.scroll_shift()):
            # the snapshot saw the page scrolled further than the last frame shows (a frame held back while
            # the page moved, and a still page sends no other): ask for one, so picture and boxes meet
            try:
                asyncio.ensure_future(self.request_frame())
            except RuntimeError:  # no event loop (a view used without the engine)
                pass
        self._shifted = None
        self._boxes, self._text_rects = overlay_items(snap)  # boxes (line by line), words to keep readable
        self._hover_id = None
        self._badge_key = None
        self.update()

    def set_overlay(self, visible: bool) -> None:
        self._overlay = bool(visible)
        if not self._overlay:
            QToolTip.hideText()
        self.update()

    @property
    def overlay_visible(self) -> bool:
        return self._overlay

    @property
    def overlay_stale(self) -> bool:
        """The page scrolled or was resized since the snapshot: the boxes no longer sit on their
        elements (drawn faint until the next snapshot)."""
        snap, meta = self._snapshot, self._meta
        if snap is not None and (self._ahead_since or self._inner):
            return True
        if snap is None or "scrollOffsetY" not in meta:
            return False
        ctx = snap.context
        vp = ctx.viewport
        pw, ph = self._page_size
        if vp.width > 0 and pw > 0 and (abs(pw - vp.width) > 1.5 or abs(ph - vp.height) > 1.5):
            return True
        return (abs(float(meta.get("scrollOffsetY") or 0) - float(ctx.scroll_y or 0)) > 1.5
                or abs(float(meta.get("scrollOffsetX") or 0) - float(ctx.scroll_x or 0)) > 1.5)

    def overlay_boxes(self) -> list[OverlayBox]:
        """The boxes of the snapshot (one per interactive rendered node in view), in document order, where
        the snapshot saw them (`drawn_boxes()`: where they are drawn now)."""
        return list(self._boxes)

    # -- the live view: a snapshot older than the page --------------------------------------------
    def set_page_ahead(self, since: float) -> None:
        """The page changed at `since` (time.monotonic()) and the snapshot shown is older; 0: caught up."""
        self._ahead_since = float(since or 0.0)
        if self._ahead_since:
            self._stale_timer.start()
        else:
            self._stale_timer.stop()
        self.update()

    @property
    def page_ahead_since(self) -> float:
        return self._ahead_since

    def stale_mark(self) -> str:
        """The mark drawn over the page while the snapshot is older than it ("" when it is not)."""
        if self._snapshot is None or not self.overlay_stale:
            return ""
        lag = time.monotonic() - self._ahead_since if self._ahead_since else 0.0
        return f"stale · {lag:.0f} s" if lag > STALE_AFTER_S else "updating…"

    def scroll_shift(self) -> tuple[float, float]:
        """How far (CSS px) the page scrolled since the snapshot: the boxes are drawn moved back by it."""
        snap, meta = self._snapshot, self._meta
        if snap is None or "scrollOffsetY" not in meta:
            return (0.0, 0.0)
        ctx = snap.context
        dx = float(ctx.scroll_x or 0) - float(meta.get("scrollOffsetX") or 0)
        dy = float(ctx.scroll_y or 0) - float(meta.get("scrollOffsetY") or 0)
        return (dx if abs(dx) > 0.5 else 0.0, dy if abs(dy) > 0.5 else 0.0)

    def drawn_boxes(self) -> list[OverlayBox]:
        """The boxes where they are drawn now: shifted with the page's scroll since the snapshot (boxes
        that stay put when the page scrolls are not), and those in a scroll area the wheel moved since,
        by its scroll (cut to the area; gone when scrolled out of it)."""
        dx, dy = self.scroll_shift()
        if not dx and not dy and not self._inner:
            return self._boxes
        key = (dx, dy, id(self._snapshot), len(self._boxes), self._inner.version)
        if self._shifted is None or self._shifted[0] != key:
            self._shifted = (key, shift_boxes(self._boxes, dx, dy, self._pinned, self._inner))
        return self._shifted[1]

    def wheelEvent(self, ev) -> None:  # noqa: N802 - Qt name
        """The wheel goes to the page (PageInput); a scroll area under it is expected to move by as much:
        its boxes move with it at once, until the snapshot of its new place lands."""
        super().wheelEvent(ev)
        pt = self.to_page(ev.position())
        if pt is None or self._snapshot is None or self.picking:
            return
        pix = ev.pixelDelta()
        dy = -pix.y() / (self.scale or 1.0) if not pix.isNull() else -ev.angleDelta().y() / 120 * 100
        if self._inner.wheel(self._snapshot, pt, dy):
            self.update()

    def highlight(self, node_id: str | None, kind: str = "selected") -> None:
        """Outline a node ("selected": solid cyan; "target": dashed orange); None clears that kind."""
        if kind not in HIGHLIGHT_STYLES:
            raise ValueError(f"highlight kind must be one of {sorted(HIGHLIGHT_STYLES)}")
        if node_id is None:
            self._highlights.pop(kind, None)
        else:
            self._highlights[kind] = str(node_id)
        self.update()

    def highlighted(self, kind: str = "selected") -> str | None:
        return self._highlights.get(kind)

    def badge_rects(self) -> dict:
        """Each box's badge rect in widget px (QRectF by node ID), as painted now."""
        r = self._target_rect()
        if r is None or not self._boxes:
            return {}
        dx, dy = self.scroll_shift()
        key = (r.x(), r.y(), r.width(), r.height(), id(self._snapshot), dx, dy, self._inner.version)
        if key != self._badge_key:
            texts = [(x + dx, y + dy, w, h) for x, y, w, h in self._text_rects] if dx or dy else self._text_rects
            self._badges = layout_badges(self.drawn_boxes(), texts, self.page_rect_to_widget, self._font, r,
                                         frame=self._current_image())
            self._badge_key = key
        return self._badges

    def box_at(self, p: QPointF) -> OverlayBox | None:
        """The overlay box under a widget point: its badge's (the hovered badge first, as it is drawn
        on top), else the smallest box there."""
        boxes = self.drawn_boxes()
        if self._overlay and boxes:
            badges = self.badge_rects()
            by_id = {b.node_id: b for b in boxes}
            hover = badges.get(self._hover_id) if self._hover_id else None
            if hover is not None and hover.contains(p):
                return by_id[self._hover_id]
            for b in reversed(boxes):
                lab = badges.get(b.node_id)
                if lab is not None and lab.contains(p):
                    return b
        pt = self.to_page(p)
        if pt is None:
            return None
        x, y = pt
        best, best_area = None, None
        for b in boxes:
            bx, by, bw, bh = b.page_rect
            if b.hit(x, y):  # on one of its line boxes
                area = bw * bh
                if best_area is None or area < best_area:
                    best, best_area = b, area
        return best

    def tooltip_text(self, node_id: str) -> str:
        """The hover text for a node: rich text with every page string escaped; no secret values."""
        return node_tooltip(self._snapshot, node_id)

    # -- painting ----------------------------------------------------------------------------
    def paintEvent(self, event) -> None:  # noqa: N802 - Qt name
        p = QPainter(self)
        try:
            p.fillRect(self.rect(), QColor(40, 42, 48))
            r = self._target_rect()
            img = self._current_image()
            if img is None or r is None:
                p.setPen(QColor(180, 180, 190))
                p.drawText(self.rect(), Qt.AlignCenter, "No page yet")
                return
            p.setRenderHint(QPainter.SmoothPixmapTransform, True)
            p.drawImage(r, img)
            p.setClipRect(r)
            p.setRenderHint(QPainter.Antialiasing, True)
            if self._overlay and self._boxes:
                paint_boxes(p, self.drawn_boxes(), self.page_rect_to_widget, self._font, self.badge_rects(),
                            self._hover_id, self.overlay_stale)
            self._paint_highlights(p)
            if self._overlay:
                self._paint_stale_mark(p, r)
        finally:
            p.end()
        if self._painted_frame != self.frame_count:
            self._painted_frame = self.frame_count
            self.paint_count += 1
        self.frame_painted.emit()

    def _paint_highlights(self, p: QPainter) -> None:
        """The outlines, moved with the page's scroll since the snapshot (as the boxes are)."""
        dx, dy = self.scroll_shift()
        if not (dx or dy):
            paint_highlights(p, self._snapshot, self._highlights, self.page_rect_to_widget)
            return
        for kind, nid in self._highlights.items():
            shift = (0.0, 0.0) if nid in self._pinned else (dx, dy)
            paint_highlights(p, self._snapshot, {kind: nid},
                             lambda rect, s=shift: self.page_rect_to_widget((rect[0] + s[0], rect[1] + s[1],
                                                                             rect[2], rect[3])))

    def _paint_stale_mark(self, p: QPainter, area: QRectF) -> None:
        """"updating…" / "stale · 3 s" at the page's top right while the snapshot is older than the page."""
        text = self.stale_mark()
        if not text:
            return
        fm = QFontMetricsF(self._mark_font)
        w, h = fm.horizontalAdvance(text) + 12, fm.height() + 4
        box = QRectF(area.right() - w - 6, area.top() + 6, w, h)
        p.setOpacity(0.9)
        p.setPen(QPen(QColor(255, 255, 255), 1.0))
        p.setBrush(QColor(180, 83, 9) if text.startswith("stale") else QColor(55, 65, 81))
        p.drawRoundedRect(box, 4, 4)
        p.setFont(self._mark_font)
        p.drawText(box, Qt.AlignCenter, text)
        p.setOpacity(1.0)

    def event(self, ev) -> bool:
        if ev.type() == QEvent.ToolTip:
            box = self.box_at(QPointF(ev.pos())) if self._overlay else None
            if box is not None:
                QToolTip.showText(ev.globalPos(), self.tooltip_text(box.node_id), self)
            else:
                QToolTip.hideText()
                ev.ignore()
            return True
        return super().event(ev)

