"""Recording in-process: stored snapshots come back as the same tree, one session per tab across
runs and navigation, each step committed before the next runs, and `vigil bench store` works."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest
from PIL import Image

from engine.errors import SnapshotError
from engine.loop import AgentLoop, AutoApprove, ScriptedPlanner
from engine.models import StepRecorded
from engine.snapshot.stored import load_snapshot, snapshot_bytes
from engine.store import Store
from engine.store.pictures import step_picture
from engine.store.recorder import SessionRecorder
from engine.vision.som import draw_som

from support.paths import ROOT

REPO = ROOT


def test_stored_snapshot_is_the_same_tree(server, harness):
    async def go(tab):
        live = await tab.snapshot()
        back = load_snapshot(snapshot_bytes(live))
        assert len(back) == len(live) and back.url == live.url and back.context == live.context
        for a, b in zip(live.nodes(), back.nodes(), strict=True):
            assert (a.node_id, a.role, a.name, a.value, a.bounds, a.flags, a.tier, a.frame_id, a.depth,
                    a.parent.node_id if a.parent else None) == \
                   (b.node_id, b.role, b.name, b.value, b.bounds, b.flags, b.tier, b.frame_id, b.depth,
                    b.parent.node_id if b.parent else None)
        for fmt in ("semantic", "tree", "skeleton"):
            assert back.serialize(fmt).text == live.serialize(fmt).text
        assert back.find("button", "Create account")
        with pytest.raises(SnapshotError, match="no live page"):   # detached: nothing to resolve it in
            await back.backend_node_id(back.find("button", "Create account")[0].node_id)
        img = Image.new("RGB", (1280, 800), "white")
        assert [m.box for m in draw_som(img, back).marks] == [m.box for m in draw_som(img, live).marks]
        # the frames fixture: nodes inside same- and cross-origin iframes keep their frame ids
        await tab.goto(server.url("frames.html"))
        live = await tab.snapshot()
        back = load_snapshot(snapshot_bytes(live))
        assert {n.frame_id for n in back.nodes()} == {n.frame_id for n in live.nodes()}
        assert len({n.frame_id for n in back.nodes()}) > 1

    harness.page(server.url("loop_form.html"), go)


def test_one_session_per_tab_across_runs_and_navigation(server, harness, tmp_path):
    store = Store.open(tmp_path / "s.db")
    committed: list[int] = []

    async def go(tab):
        rec = SessionRecorder(store)
        for task, steps in (("fill the email", [{"action": "type", "target": {"name": "Work email"},
                                                 "text": "a@b.co"}]),
                            ("preview it", [{"action": "click", "target": {"role": "button", "name": "Preview"}}])):
            policy = "auto" if task == "fill the email" else "auto-safe"
            loop = AgentLoop(tab, ScriptedPlanner(steps), gate=AutoApprove(), policy=policy)

            def check(ev, loop=loop):  # by the time the next step is published, this one is in the store
                if isinstance(ev, StepRecorded):
                    committed.append(len(store.load(rec.session_id).steps))
            sid = rec.start(loop, task, tab.page.url, planner="script", policy=policy)
            loop.bus.subscribe(check)
            res = await loop.run(task)
            rec.finish(res)
            assert res.status == "success" and sid == rec.session_id
        await tab.goto(server.url("loop_done.html", host="localhost"))
        rec.page_moved(tab.page.url)
        return rec.session_id

    sid = harness.page(server.url("replay_form.html"), go)
    assert committed == [1, 2, 3, 4]  # subscribers run in order: the recorder's commit came first
    [row] = store.list_sessions()
    data = store.load(sid)
    assert row.title == "127.0.0.1: fill the email" and row.status == "success" and row.steps == 4
    assert data.session.domain == "localhost" and data.session.url.endswith("/loop_done.html")
    assert data.session.metadata["initialDomain"] == "127.0.0.1"
    assert data.session.policy == "auto-safe"  # the latest run's
    assert data.session.metadata["initialUrl"].endswith("/replay_form.html")
    assert [s.index for s in data.steps] == [0, 1, 2, 3]
    assert [s.action.name for s in data.steps] == ["type", "finish", "click", "finish"]
    seqs = [m.sequenceNumber for m in data.messages]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert [m.content for m in data.messages if m.role == "user"] == ["fill the email", "preview it"]
    # a chat turn names the step it speaks of as stored: run 2's first step is step 2 of the session
    assert [m.metadata["step_index"] for m in data.messages if "step_index" in m.metadata] == [0, 1, 2, 3]
    assert len(data.plans) == 2  # a new plan version per task; status changes update the latest one
    pic = step_picture(store, data, 2, "before")
    assert pic is not None and pic.marks > 3 and pic.highlight == data.steps[2].target["id"]
    assert Image.open(io.BytesIO(pic.jpeg)).format == "JPEG"
    after = step_picture(store, data, 2, "after")
    assert after is not None and after.jpeg != pic.jpeg
    store.close()


def test_bench_store_command_reports_both_runs():
    r = subprocess.run([sys.executable, "-m", "engine.cli", "bench", "store", "--sizes", "300", "--steps", "2",
                        "--reps", "1", "--json"], cwd=REPO, capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr
    [row] = json.loads(r.stdout)["pages"]
    assert row["steps"] == 2 and row["plain_step_ms"] > 0 and row["recorded_step_ms"] > 0
    assert row["commit_ms"] > 0 and row["bytes_per_step"] > 1000
