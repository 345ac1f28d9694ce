"""The supervised observe–act loop on real pages: grounding, policies, action strings, scripts,
every approval decision, each policy, a scripted run end to end, bad input and the `vigil run` CLI."""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine.errors import ActionStringError, ScriptError, UnknownNodeError
from engine.loop import (AgentLoop, AutoApprove, CallbackGate, EventBus, QueueGate, ScriptedPlanner, TerminalGate,
                         describe_node, load_script, needs_approval, parse_action_string, resolve_target,
                         sensitive_reasons)
from engine.loop.policy import site_of
from engine.models import Action, Decision, ExpectedOutcome, ProposedStep, TargetQuery
from engine.observe.stability import StabilityConfig

ROOT = Path(__file__).resolve().parent.parent
FAST = StabilityConfig(dom_quiet_ms=120, network_quiet_ms=150, timeout_ms=1500)

SIGNUP = [
    {"action": "type", "target": {"name": "Work email"}, "text": "ada@example.com"},
    {"action": "type", "target": {"name": "Full name"}, "text": "Ada Lovelace"},
    {"action": "check", "target": {"role": "checkbox", "name": "I agree"}},
    {"action": "select", "target": {"role": "combobox", "name": "Country"}, "option": "Germany"},
    {"action": "click", "target": {"role": "button", "name": "Create account"},
     "expect": {"type": "navigation", "or": {"type": "element_appears", "text": "Thank you"}}},
    {"action": "finish", "answer": "signed up"},
]


async def _ids(tab) -> dict[str, str]:
    """HTML id attribute → node ID in the current snapshot."""
    snap = await tab.snapshot()
    return {n.attrs["id"]: n.node_id for n in snap.nodes() if n.attrs and "id" in n.attrs}


class Recorder:
    """A planner around ScriptedPlanner that keeps every observation it was given."""

    def __init__(self, steps):
        self.inner = ScriptedPlanner(steps)
        self.seen = []

    async def propose(self, obs):
        self.seen.append((obs.last_outcome, obs.feedback))
        return await self.inner.propose(obs)


def _loop(tab, planner, gate, **kw) -> AgentLoop:
    tab.stability = FAST
    kw.setdefault("screenshots", False)
    return AgentLoop(tab, planner if not isinstance(planner, list) else ScriptedPlanner(planner), gate=gate, **kw)


# -- grounding, policy, action strings, scripts ------------------------------------------------
def test_grounding_and_policy(harness, server):
    async def go(tab):
        snap = await tab.snapshot()
        ids = await _ids(tab)
        r = lambda **q: resolve_target(snap, TargetQuery(**q)).node_id  # noqa: E731
        assert r(name="work EMAIL") == ids["email"]                          # exact, case-insensitive
        assert r(name="  agree to ") == ids["terms"]                         # substring
        dels = [n.node_id for n in snap.find(role="button", name="Delete", exact=True)]
        assert r(role="button", name="Delete") == dels[0] and r(role="button", name="Delete", nth=1) == dels[1]
        assert r(role="button", name="delete all") not in dels               # exact before substring
        assert r(text="Create your account") == snap.find(role="heading")[0].node_id
        assert resolve_target(snap, ids["create"]).node_id == ids["create"]
        assert describe_node(snap.get(ids["create"])) == f'button "Create account" [{ids["create"]}]'
        with pytest.raises(UnknownNodeError) as e:
            r(role="button", name="Create acount")
        assert "Nothing on" in str(e.value) and f'button "Create account" [{ids["create"]}]' in str(e.value)
        with pytest.raises(UnknownNodeError) as e:
            r(role="button", name="Delete", nth=5, exact=True)
        assert "Only 2 node(s)" in str(e.value)
        with pytest.raises(UnknownNodeError) as e:
            resolve_target(snap, "9999")
        assert "9999" in str(e.value)

        node = lambda k: snap.get(ids[k])  # noqa: E731
        def S(a, k=None, p=None):
            return sensitive_reasons(Action(**a), node(k) if k else None, snap, snap.context.domain, p)
        assert "password" in S({"name": "type", "target": ids["pw"], "text": "x"}, "pw")[0]
        assert "one-time-code" in S({"name": "type", "target": ids["code"], "text": "1"}, "code")[0]
        assert S({"name": "type", "target": ids["email"], "text": "x"}, "email") == []
        assert "submit" in S({"name": "type", "target": ids["email"], "text": "x", "submit": True}, "email")[0]
        assert "submit" in S({"name": "press", "key": "Enter", "target": ids["email"]}, "email")[0]
        assert "submit" in S({"name": "click", "target": ids["create"]}, "create")[0]
        assert S({"name": "click", "target": ids["helpbtn"]}, "helpbtn") == []       # type=button
        assert "file input" in S({"name": "click", "target": ids["cv"]}, "cv")[0]
        assert "leaves" in S({"name": "click", "target": ids["away"]}, "away")[0]     # link to localhost
        assert S({"name": "click", "target": ids["home"]}, "home") == []
        assert "leaves" in S({"name": "navigate", "url": "https://example.org/x"})[0]
        assert S({"name": "navigate", "url": "/loop_done.html"}) == []
        flagged = ProposedStep(action=Action(name="wait", ms=1), sensitive=True, sensitive_reason="pays money")
        assert S({"name": "wait", "ms": 1}, None, flagged) == ["pays money"]

    harness.page(server.url("loop_form.html"), go)
    assert site_of("shop.example.co.uk") == "example.co.uk" and site_of("a.b.example.com") == "example.com"
    assert site_of("127.0.0.1") == "127.0.0.1"
    for policy, plain, sensitive in (("ask", True, True), ("auto", False, False), ("auto-safe", False, True)):
        assert needs_approval(policy, []) is plain and needs_approval(policy, ["x"]) is sensitive


def test_action_strings():
    good = {
        "click(12)": {"name": "click", "target": "12"},
        'type(5, "ada@example.com")': {"name": "type", "target": "5", "text": "ada@example.com"},
        "setValue(f1_13, 'it\\'s, \"fine\"', submit=true)": {"name": "type", "target": "f1_13",
                                                             "text": "it's, \"fine\"", "submit": True},
        'press("Enter")': {"name": "press", "key": "Enter"},
        'press(4, "Control+A")': {"name": "press", "key": "Control+A", "target": "4"},
        'select(7, "Germany")': {"name": "select", "target": "7", "option": "Germany"},
        'scroll("up", 3, amount=200)': {"name": "scroll", "direction": "up", "target": "3", "amount": 200},
        'navigate("http://x.test/?a=1,b=(2)")': {"name": "navigate", "url": "http://x.test/?a=1,b=(2)"},
        "wait(250);": {"name": "wait", "ms": 250}, "back()": {"name": "back"},
        'finish("done, thanks")': {"name": "finish", "answer": "done, thanks"}, "fail()": {"name": "fail"},
    }
    for s, want in good.items():
        got = parse_action_string(s).model_dump(exclude_defaults=True)
        assert got == want, s
        assert parse_action_string(parse_action_string(s).to_string()) == parse_action_string(s)
    bad = {"click(abc)": "node ID", "click(12": "closing ')'", "type(5)": "needs text", "jump(1)": "Unknown action",
           "click(1, 2)": "positional", 'type(5, "x", submit=maybe)': "true or false", 'type(5, "oops)': "Unterminated",
           "click(12) now": "Unexpected text", "": "Empty", 'scroll("sideways")': "direction", "click(force=1, 3)":
           "follows a keyword", "click(3, text=1)": "does not take text="}
    for s, words in bad.items():
        with pytest.raises(ActionStringError) as e:
            parse_action_string(s)
        assert e.value.code == "BAD_ACTION" and words in str(e.value), (s, str(e.value))


def test_script_loading(tmp_path):
    js = tmp_path / "s.json"
    js.write_text(json.dumps(SIGNUP))
    ym = tmp_path / "s.yaml"
    ym.write_text("- {action: type, target: 12, text: 12345, timeout_ms: 300, optional: true}\n"
                  "- action: click\n  target: {role: button, name: Go}\n  expect: navigation\n  sensitive: true\n"
                  "- {action: wait, ms: 500}\n- {action: finish, answer: done}\n")
    a, b = load_script(js), load_script(str(ym))
    assert [s.action.name for s in a] == ["type", "type", "check", "select", "click", "finish"]
    assert a[4].expect.type == "navigation" and a[4].expect.or_.text == "Thank you"
    assert b[0].action.target == "12" and b[0].action.text == "12345" and b[0].optional and b[0].timeout_ms == 300
    assert b[1].action.target == TargetQuery(role="button", name="Go")
    assert b[1].sensitive and b[1].expect.type == "navigation"
    assert load_script(json.dumps(SIGNUP))[0].description.startswith('Type "ada@example.com" into')
    bad = {
        '[{"action": "click", "target": 1},': "not valid JSON",
        "- action: click\n  target: [1\n": "not valid YAML",
        '{"action": "click"}': "must be a list",
        "[]": "no steps",
        '[{"action": "wait", "ms": 1}, "click"]': "Step 2: must be a mapping",
        '[{"target": 3}]': 'Step 1: has no "action"',
        '[{"action": "wait", "ms": 1}, {"action": "teleport"}]': "Step 2: unknown action 'teleport'",
        '[{"action": "type", "target": 5}]': "Step 1: type: type needs text",
        '[{"action": "click", "target": "Work email"}]': 'Step 1: bad target',
        '[{"action": "click", "target": {}}]': "Step 1: bad target",
        '[{"action": "click", "taget": 5}]': "Step 1: unknown key(s) 'taget'",
        '[{"action": "click", "target": 5, "expect": {"type": "teleport"}}]': "Step 1: bad expect",
        '[{"action": "click", "target": 5, "timeout_ms": -1}]': "Step 1: timeout_ms",
        str(tmp_path / "missing.yaml"): "does not exist",
    }
    for text, words in bad.items():
        with pytest.raises(ScriptError) as e:
            load_script(text)
        assert e.value.code == "BAD_SCRIPT" and words in str(e.value), (text, str(e.value))


def test_event_bus_and_terminal_gate():
    async def go():
        bus, got = EventBus(), []
        bus.subscribe(lambda ev: 1 / 0)                      # a broken subscriber is only logged
        unsub = bus.subscribe(got.append)

        async def slow(ev):
            await asyncio.sleep(0)
            got.append(("async", ev))
        bus.subscribe(slow)
        stream = bus.stream()
        bus.publish("a")
        unsub()
        bus.publish("b")
        await bus.drain()
        bus.close()
        streamed = [ev async for ev in stream]
        assert got == ["a", ("async", "a"), ("async", "b")] and streamed == ["a", "b"]

        answers = io.StringIO('x\ne\nclick(abc)\ne\nclick(12)\nnavigation\nr\nnot this one\nt\ntype(5, "Grace")\n'
                              "t\n\n\ns\nq\n")
        out = io.StringIO()
        gate = TerminalGate(stdin=answers, out=out)
        from engine.models import ApprovalRequest
        req = ApprovalRequest(step_index=0, summary='Click button "Go" [12]', target={"id": "12", "role": "button",
                              "name": "Go", "bounds": [1, 2, 3, 4]}, sensitive_reasons=["submits a form"],
                              proposal=ProposedStep(thought="go on", action=Action(name="click", target="12")))
        d = [await gate.decide(req) for _ in range(6)]
        assert d[0].kind == "edit" and d[0].action.target == "12" and d[0].expected_outcome.type == "navigation"
        assert d[1].kind == "reject" and d[1].reason == "not this one"
        assert d[2].kind == "take_over" and d[2].action.text == "Grace"
        assert d[3].kind == "take_over" and d[3].action is None
        assert d[4].kind == "skip" and d[5].kind == "stop"
        assert (await gate.decide(req)).kind == "stop"       # end of input
        assert (await asyncio.wait_for(gate.decide(req), 2)).kind == "stop"   # and it stays ended
        text = out.getvalue()
        assert 'Step 1: Click button "Go" [12]' in text and "id 12 at x=1 y=2 3x4" in text
        assert "SENSITIVE: submits a form" in text and "needs a node ID" in text and "[a]pprove" in text

    asyncio.run(go())


# -- runs on real pages ----------------------------------------------------------------------
def test_five_step_scripted_run_asks_every_step(harness, server):
    async def go(tab):
        bus, events = EventBus(), []
        bus.subscribe(events.append)
        stream = bus.stream()
        gate = AutoApprove()
        res = await _loop(tab, SIGNUP, gate, bus=bus, screenshots=True).run("Sign Ada up")
        bus.close()
        streamed = [ev async for ev in stream]
        assert res.status == "success" and res.answer == "signed up", res.reason
        assert len(gate.requests) == 6 and not any(s.auto_approved for s in res.steps)      # ask: every step
        assert "submits a form" in gate.requests[4].sensitive_reasons[0]
        acted = [s for s in res.steps if s.action.name != "finish"]
        assert len(acted) == 5 and all(s.result.verified and s.verification.success for s in acted)
        assert acted[4].verification.verified_outcome == "navigation" and "loop_done.html" in res.url
        assert "country=de" in res.url and "terms=on" in res.url and "ada%40example.com" in res.url
        assert all(s.screenshot_before and s.screenshot_after and s.screenshot_distance is not None for s in acted)
        assert acted[4].screenshot_distance > 10
        kinds = {ev.type for ev in events}
        assert kinds == {"snapshot_taken", "step_proposed", "awaiting_approval", "action_done", "verification",
                         "plan_updated", "message_added", "status_changed", "step_recorded"}
        assert [ev.type for ev in streamed] == [ev.type for ev in events]
        statuses = [ev.status for ev in events if ev.type == "status_changed"]
        assert statuses[0] == "running" and statuses[-1] == "success"
        assert res.messages[0].role == "user" and res.messages[0].content == "Sign Ada up"
        assert [m.sequenceNumber for m in res.messages] == list(range(len(res.messages)))
        turns = [m for m in res.messages if m.role == "assistant"]
        assert len(turns) == 6 and all(m.status == "success" and m.actionString for m in turns)
        assert [s.status for s in res.plan.steps] == ["completed"] * 6 and res.plan.steps[0].id == "step_0"

    harness.page(server.url("loop_form.html"), go)


def test_policies_auto_and_auto_safe(harness, server):
    script = [{"action": "type", "target": {"name": "Work email"}, "text": "ada@example.com"},
              {"action": "type", "target": {"name": "Password"}, "text": "hunter2"},
              {"action": "click", "target": {"name": "Show help"}, "expect": {"type": "element_appears",
                                                                               "text": "Help is on the way"}},
              {"action": "finish"}]

    async def go(tab):
        for policy, asked in (("auto", []), ("auto-safe", [1])):
            await tab.goto(server.url("loop_form.html"))
            gate = CallbackGate(lambda req: Decision.approve())
            bus, events = EventBus(), []
            bus.subscribe(events.append)
            res = await _loop(tab, script, gate, policy=policy, bus=bus).run("fill the form")
            assert res.status == "success", res.reason
            # the password was typed, but nothing the run publishes or records carries it
            assert "hunter2" not in res.model_dump_json() and events
            assert not [ev.type for ev in events if "hunter2" in ev.model_dump_json()]
            assert any(s.action and s.action.text == "••••••••" for s in res.steps)
            assert [r.step_index for r in gate.requests] == asked, policy
            assert all(s.auto_approved != (s.index in asked) for s in res.steps)
            assert await tab.page.evaluate("pw.value") == "hunter2"
        assert "password" in gate.requests[0].sensitive_reasons[0] and "hidden characters" in gate.requests[0].summary

    harness.page(server.url("loop_form.html"), go)


def test_decisions_edit_skip_invalid_edit(harness, server):
    script = [{"action": "type", "target": {"name": "Work email"}, "text": "wrong@example.com"},
              {"action": "type", "target": {"name": "Full name"}, "text": "Nobody"},
              {"action": "click", "target": {"name": "Show help"}},
              {"action": "check", "target": {"role": "checkbox"}},
              {"action": "finish", "answer": "ok"}]

    async def go(tab):
        ids = await _ids(tab)
        calls = []

        def decide(req):
            calls.append(req)
            i = req.step_index
            if i == 0:
                return Decision(kind="edit", action=Action(name="type", target=req.target["id"], text="ada@example.com"))
            if i == 1:
                return Decision(kind="skip")
            if i == 2:
                return Decision(kind="edit", expected_outcome=ExpectedOutcome(type="element_appears",
                                                                              text="Help is on the way"))
            if i == 3 and req.error is None:
                return Decision(kind="edit", action=Action(name="click", target="9999"))
            return Decision.approve()

        res = await _loop(tab, script, CallbackGate(decide)).run("edit things")
        assert res.status == "success", res.reason
        assert [s.status for s in res.steps] == ["completed", "skipped", "completed", "completed", "completed"]
        s0, s1, s2, s3 = res.steps[:4]
        assert s0.decision.kind == "edit" and s0.action.text == "ada@example.com" and s0.actor == "agent"
        assert s1.action is None and s1.result is None
        assert s2.verification.verified_outcome == "element_appears"
        assert s2.verification.expected.text == "Help is on the way"
        assert [c.step_index for c in calls] == [0, 1, 2, 3, 3, 4]
        assert "9999" in calls[4].error and "nothing ran" in calls[4].error.lower()
        assert s3.decision.kind == "approve" and s3.action.target == ids["terms"]
        vals = await tab.page.evaluate("[email.value, document.getElementById('name').value, terms.checked]")
        assert vals == ["ada@example.com", "", True]

    harness.page(server.url("loop_form.html"), go)


def test_reject_reaches_planner_and_retry(harness, server):
    script = [{"action": "type", "target": {"name": "Work email"}, "text": "a@b.c"},
              {"action": "click", "target": {"name": "Show help"}}, {"action": "finish"}]

    async def go(tab):
        answers = iter([Decision(kind="reject", reason="please try again"), Decision.approve(),
                        Decision(kind="reject", reason="wrong button, use the other one"), Decision.approve()])
        planner = Recorder(script)
        gate = CallbackGate(lambda req: next(answers))
        res = await _loop(tab, planner, gate).run("reject twice")
        assert [r.proposal.action.name for r in gate.requests] == ["type", "type", "click", "fail"]
        assert planner.seen[1] == ("rejected", "The person rejected this step (nothing ran). Their reason: please try again")
        assert planner.seen[3][0] == "rejected" and "wrong button" in planner.seen[3][1]
        assert res.status == "error" and "wrong button, use the other one" in res.reason and "Step 2" in res.reason
        assert [s.status for s in res.steps] == ["rejected", "completed", "rejected", "completed"]
        assert any(m.role == "user" and m.content == "wrong button, use the other one" for m in res.messages)

    harness.page(server.url("loop_form.html"), go)


def test_take_over_with_and_without_action(harness, server):
    script = [{"action": "type", "target": {"name": "Full name"}, "text": "Agent"},
              {"action": "click", "target": {"name": "Show help"}},
              {"action": "finish", "answer": "done"}]

    async def go(tab):
        ids = await _ids(tab)
        planner = Recorder(script)

        async def decide(req):
            if req.step_index == 0:
                return Decision(kind="take_over", action=Action(name="type", target=ids["name"], text="Grace Hopper"))
            if req.step_index == 1:
                await tab.page.click("#terms")          # the person acts in the page directly
                return Decision(kind="take_over")
            return Decision.approve()

        res = await _loop(tab, planner, CallbackGate(decide)).run("take over")
        assert res.status == "success", res.reason
        h0, h1 = res.steps[:2]
        assert h0.actor == "human" and h0.action.text == "Grace Hopper" and h0.result.verified
        assert h1.actor == "human" and h1.action is None and h1.result is None and "directly" in h1.note
        assert planner.seen[1][0] == "taken_over" and "Grace Hopper" in planner.seen[1][1]
        assert planner.seen[2][0] == "taken_over" and "acted in the page directly" in planner.seen[2][1]
        vals = await tab.page.evaluate("[document.getElementById('name').value, terms.checked, "
                                       "document.getElementById('status').textContent]")
        assert vals == ["Grace Hopper", True, ""]                  # the agent's own steps never ran

    harness.page(server.url("loop_form.html"), go)


def test_stop_at_gate_and_stop_decision(harness, server):
    script = [{"action": "type", "target": {"name": "Full name"}, "text": "x"}, {"action": "wait", "ms": 10},
              {"action": "finish"}]

    async def go(tab):
        gate = QueueGate()
        loop = _loop(tab, script, gate)
        task = asyncio.ensure_future(loop.run("stop me"))
        while gate.pending is None:
            await asyncio.sleep(0.02)
        gate.submit(Decision.approve())
        while gate.pending is None or gate.pending.step_index != 1:
            await asyncio.sleep(0.02)
        loop.stop()
        res = await asyncio.wait_for(task, 5)
        assert res.status == "interrupted" and [s.status for s in res.steps] == ["completed", "stopped"]

        res = await _loop(tab, script, CallbackGate(lambda r: Decision(kind="stop"))).run("stop at once")
        assert res.status == "interrupted" and res.steps[0].status == "stopped" and res.steps[0].decision.kind == "stop"

        slow = [{"action": "wait", "ms": 600}, {"action": "wait", "ms": 1}, {"action": "finish"}]
        loop = _loop(tab, slow, AutoApprove(), policy="auto")
        asyncio.get_running_loop().call_later(0.2, loop.stop)     # while the first wait runs
        res = await loop.run("stop while acting")
        assert res.status == "interrupted" and [s.status for s in res.steps] == ["completed"]
        assert res.steps[0].result.success and res.steps[0].timings_ms["act"] >= 600

    harness.page(server.url("loop_form.html"), go)


def test_stale_target_is_proposed_again(harness, server):
    script = [{"action": "click", "target": {"role": "button", "name": "help"},
               "expect": {"type": "element_appears", "text": "Help is on the way"}}, {"action": "finish"}]

    async def go(tab):
        planner = Recorder(script)

        async def decide(req):
            if len(planner.seen) == 1:   # first proposal: the page re-labels the button while we wait
                await tab.page.evaluate("document.getElementById('helpbtn').textContent = 'Get help'")
            return Decision.approve()

        gate = CallbackGate(decide)
        res = await _loop(tab, planner, gate).run("stale")
        assert res.status == "success", res.reason
        assert [r.target["name"] for r in gate.requests[:2]] == ["Show help", "Get help"]
        assert planner.seen[1][0] == "stale" and "Show help" in planner.seen[1][1]
        assert len(res.steps) == 2 and res.steps[0].result.verified
        assert any(m.role == "system" and "page changed" in m.content for m in res.messages)

    harness.page(server.url("loop_form.html"), go)


def test_bad_targets_and_step_limit(harness, server):
    async def go(tab):
        res = await _loop(tab, [{"action": "click", "target": 9999, "timeout_ms": 300}], AutoApprove()).run("bad id")
        assert res.status == "error" and res.steps[0].status == "failed" and res.steps[0].result.error_code == "NOT_FOUND"
        assert "Step 1" in res.reason and "9999" in res.reason and "did not appear within 0.3 s" in res.reason

        never = [{"action": "click", "target": {"role": "button", "name": "Create acount"}, "timeout_ms": 400}]
        res = await _loop(tab, never, AutoApprove(), policy="auto").run("never")
        assert res.status == "error" and 'Closest: button "Create account"' in res.reason

        optional = [{"action": "click", "target": {"name": "Nowhere"}, "timeout_ms": 200, "optional": True},
                    {"action": "click", "target": {"name": "Late button"}, "timeout_ms": 4000,
                     "expect": {"type": "element_appears", "text": "Late clicked"}}, {"action": "finish"}]
        await tab.page.evaluate("addLater(1200, 'Late button')")
        res = await _loop(tab, optional, AutoApprove(), policy="auto").run("late")
        assert res.status == "success" and [s.status for s in res.steps] == ["failed", "completed", "completed"]
        assert res.steps[1].verification.success

        waits = [{"action": "wait", "ms": 1}] * 5
        res = await _loop(tab, waits, AutoApprove(), policy="auto", max_steps=2).run("too long")
        assert res.status == "error" and "step limit of 2" in res.reason and len(res.steps) == 2

    harness.page(server.url("loop_form.html"), go)


def test_tab_crash_mid_action_ends_cleanly(harness, server):
    script = [{"action": "wait", "ms": 1500}, {"action": "finish"}]

    async def go(tab):
        async def crash():
            await asyncio.sleep(0.3)
            try:
                await tab.cdp.send("Page.crash", session_id=tab.session_id, timeout=5)
            except Exception:
                pass  # the renderer dies before it can answer

        def decide(req):
            asyncio.ensure_future(crash())
            return Decision.approve()

        res = await _loop(tab, script, CallbackGate(decide)).run("crash")
        assert res.status == "error" and "crashed" in res.reason, res.reason
        assert res.steps[0].status == "failed" and "crashed" in res.steps[0].note and len(res.steps) == 1
        assert res.messages[-1].role == "system" and "crashed" in res.messages[-1].content

    harness.page(server.url("loop_form.html"), go)


def test_vigil_run_cli(server, tmp_path):
    good = tmp_path / "signup.yaml"
    good.write_text("\n".join("- " + json.dumps(s) for s in SIGNUP[:2] + SIGNUP[-1:]))
    bad = tmp_path / "bad.json"
    bad.write_text('[{"action": "wait", "ms": 1}, {"action": "type", "target": 5}]')
    cmd = [sys.executable, "-m", "engine.cli", "run", "Sign up", "--url", server.url("loop_form.html")]
    p = subprocess.run(cmd + ["--script", str(good), "--approve", "auto"], capture_output=True, text=True,
                       timeout=60, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.strip().splitlines()
    assert lines[0].startswith('[1] ok') and 'type(' in lines[0] and "ada@example.com" in lines[0]
    assert lines[-1] == "finished: signed up" and len(lines) == 4
    p = subprocess.run(cmd + ["--script", str(bad)], capture_output=True, text=True, timeout=30, cwd=ROOT)
    assert p.returncode == 2 and "BAD_SCRIPT" in p.stderr and "Step 2" in p.stderr and "Traceback" not in p.stderr
    p = subprocess.run(cmd + ["--script", str(good), "--approve", "ask", "--json"], input="a\nq\n",
                       capture_output=True, text=True, timeout=60, cwd=ROOT)
    out = json.loads(p.stdout)
    assert p.returncode == 1 and out["status"] == "interrupted" and [s["status"] for s in out["steps"]] == ["completed",
                                                                                                         "stopped"]
    assert "[a]pprove" in p.stderr and "Step 2" in p.stderr
