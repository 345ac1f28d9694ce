"""Every window Vigil opens besides the main one fits the screen it opens on and closes with Escape or
Ctrl+W without a window manager (issue 27, items 1 and 2): the read-only session window, a step's
picture ("Picture after this step", a stored picture at full size) and the settings dialog. A picture
opens whole (fitted to its window), zooms, and scrolls when zoomed.

Offscreen on the 1024x640 and 1366x768 virtual screens (tests/support/qt_screens.json); then the same module
again under Xvfb at 1366x768 — once with no window manager, once with openbox (Debian's `openbox`,
installed by scripts/setup.sh) — where the frame a window manager adds must fit too. Set
VIGIL_GUI_SHOTS=DIR to keep pictures of the windows."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QBuffer, QByteArray, QPoint, QRect, Qt
from PySide6.QtGui import QColor, QPainter, QPixmap

from support.gui_helpers import screen_named
from support.xvfb import xvfb_run

SHOTS = os.environ.get("VIGIL_GUI_SHOTS")
IN_XVFB = os.environ.get("VIGIL_GUI_SCREEN") == "current"
SIZES = ["current"] if IN_XVFB else ["1024x640", "1366x768"]
STEPS = [{"action": "type", "target": {"role": "textbox", "name": "Full name"}, "text": "Ada"},
         {"action": "click", "target": {"role": "button", "name": "Place order"}},
         {"action": "finish", "answer": "ordered"}]


@pytest.fixture(scope="module")
def stored(request, tmp_path_factory):
    """(VIGIL_HOME, session id) of one recorded run (given by the parent process under Xvfb)."""
    given = os.environ.get("VIGIL_TEST_STORED")
    if given:
        home, sid = given.split("|")
        yield Path(home), sid
        return
    from engine.store import Store

    from support.recording_helpers import record_scripted
    harness, server = request.getfixturevalue("harness"), request.getfixturevalue("server")
    home = tmp_path_factory.mktemp("vigil-home")
    with Store.open(home / "sessions.db") as store:
        sid = record_scripted(harness, store, server.url("offline_shop.html"), STEPS, "order as Ada")
    yield home, sid


def _screen(size: str):
    from PySide6.QtGui import QGuiApplication
    return QGuiApplication.primaryScreen() if size == "current" else screen_named(size)


def _anchor(qtbot, screen):
    """A top-level window on `screen`, as the main window is: the windows it opens open there."""
    from PySide6.QtWidgets import QWidget
    w = QWidget()
    qtbot.addWidget(w)
    w.setScreen(screen)
    w.setGeometry(QRect(screen.availableGeometry().topLeft() + QPoint(10, 40), screen.availableGeometry().size() / 2))
    w.show()
    return w


def _shown_inside(qtbot, w, screen, what: str) -> QRect:
    from gui.kit.window_fit import screen_at  # not w.screen(): see gui.widgets.window_fit.screen_of
    w.show()
    w.activateWindow()
    qtbot.waitUntil(lambda: w.isActiveWindow(), timeout=5000)
    qtbot.wait(150)  # a window manager's frame arrives, keep_on_screen runs
    room, frame = screen.availableGeometry(), w.frameGeometry()
    on = screen_at(w.frameGeometry())
    assert on is screen, f"{what} opened on {on.name()}, not on its window's screen {screen.name()}"
    assert room.contains(frame), f"{what}: its frame {frame.getRect()} is not inside the screen {room.getRect()}"
    return frame


def _closes_with(qtbot, w, key, modifier=Qt.NoModifier) -> None:
    assert w.isVisible()
    qtbot.keyClick(w.focusWidget() or w, key, modifier)
    qtbot.waitUntil(lambda: not w.isVisible(), timeout=3000)


def _inside(widgets: dict, room: QRect) -> None:
    for name, x in widgets.items():
        r = QRect(x.mapToGlobal(QPoint(0, 0)), x.size())
        assert x.isVisible() and room.contains(r), f"{name} at {r.getRect()} is not inside the screen {room.getRect()}"


def _test_picture(width: int = 944, height: int = 684) -> QPixmap:
    """A page-like picture with a red frame at its very edge: cut anywhere, the frame goes."""
    pm = QPixmap(width, height)
    pm.fill(QColor("white"))
    p = QPainter(pm)
    p.setPen(QColor("red"))
    p.drawRect(0, 0, width - 1, height - 1)
    p.fillRect(0, 0, width, 40, QColor("#1e3a8a"))  # the page header the issue saw cut off
    p.end()
    return pm


@pytest.mark.parametrize("size", SIZES)
def test_the_session_window_fits_its_screen_and_closes_with_escape_or_ctrl_w(qtbot, aio, stored, size, monkeypatch):
    from engine.store import Store
    from gui.sessions.session_view import SessionView
    from gui.supervisor.session_library import SessionLibrary

    home, sid = stored
    screen = _screen(size)
    room = screen.availableGeometry()
    anchor = _anchor(qtbot, screen)
    with Store.open(home / "sessions.db") as store:
        lib = SessionLibrary(store)
        for key, mod in ((Qt.Key_Escape, Qt.NoModifier), (Qt.Key_W, Qt.ControlModifier)):
            view = SessionView(lib.open(sid), anchor=anchor)
            frame = _shown_inside(qtbot, view, screen, "the session window")
            assert frame.width() >= min(1000, room.width() - 40) and frame.height() >= min(600, room.height() - 60), \
                f"the session window is needlessly small: {frame.getRect()} on {room.getRect()}"
            _inside({"title": view.title_label, "status": view.status_label, "step list": view.steps,
                     "before picture": view.before, "after picture": view.after,
                     "after caption": view.after_caption}, room)
            if SHOTS and key == Qt.Key_Escape:
                Path(SHOTS).mkdir(parents=True, exist_ok=True)
                wm = os.environ.get("VIGIL_GUI_WM", "nowm")
                view.grab().save(str(Path(SHOTS) / f"session-window-{size}-{wm}.png"))
            # its stored picture at full size: whole, in a window inside the screen
            qtbot.mouseDClick(view.after, Qt.LeftButton)
            big = view.after._zoom
            _shown_inside(qtbot, big, screen, "the stored picture")
            assert big.view.whole_in_view()
            _closes_with(qtbot, big, Qt.Key_Escape)
            view.activateWindow()
            qtbot.waitUntil(lambda v=view: v.isActiveWindow(), timeout=5000)
            _closes_with(qtbot, view, key, mod)


@pytest.mark.parametrize("size", SIZES)
def test_the_picture_after_a_step_opens_whole_zooms_and_scrolls(qtbot, aio, size, tmp_path):
    from PySide6.QtCore import QSettings

    from gui.supervisor.controller import Supervisor
    from gui.window.main_window import MainWindow

    screen = _screen(size)
    room = screen.availableGeometry()
    window = MainWindow(Supervisor(), settings=QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.place_on(screen)
    window.showMaximized() if window.start_maximized else window.show()
    qtbot.waitUntil(window.isVisible)
    qtbot.wait(150)
    assert room.contains(window.frameGeometry()), (window.frameGeometry().getRect(), room.getRect())
    pm = _test_picture()
    buf = QBuffer()
    buf.open(QBuffer.WriteOnly)
    pm.save(buf, "PNG")
    pic = window.run_wiring.show_picture(0, bytes(QByteArray(buf.data())))
    frame = _shown_inside(qtbot, pic, screen, "the picture after step 1")
    v = pic.view
    assert v.fitting and v.whole_in_view(), "the picture does not open whole"
    shown = v.mapFromScene(v.scene().sceneRect()).boundingRect()
    assert shown.width() >= min(944, v.viewport().width()) - 2 or shown.height() >= min(684, v.viewport().height()) - 2
    assert not v.horizontalScrollBar().isVisible() and not v.verticalScrollBar().isVisible()
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        pic.grab().save(str(Path(SHOTS) / f"picture-{size}-{os.environ.get('VIGIL_GUI_WM', 'nowm')}-fit.png"))
    # zoomed in: larger than the window, scroll bars to move around it
    for _ in range(4):
        qtbot.mouseClick(pic.in_btn, Qt.LeftButton)
    assert not v.fitting and not v.whole_in_view() and v.zoom() > 1.0
    qtbot.waitUntil(lambda: v.horizontalScrollBar().maximum() > 0 and v.verticalScrollBar().maximum() > 0
                    and v.horizontalScrollBar().isVisible() and v.verticalScrollBar().isVisible())
    sb = v.verticalScrollBar()
    start = sb.value()
    sb.setValue(sb.maximum())
    assert sb.value() != start, "a zoomed picture cannot be scrolled"
    assert "%" in pic.zoom_label.text()
    if SHOTS:
        pic.grab().save(str(Path(SHOTS) / f"picture-{size}-{os.environ.get('VIGIL_GUI_WM', 'nowm')}-zoomed.png"))
    qtbot.keyClick(v, Qt.Key_0)  # fit again
    assert v.fitting and v.whole_in_view()
    assert frame.width() <= room.width()
    _closes_with(qtbot, pic, Qt.Key_Escape)
    pic = window.run_wiring.show_picture(0, bytes(QByteArray(buf.data())))
    _shown_inside(qtbot, pic, screen, "the picture after step 1")
    _closes_with(qtbot, pic, Qt.Key_W, Qt.ControlModifier)
    # the settings dialog, too
    window._settings()
    dlg = window.settings_dialog
    _shown_inside(qtbot, dlg, screen, "the settings dialog")
    _closes_with(qtbot, dlg, Qt.Key_W, Qt.ControlModifier)
    window._settings()
    _shown_inside(qtbot, dlg, screen, "the settings dialog")
    _closes_with(qtbot, dlg, Qt.Key_Escape)
    window.closed.set_result(True)  # no engine was started: nothing to shut down


def _header_reads(pic) -> None:
    """The caption, the zoom and the buttons side by side, none running into the next, none cut."""
    cap, zoom = pic.caption, pic.zoom_label
    cap_end = cap.x() + cap.contentsRect().left() + cap.fontMetrics().horizontalAdvance(cap.text())
    zoom_start = zoom.x() + zoom.width() - zoom.fontMetrics().horizontalAdvance(zoom.text())  # right-aligned
    assert zoom_start - cap_end >= 6, f"{cap.text()!r} runs into {zoom.text()!r} ({cap_end} → {zoom_start})"
    assert cap.text() == cap.full_text() or cap.text().endswith("…")  # whole, or visibly shortened
    row = [zoom, pic.out_btn, pic.in_btn, pic.fit_btn, pic.actual_btn]
    for a, b in zip(row, row[1:], strict=False):
        assert b.x() - (a.x() + a.width()) >= 4, f"{a.objectName() or a.text()} touches {b.text()}"
    assert row[-1].x() + row[-1].width() <= pic.width()


def test_the_picture_header_keeps_its_words_apart(qtbot):
    # a narrow page's picture (the live page at 1024x640): the header has less room than its words
    from gui.run.picture_window import PictureWindow

    screen = screen_named("1024x640")
    pic = PictureWindow(_test_picture(520, 900), "Vigil — step 3: the page after it", anchor=_anchor(qtbot, screen),
                        caption="After step 3 · 520×900 px, with its Set-of-Mark")
    qtbot.addWidget(pic)
    pic.show()
    pic.activateWindow()
    qtbot.waitUntil(pic.isActiveWindow, timeout=5000)  # its shortcuts answer keys in an active window
    _header_reads(pic)
    buttons = [b.geometry() for b in (pic.out_btn, pic.in_btn, pic.fit_btn, pic.actual_btn)]
    fitted = pic.zoom_label.text()
    for key, said in ((Qt.Key_Plus, " %"), (Qt.Key_1, "100 %"), (Qt.Key_0, fitted)):
        qtbot.keyClick(pic.view, key)
        assert pic.zoom_label.text().endswith(said) and (key == Qt.Key_0) == ("(fit)" in pic.zoom_label.text())
        _header_reads(pic)
        assert [b.geometry() for b in (pic.out_btn, pic.in_btn, pic.fit_btn, pic.actual_btn)] == buttons
    assert "Set-of-Mark" in pic.caption.full_text()


def _xvfb(wm: str | None, tmp_path: Path, stored) -> None:
    if shutil.which("xvfb-run") is None:
        pytest.fail("xvfb-run is not installed: install Debian's `xvfb` package (`make setup` does it).")
    if wm and shutil.which(wm) is None:
        pytest.fail(f"{wm} is not installed: install Debian's `{wm}` package (`make setup` does it).")
    home, sid = stored
    env = {**os.environ, "VIGIL_GUI_SCREEN": "current", "QT_QPA_PLATFORM": "xcb", "VIGIL_TEST_STORED": f"{home}|{sid}",
           "VIGIL_GUI_WM": wm or "nowm"}
    test = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", Path(__file__).name, "-k",
            "fits_its_screen or opens_whole"]
    cmd = ["sh", "-c", f'{wm} >/dev/null 2>&1 & sleep 1; exec "$@"', "sh", *test] if wm else test
    p = subprocess.run([*xvfb_run("1366x768x24"), *cmd], capture_output=True, text=True,
                       timeout=300, cwd=Path(__file__).parent, env=env)
    assert p.returncode == 0 and "2 passed" in p.stdout, (p.stdout[-3000:], p.stderr[-2000:])


@pytest.mark.skipif(IN_XVFB, reason="this is the run under Xvfb itself")
@pytest.mark.parametrize("wm", [None, "openbox"])
def test_the_windows_fit_under_xvfb_at_1366x768(wm, tmp_path, stored):
    _xvfb(wm, tmp_path, stored)
