"""A person's input in the live page view (issue 40, items 9-11), on the demo shop's sign-up form in real
Chromium, one page view for the module:

- selecting a node takes Ctrl+Shift+click, which window managers leave to the window (Alt+click still works
  where they do); the click does not reach the page;
- a native <select> clicked in the view opens a list drawn over the page (the screencast paints no native
  popup); a choice by mouse or by keys reaches the page (its value, its change event), Escape changes nothing;
- after a wheel scroll the password's mask is where the password is, and nowhere else.
"""

from __future__ import annotations

import pytest

from support.gui_helpers import finish, run

qasync = pytest.importorskip("qasync")
from PySide6.QtCore import QPoint, QPointF, Qt  # noqa: E402
from PySide6.QtGui import QColor, QWheelEvent  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from engine.vision.mask import FILL  # noqa: E402
from gui.page.page_view import PageView  # noqa: E402

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]
RECT_JS = ("(()=>{{const b=document.querySelector({css!r}).getBoundingClientRect();"
           "return [b.x,b.y,b.width,b.height];}})()")


@pytest.fixture(scope="module")
def shop(aio_module, qapp):
    """(tab, view): the demo shop's sign-up form streaming into one PageView (a 1280x800 page scaled into it)."""
    from engine import launch
    from engine.local_server import serve_directory

    served = serve_directory(ROOT / "assets" / "demo")
    base = served.__enter__()
    cm = launch()
    browser = finish(cm.__aenter__(), 60)
    tab = finish(browser.new_tab(base + "index.html#signup"))
    view = PageView()
    view.set_preset((1280, 800))
    view.resize(960, 600)
    view.show()
    view.attach(tab)
    finish(view.start())
    yield tab, view
    finish(view.stop())
    view.close()
    finish(cm.__aexit__(None, None, None), 30)
    served.__exit__(None, None, None)


def page_eval(qtbot, tab, expr: str):
    async def go():
        r = await tab.cdp.send("Runtime.evaluate", {"expression": expr, "returnByValue": True},
                               session_id=tab.session_id)
        return r["result"].get("value")
    return run(qtbot, go())


def rect_of(qtbot, tab, css: str) -> tuple[float, float, float, float]:
    return tuple(page_eval(qtbot, tab, RECT_JS.format(css=css)))


def widget_point(view, rect) -> QPoint:
    """The widget point (whole px) of a page rect's centre."""
    return view.to_widget(rect[0] + rect[2] / 2, rect[1] + rect[3] / 2).toPoint()


def scroll_to(qtbot, tab, view, y: int) -> None:
    """The page scrolled to `y` and a frame showing it painted."""
    page_eval(qtbot, tab, f"scrollTo(0, {y})")
    run(qtbot, view.request_frame())
    qtbot.waitUntil(lambda: abs(float(view._meta.get("scrollOffsetY") or 0) - y) < 1, timeout=5000)


def fresh_snapshot(qtbot, tab, view) -> None:
    view.set_snapshot(run(qtbot, tab.snapshot(force=True)))


def node_of(view, css_id: str) -> str:
    return next(n.node_id for n in view._snapshot.nodes() if (n.attrs or {}).get("id") == css_id)


def covers(box, rect, slack: float = 1.0) -> bool:
    return (box[0] <= rect[0] + slack and box[1] <= rect[1] + slack and box[0] + box[2] >= rect[0] + rect[2] - slack
            and box[1] + box[3] >= rect[1] + rect[3] - slack)


def overlaps(box, rect) -> bool:
    return box[0] < rect[0] + rect[2] and rect[0] < box[0] + box[2] and box[1] < rect[1] + rect[3] and \
        rect[1] < box[1] + box[3]


def test_ctrl_shift_click_selects_a_node_and_alt_click_still_does(qtbot, shop):
    tab, view = shop
    scroll_to(qtbot, tab, view, 0)
    page_eval(qtbot, tab, "document.querySelector('#full-name').scrollIntoView({block: 'center'})")
    scroll_to(qtbot, tab, view, int(page_eval(qtbot, tab, "scrollY")))
    fresh_snapshot(qtbot, tab, view)
    view.set_overlay(True)
    page_eval(qtbot, tab, "document.activeElement.blur(); window.__clicks = 0;"
                          "document.querySelector('#full-name').addEventListener('mousedown', () => window.__clicks++)")
    name = node_of(view, "full-name")
    pos = widget_point(view, rect_of(qtbot, tab, "#full-name"))
    try:
        picked: list[str] = []
        view.node_clicked.connect(picked.append)
        both = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
        qtbot.mouseClick(view, Qt.LeftButton, both, pos=pos)
        qtbot.mouseClick(view, Qt.LeftButton, Qt.KeyboardModifier.AltModifier, pos=pos)
        run(qtbot, view.drain_input())
        assert picked == [name, name]
        assert view.highlighted() == name
        assert page_eval(qtbot, tab, "window.__clicks") == 0, "a selecting click reached the page"
        # Ctrl or Shift alone is the page's (Ctrl+click on a link, Shift+click to extend a selection)
        qtbot.mouseClick(view, Qt.LeftButton, Qt.KeyboardModifier.ShiftModifier, pos=pos)
        run(qtbot, view.drain_input())
        qtbot.waitUntil(lambda: page_eval(qtbot, tab, "window.__clicks") == 1, timeout=3000)
        assert picked == [name, name]
    finally:
        view.set_overlay(False)
        view.node_clicked.disconnect()


def _wheel(view, pos: QPoint, notches: int) -> None:
    """A wheel turn as a mouse sends it: `notches` clicks down (negative: up)."""
    ev = QWheelEvent(QPointF(pos), QPointF(view.mapToGlobal(pos)), QPoint(0, 0), QPoint(0, -120 * notches),
                     Qt.NoButton, Qt.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(view, ev)


def test_a_wheel_scroll_leaves_no_mask_where_the_password_was(qtbot, shop):
    tab, view = shop
    page_eval(qtbot, tab, "document.querySelector('#password').scrollIntoView({block: 'center'})")
    top = int(page_eval(qtbot, tab, "scrollY"))
    scroll_to(qtbot, tab, view, top)
    before = rect_of(qtbot, tab, "#password")
    qtbot.waitUntil(lambda: any(covers(b, before) for b in view._meta.get("secret_boxes") or ()), timeout=5000)
    frames = view.frame_count
    _wheel(view, widget_point(view, before), 2)
    qtbot.waitUntil(lambda: page_eval(qtbot, tab, "scrollY") > top + 100, timeout=5000)
    # the page comes to rest; then no frame may be asked for or sent for a while: the last one stays on screen
    qtbot.waitUntil(lambda: view.frame_count > frames and float(view._meta.get("scrollOffsetY") or 0) ==
                    page_eval(qtbot, tab, "scrollY"), timeout=5000)
    qtbot.wait(600)
    now = rect_of(qtbot, tab, "#password")
    assert now[1] < before[1] - 100
    boxes = view._meta["secret_boxes"]
    assert any(covers(b, now) for b in boxes), "the password is not covered"
    assert all(overlaps(b, now) for b in boxes), f"a mask lingers off the password: {boxes} (it is at {now})"
    img = view.last_frame_image()
    k = img.width() / 1280
    left = before[0] + 10   # where the password was: the page under it shows again
    assert QColor(img.pixel(int(left * k), int((before[1] + before[3] / 2) * k))) != QColor(*FILL)
    assert QColor(img.pixel(int(left * k), int((now[1] + now[3] / 2) * k))) == QColor(*FILL)


def _list_shown(view) -> bool:
    return view.select_list is not None and view.select_list.isVisible()


def _open_by_click(qtbot, tab, view) -> None:
    qtbot.mouseClick(view, Qt.LeftButton, pos=widget_point(view, rect_of(qtbot, tab, "#country")))
    qtbot.waitUntil(lambda: _list_shown(view), timeout=5000)
    assert QApplication.focusWidget() is view.select_list


def test_a_native_select_opens_its_list_over_the_page_and_the_choice_reaches_the_page(qtbot, shop):
    tab, view = shop
    page_eval(qtbot, tab, "document.querySelector('#country').scrollIntoView({block: 'center'})")
    scroll_to(qtbot, tab, view, int(page_eval(qtbot, tab, "scrollY")))
    page_eval(qtbot, tab, "window.__changes = []; document.querySelector('#country').addEventListener('change',"
                          " (e) => __changes.push(e.target.value))")
    value = "document.querySelector('#country').value"
    # a click on the select's box: its options, drawn under it, the current one current; nothing native opened
    _open_by_click(qtbot, tab, view)
    lst = view.select_list
    assert [lst.item(i).text() for i in range(lst.count())] == ["Germany", "France", "Spain", "United States"]
    assert lst.currentRow() == 0
    box = view.page_rect_to_widget(rect_of(qtbot, tab, "#country"))
    assert abs(lst.geometry().top() - box.bottom()) <= 2 and lst.geometry().bottom() <= view.height()
    assert page_eval(qtbot, tab, "document.activeElement.id") == "country"
    # by mouse: Spain
    qtbot.mouseClick(lst.viewport(), Qt.LeftButton, pos=lst.visualItemRect(lst.item(2)).center())
    qtbot.waitUntil(lambda: page_eval(qtbot, tab, value) == "ES", timeout=5000)
    assert not _list_shown(view) and QApplication.focusWidget() is view
    assert page_eval(qtbot, tab, "__changes") == ["ES"]
    # by keys: one down from Spain, Enter
    _open_by_click(qtbot, tab, view)
    assert lst.currentRow() == 2
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key_Down)
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key_Return)
    qtbot.waitUntil(lambda: page_eval(qtbot, tab, value) == "US", timeout=5000)
    assert page_eval(qtbot, tab, "__changes") == ["ES", "US"]
    # the focused select opens with Space too; Escape closes it and changes nothing
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key_Space)
    qtbot.waitUntil(lambda: _list_shown(view), timeout=5000)
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key_Home)
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key_Escape)
    assert not _list_shown(view) and QApplication.focusWidget() is view
    run(qtbot, view.drain_input())
    assert page_eval(qtbot, tab, value) == "US" and page_eval(qtbot, tab, "__changes") == ["ES", "US"]
    # a plain click elsewhere still reaches the page (the Full name field takes focus)
    qtbot.mouseClick(view, Qt.LeftButton, pos=widget_point(view, rect_of(qtbot, tab, "#full-name")))
    run(qtbot, view.drain_input())
    qtbot.waitUntil(lambda: page_eval(qtbot, tab, "document.activeElement.id") == "full-name", timeout=3000)
    assert not _list_shown(view)
    # Space in a text field is typed (only a focused select opens on it)
    qtbot.keyClicks(view, "a b")
    run(qtbot, view.drain_input())
    qtbot.waitUntil(lambda: page_eval(qtbot, tab, "document.querySelector('#full-name').value") == "a b", timeout=3000)
    assert not _list_shown(view)
