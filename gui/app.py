"""Starting and stopping the window: Qt with an asyncio loop inside (qasync), the engine on that
loop, and a shutdown in the order that does not crash: screencast, loop, browser, then Qt."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from pathlib import Path

DEMO_TASK = ("click Accept, type Ada Lovelace into Full name, type ada@example.com into Email Address, "
             "check Gift wrap and click Create account")


def _display_problem() -> str | None:
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
                                                 or os.environ.get("QT_QPA_PLATFORM")):
        return ("No display to open the window on. Run Vigil in a desktop session, under `xvfb-run vigil gui …`, "
                "or take a picture without a display: QT_QPA_PLATFORM=offscreen vigil gui URL --screenshot out.png "
                "--quit-after-load.")
    return None


def run_gui(url: str | None = None, *, screenshot: str | None = None, quit_after_load: bool = False,
            headless: bool = True, task: str = "", demo: bool = False) -> int:
    """Open the supervisor window; returns the process exit code."""
    problem = _display_problem()
    if problem:
        print(f"vigil gui: NO_DISPLAY: {problem}", file=sys.stderr)
        return 2
    import qasync
    from PySide6.QtWidgets import QApplication

    from gui.controller import Supervisor
    from gui.main_window import MainWindow

    app = QApplication.instance() or QApplication([sys.argv[0]])
    app.setQuitOnLastWindowClosed(False)  # the window's close runs the engine shutdown first, then ends the loop
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    code = 0
    server_cm = None
    if demo:
        from engine.local_server import serve_directory
        server_cm = serve_directory(Path(__file__).resolve().parent.parent / "assets" / "demo")
        url = server_cm.__enter__() + "index.html"
        task = task or DEMO_TASK

    async def main() -> int:
        sup = Supervisor(headless=headless)
        window = MainWindow(sup, suggested_task=task)
        window.place_on()
        window.showMaximized() if window.start_maximized else window.show()
        ok = await window.startup(url)
        if quit_after_load:
            rc = 0 if ok else 1
            if ok and sup.load_error:  # the browser runs, the page did not open: say so, and fail
                print(f"vigil gui: NAVIGATION_FAILED: {sup.load_error}", file=sys.stderr)
                rc = 1
            if ok:
                await window.wait_painted(10.0)
            if screenshot:
                if not window.grab().save(screenshot):
                    print(f"vigil gui: could not write {screenshot}", file=sys.stderr)
                    rc = 2
            await window.shutdown()
            window.close()
            return rc
        await window.closed
        return 0

    try:
        with loop:
            code = loop.run_until_complete(main())
    except KeyboardInterrupt:
        code = 130
    finally:
        if server_cm is not None:
            with contextlib.suppress(Exception):
                server_cm.__exit__(None, None, None)
    return code
