"""Layout and readability at the window's real panel widths (a screenshot review found these): the
Nodes tab's columns and locator line, the Sessions tab's buttons at a 1024 px window, and the chat and
plan of a run with an unverified step (each thing said once, and never read as a plain success).
Widgets on stored snapshots and hand-built records (no browser), offscreen, through pytest-qt."""

from __future__ import annotations

import pytest

from support.gui_helpers import open_window, screen_named, wait_fitted

pytest.importorskip("PySide6.QtWidgets")

from PySide6.QtCore import QModelIndex, Qt  # noqa: E402
from PySide6.QtGui import QGuiApplication  # noqa: E402

from gui.nodes.node_columns import NAME_FLOOR  # noqa: E402
from gui.nodes.node_tree import NAME_MIN_WIDTH, NodeTreePanel  # noqa: E402

from support.fake_page import stored  # noqa: E402

# the side panel's width in the window: 1366 px wide (≈ 410 px) and 1024 px wide (≈ 300 px)
WIDE, NARROW = 410, 300


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
    else:  # a narrow panel: the name column gives way (it elides), the tier column stays in view (issue 27)
        assert h.sectionSize(2) >= NAME_FLOOR and h.length() <= room + 2
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
    # a newer snapshot of the same page keeps the selected node and its locator (the live view sends them)
    panel.set_snapshot(snap)
    assert panel.selected_node_id() == node.node_id and panel.locator() == want
    # no node: a placeholder, and Copy is off
    panel.view.setCurrentIndex(QModelIndex())
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
    from gui.sessions.sessions_panel import SessionsPanel

    panel = make(SessionsPanel)
    _shown(qtbot, panel, width)
    buttons = [*panel.action_buttons(), panel.refresh_btn, panel.new_btn]
    assert {b.text() for b in panel.action_buttons()} == {"Open", "Rename", "Export…", "Export as test…",
                                                          "Export trace…", "Replay", "Delete…"}
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
    from gui.sessions.sessions_panel import DOMAIN_COL, STARTED_COL, TITLE_COL, TITLE_MIN_WIDTH, SessionsPanel

    panel = make(SessionsPanel)
    _shown(qtbot, panel, WIDE + 200)
    assert not panel.table.isColumnHidden(DOMAIN_COL) and not panel.table.isColumnHidden(STARTED_COL)
    panel.resize(NARROW, 560)
    qtbot.waitUntil(lambda: panel.table.isColumnHidden(DOMAIN_COL), timeout=2000)
    assert panel.table.columnWidth(TITLE_COL) >= TITLE_MIN_WIDTH - 10
    panel.resize(WIDE + 200, 560)
    qtbot.waitUntil(lambda: not panel.table.isColumnHidden(DOMAIN_COL), timeout=2000)


# -- the chat and the plan of a run with an unverified step -----------------------------------------

DONE = "Done: 1 instruction(s) carried out."
FEEDBACK = "Expected any change, but nothing on the page changed."


def _step_record(index: int, plan_index: int | None, verified: bool, action: str = "click"):
    from engine.models.actions import Action, ActionResult, PageState, VerificationResult
    from engine.models.loop import ProposedStep, StepRecord

    v = VerificationResult(success=verified, verified_outcome="any_change" if verified else None,
                           actual_outcome="nothing", confidence=0.9, feedback=FEEDBACK if not verified else "Seen.",
                           page_state=PageState(url="http://shop/", url_changed=False, dom_changed=verified))
    act = Action(name=action, target="10") if action == "click" else Action(name=action, answer=DONE)
    r = ActionResult(success=True, action=act.to_string(), message="Clicked button \"Do nothing\" [10].",
                     verification=v if action == "click" else None)
    return StepRecord(index=index, action=act, result=r, verification=v if action == "click" else None,
                      status="completed", proposal=ProposedStep(action=act, plan_index=plan_index))


def _run_as_the_loop_tells_it(view, *, verified: bool = False, note_extra: str = ""):
    """The messages, records and status the loop publishes for 'click Do nothing' (see engine/loop/runner.py):
    step 1 runs, unverified; step 2 is finish(); the closing note; the status with the answer."""
    from engine.models.loop import ChatMessage

    view.add_or_update_message(ChatMessage(role="user", content="click Do nothing"))
    step = ChatMessage(role="assistant", content='Click button "Do nothing" [10].', status="pending",
                       metadata={"step_index": 0})
    view.add_or_update_message(step)
    view.add_or_update_message(step.model_copy(update={
        "status": "success" if verified else "error", "actionString": "click(10)",
        "error": None if verified else f"Unverified: {FEEDBACK}",
        "metadata": {"step_index": 0, "unverified": not verified}}))
    view.add_step_record(_step_record(0, 0, verified))
    fin = ChatMessage(role="assistant", content="Every instruction of the task has been carried out.",
                      status="success", actionString=f'finish("{DONE}")', metadata={"step_index": 1})
    view.add_or_update_message(fin)
    view.add_step_record(_step_record(1, 0, True, action="finish"))
    view.add_or_update_message(ChatMessage(role="system", content=f"Finished: {DONE}{note_extra}", status="success"))
    view.set_task_status("success", DONE)
    return fin


def _settled(qtbot):
    qtbot.wait(30)  # turns added to a shown chat show on the next turn of the event loop


def _visible_texts(view) -> list[str]:
    from PySide6.QtWidgets import QLabel

    return [lab.text() for lab in view.findChildren(QLabel) if lab.isVisibleTo(view) and lab.text()]


@pytest.mark.parametrize("width", [WIDE, NARROW])
def test_a_run_with_an_unverified_step_says_each_thing_once_and_not_plain_success(qtbot, make, width):
    from gui.run.chat_view import ChatView

    view = make(ChatView)
    _shown(qtbot, view, width)
    fin = _run_as_the_loop_tells_it(view)
    _settled(qtbot)
    texts = _visible_texts(view)
    assert sum("Unverified:" in t for t in texts) == 1, texts        # the observation says it; not the error too
    assert sum(DONE in t for t in texts) == 1, texts                 # the header says it; not the note nor the badge
    assert view.detail_label.text() == DONE and view.detail_label.isVisibleTo(view)
    turn = view.turn_for_step(0)
    assert turn.error.text() == f"Unverified: {FEEDBACK}" and not turn.error.isVisibleTo(view)
    assert turn.outcome_badge.isVisibleTo(view) and turn.outcome == "unverified"
    finish = view.turn(fin.messageId)
    assert finish.badge.text() == "finish(…)" and DONE in finish.badge.toolTip()
    # completed, but not a plain success: said beside COMPLETED, in amber, with the step named on hover
    assert view.status == "COMPLETED" and view.unverified_steps() == [0]
    assert view.unverified_label.isVisibleTo(view) and view.unverified_label.text() == "1 unverified"
    assert "step 1" in view.unverified_label.toolTip() and "#fef3c7" in view.header.styleSheet()
    # everything in the header and the turns fits the panel's width
    for lab in (view.status_label, view.unverified_label, turn.header, turn.badge, finish.badge):
        assert lab.mapTo(view, lab.rect().bottomRight()).x() <= view.width(), lab.text()


def test_a_verified_run_is_a_plain_success_and_a_note_keeps_what_it_adds(qtbot, make):
    from gui.run.chat_view import ChatView

    view = make(ChatView)
    _shown(qtbot, view, WIDE)
    _run_as_the_loop_tells_it(view, verified=True, note_extra=" Note: 2 dialogs answered.")
    _settled(qtbot)
    texts = _visible_texts(view)
    assert not view.unverified_label.isVisibleTo(view) and "#dcfce7" in view.header.styleSheet()
    assert sum(DONE in t for t in texts) == 1 and "Note: 2 dialogs answered." in texts, texts
    assert not any("Unverified" in t for t in texts)


def test_a_failed_run_says_its_reason_once(qtbot, make):
    from engine.models.loop import ChatMessage
    from gui.run.chat_view import ChatView

    view = make(ChatView)
    _shown(qtbot, view, WIDE)
    reason = "The Pay button never appeared."
    view.add_or_update_message(ChatMessage(role="assistant", content="Giving up.", status="error", error=reason,
                                           actionString=f'fail("{reason}")', metadata={"step_index": 0}))
    view.add_or_update_message(ChatMessage(role="system", content=f"Failed: {reason}", status="error", error=reason))
    view.set_task_status("error", reason)
    _settled(qtbot)
    texts = _visible_texts(view)
    assert sum(reason in t for t in texts) == 1 and view.status == "FAILED", texts
    assert view.turn_for_step(0).badge.text() == "fail(…)"


def test_the_plan_marks_an_unverified_step_and_says_so_in_its_title(qtbot, make):
    from engine.models.loop import Plan
    from gui.kit.look import warn_mark
    from gui.run.plan_view import PlanView

    plan = Plan.from_descriptions(["Click Do nothing", "Click Save"], current=0)
    plan.steps[0].status = "completed"
    view = make(PlanView)
    _shown(qtbot, view, NARROW, 200)
    view.set_plan(plan)
    assert view.rows()[0].property("state") == "past" and view.rows()[0].text().startswith("✓")
    view.add_step_record(_step_record(0, 0, verified=False))
    row = view.rows()[0]
    assert row.property("state") == "unverified" and row.text().startswith(warn_mark()) and "✓" not in row.text()
    assert view.title.text() == "Plan · 1/2 done · 1 unverified" and FEEDBACK in row.toolTip()
    assert view.unverified_steps() == [0]
    # the plan is published again (the next step starts): the mark stays
    plan.steps[1].status = "active"
    view.set_plan(plan)
    assert view.rows()[0].property("state") == "unverified" and view.rows()[1].property("state") == "current"
    # a finish() record says nothing about the step; a later verified try of the same step clears the mark
    view.add_step_record(_step_record(1, 0, True, action="finish"))
    assert view.rows()[0].property("state") == "unverified"
    view.add_step_record(_step_record(2, 0, verified=True))
    assert view.rows()[0].property("state") == "past" and view.title.text() == "Plan · 1/2 done"
    # a new run starts clean
    view.add_step_record(_step_record(3, 0, verified=False))
    view.set_plan(None)
    view.set_plan(plan)
    assert view.unverified_steps() == [] and view.rows()[0].property("state") == "past"


# -- the real window at 1024 x 640 -----------------------------------------------------------------

def test_the_window_at_1024_a_real_unverified_run_its_chat_and_every_panel_fit(qtbot, aio, server, tmp_path,
                                                                               monkeypatch):
    """One real run in the real window on the 1024 px screen: the click changes nothing (unverified),
    then finish(). The chat says the answer and the unverified once; every Sessions action is whole
    inside the window; the Nodes tab's locator line is elided inside it."""
    from PySide6.QtCore import QSettings

    monkeypatch.setenv("VIGIL_HOME", str(tmp_path / "home"))
    layout = QSettings(str(tmp_path / "window.ini"), QSettings.IniFormat)
    with open_window(qtbot, server.url("uploads_page.html"), screen=screen_named("1024x640"), settings=layout) as w:
        wait_fitted(qtbot, w)
        assert w.width() <= 1024
        w.policy.setCurrentText("auto")
        w.task.setText("click Do nothing")
        qtbot.keyClick(w.task, Qt.Key_Return)
        qtbot.waitUntil(lambda: not w.sup.running() and w.chat.status == "COMPLETED", timeout=45000)
        _settled(qtbot)
        chat = w.chat
        texts = _visible_texts(chat)
        answer = chat.detail_label.text()
        assert answer and sum(answer in t for t in texts) == 1, texts
        assert sum("Unverified:" in t for t in texts) == 1, texts
        assert chat.unverified_steps() == [0] and chat.unverified_label.isVisibleTo(chat)
        assert w.plan.unverified_steps() == [0], "the live plan marks the unverified step (not ✓)"

        w.tabs.setCurrentWidget(w.sessions)
        _settled(qtbot)
        for b in [*w.sessions.action_buttons(), w.sessions.refresh_btn, w.sessions.new_btn]:
            assert _whole_and_inside(b, w.sessions) and _whole_and_inside(b, w), b.text()

        w.tabs.setCurrentWidget(w.nodes)
        button = w.sup.snapshot.find("button", "Do nothing")[0]
        assert w.nodes.select_node(button.node_id)
        _settled(qtbot)
        line = w.nodes.locator_label
        assert w.nodes.locator().startswith("page.") and line.is_elided()
        assert line.mapTo(w, line.rect().bottomRight()).x() <= w.width()
        h = w.nodes.view.header()
        assert h.sectionSize(2) >= NAME_FLOOR and h.length() <= w.nodes.view.viewport().width() + 2
