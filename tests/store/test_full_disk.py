"""A full disk under a running `vigil run` (issue 38, item 4), on a real one: a small tmpfs holding the session store,
filled up by a file beside it and by the run's own steps, on a page served by a real local HTTP server.

Whatever happens, every step the console printed as having acted on the page is in the store, or the run's message
names it, numbered as printed ([3] is "Step 3"); the run stops at the first step it could not store, exits non-zero,
says where the store is and what to do, and prints no traceback. Mounting needs root (or CAP_SYS_ADMIN): without it
these tests fail saying so, never skip.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engine.loop import AgentLoop, AutoApprove, ScriptedPlanner
from engine.models import StepRecorded
from engine.store import Store
from engine.store.recorder import SessionRecorder
from engine.store.reserve import MAKE_SLACK, MB, RESERVE_ENV, reserve_bytes

from support.paths import ROOT
from support.recording_server import RecordingServer, Reply

DISK = "24m"
# each click adds forty notes of random text: the page's snapshot, stored with each step, grows by ~3 KB a click
NOTES = """<!doctype html><html><head><title>Notes</title></head><body>
<h1>Notes</h1><button onclick="add()">Add note</button> <button onclick="load()">Load catalogue</button>
<ol id="notes"></ol><ul id="items"></ul>
<script>
let n = 0;
function noise(k) {
  let t = '';
  while (t.length < k) t += Math.random().toString(36).slice(2);
  return t.slice(0, k);
}
function add() {
  n += 1;
  for (let i = 0; i < 40; i++) {
    const li = document.createElement('li'); li.textContent = 'Note ' + n + '.' + i + ' ' + noise(60);
    document.getElementById('notes').appendChild(li);
  }
}
function load() {  // one step whose record (the page's snapshot after it) is ~2.5 MB
  const rows = [];
  for (let i = 0; i < 16000; i++) rows.push('<li>Item ' + i + ' ' + noise(200) + '</li>');
  document.getElementById('items').innerHTML = rows.join('');
}
</script></body></html>"""
ADD = "- {action: click, target: {role: button, name: Add note}}\n"
LOAD = "- {action: click, target: {role: button, name: Load catalogue}}\n"
CLICK_ADD = {"action": "click", "target": {"role": "button", "name": "Add note"}}
ACTED = re.compile(r"^\[(\d+)\] (ok|unverified|FAILED) ", re.M)  # engine.cli.run.step_line's words for a step that ran


@pytest.fixture(scope="module")
def page():
    with RecordingServer({"GET /notes.html": Reply(NOTES)}) as s:
        yield s.url("notes.html")


@pytest.fixture
def disk(tmp_path):
    """A real small disk (tmpfs) for the store; unmounted after the test."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    try:
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={DISK}", "tmpfs", str(mnt)],
                           capture_output=True, text=True, timeout=30)
        why = r.stderr.strip() or f"exit status {r.returncode}"
    except OSError as exc:
        r, why = None, str(exc)
    if r is None or r.returncode != 0:
        pytest.fail(f"This test needs a real full disk: mounting a {DISK} tmpfs at {mnt} failed ({why}). Run it as "
                    "root or with CAP_SYS_ADMIN (e.g. a container started with --cap-add SYS_ADMIN).")
    try:
        yield mnt
    finally:
        if subprocess.run(["umount", str(mnt)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def new_store(disk: Path) -> None:
    """An empty store on the disk (made before it is filled, so that the room left is the runs' own)."""
    Store.open(disk / "home" / "sessions.db").close()


def fill(disk: Path, leave: int, name: str = "filler") -> None:
    """Another file on the disk takes all its room but `leave` bytes."""
    free = shutil.disk_usage(disk).free
    assert free > leave, f"the disk has only {free} bytes free"
    with open(disk / name, "wb") as f:
        f.write(b"\xa5" * (free - leave))


def vigil_run(disk: Path, url: str, script: str, *, reserve_mb: int | None = None) -> subprocess.CompletedProcess:
    steps = disk.parent / "steps.yaml"  # (beside the disk: the script takes none of its room)
    steps.write_text(script)
    env = {**os.environ, "VIGIL_HOME": str(disk / "home")}
    env.pop(RESERVE_ENV, None)
    if reserve_mb is not None:
        env[RESERVE_ENV] = str(reserve_mb)
    return subprocess.run([sys.executable, "-m", "engine.cli", "run", "add notes", "--url", url, "--script",
                           str(steps), "--approve", "auto", "--max-steps", "200"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)


def stored_steps(disk: Path) -> tuple[set[int], str]:
    """The steps of the run's session as numbered on the console (index + 1), and its status; the other files
    on the disk are removed first, so that opening the store may write."""
    for p in disk.glob("filler*"):
        p.unlink()
    with Store.open(disk / "home" / "sessions.db") as store:
        [row] = store.list_sessions()
        data = store.load(row.id)
    return {s.index + 1 for s in data.steps}, row.status


def check_clean_stop(r: subprocess.CompletedProcess, disk: Path) -> list[int]:
    """What holds whatever happened: non-zero exit, no traceback, the store's place and what to do said; the steps
    printed as acted, in order."""
    out = r.stdout + r.stderr
    assert r.returncode != 0, out
    assert "Traceback" not in out, out
    assert str(disk / "home" / "sessions.db") in r.stdout and "Free some space on the disk" in r.stdout, out
    assert "finished" not in r.stdout, out
    acted = [int(n) for n, _ in ACTED.findall(r.stdout)]
    assert acted == list(range(1, len(acted) + 1)), out
    return acted


def test_the_step_that_acted_when_the_disk_filled_up_is_stored(disk, page):
    size = reserve_bytes()  # the default: 16 MB kept beside the store while the disk is low
    new_store(disk)
    fill(disk, size + MAKE_SLACK + MB // 2)  # the reserve fits, then ~1.5 MB for steps (its slack included)
    r = vigil_run(disk, page, ADD * 200)
    acted = check_clean_stop(r, disk)
    assert r.returncode == 1 and 3 <= len(acted) < 200, r.stdout + r.stderr
    reason = r.stdout.strip().splitlines()[-1]
    assert reason.startswith(f"failed: The disk holding the session store {disk / 'home' / 'sessions.db'} is full."), \
        reason
    said = re.search(r"Step (\d+) is stored", reason)
    if said:  # the write that met the full disk was a step's: the last one printed
        assert int(said.group(1)) == acted[-1], r.stdout
    assert "not in the session store" not in r.stderr and "kept as session" in r.stderr, r.stderr
    stored, status = stored_steps(disk)
    assert set(acted) <= stored, (acted, stored)
    assert status == "error"

    # the disk is still full (its reserve spent): the next run does not start, and says so
    fill(disk, 4 * MB)
    again = vigil_run(disk, page, ADD * 3)
    assert again.returncode == 2 and "Traceback" not in again.stdout + again.stderr, again.stdout + again.stderr
    assert not ACTED.findall(again.stdout), again.stdout
    assert "Nothing was run" in again.stderr and str(disk / "home" / "sessions.db") in again.stderr, again.stderr
    assert "Free some space on the disk" in again.stderr and "--no-record" in again.stderr, again.stderr


def test_a_step_too_big_for_the_room_left_is_named_and_the_run_stops_there(disk, page):
    new_store(disk)
    # a 1 MB reserve fits, then ~1.1 MB for steps: with the reserve's 1 MB, not enough for step 3's ~2.5 MB
    fill(disk, 1 * MB + MAKE_SLACK + MB // 10)
    r = vigil_run(disk, page, ADD * 2 + LOAD + ADD * 3, reserve_mb=1)
    acted = check_clean_stop(r, disk)
    out = r.stdout + r.stderr
    assert r.returncode == 1 and acted == [1, 2, 3], out  # step 3 acted, and nothing after it
    assert "failed: Step 3 acted on the page but could not be stored: the disk holding the session store" in r.stdout, \
        out
    assert "Step 3 acted on the page and is not in the session store." in r.stderr, out
    stored, _ = stored_steps(disk)
    assert stored == {1, 2}


def notes_on(tab) -> object:
    return tab.page.evaluate("document.querySelectorAll('#notes li').length")


def test_a_run_started_on_a_full_disk_anyway_ends_before_any_step_acts(disk, page, harness):
    """As the window and `vigil mcp` do: the recorder could not start, and the loop is run all the same."""
    new_store(disk)
    fill(disk, 4 * MB)  # no room for the reserve

    async def go(tab):
        with Store.open(disk / "home" / "sessions.db") as store:
            rec = SessionRecorder(store)
            loop = AgentLoop(tab, ScriptedPlanner([CLICK_ADD] * 3), gate=AutoApprove(), policy="auto")
            assert rec.start(loop, "add notes", tab.page.url, planner="script", policy="auto") is None
            res = await loop.run("add notes")
            rec.finish(res)
            return rec.error, res, await notes_on(tab)

    error, res, notes = harness.page(page, go)
    assert error.startswith("The run cannot be recorded: the disk holding the session store"), error
    assert res.status == "error" and res.reason.startswith("The run cannot be recorded"), res.reason
    assert not [s for s in res.steps if s.action is not None] and notes == 0


def test_a_step_does_not_start_without_room_for_its_record(disk, page, harness):
    """Another process met the full disk and freed the reserve: this run's next step does not run."""
    new_store(disk)
    fill(disk, reserve_bytes() + MAKE_SLACK + 2 * MB)

    async def go(tab):
        with Store.open(disk / "home" / "sessions.db") as store:
            rec = SessionRecorder(store)
            loop = AgentLoop(tab, ScriptedPlanner([CLICK_ADD] * 5), gate=AutoApprove(), policy="auto")

            def after(ev):
                if isinstance(ev, StepRecorded) and ev.record.index == 1:  # after step 2: the room is gone
                    assert rec.reserve.release()
                    fill(disk, MB, "filler2")
            loop.bus.subscribe(after)
            assert rec.start(loop, "add notes", tab.page.url, planner="script", policy="auto")
            res = await loop.run("add notes")
            rec.finish(res)
            return res, await notes_on(tab), rec.session_id

    res, notes, sid = harness.page(page, go)
    assert res.status == "error" and res.reason.startswith("Step 3 was not run: the disk holding the session store"), \
        res.reason
    assert [s.status for s in res.steps] == ["completed", "completed", "stopped"] and notes == 2 * 40
    stored, status = stored_steps(disk)
    assert {1, 2} <= stored and status == "error"


def test_on_a_full_disk_the_sessions_of_a_dead_run_still_list(disk):
    """Opening the store marks the sessions of processes that died as interrupted, a write; on a full disk that
    write fails, and the store is still read: `vigil sessions` lists without a traceback."""
    home = disk / "home"
    env = {**os.environ, "VIGIL_HOME": str(home)}
    made = subprocess.run([sys.executable, "-c", "import os; from engine.store import Store; "
                           "s = Store.open(); s.create_session('left running', 'https://example.com/', 'script', "
                           "'auto'); os._exit(0)"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    fill(disk, 0)
    listed = subprocess.run([sys.executable, "-m", "engine.cli", "sessions"], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=60)
    assert "Traceback" not in listed.stdout + listed.stderr, listed.stderr
    assert listed.returncode == 0 and "left running" in listed.stdout, listed.stdout + listed.stderr
