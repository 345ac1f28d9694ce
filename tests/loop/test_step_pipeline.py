"""The step pipeline (issue [13]): a step's before picture is the last step's after picture only while
the page is unchanged; the session store's background writes end a run with a clear error when they
fail, and a run that is stopped or cancelled leaves every recorded step and message in the store."""

from __future__ import annotations

import asyncio
import io
import time

from PIL import Image

from engine.loop import AgentLoop, AutoApprove, ScriptedPlanner
from engine.models import StepRecorded
from engine.store import Store
from engine.store.recorder import SessionRecorder

RED_BLOCK = ("const d = document.createElement('div'); d.id = 'block'; "
             "d.style.cssText = 'position:fixed;left:0;top:0;width:300px;height:300px;background:#f00;z-index:9';"
             "document.body.appendChild(d);")


class MutatingPlanner(ScriptedPlanner):
    """A scripted planner that changes the page (a big red block) while it proposes step `at`."""

    def __init__(self, steps, at: int):
        super().__init__(steps)
        self.at = at

    async def propose(self, obs):
        if obs.step_index == self.at:
            await obs.page.page.evaluate(RED_BLOCK)
        return await super().propose(obs)


def _red(jpeg: bytes) -> bool:
    r, g, b = Image.open(io.BytesIO(jpeg)).convert("RGB").getpixel((40, 40))
    return r > 200 and g < 60 and b < 60


def _count_captures(tab, captures: list[float], delay: float = 0.0) -> None:
    """Each real capture of the tab is noted in `captures` when asked for (and answered `delay` s late)."""
    capture = tab.screenshot

    async def counted(**kw):
        captures.append(time.monotonic())
        shot = await capture(**kw)
        if delay:
            await asyncio.sleep(delay)
        return shot
    tab.screenshot = counted


async def _recorded_run(tab, store, planner, task: str, on_event=None):
    """The planner's steps as an auto-approved run recorded into `store`: (session id, RunResult)."""
    rec = SessionRecorder(store)
    loop = AgentLoop(tab, planner, gate=AutoApprove(), policy="auto")
    if on_event is not None:
        loop.bus.subscribe(on_event)
    rec.start(loop, task, tab.url, planner="script", policy="auto")
    res = await loop.run(task)
    rec.finish(res)
    return rec.session_id, res


def _pictures(store, sid: str, steps=(0, 1)) -> dict[tuple[int, str], bytes]:
    """The stored before/after JPEGs of these steps, by (step, side)."""
    blobs = store.load(sid).blobs
    return {(i, side): store.get_blob(blobs[i][f"screenshot_{side}"]) for i in steps for side in ("before", "after")}


def test_before_picture_reused_only_while_the_page_is_unchanged(server, harness, tmp_path):
    store = Store.open(tmp_path / "s.db")
    steps = [{"action": "type", "target": {"role": "textbox", "name": "Full name"}, "text": "Ada"},
             {"action": "type", "target": {"role": "textbox", "name": "Work email"}, "text": "a@b.co"},
             {"action": "click", "target": {"role": "button", "name": "Show help"}},
             {"action": "finish", "answer": "done"}]

    captures: list[float] = []

    async def go(tab):
        _count_captures(tab, captures)
        sid, res = await _recorded_run(tab, store, MutatingPlanner(steps, at=1), "fill")
        assert res.status == "success", res.reason
        return sid, res

    sid, res = harness.page(server.url("loop_form.html"), go)
    data = store.load(sid)
    blob = {i: data.blobs[i] for i in range(3)}
    pics = {(i, side): store.get_blob(blob[i][f"screenshot_{side}"]) for i in range(3) for side in ("before", "after")}
    # the page changed while step 1 was proposed: its before picture is a new one, showing the change
    assert blob[1]["screenshot_before"] != blob[0]["screenshot_after"]
    assert _red(pics[(1, "before")]) and not _red(pics[(0, "after")])
    # nothing changed between step 1's end and step 2: the same picture (and the same stored blob)
    assert blob[2]["screenshot_before"] == blob[1]["screenshot_after"]
    assert res.steps[2].screenshot_before == res.steps[1].screenshot_after
    assert len(captures) == 5  # before and after of steps 0 and 1, only the after picture of step 2
    # every acted step still has both pictures and both snapshots, and the step's own time for them
    for i in range(3):
        assert {"screenshot_before", "screenshot_after", "snapshot_before", "snapshot_after"} <= set(blob[i])
        assert res.steps[i].timings_ms.get("screenshots") is not None
    assert [s.status for s in data.steps[:3]] == ["completed"] * 3
    store.close()


def test_a_failing_background_write_ends_the_run_with_a_clear_error(server, harness, tmp_path):
    store = Store.open(tmp_path / "s.db")
    steps = [{"action": "type", "target": {"role": "textbox", "name": "Full name"}, "text": f"Ada {i}"}
             for i in range(6)] + [{"action": "finish", "answer": "done"}]

    async def go(tab):
        rec = SessionRecorder(store)
        loop = AgentLoop(tab, ScriptedPlanner(steps), gate=AutoApprove(), policy="auto")

        def break_store(ev):  # after step 0 is stored, the disk refuses chat messages (a real SQLite error)
            if isinstance(ev, StepRecorded) and ev.record.index == 0:
                with store._lock:
                    store._conn.execute("CREATE TEMP TRIGGER no_messages BEFORE INSERT ON messages "
                                        "BEGIN SELECT RAISE(ABORT, 'disk refused the write'); END")
        rec.start(loop, "fill", tab.url, planner="script", policy="auto")
        loop.bus.subscribe(break_store)
        res = await loop.run("fill")
        rec.finish(res)
        return rec, res

    rec, res = harness.page(server.url("loop_form.html"), go)
    assert res.status == "error"
    assert "session store failed" in res.reason and "disk refused the write" in res.reason, res.reason
    assert "no step goes unrecorded" in res.reason
    assert rec.error and "disk refused the write" in rec.error
    assert len(res.steps) < 6  # the run stopped instead of going on unrecorded
    data = store.load(rec.session_id)
    assert [s.index for s in data.steps][:1] == [0]  # what was stored before the failure stays
    store.close()


def test_a_cancelled_run_leaves_its_steps_and_messages_in_the_store(server, harness, tmp_path):
    db = tmp_path / "s.db"
    store = Store.open(db)
    steps = [{"action": "type", "target": {"role": "textbox", "name": "Full name"}, "text": f"Ada {i}"}
             for i in range(6)] + [{"action": "finish", "answer": "done"}]
    seen: dict = {}

    async def go(tab):
        rec = SessionRecorder(store)
        loop = AgentLoop(tab, ScriptedPlanner(steps), gate=AutoApprove(), policy="auto")
        run = None

        def cancel_after_step_1(ev):
            if isinstance(ev, StepRecorded) and ev.record.index == 1:
                # writes queue up behind a slow one, then the run is cancelled (Ctrl+C) with them pending
                store.writer.submit(lambda: time.sleep(0.5), "a slow write")
                asyncio.get_running_loop().call_soon(run.cancel)
        rec.start(loop, "fill", tab.url, planner="script", policy="auto")
        loop.bus.subscribe(cancel_after_step_1)
        run = asyncio.ensure_future(loop.run("fill"))
        try:
            await run
        except asyncio.CancelledError:
            seen["cancelled"] = True
        seen["messages"] = [m.content for m in loop.journal.messages]
        seen["steps"] = [r.index for r in loop.journal.records]
        return rec.session_id  # no rec.finish(): the process goes down, only the store is closed

    sid = harness.page(server.url("loop_form.html"), go)
    assert seen.get("cancelled")
    store.close()  # what `vigil run` does on Ctrl+C: it waits for the pending writes
    again = Store.open(db)
    data = again.load(sid)
    assert [s.index for s in data.steps] == seen["steps"] == [0, 1]
    assert [m.content for m in data.messages] == seen["messages"]
    assert data.messages[-1].content == "The run was cancelled."
    again.close()


def test_a_stopped_run_has_written_everything_when_it_returns(server, harness, tmp_path):
    store = Store.open(tmp_path / "s.db")
    steps = [{"action": "type", "target": {"role": "textbox", "name": "Full name"}, "text": f"Ada {i}"}
             for i in range(6)] + [{"action": "finish", "answer": "done"}]

    async def go(tab):
        rec = SessionRecorder(store)
        loop = AgentLoop(tab, ScriptedPlanner(steps), gate=AutoApprove(), policy="auto")

        def stop_after_step_1(ev):
            if isinstance(ev, StepRecorded) and ev.record.index == 1:
                store.writer.submit(lambda: time.sleep(0.3), "a slow write")
                loop.stop()
        rec.start(loop, "fill", tab.url, planner="script", policy="auto")
        loop.bus.subscribe(stop_after_step_1)
        res = await loop.run("fill")
        stored = store.load(rec.session_id)  # before finish(): the run waited for its writes
        rec.finish(res)
        return res, stored, store.load(rec.session_id)

    res, during, after = harness.page(server.url("loop_form.html"), go)
    assert res.status == "interrupted"
    assert [s.index for s in during.steps] == [s.index for s in res.steps] == [0, 1]
    # every message of the run but its closing line (written as the run returned) was already stored
    assert [m.content for m in during.messages][: len(res.messages) - 1] == [m.content for m in res.messages][:-1]
    assert [m.content for m in after.messages] == [m.content for m in res.messages]
    assert after.session.status == "interrupted"
    store.close()


def test_after_picture_is_the_page_the_step_left(server, harness, tmp_path):
    """The after picture is started alongside the settle's check of the expected outcome: used when that
    check saw the outcome (the settle ended there), dropped when the page went on changing. A change that
    comes 60 ms after the click (a timer: the first check misses it, a later one sees it) and one that
    comes 250 ms after it (the settle ends first; the verification waits for it) are both in the step's
    after picture."""
    store = Store.open(tmp_path / "late.db")
    steps = [{"action": "click", "target": {"role": "button", "name": name},
              "expect": {"type": "element_appears", "text": said}}
             for name, said in (("Start later", "Finished"), ("Start much later", "All done"))]
    steps.append({"action": "finish", "answer": "done"})

    sid, res = harness.page(server.url("late_outcome.html"),
                            lambda tab: _recorded_run(tab, store, ScriptedPlanner(steps), "late"))
    assert res.status == "success", res.reason
    for st in res.steps[:2]:
        assert st.verification is not None and st.verification.success, st.verification
    # (whether the settle ended on the outcome check or the verification waited for it depends on the machine's
    # load; either way the step's after picture must be the page it left, which the pixels below check)
    assert res.steps[0].result is not None
    pic = _pictures(store, sid)
    assert not _red(pic[(0, "before")]) and _red(pic[(0, "after")]), "step 0's after picture is not the page it left"
    assert _red(pic[(1, "before")]) and _blue(pic[(1, "after")]), "step 1's after picture is not the page it left"


def _blue(jpeg: bytes, at: tuple[int, int] = (40, 40)) -> bool:
    r, g, b = Image.open(io.BytesIO(jpeg)).convert("RGB").getpixel(at)
    return b > 200 and r < 60 and g < 60


def test_on_a_page_with_frames_the_picture_asked_as_the_input_went_out_is_kept_only_while_every_frame_is_unchanged(
        server, harness, tmp_path):
    """On a page with a child frame: a step whose change is made at once (by the click's own handler) keeps the
    picture asked for as its input went out, with no second capture for it; a step whose change comes a moment
    later inside the child frame alone gets a picture taken after that change — the child frame's DOM version
    tells them apart. (The page keeps a long poll open, so the outcome is checked after the frames paint, where
    a picture is asked for at each check unless the last one still shows the page.)"""
    store = Store.open(tmp_path / "framed.db")
    steps = [{"action": "click", "target": {"role": "button", "name": "Paint here"},
              "expect": {"type": "element_appears", "text": "Painted"}},
             {"action": "click", "target": {"role": "button", "name": "Paint the panel later"},
              "expect": {"type": "element_appears", "text": "Panel painted"}},
             {"action": "finish", "answer": "done"}]
    captures: list[float] = []
    at_record: dict[int, int] = {}

    async def go(tab):
        _count_captures(tab, captures)
        # (a request begun in the second before a run's first look is waited for: the long poll is older then)
        await asyncio.sleep(1.1)
        return await _recorded_run(tab, store, ScriptedPlanner(steps), "framed", lambda ev: isinstance(
            ev, StepRecorded) and at_record.setdefault(ev.record.index, len(captures)))

    sid, res = harness.page(server.url("framed_outcome.html"), go)
    assert res.status == "success", res.reason
    for st in res.steps[:2]:
        assert st.verification is not None and st.verification.success, st.verification
    pic = _pictures(store, sid)
    assert not _red(pic[(0, "before")]) and _red(pic[(0, "after")]), "step 0's after picture is not the page it left"
    assert at_record[0] == 2, f"step 0 took {at_record[0]} pictures (its before and one after were enough)"
    panel = (40, 400)  # inside the child frame
    assert not _blue(pic[(1, "before")], panel) and _blue(pic[(1, "after")], panel), \
        "step 1's after picture does not show the change made inside the child frame after the click"
    store.close()


def test_a_steps_result_does_not_wait_for_its_after_picture_which_follows_its_record_into_the_store(
        server, harness, tmp_path):
    """Captures made slow (each a real capture, 400 ms late): a step's result and its stored record come without
    waiting for the after picture; the picture follows (StepPictureTaken), is added to the stored step and to the
    run's record, and is in before the next step's input goes out (that step is proposed and judged meanwhile)."""
    from engine.models import ActionDone, StepPictureTaken, StepProposed

    store = Store.open(tmp_path / "late.db")
    steps = [{"action": "type", "target": {"role": "textbox", "name": "Full name"}, "text": "Ada"},
             {"action": "click", "target": {"role": "button", "name": "Show help"}},
             {"action": "finish", "answer": "done"}]
    events: list[tuple[str, int, float]] = []

    def seen(ev):
        if isinstance(ev, ActionDone):
            events.append(("done", ev.step_index, time.monotonic()))
        elif isinstance(ev, StepRecorded):
            events.append(("recorded", ev.record.index, time.monotonic()))
        elif isinstance(ev, StepPictureTaken):
            events.append(("picture", ev.step_index, time.monotonic()))
        elif isinstance(ev, StepProposed):
            events.append(("proposed", ev.step_index, time.monotonic()))

    async def go(tab):
        _count_captures(tab, [], delay=0.4)  # each real capture asked for at once, answered 400 ms late
        return await _recorded_run(tab, store, ScriptedPlanner(steps), "late pictures", seen)

    sid, res = harness.page(server.url("loop_form.html"), go)
    assert res.status == "success", res.reason
    at = {(kind, i): t for kind, i, t in events}
    for i in (0, 1):
        # the record is out (and stored) well before its picture, which follows it
        assert at[("recorded", i)] < at[("picture", i)], events
        assert at[("picture", i)] - at[("done", i)] > 0.2, "the step's result waited for its after picture"
        assert res.steps[i].screenshot_after and res.steps[i].screenshot_distance is not None, res.steps[i]
    # step 1 was proposed while step 0's picture was still being taken (its frame asked for already: nothing the page
    # does meanwhile gets into it), and ran only once that picture was in
    assert at[("proposed", 1)] < at[("picture", 0)] < at[("done", 1)], events
    data = store.load(sid)
    for i in (0, 1):
        assert data.steps[i].screenshot_after == res.steps[i].screenshot_after, "the stored record has no picture"
        jpeg = store.get_blob(data.blobs[i]["screenshot_after"])
        assert Image.open(io.BytesIO(jpeg)).size[0] > 0
    store.close()
