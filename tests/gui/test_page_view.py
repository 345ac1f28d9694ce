"""The live page view: real Chromium screencast painted into a real (offscreen) Qt widget.

pytest-qt's qtbot owns the widgets, types and clicks into them and waits; one Chromium serves the
module, on the qasync loop that runs inside Qt's (see gui_helpers). Every wait has a timeout: a
hang fails.
"""

from __future__ import annotations

import os

import pytest

from support.gui_helpers import finish, run

qasync = pytest.importorskip("qasync")
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt  # noqa: E402
from PySide6.QtGui import QHelpEvent, QImage, QWheelEvent  # noqa: E402
from PySide6.QtWidgets import QApplication, QToolTip  # noqa: E402

from engine.browser.screencast import InputForwarder, Screencast  # noqa: E402
from gui.page.page_view import PageView, cdp_modifiers  # noqa: E402


@pytest.fixture(scope="module")
def browser(aio_module):
    from engine import launch

    cm = launch()
    b = finish(cm.__aenter__(), 60)
    yield b
    finish(cm.__aexit__(None, None, None), 30)


@pytest.fixture
def open_view(qtbot, browser, server):
    """`open_view(path, size)` → (tab, view): a PageView streaming a fixture page, fit to a preset
    (1280x800) unless `fit=True`; stopped and its tab closed after the test."""
    opened = []

    def go(path: str = "gui_page.html", size=(800, 600), fit: bool = False):
        tab = run(qtbot, browser.new_tab(server.url(path)))
        view = PageView()
        qtbot.addWidget(view)
        if not fit:
            view.set_preset((1280, 800))
        view.resize(*size)
        view.show()
        view.attach(tab)
        run(qtbot, view.start())
        qtbot.waitUntil(lambda: view.frame_count >= 1 and view.paint_count >= 1, timeout=8000)
        opened.append((tab, view))
        return tab, view

    yield go
    for tab, view in opened:
        run(qtbot, view.stop())
        run(qtbot, tab.close())


def page_eval(qtbot, tab, expr: str):
    async def go():
        r = await tab.cdp.send("Runtime.evaluate", {"expression": expr, "returnByValue": True},
                               session_id=tab.session_id)
        return r["result"].get("value")
    return run(qtbot, go())


def wait_page(qtbot, tab, expr: str, timeout: int = 5000) -> None:
    qtbot.waitUntil(lambda: page_eval(qtbot, tab, f"!!({expr})"), timeout=timeout)


def center_of(qtbot, tab, css: str) -> tuple[float, float]:
    r = page_eval(qtbot, tab, f"(()=>{{const b=document.querySelector({css!r}).getBoundingClientRect();"
                              "return [b.x+b.width/2, b.y+b.height/2];})()")
    return r[0], r[1]


def at(view, x: float, y: float) -> QPoint:
    """The widget point (whole px) of a page point."""
    return view.to_widget(x, y).toPoint()


def test_frames_arrive_and_are_painted(qtbot, open_view):
    tab, view = open_view()
    f0, p0 = view.frame_count, view.paint_count
    try:  # five frames and five paints within 2 s (not a fixed 2 s wait: they come sooner)
        qtbot.waitUntil(lambda: view.frame_count - f0 >= 5 and view.paint_count - p0 >= 5, timeout=2000)
    except qtbot.TimeoutError:
        raise AssertionError(f"only {view.frame_count - f0} frames, {view.paint_count - p0} paints in 2 s") from None
    assert view.page_size == (1280.0, 800.0)
    img = view.last_frame_image()
    assert isinstance(img, QImage) and not img.isNull() and img.width() > 100
    assert img.width() <= 800, "frames come at the panel's device pixels, not the page's"
    assert view.fps > 2


def test_coordinate_mapping_round_trips(qtbot, open_view):
    tab, view = open_view(size=(800, 600))
    # 1280x800 into 800x600: scale 0.625, letterboxed vertically (500 px high, 50 px bands)
    assert view.scale == pytest.approx(0.625)
    assert view.to_widget(0, 0) == QPointF(0, 50)
    assert view.to_page(QPointF(400, 300)) == pytest.approx((640, 400))
    assert view.to_page(QPointF(400, 20)) is None  # letterbox band
    for x, y in [(0, 0), (1280, 800), (123.5, 456.25), (1000, 10)]:
        back = view.to_page(view.to_widget(x, y))
        assert back == pytest.approx((x, y), abs=1e-6)
    view.resize(500, 700)  # now pillarboxed the other way
    qtbot.waitUntil(lambda: view.scale == pytest.approx(500 / 1280), timeout=2000)
    assert view.to_page(view.to_widget(640, 400)) == pytest.approx((640, 400))


def test_the_page_follows_the_view_when_fitting(qtbot, open_view):
    """Fit mode: the view asks for a viewport of its own size; applied, the page fills it at 1:1."""
    tab, view = open_view(size=(700, 450), fit=True)
    with qtbot.waitSignal(view.viewport_wanted, timeout=3000) as got:
        view.resize(640, 420)
    assert got.args == [640, 420]
    run(qtbot, tab.set_viewport(*got.args))
    qtbot.waitUntil(lambda: view.page_size == (640.0, 420.0), timeout=5000)
    assert view.scale == pytest.approx(1.0) and view.painted_rect().width() == 640
    assert page_eval(qtbot, tab, "innerWidth") == 640
    view.set_preset((1280, 800))  # a device preset: the view stops asking, frames are scaled to fit
    with qtbot.assertNotEmitted(view.viewport_wanted, wait=400):
        view.resize(600, 400)


def test_click_type_and_wheel_reach_the_page(qtbot, open_view):
    tab, view = open_view(size=(800, 600))
    # click the button at its mapped position
    qtbot.mouseClick(view, Qt.LeftButton, pos=at(view, *center_of(qtbot, tab, "#go")))
    wait_page(qtbot, tab, "window.clicks === 1")
    # a move storm collapses: at most one move in flight
    for i in range(50):
        qtbot.mouseMove(view, QPoint(100 + i, 100 + i))
    qtbot.waitUntil(lambda: view.moves_coalesced > 0, timeout=3000)
    # focus the field by clicking it, then type through key events
    qtbot.mouseClick(view, Qt.LeftButton, pos=at(view, *center_of(qtbot, tab, "#name")))
    wait_page(qtbot, tab, "document.activeElement && document.activeElement.id === 'name'")
    qtbot.keyClicks(view, "Ada L")
    qtbot.keyClick(view, Qt.Key_Backspace)
    qtbot.keyClicks(view, "<b>&")
    wait_page(qtbot, tab, "document.getElementById('name').value === 'Ada <b>&'")
    # wheel scrolls the page (pytest-qt has no wheel: a QWheelEvent straight to the view)
    ev_pos = view.to_widget(640, 600)
    wheel = QWheelEvent(ev_pos, view.mapToGlobal(ev_pos), QPoint(0, 0), QPoint(0, -240),
                        Qt.NoButton, Qt.NoModifier, Qt.NoScrollPhase, False)
    QApplication.sendEvent(view, wheel)
    wait_page(qtbot, tab, "window.scrollY >= 150")
    # the frame metadata follows the scroll; an older snapshot's overlay is marked stale
    qtbot.waitUntil(lambda: (view._meta.get("scrollOffsetY") or 0) >= 150, timeout=5000)
    view.set_snapshot(run(qtbot, tab.snapshot()))
    assert not view.overlay_stale
    page_eval(qtbot, tab, "window.scrollTo(0, 0)")
    qtbot.waitUntil(lambda: view.overlay_stale, timeout=5000)


def test_overlay_boxes_and_badges_select_nodes_on_alt_click_and_clicks_reach_the_page(qtbot, open_view):
    tab, view = open_view(size=(800, 600))
    snap = run(qtbot, tab.snapshot())
    view.set_snapshot(snap)
    view.set_overlay(True)
    expected = {n.node_id for n in snap.nodes() if n.interactive and n.rendered and n.visible_ratio > 0}
    boxes = view.overlay_boxes()
    assert {b.node_id for b in boxes} == expected
    assert len(boxes) == len(expected) >= 4
    qtbot.waitUntil(lambda: view.paint_count >= 2, timeout=3000)
    # every badge keeps the same on-screen size at this zoom (0.625) and none covers another
    badges = view.badge_rects()
    assert set(badges) == expected
    heights = {round(r.height()) for r in badges.values()}
    assert len(heights) == 1 and heights.pop() >= 14, "badges are readable whatever the zoom"
    rects = list(badges.values())
    for i, a in enumerate(rects):
        for b in rects[i + 1:]:
            assert a.intersected(b).isEmpty(), "two badges overlap"
    # Alt+click the button's box: node_clicked, and the page is NOT clicked
    btn = snap.find(role="button")[0]
    with qtbot.waitSignal(view.node_clicked, timeout=2000) as got:
        qtbot.mouseClick(view, Qt.LeftButton, Qt.AltModifier, pos=at(view, *btn.center))
    assert got.args == [btn.node_id] and view.highlighted("selected") == btn.node_id
    qtbot.wait(300)
    assert page_eval(qtbot, tab, "window.clicks || 0") == 0
    # hovering a badge hovers its node (its badge is then drawn on top); Alt+clicking it selects the node
    other = next(b for b in boxes if b.node_id != btn.node_id)
    spot = badges[other.node_id].center().toPoint()
    qtbot.mouseMove(view, spot)
    assert view._hover_id == other.node_id
    with qtbot.waitSignal(view.node_clicked, timeout=2000) as got:
        qtbot.mouseClick(view, Qt.LeftButton, Qt.AltModifier, pos=spot)
    assert got.args == [other.node_id]
    # a plain click on the box reaches the page (the overlay stays on) and selects nothing
    view.highlight(None, "selected")
    with qtbot.assertNotEmitted(view.node_clicked, wait=300):
        qtbot.mouseClick(view, Qt.LeftButton, pos=at(view, *btn.center))
    wait_page(qtbot, tab, "window.clicks === 1")
    assert view.highlighted("selected") is None
    # tooltips: page text escaped, password never shown
    tip = view.tooltip_text(btn.node_id)
    assert "<b>bold" not in tip and "&lt;b&gt;bold" in tip
    pw = [n for n in snap.nodes() if n.redacted]
    assert pw, "the fixture has a password field"
    tip = view.tooltip_text(pw[0].node_id)
    assert "Password" in tip and "hidden" in tip
    assert "hunter2" not in tip
    # the real hover path: a ToolTip help event over the password box shows that text
    pos = view.to_widget(*pw[0].center)
    QApplication.sendEvent(view, QHelpEvent(QEvent.ToolTip, pos.toPoint(), view.mapToGlobal(pos.toPoint())))
    assert QToolTip.text() == tip
    QToolTip.hideText()
    # highlight kinds, and overlay off: clicks go to the page again
    view.highlight(btn.node_id, kind="target")
    assert view.highlighted("target") == btn.node_id
    view.highlight(None, kind="target")
    assert view.highlighted("target") is None
    view.set_overlay(False)
    qtbot.mouseClick(view, Qt.LeftButton, pos=at(view, *btn.center))
    wait_page(qtbot, tab, "window.clicks === 2")
    # the painted frame with the overlay differs from the page pixels (a box was drawn)
    view.set_overlay(True)
    view.highlight(btn.node_id, kind="target")
    qtbot.wait(200)
    pix = view.grab()
    assert not pix.isNull() and pix.width() == 800
    out = os.environ.get("VIGIL_ARTIFACTS")
    if out:
        pix.save(os.path.join(out, "page_view_overlay.png"))
    # the overlay is painted: at the button box's outline the pixels carry its role colour
    img = pix.toImage()
    box = next(b for b in boxes if b.node_id == btn.node_id)
    edge = view.page_rect_to_widget(box.page_rect)
    c = img.pixelColor(round(edge.center().x()), round(edge.bottom()))
    assert c.red() > 150 and c.green() < 120, c.name()


def test_modifier_bits():
    assert cdp_modifiers(Qt.NoModifier) == 0
    assert cdp_modifiers(Qt.ShiftModifier | Qt.ControlModifier) == 10
    assert cdp_modifiers(Qt.AltModifier | Qt.MetaModifier) == 5


def test_stop_then_close_browser_is_clean(qtbot, aio_module, server):
    """Own browser: stop the screencast, close the browser, no exception and no hang; a closed tab
    makes input and stop() no-ops."""
    from engine import launch

    cm = launch()
    own = run(qtbot, cm.__aenter__(), 60)
    tab = run(qtbot, own.new_tab(server.url("gui_page.html")))
    view = PageView()
    qtbot.addWidget(view)
    view.resize(640, 400)
    view.show()
    view.attach(tab)
    run(qtbot, view.start())
    qtbot.waitUntil(lambda: view.frame_count >= 3, timeout=8000)
    fwd = InputForwarder(tab)
    run(qtbot, view.stop())
    run(qtbot, view.stop())  # idempotent
    n = view.frame_count
    qtbot.wait(300)
    assert view.frame_count == n  # no frames after stop
    sc = Screencast(tab)
    run(qtbot, sc.start(lambda *_: None))
    run(qtbot, cm.__aexit__(None, None, None), 30)
    # browser closed with a screencast still running (sc): stop() must still be safe
    run(qtbot, sc.stop())
    assert run(qtbot, fwd.mouse("move", 10, 10)) is False
    assert run(qtbot, fwd.key("down", "a", text="a")) is False
    qtbot.mouseClick(view, Qt.LeftButton, pos=QPoint(100, 100))  # no crash
    view.update()
    qtbot.wait(100)


def test_overlay_calendar_badges_sit_in_their_own_day_off_every_day_number(qtbot, open_view):
    """The live overlay places the flatpickr calendar's badges as the stored pictures do: each day's
    badge inside or touching its own cell, over no day number of any cell (test_som_dense)."""
    from support.calendar_badges import CALENDAR_STILL_JS, DAYS_JS, check_calendar_badges

    tab, view = open_view("real/datepicker.html", size=(1280, 800))
    wait_page(qtbot, tab, "document.documentElement.dataset.ready === '1'", timeout=20000)
    page_eval(qtbot, tab, "document.querySelector('#departure').click()")
    wait_page(qtbot, tab, f"({CALENDAR_STILL_JS})()")
    frames = view.frame_count
    run(qtbot, view.request_frame())
    qtbot.waitUntil(lambda: view.frame_count > frames and view.paint_count >= 2, timeout=5000)
    snap = run(qtbot, tab.snapshot(force=True))  # see test_som_dense: after a transform animation
    view.set_snapshot(snap)
    view.set_overlay(True)
    assert view.scale == 1.0
    days = page_eval(qtbot, tab, f"({DAYS_JS})()")
    badges = {}
    for nid, r in view.badge_rects().items():
        tl, br = view.to_page(r.topLeft()), view.to_page(r.bottomRight())
        badges[nid] = (tl[0], tl[1], br[0], br[1])
    assert check_calendar_badges(badges, days, snap) == 31
    qtbot.wait(200)
    out = os.environ.get("VIGIL_ARTIFACTS")
    if out:
        view.grab().save(os.path.join(out, "overlay_calendar.png"))
