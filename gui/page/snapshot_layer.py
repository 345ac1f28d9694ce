"""The snapshot drawn over the live page (the page view's middle layer, on `PageInput`, under `PageView`): the
Set-of-Mark overlay, the highlights, and how far the snapshot lags the page.

With the overlay on, every interactive rendered node of the last snapshot is drawn over the frame as a Qt
layer (nothing is injected into the page) with its ID badge beside it; hovering a box or a badge shows the
node (and brings its badge to the front), and clicking one selects the node (`node_clicked`) instead of
clicking the page. How boxes and badges are laid out and painted is in `overlay`.

The live view: the window's supervisor takes a new snapshot whenever the page changes between steps
(engine.observe.live). Until it lands, what is drawn is older than the page, and says so: after a scroll
of the page the boxes move with it at once (shifted by the scroll the frame's metadata reports, except
the boxes seen to stay put when the page scrolled before: fixed headers, sticky bars — see `live_shift`),
every box is drawn faint, and a small mark at the top right of the page says "updating…", or "stale · 3 s"
once the snapshot lags by more than STALE_AFTER_S (`set_page_ahead`).
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QPointF, QRectF, Qt, QTimer
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QPainter, QPen
from PySide6.QtWidgets import QToolTip, QWidget

from gui.page.live_shift import InnerScrolls, pinned_ids, shift_boxes
from gui.page.overlay import (
    HIGHLIGHT_STYLES,
    OverlayBox,
    badge_font,
    layout_badges,
    node_tooltip,
    overlay_items,
    paint_boxes,
    paint_highlights,
)
from gui.page.page_input import PageInput

if TYPE_CHECKING:
    from engine.snapshot.dom_snapshot import DomSnapshot

STALE_AFTER_S = 1.0        # a snapshot lagging the page longer than this is called stale, with its lag


class SnapshotLayer(PageInput):
    """The overlay, the highlights and the lag mark; built on `PageInput`, under `PageView` (whose frames'
    metadata, geometry — `to_page`, `page_rect_to_widget`, `scale`, `_target_rect` — and current frame are
    used here)."""

    if TYPE_CHECKING:  # the page view's (gui.page.page_view)
        _page_size: tuple[float, float]
        _meta: dict[str, Any]

        @property
        def running(self) -> bool: ...
        async def request_frame(self) -> None: ...
        def page_rect_to_widget(self, rect: tuple[float, float, float, float]) -> QRectF: ...
        def _current_image(self) -> QImage | None: ...

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # overlay
        self._snapshot: DomSnapshot | None = None
        self._overlay = False
        self._boxes: list[OverlayBox] = []
        self._highlights: dict[str, str] = {}
        self._hover_id: str | None = None
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

    # -- overlay -----------------------------------------------------------------------------
    def set_snapshot(self, snap) -> None:
        """Use this snapshot for the overlay and highlights (redraws)."""
        prev, self._snapshot = self._snapshot, snap
        self._pinned = pinned_ids(prev, snap, self._pinned)
        self._inner.clear()
        if snap is not None and self.running and (any(self.scroll_shift()) or self._frame_off_size(snap)):
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

    def _frame_off_size(self, snap) -> bool:
        """The last frame shows the page at another size than the snapshot saw (a frame painted while a
        screenshot was scaled, and a still page sends no other): a frame is asked for."""
        vp = snap.context.viewport
        pw, ph = self._page_size
        return vp.width > 0 and pw > 0 and (abs(pw - vp.width) > 1.5 or abs(ph - vp.height) > 1.5)

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
            hover_id = self._hover_id
            hover = badges.get(hover_id) if hover_id else None
            if hover_id and hover is not None and hover.contains(p):
                return by_id[hover_id]
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
    def _paint_layer(self, p: QPainter, area: QRectF) -> None:
        """The boxes, the highlights and the stale mark over the page painted at `area` (clipped to it)."""
        if self._overlay and self._boxes:
            paint_boxes(p, self.drawn_boxes(), self.page_rect_to_widget, self._font, self.badge_rects(),
                        self._hover_id, self.overlay_stale)
        self._paint_highlights(p)
        if self._overlay:
            self._paint_stale_mark(p, area)

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
        p.drawText(box, Qt.AlignmentFlag.AlignCenter, text)
        p.setOpacity(1.0)

    def event(self, ev) -> bool:
        if ev.type() == QEvent.Type.ToolTip:
            box = self.box_at(QPointF(ev.pos())) if self._overlay else None
            if box is not None:
                QToolTip.showText(ev.globalPos(), self.tooltip_text(box.node_id), self)
            else:
                QToolTip.hideText()
                ev.ignore()
            return True
        return super().event(ev)
