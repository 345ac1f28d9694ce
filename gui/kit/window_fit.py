"""Every window Vigil opens besides the main one (a stored session, a step's picture, settings) opens
inside the screen it opens on — the screen of the window that opened it — frame and all, and closes
with Escape or Ctrl+W, so it can be closed without a window manager (no title bar, no close button).

`fit_window(w, wanted, anchor)` before the first show: the wanted size, shrunk to the screen's
available room less the room a window manager's frame takes, centred on that screen. Once shown,
`keep_on_screen(w)` pulls the frame back inside if the frame the window manager added is larger than
allowed for."""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt, QTimer
from PySide6.QtGui import QGuiApplication, QKeySequence, QScreen, QShortcut
from PySide6.QtWidgets import QWidget

# room left for a window manager's frame: its borders and title bar (none without a window manager)
FRAME_W, FRAME_H = 16, 48


def screen_at(geometry: QRect) -> QScreen | None:
    """The screen holding most of `geometry` (the primary one when none does)."""
    best, area = None, 0
    for s in QGuiApplication.screens():
        r = s.availableGeometry().intersected(geometry)
        if r.width() * r.height() > area:
            best, area = s, r.width() * r.height()
    return best or QGuiApplication.primaryScreen()


def screen_of(anchor: QWidget | None) -> QScreen | None:
    """The screen holding most of `anchor`'s window (the primary one without an anchor). Found among
    QGuiApplication.screens(), never with QWidget.screen(): PySide ties the wrapper that returns to the
    widget asked, and a short-lived window's death would leave every holder of the screen a dead one."""
    if anchor is not None and anchor.window() is not None:
        return screen_at(anchor.window().frameGeometry())
    return QGuiApplication.primaryScreen()


def fitted_geometry(wanted: QSize, room: QRect) -> QRect:
    """The window's geometry (frame not included) for `wanted` inside `room`, centred."""
    w = max(200, min(wanted.width(), room.width() - FRAME_W))
    h = max(150, min(wanted.height(), room.height() - FRAME_H))
    w, h = min(w, room.width()), min(h, room.height())
    side, top = FRAME_W // 2, FRAME_H - FRAME_W // 2  # a frame's border, and its title bar with border
    x = room.x() + min(side, room.width() - w) + max(0, room.width() - w - FRAME_W) // 2
    y = room.y() + min(top, room.height() - h) + max(0, room.height() - h - FRAME_H) // 2
    return QRect(x, y, w, h)


def fit_window(w: QWidget, wanted: QSize, anchor: QWidget | None = None, screen: QScreen | None = None) -> QRect:
    """Size and place top-level `w` (not yet shown) inside the screen of `anchor` (or `screen`)."""
    screen = screen or screen_of(anchor)
    if screen is None:
        w.resize(wanted)
        return w.geometry()
    room = screen.availableGeometry()
    geo = fitted_geometry(wanted, room)
    if w.minimumWidth() > geo.width() or w.minimumHeight() > geo.height():  # a layout's minimum never wins
        w.setMinimumSize(min(w.minimumWidth(), geo.width()), min(w.minimumHeight(), geo.height()))
    w.setGeometry(geo)
    QTimer.singleShot(0, lambda: keep_on_screen(w))
    return geo


def keep_on_screen(w: QWidget) -> None:
    """A shown window whose frame sticks out of its screen is moved (and if need be shrunk) back in."""
    import shiboken6

    if not shiboken6.isValid(w) or not w.isVisible() or w.isMaximized():
        return
    screen = screen_at(w.frameGeometry())
    if screen is None:
        return
    room, frame = screen.availableGeometry(), w.frameGeometry()
    if room.contains(frame):
        return
    extra_w, extra_h = frame.width() - w.width(), frame.height() - w.height()
    width, height = min(w.width(), room.width() - extra_w), min(w.height(), room.height() - extra_h)
    if (width, height) != (w.width(), w.height()):
        w.resize(width, height)
    x = min(max(frame.x(), room.x()), room.right() + 1 - width - extra_w)
    y = min(max(frame.y(), room.y()), room.bottom() + 1 - height - extra_h)
    w.move(x, y)


def close_keys(w: QWidget) -> list[QShortcut]:
    """Escape and Ctrl+W close the window `w` (its whole window, from any of its widgets)."""
    keys = []
    for seq in (QKeySequence(Qt.Key.Key_Escape), QKeySequence("Ctrl+W")):  # one shortcut per key: never ambiguous
        sc = QShortcut(seq, w)
        sc.setContext(Qt.ShortcutContext.WindowShortcut)
        sc.activated.connect(w.close)
        keys.append(sc)
    return keys
