"""The plan stepper ticks what the records show really ran (issue 40, item 7), on records of real runs on the demo
shop: after a take-over in which the person clicked Create account instead of checking Gift wrap, "Check Gift wrap"
is not ticked and "Click Create account" is; after an edit that moved "Type … into Full name" to Email, the Full
name step is not ticked. A Skip or a Reject is said as such in the status bar, never as the person acting."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6.QtWidgets")

from engine.local_server import serve_directory  # noqa: E402
from engine.loop import AgentLoop, CallbackGate  # noqa: E402
from engine.models import Action, Decision  # noqa: E402
from engine.models.loop import PerformedAction  # noqa: E402
from engine.observe.stability import StabilityConfig  # noqa: E402
from engine.planners.heuristic import HeuristicPlanner  # noqa: E402
from gui.run.plan_view import PlanView  # noqa: E402
from gui.window.run_wiring import step_words  # noqa: E402

from support.paths import ROOT  # noqa: E402

FAST = StabilityConfig(dom_quiet_ms=120, network_quiet_ms=150, timeout_ms=1500)
TASK = "click Accept, type Ada Lovelace into Full name, check Gift wrap, click Create account"
CREATE = "#signup-form button[type=submit]"  # Create account


@pytest.fixture(scope="module")
def runs(harness):
    """Two real runs on the demo shop's signup form: (plan, records, page values) of each."""
    async def take_over(i, req, tab):
        if i == 2:  # "Check Gift wrap": the person clicks Create account in the page instead
            btn = (await tab.snapshot()).find("button", "Create account")[0]
            await tab.page.click(CREATE)  # the person's own click (Vigil's would wait 3 s on the form's error)
            return Decision(kind="take_over", performed=[PerformedAction(
                action=Action(name="click", target=btn.node_id),
                target={"id": btn.node_id, "role": "button", "name": "Create account"})])
        return Decision.approve() if i < 2 else Decision(kind="stop")

    async def edit(i, req, tab):
        if i == 1:  # "Type … into Full name", edited to go into Email
            email = next(n for n in (await tab.snapshot()).nodes() if n.attrs.get("name") == "email")
            return Decision(kind="edit", action=Action(name="type", target=email.node_id, text="ada@example.org"))
        if i == 2:
            return Decision(kind="skip")
        if i == 3:
            return Decision(kind="reject", reason="not yet")
        return Decision.approve() if i < 1 else Decision(kind="stop")

    async def go(tab, decide):
        tab.stability = FAST
        n = [0]

        async def gate(req):
            n[0] += 1
            return await decide(n[0] - 1, req, tab)

        loop = AgentLoop(tab, HeuristicPlanner(), gate=CallbackGate(gate), policy="ask", max_steps=6,
                         screenshots=False)
        res = await loop.run(TASK)
        values = await tab.page.evaluate("""() => { const f = document.getElementById('signup-form');
            return [f.full_name.value, f.email.value, f.gift_wrap.checked]; }""")
        return res.plan, res.steps, values

    out = {}
    with serve_directory(ROOT / "assets" / "demo") as base:
        for name, decide in (("take_over", take_over), ("edit", edit)):
            out[name] = harness.page(base + "index.html", lambda tab, d=decide: go(tab, d))
    return out


def _shown(make, plan, records) -> tuple[list[str], PlanView]:
    view = make(PlanView)
    view.set_running(True)
    view.set_plan(plan)
    for rec in records:
        view.add_step_record(rec)
    return [r.property("state") for r in view.rows()], view


def test_a_take_over_ticks_what_the_person_did_not_what_was_proposed(make, runs):
    plan, records, (name, _, gift) = runs["take_over"]
    assert gift is False and name == "Ada Lovelace"  # the box stayed empty
    states, view = _shown(make, plan, records)
    assert states[:2] == ["past", "past"], states
    assert states[2] == "current", states        # Check Gift wrap: not done, proposed again
    assert states[3] == "past", states           # Click Create account: the person did it
    assert view.title.text().startswith("Plan · 3/4 done"), view.title.text()
    # the plan itself (what vigil run, the report and the planner's next payload say) agrees with the stepper
    status = [s.status for s in plan.steps]
    assert status[2] != "completed" and status[3] == "completed", status


def test_an_edit_to_another_field_does_not_tick_the_step_and_declines_are_said_as_such(make, runs):
    plan, records, (name, email, _) = runs["edit"]
    assert name == "" and email == "ada@example.org"
    states, view = _shown(make, plan, records)
    assert states[0] == "past" and states[1] == "missed", states  # Full name stayed empty
    assert "Email" in view.rows()[1].toolTip()
    assert plan.steps[1].status != "completed", plan.steps[1]   # the plan itself does not say it either
    assert states[2] == "missed", states  # skipped
    words = [step_words(r) for r in records]
    skipped = next(w for r, w in zip(records, words, strict=True) if r.status == "skipped")
    rejected = next(w for r, w in zip(records, words, strict=True) if r.status == "rejected")
    assert skipped.startswith("Step 3: skipped") and "acted in the page" not in skipped, skipped
    assert rejected.startswith("Step 4: rejected: not yet") and "acted in the page" not in rejected, rejected
