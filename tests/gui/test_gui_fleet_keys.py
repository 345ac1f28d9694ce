"""The Fleet view takes one decision per keypress, for the question the bar showed.

Two runs wait under ask. Enter in Reject's reason field (or in Edit's field) answers run "one" only: run
"two"'s question, shown next in the same bar, stays waiting and its click never reaches the server. A held
Enter (auto-repeat) approves nothing more. A take-over typed in plain words is grounded on the run's page and
answers that run's question. Real Chromium, a real local server recording what each run's page sent, real
key events sent to the widget that has the focus."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication

from support.gui_helpers import run
from support.recording_server import RecordingServer, Reply

PAGE = b"""<!doctype html><html><body>
<h1>Order</h1><label>Name <input id=n></label>
<button onclick="fetch('/saved?who=' + location.search.slice(1), {method: 'POST'});
                 out.textContent = 'saved'">Save</button>
<button onclick="fetch('/other?who=' + location.search.slice(1), {method: 'POST'});
                 out.textContent = 'other'">Other</button>
<p id=out></p></body></html>"""


@pytest.fixture
def site():
    with RecordingServer({"GET /*": Reply(PAGE, length=False),
                          "POST /*": Reply(status=204, content_type=None, length=False)}) as s:
        yield s.url(), s.view(lambda r: r.target, where=lambda r: r.method == "POST")


def _fleet(url: str, names: list[str]):
    from engine.fleet import Fleet, load_fleet

    script = [{"action": "click", "target": {"role": "button", "name": "Save"}, "expect": "any_change"},
              {"action": "finish", "answer": "saved"}]
    spec = load_fleet({"runs": [{"name": n, "task": f"save {n}", "url": f"{url}?{n}", "script": script}
                                for n in names]})
    return Fleet(spec, parallel=len(names), approve="ask", max_steps=4)


def _focused_enter(qtbot, auto_repeat: bool = False) -> None:
    """Enter sent where a person's Enter goes: to the widget that has the focus."""
    w = QApplication.focusWidget()
    assert w is not None
    if auto_repeat:
        QApplication.sendEvent(w, QKeyEvent(QEvent.Type.KeyPress, Qt.Key.Key_Return, Qt.KeyboardModifier.NoModifier,
                                            "\r", True))
    else:
        qtbot.keyClick(w, Qt.Key.Key_Return)


def test_one_enter_answers_only_the_question_its_bar_showed(qtbot, aio, site):  # noqa: F811
    from gui.fleet.fleet_window import FleetWindow

    url, posts = site
    fleet = _fleet(url, ["one", "two"])
    window = FleetWindow(fleet)
    qtbot.addWidget(window)
    window.show()
    window.activateWindow()
    run(qtbot, window.start())
    bar = window.approval
    try:
        qtbot.waitUntil(lambda: len(fleet.queue.waiting) == 2, timeout=60_000)
        first, second = fleet.queue.waiting
        qtbot.waitUntil(lambda: bar.request is first.request, timeout=10_000)

        # Reject with a reason, the reason field's Enter: run one's step only
        qtbot.mouseClick(bar.reject_btn, Qt.MouseButton.LeftButton)
        assert QApplication.focusWidget() is bar.reject_reason
        qtbot.keyClicks(bar.reject_reason, "not this one")
        _focused_enter(qtbot)
        assert first.decision is not None and first.decision.kind == "reject"
        assert second.waiting and second.decision is None   # the same Enter decided nothing else
        qtbot.waitUntil(lambda: bar.request is second.request, timeout=10_000)
        qtbot.wait(300)
        assert second.waiting and not any("who=" + second.run in p for p in posts)

        # Edit's field, Enter: the shown question (run two's) only; run one's next question stays waiting
        qtbot.mouseClick(bar.edit_btn, Qt.MouseButton.LeftButton)
        assert QApplication.focusWidget() is bar.edit_action
        other = next(n.node_id for n in fleet.run_named(second.run).tab.latest_snapshot.nodes() if n.name == "Other")
        bar.edit_action.selectAll()
        qtbot.keyClicks(bar.edit_action, f"click({other})")
        _focused_enter(qtbot)
        assert second.decision is not None and second.decision.kind == "edit"
        qtbot.waitUntil(lambda: any("other?who=" + second.run in p for p in posts), timeout=30_000)
        assert not any("saved?who=" + second.run in p for p in posts)

        # both ask again (run one's planner read the reason; run two's script finishes): Enter approves the
        # one shown, and the same key held down approves nothing more, though the other's question takes its place
        qtbot.waitUntil(lambda: {e.run for e in fleet.queue.waiting} == {"one", "two"}, timeout=30_000)
        shown = next(e for e in fleet.queue.waiting if e.request is bar.request)
        other = next(e for e in fleet.queue.waiting if e is not shown)
        assert QApplication.focusWidget() is bar.approve_btn
        _focused_enter(qtbot)
        assert shown.decision is not None and shown.decision.kind == "approve"
        assert bar.request is other.request and QApplication.focusWidget() is bar.approve_btn
        _focused_enter(qtbot, auto_repeat=True)
        assert other.waiting, "a held Enter approved another run's step"
    finally:
        run(qtbot, window.shutdown(), timeout=60)


def test_a_take_over_typed_in_plain_words_answers_its_run(qtbot, aio, site):  # noqa: F811
    from gui.fleet.fleet_window import FleetWindow

    url, posts = site
    fleet = _fleet(url, ["solo"])
    window = FleetWindow(fleet)
    qtbot.addWidget(window)
    window.show()
    run(qtbot, window.start())
    bar = window.approval
    try:
        qtbot.waitUntil(lambda: len(fleet.queue.waiting) == 1, timeout=60_000)
        entry = fleet.queue.waiting[0]
        qtbot.waitUntil(lambda: bar.request is entry.request and window.page.tab is not None, timeout=30_000)
        qtbot.mouseClick(bar.take_over_btn, Qt.MouseButton.LeftButton)
        qtbot.keyClicks(bar.take_command, "click Other")
        _focused_enter(qtbot)
        qtbot.waitUntil(lambda: entry.decision is not None, timeout=20_000)
        assert entry.decision.kind == "take_over" and entry.decision.action is not None
        qtbot.waitUntil(lambda: any("other?who=solo" in p for p in posts), timeout=30_000)
        assert not any("saved?who=solo" in p for p in posts)
    finally:
        run(qtbot, window.shutdown(), timeout=60)
