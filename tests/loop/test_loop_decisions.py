"""The observe–act loop's decisions, driven on a page made of stored snapshots (tests/support/fake_page.py):
every approval decision, stop requests wherever the loop waits, targets that appear late, never or
change while a step waits, the step limit, finish and fail, planners and gates that break, typed
secrets, fatal page errors and the policies. No browser: each test runs in milliseconds.

The real-browser runs (a whole scripted run on a real page, a crashed tab, `vigil run`) are in
tests/loop/test_loop.py."""

from __future__ import annotations

import asyncio

import pytest

from engine.loop import AgentLoop, AutoApprove, CallbackGate, EventBus, QueueGate, ScriptedPlanner
from engine.models import Action, ActionResult, Decision, ExpectedOutcome, ProposedStep, StepRecorded

from support.fake_page import FakePage, node_id, renamed, stored

FORM = stored("loop_form")
LATE = stored("loop_form_late")
EMAIL, NAME, TERMS, HELP = (node_id(FORM, k) for k in ("email", "name", "terms", "helpbtn"))


class Recorder:
    """A planner around ScriptedPlanner that keeps what it was told of each previous proposal."""

    def __init__(self, steps):
        self.inner = ScriptedPlanner(steps)
        self.seen: list[tuple] = []

    async def propose(self, obs):
        self.seen.append((obs.last_outcome, obs.feedback))
        return await self.inner.propose(obs)


def run(page, steps, gate, task="the task", **kw):
    planner = steps if not isinstance(steps, list) else ScriptedPlanner(steps)
    kw.setdefault("screenshots", False)
    loop = AgentLoop(page, planner, gate=gate, **kw)
    return asyncio.run(asyncio.wait_for(loop.run(task), 10))


def ran(page) -> list[str]:
    return [a.to_string() for a, _ in page.acted]


# -- approving, editing, skipping, rejecting, taking over ------------------------------------------
def test_approved_steps_run_in_order_and_are_recorded():
    page = FakePage(FORM)
    steps = [{"action": "type", "target": {"name": "Work email"}, "text": "ada@example.com"},
             {"action": "check", "target": {"role": "checkbox"}}, {"action": "finish", "answer": "done"}]
    gate = AutoApprove()
    res = run(page, steps, gate)
    assert res.status == "success" and res.answer == "done"
    assert ran(page) == [f'type({EMAIL}, "ada@example.com")', f"check({TERMS})"]
    assert len(gate.requests) == 3 and [s.status for s in res.steps] == ["completed"] * 3
    assert [s.status for s in res.plan.steps] == ["completed"] * 3


def test_edit_runs_the_edited_action_instead():
    page = FakePage(FORM)
    steps = [{"action": "type", "target": {"name": "Work email"}, "text": "wrong@example.com"}, {"action": "finish"}]

    def decide(req):
        if req.step_index == 0:
            return Decision(kind="edit", action=Action(name="type", target=req.target["id"], text="ada@example.com"))
        return Decision.approve()

    res = run(page, steps, CallbackGate(decide))
    assert ran(page) == [f'type({EMAIL}, "ada@example.com")']
    s0 = res.steps[0]
    assert s0.decision.kind == "edit" and s0.action.text == "ada@example.com" and s0.actor == "agent"


def test_edit_of_the_expected_outcome_keeps_the_action():
    page = FakePage(FORM)
    steps = [{"action": "click", "target": {"name": "Show help"}}, {"action": "finish"}]
    want = ExpectedOutcome(type="element_appears", text="Help is on the way")
    res = run(page, steps, CallbackGate(lambda req: Decision(kind="edit", expected_outcome=want)
                                        if req.step_index == 0 else Decision.approve()))
    (action, expect), = page.acted
    assert action.to_string() == f"click({HELP})" and expect == want
    assert res.steps[0].verification.verified_outcome == "element_appears"


@pytest.mark.parametrize("bad, words", [
    (Decision(kind="edit", action=Action(name="click", target="9999")), "9999"),
    (Decision(kind="edit"), "needs a new action or a new expected outcome"),
    (Decision(kind="edit", action=Action(name="type", target="1", text="••••••••")), "mask of a secret"),
])
def test_an_invalid_edit_is_refused_and_asked_again(bad, words):
    page = FakePage(FORM)
    steps = [{"action": "check", "target": {"role": "checkbox"}}, {"action": "finish"}]
    gate = CallbackGate(lambda req: bad if req.step_index == 0 and req.error is None else Decision.approve())
    res = run(page, steps, gate)
    assert [r.step_index for r in gate.requests] == [0, 0, 1]
    assert words in gate.requests[1].error and "nothing ran" in gate.requests[1].error.lower()
    assert ran(page) == [f"check({TERMS})"] and res.status == "success"


def test_skip_runs_nothing_and_moves_on():
    page = FakePage(FORM)
    planner = Recorder([{"action": "type", "target": {"name": "Full name"}, "text": "Nobody"},
                        {"action": "check", "target": {"role": "checkbox"}}, {"action": "finish"}])
    res = run(page, planner, CallbackGate(lambda req: Decision(kind="skip") if req.step_index == 0
                                          else Decision.approve()))
    assert ran(page) == [f"check({TERMS})"]
    assert res.steps[0].status == "skipped" and res.steps[0].action is None and res.steps[0].result is None
    assert planner.seen[1][0] == "skipped"


def test_reject_hands_the_reason_to_the_planner():
    page = FakePage(FORM)
    answers = iter([Decision(kind="reject", reason="please try again"), Decision.approve(),
                    Decision(kind="reject", reason="wrong button, use the other one"), Decision.approve()])
    planner = Recorder([{"action": "type", "target": {"name": "Work email"}, "text": "a@b.c"},
                        {"action": "click", "target": {"name": "Show help"}}, {"action": "finish"}])
    gate = CallbackGate(lambda req: next(answers))
    res = run(page, planner, gate)
    assert [r.proposal.action.name for r in gate.requests] == ["type", "type", "click", "fail"]
    assert planner.seen[1] == ("rejected",
                               "The person rejected this step (nothing ran). Their reason: please try again")
    assert planner.seen[3][0] == "rejected" and "wrong button" in planner.seen[3][1]
    assert res.status == "error" and "wrong button, use the other one" in res.reason and "Step 2" in res.reason
    assert [s.status for s in res.steps] == ["rejected", "completed", "rejected", "completed"]
    assert ran(page) == [f'type({EMAIL}, "a@b.c")']


def test_take_over_with_an_action_runs_the_persons_action():
    page = FakePage(FORM)
    planner = Recorder([{"action": "type", "target": {"name": "Full name"}, "text": "Agent"}, {"action": "finish"}])
    res = run(page, planner, CallbackGate(
        lambda req: Decision(kind="take_over", action=Action(name="type", target=NAME, text="Grace Hopper"))
        if req.step_index == 0 else Decision.approve()))
    assert ran(page) == [f'type({NAME}, "Grace Hopper")']
    h = res.steps[0]
    assert h.actor == "human" and h.action.text == "Grace Hopper" and h.result.verified
    assert planner.seen[1][0] == "taken_over" and "Grace Hopper" in planner.seen[1][1]


def test_take_over_without_an_action_records_the_person_acting_in_the_page():
    page = FakePage(FORM)
    planner = Recorder([{"action": "click", "target": {"name": "Show help"}}, {"action": "finish"}])

    def decide(req):
        if req.step_index == 0:
            page.show(stored("loop_form_help"))   # the person clicked in the page
            return Decision(kind="take_over")
        return Decision.approve()

    res = run(page, planner, CallbackGate(decide))
    h = res.steps[0]
    assert h.actor == "human" and h.action is None and h.result is None and "directly" in h.note
    assert planner.seen[1][0] == "taken_over" and "acted in the page directly" in planner.seen[1][1]
    assert ran(page) == []                     # the agent's own step never ran


# -- stopping ----------------------------------------------------------------------------------------
def test_a_stop_decision_ends_the_run_before_the_step():
    page = FakePage(FORM)
    res = run(page, [{"action": "check", "target": {"role": "checkbox"}}],
              CallbackGate(lambda r: Decision(kind="stop")))
    assert res.status == "interrupted" and res.steps[0].status == "stopped" and res.steps[0].decision.kind == "stop"
    assert ran(page) == []


def test_stop_while_waiting_at_the_gate():
    async def go():
        page, gate = FakePage(FORM), QueueGate()
        loop = AgentLoop(page, ScriptedPlanner([{"action": "wait", "ms": 1}, {"action": "wait", "ms": 2}]), gate=gate,
                         screenshots=False)
        task = asyncio.ensure_future(loop.run("stop me"))
        while gate.pending is None:
            await asyncio.sleep(0.005)
        gate.submit(Decision.approve())
        while gate.pending is None or gate.pending.step_index != 1:
            await asyncio.sleep(0.005)
        loop.stop()
        res = await asyncio.wait_for(task, 5)
        assert res.status == "interrupted" and [s.status for s in res.steps] == ["completed", "stopped"]
        assert ran(page) == ["wait(1)"]
    asyncio.run(go())


def test_stop_while_the_planner_thinks():
    class Slow:
        async def propose(self, obs):
            await asyncio.sleep(60)

    async def go():
        loop = AgentLoop(FakePage(FORM), Slow(), gate=AutoApprove(), screenshots=False)
        asyncio.get_running_loop().call_later(0.05, loop.stop)
        res = await asyncio.wait_for(loop.run("think"), 5)
        assert res.status == "interrupted" and res.steps == []
    asyncio.run(go())


def test_stop_while_waiting_for_a_target():
    async def go():
        page = FakePage(FORM)
        steps = [{"action": "click", "target": {"name": "Never there"}, "timeout_ms": 30_000}]
        loop = AgentLoop(page, ScriptedPlanner(steps), gate=AutoApprove(), screenshots=False)
        asyncio.get_running_loop().call_later(0.1, loop.stop)
        res = await asyncio.wait_for(loop.run("wait"), 5)
        assert res.status == "interrupted" and ran(page) == []
    asyncio.run(go())


def test_stop_requested_during_an_action_ends_after_it():
    async def go():
        page = FakePage(FORM)
        loop = AgentLoop(page, ScriptedPlanner([{"action": "wait", "ms": 5}, {"action": "wait", "ms": 6}]),
                         gate=AutoApprove(), policy="auto", screenshots=False)
        page.on_act = lambda action: loop.stop()
        res = await asyncio.wait_for(loop.run("stop while acting"), 5)
        assert res.status == "interrupted" and [s.status for s in res.steps] == ["completed"]
        assert ran(page) == ["wait(5)"]
    asyncio.run(go())


# -- targets ------------------------------------------------------------------------------------------
def test_a_target_that_appears_late_is_waited_for():
    async def go():
        page = FakePage(FORM)
        steps = [{"action": "click", "target": {"name": "Late button"}, "timeout_ms": 4000}, {"action": "finish"}]
        asyncio.get_running_loop().call_later(0.3, page.show, LATE)
        res = await AgentLoop(page, ScriptedPlanner(steps), gate=AutoApprove(), policy="auto",
                              screenshots=False).run("late")
        assert res.status == "success" and ran(page) == [f"click({node_id(LATE, 'late')})"]
    asyncio.run(go())


def test_a_target_that_never_appears_fails_the_step_naming_the_closest():
    page = FakePage(FORM)
    never = [{"action": "click", "target": {"role": "button", "name": "Create acount"}, "timeout_ms": 200}]
    res = run(page, never, AutoApprove(), policy="auto")
    assert res.status == "error" and 'Closest: button "Create account"' in res.reason
    assert res.steps[0].status == "failed" and res.steps[0].result.error_code == "NOT_FOUND"
    assert "did not appear within 0.2 s" in res.reason and ran(page) == []


def test_an_unknown_node_id_fails_the_step():
    res = run(FakePage(FORM), [{"action": "click", "target": 9999, "timeout_ms": 100}], AutoApprove())
    assert res.status == "error" and "9999" in res.reason and res.steps[0].result.error_code == "NOT_FOUND"


def test_an_optional_step_that_fails_is_passed_over():
    page = FakePage(FORM)
    steps = [{"action": "click", "target": {"name": "Nowhere"}, "timeout_ms": 50, "optional": True},
             {"action": "check", "target": {"role": "checkbox"}}, {"action": "finish"}]
    res = run(page, steps, AutoApprove(), policy="auto")
    assert res.status == "success" and [s.status for s in res.steps] == ["failed", "completed", "completed"]


def test_a_target_that_changes_while_the_step_waits_comes_back_to_the_person():
    page = FakePage(FORM)
    planner = Recorder([{"action": "click", "target": {"role": "button", "name": "help"}}, {"action": "finish"}])

    def decide(req):
        if len(planner.seen) == 1:   # first proposal: the page re-labels the button while we wait
            page.show(renamed("loop_form", HELP, "Get help"))
        return Decision.approve()

    gate = CallbackGate(decide)
    res = run(page, planner, gate)
    assert res.status == "success", res.reason
    assert [r.target["name"] for r in gate.requests[:2]] == ["Show help", "Get help"]
    again = gate.requests[1].error or ""
    assert "TARGET_CHANGED" in again and '"Show help"' in again and '"Get help"' in again, again
    assert planner.seen[1][0] == "completed", "approved again as it is now: it ran once"
    assert ran(page) == [f"click({HELP})"] and len(res.steps) == 2
    assert any(m.role == "system" and "target changed" in m.content for m in res.messages)


# -- how runs end -------------------------------------------------------------------------------------
def test_the_step_limit_ends_the_run():
    page = FakePage(FORM)
    res = run(page, [{"action": "wait", "ms": 1}] * 5, AutoApprove(), policy="auto", max_steps=2)
    assert res.status == "error" and "step limit of 2" in res.reason and len(res.steps) == 2
    assert ran(page) == ["wait(1)", "wait(1)"]


@pytest.mark.parametrize("step, status, words", [
    ({"action": "finish", "answer": "all done"}, "success", "all done"),
    ({"action": "fail", "reason": "the shop is closed"}, "error", "the shop is closed"),
])
def test_finish_and_fail_end_the_run(step, status, words):
    res = run(FakePage(FORM), [step], AutoApprove())
    assert res.status == status and words in (res.answer or res.reason)
    assert res.steps[-1].status == "completed" and res.messages[-1].role == "system"


class Broken:
    def __init__(self, answer):
        self.answer = answer

    async def propose(self, obs):
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


@pytest.mark.parametrize("answer, words", [(RuntimeError("model down"), "The planner failed: RuntimeError: model down"),
                                           ("click(1)", "The planner returned str, not a ProposedStep")])
def test_a_broken_planner_ends_the_run_with_its_error(answer, words):
    res = run(FakePage(FORM), Broken(answer), AutoApprove())
    assert res.status == "error" and words in res.reason


@pytest.mark.parametrize("answer, words", [(ValueError("ui gone"), "The approval gate failed: ValueError: ui gone"),
                                           ("yes", "not a Decision")])
def test_a_broken_gate_ends_the_run_with_its_error(answer, words):
    def decide(req):
        if isinstance(answer, Exception):
            raise answer
        return answer

    class Gate:
        async def decide(self, req):
            return decide(req)

    res = run(FakePage(FORM), [{"action": "wait", "ms": 1}], Gate())
    assert res.status == "error" and words in res.reason


def test_a_crashed_tab_reported_by_an_action_ends_the_run():
    page = FakePage(FORM, results=[lambda a: ActionResult(success=False, action=a.to_string(), error_code="TAB_CRASHED",
                                                          message="The tab crashed.")])
    res = run(page, [{"action": "wait", "ms": 1}, {"action": "finish"}], AutoApprove())
    assert res.status == "error" and "crashed" in res.reason and len(res.steps) == 1


def test_a_failed_action_fails_the_step_and_the_script():
    page = FakePage(FORM, results=[lambda a: ActionResult(success=False, action=a.to_string(), error_code="OCCLUDED",
                                                          message="Covered by a banner.")])
    res = run(page, [{"action": "click", "target": {"name": "Show help"}}, {"action": "finish"}], AutoApprove())
    assert res.steps[0].status == "failed" and res.status == "error" and "Covered by a banner" in res.reason


# -- secrets and policies -------------------------------------------------------------------------------
def test_a_typed_password_never_leaves_the_loop():
    page = FakePage(FORM)
    bus, events = EventBus(), []
    bus.subscribe(events.append)
    steps = [{"action": "type", "target": {"name": "Password"}, "text": "hunter2-secret"}, {"action": "finish"}]
    res = run(page, steps, AutoApprove(), policy="auto", bus=bus)
    assert page.acted[0][0].text == "hunter2-secret"           # the page got the real value
    assert page.secrets == ["hunter2-secret"]                   # and every picture of it will be masked
    assert "hunter2" not in res.model_dump_json()
    assert events and not [ev.type for ev in events if "hunter2" in ev.model_dump_json()]
    assert res.steps[0].action.text == "••••••••"


@pytest.mark.parametrize("policy, asked", [("ask", [0, 1, 2, 3]), ("auto-safe", [1]), ("auto", [])])
def test_policies_ask_for_what_they_should(policy, asked):
    steps = [{"action": "type", "target": {"name": "Work email"}, "text": "ada@example.com"},
             {"action": "type", "target": {"name": "Password"}, "text": "hunter2"},
             {"action": "click", "target": {"name": "Show help"}}, {"action": "finish"}]
    gate = CallbackGate(lambda req: Decision.approve())
    res = run(FakePage(FORM), steps, gate, policy=policy)
    assert res.status == "success" and [r.step_index for r in gate.requests] == asked
    assert all(s.auto_approved != (s.index in asked) for s in res.steps)
    if policy == "auto-safe":
        assert "password" in gate.requests[0].sensitive_reasons[0] and "hidden characters" in gate.requests[0].summary


def test_each_step_is_published_as_it_happens():
    page = FakePage(FORM)
    bus, kinds = EventBus(), []
    bus.subscribe(lambda ev: kinds.append(ev.type))
    records: list[StepRecorded] = []
    bus.subscribe(lambda ev: records.append(ev) if isinstance(ev, StepRecorded) else None)
    run(page, [{"action": "check", "target": {"role": "checkbox"}}, {"action": "finish"}], AutoApprove(), bus=bus)
    assert set(kinds) == {"snapshot_taken", "step_proposed", "awaiting_approval", "action_done", "verification",
                          "plan_updated", "message_added", "status_changed", "step_recorded"}
    assert [r.record.index for r in records] == [0, 1]
    assert kinds.index("action_done") < kinds.index("step_recorded")


def test_a_proposal_is_what_the_gate_shows():
    page = FakePage(FORM)
    gate = AutoApprove()
    run(page, [{"action": "click", "target": {"role": "button", "name": "Create account"}, "thought": "submit it"}],
        gate)
    req = gate.requests[0]
    assert isinstance(req.proposal, ProposedStep) and req.proposal.thought == "submit it"
    assert req.target["name"] == "Create account" and "submits a form" in req.sensitive_reasons[0]
