"""How big the window opens and what it remembers between runs.

- The first size comes from the screen the window opens on: on a small screen (up to 1366x800 of
  available room) the window takes all of it; on a larger one 90 % of it, centred.
- Geometry, splitter positions and the page size choice are kept with Qt's settings: in
  `$VIGIL_HOME/window.ini` when VIGIL_HOME is set (as the session store is; the test suite points it
  at a throwaway folder), else the platform's own place for user settings (on Linux
  `~/.config/Vigil/Vigil.conf`).
- A remembered geometry that no longer fits the screen (another monitor, a smaller resolution) is
  pulled back onto it and shrunk to fit.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QByteArray, QRect, QSettings

SMALL_SCREEN = (1366, 800)  # available room at or below which the window takes the whole screen
SHARE = 0.9                 # of a larger screen


def window_settings() -> QSettings:
    """Where the window keeps its layout (see the module text)."""
    home = os.environ.get("VIGIL_HOME", "").strip()
    if home:
        path = Path(home).expanduser()
        path.mkdir(parents=True, exist_ok=True)
        return QSettings(str(path / "window.ini"), QSettings.Format.IniFormat)
    return QSettings(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, "Vigil", "Vigil")


def first_geometry(available: QRect) -> QRect:
    """The window's first geometry on a screen with this much room (frame not included)."""
    if available.width() <= SMALL_SCREEN[0] or available.height() <= SMALL_SCREEN[1]:
        return QRect(available)
    w, h = round(available.width() * SHARE), round(available.height() * SHARE)
    return QRect(available.x() + (available.width() - w) // 2, available.y() + (available.height() - h) // 2, w, h)


def clamp_to(geometry: QRect, available: QRect) -> QRect:
    """`geometry` moved (and if need be shrunk) so it lies inside `available`."""
    w, h = min(geometry.width(), available.width()), min(geometry.height(), available.height())
    x = min(max(geometry.x(), available.x()), available.x() + available.width() - w)
    y = min(max(geometry.y(), available.y()), available.y() + available.height() - h)
    return QRect(x, y, w, h)


def to_bytes(value) -> QByteArray | None:
    """A stored QByteArray back from QSettings (None when absent or not one)."""
    if isinstance(value, QByteArray) and not value.isEmpty():
        return value
    if isinstance(value, (bytes, bytearray)) and value:
        return QByteArray(bytes(value))
    return None
