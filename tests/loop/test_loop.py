"""The supervised observe–act loop on real pages: a scripted run end to end, a tab that crashes
mid-step, and the `vigil run` command. The loop's decisions (every approval decision, stops, late and
stale targets, limits, broken planners and gates, secrets, policies) are tested without a browser in
tests/loop/test_loop_decisions.py; grounding, action strings and scripts in tests/loop/test_loop_parts.py."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

from engine.loop import AgentLoop, AutoApprove, CallbackGate, EventBus, ScriptedPlanner
from engine.models import Decision
from engine.observe.stability import StabilityConfig

from support.paths import ROOT

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


def _loop(tab, planner, gate, **kw) -> AgentLoop:
    tab.stability = FAST
    kw.setdefault("screenshots", False)
    return AgentLoop(tab, planner if not isinstance(planner, list) else ScriptedPlanner(planner), gate=gate, **kw)


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
        assert all(s.screenshot_before and s.screenshot_after and s.screenshot_distance is not None for s in acted), \
            [(s.screenshot_before, s.screenshot_after, s.screenshot_distance) for s in acted]
        assert acted[4].screenshot_distance > 10
        # (a step's after picture that came after its record follows it: step_picture)
        kinds = {ev.type for ev in events} - {"step_picture"}
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
