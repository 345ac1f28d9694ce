"""The main window's "Fleet…" options, as a person fills them in with the keyboard: runs at once, where the browsers
come from (the fleet file's `grid:` already filled in; a grid that is not a URL is said under the field and the
dialog stays open) and whether a lost run starts again."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from engine.fleet import load_fleet
from gui.fleet.fleet_dialog import FleetOptions, FleetOptionsDialog

RUNS = [{"name": f"r{i}", "task": "t", "url": "http://127.0.0.1:9/", "script": [{"action": "finish", "answer": "x"}]}
        for i in range(5)]


def _dialog(qtbot, grid: str | None) -> FleetOptionsDialog:
    spec = load_fleet({"name": "checkout", "runs": RUNS, **({"grid": grid} if grid else {})})
    dlg = FleetOptionsDialog(spec, spec.name)
    qtbot.addWidget(dlg)
    dlg.show()
    qtbot.waitExposed(dlg)
    dlg.activateWindow()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is not None)
    return dlg


def _type(qtbot, text: str) -> None:
    qtbot.keyClicks(QApplication.focusWidget(), text)


def _key(qtbot, key: Qt.Key) -> None:
    qtbot.keyClick(QApplication.focusWidget(), key)


def test_keys_choose_the_runs_at_once_a_grid_and_a_retry(qtbot):
    dlg = _dialog(qtbot, None)
    assert QApplication.focusWidget() is dlg.at_once.lineEdit() or QApplication.focusWidget() is dlg.at_once
    assert dlg.at_once.value() == 2 and dlg.grid.text() == ""
    _key(qtbot, Qt.Key.Key_Up)  # 3 at once
    _key(qtbot, Qt.Key.Key_Tab)
    assert QApplication.focusWidget() is dlg.grid
    _type(qtbot, "hub:4444")  # not a URL: said, and the dialog stays open on the field
    _key(qtbot, Qt.Key.Key_Return)
    assert dlg.isVisible() and dlg.options() is None
    assert dlg.problem.isVisible() and "'hub:4444' is not one grid's URL" in dlg.problem.text()
    assert QApplication.focusWidget() is dlg.grid
    dlg.grid.selectAll()
    _type(qtbot, "http://127.0.0.1:4444/")
    assert not dlg.problem.isVisible()  # (it said the text as it was)
    _key(qtbot, Qt.Key.Key_Tab)
    assert QApplication.focusWidget() is dlg.retry
    _key(qtbot, Qt.Key.Key_Space)
    _key(qtbot, Qt.Key.Key_Return)
    assert not dlg.isVisible()
    assert dlg.options() == FleetOptions(parallel=3, grid="http://127.0.0.1:4444", retry_lost=True)
    if os.environ.get("VIGIL_SHOTS"):  # a look at it (tests/gui/window_pictures.py takes the others)
        dlg.show()
        dlg.grab().save(str(Path(os.environ["VIGIL_SHOTS"]) / "fleet-options.png"))


def test_the_fleet_files_grid_is_offered_and_emptying_it_means_this_machine(qtbot):
    dlg = _dialog(qtbot, "http://10.0.0.5:4444")
    assert dlg.grid.text() == "http://10.0.0.5:4444"
    _key(qtbot, Qt.Key.Key_Return)  # accepted as the file says
    assert dlg.options() == FleetOptions(parallel=2, grid="http://10.0.0.5:4444", retry_lost=False)

    dlg = _dialog(qtbot, "http://10.0.0.5:4444")
    _key(qtbot, Qt.Key.Key_Tab)
    _key(qtbot, Qt.Key.Key_End)
    for _ in range(len("http://10.0.0.5:4444")):
        _key(qtbot, Qt.Key.Key_Backspace)
    _key(qtbot, Qt.Key.Key_Escape)  # Escape cancels: nothing chosen
    assert not dlg.isVisible() and dlg.options() is None
    dlg = _dialog(qtbot, "http://10.0.0.5:4444")
    _key(qtbot, Qt.Key.Key_Tab)
    dlg.grid.selectAll()
    _key(qtbot, Qt.Key.Key_Delete)
    _key(qtbot, Qt.Key.Key_Return)
    assert dlg.options() == FleetOptions(parallel=2, grid=None, retry_lost=False)


def test_a_run_whose_grid_queued_its_session_reads_waiting_for_a_browser(qtbot):
    """In the Fleet view's run list, a run the grid keeps in its queue says so (not "queued", not a timeout), and
    says "running" once its browser came."""
    from engine.fleet.runner import FleetRun
    from gui.fleet.fleet_lists import RunTable

    spec = load_fleet({"name": "checkout", "runs": RUNS[:2]})
    runs = [FleetRun(spec=s) for s in spec.runs]
    table = RunTable()
    qtbot.addWidget(table)
    table.set_runs(runs)
    runs[1].waiting_for = "a browser"
    table.update_run(runs[1])
    assert "waiting for a browser" in table.state_of("r1") and "queued" in table.state_of("r0")
    runs[1].waiting_for, runs[1].state = None, "running"
    table.update_run(runs[1])
    assert table.state_of("r1") == "running"
