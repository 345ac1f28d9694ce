"""The session store: round trips, dedup, secrets, SIGKILL mid-run, two writers, refusing corrupt or
newer databases, and migrations. No browser; each test gets its own VIGIL_HOME."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from engine.models import Action, ActionResult, ChatMessage, Decision, Plan, ProposedStep, StepRecord
from engine.models.actions import PageState, VerificationResult
from engine.secret_values import MASK
from engine.store import LATEST_VERSION, Store, StoreError, default_path, migrate

from support.paths import ROOT

REPO = ROOT


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("VIGIL_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def _step(i: int, **kw) -> StepRecord:
    action = Action(name="click", target=str(10 + i))
    return StepRecord(index=i, proposal=ProposedStep(thought=f"step {i}", action=action), decision=Decision.approve(),
                      action=action, result=ActionResult(success=True, action=action.to_string()),
                      url_before="http://shop.test/", url_after="http://shop.test/cart", **kw)


def _raw_bytes(db: Path) -> bytes:
    return b"".join(p.read_bytes() for p in db.parent.glob(db.name + "*"))


def test_round_trip(home):
    with Store.open() as store:
        assert store.path == home / "sessions.db"
        sid = store.create_session("Add socks to cart", "https://shop.example.com/a", "heuristic", "ask")
        store.update_url(sid, "https://pay.other.org/checkout")
        store.add_message(sid, ChatMessage(messageId="m0", role="user", content="Add socks", sequenceNumber=0))
        store.add_message(sid, ChatMessage(messageId="m1", role="assistant", content="Clicking", sequenceNumber=1,
                                           status="pending", actionString="click(10)"))
        store.add_message(sid, ChatMessage(messageId="m1", role="assistant", content="Clicked", sequenceNumber=7,
                                           status="success", actionString="click(10)"))
        assert store.save_plan(sid, Plan.from_descriptions(["Find socks", "Add to cart"])) == 1
        assert store.save_plan(sid, Plan.from_descriptions(["Find socks", "Add to cart", "Check out"], 1)) == 2
        shot = store.put_blob("screenshot", b"\x89PNG fake image bytes")
        snap = store.put_blob("snapshot", b'{"nodes": []}' * 100)
        for i in range(3):
            store.add_step(sid, _step(i), {"screenshot_after": shot, "snapshot": snap} if i == 2 else None)
        store.finish(sid, "success", answer="Socks are in the cart")

    with Store.open() as store:
        [summary] = store.list_sessions()
        assert summary.model_dump() == {**summary.model_dump(), "id": sid, "title": "example.com: Add socks to cart",
                                        "domain": "other.org", "url": "https://pay.other.org/checkout",
                                        "status": "success", "steps": 3}
        data = store.load(sid)
        assert data.session.metadata == {"initialUrl": "https://shop.example.com/a", "initialDomain": "example.com"}
        assert data.session.answer == "Socks are in the cart"
        assert [(m.messageId, m.content, m.sequenceNumber, m.status) for m in data.messages] == \
            [("m0", "Add socks", 0, None), ("m1", "Clicked", 1, "success")]  # upsert kept sequence 1
        assert len(data.plans) == 2 and [s.description for s in data.plan.steps][-1] == "Check out"
        assert data.plan.currentStepIndex == 1 and data.plans[0].steps[0].status == "active"
        assert [s.model_dump() for s in data.steps] == [_step(i).model_dump() | {"started_at": s.started_at}
                                                         for i, s in enumerate(data.steps)]
        assert data.blobs == {2: {"screenshot_after": shot, "snapshot": snap}}
        assert store.get_blob(shot) == b"\x89PNG fake image bytes"
        assert store.get_blob(snap) == b'{"nodes": []}' * 100
        store.rename(sid, "My socks")
        assert store.load(sid).session.title == "My socks" and store.load(sid).session.is_renamed
        with pytest.raises(StoreError) as e:
            store.add_step("no-such-session", _step(0))
        assert e.value.code == "STORE_NO_SESSION"
        assert store.integrity_check() == "ok"


def test_blobs_deduplicated_and_snapshots_compressed(home):
    with Store.open() as store:
        a = store.put_blob("screenshot", b"same pixels")
        b = store.put_blob("screenshot", b"same pixels")
        c = store.put_blob("screenshot", b"other pixels")
        snapshot = b"<div>row</div>" * 5000
        s = store.put_blob("snapshot", snapshot)
    assert a == b != c
    conn = sqlite3.connect(home / "sessions.db")
    assert conn.execute("SELECT COUNT(*) FROM blobs WHERE kind='screenshot'").fetchone() == (2,)
    (stored,) = conn.execute("SELECT length(data) FROM blobs WHERE sha256=?", (s,)).fetchone()
    assert stored < len(snapshot) / 20
    conn.close()


def test_secrets_never_stored(home):
    key = "sk-proj-ABCDEFGHIJKLMNOP1234567890"
    masked = Action(name="type", target="5", text=MASK)
    rec = StepRecord(index=0, proposal=ProposedStep(thought="Type the password", action=masked,
                                                    details={"apiKey": key, "usage": {"prompt_tokens": 812}}),
                     action=masked, result=ActionResult(success=True, action=masked.to_string(),
                                                        data={"session_token": "tok-xyz-private"}))
    with Store.open() as store:
        sid = store.create_session("Log in", "https://bank.test/login", "openai", "ask",
                                   {"settings": {"model": "gpt", "api_key": key, "password": "hunter2",
                                                 "client_secret": "s3cr3t-value", "base_url": "http://llm"}})
        store.add_message(sid, ChatMessage(role="system", content=f"Authorization: Bearer {key}",
                                           metadata={"openai_api_key": key}))
        store.add_step(sid, rec)
        data = store.load(sid)
    assert data.session.metadata["settings"] == {"model": "gpt", "base_url": "http://llm"}
    assert data.messages[0].content == f"Authorization: {MASK}" and data.messages[0].metadata == {}
    step = data.steps[0]
    assert step.action.text == MASK and step.proposal.action.text == MASK
    assert step.proposal.details == {"usage": {"prompt_tokens": 812}}  # a token count is not a token
    assert step.result.data == {}
    raw = _raw_bytes(home / "sessions.db")
    for secret in (key, "ABCDEFGHIJKLMNOP", "hunter2", "s3cr3t-value", "tok-xyz-private"):
        assert secret.encode() not in raw


# -- other processes ------------------------------------------------------------------------------
WRITER = textwrap.dedent("""
    import os, sys, time
    from engine.models import Action, StepRecord
    from engine.store import Store
    mode, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = Store.open()
    sid = store.create_session("task " + out, "http://shop.test/", "script", "auto")
    open(out + ".sid", "w").write(sid)
    while len(sys.argv) > 4 and not os.path.exists(sys.argv[4]):   # a start line shared with another writer
        time.sleep(0.002)
    for i in range(n):
        store.add_step(sid, StepRecord(index=i, action=Action(name="click", target=str(i)), note="x" * 500))
        with open(out + ".tmp", "w") as f:   # the counter only moves after the step is committed
            f.write(str(i + 1))
        os.replace(out + ".tmp", out)
        while i == 0 and len(sys.argv) > 5 and not os.path.exists(sys.argv[5]):
            time.sleep(0.002)   # the other writer's first step is in too: the rest of both runs overlap
    if mode == "hold":   # a step half-written: the write lock is held, nothing committed, then SIGKILL
        store._conn.execute("BEGIN IMMEDIATE")
        store._conn.execute("INSERT INTO steps(session_id, idx, status, actor, recorded_at, body) "
                            "VALUES (?, ?, 'completed', 'agent', 'now', '{}')", (sid, n))
        open(out + ".holding", "w").write("1")
        time.sleep(60)
    elif mode == "run":
        store.finish(sid, "success")
""")


def _spawn(tmp_path: Path, mode: str, name: str, n: int, *extra: str) -> tuple[subprocess.Popen, Path]:
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    out = tmp_path / name
    argv = [sys.executable, str(script), mode, str(out), str(n), *extra]
    return subprocess.Popen(argv, cwd=REPO, env=os.environ.copy()), out


def _wait_for(cond, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def _counter(out: Path) -> int:
    return int(out.read_text()) if out.exists() else 0


def test_sigkill_mid_run_keeps_every_committed_step(home, tmp_path):
    proc, out = _spawn(tmp_path, "run", "killed", 100000)
    try:
        _wait_for(lambda: _counter(out) >= 30)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    counter = _counter(out)
    with Store.open() as store:
        assert store.integrity_check() == "ok"
        [s] = store.list_sessions()
        assert s.status == "interrupted"
        steps = store.load(s.id).steps
    # The counter is written after commit() returns, so every counted step is committed; the kill may
    # land between a commit and its counter update, so at most one committed step is uncounted.
    assert counter <= len(steps) <= counter + 1
    assert [r.index for r in steps] == list(range(len(steps)))


def test_sigkill_with_a_step_half_written_keeps_exactly_the_committed_ones(home, tmp_path):
    proc, out = _spawn(tmp_path, "hold", "held", 5)
    try:
        _wait_for(lambda: Path(f"{out}.holding").exists())
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    with Store.open() as store:   # the dead writer's lock is gone: opening (and writing) does not wait
        assert store.integrity_check() == "ok"
        [s] = store.list_sessions()
        assert (s.status, s.steps, _counter(out)) == ("interrupted", 5, 5)
        assert "ended before the run finished" in store.load(s.id).session.reason


def test_two_processes_writing_at_once(home, tmp_path):
    go = tmp_path / "go"
    # (each waits after its first step for the other's: a loaded machine could otherwise run one after the other)
    (a, out_a), (b, out_b) = (_spawn(tmp_path, "run", name, 200, str(go), str(tmp_path / other))
                              for name, other in (("a", "b"), ("b", "a")))
    _wait_for(lambda: Path(f"{out_a}.sid").exists() and Path(f"{out_b}.sid").exists())
    go.write_text("go")   # both have opened the store and created their session: now both write
    assert (a.wait(timeout=60), b.wait(timeout=60)) == (0, 0)
    with Store.open() as store:
        assert store.integrity_check() == "ok"
        spans = store._conn.execute("SELECT MIN(recorded_at), MAX(recorded_at) FROM steps "
                                    "GROUP BY session_id").fetchall()
        assert max(lo for lo, _ in spans) < min(hi for _, hi in spans), "the two writers did not overlap"
        sessions = {s.id: s for s in store.list_sessions()}
        for out in (out_a, out_b):
            s = sessions[Path(f"{out}.sid").read_text()]
            assert (s.status, s.steps) == ("success", 200)
            assert [r.index for r in store.load(s.id).steps] == list(range(200))


def test_running_session_of_a_live_process_is_left_alone_but_a_reused_pid_is_not(home):
    with Store.open() as store:
        mine = store.create_session("still running", "http://a.test/", "heuristic", "ask")
        reused = store.create_session("pid reused", "http://b.test/", "heuristic", "ask")
        store._conn.execute("UPDATE sessions SET owner_start='1' WHERE id=?", (reused,))
    with Store.open() as store:
        status = {s.id: s.status for s in store.list_sessions()}
    assert status == {mine: "running", reused: "interrupted"}


# -- files it must not touch ----------------------------------------------------------------------
def test_random_bytes_are_refused_and_left_alone(home):
    home.mkdir(parents=True)
    db = home / "sessions.db"
    db.write_bytes(os.urandom(8192))
    before = db.read_bytes()
    with pytest.raises(StoreError) as e:
        Store.open()
    assert e.value.code == "STORE_CORRUPT"
    assert str(db) in e.value.message and "Move it aside" in e.value.message
    assert db.read_bytes() == before and sorted(p.name for p in home.iterdir()) == ["sessions.db"]


def test_damaged_sqlite_file_is_refused_and_left_alone(home):
    with Store.open() as store:
        store.create_session("t", "http://a.test/", "heuristic", "ask")
    db = home / "sessions.db"
    data = bytearray(db.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # the schema page, header kept
    db.write_bytes(bytes(data))
    with pytest.raises(StoreError) as e:
        Store.open()
    assert e.value.code == "STORE_CORRUPT" and str(db) in e.value.message
    assert db.read_bytes() == bytes(data)


def test_newer_schema_is_refused_and_left_alone(home):
    Store.open().close()
    db = home / "sessions.db"
    conn = sqlite3.connect(db)
    conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(LATEST_VERSION + 1),))
    conn.commit()
    conn.close()
    before = db.read_bytes()
    with pytest.raises(StoreError) as e:
        Store.open()
    assert e.value.code == "STORE_TOO_NEW"
    assert f"version {LATEST_VERSION + 1}" in e.value.message and "newer Vigil" in e.value.message
    assert db.read_bytes() == before


def test_migrates_an_older_database(home):
    home.mkdir(parents=True)
    conn = sqlite3.connect(home / "sessions.db", isolation_level=None)
    assert migrate(conn, target=1) == 1
    conn.execute("INSERT INTO sessions(id, title, task, url, domain, status, planner, policy, created_at, updated_at) "
                 "VALUES ('old', 'a.test: old run', 'old run', 'http://a.test/', 'a.test', 'success', 'heuristic', "
                 "'ask', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')")
    conn.execute("INSERT INTO steps VALUES ('old', 0, 'completed', 'agent', 'click(1)', 'now', ?)",
                 (_step(0).model_dump_json(),))
    conn.execute("INSERT INTO steps VALUES ('old', 1, 'completed', 'agent', 'click(2)', 'now', ?)",
                 (_step(1, verification=_unseen()).model_dump_json(),))
    human = _step(2, verification=_unseen(), actor="human")
    conn.execute("INSERT INTO steps VALUES ('old', 2, 'completed', 'human', 'click(3)', 'now', ?)",
                 (human.model_dump_json(),))
    conn.close()
    with Store.open() as store:
        assert store._conn.execute("SELECT value FROM meta").fetchone() == (str(LATEST_VERSION),)
        [s] = store.list_sessions()
        # migration 5 counts as StepRecord.unverified does: the agent's step, not the person's
        assert (s.id, s.steps, s.status, s.unverified) == ("old", 3, "success", 1)
        assert [r.unverified for r in store.load("old").steps] == [False, True, False]
        sha = store.put_blob("screenshot", b"png")  # the table migration 2 added
        store.add_step("old", _step(1), {"screenshot_after": sha})
        assert store.load("old").blobs == {1: {"screenshot_after": sha}}
        assert store.list_sessions()[0].unverified == 0  # step 1 recorded again, now seen to work


def _unseen() -> VerificationResult:
    return VerificationResult(success=False, verified_outcome=None, actual_outcome="nothing changed",
                              page_state=PageState(url="http://shop.test/", url_changed=False, dom_changed=False),
                              confidence=0.9, feedback="The click changed nothing on the page.")


def test_unverified_steps_are_counted_for_the_list(home):
    with Store.open() as store:
        sid = store.create_session("Add socks", "https://shop.example.com/", "heuristic", "auto")
        store.add_step(sid, _step(0))
        store.add_step(sid, _step(1, verification=_unseen()))                    # ran, not seen to work
        store.add_step(sid, _step(2, verification=_unseen(), status="failed"))   # failed: not "unverified"
        store.add_step(sid, _step(3, verification=_unseen(), actor="human"))     # the person's own step: not either
        store.finish(sid, "success", answer="done")
        [s] = store.list_sessions()
        assert (s.status, s.steps, s.unverified) == ("success", 4, 1)
        assert store.load(sid).session.unverified == 1


def test_location_is_vigil_home_else_the_user_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("VIGIL_HOME", str(tmp_path / "vh"))
    assert default_path() == tmp_path / "vh" / "sessions.db"
    monkeypatch.delenv("VIGIL_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # honoured by platformdirs on Linux too
    if sys.platform.startswith("linux"):
        assert default_path() == tmp_path / "data" / "vigil" / "sessions.db"


def test_an_unusable_location_gets_a_clear_error(tmp_path, monkeypatch):
    afile = tmp_path / "afile"
    afile.write_text("x")
    folder = tmp_path / "dd"
    (folder / "sessions.db").mkdir(parents=True)
    for home, why in ((afile, "File exists"), (folder, "it is a folder"), (Path("/proc/nope"), "No such file")):
        monkeypatch.setenv("VIGIL_HOME", str(home))
        with pytest.raises(StoreError) as e:
            Store.open()
        assert e.value.code == "STORE_UNAVAILABLE" and why in e.value.message and "VIGIL_HOME" in e.value.message
    assert afile.read_text() == "x"


def test_delete_removes_a_session_and_only_its_own_blobs(home):
    with Store.open() as store:
        shared = store.put_blob("screenshot", b"\xff\xd8 the same picture in both sessions")
        a = store.create_session("task a", "https://a.example/", "script", "auto")
        b = store.create_session("task b", "https://b.example/", "script", "auto")
        store.add_message(a, ChatMessage(messageId="m0", role="user", content="task a", sequenceNumber=0))
        store.save_plan(a, Plan.from_descriptions(["one"]))
        store.add_step(a, _step(0), {"screenshot_after": shared},
                       files={"screenshot_before": ("screenshot", b"a picture only session a has " * 40)})
        store.add_step(b, _step(0), {"screenshot_after": shared})
        store.finish(a, "success")
        store.finish(b, "success")
        (own,) = [sha for role, sha in store.load(a).blobs[0].items() if role == "screenshot_before"]
        assert store.delete(a) == 1  # its own picture; the shared one stays for b
        assert [s.id for s in store.list_sessions()] == [b]
        assert store.get_blob(shared)
        with pytest.raises(StoreError) as e:
            store.get_blob(own)
        assert e.value.code == "STORE_NO_BLOB"
        with pytest.raises(StoreError) as e:
            store.load(a)
        assert e.value.code == "STORE_NO_SESSION"
        assert store.integrity_check() == "ok"
        c = store.create_session("still going", "https://c.example/", "script", "auto")
        with pytest.raises(StoreError) as e:  # this process is alive and running it
            store.delete(c)
        assert e.value.code == "STORE_BUSY"
    assert b"a picture only session a has" not in _raw_bytes(home / "sessions.db")  # zeroed, not just unlinked
