"""Input over the live page view: mouse, wheel and keys go to the page through CDP `Input.*`.

`PageInput` is the first of the page view's three layers (`PageInput` ← `snapshot_layer.SnapshotLayer` ←
`page_view.PageView`): it uses the view's mapping `to_page`, the layer's hit test `box_at` and the view's
forwarder (what it uses of the two is declared on the class). Events go out in order, one in flight at a time;
consecutive mouse moves collapse into the latest. Clicks reach the page with the Set-of-Mark overlay on
too: selecting a node takes Ctrl+Shift+click on its box or badge (SELECT_WORDS), or Alt+click where the window
manager leaves Alt+click to the window (openbox, GNOME, KDE and Xfce take it to move windows) — a selecting
click never reaches the page, where Chromium would open or save a link — or a plain click while the host says
clicks pick (`select_on_click`: the approval bar's Edit panel is open).

A press on a native `<select>` (or Space, F4, Alt+Down while one has focus) opens its list drawn over the page
(`select_list`: the screencast does not paint Chromium's own popup); the choice is made in the page.

Pick mode (`set_picking`) tells the Playwright locator of what is under the pointer: a label's text
means its control, a select's field or chevron its control (`engine.loop.person_steps.control_at`);
where nothing takes input, it says so.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtWidgets import QWidget

from engine.browser import native_select
from engine.browser.keys import MODIFIER_BITS
from engine.browser.native_select import SelectInfo
from gui.page.select_list import SelectList

if TYPE_CHECKING:
    from engine.browser.screencast import InputForwarder
    from engine.snapshot.dom_snapshot import DomSnapshot
    from gui.page.overlay import OverlayBox

log = logging.getLogger("vigil.gui.page_view")

# Qt key → DOM `key` for keys that carry no text
_K = Qt.Key
_QT_KEYS: dict[int, str] = {
    _K.Key_Return: "Enter", _K.Key_Enter: "Enter", _K.Key_Tab: "Tab", _K.Key_Backtab: "Tab",
    _K.Key_Backspace: "Backspace", _K.Key_Escape: "Escape", _K.Key_Delete: "Delete", _K.Key_Insert: "Insert",
    _K.Key_Left: "ArrowLeft", _K.Key_Right: "ArrowRight", _K.Key_Up: "ArrowUp", _K.Key_Down: "ArrowDown",
    _K.Key_Home: "Home", _K.Key_End: "End", _K.Key_PageUp: "PageUp", _K.Key_PageDown: "PageDown",
    _K.Key_Space: " ",
    _K.Key_Shift: "Shift", _K.Key_Control: "Control", _K.Key_Alt: "Alt", _K.Key_Meta: "Meta",
    **{getattr(_K, f"Key_F{i}"): f"F{i}" for i in range(1, 13)},
}
_B = Qt.MouseButton
_QT_BUTTONS = {_B.LeftButton: "left", _B.RightButton: "right", _B.MiddleButton: "middle", _B.BackButton: "back",
               _B.ForwardButton: "forward"}
_BUTTON_BITS = {"left": 1, "right": 2, "middle": 4, "back": 8, "forward": 16}
_M = Qt.KeyboardModifier
# what selects a node on the live page: Ctrl+Shift+click, which no common window manager takes, or Alt+click
# where the window manager leaves it to the window
SELECT_GESTURES = (_M.ControlModifier | _M.ShiftModifier, _M.AltModifier)
SELECT_WORDS = "Ctrl+Shift+click"  # as the window says it
SELECT_ALSO = "Alt+click too, where the window manager does not take it"
NOTHING_TO_PICK = "Nothing to pick here: no element under the pointer takes input"


def select_gesture(mods: Any) -> bool:
    """These modifiers held make a left click select a node (SELECT_GESTURES) instead of reaching the page."""
    m = Qt.KeyboardModifier(mods) if not isinstance(mods, Qt.KeyboardModifier) else mods
    return any((m & g) == g for g in SELECT_GESTURES)


def cdp_modifiers(mods: Any) -> int:
    """Qt keyboard modifiers → CDP bits (Alt 1, Control 2, Meta 4, Shift 8, as engine.browser.keys has them)."""
    m = Qt.KeyboardModifier(mods) if not isinstance(mods, Qt.KeyboardModifier) else mods
    mod = Qt.KeyboardModifier
    qt = {"Alt": mod.AltModifier, "Control": mod.ControlModifier, "Meta": mod.MetaModifier, "Shift": mod.ShiftModifier}
    return sum(bit for name, bit in MODIFIER_BITS.items() if m & qt[name])


class PageInput(QWidget):
    """Mouse, wheel and key handlers of the page view, and the ordered queue that sends them."""

    node_clicked = Signal(str)  # a node selected on the page (SELECT_WORDS, or a click while clicks pick)

    if TYPE_CHECKING:  # what this layer uses of the two built on it
        # the snapshot layer's (gui.page.snapshot_layer)
        _snapshot: DomSnapshot | None
        _overlay: bool
        _hover_id: str | None

        def box_at(self, p: QPointF) -> OverlayBox | None: ...
        def highlight(self, node_id: str | None, kind: str = "selected") -> None: ...

        # the page view's (gui.page.page_view)
        interactive: bool
        _accepting: bool
        _forwarder: InputForwarder | None

        def to_page(self, p: QPointF) -> tuple[float, float] | None: ...
        def _target_rect(self) -> QRectF | None: ...
        def page_rect_to_widget(self, rect: tuple[float, float, float, float]) -> QRectF: ...
        @property
        def scale(self) -> float: ...

    # who hears the person's input besides the page (the controller records it as the person's steps)
    input_listener: Callable[[str, tuple, dict], None] | None = None
    # a plain click on a box selects its node (not only SELECT_WORDS) while this says so
    select_on_click: Callable[[], bool] | None = None
    # pick mode (as the Playwright Inspector's): hovering outlines a node and tells its locator, a click
    # copies the locator; nothing reaches the page meanwhile. The listener hears (node id, code, clicked,
    # how it was found: "" the node under the pointer, "label" a label's control, "widget" a widget's
    # control); node id "" where there is nothing to pick.
    picking: bool = False
    pick_listener: Callable[[str, str, bool, str], None] | None = None
    picked: tuple[str, str] | None = None   # the last node picked by a click, and its locator

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # one ordered queue, one event in flight; consecutive moves collapse into the latest
        self._queue: collections.deque[tuple[str, tuple, dict]] = collections.deque()
        self._pump_task: asyncio.Task[None] | None = None
        self._click_count = 1
        self.moves_coalesced = 0
        self._press_on_box: str | None = None  # a press that selected a node ("" a selecting click off the boxes)
        # a native select's list drawn over the page (select_list)
        self.select_list: SelectList | None = None
        self._select_open: SelectInfo | None = None   # the select whose list is shown
        self._held: SelectInfo | None = None          # a press that opens a list: its moves and release are ours
        self._swallow_up = False                      # a press that closed the list: its release is ours too
        self._eaten_key = ""                          # a key that opened a list: its release is ours

    def set_picking(self, on: bool) -> None:
        self.picking = bool(on)
        self.setCursor(Qt.CursorShape.CrossCursor if on else Qt.CursorShape.ArrowCursor)
        if not on:
            self.highlight(None, "pick")

    def _pick_at(self, pos, clicked: bool) -> None:
        from engine.loop.person_steps import control_at
        from gui.nodes.node_models import locator_code, locator_missing
        pt, snap = self.to_page(pos), self._snapshot
        node, via = control_at(snap, pt[0], pt[1]) if pt is not None and snap is not None else (None, "")
        if node is None:
            self.highlight(None, "pick")
            self.setToolTip(NOTHING_TO_PICK if pt is not None else "")
            if self.pick_listener is not None and pt is not None:
                self.pick_listener("", "", clicked, "")
            return
        code = locator_code(snap, node.node_id)
        self.highlight(node.node_id, "pick")
        why = "" if code else locator_missing(snap, node.node_id)
        self.setToolTip(code or (f"no locator for this element: {why}" if why else "no locator for this element"))
        if clicked and code:
            from PySide6.QtGui import QGuiApplication
            QGuiApplication.clipboard().setText(code)
            self.picked = (node.node_id, code)
        if self.pick_listener is not None:
            self.pick_listener(node.node_id, code, clicked, via)

    def _selects(self, ev) -> bool:
        """This left click selects a node instead of reaching the page: a select gesture's modifiers are held
        (with the overlay on), or the host says clicks pick now."""
        if not self._overlay or ev.button() != Qt.MouseButton.LeftButton:
            return False
        if select_gesture(ev.modifiers()):
            return True
        return self.select_on_click is not None and bool(self.select_on_click())

    def _enqueue(self, method: str, *args, **kw) -> None:
        if not self.interactive or self._forwarder is None or not self._accepting:
            return
        if self.input_listener is not None and not (method == "mouse" and args and args[0] == "move"):
            try:
                self.input_listener(method, args, kw)
            except Exception as exc:  # a listener's problem must not stop the input
                log.info("input listener failed: %s", exc)
        if method == "mouse" and args[0] == "move" and self._queue and self._queue[-1][0] == "mouse" \
                and self._queue[-1][1][0] == "move":
            self._queue[-1] = (method, args, kw)  # coalesce: only the latest position matters
            self.moves_coalesced += 1
        else:
            self._queue.append((method, args, kw))
        self._start_pump()

    def _start_pump(self) -> None:
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
                if not await self._for_select(fwd, method, args, kw):
                    await getattr(fwd, method)(*args, **kw)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the view must not crash on a page problem
                log.info("input %s failed: %s", method, exc)

    # -- a native select's list ------------------------------------------------------------------
    async def _for_select(self, fwd: InputForwarder, method: str, args: tuple, kw: dict) -> bool:
        """Whether this queued event is the select list's business, not the page's: a press that opens a list
        (with its moves and release), a key that opens one, a choice or a closed list (`select_list`)."""
        if method == "choose":
            info, index = args
            await native_select.choose(fwd.tab, info, index)
            await native_select.release(fwd.tab)
            return True
        if method == "release":
            await native_select.release(fwd.tab)
            return True
        if method == "mouse":
            return await self._select_mouse(args[0], args[1], args[2], kw)
        if method == "key":
            return await self._select_key(args[0], args[1], int(args[4]) if len(args) > 4 else 0)
        return False

    async def _select_mouse(self, kind: str, x: float, y: float, kw: dict) -> bool:
        if self._held is not None:
            if kind == "up":
                info, self._held = self._held, None
                self._open_select(info)
            return True
        if self._swallow_up:
            self._swallow_up = kind != "up"
            return True
        if kind != "down":
            return False
        if self._select_open is not None:  # a press while the list is open only closes it (as Chromium's does)
            self.close_select_list()
            self._swallow_up = True
            return True
        if kw.get("button") != "left" or kw.get("click_count", 1) != 1:
            return False
        self._held = await self._find_select((x, y))
        return self._held is not None

    async def _select_key(self, kind: str, key: str, mods: int) -> bool:
        if kind == "up" and key == self._eaten_key:
            self._eaten_key = ""
            return True
        if kind != "down":
            return False
        self._eaten_key = ""
        alt, others = mods & 1, mods & 0b1110  # CDP bits: Alt 1, Control 2, Meta 4, Shift 8
        if not ((key in (" ", "F4") and not alt and not others) or (key in ("ArrowDown", "ArrowUp") and alt)):
            return False
        info = await self._find_select(None)
        if info is None:
            return False
        self._eaten_key = key
        self._open_select(info)
        return True

    async def _find_select(self, point: tuple[float, float] | None) -> SelectInfo | None:
        fwd = self._forwarder
        if fwd is None:
            return None
        try:
            return await native_select.find_select(fwd.tab, point)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the page does not answer: the input goes to it as it came
            log.info("no select looked up: %s", exc)
            return None

    def _open_select(self, info: SelectInfo) -> None:
        if not self._accepting:
            return
        if self.select_list is None:
            self.select_list = SelectList(self, self._chose, self._closed_list)
        self._select_open = info
        self.select_list.open(info, self.page_rect_to_widget(info.rect), self.scale or 1.0)
        if self._forwarder is not None:
            self._forwarder.tab.person_input_at = time.monotonic()  # the person pressed in the page

    def _chose(self, index: int) -> None:
        info, self._select_open = self._select_open, None
        if info is not None:
            self._queue.append(("choose", (info, index), {}))
            self._start_pump()

    def _closed_list(self) -> None:
        if self._select_open is not None:
            self._select_open = None
            self._queue.append(("release", (), {}))
            self._start_pump()

    def close_select_list(self) -> None:
        """Close the select's list, if one is shown, without a choice."""
        if self.select_list is not None:
            self.select_list.close_list()
        self._select_open = None

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
        if self.select_list is not None and self.select_list.isVisible():
            self.close_select_list()  # a press beside an open list only closes it, as Chromium's does
            self._press_on_box = ""   # (its moves and release are not the page's either)
            ev.accept()
            return
        self.setFocus(Qt.FocusReason.MouseFocusReason)
        pos = ev.position()
        if self.picking:
            if ev.button() == Qt.MouseButton.LeftButton:
                self._pick_at(pos, True)
            ev.accept()
            return
        if self._selects(ev):
            box = self.box_at(pos)
            if box is not None or select_gesture(ev.modifiers()):  # a selecting click off the boxes: nothing
                self._press_on_box = box.node_id if box is not None else ""
                if box is not None:
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
        if self.picking:
            ev.accept()
            return
        if self._selects(ev) and (self.box_at(pos) is not None or select_gesture(ev.modifiers())):
            box = self.box_at(pos)
            self._press_on_box = box.node_id if box is not None else ""
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
        if self.picking:
            ev.accept()
            return
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
        if self.picking:
            self._pick_at(pos, False)
            return
        if self._overlay:
            box = self.box_at(pos)
            hid = box.node_id if box else None
            if hid != self._hover_id:
                self._hover_id = hid
                self.update()
        if self._press_on_box is not None:  # a press that selected a node: its drag is not the page's
            return
        pt = self.to_page(pos)
        if pt is None:
            return
        mask = self._buttons_mask(ev)
        btn = "left" if mask & 1 else "right" if mask & 2 else "middle" if mask & 4 else "none"
        self._enqueue("mouse", "move", pt[0], pt[1], button=btn, modifiers=cdp_modifiers(ev.modifiers()),
                      buttons=mask)

    def wheelEvent(self, ev) -> None:  # noqa: N802 - Qt name
        self.close_select_list()  # the page scrolls away from it (Chromium's list closes too)
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
                return key, "", "", None  # the forwarder fills in code and key code from engine.browser.keys
            text = "\r" if key == "Enter" else (" " if key == " " else "")
        else:
            key = text if len(text) == 1 else ""
            if not key:
                # Control+letter: Qt gives a control character; use the letter key itself
                if Qt.Key.Key_A <= k <= Qt.Key.Key_Z:
                    key = chr(k).lower() if not (mods & 8) else chr(k)
                elif Qt.Key.Key_0 <= k <= Qt.Key.Key_9:
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
