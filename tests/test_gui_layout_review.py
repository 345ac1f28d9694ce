"""Layout and readability at the window's real panel widths (a screenshot review found these): the
Nodes tab's columns and locator line, the Sessions tab's buttons at a 1024 px window, and the chat and
plan of a run with an unverified step (each thing said once, and never read as a plain success).
Widgets on stored snapshots and hand-built records (no browser), offscreen, through pytest-qt."""

from __future__ import annotations

import pytest

import gui_helpers  # noqa: F401  (Qt's offscreen platform for the suite)

pytest.importorskip("PySide6.QtWidgets")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtGui import QGuiApplication  # noqa: E402

from gui.widgets.node_tree import NAME_MIN_WIDTH, NodeTreePanel  # noqa: E402

from fake_page import stored  # noqa: E402

# the side panel's width in the window: 1366 px wide (≈ 410 px) and 1024 px wide (≈ 300 px)
WIDE, NARROW = 410, 300


@pytest.fixture
def make(qtbot):
    def go(cls, *a, **kw):
        w = cls(*a, **kw)
        qtbot.addWidget(w)
        return w
    return go


def _shown(qtbot, widget, width: int, height: int = 560):
    widget.resize(width, height)
    widget.show()
    qtbot.waitExposed(widget)
    qtbot.wait(20)  # the panel fits its columns on the next turn of the event loop


# -- Nodes tab ---------------------------------------------------------------------------------------

def _tree_panel(qtbot, make, width: int, snap_name: str = "labels") -> tuple[NodeTreePanel, object]:
    snap = stored(snap_name)
    panel = make(NodeTreePanel)
    panel.set_snapshot(snap)
    _shown(qtbot, panel, width)
    return panel, snap


@pytest.mark.parametrize("width", [WIDE, NARROW])
def test_id_role_and_tier_columns_fit_their_content_and_name_takes_the_rest(qtbot, make, width):
    panel, snap = _tree_panel(qtbot, make, width)
    h, fm, view = panel.view.header(), panel.view.fontMetrics(), panel.view
    roles = {n.role or f"<{n.tag}>" for n in snap.nodes()}
    widest_role = max(fm.horizontalAdvance(r) for r in roles)
    widest_tier = max(fm.horizontalAdvance(n.tier) for n in snap.nodes())
    # each short column holds its longest value whole, with little room to spare
    assert widest_role < h.sectionSize(1) <= widest_role + 40
    assert widest_tier < h.sectionSize(3) <= widest_tier + 40
    # the ID column: the IDs of the rows on show, indented as deep as the deepest expanded node's children
    deepest = max(n.depth for n in snap.nodes() if view.isExpanded(panel.view_index(n.node_id)))
    id_need = view.indentation() * (deepest + 2) + max(fm.horizontalAdvance(n.node_id) for n in snap.nodes())
    assert id_need < h.sectionSize(0) <= id_need + 40
    room = view.viewport().width()
    others = h.sectionSize(0) + h.sectionSize(1) + h.sectionSize(3)
    if room - others >= NAME_MIN_WIDTH:  # the name column takes exactly what is left: no sideways scrolling
        assert abs(h.sectionSize(2) - (room - others)) <= 2 and h.length() <= room + 2
    else:  # a narrow panel keeps a readable name column; the tier column scrolls into view
        assert h.sectionSize(2) >= NAME_MIN_WIDTH
    assert width == NARROW or room - others >= NAME_MIN_WIDTH


def test_the_id_column_grows_when_a_deeper_node_is_expanded(qtbot, make):
    panel, snap = _tree_panel(qtbot, make, WIDE)
    before = panel.view.header().sectionSize(0)
    deep = max(snap.nodes(), key=lambda n: n.depth)
    assert panel.select_node(deep.node_id)
    qtbot.waitUntil(lambda: panel.view.header().sectionSize(0) > before, timeout=2000)
    # the new width indents the deepest row's ID and still shows it whole
    fm = panel.view.fontMetrics()
    need = panel.view.indentation() * (deep.depth + 1) + fm.horizontalAdvance(deep.node_id)
    assert panel.view.header().sectionSize(0) > need
    # flattened: no indentation, so a narrower ID column
    panel.set_flattened(True)
    qtbot.wait(20)
    assert panel.view.header().sectionSize(0) < before


def test_a_long_locator_is_elided_in_its_line_whole_in_its_tooltip_and_never_widens_the_panel(qtbot, make):
    panel, snap = _tree_panel(qtbot, make, NARROW)
    min_before = panel.minimumSizeHint().width()
    node = snap.find(role="textbox", name="Label For")[0]
    assert panel.select_node(node.node_id)
    want = 'page.get_by_role("textbox", name="Label For", exact=True)'
    line = panel.locator_label
    assert panel.locator() == line.full_text() == want
    shown = line.text()
    assert line.is_elided() and "…" in shown and shown != want
    # elided in the middle: its start and its end are both shown
    head, tail = shown.split("…")
    assert want.startswith(head) and want.endswith(tail) and head and tail
    assert line.fontMetrics().horizontalAdvance(shown) <= line.width()
    assert want.replace('"', "&quot;") in line.toolTip()  # the whole locator, escaped (Qt guesses tooltip formats)
    # nothing grew: the panel's minimum width is what it was, and the line stays inside the panel
    assert panel.minimumSizeHint().width() <= min_before
    assert line.geometry().right() <= panel.width()
    # the copy is the whole locator, not what the line shows
    QGuiApplication.clipboard().clear()
    qtbot.mouseClick(panel.copy_locator_btn, Qt.LeftButton)
    assert QGuiApplication.clipboard().text() == want
    # wide enough, the whole locator shows
    panel.resize(900, 560)
    qtbot.waitUntil(lambda: line.text() == want, timeout=2000)
    # no node: a placeholder, and Copy is off
    panel.set_snapshot(snap)
    assert panel.locator() == "" and not panel.copy_locator_btn.isEnabled() and "Select a node" in line.text()


# -- Sessions tab ------------------------------------------------------------------------------------

def _whole_and_inside(btn, panel) -> bool:
    """The button is shown, inside the panel, and wide enough for its words."""
    top_left = btn.mapTo(panel, btn.rect().topLeft())
    inside = panel.rect().contains(top_left) and panel.rect().contains(btn.mapTo(panel, btn.rect().bottomRight()))
    words = btn.fontMetrics().horizontalAdvance(btn.text())
    return btn.isVisible() and inside and btn.width() >= words


@pytest.mark.parametrize("width", [NARROW, WIDE])
def test_every_session_action_is_shown_whole_in_a_narrow_panel(qtbot, make, width):
    from gui.widgets.sessions_panel import SessionsPanel

    panel = make(SessionsPanel)
    _shown(qtbot, panel, width)
    buttons = [*panel.action_buttons(), panel.refresh_btn, panel.new_btn]
    assert {b.text() for b in panel.action_buttons()} == {"Open", "Rename", "Export…", "Export as test…", "Replay",
                                                          "Delete…"}
    for b in buttons:
        assert _whole_and_inside(b, panel), (b.text(), b.geometry(), panel.size())
    # no two overlap
    rects = [(b.text(), b.geometry()) for b in panel.action_buttons()]
    for i, (na, ra) in enumerate(rects):
        for nb, rb in rects[i + 1:]:
            assert not ra.intersects(rb), (na, nb)
    rows = panel.actions_row.rows()
    assert sum(len(r) for r in rows) == len(panel.action_buttons())
    assert len(rows) > 1  # at these widths one row cannot hold them: they wrap, none is squeezed
    # and they wrap only as needed: the first button of a row would not have fitted on the row before
    gap = panel.actions_row.spacing()
    for before, row in zip(rows, rows[1:], strict=False):
        assert before[-1].geometry().right() + gap + row[0].width() > panel.actions_row.geometry().right()
    # and the panel asks for no more width than a 1024 px window gives it
    assert panel.minimumSizeHint().width() <= NARROW
    panel.resize(1200, 560)  # wide: one row
    qtbot.waitUntil(lambda: len(panel.actions_row.rows()) == 1, timeout=2000)


def test_a_narrow_sessions_table_gives_the_title_its_room(qtbot, make):
    from gui.widgets.sessions_panel import DOMAIN_COL, STARTED_COL, TITLE_COL, TITLE_MIN_WIDTH, SessionsPanel

    panel = make(SessionsPanel)
    _shown(qtbot, panel, WIDE + 200)
    assert not panel.table.isColumnHidden(DOMAIN_COL) and not panel.table.isColumnHidden(STARTED_COL)
    panel.resize(NARROW, 560)
    qtbot.waitUntil(lambda: panel.table.isColumnHidden(DOMAIN_COL), timeout=2000)
    assert panel.table.columnWidth(TITLE_COL) >= TITLE_MIN_WIDTH - 10
    panel.resize(WIDE + 200, 560)
    qtbot.waitUntil(lambda: not panel.table.isColumnHidden(DOMAIN_COL), timeout=2000)
