"""The whole window as a user starts it: `vigil gui URL --screenshot PATH --quit-after-load` in a
separate process, offscreen — every panel rendered, exit 0, and no Chromium left behind."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parent.parent


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
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", mark.split("=")[0]: mark.split("=")[1]}
    p = subprocess.run([sys.executable, "-m", "gui.launcher", "gui", server.url("offline_shop.html"),
                        "--screenshot", str(shot), "--quit-after-load"], capture_output=True, text=True,
                       timeout=120, cwd=ROOT, env=env)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "Traceback" not in p.stderr and "Segmentation" not in p.stderr
    img = Image.open(shot)
    assert img.width >= 1200 and img.height >= 800
    # the page view shows the page: not a blank or single-colour window
    colours = img.convert("RGB").resize((64, 40)).getcolors(4096)
    assert colours is None or len(colours) > 20
    assert _survivors(mark.split("=")[1]) == [], "Chromium or the driver outlived the window"


def test_no_display_is_a_clear_error(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    p = subprocess.run([sys.executable, "-m", "gui.launcher", "gui"], capture_output=True, text=True, timeout=60,
                       cwd=ROOT, env=env)
    assert p.returncode == 2 and "NO_DISPLAY" in p.stderr and "xvfb-run" in p.stderr


def test_engine_commands_still_reach_the_engine_cli():
    p = subprocess.run([sys.executable, "-m", "gui.launcher", "snapshot", "--help"], capture_output=True, text=True,
                       timeout=60, cwd=ROOT)
    assert p.returncode == 0 and "--som" in p.stdout


def test_run_a_task_one_approved_step_at_a_time(server):
    """In-process: the window runs the offline planner on a page; every step waits at the approval
    bar until approved; the page really changes; closing shuts the engine down."""
    import asyncio

    from gui_helpers import in_window

    async def body(window):
        assert await window.wait_painted(10), "no screencast frame painted"
        window.task.setText("type Ada into Full name and click Place order")
        window._run()
        approved = 0
        for _ in range(200):
            await asyncio.sleep(0.05)
            if window.approval.is_pending():
                assert window.sup.tab is not None
                window.approval.approve()
                approved += 1
            if not window.sup.running() and approved:
                break
        assert approved == 3  # type, click, finish — each one asked
        assert await window.sup.tab.page.text_content("#status") == "Order placed"
        assert await window.sup.tab.page.input_value("#name") == "Ada"
        assert window.chat.message_count() >= 4 and window.status_loop.text().startswith("success")
        assert window.nodes is not None and window.sup.snapshot is not None
        from PySide6.QtWidgets import QPushButton
        for _ in range(60):  # each recorded step gets its after-screenshot with the Set-of-Mark overlay
            pics = window.chat.findChildren(QPushButton, "stepPicture")
            if len(pics) >= 2:
                break
            await asyncio.sleep(0.05)
        assert len(pics) >= 2
        pics[0].click()
        window._settings()  # non-modal; the key is kept but never shown back in full
        dlg = window.settings_dialog
        dlg.api_key.setText("sk-test-1234567890abcdef")
        dlg._save()
        window._settings()
        assert dlg.api_key.text() == "" and "cdef" in dlg.api_key.placeholderText()
        assert "1234567890" not in dlg.api_key.placeholderText()
        assert window.sup.settings["api_key"] == "sk-test-1234567890abcdef"
        dlg.close()
        # URL bar, back and viewport size drive the same tab
        await window.sup.navigate(server.url("actions_next.html"))
        assert window.url.text().endswith("actions_next.html") and window.sup.snapshot.title == "Next"
        await window.sup.history(-1)
        assert window.url.text().endswith("offline_shop.html")
        await window._set_viewport("1024x768")
        assert await window.sup.tab.page.evaluate("innerWidth") == 1024
        assert window.sup.snapshot.context.viewport.width == 1024
        shown = [w for w in window._pictures if w.isVisible()]
        assert shown and shown[0].pixmap().width() > 600

    in_window(server.url("offline_shop.html"), body, timeout=120)
