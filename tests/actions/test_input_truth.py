"""What the input really hit (issue [1/7], part 5): a page that changes what is under the pointer after
Vigil's hit test — on the first pointermove, on mousedown, with an overlay on pointerdown, inside open and
closed shadow roots, inside a cross-origin frame — never gets the click on the element it swapped in: the
step fails with MISDIRECTED naming what received the input, and a local server that records every request
shows the delete request never arrived. Ordinary buttons that re-render themselves still click as before."""

from __future__ import annotations

import asyncio

import pytest

from engine.loop import AgentLoop, CallbackGate
from engine.loop.scripted import ScriptedPlanner
from engine.models import Decision

from support.paths import FIXTURES
from support.recording_server import RecordingServer, Reply


class Recorder(RecordingServer):
    """Serves the fixture pages, answers every POST with 204 and records every request (method, path) the
    browser sends (a POST with its body)."""

    def __init__(self) -> None:
        super().__init__({"POST /*": Reply(status=204, content_type=None, length=False)}, static=FIXTURES)
        self.seen = self.view(lambda r: ("GET", r.target) if r.method == "GET" else ("POST", r.target, r.text()),
                              where=lambda r: r.method in ("GET", "POST"))

    def deletes(self) -> list:
        return [r for r in self.seen if r[0] == "POST" and r[1].startswith("/delete")]


@pytest.fixture(scope="module")
def recorder():
    r = Recorder()
    yield r
    r.close()


def _id(snap, name: str) -> str:
    hits = snap.find("button", name, exact=True)
    assert hits, f"fixture lacks button {name!r}"
    return hits[0].node_id


async def _page_state(tab, frame_id: str | None = None) -> dict:
    """What the page's own scripts saw, read in the frame's document (out-of-process frames included)."""
    sid, ctx = await tab.context_for(frame_id or tab.main_frame_id)
    r = await tab.cdp.send("Runtime.evaluate", {
        "expression": "({deleted: window.deleted || 0, status: document.getElementById('status').textContent,"
                      " log: window.log || []})", "contextId": ctx, "returnByValue": True}, session_id=sid)
    return r["result"]["value"]


def _assert_misdirected(r, got: str, meant: str = "Continue") -> None:
    assert not r.success, f"a swapped click passed: {r.message}"
    assert r.error_code == "MISDIRECTED", (r.error_code, r.message)
    assert r.verification is None and "Verified" not in r.message, r.message
    assert f'"{got}' in r.message, r.message
    assert f' "{meant}' in r.message and ("not to " in r.message or "not on " in r.message), r.message
    assert "take a new snapshot" in r.message


def test_swaps_under_the_pointer_never_get_the_click(recorder, harness):
    async def go(tab):
        out = {}
        # 1. the first pointermove swaps in the delete button: no press is sent at all
        snap = await tab.snapshot()
        r = await tab.click(_id(snap, "Continue"))
        out["move"] = (r, await _page_state(tab))
        # 2. mousedown swaps it: the release and the click reach the delete button (and a delegated listener)
        await tab.goto(recorder.url("hostile_input_down.html"))
        snap = await tab.snapshot()
        r = await tab.click(_id(snap, "Continue"))
        out["down"] = (r, await _page_state(tab))
        # 3. pointerdown opens a full-window overlay with the delete button
        await tab.goto(recorder.url("hostile_input_overlay.html"))
        snap = await tab.snapshot()
        r = await tab.click(_id(snap, "Continue"))
        out["overlay"] = (r, await _page_state(tab))
        # 3b. pointerdown puts a frame over the window: the release lands in that frame's document
        await tab.goto(recorder.url("hostile_input_overlay.html"))
        snap = await tab.snapshot()
        out["framed"] = (await tab.click(_id(snap, "Next step")), await tab.page.evaluate(
            "[window.framedRelease || 0, getComputedStyle(document.getElementById('trap')).pointerEvents]"))
        # 4. the swap inside an open and inside a closed shadow root
        await tab.goto(recorder.url("hostile_input_shadow.html"))
        snap = await tab.snapshot()
        r1 = await tab.click(_id(snap, "Continue open"))
        snap = await tab.snapshot()
        r2 = await tab.click(_id(snap, "Continue closed"))
        out["shadow"] = (r1, r2, await _page_state(tab))
        # 5. the mousedown swap inside a cross-origin (out-of-process) frame
        inner = recorder.url("hostile_input_down.html", host="localhost")
        await tab.goto(recorder.url(f"hostile_input_frame.html?src={inner}"))
        for _ in range(100):
            snap = await tab.snapshot(force=True)
            if snap.find("button", "Continue", exact=True):
                break
            await asyncio.sleep(0.05)
        node = snap.get(_id(snap, "Continue"))
        assert node.frame_id != tab.main_frame_id and tab.frames[node.frame_id].cross_process
        r = await tab.click(node.node_id)
        out["frame"] = (r, await _page_state(tab, node.frame_id))
        return out

    out = harness.page(recorder.url("hostile_input_move.html"), go)
    r, st = out["move"]
    _assert_misdirected(r, "Delete everything")
    assert r.data["misdirected"]["phase"] == "move", r.data  # seen when the pointer arrived: never pressed
    assert "Nothing was clicked" in r.message and "(#del)" in r.message, r.message
    assert not any(e.startswith("doc:pointerdown") or e.startswith("doc:mousedown") for e in st["log"]), st["log"]
    assert st["deleted"] == 0 and st["status"] == "Ready", st

    r, st = out["down"]
    _assert_misdirected(r, "Delete everything")
    assert r.data["misdirected"]["phase"] == "press", r.data
    assert st["log"] == ["go:mousedown"], st  # the page saw the press on Continue, and nothing after it
    assert st["deleted"] == 0 and st["status"] == "Ready", st

    r, st = out["overlay"]
    _assert_misdirected(r, "Delete everything")
    assert st["deleted"] == 0 and st["status"] == "Ready", st

    r, (framed, events) = out["framed"]
    _assert_misdirected(r, "", "Next step")
    assert "iframe" in r.message and "(#trap)" in r.message, r.message
    assert framed == 0, "the frame put under the pointer got the release"
    assert events == "auto", events  # the frame was held off only for the press: given back as it was

    r1, r2, st = out["shadow"]
    _assert_misdirected(r1, "Delete everything open", "Continue open")
    _assert_misdirected(r2, "Delete everything closed", "Continue closed")
    assert st["deleted"] == 0 and st["status"] == "Ready", st

    r, st = out["frame"]
    _assert_misdirected(r, "Delete everything")
    assert st["deleted"] == 0 and st["status"] == "Ready", st

    assert recorder.deletes() == [], recorder.deletes()
    assert any(s[0] == "GET" and "hostile_input_down.html" in s[1] for s in recorder.seen)  # the server did listen


def test_a_page_that_attacks_the_guard_and_double_clicks_and_checks(recorder, harness):
    """The page lies through the built-ins the guard would use (event paths, hit tests, cancelling, maps),
    tries to replace its entry point, or claims it first; double_click and check
    go through the same guard."""
    async def go(tab):
        out = {}
        snap = await tab.snapshot()
        out["lies"] = (await tab.click(_id(snap, "Continue")), await _page_state(tab),
                       await tab.page.evaluate("window.tamper"))
        await tab.goto(recorder.url("hostile_input_tamper.html?claim"))
        snap = await tab.snapshot()
        out["claim"] = (await tab.click(_id(snap, "Continue")), await _page_state(tab),
                        await tab.page.evaluate("window.tamper"))
        await tab.goto(recorder.url("hostile_input_down.html"))
        snap = await tab.snapshot()
        out["double"] = (await tab.double_click(_id(snap, "Continue")), await _page_state(tab))
        await tab.goto(recorder.url("hostile_input_down.html"))
        snap = await tab.snapshot()
        keep = snap.find("checkbox", "Keep my data")[0].node_id
        out["check"] = (await tab.check(keep), await _page_state(tab),
                        await tab.page.evaluate("document.getElementById('keep').checked"))
        return out

    out = harness.page(recorder.url("hostile_input_tamper.html"), go)
    r, st, tamper = out["lies"]
    assert "found" in tamper and "define refused" in tamper, tamper  # it did find and attack the guard
    _assert_misdirected(r, "Delete everything")
    assert st["deleted"] == 0 and st["status"] == "Ready", st

    r, st, tamper = out["claim"]
    assert "claim:true" in tamper, tamper  # the page claimed the guard before Vigil's first click
    assert not r.success and r.error_code == "MISDIRECTED" and "tampered" in r.message, r.message
    assert st["deleted"] == 0 and st["status"] == "Ready", st  # never clicked at all

    r, st = out["double"]
    _assert_misdirected(r, "Delete everything")
    assert st["deleted"] == 0 and st["status"] == "Ready", st

    r, st, checked = out["check"]
    _assert_misdirected(r, "Delete all data", "Keep my data")
    assert st["deleted"] == 0 and checked is False, (st, checked)
    assert recorder.deletes() == []


def test_buttons_that_re_render_themselves_still_click(recorder, harness):
    """The control: React-style buttons replaced by an identical one at the same spot (after the click, or
    when the pointer enters it, the click handled on the root) are ordinary clicks, verified as before."""
    async def go(tab):
        out = []
        for name in ("Save", "Save", "Like", "Like"):
            snap = await tab.snapshot()
            out.append(await tab.click(_id(snap, name)))
        counts = await tab.page.evaluate("[document.getElementById('saves').textContent, "
                                         "document.getElementById('likes').textContent]")
        return out, counts

    results, counts = harness.page(recorder.url("hostile_input_rerender.html"), go)
    for r in results:
        assert r.success and r.error_code is None, r.message
        assert r.verification is not None and r.verification.success, r.message
    assert counts == ["2", "2"]
    assert recorder.deletes() == []


def test_the_loop_records_a_misdirected_click_as_failed_under_auto_safe(recorder, harness):
    asked: list = []

    async def go(tab):
        planner = ScriptedPlanner([{"action": "click", "target": {"role": "button", "name": "Continue"}},
                                   {"action": "finish", "answer": "done"}])

        def gate(req):
            asked.append(req)
            return Decision.approve()
        loop = AgentLoop(tab, planner, gate=CallbackGate(gate), policy="auto-safe", max_steps=2)
        res = await loop.run("finish the set-up")
        return res, await _page_state(tab)

    res, st = harness.page(recorder.url("hostile_input_down.html"), go)
    step = res.steps[0]
    assert step.status == "failed", (step.status, step.note)
    assert step.result is not None and step.result.error_code == "MISDIRECTED", step.result
    assert 'The click went to button "Delete everything" (#del)' in step.result.message, step.result.message
    assert 'not to button "Continue"' in step.result.message
    assert not step.result.success and step.result.verification is None
    assert st["deleted"] == 0, st
    assert recorder.deletes() == []
