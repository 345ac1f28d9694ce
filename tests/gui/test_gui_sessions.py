"""Sessions in the window, end to end on real parts: a real Chromium on fixture pages served over
HTTP, the real session store in a per-test VIGIL_HOME, the offline planner, pytest-qt's qtbot driving
the window with the engine on qasync (Qt offscreen).

Set VIGIL_GUI_SHOTS=DIR to also save pictures of the Sessions tab and the read-only view there."""

from __future__ import annotations

import importlib.util
import os
import zipfile
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

pytest.importorskip("PySide6.QtWidgets")

from PySide6.QtCore import Qt  # noqa: E402

from support.gui_helpers import open_window, run

TASK = "type Ada into Full name and click Place order"
SHOTS = os.environ.get("VIGIL_GUI_SHOTS")


@pytest.fixture
def home(tmp_path, monkeypatch):
    """This test's own store: set before the window opens it."""
    h = tmp_path / "vigil_home"
    monkeypatch.setenv("VIGIL_HOME", str(h))
    return h


def finish_run(qtbot, window, *, approve: bool = False, timeout: float = 30.0) -> int:
    """Wait for the run the window just started to end, approving each step when asked; returns how
    many steps were approved."""
    qtbot.waitUntil(window.sup.running, timeout=10000)
    approved = 0

    def ended() -> bool:
        nonlocal approved
        if approve and window.approval.is_pending():
            qtbot.mouseClick(window.approval.approve_btn, Qt.LeftButton)
            approved += 1
        return not window.sup.running()

    qtbot.waitUntil(ended, timeout=int(timeout * 1000))
    qtbot.wait(100)  # the panel refresh and the last snapshot
    return approved


def do_task(qtbot, window, task: str = TASK, policy: str = "auto") -> None:
    window.policy.setCurrentText(policy)
    window.task.setText(task)
    qtbot.mouseClick(window.run_btn, Qt.LeftButton)
    finish_run(qtbot, window, approve=policy != "auto")


def shot(widget, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        widget.grab().save(str(Path(SHOTS) / name))


# -- recording, the panel and the read-only view --------------------------------------------------

def test_run_is_listed_and_opens_read_only(qtbot, aio, server, home):
    from PySide6.QtWidgets import QLineEdit, QPushButton

    from gui.approval.approval_bar import ApprovalBar
    from gui.sessions.sessions_panel import STATUS_COL, STEPS_COL, TITLE_COL

    with open_window(qtbot, server.url("offline_shop.html")) as w:
        do_task(qtbot, w)
        assert run(qtbot, w.sup.tab.page.text_content("#status")) == "Order placed"
        assert w.chat.status == "COMPLETED" and w.status_loop.text() == "idle"
        sid = w.sup.current_session()
        p = w.sessions
        assert sid and p.session_ids() == [sid] and p.current == sid
        r = p.row_of(sid)
        assert p.table.item(r, STATUS_COL).text() == "done" and p.table.item(r, STEPS_COL).text() == "3"
        assert TASK in p.table.item(r, TITLE_COL).text()
        assert p.table.item(r, 0).text() == "●"  # this tab's session
        # the live chat still gets each step's after-picture (now drawn from the step's own screenshot)
        qtbot.waitUntil(lambda: len(w.chat.findChildren(QPushButton, "stepPicture")) >= 2, timeout=10000)

        w.tabs.setCurrentWidget(p)
        assert p.select_session(sid)
        qtbot.mouseClick(p.open_btn, Qt.LeftButton)
        view = w.sessions.views[-1]
        data = w.sup.sessions.load(sid)
        assert view.title_label.text() == data.session.title and view.status_label.text() == "DONE"
        assert view.fields["task"].text() == TASK and view.fields["url"].text().endswith("offline_shop.html")
        assert "heuristic" in view.fields["run"].text() and "auto" in view.fields["run"].text()
        assert [r.text().split(". ", 1)[1] for r in view.plan.rows()] == [s.description for s in data.plan.steps]
        assert view.chat.message_count() == len(data.messages) >= 4 and view.chat.status == "COMPLETED"
        assert [t.message.content for t in view.chat.turns()] == [m.content for m in data.messages]
        assert view.chat.turn_for_step(0).observation is not None
        assert view.steps.topLevelItemCount() == 3
        assert view.steps.topLevelItem(0).text(2) == data.steps[0].action.to_string()
        assert view.selected_step() == 0
        assert not view.before.pixmap_full().isNull() and not view.after.pixmap_full().isNull()
        assert view.after.pixmap_full().width() > 600 and view.before_caption.text().startswith("Before step 1 ·")
        view.steps.setCurrentItem(view.steps.topLevelItem(1))
        assert view.selected_step() == 1 and view.after_caption.text().startswith("After step 2 ·")
        # the stored snapshots in the node tree: the element acted on selected before, new IDs marked after
        step = data.steps[1]
        view.detail.setCurrentIndex(1)
        before = view.snapshot(1, "before")
        assert before is not None and view.nodes_before.model.rowCount() == 1
        assert view.nodes_before.selected_node_id() == step.target["id"] == step.result.node_id
        assert before.get(step.target["id"]).name == "Place order"
        shot(view, "session_view_nodes.png")
        view.detail.setCurrentIndex(2)
        after = view.snapshot(1, "after")
        assert after is not None and view.nodes_after.model.new_ids == after.new_ids_since(before)
        assert view.detail.tabText(2).startswith(f"Nodes after ({len(after)}, ")
        view.steps.setCurrentItem(view.steps.topLevelItem(0))  # another step: the open tab follows it
        assert view.nodes_after._snap is view.snapshot(0, "after")
        view.detail.setCurrentIndex(3)  # what the planner was given before step 1
        assert '"Full name"' in view.payload.semantic_view.toPlainText() and view.payload.tokens["semantic"] > 0
        # nothing in it acts on a page: no approval bar, no task box, no buttons outside the node and payload views
        outside = [x for x in view.findChildren(QLineEdit) + view.findChildren(QPushButton)
                   if not any(w.isAncestorOf(x) for w in (view.nodes_before, view.nodes_after, view.payload))]
        assert not view.findChildren(ApprovalBar) and not outside
        view.detail.setCurrentIndex(0)
        qtbot.wait(200)
        shot(w, "sessions.png")
        shot(view, "session_view.png")


def test_a_success_with_unverified_steps_does_not_read_as_a_plain_success(qtbot, aio, server, home):
    # a stored run the planner called done, one of whose steps ran but was not seen to work
    from engine.models import Action, ActionResult, StepRecord
    from engine.models.actions import PageState, VerificationResult
    from engine.store import Store
    from gui.kit.look import AMBER
    from gui.sessions.sessions_panel import STATUS_COL

    unseen = VerificationResult(success=False, verified_outcome=None, actual_outcome="nothing changed",
                                page_state=PageState(url="http://a.test/", url_changed=False, dom_changed=False),
                                confidence=0.9, feedback="The click changed nothing on the page.")
    click = Action(name="click", target="7")
    with Store.open() as store:
        sid = store.create_session("press the button", "http://a.test/", "heuristic", "auto")
        store.add_step(sid, StepRecord(index=0, action=click, result=ActionResult(success=True, action="click(7)"),
                                       verification=unseen))
        store.finish(sid, "success", answer="pressed")
    with open_window(qtbot, server.url("offline_shop.html")) as w:
        p = w.sessions
        p.refresh()
        status = p.table.item(p.row_of(sid), STATUS_COL)
        assert status.text() == "done, 1 unverified" and status.foreground().color().name() == AMBER
        assert "not seen to do what they should" in status.toolTip()
        p.filter.setText("unverified")  # the filter finds it by what it shows
        assert not p.table.isRowHidden(p.row_of(sid))
        p.filter.setText("")
        view = p.open_session(sid)
        assert view is not None and view.status_label.text() == "DONE, 1 UNVERIFIED"
        assert AMBER in view.status_label.styleSheet()
        row = view.steps.topLevelItem(0)  # the step itself, in the word `vigil run` prints for it
        assert row.text(1) == "unverified" and row.foreground(1).color().name() == AMBER


def test_one_session_per_tab_until_new_session(qtbot, aio, server, home):
    from PySide6.QtWidgets import QMessageBox

    from gui.sessions.sessions_panel import TITLE_COL

    with open_window(qtbot, server.url("offline_shop.html")) as w:
        do_task(qtbot, w)
        first = w.sup.current_session()
        # navigating keeps the session: it follows the page (a link the person follows, the URL bar, back)
        run(qtbot, w.sup.tab.page.evaluate("location.href = 'actions_next.html'"))
        qtbot.waitUntil(lambda: w.sup.sessions.load(first).session.url.endswith("actions_next.html"), timeout=10000)
        assert w.url.text().endswith("actions_next.html")
        assert run(qtbot, w.sup.navigate(server.url("loop_done.html")))
        assert w.sup.sessions.load(first).session.url.endswith("loop_done.html")
        assert run(qtbot, w.sup.history(-1))
        assert w.sup.sessions.load(first).session.url.endswith("actions_next.html")
        assert run(qtbot, w.sup.navigate(server.url("offline_shop.html")))
        do_task(qtbot, w, "type Bob into Full name and click Place order")
        assert w.sup.current_session() == first
        assert [(s.id, s.steps, s.status) for s in w.sup.sessions.list()] == [(first, 6, "success")]
        assert w.sessions.session_ids() == [first]
        view = w.sessions.open_session(first)  # the second run's turns carry its steps' observations
        assert view.steps.topLevelItemCount() == 6
        for index, name in ((0, "Ada"), (3, "Bob")):
            turn = view.chat.turn_for_step(index)
            assert name in turn.message.actionString and turn.observation is not None
        view.close()

        w.act_new_session.trigger()
        assert w.sup.current_session() is None and w.sessions.current is None
        do_task(qtbot, w)
        second = w.sup.current_session()
        assert second and second != first
        assert [(s.id, s.steps) for s in w.sup.sessions.list()] == [(second, 3), (first, 6)]
        assert w.sessions.session_ids() == [second, first] and w.sessions.current == second

        # rename in place (the title cell), then filter by the new name
        p = w.sessions
        p.table.item(p.row_of(first), TITLE_COL).setText("Bob's  order")
        assert w.sup.sessions.load(first).session.title == "Bob's order"
        p.filter.setText("bob's")
        assert p.session_ids(visible_only=True) == [first]
        p.filter.clear()
        assert p.session_ids(visible_only=True) == [second, first]

        # delete: asked first (non-modal); Cancel keeps it, Yes removes it; deleting the tab's own
        # session lets it go, so the next task starts a new one
        p.select_session(first)
        qtbot.mouseClick(p.delete_btn, Qt.LeftButton)
        box = w.sessions.delete_box
        assert box.isVisible() and "Bob's order" in box.informativeText()
        qtbot.mouseClick(box.button(QMessageBox.Cancel), Qt.LeftButton)
        assert [s.id for s in w.sup.sessions.list()] == [second, first]
        p.select_session(second)
        qtbot.mouseClick(p.delete_btn, Qt.LeftButton)
        qtbot.mouseClick(w.sessions.delete_box.button(QMessageBox.Yes), Qt.LeftButton)
        assert [s.id for s in w.sup.sessions.list()] == [first] and p.session_ids() == [first]
        assert w.sup.current_session() is None and w.sessions.current is None


def test_export_from_the_panel(qtbot, aio, server, home, tmp_path):
    if importlib.util.find_spec("engine.store.report") is None:
        pytest.skip("engine/store/report.py (write_export) is not there yet")
    out = tmp_path / "out" / "report.html"
    out.parent.mkdir()

    with open_window(qtbot, server.url("offline_shop.html")) as w:
        do_task(qtbot, w)
        sid = w.sup.current_session()
        assert w.sessions.select_session(sid)
        qtbot.mouseClick(w.sessions.export_btn, Qt.LeftButton)
        dlg = w.sessions.export_dialog
        assert dlg is not None and dlg.isVisible()
        dlg.selectFile(str(out))
        dlg.accept()
        qtbot.waitUntil(lambda: out.with_suffix(".json").exists() and "Exported" in w.statusBar().currentMessage(),
                        timeout=15000)
        assert str(out) in w.statusBar().currentMessage()
        html = out.read_text(encoding="utf-8")
        assert TASK in html and "<html" in html.lower()
        assert sid in out.with_suffix(".json").read_text(encoding="utf-8")
        # the Playwright trace beside the report, which links it
        assert zipfile.ZipFile(out.with_suffix(".trace.zip")).read("trace.trace").count(b'"tracingGroup"') >= 1
        assert '<a href="report.trace.zip">' in html and "playwright show-trace report.trace.zip" in html
        # Export trace…: the trace alone, where the person says
        qtbot.mouseClick(w.sessions.export_trace_btn, Qt.LeftButton)
        dlg = w.sessions.export_dialog
        assert dlg is not None and dlg.isVisible() and dlg.windowTitle() == "Export trace"
        zipped = tmp_path / "out" / "run.zip"
        dlg.selectFile(str(zipped))
        dlg.accept()
        qtbot.waitUntil(lambda: zipped.exists() and "Playwright trace" in w.statusBar().currentMessage(),
                        timeout=15000)
        events = zipfile.ZipFile(zipped).read("trace.trace").decode("utf-8")
        assert '"title": "Step 1: ' in events and "screencast-frame" in events
        # a path that cannot be written: the reason in the banner
        assert run(qtbot, w.sessions.export_to(sid, str(tmp_path / "missing-dir" / "x.html"))) == []
        assert w.banner.isVisible() and "Export failed" in w.banner.text()
        assert run(qtbot, w.sessions.export_trace_to(sid, str(tmp_path / "missing-dir" / "x.zip"))) is None
        assert "Export trace failed" in w.banner.text()


def test_corrupt_store_is_reported_left_alone_and_runs_still_work(qtbot, aio, server, home):
    home.mkdir(parents=True)
    db = home / "sessions.db"
    garbage = bytes(range(256)) * 16 + b"not a database"
    db.write_bytes(garbage)

    with open_window(qtbot, server.url("offline_shop.html")) as w:
        assert w.banner.isVisible() and "not a readable Vigil database" in w.banner.text()
        assert w.sup.sessions is None and w.sup.store_error
        assert not w.sessions.new_btn.isEnabled() and not w.act_new_session.isEnabled()
        assert "not a readable Vigil database" in w.sessions.details.text()
        do_task(qtbot, w)
        assert w.chat.status == "COMPLETED" and w.status_loop.text() == "idle"
        assert run(qtbot, w.sup.tab.page.text_content("#status")) == "Order placed"
        assert w.banner.isVisible() and "not being recorded" in w.banner.text()  # still true, still said
        w.tabs.setCurrentWidget(w.sessions)
        qtbot.wait(100)
        shot(w, "sessions_corrupt.png")

    assert db.read_bytes() == garbage
    # nothing beside it: no new store, no -wal/-shm (the test window keeps its layout in a file of its own)
    assert sorted(p.name for p in home.iterdir()) == ["sessions.db"]


def test_replay_from_the_panel(qtbot, aio, server, home):
    if importlib.util.find_spec("engine.store.replay") is None:
        pytest.skip("engine/store/replay.py (replay_planner) is not there yet")

    with open_window(qtbot, server.url("offline_shop.html")) as w:
        do_task(qtbot, w)
        recorded = w.sup.current_session()
        assert run(qtbot, w.sup.navigate(server.url("actions_next.html")))  # somewhere else entirely
        w.policy.setCurrentText("ask")  # replay asks through the same approval bar
        assert w.sessions.select_session(recorded)
        qtbot.mouseClick(w.sessions.replay_btn, Qt.LeftButton)
        approved = finish_run(qtbot, w, approve=True)
        assert approved >= 2
        page = w.sup.tab.page
        assert page.url.endswith("offline_shop.html")
        assert run(qtbot, page.text_content("#status")) == "Order placed"
        assert run(qtbot, page.input_value("#name")) == "Ada"
        assert w.chat.status == "COMPLETED" and w.status_loop.text() == "idle"
        replayed = w.sup.current_session()
        assert replayed != recorded and w.sessions.session_ids() == [replayed, recorded]
        s = w.sup.sessions.load(replayed).session
        assert s.metadata.get("replayOf") == recorded and s.task.startswith("Replay:") and s.planner == "replay"
        assert s.policy == "ask" and s.status == "success"
        assert w.sup.sessions.load(recorded).session.url.endswith("actions_next.html")  # left where the tab went

        # a session with nothing to replay says so in the banner, and nothing runs
        w.act_new_session.trigger()
        assert run(qtbot, w.sup.navigate(server.url("actions_next.html")))  # a short page: it fails without scrolling
        do_task(qtbot, w, "click the Launch rocket button")
        failed = w.sup.current_session()
        assert w.sup.sessions.load(failed).session.status == "error"
        assert w.sessions.select_session(failed)
        qtbot.mouseClick(w.sessions.replay_btn, Qt.LeftButton)
        qtbot.waitUntil(lambda: w.banner.isVisible() and "no step that can be replayed" in w.banner.text(),
                        timeout=10000)  # the NOTHING_TO_REPLAY message
        assert not w.sup.running() and w.sup.current_session() == failed
        w.tabs.setCurrentWidget(w.sessions)
        qtbot.wait(100)
        shot(w, "sessions_replayed.png")



def _long_stored_session() -> str:
    """A stored run long enough to scroll: the task, ten verified steps, a failure quoting a long URL."""
    from engine.models import Action, ActionResult, ChatMessage, StepRecord
    from engine.models.actions import PageState, VerificationResult
    from engine.store import Store

    url = "http://shop.test/a/rather/long/path/that/does/not/break/index.html"
    seen = VerificationResult(success=True, verified_outcome=None, actual_outcome="typed",
                              page_state=PageState(url=url, url_changed=False, dom_changed=True),
                              confidence=0.9, feedback="The value is now what was typed.")
    task = "type Ada Lovelace into Full name, check Gift wrap, choose a country and click Place order"
    with Store.open() as store:
        sid = store.create_session(task, url, "heuristic", "auto")
        store.add_message(sid, ChatMessage(role="user", content=task, sequenceNumber=0))
        for i in range(10):
            action = Action(name="type", target=str(40 + i), text=f"word {i}")
            store.add_message(sid, ChatMessage(role="assistant", content=f"Type word {i} into field {i}.",
                                               actionString=action.to_string(), status="success",
                                               sequenceNumber=i + 1, metadata={"step_index": i}))
            store.add_step(sid, StepRecord(index=i, action=action, verification=seen,
                                           result=ActionResult(success=True, action=action.to_string())))
        store.add_message(sid, ChatMessage(role="assistant", content=f"Could not find Place order on {url}.",
                                           actionString=f'fail("Could not find Place order on {url}.")',
                                           status="error", sequenceNumber=11, metadata={"step_index": 10}))
        store.finish(sid, "error", reason=f"Could not find Place order on {url}.")
    return sid


def test_a_stored_session_opens_at_its_start_and_a_double_click_opens_it(qtbot, home):
    # no browser: the panel and the read-only view only read the store
    from PySide6.QtWidgets import QAbstractItemView

    from gui.sessions.sessions_panel import DOMAIN_COL, TITLE_COL, SessionsPanel
    from gui.supervisor.controller import Supervisor

    sid = _long_stored_session()
    sup = Supervisor()
    assert sup.open_store()
    panel = SessionsPanel()
    qtbot.addWidget(panel)
    panel.resize(520, 400)
    panel.show()
    panel.attach(sup)
    try:
        for col in (TITLE_COL, DOMAIN_COL):  # a double-click on any cell of the row opens it (F2 renames)
            rect = panel.table.visualRect(panel.table.model().index(panel.row_of(sid), col))
            qtbot.mouseClick(panel.table.viewport(), Qt.LeftButton, pos=rect.center())
            qtbot.mouseDClick(panel.table.viewport(), Qt.LeftButton, pos=rect.center())
            assert panel.table.state() != QAbstractItemView.State.EditingState
            qtbot.waitUntil(lambda n=col: len(panel.views) == (1 if n == TITLE_COL else 2), timeout=3000)
        view = panel.views[-1]
        qtbot.waitExposed(view)
        qtbot.wait(100)  # the first layouts and the scrolls they ask for
        chat = view.chat.scroll_area
        down, side = chat.verticalScrollBar(), chat.horizontalScrollBar()
        assert down.maximum() > 0 and down.value() == 0  # opens at the task, not scrolled to (or past) the end
        assert view.chat.turns()[0].visibleRegion().boundingRect().height() > 0

        def turns_fit() -> None:  # nothing wider than the chat: no sideways scroll, no word cut at the edge
            assert side.maximum() == 0 and side.value() == 0
            width = chat.viewport().width()
            for t in view.chat.turns():
                assert t.isHidden() or t.geometry().right() < width, (t.objectName(), t.geometry(), width)

        turns_fit()
        view.steps.setFocus()
        for _ in range(8):  # step by step down the list with the keyboard: the chat follows, up and down only
            qtbot.keyClick(view.steps, Qt.Key_Down)
        assert view.selected_step() == 8
        turn = view.chat.turn_for_step(8)
        assert down.value() > 0 and turn.visibleRegion().boundingRect().height() > 0
        turns_fit()
        qtbot.keyClick(view.steps, Qt.Key_Home)
        assert view.chat.turn_for_step(0).visibleRegion().boundingRect().height() > 0
        turns_fit()
    finally:
        panel.close_windows()
        sup.recording.store.close()
