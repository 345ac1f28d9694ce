"""Locators in the window: the Nodes tab shows the selected node's locator with Copy locator, the
overlay tooltip names it, pick mode on the live view outlines the node under the pointer and tells its
locator (a click copies it and never reaches the page), and the Sessions tab exports a session as a
Playwright test."""

from __future__ import annotations

import html

import pytest

from gui_helpers import aio, open_window, run, wait_fitted  # noqa: F401  (fixtures)


@pytest.fixture
def home(tmp_path, monkeypatch):
    h = tmp_path / "vigil_home"
    monkeypatch.setenv("VIGIL_HOME", str(h))
    return h


@pytest.mark.usefixtures("aio", "home")
def test_locator_in_nodes_tab_tooltip_and_pick_mode(qtbot, server):
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtGui import QGuiApplication

    with open_window(qtbot, server.url("offline_shop.html")) as w:
        wait_fitted(qtbot, w)
        snap = w.sup.snapshot
        order = snap.find("button", "Place order")[0]
        want = 'page.get_by_role("button", name="Place order", exact=True)'

        # the Nodes tab: selecting a node shows its locator; Copy locator puts it on the clipboard
        assert w.nodes.select_node(order.node_id)
        assert w.nodes.locator() == want and w.nodes.copy_locator_btn.isEnabled()
        QGuiApplication.clipboard().setText("")
        qtbot.mouseClick(w.nodes.copy_locator_btn, Qt.LeftButton)
        assert QGuiApplication.clipboard().text() == want

        # the overlay's tooltip names it (escaped: it is rich text)
        assert html.escape(want) in w.page.tooltip_text(order.node_id)

        # pick mode: hover outlines the node and tells its locator; a click copies it, the page gets nothing
        w.act_overlay.setChecked(False)
        w.act_pick.setChecked(True)
        x, y = order.center
        pos = w.page.to_widget(x, y).toPoint()
        qtbot.mouseMove(w.page, pos)
        qtbot.waitUntil(lambda: w.page.highlighted("pick") == order.node_id, timeout=5000)
        assert want in w.statusBar().currentMessage()
        QGuiApplication.clipboard().setText("")
        qtbot.mouseClick(w.page, Qt.LeftButton, pos=pos)
        assert QGuiApplication.clipboard().text() == want and w.page.picked == (order.node_id, want)
        assert "Copied: " + want == w.statusBar().currentMessage()
        run(qtbot, w.page.drain_input())
        assert run(qtbot, w.sup.tab.page.text_content("#status")) == "", "the pick click reached the page"
        qtbot.mouseMove(w.page, pos + QPoint(1, 1))  # hovering again tells it again, until picking ends
        qtbot.waitUntil(lambda: want == w.statusBar().currentMessage(), timeout=5000)
        w.act_pick.setChecked(False)
        assert w.page.highlighted("pick") is None and not w.page.picking
        assert w.statusBar().currentMessage() == "", "the locator stayed in the status bar after picking"


@pytest.mark.usefixtures("aio", "home")
def test_a_node_in_a_closed_shadow_root_says_why_it_has_no_locator(qtbot, server):
    from PySide6.QtCore import QPoint

    with open_window(qtbot, server.url("shadow.html")) as w:
        wait_fitted(qtbot, w)
        snap = w.sup.snapshot
        closed = snap.find("button", "Closed button")[0]
        assert closed.in_closed_shadow
        assert w.nodes.select_node(closed.node_id)
        assert w.nodes.locator() == "" and not w.nodes.copy_locator_btn.isEnabled()
        w.tabs.setCurrentWidget(w.nodes)
        qtbot.waitUntil(lambda: w.nodes.locator_label.width() > 200, timeout=5000)
        shown = w.nodes.locator_label.text()  # the reason, as much as fits; all of it in the tooltip
        assert shown.startswith("No locator: inside a closed shadow root"), shown
        assert "Playwright's locators cannot enter" in w.nodes.locator_label.toolTip()
        assert "closed shadow root" in w.page.tooltip_text(closed.node_id)
        # pick mode says the same in the status bar
        w.act_overlay.setChecked(False)
        w.act_pick.setChecked(True)
        pos = w.page.to_widget(*closed.center).toPoint()
        qtbot.mouseMove(w.page, pos)
        qtbot.waitUntil(lambda: w.page.highlighted("pick") == closed.node_id, timeout=5000)
        assert "closed shadow root" in w.statusBar().currentMessage()
        qtbot.mouseMove(w.page, pos + QPoint(1, 1))
        w.act_pick.setChecked(False)
        # an open root's button keeps its locator
        opened = snap.find("button", "Open button")[0]
        assert w.nodes.select_node(opened.node_id)
        assert w.nodes.locator() == 'page.get_by_role("button", name="Open button", exact=True)'


@pytest.mark.usefixtures("aio", "home")
def test_export_as_test_from_the_sessions_tab(qtbot, server, tmp_path):
    from PySide6.QtCore import Qt

    out = tmp_path / "tests" / "test_place_order.py"
    out.parent.mkdir()
    with open_window(qtbot, server.url("offline_shop.html")) as w:
        w.policy.setCurrentText("auto")
        w.task.setText("type Ada into Full name and click Place order")
        qtbot.mouseClick(w.run_btn, Qt.LeftButton)
        qtbot.waitUntil(lambda: w.sup.current_session() is not None and not w.sup.running(), timeout=30000)
        sid = w.sup.current_session()
        w.sessions.refresh()
        assert w.sessions.select_session(sid) and w.sessions.export_test_btn.isEnabled()
        qtbot.mouseClick(w.sessions.export_test_btn, Qt.LeftButton)
        dlg = w.sessions.export_dialog
        assert dlg is not None and dlg.isVisible()
        dlg.selectFile(str(out))
        dlg.accept()
        qtbot.waitUntil(lambda: out.exists() and "as a test" in w.statusBar().currentMessage(), timeout=15000)
        text = out.read_text()
        assert 'page.get_by_role("textbox", name="Full name", exact=True).fill("Ada")' in text
        assert 'page.get_by_role("button", name="Place order", exact=True).click()' in text
        compile(text, str(out), "exec")
        # a file that is not a test module: the reason in the banner, nothing written
        assert run(qtbot, w.sessions.export_test_to(sid, str(tmp_path / "notes.txt"))) is None
        assert w.banner.isVisible() and "Export as test failed" in w.banner.text()
        assert not (tmp_path / "notes.txt").exists()
