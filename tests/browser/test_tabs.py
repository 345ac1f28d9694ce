"""Tabs are first-class, on real Chromium: a target=_blank link and a window.open popup are followed and
reported, a popup that closes itself returns the loop to its opener, a flood of popups is stopped and
said, the tab actions run from scripts, and a two-tab task completes with the scripted and the offline
planner. Action strings and the script format of the tab actions are checked without a browser."""

from __future__ import annotations

import pytest

from engine.errors import ActionStringError
from engine.loop import AgentLoop, AutoApprove, ScriptedPlanner
from engine.loop.action_string import parse_action_string
from engine.loop.scripted import load_script
from engine.models import Action, TabsChanged
from engine.planners.heuristic import HeuristicPlanner

from support.page_helpers import FAST

REPORT_TASK = "open the report in a new tab and read its total"
# a tab opened elsewhere is the effect: the wait for a change ends when the new page is announced
QUICK = {"type": "any_change"}


def _loop(tab, planner, **kw) -> AgentLoop:
    tab.stability = FAST
    planner = ScriptedPlanner(planner) if isinstance(planner, list) else planner
    return AgentLoop(tab, planner, gate=AutoApprove(), policy=kw.pop("policy", "auto"), screenshots=False, **kw)


async def _close_others(tab) -> None:
    """Leave the shared browser as the test found it: only the test's own tab open, and active (a page
    still being adopted included)."""
    b = tab.browser
    await b.settle_new_tabs()
    for t in list(b.tabs):
        if t is not tab:
            await t.close()
    if tab in b.tabs:
        await b.switch_to(b.index_of(tab))


def _run(harness, server, go, page="tabs_home.html"):
    async def wrapped(tab):
        try:
            return await go(tab)
        finally:
            await _close_others(tab)
    return harness.page(server.url(page), wrapped)


# -- following tabs ---------------------------------------------------------------------------------
def test_a_target_blank_link_is_followed_and_reported(harness, server):
    async def go(tab):
        loop = _loop(tab, [{"action": "click", "target": {"role": "link", "name": "Open the report"}},
                           {"action": "finish"}])
        changes = []
        loop.bus.subscribe(lambda ev: changes.append(ev) if isinstance(ev, TabsChanged) else None)
        res = await loop.run("open the report")
        step = res.steps[0]
        assert res.status == "success" and step.status == "completed"
        assert step.tab.index == 0 and "tabs_home.html" in step.tab.url
        opened = step.incidents.tabs_opened
        assert len(opened) == 1 and opened[0].title == "Quarterly report" and opened[0].opener == 0
        assert "opened a new tab: Quarterly report" in step.result.message
        assert step.verification.success and "opened a new tab" in step.verification.feedback
        assert loop.page is not tab and "tabs_report.html" in loop.page.url and res.steps[1].tab.index == 1
        assert any(e.kind == "browser" and "opened a new tab" in e.text for e in step.events)
        assert changes and changes[-1].active == 1 and len(changes[-1].tabs) == 2

    _run(harness, server, go)


def test_a_tab_opened_late_ends_the_wait_for_a_change_when_it_opens(harness, server):
    """The page opens its tab 800 ms after the click and changes nothing itself: the step is verified by the
    new tab as soon as Chromium announces it, not after the expectation's whole timeout (10 s here), and a
    tab that opens after the step is not lost."""
    async def go(tab):
        loop = _loop(tab, [{"action": "click", "target": {"role": "button", "name": "Prepare the statement"},
                            "expect": {"type": "any_change", "timeout_ms": 10_000}}, {"action": "finish"}])
        res = await loop.run("prepare the statement")
        step = res.steps[0]
        assert res.status == "success", res.reason
        assert step.verification.success and "opened a new tab (Quarterly report)" in step.verification.feedback
        assert step.result.timings_ms["verify"] < 9_000, step.result.timings_ms
        assert "tabs_report.html" in loop.page.url and len(tab.browser.tabs) == 2

    _run(harness, server, go, page="tabs_later.html")


def test_a_popup_is_followed_and_when_it_closes_itself_the_loop_returns_to_its_opener(harness, server):
    async def go(tab):
        steps = [{"action": "click", "target": {"role": "button", "name": "Sign in with Provider"}, "expect": QUICK},
                 {"action": "click", "target": {"role": "button", "name": "Allow"}},
                 {"action": "finish"}]
        loop = _loop(tab, steps)
        res = await loop.run("sign in")
        assert res.status == "success", res.reason
        first, second = res.steps[0], res.steps[1]
        assert first.incidents.tabs_opened[0].title == "Provider sign-in"
        assert second.tab.index == 1 and "tabs_popup.html" in second.tab.url and second.status == "completed"
        assert "closed itself" in second.result.message and second.incidents.switched_to.index == 0
        assert loop.page is tab and tab.browser.active_tab is tab and len(tab.browser.tabs) == 1
        snap = await tab.snapshot()
        assert snap.find(name="Signed in as Ada") or any("Signed in as Ada" in (n.text or "") for n in snap.nodes())

    _run(harness, server, go)


def test_a_flood_of_popups_is_closed_and_said(harness, server):
    async def go(tab):
        res = await _loop(tab, [{"action": "click", "target": {"role": "button", "name": "Open everything"},
                                 "expect": QUICK}, {"action": "finish"}]).run("open everything")
        step = res.steps[0]
        assert step.status == "failed" and "popup flood" in step.note
        assert len(step.incidents.tabs_opened) == 10 and step.incidents.popups_blocked == 4
        assert len(tab.browser.tabs) == 11
        assert any("popup flood" in x for x in res.incidents) and "popup flood" in res.messages[-1].content

    _run(harness, server, go)


def test_the_tab_actions_run_from_a_script(harness, server):
    async def go(tab):
        steps = [{"action": "new_tab", "url": server.url("tabs_report.html")},
                 {"action": "switch_tab", "tab": 0},
                 {"action": "close_tab", "tab": 1},
                 {"action": "switch_tab", "tab": 5, "optional": True},
                 {"action": "finish"}]
        loop = _loop(tab, steps)
        res = await loop.run("tabs")
        assert [s.status for s in res.steps] == ["completed", "completed", "completed", "failed", "completed"]
        assert res.steps[0].result.message.startswith("Opened a new tab (1)")
        assert res.steps[1].tab.index == 1 and "Switched to tab 0" in res.steps[1].result.message
        assert len(tab.browser.tabs) == 1 and loop.page is tab
        assert "There is no tab 5" in res.steps[3].result.message

    _run(harness, server, go)


# -- a two-tab task ---------------------------------------------------------------------------------
@pytest.mark.parametrize("planner", ["script", "offline"])
def test_a_two_tab_task_completes(harness, server, planner):
    script = [{"action": "click", "target": {"role": "link", "name": "Open the report"}, "expect": QUICK},
              {"action": "finish", "answer": "the report is open"}]

    async def go(tab):
        p = ScriptedPlanner(script) if planner == "script" else HeuristicPlanner()
        loop = _loop(tab, p)
        res = await loop.run(REPORT_TASK)
        assert res.status == "success", res.reason
        assert "tabs_report.html" in loop.page.url and len(tab.browser.tabs) == 2
        if planner == "offline":
            assert res.steps[0].action.name == "new_tab" and "1,234.50 EUR" in res.answer
        return res

    _run(harness, server, go)


# -- the action model, strings and scripts -------------------------------------------------------
@pytest.mark.parametrize("text,expected", [
    ("switchTab(1)", "switch_tab(1)"), ("switch_tab(0)", "switch_tab(0)"), ("closeTab(2)", "close_tab(2)"),
    ("close_tab()", "close_tab()"), ('newTab("http://example.com/")', 'new_tab("http://example.com/")'),
    ("new_tab()", "new_tab()"), ("dialog(true)", "dialog(true)"), ("dialog(cancel)", "dialog(false)"),
    ('dialog(ok, "Ada")', 'dialog(true, "Ada")'), ('upload(12, "/tmp/a.pdf", "/tmp/b.pdf")',
                                                   'upload(12, "/tmp/a.pdf", "/tmp/b.pdf")')])
def test_tab_dialog_and_upload_action_strings_round_trip(text, expected):
    a = parse_action_string(text)
    assert a.to_string() == expected and parse_action_string(a.to_string()) == a


@pytest.mark.parametrize("text,problem", [("switch_tab()", "needs the tab's index"), ("dialog()", "accept"),
                                          ("dialog(maybe)", r"true \(OK\) or false"), ("upload(12)", "file path"),
                                          ("switch_tab(x)", "must be a number")])
def test_bad_tab_and_dialog_action_strings_say_what_is_wrong(text, problem):
    with pytest.raises(ActionStringError, match=problem):
        parse_action_string(text)


def test_the_script_format_takes_the_new_actions():
    steps = load_script([{"action": "new_tab", "url": "http://127.0.0.1/x"}, {"action": "switch_tab", "tab": 0},
                         {"action": "close_tab"}, {"action": "dialog", "accept": False},
                         {"action": "upload", "target": 4, "paths": "/tmp/a.txt"}])
    assert [s.action.to_string() for s in steps] == ['new_tab("http://127.0.0.1/x")', "switch_tab(0)", "close_tab()",
                                                     "dialog(false)", 'upload(4, "/tmp/a.txt")']
    with pytest.raises(Exception, match="switch_tab needs"):
        load_script([{"action": "switch_tab"}])
    assert Action(name="close_tab", tab=1).to_string() == "close_tab(1)"


def test_the_planner_observation_lists_the_open_tabs(harness, server):
    from engine.loop.planner import Observation
    from engine.planners.payload import build_observation

    async def go(tab):
        await _loop(tab, [{"action": "new_tab", "url": server.url("tabs_report.html")}, {"action": "finish"}]).run("x")
        b = tab.browser
        snap = await b.active_tab.snapshot()
        obs = Observation(task="t", step_index=0, snapshot=snap, url=snap.url, tabs=await b.refresh_titles())
        text = build_observation(obs).text
        assert "TABS:" in text and "[0] Accounts home" in text and "[1] Quarterly report" in text
        assert "tabs_report.html (active)" in text

    _run(harness, server, go)


# -- the step line tells the truth ----------------------------------------------------------------
def test_a_step_that_ran_but_was_not_verified_says_so_and_fail_is_a_failure(harness, server):
    from engine.cli.run import result_line, step_line

    async def go(tab):
        steps = [{"action": "click", "target": {"role": "button", "name": "Do nothing"}},
                 {"action": "fail", "reason": "nothing to do here"}]
        return await _loop(tab, steps).run("press the button")

    res = harness.page(server.url("uploads_page.html"), go)
    first, last = res.steps
    assert first.status == "completed" and not first.verification.success
    assert step_line(first).startswith("[1] unverified click(")
    turn = next(m for m in res.messages if m.role == "assistant")
    assert turn.status == "error" and turn.error.startswith("Unverified:") and turn.metadata["unverified"]
    assert step_line(last).startswith("[2] FAILED   fail(")
    assert res.exit_code == 1 and result_line(res) == "failed: nothing to do here"


@pytest.mark.parametrize("tool,args,expected", [
    ("switch_tab", {"tab": 1}, "switch_tab(1)"), ("close_tab", {}, "close_tab()"),
    ("new_tab", {"url": "http://127.0.0.1/x"}, 'new_tab("http://127.0.0.1/x")'),
    ("dialog", {"accept": False}, "dialog(false)"), ("dialog", {"accept": True, "text": "Ada"}, 'dialog(true, "Ada")')])
def test_a_models_tab_and_dialog_tool_calls_become_actions(harness, server, tool, args, expected):
    from engine.loop.planner import Observation
    from engine.planners.openai_planner import OpenAIPlanner

    from support.fake_llm import FakeLLM, call

    llm = FakeLLM()
    try:
        async def go(tab):
            snap = await tab.snapshot()
            llm.add(call(tool, args))
            p = OpenAIPlanner(base_url=llm.base_url, model="fake-model", api_key="sk-test", timeout=10)
            try:
                step = await p.propose(Observation(task="t", step_index=0, snapshot=snap, url=snap.url, page=tab))
            finally:
                await p.aclose()
            return step.action.to_string()

        assert harness.page(server.url("tabs_home.html"), go) == expected
    finally:
        llm.close()
