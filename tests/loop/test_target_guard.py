"""An approval covers exactly what the person saw: after approval and right before input is dispatched the
target must still be the same element (role, name, tab, frame, document, box within a few px); otherwise
nothing runs and the step comes back to the gate with TARGET_CHANGED saying what changed. Real Chromium,
a page that renames, pushes down or nudges the button while the step waits for approval."""

from __future__ import annotations

import re

from engine.errors import ErrorCode
from engine.loop import AgentLoop, CallbackGate, ScriptedPlanner
from engine.loop.target_guard import target_drift
from engine.models import Decision
from engine.observe.stability import StabilityConfig

FAST = StabilityConfig(dom_quiet_ms=120, network_quiet_ms=150, timeout_ms=1500)
CLICK = [{"action": "click", "target": {"role": "button", "name": "Add to cart"}}, {"action": "finish", "answer": "ok"}]


def _run(harness, server, page_change: str, later):
    """Run CLICK under `ask`: at the first approval request the page does `page_change` and the person
    approves; every later request is answered by `later(request)`. Returns (result, requests, clicked)."""

    async def go(tab):
        tab.stability = FAST

        async def decide(req):
            if len(gate.requests) == 1:
                await tab.page.evaluate(page_change)
                return Decision.approve()
            return later(req)

        gate = CallbackGate(decide)
        loop = AgentLoop(tab, ScriptedPlanner(CLICK), gate=gate, policy="ask", screenshots=False,
                         target_timeout_ms=1000)
        res = await loop.run("add to cart")
        clicked = await tab.page.evaluate("document.getElementById('log').textContent")
        return res, gate.requests, clicked

    return harness.page(server.url("target_swap.html"), go)


def test_a_button_renamed_under_the_approval_comes_back_to_the_person_and_nothing_runs(harness, server):
    answers = iter([Decision(kind="reject", reason="not what I approved")])
    res, reqs, clicked = _run(harness, server, "swapName()", lambda req: next(answers, Decision(kind="stop")))
    assert clicked == "nothing", "the renamed button was never clicked"
    again = reqs[1]
    assert again.error and ErrorCode.TARGET_CHANGED in again.error, again.error
    first_id = reqs[0].target["id"]
    assert f'button "Add to cart" [{first_id}] is now button "Delete account" [{first_id}]' in again.error
    assert again.target["name"] == "Delete account", "the person now sees the element as it is"
    assert "Delete account" in again.summary
    assert any("destructive" in r for r in again.sensitive_reasons), again.sensitive_reasons
    rejected = [s for s in res.steps if s.status == "rejected"]
    assert rejected and rejected[0].decision.reason == "not what I approved"
    assert not any(s.status == "completed" and s.action and s.action.name == "click" for s in res.steps)


def test_a_button_pushed_down_under_the_approval_is_asked_again_then_runs(harness, server):
    res, reqs, clicked = _run(harness, server, "pushDown()", lambda req: Decision.approve())
    assert res.status == "success", res.reason
    assert ErrorCode.TARGET_CHANGED in (reqs[1].error or ""), reqs[1].error
    moved = re.search(r"it moved by \+0, \+(\d+) px", reqs[1].error)
    assert moved and int(moved.group(1)) >= 60, reqs[1].error  # the 60 px banner (and the margins it brings)
    assert reqs[1].target["bounds"][1] > reqs[0].target["bounds"][1] + 50
    assert clicked == "Add to cart", "approved again on the element as it is now: it ran once"
    clicks = [s for s in res.steps if s.action and s.action.name == "click"]
    assert len(clicks) == 1 and clicks[0].status == "completed"


def test_a_move_of_a_pixel_or_two_is_the_same_target(harness, server):
    res, reqs, clicked = _run(harness, server, "nudge()", lambda req: Decision.approve())
    assert res.status == "success", res.reason
    assert clicked == "Add to cart"
    assert not any(r.error for r in reqs), [r.error for r in reqs]
    assert len(reqs) == 2, "the click, then the finish: nothing asked twice"


def test_scrolling_is_no_move_and_a_rename_is_named(harness, server):
    async def go(tab):
        seen = await tab.snapshot()
        node = seen.find(role="button", name="Add to cart")[0]
        await tab.page.evaluate("window.scrollBy(0, 120)")
        scrolled = await tab.snapshot(force=True)
        assert scrolled.context.scroll_y >= 100
        assert not target_drift(node, seen, scrolled), target_drift(node, seen, scrolled).describe()
        fixed = seen.find(role="button", name="Help")[0]  # position: fixed — it stays on screen as the page scrolls
        assert not target_drift(fixed, seen, scrolled), target_drift(fixed, seen, scrolled).describe()
        await tab.page.evaluate("swapName()")
        renamed = await tab.snapshot(force=True)
        d = target_drift(node, seen, renamed)
        assert d.identity and "is now button \"Delete account\"" in d.describe()
        other = target_drift(node, seen, scrolled, same_tab=False)
        assert other.changes == ["the agent's tab is not the one the step was approved in"]

    harness.page(server.url("target_swap.html"), go)
