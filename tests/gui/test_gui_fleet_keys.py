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


def _page(request) -> Reply:
    """Run "two"'s page has its buttons the other way round: an ID of one run's page is another element on the
    other's (a command grounded on the wrong run's page would click the wrong button)."""
    if request.query == "two":
        save, other = PAGE.index(b"<button"), PAGE.index(b"<button", PAGE.index(b"<button") + 1)
        end = PAGE.index(b"<p id=out>")
        return Reply(PAGE[:save] + PAGE[other:end] + PAGE[save:other] + PAGE[end:], length=False)
    return Reply(PAGE, length=False)


@pytest.fixture
def site():
    with RecordingServer({"GET /*": _page,
                          "POST /*": Reply(status=204, content_type=None, length=False)}) as s:
        yield s.url(), s.view(lambda r: r.target, where=lambda r: r.method == "POST")


def _fleet(url: str, names: list[str], store=None):
    from engine.fleet import Fleet, load_fleet

    script = [{"action": "click", "target": {"role": "button", "name": "Save"}, "expect": "any_change"},
              {"action": "finish", "answer": "saved"}]
    spec = load_fleet({"runs": [{"name": n, "task": f"save {n}", "url": f"{url}?{n}", "script": script}
                                for n in names]})
    return Fleet(spec, parallel=len(names), approve="ask", max_steps=4, store=store)


def _focused_enter(qtbot, auto_repeat: bool = False) -> None:
    """Enter sent where a person's Enter goes: to the widget that has the focus."""
    w = QApplication.focusWidget()
    assert w is not None
    if auto_repeat:
        QApplication.sendEvent(w, QKeyEvent(QEvent.Type.KeyPress, Qt.Key.Key_Return, Qt.KeyboardModifier.NoModifier,
                                            "\r", True))
    else:
        qtbot.keyClick(w, Qt.Key.Key_Return)


def _window(qtbot, fleet):
    """The Fleet view of `fleet`, shown (not started)."""
    from gui.fleet.fleet_window import FleetWindow

    window = FleetWindow(fleet)
    qtbot.addWidget(window)
    window.show()
    window.activateWindow()
    return window


def test_one_enter_answers_only_the_question_its_bar_showed(qtbot, aio, site):  # noqa: F811
    url, posts = site
    fleet = _fleet(url, ["one", "two"])
    window = _window(qtbot, fleet)
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
    url, posts = site
    fleet = _fleet(url, ["one", "two"])
    window = _window(qtbot, fleet)
    run(qtbot, window.start())
    bar = window.approval
    try:
        qtbot.waitUntil(lambda: len(fleet.queue.waiting) == 2, timeout=60_000)
        first, entry = fleet.queue.waiting
        qtbot.waitUntil(lambda: bar.request is first.request and window.page.tab is not None, timeout=30_000)
        # the other run's question picked in the list, and the command typed at once, while the page on show
        # is still the first run's: grounded on its own run's page all the same
        item = window.queue_list.item(window.queue_list.entry_ids().index(entry.id))
        qtbot.mouseClick(window.queue_list.viewport(), Qt.MouseButton.LeftButton,
                         pos=window.queue_list.visualItemRect(item).center())
        assert bar.request is entry.request
        qtbot.mouseClick(bar.take_over_btn, Qt.MouseButton.LeftButton)
        qtbot.keyClicks(bar.take_command, "click Other")
        _focused_enter(qtbot)
        qtbot.waitUntil(lambda: entry.decision is not None, timeout=20_000)
        assert entry.decision.kind == "take_over" and entry.decision.action is not None
        qtbot.waitUntil(lambda: any("other?who=" + entry.run in p for p in posts), timeout=30_000)
        assert not any("saved?who=" + entry.run in p for p in posts) and first.waiting

        # a command that cannot be grounded, because the run's page went away meanwhile: said in the bar, at
        # once, never "Grounding the command…" for ever
        qtbot.waitUntil(lambda: bar.request is first.request, timeout=30_000)
        qtbot.mouseClick(bar.take_over_btn, Qt.MouseButton.LeftButton)
        qtbot.keyClicks(bar.take_command, "click Save")
        run(qtbot, fleet.run_named(first.run).tab.page.close())
        _focused_enter(qtbot)
        qtbot.waitUntil(lambda: "Grounding" not in bar.take_error.text(), timeout=20_000)
        assert bar.take_error.isVisible() and bar.take_error.text().startswith("Could not ground 'click Save': ")
        assert first.decision is None
    finally:
        run(qtbot, window.shutdown(), timeout=60)


SMALL = (1008, 592)  # a 1024x640 screen less openbox's frame (title bar and borders)


def _where(buttons) -> list[tuple[int, int, int]]:
    """Each button's left edge, width and top, in the window."""
    return [(b.mapTo(b.window(), b.rect().topLeft()).x(), b.width(), b.mapTo(b.window(), b.rect().topLeft()).y())
            for b in buttons]


def test_grants_stand_apart_ask_first_answer_the_waiting_and_the_page_keeps_its_size(qtbot, aio, site, tmp_path):
    from engine.store import Store
    from gui.fleet.fleet_window import FleetWindow

    url, posts = site
    store = Store.open(tmp_path / "sessions.db")
    fleet = _fleet(url, ["one", "two"], store=store)
    window = FleetWindow(fleet)
    qtbot.addWidget(window)
    window.resize(*SMALL)
    window.show()
    qtbot.waitExposed(window)
    page_size = window.page.size()
    run(qtbot, window.start())
    bar, box = window.approval, window.grants_box
    try:
        qtbot.waitUntil(lambda: len(fleet.queue.waiting) == 2 and bar.request is fleet.queue.waiting[0].request,
                        timeout=60_000)
        first, second = fleet.queue.waiting
        qtbot.wait(50)
        # the bar floats over the page: the page keeps its size; the window keeps to a small screen, its
        # buttons in it
        assert window.page.size() == page_size, (window.page.size(), page_size)
        assert (window.width(), window.height()) == SMALL and window.minimumSizeHint().width() <= SMALL[0]
        for b in (*bar.buttons(), window.stop_run_btn, window.stop_all_btn):
            assert window.rect().contains(b.mapTo(window, b.rect().bottomRight())), b.text()
        for panel_btn in (bar.take_over_btn, bar.edit_btn):  # the bar's wider rows open: the window stays as it is
            qtbot.mouseClick(panel_btn, Qt.MouseButton.LeftButton)
            qtbot.wait(20)
            assert (window.width(), window.height()) == SMALL and window.minimumSizeHint().width() <= SMALL[0]
            assert window.page.size() == page_size
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Escape)
        assert not bar.panel_open() and first.waiting
        qtbot.wait(50)  # the floating bar takes its closed height

        # the grant is offered apart from the bar (its row holds the step's answers only), and asks first
        where = _where(bar.buttons())
        assert not bar.grant_btn.isVisible() and box.offer_btn.isVisible()
        assert f"clicks on {url.rstrip('/')}" in box.offer_line.text(), box.offer_line.text()
        qtbot.mouseClick(box.offer_btn, Qt.MouseButton.LeftButton)
        assert box.asking() and "It also approves the 1 step waiting like it." in box.confirm_line.text()
        assert fleet.grants.active() == [] and first.waiting and second.waiting
        qtbot.mouseClick(box.no_btn, Qt.MouseButton.LeftButton)
        assert not box.asking() and fleet.grants.active() == [] and first.waiting and second.waiting
        qtbot.mouseClick(box.offer_btn, Qt.MouseButton.LeftButton)
        qtbot.mouseClick(box.yes_btn, Qt.MouseButton.LeftButton)
        # granted: the step shown and the one waiting like it in the other run are approved, the grant listed
        assert first.decision.kind == "approve" and second.decision.kind == "approve"
        [grant] = fleet.grants.active()
        assert box.grant_ids() == [grant.id] and "Grants for every run: 1" in box.in_force.text()
        assert f"as they waited: [{second.run}] step 1" in box.said.text(), box.said.text()
        qtbot.waitUntil(lambda: sum("saved?who=" in p for p in posts) == 2, timeout=30_000)

        # both runs ask their last step: the bar's buttons are where they were, nothing offered for it
        qtbot.waitUntil(lambda: len(fleet.queue.waiting) == 2 and bar.request is not None, timeout=30_000)
        qtbot.wait(50)
        assert _where(bar.buttons()) == where and window.page.size() == page_size
        assert not box.offer_btn.isVisible()
        qtbot.mouseClick(box.revoke_btn, Qt.MouseButton.LeftButton)
        assert fleet.grants.active() == [] and box.grant_ids() == [] and "Revoked #" in box.said.text()
    finally:
        run(qtbot, window.shutdown(), timeout=60)
        store.close()
