"""The approval bar's "Effect:" line: what the step will do as the page computed it before input, one line
that elides what does not fit with the whole line in its tooltip, present for every step (the bar does not
change height between a step with an effect and one without), plain text that page words cannot break into
two lines or turn around. On real pages in a real Chromium: the window's bar says what a click on a button
that a label names really submits, and the Fleet view's bar and queue say what a run's select would choose;
the fixture server's log is the truth that nothing was submitted.
"""

from __future__ import annotations

import html

import pytest

from support.gui_helpers import hosted_bar, open_window, run

pytest.importorskip("PySide6.QtWidgets")

from PySide6.QtCore import Qt  # noqa: E402

from engine.models.actions import Action  # noqa: E402
from engine.models.browsing import DialogInfo  # noqa: E402
from engine.models.effect import Receiver, StepEffect, Submission  # noqa: E402
from engine.models.loop import ApprovalRequest, ProposedStep  # noqa: E402
from gui.approval.effect_line import NO_INPUT, UNKNOWN  # noqa: E402

DELETE = StepEffect(kind="submit", receiver=Receiver(role="button", name="Delete workspace"), same_site=True,
                    submission=Submission(method="POST", url="http://127.0.0.1:8000/workspaces/42/delete",
                                          submitter="Delete workspace"))
DELETE_LINE = "Effect: submits 'Delete workspace' — POST /workspaces/42/delete"
TARGET = {"id": "7", "role": "button", "name": "Delete workspace", "bounds": [24, 150, 120, 21]}


def _request(action: Action | None = None, effect: StepEffect | None = None, **kw) -> ApprovalRequest:
    action = action or Action(name="click", target="7")
    p = ProposedStep(thought="Delete it as asked.", action=action)
    data = dict(step_index=0, proposal=p, summary='Click button "Delete workspace" [7]', target=TARGET,
                effect=effect)
    data.update(kw)
    return ApprovalRequest(**data)


@pytest.fixture
def bar(qtbot):
    """The bar in a window of its own, laid out as in Vigil's (full width, its own height)."""
    b = hosted_bar(qtbot, 1024, 320)
    qtbot.waitExposed(b.host)
    return b


def _shown(qtbot, bar, req: ApprovalRequest) -> None:
    bar.show_request(req)
    qtbot.wait(50)  # the layout and the label's elision settle


def test_the_effect_is_one_line_under_the_target(qtbot, bar):
    _shown(qtbot, bar, _request(effect=DELETE))
    e = bar.effect
    assert e.isVisible() and e.full_text() == DELETE_LINE and e.text() == DELETE_LINE and not e.is_elided()
    assert bar.target.y() < e.y() < bar.thought.y(), "target, then effect, then why"
    assert html.escape(DELETE_LINE) in e.toolTip()
    assert e.height() <= e.fontMetrics().height() + 4, "one line"


def test_a_long_effect_is_elided_with_the_whole_line_in_the_tooltip(qtbot, bar):
    form = "Permanently remove workspace 42 and every project, board, file and member in it " * 2
    long = StepEffect(kind="submit", same_site=False,
                      submission=Submission(method="POST", url="https://elsewhere.example/" + "a/" * 60,
                                            submitter="Delete", form=form))
    _shown(qtbot, bar, _request(effect=long))
    e = bar.effect
    assert e.is_elided() and "…" in e.text()
    assert e.text().startswith("Effect: submits") and e.text().endswith("another site"), e.text()
    assert html.escape(e.full_text()) in e.toolTip() and e.full_text() == "Effect: " + long.line()
    assert e.width() <= bar.width() and e.height() <= e.fontMetrics().height() + 4


def test_the_bar_keeps_its_height_with_or_without_an_effect(qtbot, bar):
    heights = {}
    cases = {"effect": _request(effect=DELETE), "unknown": _request(),
             "no input": _request(Action(name="scroll", direction="down", target="7")),
             "long": _request(effect=StepEffect(kind="select", words="x" * 300,
                                                receiver=Receiver(name="Bulk " * 80)))}
    for name, req in cases.items():
        _shown(qtbot, bar, req)
        heights[name] = (bar.height(), bar.sizeHint().height())
    assert len(set(heights.values())) == 1, heights
    _shown(qtbot, bar, cases["unknown"])  # an input step whose page would not say
    assert bar.effect.full_text() == f"Effect: {UNKNOWN}" and bar.effect.tone == "unknown"
    _shown(qtbot, bar, cases["no input"])
    assert bar.effect.isVisible() and bar.effect.full_text() == f"Effect: {NO_INPUT}"


def test_page_words_cannot_break_or_turn_the_line(qtbot, bar):
    effect = StepEffect(kind="select", words="Keep\nmy data\u202e atad lla eteleD", receiver=Receiver(
        name="Bulk\u200b actions\r\n"))
    _shown(qtbot, bar, _request(effect=effect))
    shown = bar.effect.full_text()
    # the bidi override shows as its marker (engine.models.text): the person sees the page put one there
    assert shown == "Effect: selects 'Keep my data⟦U+202E⟧ atad lla eteleD' in 'Bulk actions'", repr(shown)
    assert bar.effect.textFormat() == Qt.TextFormat.PlainText


def test_a_page_dialog_has_no_effect_line(qtbot, bar):
    d = DialogInfo(id=1, kind="confirm", message="Delete all?", url="http://127.0.0.1/x.html")
    req = ApprovalRequest(step_index=0, proposal=ProposedStep(action=Action(name="dialog", accept=True)), dialog=d,
                          summary="The page asks: confirm('Delete all?') — OK or Cancel?")
    _shown(qtbot, bar, req)
    assert not bar.effect.isVisible()
    _shown(qtbot, bar, _request(effect=DELETE))
    assert bar.effect.isVisible() and bar.effect.full_text() == DELETE_LINE


# -- on real pages -------------------------------------------------------------------------------
def _posts(server, mark: int) -> list[str]:
    return [q.path for q in server.log.since(mark) if q.method == "POST"]


def test_the_window_says_what_a_click_really_submits(qtbot, aio, server):  # noqa: F811
    """The button a label names "Show tips" is the "Go" button of the workspace's delete form."""
    with open_window(qtbot, server.url("effects.html")) as window:
        mark = server.log.mark()
        bar = window.approval
        window.policy.setCurrentText("ask")
        qtbot.keyClicks(window.task, "click Go")
        qtbot.keyClick(window.task, Qt.Key_Return)
        qtbot.waitUntil(bar.is_pending, timeout=30_000)
        assert bar.effect.isVisible()
        assert bar.effect.full_text() == "Effect: submits 'Go' (form 'Delete workspace') — POST /workspaces/42/delete"
        assert bar.guarded  # the effect made it sensitive: Enter does not approve it
        qtbot.mouseClick(bar.stop_btn, Qt.LeftButton)
        qtbot.waitUntil(lambda: not window.sup.running(), timeout=20_000)
        assert _posts(server, mark) == []


def test_the_fleet_view_says_what_a_runs_step_will_do(qtbot, aio, server):  # noqa: F811
    from engine.fleet import Fleet, load_fleet
    from gui.fleet.fleet_window import FleetWindow

    script = [{"action": "select", "target": {"name": "Bulk actions"}, "option": "Delete selected"},
              {"action": "finish", "answer": "done"}]
    fleet = Fleet(load_fleet({"runs": [{"name": "bulk", "task": "delete the selected rows",
                                        "url": server.url("effects.html"), "script": script}]}),
                  parallel=1, approve="ask", max_steps=4)
    window = FleetWindow(fleet)
    qtbot.addWidget(window)
    window.show()
    run(qtbot, window.start())
    try:
        qtbot.waitUntil(lambda: len(fleet.queue.waiting) == 1, timeout=60_000)
        entry = fleet.queue.waiting[0]
        window.queue_list.select_entry(entry.id)
        qtbot.waitUntil(lambda: window.approval.request is entry.request, timeout=10_000)
        line = "Effect: selects 'Delete selected' in 'Bulk actions'"
        assert window.approval.effect.isVisible() and window.approval.effect.full_text() == line
        assert html.escape(line) in window.queue_list.item(0).toolTip()
        window.stop_run()
        qtbot.waitUntil(lambda: fleet.run_named("bulk").state == "stopped", timeout=20_000)
    finally:
        run(qtbot, window.shutdown(), timeout=60)
