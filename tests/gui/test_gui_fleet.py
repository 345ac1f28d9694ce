"""The Fleet view: one approval queue for several runs, answered through the window in an order different
from the order asked; each run's page shown when its question is; "Stop this run" stops only that run.
Real Chromium (the fleet's own, a browser context per run), a real local HTTP server that records what
each run's page sent."""

from __future__ import annotations

import statistics

import pytest
from PySide6.QtCore import Qt

from support.gui_helpers import open_window, run
from support.recording_server import RecordingServer, Reply

PAGE = b"""<!doctype html><html><body>
<h1>Order</h1><label>Name <input id=n></label>
<button onclick="fetch('/saved?who=' + location.search.slice(1), {method: 'POST'});
                 out.textContent = 'saved'">Save</button>
<p id=out></p></body></html>"""


@pytest.fixture
def site():
    """The page's address, and the paths of the POSTs that reached it so far."""
    with RecordingServer({"GET /*": Reply(PAGE, length=False),
                          "POST /*": Reply(status=204, content_type=None, length=False)}) as s:
        yield s.url(), s.view(lambda r: r.target, where=lambda r: r.method == "POST")


def _fleet(url: str, names: list[str]):
    from engine.fleet import Fleet, load_fleet

    script = [{"action": "click", "target": {"role": "button", "name": "Save"}, "expect": "any_change"},
              {"action": "finish", "answer": "saved"}]
    spec = load_fleet({"runs": [{"name": n, "task": f"save {n}", "url": f"{url}?{n}", "script": script}
                                for n in names]})
    return Fleet(spec, parallel=len(names), approve="ask", max_steps=6)


def test_one_queue_answered_out_of_order_through_the_window(qtbot, aio, site):  # noqa: F811
    from engine.models import Decision
    from gui.fleet.fleet_window import FleetWindow

    url, posts = site
    fleet = _fleet(url, ["alpha", "beta", "gamma"])
    window = FleetWindow(fleet)
    qtbot.addWidget(window)
    window.show()
    run(qtbot, window.start())
    try:
        qtbot.waitUntil(lambda: len(fleet.queue.waiting) == 3, timeout=60_000)
        asked = [e.id for e in fleet.queue.waiting]
        assert asked == sorted(asked) and len({fleet.queue.get(i).run for i in asked}) == 3
        assert window.queue_list.entry_ids() == asked  # the list is in the order asked
        assert {r.state for r in fleet.runs} == {"waiting"}
        assert "waiting for you" in window.runs.state_of("gamma")
        # nothing was sent before anyone approved
        assert posts == []

        # "Stop this run" on the first asked: only it stops, and its click never happens
        first = fleet.queue.get(asked[0])
        window.queue_list.select_entry(first.id)
        qtbot.waitUntil(lambda: window.page.tab is fleet.run_named(first.run).tab, timeout=10_000)
        qtbot.mouseClick(window.stop_run_btn, Qt.LeftButton)
        qtbot.waitUntil(lambda: fleet.run_named(first.run).state == "stopped", timeout=20_000)

        # the other two: the last asked first, through the list and the approval bar's Approve; the last
        # asked run's click reaches the server while the earlier one still waits in the queue
        for eid in reversed(asked[1:]):
            entry = fleet.queue.get(eid)
            window.queue_list.select_entry(eid)
            qtbot.waitUntil(lambda e=entry: window.approval.request is e.request, timeout=10_000)
            qtbot.waitUntil(lambda e=entry: window.page.tab is fleet.run_named(e.run).tab, timeout=30_000)
            assert window.page.highlighted("target") is not None  # its target is outlined on its own page
            qtbot.mouseClick(window.approval.approve_btn, Qt.LeftButton)
            qtbot.waitUntil(lambda e=entry: any(p.endswith("who=" + e.run) for p in posts), timeout=30_000)
            if eid == asked[2]:
                assert fleet.queue.get(asked[1]).waiting and len(posts) == 1  # approved out of the asked order
        assert [p.split("who=")[1] for p in posts] == [fleet.queue.get(asked[2]).run, fleet.queue.get(asked[1]).run]

        # whatever else they ask (the finish), approved from the queue until the fleet ends
        def drain() -> bool:
            for e in list(fleet.queue.waiting):
                window.answer(e.id, Decision.approve())
            return window.result is not None

        qtbot.waitUntil(drain, timeout=60_000)
        states = {r.name: r.state for r in window.result.runs}
        assert states[first.run] == "stopped"
        assert fleet.run_named(first.run).steps == 0  # its refused step is no step it took
        assert sorted(s for n, s in states.items() if n != first.run) == ["done", "done"]
        assert window.result.exit_code == 1
        assert len(posts) == 2  # the stopped run sent nothing
        shown = [e.shown_after_ms for e in fleet.queue.history if e.decision is not None and e.shown_at is not None]
        assert len(shown) >= 3
        print(f"\nproposed → shown in the Fleet view's queue: median {statistics.median(shown):.1f} ms, "
              f"max {max(shown):.1f} ms over {len(shown)} steps")
        assert statistics.median(shown) < 100
    finally:
        run(qtbot, window.shutdown(), timeout=60)


def test_gui_fleet_with_a_bad_file_says_what_is_wrong_before_any_window(tmp_path):
    import os
    import subprocess
    import sys

    bad = tmp_path / "fleet.yaml"
    bad.write_text("runs:\n  - task: no url here\n    script: [{action: finish, answer: x}]\n")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", VIGIL_HOME=str(tmp_path / "store"))
    for args, words in (([str(tmp_path / "missing.yaml")], "missing.yaml"), ([str(bad)], "url"),
                        ([str(bad), "--parallel", "0"], "--parallel")):
        p = subprocess.run([sys.executable, "-m", "gui.app.launcher", "gui", "--fleet", *args], env=env,
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 2, p.stderr
        assert "BAD_ARGUMENT" in p.stderr and words in p.stderr, p.stderr
        assert "Traceback" not in p.stderr


def test_fleet_from_the_main_windows_menu_records_in_its_store_and_closes_with_it(qtbot, aio, site, tmp_path):  # noqa: F811
    import json

    from gui.fleet.fleet_dialog import open_fleet_dialog

    url, posts = site
    script = [{"action": "click", "target": {"role": "button", "name": "Save"}, "expect": "any_change"},
              {"action": "finish", "answer": "saved"}]
    good = tmp_path / "fleet.json"
    good.write_text(json.dumps({"defaults": {"approve": "auto"}, "runs": [
        {"name": n, "task": f"save {n}", "url": f"{url}?{n}", "script": script} for n in ("one", "two")]}))
    bad = tmp_path / "bad.json"
    bad.write_text('{"runs": [{"task": "no url", "script": []}]}')
    with open_window(qtbot, url) as win:
        assert win.act_fleet.text() == "Fleet…" and win.act_fleet.isEnabled()
        assert open_fleet_dialog(win, win.sup, path=str(bad), parallel=1) is None
        assert "bad.json" in win.banner.text() and "url" in win.banner.text()  # said in the window, nothing opened
        fw = open_fleet_dialog(win, win.sup, path=str(good), parallel=2)
        assert fw is not None and fw in win.fleet_windows
        qtbot.waitUntil(lambda: fw.result is not None, timeout=60_000)
        assert [r.state for r in fw.result.runs] == ["done", "done"]
        assert sorted(p.split("who=")[1] for p in posts) == ["one", "two"]
        sessions = {r.session_id for r in fw.result.runs}
        assert None not in sessions and sessions <= {s.id for s in win.sup.recording.store.list_sessions()}
    assert fw.closed.done()  # closed with the main window
