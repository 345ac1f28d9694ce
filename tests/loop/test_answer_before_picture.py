"""A tool call's step is answered without waiting for its after picture (issue 41): the MCP client gets the step's
result — decided, run, verified, recorded — while the picture is still being taken; the next step is proposed and
judged meanwhile, and the picture is in, and attached to the step's record, before that step's input goes out
(nothing of the next step gets into it).

Real Chromium on the fixture server; each real capture is answered 400 ms late, so a result that waited for its
picture would come more than 400 ms after its input."""

from __future__ import annotations

import asyncio
import time

from engine.loop import AgentLoop, AutoApprove
from engine.mcp.planner import ToolCallPlanner
from engine.models import Action, ActionDone, ProposedStep, StepPictureTaken, StepProposed, StepRecorded, TargetQuery

SLOW_CAPTURE_S = 0.4


def _slow_captures(tab) -> None:
    """Every real capture of the tab is answered SLOW_CAPTURE_S late."""
    capture = tab.screenshot

    async def slow(**kw):
        shot = await capture(**kw)
        await asyncio.sleep(SLOW_CAPTURE_S)
        return shot
    tab.screenshot = slow


def _step(action: str, name: str, role: str, **kw) -> ProposedStep:
    return ProposedStep(action=Action(name=action, target=TargetQuery(role=role, name=name), **kw))


def _inputs_seen(tab, events: list[tuple[str, int, float]]) -> None:
    """Each input command the page gets is noted (as "input", -1) in `events`, then sent as before."""
    dialogs = tab.target.dialogs
    send = dialogs.send_through

    async def noted(method, params=None, **kw):
        if method.startswith("Input."):
            events.append(("input", -1, time.monotonic()))
        return await send(method, params, **kw)
    dialogs.send_through = noted


def test_a_tool_calls_answer_does_not_wait_for_the_after_picture_and_the_next_step_does(server, harness):
    events: list[tuple[str, int, float]] = []

    def seen(ev) -> None:
        kind = {ActionDone: "done", StepRecorded: "recorded", StepPictureTaken: "picture",
                StepProposed: "proposed"}.get(type(ev))
        if kind is not None:
            events.append((kind, ev.step_index if kind != "recorded" else ev.record.index, time.monotonic()))

    async def go(tab):
        _slow_captures(tab)
        _inputs_seen(tab, events)
        planner = ToolCallPlanner()
        loop = AgentLoop(tab, planner, gate=AutoApprove(), policy="auto")
        loop.bus.subscribe(seen)
        run = asyncio.ensure_future(loop.run("type a name, then ask for help"))
        first = await planner.submit(_step("type", "Full name", "textbox", text="Ada"))
        answered = time.monotonic()
        second = await planner.submit(_step("click", "Show help", "button"))
        last = asyncio.ensure_future(planner.submit(ProposedStep(action=Action(name="finish", answer="done"))))
        res = await run
        planner.run_ended(res)  # (as the MCP server's run does: it answers the call that ended the run)
        await last
        return first, answered, second, res

    first, answered, second, res = harness.page(server.url("loop_form.html"), go)
    assert res.status == "success", res.reason
    assert first.status == "completed" and second.status == "completed", (first, second)
    rec = first.record
    assert rec is not None and rec.verification is not None and rec.verification.success, rec
    at = {(kind, i): t for kind, i, t in events}
    # the answer came with the step verified and recorded, before its picture (which was still being taken)
    assert at[("done", 0)] <= at[("recorded", 0)] <= answered < at[("picture", 0)], events
    assert answered - at[("done", 0)] < SLOW_CAPTURE_S, "the answer waited for the step's after picture"
    # the next step was proposed while that picture was still being taken, and its input went out only once the
    # picture was in; every picture reached its step's record
    assert at[("proposed", 1)] < at[("picture", 0)] < at[("done", 1)], events
    second_inputs = [t for kind, _i, t in events if kind == "input" and t > at[("proposed", 1)]]
    assert second_inputs and min(second_inputs) > at[("picture", 0)], events
    for st in res.steps[:2]:
        assert st.screenshot_after and st.screenshot_distance is not None, st
