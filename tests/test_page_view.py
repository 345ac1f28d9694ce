"""The live page view: real Chromium screencast painted into a real (offscreen) Qt widget.

One QApplication and one qasync loop for the module; the engine and the widget share that
loop exactly as the app does. Every coroutine runs with a hard timeout (a hang fails).
"""

from __future__ import annotations

import asyncio
import os

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

qasync = pytest.importorskip("qasync")
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt  # noqa: E402
from PySide6.QtGui import QHelpEvent, QImage, QKeyEvent, QMouseEvent, QWheelEvent  # noqa: E402
from PySide6.QtWidgets import QApplication, QToolTip  # noqa: E402

from engine.browser.screencast import InputForwarder, Screencast  # noqa: E402
from gui.widgets.page_view import PageView, cdp_modifiers  # noqa: E402


# Synthetic events go straight to the widget with sendEvent: QTest's helpers spin a nested event
# loop, which must not run inside a coroutine on the qasync loop.
def mouse(view, kind, pos: QPointF, button=Qt.LeftButton, buttons=None):
    typ = {"press": QEvent.MouseButtonPress, "release": QEvent.MouseButtonRelease,
           "move": QEvent.MouseMove, "double": QEvent.MouseButtonDblClick}[kind]
    if buttons is None:
        buttons = Qt.NoButton if kind in ("release", "move") else button
    btn = Qt.NoButton if kind == "move" else button
    ev = QMouseEvent(typ, QPointF(pos), view.mapToGlobal(QPointF(pos)), btn, buttons, Qt.NoModifier)
    QApplication.sendEvent(view, ev)


def click(view, pos: QPointF):
    mouse(view, "press", pos)
    mouse(view, "release", pos)


def key(view, qt_key, text: str = "", mods=Qt.NoModifier):
    for typ in (QEvent.KeyPress, QEvent.KeyRelease):
        QApplication.sendEvent(view, QKeyEvent(typ, qt_key, mods, text))


def type_text(view, text: str):
    for ch in text:
        k = getattr(Qt, f"Key_{ch.upper()}", None) if ch.isalnum() else None
        if ch == " ":
            k = Qt.Key_Space
        key(view, k if k is not None else Qt.Key_unknown, ch, Qt.ShiftModifier if ch.isupper() else Qt.NoModifier)


class QtEnv:
    def __init__(self, server):
        self.app = QApplication.instance() or QApplication([])
        self.app.setQuitOnLastWindowClosed(False)  # views open and close; the loop must keep running
        self.loop = qasync.QEventLoop(self.app)
        asyncio.set_event_loop(self.loop)
        self.server = server
        self.browser = None
        self._cm = None

    def run(self, coro, timeout: float = 20.0):
        return self.loop.run_until_complete(asyncio.wait_for(coro, timeout))

    def start(self) -> None:
        from engine import launch

        async def go():
            self._cm = launch()
            self.browser = await self._cm.__aenter__()

        self.run(go(), 60)

    def close(self) -> None:
        async def go():
            await self._cm.__aexit__(None, None, None)

        try:
            self.run(go(), 30)
        finally:
            self.loop.close()
            asyncio.set_event_loop(None)

    async def open_view(self, path: str = "gui_page.html", size=(800, 600)):
        tab = await self.browser.new_tab(self.server.url(path))
        view = PageView()
        view.resize(*size)
        view.show()
        view.attach(tab)
        await view.start()
        await until(lambda: view.frame_count >= 1 and view.paint_count >= 1)
        return tab, view

    async def close_view(self, tab, view) -> None:
        await view.stop()
        view.close()
        view.deleteLater()
        await tab.close()


async def until(cond, timeout: float = 8.0, step: float = 0.02):
    end = asyncio.get_running_loop().time() + timeout
    while not cond():
        if asyncio.get_running_loop().time() > end:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(step)


async def page_eval(tab, expr: str):
    r = await tab.cdp.send("Runtime.evaluate", {"expression": expr, "returnByValue": True},
                           session_id=tab.session_id)
    return r["result"].get("value")


async def center_of(tab, css: str) -> tuple[float, float]:
    r = await page_eval(tab, f"(()=>{{const b=document.querySelector({css!r}).getBoundingClientRect();"
                             "return [b.x+b.width/2, b.y+b.height/2];})()")
    return r[0], r[1]


@pytest.fixture(scope="module")
def env(server):
    e = QtEnv(server)
    e.start()
    yield e
    e.close()


def test_frames_arrive_and_are_painted(env):
    async def go():
        tab, view = await env.open_view()
        try:
            t0 = asyncio.get_running_loop().time()
            f0, p0 = view.frame_count, view.paint_count
            await asyncio.sleep(2.0)
            frames = view.frame_count - f0
            elapsed = asyncio.get_running_loop().time() - t0
            assert frames >= 5, f"only {frames} frames in {elapsed:.1f} s"
            assert view.paint_count - p0 >= 5
            assert view.page_size == (1280.0, 800.0)
            img = view.last_frame_image()
            assert isinstance(img, QImage) and not img.isNull() and img.width() > 100
            assert view.fps > 2
        finally:
            await env.close_view(tab, view)

    env.run(go())


def test_coordinate_mapping_round_trips(env):
    async def go():
        tab, view = await env.open_view(size=(800, 600))
        try:
            # 1280x800 into 800x600: scale 0.625, letterboxed vertically (500 px high, 50 px bands)
            assert view.scale == pytest.approx(0.625)
            assert view.to_widget(0, 0) == QPointF(0, 50)
            assert view.to_page(QPointF(400, 300)) == pytest.approx((640, 400))
            assert view.to_page(QPointF(400, 20)) is None  # letterbox band
            for x, y in [(0, 0), (1280, 800), (123.5, 456.25), (1000, 10)]:
                back = view.to_page(view.to_widget(x, y))
                assert back == pytest.approx((x, y), abs=1e-6)
            view.resize(500, 700)  # now pillarboxed the other way
            await asyncio.sleep(0.05)
            assert view.scale == pytest.approx(500 / 1280)
            assert view.to_page(view.to_widget(640, 400)) == pytest.approx((640, 400))
        finally:
            await env.close_view(tab, view)

    env.run(go())


def test_click_type_and_wheel_reach_the_page(env):
    async def go():
        tab, view = await env.open_view(size=(800, 600))
        try:
            # click the button at its mapped position
            bx, by = await center_of(tab, "#go")
            wp = view.to_widget(bx, by)
            click(view, wp)
            await view.drain_input()
            await until_page(tab, "window.clicks === 1")
            # a move storm collapses: at most one move in flight
            for i in range(50):
                mouse(view, "move", QPointF(100 + i, 100 + i))
            await view.drain_input()
            assert view.moves_coalesced > 0
            # focus the field by clicking it, then type through key events
            nx, ny = await center_of(tab, "#name")
            wp = view.to_widget(nx, ny)
            click(view, wp)
            await view.drain_input()
            await until_page(tab, "document.activeElement && document.activeElement.id === 'name'")
            type_text(view, "Ada L")
            key(view, Qt.Key_Backspace)
            type_text(view, "<b>&")
            await view.drain_input()
            await until_page(tab, "document.getElementById('name').value === 'Ada <b>&'")
            # wheel scrolls the page
            ev_pos = view.to_widget(640, 600)
            wheel = QWheelEvent(ev_pos, view.mapToGlobal(ev_pos), QPoint(0, 0), QPoint(0, -240),
                                Qt.NoButton, Qt.NoModifier, Qt.NoScrollPhase, False)
            QApplication.sendEvent(view, wheel)
            await view.drain_input()
            await until_page(tab, "window.scrollY >= 150")
            # the frame metadata follows the scroll; an older snapshot's overlay is marked stale
            await until(lambda: (view._meta.get("scrollOffsetY") or 0) >= 150)
            view.set_snapshot(await tab.snapshot())
            assert not view.overlay_stale
            await page_eval(tab, "window.scrollTo(0, 0)")
            await until(lambda: view.overlay_stale)
        finally:
            await env.close_view(tab, view)

    env.run(go())


async def until_page(tab, expr: str, timeout: float = 5.0):
    end = asyncio.get_running_loop().time() + timeout
    while not await page_eval(tab, f"!!({expr})"):
        if asyncio.get_running_loop().time() > end:
            raise AssertionError(f"page never satisfied: {expr}")
        await asyncio.sleep(0.05)


def test_overlay_boxes_select_nodes_and_do_not_click(env):
    async def go():
        tab, view = await env.open_view(size=(800, 600))
        try:
            snap = await tab.snapshot()
            view.set_snapshot(snap)
            view.set_overlay(True)
            expected = {n.node_id for n in snap.nodes() if n.interactive and n.rendered and n.visible_ratio > 0}
            boxes = view.overlay_boxes()
            assert {b.node_id for b in boxes} == expected
            assert len(boxes) == len(expected) >= 4
            await until(lambda: view.paint_count >= 2)
            # click the button's box: node_clicked, and the page is NOT clicked
            btn = snap.find(role="button")[0]
            got: list[str] = []
            view.node_clicked.connect(got.append)
            wp = view.to_widget(*btn.center)
            click(view, wp)
            await view.drain_input()
            await asyncio.sleep(0.3)
            assert got == [btn.node_id]
            assert view.highlighted("selected") == btn.node_id
            assert await page_eval(tab, "window.clicks || 0") == 0
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
            click(view, wp)
            await view.drain_input()
            await until_page(tab, "window.clicks === 1")
            # the painted frame with the overlay differs from the page pixels (a box was drawn)
            view.set_overlay(True)
            view.highlight(btn.node_id, kind="target")
            await asyncio.sleep(0.2)
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
        finally:
            await env.close_view(tab, view)

    env.run(go())


def test_modifier_bits():
    assert cdp_modifiers(Qt.NoModifier) == 0
    assert cdp_modifiers(Qt.ShiftModifier | Qt.ControlModifier) == 10
    assert cdp_modifiers(Qt.AltModifier | Qt.MetaModifier) == 5


def test_stop_then_close_browser_is_clean(server):
    """Own browser: stop the screencast, close the browser, no exception and no hang; a closed tab
    makes input and stop() no-ops."""
    from engine import launch

    app = QApplication.instance() or QApplication([])
    app.setQuitOnLastWindowClosed(False)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)

    async def go():
        async with launch() as browser:
            tab = await browser.new_tab(server.url("gui_page.html"))
            view = PageView()
            view.resize(640, 400)
            view.show()
            view.attach(tab)
            await view.start()
            await until(lambda: view.frame_count >= 3)
            fwd = InputForwarder(tab)
            await view.stop()
            await view.stop()  # idempotent
            n = view.frame_count
            await asyncio.sleep(0.3)
            assert view.frame_count == n  # no frames after stop
            sc = Screencast(tab)
            await sc.start(lambda *_: None)
        # browser closed with a screencast still running (sc): stop() must still be safe
        await sc.stop()
        assert await fwd.mouse("move", 10, 10) is False
        assert await fwd.key("down", "a", text="a") is False
        click(view, QPointF(100, 100))  # no crash
        view.update()
        await asyncio.sleep(0.1)
        view.close()
        view.deleteLater()

    try:
        loop.run_until_complete(asyncio.wait_for(go(), 40))
    finally:
        loop.close()
        asyncio.set_event_loop(None)
