"""The live page stays still while a step is asked and approved (issue 27, item 3): the approval bar
floats over the page's panel, so neither the panel nor the page's viewport changes size when the bar
appears or goes — at any step, nor when the run ends — and the page gets no resize event. The bar
never covers the step's outlined target. Real window (offscreen 1366x768), real Chromium."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, QRect, QRectF, Qt

from support.gui_helpers import open_window, run, screen_named, wait_fitted

TASK = "type Ada into Full name and click Place order"
COUNT_RESIZES = "window.__resizes = 0; addEventListener('resize', () => window.__resizes++); 1"
SIZE_JS = "[innerWidth, innerHeight, window.__resizes]"


def _sizes(qtbot, w):
    inner = run(qtbot, w.sup.tab.page.evaluate(SIZE_JS))
    return {"panel": (w.page.width(), w.page.height()), "engine viewport": tuple(w.sup.viewport),
            "page": tuple(inner[:2]), "page resize events": inner[2]}


def test_the_page_keeps_its_size_while_steps_are_asked_and_approved(qtbot, aio, server):  # noqa: F811
    with open_window(qtbot, server.url("offline_shop.html"), screen=screen_named("1366x768")) as w:
        wait_fitted(qtbot, w)
        assert not w.step_overlay.scroll.isVisible() and not w.approval.isVisible(), "an empty bar over an idle page"
        run(qtbot, w.sup.tab.page.evaluate(COUNT_RESIZES))
        still = _sizes(qtbot, w)
        w.policy.setCurrentText("ask")
        w.task.setText(TASK)
        qtbot.mouseClick(w.run_btn, Qt.LeftButton)
        qtbot.waitUntil(w.sup.running, timeout=10000)
        asked = 0
        while True:
            qtbot.waitUntil(lambda: w.approval.is_pending() or not w.sup.running(), timeout=30000)
            if not w.approval.is_pending():
                break
            asked += 1
            qtbot.wait(300)  # whatever a re-layout would do, it would have started
            assert _sizes(qtbot, w) == still, f"the page moved when step {asked} was asked"
            bar = w.step_overlay.scroll
            column = w.page_column.rect()
            assert bar.isVisible() and column.contains(bar.geometry()), "the bar is not over the page's panel"
            for b in (w.approval.approve_btn, w.approval.reject_btn, w.approval.stop_btn):
                r = QRect(b.mapTo(w.page_column, QPoint(0, 0)), b.size())
                assert column.contains(r) and w.step_overlay.scroll.geometry().contains(r), "a bar button is cut off"
            target = w.sup.snapshot.get(w.page.highlighted("target")) if w.page.highlighted("target") else None
            if target is not None:
                on_page = w.page.page_rect_to_widget(target.bounds).translated(
                    QPointF(w.page.mapTo(w.page_column, QPoint(0, 0))))
                assert not QRectF(bar.geometry()).intersects(on_page), "the bar covers the step's target"
            if asked == 1:  # Edit and Reject open panels in the bar: their buttons are in sight, the page stays
                for opener, button in ((w.approval.edit_btn, w.approval.edit_apply),
                                       (w.approval.reject_btn, w.approval.reject_apply)):
                    qtbot.mouseClick(opener, Qt.LeftButton)
                    assert w.step_overlay.covers(button), "a panel's button is not in sight right after it opened"
                    w.approval.close_panels()
                w.act_overlay.setChecked(False)
                qtbot.waitUntil(lambda: w.step_overlay.covers(w.approval.approve_btn), timeout=3000)
                assert _sizes(qtbot, w) == still, "the page moved when a panel of the bar opened"
            qtbot.mouseClick(w.approval.approve_btn, Qt.LeftButton)
            qtbot.wait(300)
            assert _sizes(qtbot, w) == still, f"the page moved when step {asked} was approved"
        assert asked >= 2 and w.chat.status == "COMPLETED"
        qtbot.wait(300)
        assert not w.step_overlay.scroll.isVisible()
        assert _sizes(qtbot, w) == still, "the page moved when the run ended"


def test_about_blank_fills_the_page_panel(qtbot, aio):  # noqa: F811
    """An MCP session's window opens on about:blank: painted over the whole panel, not letterboxed."""
    with open_window(qtbot, None, screen=screen_named("1024x640")) as w:
        qtbot.waitUntil(lambda: w.page.frame_count > 0, timeout=15000)
        qtbot.wait(300)
        assert w.sup.tab.url == "about:blank"
        assert w.page.page_size == tuple(map(float, w.page.wanted_viewport()))
        assert w.page.painted_rect() == QRectF(w.page.rect()), (w.page.painted_rect(), w.page.rect())
        assert not w.step_overlay.scroll.isVisible()
