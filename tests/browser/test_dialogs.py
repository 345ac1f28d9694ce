"""JavaScript dialogs on real Chromium: never a hang, always reported, answered per policy and by whom.

The page (tests/fixtures/dialogs_page.html) writes what it got from each dialog into #out, so every
test reads the page's own account of the answer."""

from __future__ import annotations

import time

import pytest

from engine.errors import DialogOpenError, ErrorCode
from engine.loop import AgentLoop, AutoApprove, ScriptedPlanner
from engine.models import Decision

from support.page_helpers import FAST, DialogPerson, out_text
from support.paths import ROOT


def _loop(tab, steps, gate, **kw) -> AgentLoop:
    tab.stability = FAST
    return AgentLoop(tab, ScriptedPlanner(steps), gate=gate, screenshots=False, **kw)


def _button(name: str, **extra) -> dict:
    return {"action": "click", "target": {"role": "button", "name": name}, **extra}


# -- the engine: no handler, nothing hangs ----------------------------------------------------------
def test_a_confirm_nobody_answers_is_reported_at_once_and_answered_through_the_api(harness, server):
    async def go(tab):
        snap = await tab.snapshot()
        t0 = time.monotonic()
        r = await tab.click(snap.find("button", "Delete all")[0].node_id)
        assert time.monotonic() - t0 < 10, "the click hung on the dialog"
        assert r.error_code == ErrorCode.DIALOG_OPEN and 'confirm("Delete all records?")' in r.message
        assert tab.pending_dialog is not None and tab.pending_dialog.kind == "confirm"
        t0 = time.monotonic()
        with pytest.raises(DialogOpenError, match="Delete all records"):
            await tab.snapshot()
        for call in (tab.screenshot(), tab.wait_stable(), tab.recent_events()):
            with pytest.raises(DialogOpenError):
                await call
        assert time.monotonic() - t0 < 2, "a call into the page waited on the open dialog"
        info = await tab.answer_dialog(False)
        assert info.answer.accept is False and info.answer.by == "api" and tab.pending_dialog is None
        assert await out_text(tab) == "kept"
        with pytest.raises(Exception, match="No dialog is open"):
            await tab.answer_dialog(True)

    harness.page(server.url("dialogs_page.html"), go)


def test_an_alert_during_a_snapshot_does_not_hang_it(harness, server):
    async def go(tab):
        snap = await tab.snapshot()
        # (the click changes nothing on the page: not waited for the default 3 s)
        await tab.click(snap.find("button", "Alert later")[0].node_id, expect={"type": "any_change", "timeout_ms": 300})
        t0 = time.monotonic()
        for _ in range(5):  # the alert fires 50 ms after the click: some snapshot runs into it
            await tab.snapshot(force=True)
        assert time.monotonic() - t0 < 15
        alerts = [d for d in tab.dialogs.log if d.kind == "alert"]
        assert alerts and alerts[0].message == "Later" and alerts[0].answer.by == "policy"
        assert alerts[0].answer.accept and tab.pending_dialog is None

    harness.page(server.url("dialogs_page.html"), go)


# -- the loop: who answers -----------------------------------------------------------------------------
@pytest.mark.parametrize("decision,shown", [(Decision.approve(), "deleted"),
                                            (Decision(kind="reject", reason="no"), "kept")])
def test_under_ask_the_person_answers_a_confirm_through_the_gate(harness, server, decision, shown):
    async def go(tab):
        driver = DialogPerson(decision)
        res = await driver.run(_loop(tab, [_button("Delete all"), {"action": "finish"}], driver.gate),
                               "delete all")
        assert res.status == "success", res.reason
        assert len(driver.dialogs) == 1
        req = driver.dialogs[0]
        assert req.dialog.kind == "confirm" and req.dialog.message == "Delete all records?"
        assert "dialogs_page.html" in req.dialog.url and "OK or Cancel" in req.summary
        assert await out_text(tab) == shown
        inc = res.steps[0].incidents
        assert inc.dialog_count == 1 and inc.dialogs[0].answer.by == "person"
        assert inc.dialogs[0].answer.accept is (shown == "deleted")
        assert "answered " + ("OK" if shown == "deleted" else "Cancel") in res.steps[0].result.message
        assert res.steps[0].tab.index == 0 and "dialogs_page.html" in res.steps[0].tab.url

    harness.page(server.url("dialogs_page.html"), go)


def test_under_ask_a_prompt_is_answered_with_the_persons_text(harness, server):
    async def go(tab):
        driver = DialogPerson(Decision(kind="approve", text="Ada's records"))
        res = await driver.run(_loop(tab, [_button("Rename"), {"action": "finish"}], driver.gate), "rename")
        assert res.status == "success" and driver.dialogs[0].dialog.default_prompt == "old name"
        assert await out_text(tab) == "name: Ada's records"
        assert res.steps[0].incidents.dialogs[0].answer.text == "Ada's records"

    harness.page(server.url("dialogs_page.html"), go)


def test_auto_safe_answers_cancel_unless_the_person_approved_a_sensitive_step(harness, server):
    async def go(tab):
        gate = AutoApprove()
        res = await _loop(tab, [_button("Mark all read"), {"action": "finish"}], gate, policy="auto-safe").run("x")
        assert res.status == "success" and await out_text(tab) == "unmarked" and not gate.requests
        d = res.steps[0].incidents.dialogs[0]
        assert d.answer.accept is False and d.answer.by == "policy" and "auto-safe" in d.answer.reason
        assert any("confirm" in e.text for e in res.steps[0].events)
        # "Delete all" is destructive: the person is asked for the step, and having approved it, OK is given
        res = await _loop(tab, [_button("Delete all"), {"action": "finish"}], gate, policy="auto-safe").run("x")
        assert len(gate.requests) == 1 and await out_text(tab) == "deleted"
        assert "approved as sensitive" in res.steps[0].incidents.dialogs[0].answer.reason

    harness.page(server.url("dialogs_page.html"), go)


def test_auto_accepts_and_a_planner_can_answer_in_advance(harness, server):
    async def go(tab):
        res = await _loop(tab, [_button("Delete all"), {"action": "finish"}], AutoApprove(), policy="auto").run("x")
        assert await out_text(tab) == "deleted" and res.steps[0].incidents.dialogs[0].answer.by == "policy"
        steps = [{"action": "dialog", "accept": False}, _button("Delete all"), {"action": "finish"}]
        res = await _loop(tab, steps, AutoApprove(), policy="auto").run("x")
        assert res.status == "success" and await out_text(tab) == "kept"
        assert res.steps[1].incidents.dialogs[0].answer.by == "planner"

    harness.page(server.url("dialogs_page.html"), go)


@pytest.mark.parametrize("decision,stays", [(Decision(kind="reject"), True), (Decision.approve(), False)])
def test_beforeunload_on_navigation_goes_to_the_person(harness, server, decision, stays):
    async def go(tab):
        driver = DialogPerson(decision)
        steps = [_button("Edit"), {"action": "navigate", "url": server.url("loop_done.html")}, {"action": "finish"}]
        res = await driver.run(_loop(tab, steps, driver.gate), "leave")
        assert [r.dialog.kind for r in driver.dialogs] == ["beforeunload"]
        nav = res.steps[1]
        assert ("dialogs_page.html" in tab.url) is stays
        assert nav.incidents.dialogs[0].kind == "beforeunload"
        assert (nav.status == "failed") is stays  # the person said stay: the navigation did not happen

    harness.page(server.url("dialogs_page.html"), go)


def test_a_flood_of_dialogs_is_counted_stopped_and_said(harness, server):
    async def go(tab):
        steps = [_button("Many confirms"), {"action": "finish", "answer": "done"}]
        res = await _loop(tab, steps, AutoApprove(), policy="auto").run("x")
        step = res.steps[0]
        assert step.status == "failed" and "flood" in step.note
        assert step.incidents.dialog_flood and step.incidents.dialog_count == 40
        assert await out_text(tab) == "confirmed 20"  # 20 accepted by the policy, the rest dismissed unasked
        assert res.incidents and "dialog flood" in res.incidents[0]
        assert "dialog flood" in res.messages[-1].content

    harness.page(server.url("dialogs_page.html"), go)


def test_vigil_run_asks_the_person_at_the_terminal_and_says_the_answer(server, tmp_path):
    import subprocess
    import sys

    root = ROOT
    cmd = [sys.executable, "-m", "engine.cli", "run", "click Rename", "--url", server.url("dialogs_page.html"),
           "--approve", "ask", "--no-record"]
    # approve the click, answer the prompt with a text, approve the finish
    p = subprocess.run(cmd, input="y\nAda Lovelace\ny\n", capture_output=True, text=True, timeout=90, cwd=root)
    assert p.returncode == 0, p.stdout + p.stderr
    assert 'The page asks: prompt("New name?")' in p.stdout and 'Enter for "old name"' in p.stdout
    step = p.stdout[p.stdout.index("[1] "):].splitlines()[0]  # the step line follows the prompt it answered
    assert step.startswith("[1] ok") and 'answered OK with "Ada Lovelace" (by person)' in step
    assert "(note: the page raised 1 dialog(s))" in p.stdout


@pytest.mark.parametrize("policy,stays", [("auto-safe", True), ("auto", False)])
def test_closing_a_tab_lets_its_beforeunload_ask(harness, server, policy, stays):
    async def go(tab):
        b = tab.browser
        steps = [{"action": "new_tab", "url": server.url("dialogs_page.html")}, _button("Edit"),
                 {"action": "close_tab", "optional": True}, {"action": "finish"}]
        loop = _loop(tab, steps, AutoApprove(), policy=policy)
        try:
            res = await loop.run("edit then close")
            close = res.steps[2]
            assert close.incidents.dialogs[0].kind == "beforeunload"
            assert (close.status == "failed") is stays and (len(b.tabs) == 2) is stays
            if stays:
                assert "the answer was to stay" in close.result.message and loop.page is not tab
            else:
                assert loop.page is tab and "Closed tab 1" in close.result.message
        finally:
            for t in list(b.tabs):
                if t is not tab:
                    await t.close()

    harness.page(server.url("loop_done.html"), go)


def test_the_offline_planner_answers_in_advance_when_the_task_says_confirm(harness, server):
    from engine.planners.heuristic import HeuristicPlanner

    async def go(tab):
        tab.stability = FAST
        gate = AutoApprove()
        loop = AgentLoop(tab, HeuristicPlanner(), gate=gate, policy="auto-safe", screenshots=False)
        res = await loop.run("click Mark all read and confirm")
        assert res.status == "success", res.reason
        assert [s.action.to_string() for s in res.steps][:1] == ["dialog(true)"]
        assert any("answers the page's dialog OK" in r for r in gate.requests[0].sensitive_reasons)
        assert await out_text(tab) == "marked" and res.steps[1].incidents.dialogs[0].answer.by == "planner"

    harness.page(server.url("dialogs_page.html"), go)
