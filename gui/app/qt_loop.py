"""The Qt application and the asyncio loop on it, as every way of opening a window starts them."""

from __future__ import annotations

import asyncio
import sys
from typing import Any


def qt_event_loop() -> Any:
    """The QApplication (made once) and an asyncio loop running on Qt's (a qasync.QEventLoop, a context manager),
    set as this thread's loop. Closing the last window does not quit: the caller's shutdown runs first, then ends
    the loop."""
    import qasync
    from PySide6.QtWidgets import QApplication

    made = QApplication.instance() is None
    app = QApplication.instance() or QApplication([sys.argv[0]])
    QApplication.setQuitOnLastWindowClosed(False)
    if made:
        _identify(app)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    return loop


def _identify(app: Any) -> None:
    """Vigil's icon on every window, and the tie to the menu entry `vigil desktop-entry` installs (a desktop shell
    groups the windows under it, with its icon)."""
    from PySide6.QtGui import QIcon

    from engine.assets import asset

    app.setDesktopFileName("vigil")
    icon = asset("icons", "vigil.svg")
    if icon.is_file():
        app.setWindowIcon(QIcon(str(icon)))
