"""The Fleet view's layout on small and usual screens, as a person sees it: the window opens inside its
screen, the runs table shows its columns whole (the outcome included), the line of counts wraps instead
of widening the left panel (which moved the page under the person's pointer when a run stopped), and the
run line says its steps in words. No browser: the fleet is built, not run (the runs' states are set as the
runner sets them)."""

from __future__ import annotations

import pytest

from support.gui_helpers import run, screen_named


def _fleet(n: int, browsers=None):
    from engine.fleet import Fleet, load_fleet

    spec = load_fleet({"name": "vendor portals", "runs": [{"name": f"run-{i}-with-a-longer-name", "task": f"task {i}",
                                 "url": "http://127.0.0.1:9/", "script": [{"action": "finish", "answer": "x"}]}
                                for i in range(n)]})
    return Fleet(spec, parallel=n, approve="ask", browsers=browsers)


@pytest.mark.parametrize("size", ["1024x640", "1366x768"])
def test_fleet_view_fits_its_screen_and_keeps_its_panels_still(qtbot, aio, size):  # noqa: F811
    from gui.fleet.fleet_lists import BROWSER_COLUMN
    from gui.fleet.fleet_window import FleetWindow

    fleet = _fleet(4)
    window = FleetWindow(fleet)
    qtbot.addWidget(window)
    screen = screen_named(size)
    window.place_on(screen)
    window.show()
    qtbot.waitExposed(window)
    try:
        room = screen.availableGeometry()
        assert room.contains(window.frameGeometry()), (window.frameGeometry(), room)
        left, right = window.split.sizes()
        assert left >= 300 and right > left, (left, right)

        table = window.runs
        assert table.isColumnHidden(BROWSER_COLUMN)  # one browser: no column saying "local" four times
        for r in fleet.runs:
            r.state, r.steps = "waiting", 0
            table.update_run(r)
        window._say_counts()
        qtbot.wait(50)
        visible = [c for c in range(table.columnCount()) if not table.isColumnHidden(c)]
        shown = sum(table.columnWidth(c) for c in visible)
        room = table.viewport().width()
        assert shown <= room + 1, f"the columns need {shown} px, the table shows {room}"
        words = table.horizontalHeader().fontMetrics().horizontalAdvance("Outcome")
        assert table.columnWidth(visible[-1]) >= words, "the Outcome column is cut"

        # a run stops with a long reason, the counts line grows: the panels stay where they were
        before = window.split.sizes()
        stopped = fleet.runs[1]
        stopped.state, stopped.reason = "stopped", "stopped by the person in the Fleet view, with more words than fit"
        table.update_run(stopped)
        window._say_counts()
        qtbot.wait(50)
        assert "1 stopped" in window.header.text() and "■" not in window.header.text()
        assert window.header.text() == f"Fleet vendor portals ({fleet.id}): 4 runs — 3 waiting for you, 1 stopped"
        assert window.windowTitle() == f"Vigil — fleet vendor portals ({fleet.id}) (4 runs)"
        assert window.split.sizes() == before
        assert window.header.width() <= before[0]

        window._run = stopped.name
        window._say_run(stopped)
        assert "no step yet" in window.run_label.text() and "step(s)" not in window.run_label.text()
        stopped.steps = 2
        window._say_run(stopped)
        assert " · stopped · 2 steps · " in window.run_label.text()
    finally:
        run(qtbot, window.shutdown())


def test_fleet_view_shows_the_browser_column_when_runs_use_several(qtbot, aio):  # noqa: F811
    from gui.fleet.fleet_lists import BROWSER_COLUMN
    from gui.fleet.fleet_window import FleetWindow

    window = FleetWindow(_fleet(2, browsers=["local", "ws://127.0.0.1:9/devtools/browser/x"]))
    qtbot.addWidget(window)
    try:
        assert not window.runs.isColumnHidden(BROWSER_COLUMN)
    finally:
        run(qtbot, window.shutdown())
