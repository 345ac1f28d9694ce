"""Sessions end to end, through the `vigil` command on a real Chromium and a real local HTTP server:
every run recorded, `vigil sessions`, replay re-grounding after the IDs changed, SIGKILL mid-run,
two processes recording at once, unusable stores refused with a message, secrets never stored.

Where the process is the point — killed mid-run, two recording at once, a replay answered on its stdin,
and every run whose output is searched for a secret (a leak to stderr may come from anywhere in the
process) — the command runs as its own `python -m engine.cli` process; elsewhere it runs in this process
(engine.cli.main), sparing each call a second of Python start-up."""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PIL import Image

from engine.store import LATEST_VERSION, Store

from support.cli_inprocess import vigil_in_process as vigil
from support.paths import ROOT

REPO = ROOT

JOIN = """
- {action: type, target: {name: Work email}, text: ada@example.com}
- {action: select, target: {name: Topic}, option: Deals}
- {action: check, target: {name: Weekly digest}}
- {action: click, target: {role: button, name: Preview},
   expect: {type: element_appears, text: "Preview: ada@example.com"}}
- {action: click, target: {role: button, name: Join}, expect: navigation}
"""
DONE_QUERY = "loop_done.html?email=ada%40example.com&topic=deals&weekly=on"


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    h = tmp_path / "home"
    monkeypatch.setenv("VIGIL_HOME", str(h))
    return h


def vigil_process(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "engine.cli", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout, env=os.environ.copy())


def script(tmp_path: Path, text: str, name: str = "steps.yaml") -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def sessions() -> list[dict]:
    r = vigil("sessions", "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_run_is_recorded_and_replay_regrounds_changed_ids(server, home, tmp_path):
    r = vigil("run", "join the newsletter", "--url", server.url("replay_form.html"), "--script",
              script(tmp_path, JOIN), "--approve", "auto", "--json")
    assert r.returncode == 0, r.stderr
    original = json.loads(r.stdout)
    [row] = sessions()
    assert row["status"] == "success" and row["steps"] == 6 and row["title"] == "127.0.0.1: join the newsletter"
    assert row["unverified"] == 0
    assert row["url"].endswith(DONE_QUERY)
    listing = vigil("sessions")
    assert row["id"][:8] in listing.stdout and "join the newsletter" in listing.stdout

    # the promo bar shifts every ID below it: the replay must find the elements by role and name
    r = vigil("replay", row["id"][:8], "--approve", "auto", "--json", "--url", server.url("replay_form.html?shift=1"))
    assert r.returncode == 0, r.stderr
    replay = json.loads(r.stdout)
    assert replay["status"] == "success" and replay["url"].endswith(DONE_QUERY)
    done = [s for s in replay["steps"] if s["action"]["name"] != "finish"]
    assert [s["status"] for s in done] == ["completed"] * 5
    old_ids = [s["result"]["node_id"] for s in original["steps"][:5]]
    new_ids = [s["result"]["node_id"] for s in done]
    assert all(a != b for a, b in zip(old_ids, new_ids, strict=True)), (old_ids, new_ids)
    assert all("no longer names" in s["proposal"]["thought"] for s in done)
    assert [s["action"]["name"] for s in done] == ["type", "select", "check", "click", "click"]

    rows = sessions()
    assert len(rows) == 2 and rows[0]["title"] == "127.0.0.1: Replay: join the newsletter"
    with Store.open() as store:
        info = store.load(rows[0]["id"]).session
    assert info.metadata["replayOf"] == row["id"] and info.planner == "replay" and info.status == "success"

    # on the page as it was recorded, the recorded IDs still name the same elements
    r = vigil("replay", row["id"], "--approve", "auto", "--json")
    assert r.returncode == 0, r.stderr
    same = [s for s in json.loads(r.stdout)["steps"] if s["action"]["name"] != "finish"]
    assert [s["result"]["node_id"] for s in same] == old_ids
    assert all("Same element as recorded" in s["proposal"]["thought"] for s in same)


def test_a_success_with_unverified_steps_is_listed_as_such(server, home, tmp_path):
    # the click runs but changes nothing, and the script then says done: the run is a success, but the
    # list must not read as a plain one
    steps = "- {action: click, target: {role: button, name: Do nothing}}\n- {action: finish}\n"
    r = vigil("run", "press the button", "--url", server.url("uploads_page.html"), "--script",
              script(tmp_path, steps), "--approve", "auto")
    assert r.returncode == 0, r.stderr
    assert "[1] unverified " in r.stdout, r.stdout
    [row] = sessions()
    assert (row["status"], row["steps"], row["unverified"]) == ("success", 2, 1)
    listing = vigil("sessions").stdout
    line = next(x for x in listing.splitlines() if x.startswith(row["id"][:8]))
    assert "done (1 unverified)" in line, listing  # the words of `vigil fleet` and the Fleet view
    # the wider status still leaves the STEPS column under its header (right-aligned)
    header = listing.splitlines()[0]
    assert header.index("STEPS") + len("STEPS") == line.index(" 2 ", line.index("unverified)")) + 2, listing


def test_sigkill_mid_run_leaves_an_interrupted_session_with_its_steps(server, home, tmp_path):
    steps = JOIN.strip().splitlines()[:3] + ["- {action: wait, ms: 400}"] * 40
    proc = subprocess.Popen([sys.executable, "-m", "engine.cli", "run", "slow task", "--url",
                             server.url("replay_form.html"), "--script", script(tmp_path, "\n".join(steps)),
                             "--approve", "auto"], cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, env=os.environ.copy())
    db = home / "sessions.db"
    try:
        deadline = time.time() + 90
        done = 0
        while time.time() < deadline and done < 5:
            time.sleep(0.2)
            if db.exists():
                conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
                try:
                    done = conn.execute("SELECT COUNT(*) FROM steps").fetchone()[0]
                except sqlite3.OperationalError:
                    done = 0
                finally:
                    conn.close()
        assert done >= 5, "the run never recorded five steps"
        os.kill(proc.pid, signal.SIGKILL)  # the Vigil process itself, mid-run
        proc.wait(10)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # then its browser, which a real crash would orphan
        except ProcessLookupError:
            pass

    with Store.open() as store:
        assert store.integrity_check() == "ok"
        [row] = store.list_sessions()
        assert row.status == "interrupted" and row.steps >= 5
        data = store.load(row.id)
        assert "ended before the run finished" in data.session.reason
        assert [s.index for s in data.steps] == list(range(len(data.steps)))
        assert [s.action.name for s in data.steps[:3]] == ["type", "select", "check"]
        for s in data.steps:  # every kept step has its pictures, readable
            refs = data.blobs[s.index]
            assert Image.open(io.BytesIO(store.get_blob(refs["screenshot_after"]))).size[0] > 0
            assert refs["snapshot_before"]
    r = vigil("sessions")
    assert "interrupted" in r.stdout


def test_two_processes_record_at_once(server, home, tmp_path):
    path = script(tmp_path, JOIN)
    cmd = [sys.executable, "-m", "engine.cli", "run", "join", "--url", server.url("replay_form.html"), "--script",
           path, "--approve", "auto"]
    procs = [subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=os.environ.copy()) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    with Store.open() as store:
        assert store.integrity_check() == "ok"
        rows = store.list_sessions()
        assert [(r.status, r.steps) for r in rows] == [("success", 6), ("success", 6)]
        for r in rows:
            assert [s.status for s in store.load(r.id).steps] == ["completed"] * 6


def test_unusable_store_gets_a_clear_message_and_is_left_alone(server, home, tmp_path):
    home.mkdir(parents=True)
    db = home / "sessions.db"
    db.write_bytes(b"SQLite format 3\x00" + b"\x07garbage" * 600)
    before = db.read_bytes()
    for args in (["sessions"], ["export", "abcd", "--html", str(tmp_path / "r.html")],
                 ["run", "x", "--url", server.url("replay_form.html"), "--script", script(tmp_path, JOIN),
                  "--approve", "auto"]):
        r = vigil(*args)
        assert r.returncode == 2 and "STORE_CORRUPT" in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)
        assert str(db) in r.stderr
    assert "--no-record" in r.stderr
    assert db.read_bytes() == before

    db.unlink()
    Store.open().close()
    conn = sqlite3.connect(db)
    conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(LATEST_VERSION + 5),))
    conn.commit()
    conn.close()
    before = db.read_bytes()
    r = vigil("sessions")
    assert r.returncode == 2 and "STORE_TOO_NEW" in r.stderr and "newer Vigil" in r.stderr
    r = vigil("replay", "abcd")
    assert r.returncode == 2 and "STORE_TOO_NEW" in r.stderr
    assert db.read_bytes() == before


def test_missing_session_and_nothing_to_replay(server, home, tmp_path):
    r = vigil("replay", "zzzz")
    assert r.returncode == 2 and "STORE_NO_SESSION" in r.stderr and "vigil sessions" in r.stderr
    # a run whose only step failed has nothing to replay
    bad = script(tmp_path, "- {action: click, target: {role: button, name: Nowhere}, timeout_ms: 300}\n")
    r = vigil("run", "fails", "--url", server.url("replay_form.html"), "--script", bad, "--approve", "auto")
    assert r.returncode == 1
    [row] = sessions()
    assert row["status"] == "error"
    r = vigil("replay", row["id"][:6])
    assert r.returncode == 2 and "NOTHING_TO_REPLAY" in r.stderr and "failed in the recording" in r.stderr


SECRET, CODE = "Tr0ub4dor&3x", "493817"
SIGN_UP = (f"- {{action: type, target: {{name: Work email}}, text: ada@example.com}}\n"
           f"- {{action: type, target: {{name: Password}}, text: '{SECRET}'}}\n"
           f"- {{action: type, target: {{name: Code}}, text: '{CODE}'}}\n"
           f"- {{action: click, target: {{role: button, name: Create account}}, expect: navigation}}\n")
# the tests sharing the recording: on one worker, one after the other (kept next to each other in this file), so
# that its module-scoped fixture is set up once
SIGNED_UP = pytest.mark.xdist_group("sessions_cli_signed_up")


@pytest.fixture(scope="module")
def signed_up(server, tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """One `vigil run` process that types a password and a one-time code, recorded into a store of its own
    (the store, and what the process printed): each test that looks at that recording gets a copy."""
    home = tmp_path_factory.mktemp("signed-up") / "home"
    steps = script(tmp_path_factory.mktemp("signed-up-script"), SIGN_UP)
    r = subprocess.run([sys.executable, "-m", "engine.cli", "run", "sign up", "--url", server.url("loop_form.html"),
                        "--script", steps, "--approve", "auto"], cwd=REPO, capture_output=True, text=True,
                       timeout=120, env={**os.environ, "VIGIL_HOME": str(home)})
    assert r.returncode == 0, r.stdout + r.stderr
    return home, r


@SIGNED_UP
def test_secrets_are_never_stored_and_never_replayed_as_the_mask(signed_up, home):
    recorded, r = signed_up
    shutil.copytree(recorded, home)
    raw = b"".join(p.read_bytes() for p in home.glob("sessions.db*"))
    for s in (SECRET, "Tr0ub4dor%263x", CODE):  # as typed, and as the GET form put it in the URL
        assert s.encode() not in raw and s not in r.stdout + r.stderr
    [row] = sessions()
    assert "pw=••••••••" in row["url"] or "pw=%E2%80%A2" in row["url"]

    r = vigil("replay", row["id"], "--approve", "auto", "--json")
    assert r.returncode == 1
    res = json.loads(r.stdout)
    pw = res["steps"][1]
    assert pw["status"] == "failed" and "mask of a secret" in pw["result"]["message"]
    assert res["status"] == "error"


@SIGNED_UP
def test_replay_with_approval_asks_for_the_secrets_it_never_recorded(signed_up, home):
    shutil.copytree(signed_up[0], home)
    [row] = sessions()
    # approve the email; approving a masked secret (the password, the code) is refused, so edit it with the real
    # value; then approve the click and the finish
    answers = ("a\n" + "a\n" + f"e\ntype(10, \"{SECRET}\")\n\n" + "a\n" + f"e\ntype(12, \"{CODE}\")\n\n"
               + "a\n" + "a\n")
    r = subprocess.run([sys.executable, "-m", "engine.cli", "replay", row["id"][:8], "--approve", "ask"], cwd=REPO,
                       input=answers, capture_output=True, text=True, timeout=120, env=os.environ.copy())
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("refused: Refused, nothing ran: its text is the mask of a secret") == 2, r.stdout
    assert "finished" in r.stdout and SECRET not in r.stdout + r.stderr and CODE not in r.stdout + r.stderr
    rows = sessions()
    assert rows[0]["status"] == "success" and "pw=" in rows[0]["url"] and "Tr0ub4dor" not in rows[0]["url"]
    assert CODE not in rows[0]["url"]
    raw = b"".join(p.read_bytes() for p in home.glob("sessions.db*"))
    assert b"Tr0ub4dor" not in raw and CODE.encode() not in raw


def test_a_secret_spelled_out_in_the_task_is_redacted_once_typed(server, home):
    """The person wrote the password into the task itself: the title, the first message and the
    plan were stored before the loop knew it was a secret; once it is typed into a password field,
    every stored copy is redacted and no old bytes linger in the files."""
    task = "Type ada@example.com into Work email, type Zebra9Quartz into Password and click Create account"
    r = vigil_process("run", task, "--url", server.url("loop_form.html"), "--approve", "auto", "--json")
    assert r.returncode == 0, r.stderr
    assert "Zebra9Quartz" not in r.stdout + r.stderr
    raw = b"".join(p.read_bytes() for p in home.glob("sessions.db*"))
    assert b"Zebra9Quartz" not in raw
    [row] = sessions()
    assert row["title"].startswith("127.0.0.1: Type ada@example.com into Work email, type •••••••• into")


def test_sessions_delete(home):
    with Store.open() as store:
        keep = store.create_session("keep me", "https://a.example/", "script", "auto")
        drop = store.create_session("drop me", "https://b.example/", "script", "auto")
        store.finish(keep, "success")
        store.finish(drop, "error", reason="failed")
    r = vigil("sessions", "--delete", drop[:6], "zzzz")  # every id is checked before anything is deleted
    assert r.returncode == 2 and "STORE_NO_SESSION" in r.stderr
    assert len(sessions()) == 2
    r = vigil("sessions", "--delete", drop[:6])
    assert r.returncode == 0 and drop in r.stdout
    assert [s["id"] for s in sessions()] == [keep]
