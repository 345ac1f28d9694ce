"""The whole window as a user starts it: `vigil gui URL --screenshot PATH --quit-after-load` in a
separate process, offscreen — every panel rendered, exit 0, and no Chromium left behind."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

from PIL import Image

from support.gui_helpers import SCREENS_FILE, open_window, run, wait_fitted
from support.paths import ROOT


def _survivors(mark: str) -> list[int]:
    """Processes still carrying our marker in their environment (children inherit it)."""
    out = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            if mark.encode() in (p / "environ").read_bytes():
                out.append(int(p.name))
        except OSError:
            continue
    return out


def test_window_smoke_screenshot_and_clean_exit(server, tmp_path):
    shot = tmp_path / "window.png"
    mark = f"VIGIL_TEST_MARK={uuid.uuid4().hex}"
    home = tmp_path / "home"  # its own: a window another test closed would hand it its saved size
    env = {**os.environ, "QT_QPA_PLATFORM": f"offscreen:configfile={SCREENS_FILE}",
           mark.split("=")[0]: mark.split("=")[1], "VIGIL_HOME": str(home)}
    p = subprocess.run([sys.executable, "-m", "gui.app.launcher", "gui", server.url("offline_shop.html"),
                        "--screenshot", str(shot), "--quit-after-load"], capture_output=True, text=True,
                       timeout=120, cwd=ROOT, env=env)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "Traceback" not in p.stderr and "Segmentation" not in p.stderr
    assert "propagateSizeHints" not in p.stderr, "the offscreen platform's size-hint notice is not for a person"
    img = Image.open(shot)
    assert img.size == (1366, 768), "the window's first size is the 1366x768 screen's room"
    # the page view shows the page: not a blank or single-colour window
    colours = img.convert("RGB").resize((64, 40)).getcolors(4096)
    assert colours is None or len(colours) > 20
    assert _survivors(mark.split("=")[1]) == [], "Chromium or the driver outlived the window"
    assert (home / "window.ini").exists(), "the layout is kept in the private VIGIL_HOME"


def test_a_page_that_cannot_be_opened_fails_the_screenshot_run(tmp_path):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    missing = (tmp_path / "nope.html").as_uri()
    cmd = [sys.executable, "-m", "gui.app.launcher", "gui", "--screenshot", str(tmp_path / "w.png"),
           "--quit-after-load"]
    p = subprocess.run(cmd[:4] + [missing] + cmd[4:], capture_output=True, text=True, timeout=60, cwd=ROOT, env=env)
    assert p.returncode == 2 and "BAD_URL" in p.stderr and "does not exist" in p.stderr and str(tmp_path) in p.stderr
    # the browser starts, the page does not load (nothing listens on a port just freed): said, and not 0
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = subprocess.run(cmd[:4] + [f"http://127.0.0.1:{port}/"] + cmd[4:], capture_output=True, text=True, timeout=120,
                       cwd=ROOT, env=env)
    assert p.returncode == 1, p.stderr[-2000:]
    assert "NAVIGATION_FAILED" in p.stderr and "ERR_CONNECTION_REFUSED" in p.stderr and "Traceback" not in p.stderr


def test_no_display_is_a_clear_error(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    p = subprocess.run([sys.executable, "-m", "gui.app.launcher", "gui"], capture_output=True, text=True, timeout=60,
                       cwd=ROOT, env=env)
    assert p.returncode == 2 and "NO_DISPLAY" in p.stderr and "xvfb-run" in p.stderr


def test_engine_commands_still_reach_the_engine_cli():
    p = subprocess.run([sys.executable, "-m", "gui.app.launcher", "snapshot", "--help"], capture_output=True, text=True,
                       timeout=60, cwd=ROOT)
    assert p.returncode == 0 and "--som" in p.stdout


def test_run_a_task_one_approved_step_at_a_time(qtbot, aio, server):
    """In-process: the window runs the offline planner on a page; every step waits at the approval
    bar until it is approved; the page really changes; closing shuts the engine down."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QPushButton

    with open_window(qtbot, server.url("offline_shop.html")) as window:
        wait_fitted(qtbot, window)
        assert window.plan.is_empty() and not window.plan.is_planning()  # idle: no "Planning…"
        assert window.status_loop.text() == "idle"
        said: list[str] = []  # what the status bar says of the loop, at each change
        window.sup.status.connect(lambda *_: said.append(window.status_loop.text()))
        qtbot.keyClicks(window.task, "type Ada into Full name and click Place order")
        qtbot.keyClick(window.task, Qt.Key_Return)
        approved = 0
        while approved < 3:  # type, click, finish — each one asked
            qtbot.waitUntil(window.approval.is_pending, timeout=15000)
            assert window.status_loop.text() == "waiting for approval"
            qtbot.mouseClick(window.approval.approve_btn, Qt.LeftButton)
            approved += 1
        qtbot.waitUntil(lambda: not window.sup.running(), timeout=15000)
        assert run(qtbot, window.sup.tab.page.text_content("#status")) == "Order placed"
        assert run(qtbot, window.sup.tab.page.input_value("#name")) == "Ada"
        assert window.chat.message_count() >= 4 and window.chat.status == "COMPLETED"
        assert window.status_loop.text() == "idle" and not window.plan.is_planning()
        assert {"observing the page", "planning", "waiting for approval", "acting"} <= set(said) and said[-1] == "idle"
        assert window.nodes is not None and window.sup.snapshot is not None
        # each recorded step gets its after-screenshot with the Set-of-Mark overlay
        qtbot.waitUntil(lambda: len(window.chat.findChildren(QPushButton, "stepPicture")) >= 2, timeout=5000)
        pics = window.chat.findChildren(QPushButton, "stepPicture")
        qtbot.mouseClick(pics[0], Qt.LeftButton)
        window._settings()  # non-modal; the key is kept but never shown back in full
        dlg = window.settings_dialog
        qtbot.keyClicks(dlg.api_key, "sk-test-1234567890abcdef")
        dlg._save()
        window._settings()
        assert dlg.api_key.text() == "" and "cdef" in dlg.api_key.placeholderText()
        assert "1234567890" not in dlg.api_key.placeholderText()
        assert window.sup.settings["api_key"] == "sk-test-1234567890abcdef"
        dlg.close()
        # URL bar, back and the page size choice drive the same tab
        run(qtbot, window.sup.navigate(server.url("actions_next.html")))
        assert window.url.text().endswith("actions_next.html") and window.sup.snapshot.title == "Next"
        run(qtbot, window.sup.history(-1))
        assert window.url.text().endswith("offline_shop.html")
        window.set_page_size("1024×768 tablet")  # a device size, scaled into the panel
        qtbot.waitUntil(lambda: window.sup.snapshot.context.viewport.width == 1024, timeout=10000)
        assert run(qtbot, window.sup.tab.page.evaluate("innerWidth")) == 1024
        qtbot.waitUntil(lambda: window.page.page_size == (1024.0, 768.0), timeout=10000)
        painted = window.page.painted_rect()
        assert painted.width() <= window.page.width() and window.page.scale < 1
        window.set_page_size("Fit to panel")  # and back to following the panel
        wait_fitted(qtbot, window)
        assert run(qtbot, window.sup.tab.page.evaluate("innerWidth")) == window.page.width()
        shown = [w for w in window.run_wiring.pictures if w.isVisible()]
        assert shown and shown[0].pixmap().width() > 600
        for w in shown:
            qtbot.addWidget(w)
