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

    app = QApplication.instance() or QApplication([sys.argv[0]])
    QApplication.setQuitOnLastWindowClosed(False)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    return loop
