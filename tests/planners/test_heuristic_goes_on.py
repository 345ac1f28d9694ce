"""The offline planner goes on after the person said no or did the step themselves (issue 40, item 8): a Reject
or a Skip of plan item N moves it to item N+1 (never "Give up" again and again), a declined "Give up" too; after a
take-over it reads the page — the field filled, the box checked — and goes on with the first item not done yet,
proposing again an item the page shows undone. The end says which items were left undone."""

from __future__ import annotations

from engine.local_server import serve_directory
from engine.loop import AgentLoop, CallbackGate
from engine.models import Action, Decision
from engine.models.loop import PerformedAction
from engine.observe.stability import StabilityConfig
from engine.planners.heuristic import HeuristicPlanner

from support.paths import ROOT

FAST = StabilityConfig(dom_quiet_ms=120, network_quiet_ms=150, timeout_ms=1500)
TASK = "click Accept, type Ada Lovelace into Full name, check Gift wrap, click Create account"
CREATE = "#signup-form button[type=submit]"  # Create account


def _run(harness, decide, task=TASK, max_steps=8):
    """Run `task` on the demo shop's signup page, `decide(i, request, tab)` answering each question; the run's
    result, what was asked, and the page's Full name, Email and Gift wrap afterwards."""
    asked: list = []

    async def go(tab):
        tab.stability = FAST

        async def gate(req):
            asked.append(req)
            return await decide(len(asked) - 1, req, tab)

        loop = AgentLoop(tab, HeuristicPlanner(), gate=CallbackGate(gate), policy="ask", max_steps=max_steps,
                         screenshots=False)
        res = await loop.run(task)
        page = await tab.page.evaluate("""() => { const f = document.getElementById('signup-form');
            return [f.full_name.value, f.email.value, f.gift_wrap.checked]; }""")
        return res, page

    with serve_directory(ROOT / "assets" / "demo") as base:
        res, page = harness.page(base + "index.html", go)
    return res, asked, page


def test_reject_skip_and_a_declined_give_up_move_on_to_the_next_item(harness):
    """Reject "Type … into Full name", skip "Check Gift wrap", approve "Click Create account": each proposal after a
    no is the next plan item, none is "Give up"; the run finishes saying which two items were not done."""
    async def decide(i, req, tab):
        return {1: Decision(kind="reject", reason="not now"), 2: Decision(kind="skip")}.get(i, Decision.approve())

    # (its last item types: Create account's toast would keep the step settling for 3 s)
    res, asked, (name, email, gift) = _run(harness, decide, task=TASK.replace(
        "click Create account", "type ada@example.com into Email Address"))
    said = [(r.proposal.action.name, r.proposal.plan_index) for r in asked]
    assert said[:4] == [("click", 0), ("type", 1), ("check", 2), ("type", 3)], said
    assert email == "ada@example.com"
    assert "fail" not in [a for a, _ in said], said
    assert res.status == "success", res.reason
    assert "2 of 4" in res.answer and "Full name (rejected by the person)" in res.answer \
        and "Check Gift wrap (skipped by the person)" in res.answer, res.answer
    assert name == "" and gift is False


def test_after_a_take_over_it_reads_the_page_and_goes_on(harness):
    """At "Type … into Full name" the person takes over: fills Full name and checks Gift wrap in the page. The
    planner sees both done and proposes "Click Create account" next. Then at that step the person takes over and
    clicks Email instead: Create account was not clicked, it is proposed again."""
    async def decide(i, req, tab):
        if i == 1:  # the person does items 1 and 2 in the page themselves
            snap = await tab.snapshot()
            name, gift = snap.find("textbox", "Full name")[0], snap.find("checkbox", "Gift wrap")[0]
            await tab.page.fill("#full-name", "Ada Lovelace")
            await tab.page.check("input[name=gift_wrap]")
            return Decision(kind="take_over", performed=[
                PerformedAction(action=Action(name="type", target=name.node_id, text="Ada Lovelace", clear=False),
                                target={"id": name.node_id, "role": "textbox", "name": "Full name"}),
                PerformedAction(action=Action(name="click", target=gift.node_id),
                                target={"id": gift.node_id, "role": "checkbox", "name": "Gift wrap"})])
        if i == 2:
            snap = await tab.snapshot()
            email = next(n for n in snap.nodes() if n.attrs.get("name") == "email")
            return Decision(kind="take_over", performed=[PerformedAction(
                action=Action(name="click", target=email.node_id),
                target={"id": email.node_id, "role": "textbox", "name": "Email Address"})])
        if i == 3:  # proposed again: skipped here (approved, Create account's toast keeps the step 3 s)
            return Decision(kind="skip")
        return Decision.approve()

    res, asked, (name, _, gift) = _run(harness, decide)
    said = [(r.proposal.action.name, r.proposal.plan_index) for r in asked]
    assert said[:4] == [("click", 0), ("type", 1), ("click", 3), ("click", 3)], said
    assert name == "Ada Lovelace" and gift is True
    # items 1 and 2 count as done by the person; only the skipped Create account is left
    assert res.status == "success" and "3 of 4" in res.answer and "Create account (skipped by the person)" \
        in res.answer, (res.status, res.answer)


def test_a_take_over_that_left_the_box_empty_proposes_it_again_and_a_declined_give_up_goes_on(harness):
    """The issue's run: at "Check Gift wrap" the person clicks Create account instead. The box is still empty, so
    "Check Gift wrap" is proposed again (not "Give up"); "Click Create account", which they did, is not. Then a
    task whose item cannot be found: rejecting its "Give up" goes on with the next item."""
    took: list = []

    async def decide(i, req, tab):
        if req.proposal.action.name == "check" and not took:
            took.append(i)
            snap = await tab.snapshot()
            btn = snap.find("button", "Create account")[0]
            await tab.page.click(CREATE)  # the person's own click (Vigil's would wait 3 s on the form's error)
            return Decision(kind="take_over", performed=[PerformedAction(
                action=Action(name="click", target=btn.node_id),
                target={"id": btn.node_id, "role": "button", "name": "Create account"})])
        if req.proposal.action.name == "fail":
            return Decision(kind="reject", reason="go on")
        return Decision.approve()

    res, asked, (_, _, gift) = _run(harness, decide, task=TASK.replace("click Accept", "click Teleport"))
    said = [(r.proposal.action.name, r.proposal.plan_index) for r in asked if r.proposal.action.name != "scroll"]
    # (the planner scrolls to look for Teleport before it gives up)
    assert said == [("fail", 0), ("type", 1), ("check", 2), ("check", 2), ("finish", None)], said
    assert gift is True
    assert res.status == "success" and "3 of 4" in res.answer and "Teleport" in res.answer, res.answer
