"""A store damaged in its middle (issue 38, item 3): a real store written by the real Store API, then
whole pages in its middle overwritten with garbage — a leaf of the steps table and the file's middle page
(a picture's) — as a failing disk leaves it. It is refused at open, or, checked on a thread (a big store),
refused for every write from the first on; every command says STORE_CORRUPT with what to do and exits 2
with no traceback; `vigil sessions --recover` copies every readable session into a new store beside it;
the damaged file's bytes never change. No browser."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from engine.models import Action, ActionResult, Decision, ProposedStep, StepRecord
from engine.store import Store, StoreError
from engine.store.recover import recover

from support.paths import ROOT

SESSIONS, STEPS = 4, 6


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    h = tmp_path / "home"
    monkeypatch.setenv("VIGIL_HOME", str(h))
    monkeypatch.delenv("VIGIL_STORE_CHECK_MB", raising=False)
    return h


def _step(i: int) -> StepRecord:
    # a long thought: two steps fill a page, so the steps table has many leaves
    action = Action(name="click", target=str(10 + i))
    return StepRecord(index=i, proposal=ProposedStep(thought=f"step {i}: " + "because " * 150, action=action),
                      decision=Decision.approve(), action=action,
                      result=ActionResult(success=True, action=action.to_string()),
                      url_before="http://shop.test/", url_after="http://shop.test/cart")


def _write_store(db: Path) -> list[str]:
    """SESSIONS sessions of STEPS steps, each step with a picture and a snapshot, as a run stores them."""
    ids = []
    with Store.open(db) as store:
        for n in range(SESSIONS):
            sid = store.create_session(f"task {n}", f"http://shop{n}.test/", "heuristic", "auto")
            for i in range(STEPS):
                store.add_step(sid, _step(i), files={"screenshot_after": ("screenshot", os.urandom(12000)),
                                                     "snapshot_after": ("snapshot", f"node {n}.{i} ".encode() * 2000)})
            store.finish(sid, "success", answer="done")
            ids.append(sid)
    return ids


def _pages(db: Path, sql: str) -> list[int]:
    with sqlite3.connect(db) as c:
        return [r[0] for r in c.execute(sql)]


def _overwrite(db: Path, pages: list[int]) -> None:
    size = 4096
    with sqlite3.connect(db) as c:
        size = c.execute("PRAGMA page_size").fetchone()[0]
    with open(db, "r+b") as f:
        for page in pages:
            f.seek((page - 1) * size)
            f.write(os.urandom(size))


def _damage(db: Path) -> int:
    """Garbage over a leaf in the middle of the steps table and over the file's middle page (the first page
    from there on that is not the steps table's: a picture's or a snapshot's); how many steps the leaf held."""
    leaves = _pages(db, "SELECT pageno FROM dbstat WHERE name='steps' AND pagetype='leaf' ORDER BY pageno")
    leaf = leaves[len(leaves) // 2]
    steps_pages = set(_pages(db, "SELECT pageno FROM dbstat WHERE name='steps'"))
    middle = _pages(db, "PRAGMA page_count")[0] // 2
    while middle in steps_pages:
        middle += 1
    held = _pages(db, f"SELECT ncell FROM dbstat WHERE pageno={leaf}")[0]
    _overwrite(db, [leaf, middle])
    return held


def _digest(db: Path) -> str:
    return hashlib.sha256(db.read_bytes()).hexdigest()


@pytest.fixture
def damaged(home) -> tuple[Path, list[str], int]:
    """The damaged store, its session ids, and how many steps were on the damaged leaf."""
    db = home / "sessions.db"
    ids = _write_store(db)
    lost = _damage(db)
    return db, ids, lost


def _says_what_to_do(exc: StoreError, db: Path) -> None:
    assert exc.code == "STORE_CORRUPT"
    assert str(db) in exc.message and "vigil sessions --recover" in exc.message and "Move it aside" in exc.message


# -- the store ------------------------------------------------------------------------------------
def test_refused_at_open_and_left_alone(damaged):
    db, _, _ = damaged
    before = _digest(db)
    with pytest.raises(StoreError) as e:
        Store.open()
    _says_what_to_do(e.value, db)
    assert _digest(db) == before


def test_checked_on_a_thread_refuses_the_first_write_and_everything_after(damaged, monkeypatch):
    db, ids, _ = damaged
    before = _digest(db)
    monkeypatch.setenv("VIGIL_STORE_CHECK_MB", "0")  # as a big store: the whole check runs on a thread
    store = Store.open()
    heard: list[StoreError] = []
    store.add_damage_listener(heard.append)
    try:
        with pytest.raises(StoreError) as e:  # at once: the write waits for the verdict, which refuses it
            store.create_session("more", "http://a.test/", "heuristic", "auto")
        _says_what_to_do(e.value, db)
        assert store.wait_checked(10) and store.damage is not None
        assert len(heard) == 1 and heard[0].code == "STORE_CORRUPT"
        for attempt in (lambda: store.list_sessions(), lambda: store.finish(ids[0], "error"),
                        lambda: store.put_blob("screenshot", b"x")):
            with pytest.raises(StoreError) as e:
                attempt()
            assert e.value.code == "STORE_CORRUPT"
    finally:
        store.close()
    assert _digest(db) == before


def test_a_read_that_meets_a_damaged_page_says_store_corrupt_and_the_store_refuses_from_then_on(damaged):
    db, ids, _ = damaged
    before = _digest(db)
    with Store.open(check="off") as store:  # nothing checked: the damage is met by the reads themselves
        failed = []
        for sid in ids:
            try:
                store.load(sid)
            except StoreError as exc:  # never sqlite3.DatabaseError "database disk image is malformed"
                failed.append(exc)
                break
        assert failed and failed[0].code == "STORE_CORRUPT" and "--recover" in failed[0].message
        with pytest.raises(StoreError) as e:
            store.create_session("more", "http://a.test/", "heuristic", "auto")
        assert e.value.code == "STORE_CORRUPT"
    assert _digest(db) == before


def test_a_picture_whose_bytes_changed_is_refused_not_returned(home):
    db = home / "sessions.db"
    ids = _write_store(db)
    page = _pages(db, "SELECT pageno FROM dbstat WHERE name='blobs' AND pagetype='overflow' ORDER BY pageno")[0]
    with open(db, "r+b") as f:  # inside the page, its link to the next one kept: SQLite's check cannot see it
        f.seek((page - 1) * 4096 + 200)
        f.write(b"\x00" * 64)
    with Store.open() as store:  # structurally sound: opens
        data = store.load(ids[0])
        bad = 0
        for session in ids:
            for refs in store.load(session).blobs.values():
                for sha in refs.values():
                    try:
                        store.get_blob(sha)
                    except StoreError as exc:
                        assert exc.code == "STORE_CORRUPT" and "checksum" in exc.message
                        bad += 1
        assert bad == 1 and data.session.id == ids[0]


# -- the commands ---------------------------------------------------------------------------------
def _vigil(*args: str, cwd: Path = ROOT) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "engine.cli", *args], cwd=cwd, env=os.environ.copy(), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)


def test_every_command_says_store_corrupt_exits_2_and_writes_nothing(damaged, tmp_path):
    db, ids, _ = damaged
    before = _digest(db)
    page = tmp_path / "page.html"
    page.write_text("<button>Go</button>")
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(f"runs:\n  - name: a\n    task: click Go\n    url: {page}\n")
    commands = {"sessions": ("sessions",), "sessions --json": ("sessions", "--json"),
                "export": ("export", ids[0][:8], "--html", str(tmp_path / "r.html")),
                "run": ("run", "click Go", "--url", str(page), "--approve", "auto"),
                "fleet": ("fleet", str(fleet), "--approve", "auto"),
                "mcp grants": ("mcp", "grants"), "mcp": ("mcp", "--approve", "auto")}
    procs = {name: _vigil(*args) for name, args in commands.items()}  # at once: each is a Python start-up
    for name, p in procs.items():
        out, err = p.communicate(timeout=120)
        assert p.returncode == 2, (name, out, err)
        assert "STORE_CORRUPT" in err and "vigil sessions --recover" in err and str(db) in err, (name, err)
        assert "Traceback" not in err + out, (name, err)
    assert _digest(db) == before and not (tmp_path / "r.html").exists()


def test_recover_copies_every_readable_session_beside_the_damaged_store(damaged, home):
    db, ids, lost = damaged
    before = _digest(db)
    p = _vigil("sessions", "--recover")
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    assert "Traceback" not in out + err
    [target] = home.glob("sessions.recovered-*.db")
    assert str(target) in out and f"mv '{db}' '{db}.broken'" in out and f"mv '{target}' '{db}'" in out
    assert "lost:" in out and "steps" in out
    assert _digest(db) == before  # only read
    with Store.open(target, check="now") as store:  # sound: the whole check passes
        listed = store.list_sessions()
        assert sorted(s.id for s in listed) == sorted(ids)  # every session row was readable
        assert 0 < lost < 4 and sum(s.steps for s in listed) == SESSIONS * STEPS - lost  # the damaged leaf's only
        for s in listed:  # each recovered session loads whole, with its pictures that read back
            data = store.load(s.id)
            for refs in data.blobs.values():
                for sha in refs.values():
                    assert store.get_blob(sha)
        assert store.integrity_check() == "ok"


def test_recover_as_json_and_on_a_sound_store(home):
    db = home / "sessions.db"
    ids = _write_store(db)
    rec = recover(db, stamp="sound")  # a store SQLite finds sound is copied too (a record in it may not be)
    assert rec.complete and rec.sessions == len(ids) and rec.steps == SESSIONS * STEPS
    rec.target.unlink()
    _damage(db)
    p = _vigil("sessions", "--recover", "--json")
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    rec = json.loads(out)
    assert rec["sessions"] == len(ids) and rec["sessions_before"] == len(ids)
    assert rec["damaged_stretches"].get("steps") and Path(rec["target"]).is_file()
    assert rec["method"] in ("row by row", "sqlite3 .recover")


def test_recover_refuses_what_is_not_sqlite_and_a_missing_store(home):
    home.mkdir(parents=True)
    with pytest.raises(StoreError) as e:
        recover(home / "sessions.db")
    assert e.value.code == "STORE_UNAVAILABLE"
    (home / "sessions.db").write_bytes(os.urandom(8192))
    with pytest.raises(StoreError) as e:
        recover(home / "sessions.db")
    assert e.value.code == "STORE_CORRUPT" and "Move it aside" in e.value.message
    assert sorted(p.name for p in home.iterdir()) == ["sessions.db"]
