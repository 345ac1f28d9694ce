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

Lifecycle: `attach(tab)`, `await start()`, … `await stop()` — always stop before the browser
closes (a frame arriving while Chromium shuts down must not reach a dying widget).
"""

from __future__ import annotations

import asyncio
import collections
import logging
from typing import Any

from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from engine.actions.keys import MODIFIER_BITS
from engine.browser.screencast import InputForwarder, Screencast
from engine.vision.badges import shows_own_text
from engine.vision.som import OCCLUDED_COLOUR, ROLE_GROUPS, role_group
from gui.widgets.overlay import (HIGHLIGHT_STYLES, OverlayBox, badge_font, layout_badges, node_tooltip, paint_boxes,
                                 paint_highlights)

log = logging.getLogger("vigil.gui.page_view")

# Qt key → DOM `key` for keys that carry no text
_QT_KEYS: dict[int, str] = {
    Qt.Key_Return: "Enter", Qt.Key_Enter: "Enter", Qt.Key_Tab: "Tab", Qt.Key_Backtab: "Tab",
    Qt.Key_Backspace: "Backspace", Qt.Key_Escape: "Escape", Qt.Key_Delete: "Delete", Qt.Key_Insert: "Insert",
    Qt.Key_Left: "ArrowLeft", Qt.Key_Right: "ArrowRight", Qt.Key_Up: "ArrowUp", Qt.Key_Down: "ArrowDown",
    Qt.Key_Home: "Home", Qt.Key_End: "End", Qt.Key_PageUp: "PageUp", Qt.Key_PageDown: "PageDown",
    Qt.Key_Space: " ",
    Qt.Key_Shift: "Shift", Qt.Key_Control: "Control", Qt.Key_Alt: "Alt", Qt.Key_Meta: "Meta",
    **{getattr(Qt, f"Key_F{i}"): f"F{i}" for i in range(1, 13)},
}
_QT_BUTTONS = {Qt.LeftButton: "left", Qt.RightButton: "right", Qt.MiddleButton: "middle",
               Qt.BackButton: "back", Qt.ForwardButton: "forward"}
_BUTTON_BITS = {"left": 1, "right": 2, "middle": 4, "back": 8, "forward": 16}


def cdp_modifiers(mods: Any) -> int:
    """Qt keyboard modifiers → CDP bits (Alt 1, Control 2, Meta 4, Shift 8, as engine.actions.keys has them)."""
    m = Qt.KeyboardModifier(mods) if not isinstance(mods, Qt.KeyboardModifier) else mods
    qt = {"Alt": Qt.AltModifier, "Control": Qt.ControlModifier, "Meta": Qt.MetaModifier, "Shift": Qt.ShiftModifier}
    return sum(bit for name, bit in MODIFIER_BITS.items() if m & qt[name])


MIN_VIEWPORT = (240, 160)  # CSS px: a page squeezed below this is scaled instead
FIT_DELAY_MS = 150         # a window being dragged bigger resizes the page once it rests


class PageView(QWidget):
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
                self._image = img
        return self._image

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
        self._snapshot = snap
        self._boxes = []
        self._text_rects = []
        if snap is not None:
            for n in snap.nodes():
                if not (n.rendered and n.visible_ratio > 0):
                    continue
                x, y, w, h = n.bounds
                if w <= 0 or h <= 0:
                    continue
                if n.text and n.text.strip():
                    self._text_rects.append((x, y, w, h))
                if not n.interactive:
                    continue
                g = role_group(n.role)
                colour = OCCLUDED_COLOUR if n.occluded else ROLE_GROUPS[g][1]
                self._boxes.append(OverlayBox(n.node_id, n.role, g, (x, y, w, h), colour, n.occluded,
                                              shows_own_text(n)))
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
        """The boxes the overlay draws (one per interactive rendered node in view), in document order."""
        return list(self._boxes)

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
        key = (r.x(), r.y(), r.width(), r.height(), id(self._snapshot))
        if key != self._badge_key:
            self._badges = layout_badges(self._boxes, self._text_rects, self.page_rect_to_widget, self._font, r)
            self._badge_key = key
        return self._badges

    def box_at(self, p: QPointF) -> OverlayBox | None:
        """The overlay box under a widget point: its badge's (the hovered badge first, as it is drawn
        on top), else the smallest box there."""
        if self._overlay and self._boxes:
            badges = self.badge_rects()
            by_id = {b.node_id: b for b in self._boxes}
            hover = badges.get(self._hover_id) if self._hover_id else None
            if hover is not None and hover.contains(p):
                return by_id[self._hover_id]
            for b in reversed(self._boxes):
                lab = badges.get(b.node_id)
                if lab is not None and lab.contains(p):
                    return b
        pt = self.to_page(p)
        if pt is None:
            return None
        x, y = pt
        best, best_area = None, None
        for b in self._boxes:
            bx, by, bw, bh = b.page_rect
            if bx <= x <= bx + bw and by <= y <= by + bh:
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
                paint_boxes(p, self._boxes, self.page_rect_to_widget, self._font, self.badge_rects(), self._hover_id,
                            self.overlay_stale)
            paint_highlights(p, self._snapshot, self._highlights, self.page_rect_to_widget)
        finally:
            p.end()
        if self._painted_frame != self.frame_count:
            self._painted_frame = self.frame_count
            self.paint_count += 1
        self.frame_painted.emit()

    # -- input -------------------------------------------------------------------------------
    def _enqueue(self, method: str, *args, **kw) -> None:
        if not self.interactive or self._forwarder is None or not self._accepting:
            return
        if method == "mouse" and args[0] == "move" and self._queue and self._queue[-1][0] == "mouse" \
                and self._queue[-1][1][0] == "move":
            self._queue[-1] = (method, args, kw)  # coalesce: only the latest position matters
            self.moves_coalesced += 1
        else:
            self._queue.append((method, args, kw))
        if self._pump_task is None or self._pump_task.done():
            try:
                loop = asyncio.get_event_loop()
            except RuntimeError:
                log.info("no event loop: input dropped")
                self._queue.clear()
                return
            self._pump_task = loop.create_task(self._pump())

    async def _pump(self) -> None:
        while self._queue:
            method, args, kw = self._queue.popleft()
            fwd = self._forwarder
            if fwd is None:
                break
            try:
                await getattr(fwd, method)(*args, **kw)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the view must not crash on a page problem
                log.info("input %s failed: %s", method, exc)

    async def drain_input(self, timeout: float = 5.0) -> None:
        """Wait until every queued input event was sent (for tests and scripted takeovers)."""
        end = asyncio.get_running_loop().time() + timeout
        while (self._queue or (self._pump_task and not self._pump_task.done())) and \
                asyncio.get_running_loop().time() < end:
            await asyncio.sleep(0.01)

    @staticmethod
    def _buttons_mask(ev) -> int:
        mask = 0
        for qb, name in _QT_BUTTONS.items():
            if ev.buttons() & qb:
                mask |= _BUTTON_BITS[name]
        return mask

    def mousePressEvent(self, ev) -> None:  # noqa: N802 - Qt name
        self.setFocus(Qt.MouseFocusReason)
        pos = ev.position()
        if self._overlay and ev.button() == Qt.LeftButton:
            box = self.box_at(pos)
            if box is not None:
                self._press_on_box = box.node_id
                self.highlight(box.node_id, "selected")
                self.node_clicked.emit(box.node_id)
                ev.accept()
                return
        self._press_on_box = None
        pt = self.to_page(pos)
        btn = _QT_BUTTONS.get(ev.button())
        if pt is None or btn is None:
            return
        self._click_count = 1
        self._enqueue("mouse", "down", pt[0], pt[1], button=btn, click_count=1,
                      modifiers=cdp_modifiers(ev.modifiers()), buttons=self._buttons_mask(ev))
        ev.accept()

    def mouseDoubleClickEvent(self, ev) -> None:  # noqa: N802 - Qt name
        pos = ev.position()
        if self._overlay and ev.button() == Qt.LeftButton and self.box_at(pos) is not None:
            self._press_on_box = self.box_at(pos).node_id
            ev.accept()
            return
        pt = self.to_page(pos)
        btn = _QT_BUTTONS.get(ev.button())
        if pt is None or btn is None:
            return
        self._click_count = 2
        self._enqueue("mouse", "down", pt[0], pt[1], button=btn, click_count=2,
                      modifiers=cdp_modifiers(ev.modifiers()), buttons=self._buttons_mask(ev))
        ev.accept()

    def mouseReleaseEvent(self, ev) -> None:  # noqa: N802 - Qt name
        if self._press_on_box is not None:
            self._press_on_box = None
            ev.accept()
            return
        pt = self.to_page(ev.position())
        btn = _QT_BUTTONS.get(ev.button())
        if btn is None:
            return
        if pt is None:  # released in the letterbox: release at the nearest page edge
            r = self._target_rect()
            if r is None:
                return
            q = QPointF(min(max(ev.position().x(), r.left()), r.right()),
                        min(max(ev.position().y(), r.top()), r.bottom()))
            pt = self.to_page(q)
            if pt is None:
                return
        self._enqueue("mouse", "up", pt[0], pt[1], button=btn, click_count=self._click_count,
                      modifiers=cdp_modifiers(ev.modifiers()), buttons=self._buttons_mask(ev))
        ev.accept()

    def mouseMoveEvent(self, ev) -> None:  # noqa: N802 - Qt name
        pos = ev.position()
        if self._overlay:
            box = self.box_at(pos)
            hid = box.node_id if box else None
            if hid != self._hover_id:
                self._hover_id = hid
                self.update()
        pt = self.to_page(pos)
        if pt is None:
            return
        mask = self._buttons_mask(ev)
        btn = "left" if mask & 1 else "right" if mask & 2 else "middle" if mask & 4 else "none"
        self._enqueue("mouse", "move", pt[0], pt[1], button=btn, modifiers=cdp_modifiers(ev.modifiers()),
                      buttons=mask)

    def wheelEvent(self, ev) -> None:  # noqa: N802 - Qt name
        pt = self.to_page(ev.position())
        if pt is None:
            return
        pix = ev.pixelDelta()
        if not pix.isNull():
            s = self.scale or 1.0
            dx, dy = -pix.x() / s, -pix.y() / s
        else:
            ang = ev.angleDelta()
            dx, dy = -ang.x() / 120 * 100, -ang.y() / 120 * 100
        self._enqueue("wheel", pt[0], pt[1], dx, dy, modifiers=cdp_modifiers(ev.modifiers()))
        ev.accept()

    @staticmethod
    def key_params(ev) -> tuple[str, str, str, int | None]:
        """(key, code, text, windowsVirtualKeyCode) for a QKeyEvent."""
        k = ev.key()
        text = ev.text() or ""
        mods = cdp_modifiers(ev.modifiers())
        if k in _QT_KEYS:
            key = _QT_KEYS[k]
            if key in MODIFIER_BITS:
                return key, "", "", None  # the forwarder fills in code and key code from engine.actions.keys
            text = "\r" if key == "Enter" else (" " if key == " " else "")
        else:
            key = text if len(text) == 1 else ""
            if not key:
                # Control+letter: Qt gives a control character; use the letter key itself
                if Qt.Key_A <= k <= Qt.Key_Z:
                    key = chr(k).lower() if not (mods & 8) else chr(k)
                elif Qt.Key_0 <= k <= Qt.Key_9:
                    key = chr(k)
                else:
                    return "Unidentified", "", "", None
        if mods & 0b111:  # Control/Alt/Meta: no text produced
            text = ""
        elif text and not text.isprintable() and text != "\r":
            text = ""
        return key, "", text, None

    def keyPressEvent(self, ev) -> None:  # noqa: N802 - Qt name
        if not self.interactive or not self._accepting:
            return super().keyPressEvent(ev)
        key, code, text, kc = self.key_params(ev)
        self._enqueue("key", "down", key, code, text, cdp_modifiers(ev.modifiers()), key_code=kc,
                      auto_repeat=ev.isAutoRepeat())
        ev.accept()

    def keyReleaseEvent(self, ev) -> None:  # noqa: N802 - Qt name
        if not self.interactive or not self._accepting:
            return super().keyReleaseEvent(ev)
        key, code, _text, kc = self.key_params(ev)
        self._enqueue("key", "up", key, code, "", cdp_modifiers(ev.modifiers()), key_code=kc)
        ev.accept()

    def inputMethodEvent(self, ev) -> None:  # noqa: N802 - Qt name
        if ev.commitString():
            self._enqueue("insert_text", ev.commitString())
        ev.accept()

    def focusNextPrevChild(self, next_: bool) -> bool:  # noqa: N802 - Qt name
        # Tab and Shift+Tab belong to the page while the view is live
        if self.interactive and self._accepting:
            return False
        return super().focusNextPrevChild(next_)

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
