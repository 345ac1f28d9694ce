"""What a recorded step costs on disk (issue 41: at most 30 KB a step on the demo shop), with nothing lost:
every stored snapshot reads back as the very bytes recorded, every picture as the picture taken (WebP and
patches are lossy: close, at its size), every step record as it was."""

from __future__ import annotations

import io

import pytest
from PIL import Image, ImageChops, ImageStat

from engine.local_server import serve_directory
from engine.loop import AgentLoop, AutoApprove, ScriptedPlanner
from engine.models import StepRecord, StepRecorded
from engine.snapshot.stored import load_snapshot, snapshot_bytes
from engine.store import Store
from engine.store.recorder import SessionRecorder
from engine.store.store import step_body

from support.paths import ROOT

STEPS = 12
KB_PER_STEP = 30


def _script() -> list[dict]:
    kinds = [lambda i: {"action": "type", "target": {"role": "textbox", "name": "Full name"}, "text": f"Ada {i}"},
             lambda i: {"action": "click", "target": {"role": "checkbox", "name": "Gift wrap"}},
             lambda i: {"action": "select", "target": {"role": "combobox", "name": "Country"},
                        "option": ("Germany", "France")[i % 2]},
             lambda i: {"action": "click", "target": {"role": "button", "name": "Add to cart", "nth": 0}}]
    return [kinds[i % 4](i // 4) for i in range(STEPS)]


@pytest.fixture(scope="module")
def recorded(harness, tmp_path_factory):
    """One real recorded run of STEPS steps on the demo shop: the store, its bytes before and after, the session,
    and what the loop handed the recorder (records, snapshot bytes and JPEGs by step)."""
    db = tmp_path_factory.mktemp("size") / "sessions.db"
    store = Store.open(db)
    seen: dict[int, dict] = {}
    first: dict[int, tuple] = {}  # a snapshot shared by two steps is stored as it was first seen (its stats grow)

    def as_first_seen(snap) -> bytes:
        return first.setdefault(id(snap), (snap, snapshot_bytes(snap)))[1]

    def keep(ev) -> None:
        if isinstance(ev, StepRecorded) and ev.artifacts is not None:
            a = ev.artifacts
            seen[ev.record.index] = {"record": ev.record, **{
                role: as_first_seen(getattr(a, role)) for role in ("snapshot_before", "snapshot_after")
                if getattr(a, role) is not None}, **{
                role: getattr(a, role) for role in ("screenshot_before", "screenshot_after") if getattr(a, role)}}

    async def run(tab):
        loop = AgentLoop(tab, ScriptedPlanner(_script()), gate=AutoApprove(), policy="auto")
        loop.bus.subscribe(keep)
        rec = SessionRecorder(store)
        rec.start(loop, "fill the form", tab.page.url, planner="scripted", policy="auto")
        result = await loop.run("fill the form")
        rec.finish(result)
        assert rec.error is None and result.status == "success", (rec.error, result.reason)
        return rec.session_id

    store.checkpoint()
    size0 = db.stat().st_size
    with serve_directory(ROOT / "assets" / "demo") as base:
        sid = harness.page(base + "index.html", run, 90)
    store.checkpoint()
    yield store, sid, (db.stat().st_size - size0), seen
    store.close()


def test_a_step_costs_at_most_30_kb(recorded):
    store, sid, grew, _ = recorded
    steps = len(store.load(sid).steps)
    assert steps == STEPS + 1  # and the planner's "done"
    assert grew / STEPS <= KB_PER_STEP * 1024, f"{grew / steps / 1024:.1f} KB a step"


def test_every_step_reads_back_as_recorded(recorded):
    store, sid, _, seen = recorded
    data = store.load(sid)
    assert sorted(seen) == [s.index for s in data.steps][:STEPS]
    for rec in data.steps[:STEPS]:
        refs, live = data.blobs[rec.index], seen[rec.index]
        assert rec == live["record"].model_copy(update={k: getattr(rec, k) for k in ("screenshot_after",
                                                                                      "screenshot_distance")})
        for role in ("snapshot_before", "snapshot_after"):
            back = store.get_blob(refs[role])
            assert back == live[role]  # the very bytes: every node as recorded
            assert [n.node_id for n in load_snapshot(back).nodes()] == [n.node_id for n in load_snapshot(
                live[role]).nodes()]
        for role in ("screenshot_before", "screenshot_after"):
            if role not in live:
                continue
            taken = Image.open(io.BytesIO(live[role])).convert("RGB")
            kept = store.picture(refs[role])
            assert kept.size == taken.size == (1024, 640)
            assert Image.open(io.BytesIO(store.get_blob(refs[role]))).size == taken.size
            assert max(ImageStat.Stat(ImageChops.difference(kept, taken)).mean) < 4  # lossy, yet the same picture


def test_a_stored_record_loads_back_equal(recorded):
    """Records are stored without their default values: each loads back equal to the record of the run."""
    _, _, _, seen = recorded
    for live in seen.values():
        rec: StepRecord = live["record"]
        assert StepRecord.model_validate(step_body(rec)) == rec
        assert StepRecord.model_validate_json(StepRecord.model_validate(step_body(rec)).model_dump_json()) == rec
