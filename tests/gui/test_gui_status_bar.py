"""The status bar and the Nodes tab in the window at 1024 px and up (issue 27, item 4): nothing in the
status bar overlaps — the snapshot line, the loop's state, the MCP server's button, a passing message —
and what is cut is elided with "…" and shown whole in its tooltip; the Nodes tab's locator line and
tier column are not clipped. The real window without a browser (offscreen screens of
tests/support/qt_screens.json), stored snapshots from tests/fixtures."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QRect, QSettings

from support.fake_page import stored
from support.gui_helpers import screen_named

LONG_SNAPSHOT = ("TRUNCATED: cut after 5000 nodes at node 4711 (the page budget was full (the frame moved to another "
                 "process)); what follows is not in this snapshot · snapshot 312 ms · 16021 nodes (semantic 2100, "
                 "non-semantic 9000, structural 4921) · 812 interactive · payload ~48211 tokens · walk 5000/16021")
MCP_TEXT = "MCP: mcp-inspector-client-with-a-long-name drives this tab · http://127.0.0.1:54321/mcp"


def _rect_in(w, parent) -> QRect:
    return QRect(w.mapTo(parent, QPoint(0, 0)), w.size())


@pytest.mark.parametrize("size", ["1024x640", "1366x768"])
def test_nothing_in_the_status_bar_overlaps_and_what_is_cut_says_so(qtbot, aio, size, tmp_path):
    from gui.app.mcp_host import WindowMcpHost
    from gui.supervisor.controller import Supervisor
    from gui.window.main_window import MainWindow

    window = MainWindow(Supervisor(), settings=QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.place_on(screen_named(size))
    window.showMaximized() if window.start_maximized else window.show()
    qtbot.waitExposed(window)
    host = WindowMcpHost(window)
    host.label.setText(MCP_TEXT)
    window.status_snap.set_line(LONG_SNAPSHOT, "the walk stopped at its node budget; raise it with --max-nodes")
    window.status_loop.setText("waiting for approval")
    qtbot.wait(50)
    bar = window.statusBar()
    parts = {"snapshot line": window.status_snap, "loop state": window.status_loop, "MCP button": host.label}
    rects = {name: _rect_in(w, bar) for name, w in parts.items()}
    for name, r in rects.items():
        assert parts[name].isVisible() and bar.rect().contains(r), f"{name} at {r.getRect()} is outside the bar"
    names = list(rects)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            assert not rects[a].intersects(rects[b]), f"{a} {rects[a].getRect()} overlaps {b} {rects[b].getRect()}"
    # the loop's state is whole; the long lines are elided, each whole in its tooltip
    loop = window.status_loop
    assert loop.fontMetrics().horizontalAdvance(loop.text()) <= loop.contentsRect().width()
    snap = window.status_snap
    assert snap.is_elided() and snap.text().endswith("…") and snap.text().startswith("TRUNCATED")
    assert "walk 5000/16021" in snap.toolTip() and "--max-nodes" in snap.toolTip()
    assert snap.fontMetrics().horizontalAdvance(snap.text()) <= snap.contentsRect().width()
    mcp = host.label
    shown = mcp.text()
    assert host.label.full_text() == MCP_TEXT
    if shown != MCP_TEXT:
        assert "…" in shown and "/mcp" in shown and MCP_TEXT.replace("/", "&#x2F;") in mcp.shown_tooltip() \
            or MCP_TEXT in mcp.shown_tooltip(), (shown, mcp.shown_tooltip())
    assert mcp.fontMetrics().horizontalAdvance(shown) <= mcp.width()
    # a passing message: elided left of the permanent widgets, whole when asked for and in the tooltip
    message = "Exported the session to /home/someone/a/very/long/path/that/goes/on/" + "and-on/" * 30 + "report.html"
    bar.showMessage(message, 0)
    assert bar.currentMessage() == message
    shown = bar.shown_message()
    assert shown.endswith("…") and bar.fontMetrics().horizontalAdvance(shown) <= bar.message_room()
    assert bar.message_room() <= min(_rect_in(loop, bar).left(), _rect_in(mcp, bar).left())
    assert "report.html" in bar.toolTip()
    bar.clearMessage()
    window.closed.set_result(True)  # no engine was started


@pytest.mark.parametrize("size", ["1024x640", "1366x768"])
def test_the_nodes_tabs_locator_line_and_tier_column_are_not_clipped(qtbot, aio, size, tmp_path):
    from gui.supervisor.controller import Supervisor
    from gui.window.main_window import MainWindow

    window = MainWindow(Supervisor(), settings=QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.place_on(screen_named(size))
    window.showMaximized() if window.start_maximized else window.show()
    qtbot.waitExposed(window)
    snap = stored("labels")
    panel = window.nodes
    window.tabs.setCurrentWidget(panel)
    panel.set_snapshot(snap)
    node = snap.find(role="textbox", name="Label For")[0]
    assert panel.select_node(node.node_id)
    qtbot.wait(50)
    line, tabs = panel.locator_label, window.tabs
    r = _rect_in(line, tabs)
    assert line.isVisible() and tabs.rect().contains(r), f"the locator line {r.getRect()} is cut by the side panel"
    assert line.fontMetrics().horizontalAdvance(line.text()) <= line.contentsRect().width()
    if line.text() != line.full_text():
        assert "…" in line.text() and "Label For" in line.toolTip()
    copy = _rect_in(panel.copy_locator_btn, tabs)
    assert tabs.rect().contains(copy) and not copy.intersects(r)
    view, h = panel.view, panel.view.header()
    tier_end = h.sectionViewportPosition(3) + h.sectionSize(3)
    assert tier_end <= view.viewport().width(), f"the tier column ends at {tier_end}, past {view.viewport().width()}"
    widest_tier = max(view.fontMetrics().horizontalAdvance(n.tier) for n in snap.nodes())
    assert h.sectionSize(3) > widest_tier
    window.closed.set_result(True)


def test_a_page_the_server_answered_with_an_error_is_said_in_the_status_bar_and_at_the_address(qtbot, aio, tmp_path):
    """A snapshot of a server's error page (404) is not shown as the site: the status bar leads with the
    server's answer, in the warning colour, and the address field's tooltip says it (issue 39, item 6)."""
    from gui.supervisor.controller import Supervisor
    from gui.window.main_window import MainWindow

    from support.fake_page import edited

    sup = Supervisor()
    window = MainWindow(sup, settings=QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    sup.snapshot_changed.emit(edited("labels", lambda body: body["context"].update(http_status=404)), None)
    said = window.status_snap.full_text()
    assert said.startswith("page answered HTTP 404 Not Found · snapshot "), said
    assert "font-weight:bold" in window.status_snap.styleSheet()
    assert window.url.toolTip() == "The page answered HTTP 404 Not Found"
    # the next page, answered 200, says nothing of it
    sup.snapshot_changed.emit(edited("labels", lambda body: body["context"].update(http_status=200)), None)
    assert window.status_snap.full_text().startswith("snapshot "), window.status_snap.full_text()
    assert window.url.toolTip() == "" and "font-weight" not in window.status_snap.styleSheet()
