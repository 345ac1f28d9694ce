"""A person may take longer than the input timeout to answer a dialog an approved step raised: the
step's input waits for the answer (it is not reported as a DevTools timeout), then the step goes on
and is verified with the answer applied. Other waits keep their timeouts.

The input timeout is lowered to 1 s and the person answers after about 2.5 s, so the old behaviour
(CDP_TIMEOUT, or "the action ran" without a verification) would show without waiting 30 s."""

from __future__ import annotations

import asyncio
import time

import pytest

from engine.actions import input as inp
from engine.errors import CDPTimeoutError, ErrorCode
from engine.loop import AgentLoop, ScriptedPlanner
from engine.models import Decision
from engine.models.browsing import DialogAnswer

from support.page_helpers import FAST, DialogPerson, out_text

SLOW_ANSWER_S = 2.5


@pytest.mark.parametrize("button,answer,shown", [
    ("Delete all", Decision.approve(), "deleted"),
    ("Mark all read", Decision(kind="reject", reason="not now"), "unmarked"),
    ("Rename", Decision(kind="approve", text="Slow answer"), "name: Slow answer"),
])
def test_a_slow_answer_to_a_dialog_does_not_time_out_the_step(harness, server, monkeypatch, button, answer, shown):
    monkeypatch.setattr(inp, "INPUT_TIMEOUT", 1.0)

    async def go(tab):
        tab.stability = FAST
        person = DialogPerson(answer, SLOW_ANSWER_S)
        steps = [{"action": "click", "target": {"role": "button", "name": button},
                  "expect": {"type": "element_appears", "text": shown}},
                 {"action": "finish"}]
        loop = AgentLoop(tab, ScriptedPlanner(steps), gate=person.gate, screenshots=False)
        t0 = time.monotonic()
        res = await person.run(loop, "answer slowly")
        assert person.asked_at is not None, "the dialog was never put to the person"
        assert time.monotonic() - t0 >= SLOW_ANSWER_S  # the answer really came after the input timeout
        assert res.status == "success", res.reason
        step = res.steps[0]
        r = step.result
        assert r.success and r.error_code is None, r.message
        assert "waited while its dialog was answered" not in r.message  # not the unverified fallback
        assert r.verification is not None and r.verification.success, r.message
        assert step.incidents.dialogs[0].answer.by == "person"
        assert await out_text(tab) == shown

    harness.page(server.url("dialogs_page.html"), go)


def test_a_command_that_is_not_waiting_on_a_dialog_still_times_out(harness, server):
    async def go(tab):
        page = tab.target
        sid, ctx = await page.context_for(page.main_frame_id)
        t0 = time.monotonic()
        with pytest.raises(CDPTimeoutError) as err:
            await page.dialogs.send_through("Runtime.evaluate", {
                "expression": "{ const t = Date.now(); while (Date.now() - t < 3000) {} 1 }", "contextId": ctx},
                session_id=sid, timeout=1.0)
        assert err.value.code is ErrorCode.CDP_TIMEOUT and "within 1 s" in str(err.value)
        assert time.monotonic() - t0 < 2.5
        await asyncio.sleep(2.5)  # let the busy script end before the page is used again

    harness.page(server.url("dialogs_page.html"), go)


@pytest.mark.parametrize("accept", [True, False])
def test_a_slow_answer_to_beforeunload_does_not_time_out_the_navigation(harness, server, accept):
    """The navigation's timeout is the page's time: the minutes a person takes over "Leave this page?"
    do not count (Playwright's own timeout would end the step while the question is still open)."""
    async def slow_person(d):
        await asyncio.sleep(SLOW_ANSWER_S)
        return DialogAnswer(accept=accept, by="person", reason="thought it over")

    async def go(tab):
        tab.stability = FAST
        snap = await tab.snapshot()
        assert (await tab.click(snap.find("button", "Edit")[0].node_id)).success  # the page has unsaved work
        tab.dialogs.handler = slow_person
        t0 = time.monotonic()
        r = await tab.navigate(server.url("loop_done.html"), timeout=1.0)
        waited = time.monotonic() - t0
        tab.dialogs.handler = None
        assert waited >= SLOW_ANSWER_S, "the question was not asked, or not waited for"
        assert r.error_code != ErrorCode.NAVIGATION_TIMEOUT, r.message
        [d] = [x for x in tab.dialogs.log if x.kind == "beforeunload"]
        assert d.answer.by == "person" and d.answer.accept is accept
        assert ("loop_done.html" in tab.url) is accept, (accept, tab.url, r.message)
        if accept:
            assert r.success, r.message

    harness.page(server.url("dialogs_page.html"), go)
