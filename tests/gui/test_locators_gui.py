"""Locators in the window: the Nodes tab shows the selected node's locator with Copy locator, the
overlay tooltip names it, pick mode on the live view outlines the node under the pointer and tells its
locator (a click copies it and never reaches the page; over a label, its control; over nothing, says so),
clicks with Set-of-Mark on reach the page while Ctrl+Shift+click selects, and the Sessions tab exports a session
as a Playwright test."""

from __future__ import annotations

import html

import pytest

from support.gui_helpers import open_window, run, wait_fitted
from support.real_corpus import corpus_installed  # noqa: F401  (fixture)


@pytest.fixture
def home(tmp_path, monkeypatch):
    h = tmp_path / "vigil_home"
    monkeypatch.setenv("VIGIL_HOME", str(h))
    return h


def _page_text(qtbot, w, selector: str, want: str, timeout: float = 5.0) -> str:
    """The page's text at `selector` once it is `want` (or what it is when `timeout` runs out)."""
    import time
    end = time.monotonic() + timeout
    got = run(qtbot, w.sup.tab.page.text_content(selector))
    while got != want and time.monotonic() < end:
        qtbot.wait(100)
        got = run(qtbot, w.sup.tab.page.text_content(selector))
    return got


@pytest.mark.usefixtures("aio", "home")
def test_set_of_mark_clicks_locator_in_nodes_tab_tooltip_and_pick_mode(qtbot, server):
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtGui import QGuiApplication

    with open_window(qtbot, server.url("offline_shop.html")) as w:
        wait_fitted(qtbot, w)
        snap = w.sup.snapshot
        order = snap.find("button", "Place order")[0]
        want = 'page.get_by_role("button", name="Place order", exact=True)'

        # Set-of-Mark on: a click on a box reaches the page (its handler runs) and selects nothing; Ctrl+Shift+click
        # selects the node (in the view and the Nodes tab) and the page gets no click — said beside the toggle
        # and in the status bar
        w.act_overlay.setChecked(True)
        qtbot.waitUntil(w.overlay_hint.isVisible, timeout=5000)  # beside the toggle, once the toolbar laid out
        assert w.overlay_hint.text() == "Ctrl+Shift+click a box selects its node"
        assert w.statusBar().currentMessage().startswith("Set-of-Mark on: clicks still go to the page; "
                                                         "Ctrl+Shift+click")
        create = snap.find("button", "Create account")[0]
        assert {order.node_id, create.node_id} <= {b.node_id for b in w.page.overlay_boxes()}
        qtbot.mouseClick(w.page, Qt.LeftButton, pos=w.page.to_widget(*create.center).toPoint())
        run(qtbot, w.page.drain_input())
        said = "Created for  ()"
        assert _page_text(qtbot, w, "#status", said) == said, "the click did not reach the page"
        assert w.page.highlighted("selected") is None and w.nodes.selected_node_id() is None
        qtbot.mouseClick(w.page, Qt.LeftButton, Qt.ControlModifier | Qt.ShiftModifier,
                         pos=w.page.to_widget(*order.center).toPoint())
        assert w.page.highlighted("selected") == order.node_id and w.nodes.selected_node_id() == order.node_id
        run(qtbot, w.page.drain_input())
        qtbot.wait(300)
        assert run(qtbot, w.sup.tab.page.text_content("#status")) == said, "Ctrl+Shift+click reached the page"
        w.act_overlay.setChecked(False)
        qtbot.waitUntil(lambda: not w.overlay_hint.isVisible(), timeout=5000)

        # the Nodes tab: selecting a node shows its locator; Copy locator puts it on the clipboard
        assert w.nodes.select_node(order.node_id)
        assert w.nodes.locator() == want and w.nodes.copy_locator_btn.isEnabled()
        QGuiApplication.clipboard().setText("")
        qtbot.mouseClick(w.nodes.copy_locator_btn, Qt.LeftButton)
        assert QGuiApplication.clipboard().text() == want

        # the overlay's tooltip names it (escaped: it is rich text)
        assert html.escape(want) in w.page.tooltip_text(order.node_id)

        # pick mode: hover outlines the node and tells its locator; a click copies it, the page gets nothing
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
        assert run(qtbot, w.sup.tab.page.text_content("#status")) == said, "the pick click reached the page"
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


@pytest.mark.usefixtures("aio", "home", "corpus_installed")
def test_pick_over_a_label_copies_its_controls_locator_and_says_when_there_is_nothing(qtbot, server):
    """Pick locator on a real library page (Radix UI): over the words of a checkbox's label it outlines and
    copies the checkbox's locator — which Playwright resolves to exactly that button — and says it came
    from the label; over empty space it says there is nothing to pick and copies nothing."""
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtGui import QGuiApplication

    with open_window(qtbot, server.url("real/radix.html")) as w:
        wait_fitted(qtbot, w)
        run(qtbot, w.sup.tab.page.wait_for_selector("html[data-ready]", state="attached"))
        snap = run(qtbot, w.sup.refresh(force=True))
        terms = snap.find("checkbox", "Accept terms and conditions")[0]
        want = 'page.get_by_role("checkbox", name="Accept terms and conditions", exact=True)'
        x, y = run(qtbot, w.sup.tab.page.evaluate("""() => {
            const r = document.createRange(); r.selectNodeContents(document.querySelector('label[for=terms]'));
            const b = r.getClientRects()[0]; return [b.x + b.width / 2, b.y + b.height / 2]; }"""))
        assert not (terms.bounds[0] <= x <= terms.bounds[0] + terms.bounds[2]), "the point is on the label's words"
        w.act_pick.setChecked(True)
        pos = w.page.to_widget(x, y).toPoint()
        qtbot.mouseMove(w.page, pos)
        qtbot.waitUntil(lambda: w.page.highlighted("pick") == terms.node_id, timeout=5000)
        assert w.statusBar().currentMessage() == want + " (its label's control)"
        QGuiApplication.clipboard().setText("")
        qtbot.mouseClick(w.page, Qt.LeftButton, pos=pos)
        assert QGuiApplication.clipboard().text() == want and w.page.picked == (terms.node_id, want)
        loc = eval(want, {"page": w.sup.tab.page})  # noqa: S307 - the locator line just copied
        assert run(qtbot, loc.count()) == 1 and run(qtbot, loc.evaluate("e => e.id")) == "terms"
        assert run(qtbot, w.sup.tab.page.evaluate("document.getElementById('terms').getAttribute('aria-checked')")) \
            == "false", "the pick click reached the page"

        # empty space, right of the form: nothing to pick, said; a click copies nothing
        vw, vh = snap.context.viewport.width, snap.context.viewport.height
        empty = w.page.to_widget(vw - 4, vh - 4).toPoint()
        qtbot.mouseMove(w.page, empty)
        qtbot.waitUntil(lambda: w.page.highlighted("pick") is None, timeout=5000)
        assert w.statusBar().currentMessage() == "Nothing to pick here: no element under the pointer takes input"
        assert w.page.toolTip() == "Nothing to pick here: no element under the pointer takes input"
        QGuiApplication.clipboard().setText("")
        qtbot.mouseClick(w.page, Qt.LeftButton, pos=empty)
        assert QGuiApplication.clipboard().text() == "" and w.page.picked == (terms.node_id, want)
        assert w.statusBar().currentMessage().endswith("; nothing copied")
        qtbot.mouseMove(w.page, empty + QPoint(1, 1))
        w.act_pick.setChecked(False)
