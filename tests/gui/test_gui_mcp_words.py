"""What the window says during an MCP session (issue 27, item 5), on the widgets themselves: the plan
panel says where the steps come from instead of "Planning…", and a rejected step reads
"Rejected: <reason>" once, not "Rejected: Rejected: <reason>". (The whole session in the window, with a
real MCP client: tests/gui/test_mcp_window.py.)"""

from __future__ import annotations

from PySide6.QtWidgets import QLabel

from engine.models.actions import Action
from engine.models.loop import StepRecord
from gui.run.chat_turn import _Observation as Observation
from gui.run.plan_view import PLANNING_TEXT, PlanView


def test_a_run_without_a_plan_says_who_sends_its_steps(qtbot):
    view = PlanView()
    qtbot.addWidget(view)
    view.show()
    view.set_running(True)
    assert view.is_planning() and view.placeholder.text() == PLANNING_TEXT
    view.set_driver("Steps from MCP Inspector (MCP): each step it asks for shows in the chat.")
    assert not view.is_planning() and view.placeholder.text().startswith("Steps from MCP Inspector")
    view.set_running(False)  # a step ended, the run goes on: still the client's
    view.set_running(True)
    assert view.placeholder.text().startswith("Steps from MCP Inspector")
    view.set_driver(None)
    assert view.is_planning()


def test_a_rejected_step_says_rejected_once(qtbot):
    for note, want in (("Rejected: keep the invoices", "Rejected: keep the invoices"),
                       ("keep the invoices", "Rejected: keep the invoices"), ("", "Rejected")):
        rec = StepRecord(index=3, action=Action(name="click", target="12"), status="rejected", note=note)
        obs = Observation(rec)
        qtbot.addWidget(obs)
        [said] = [lab.text() for lab in obs.findChildren(QLabel, "obsStatus")]
        assert said.endswith(want) and "Rejected: Rejected" not in said, said
        assert said.count("Rejected") == 1, said
