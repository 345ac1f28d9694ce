"""Driving the real window in-process for GUI tests: open it on a URL under qasync (Qt offscreen),
run a coroutine against it, and shut the engine down whatever happens."""

from __future__ import annotations

import asyncio
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def in_window(url: str, body, timeout: float = 60.0) -> None:
    """Open the window on `url`, run `await body(window)`, then shut the engine down."""
    import qasync
    from PySide6.QtWidgets import QApplication

    from gui.controller import Supervisor
    from gui.main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    app.setQuitOnLastWindowClosed(False)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)

    async def go():
        window = MainWindow(Supervisor())
        window.show()
        try:
            assert await window.startup(url)
            await body(window)
        finally:
            await window.shutdown()
            window.close()
        assert window.sup.browser is None and window.sup.store is None

    with loop:
        loop.run_until_complete(asyncio.wait_for(go(), timeout))


async def until(cond, timeout: float = 15.0, what: str = "condition") -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not cond():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.03)
