"""The window on a store damaged in its middle (issue 38, item 3): it starts, says STORE_CORRUPT and what
to do (`vigil sessions --recover`) in the banner and under the sessions list, never raises, and the file
is not written — whether the damage is found at open (a store of normal size) or by the whole check on
its thread after the store opened (a big one; VIGIL_STORE_CHECK_MB=0 makes this one count as big). The
real window and the real store, written by the real Store API; no browser (the store part of the
window's start: `open_store`, then the panel attached, as `MainWindow.startup` does)."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path

import pytest

pytest.importorskip("PySide6.QtWidgets")

from PySide6.QtCore import QSettings  # noqa: E402


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    h = tmp_path / "vigil_home"
    monkeypatch.setenv("VIGIL_HOME", str(h))
    monkeypatch.delenv("VIGIL_STORE_CHECK_MB", raising=False)
    return h


def _damaged_store(db: Path) -> None:
    """Three sessions with steps, pictures and snapshots; then garbage over a leaf in the middle of the
    steps table."""
    from engine.models import Action, ActionResult, Decision, ProposedStep, StepRecord
    from engine.store import Store

    with Store.open(db) as store:
        for n in range(3):
            sid = store.create_session(f"task {n}", "http://shop.test/", "heuristic", "auto")
            for i in range(6):
                a = Action(name="click", target=str(i))
                step = StepRecord(index=i, proposal=ProposedStep(thought="because " * 150, action=a),
                                  decision=Decision.approve(), action=a,
                                  result=ActionResult(success=True, action=a.to_string()))
                store.add_step(sid, step, files={"screenshot_after": ("screenshot", os.urandom(8000))})
            store.finish(sid, "success")
    with sqlite3.connect(db) as c:
        leaves = [r[0] for r in c.execute("SELECT pageno FROM dbstat WHERE name='steps' AND pagetype='leaf' "
                                          "ORDER BY pageno")]
        size = c.execute("PRAGMA page_size").fetchone()[0]
    with open(db, "r+b") as f:
        f.seek((leaves[len(leaves) // 2] - 1) * size)
        f.write(os.urandom(size))


@pytest.mark.parametrize("found", ["at open", "on its thread"])
def test_the_window_says_the_store_is_damaged_and_does_not_crash(qtbot, aio, home, tmp_path, monkeypatch, found):
    from gui.supervisor.controller import Supervisor
    from gui.window.main_window import MainWindow

    db = home / "sessions.db"
    _damaged_store(db)
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    if found == "on its thread":
        monkeypatch.setenv("VIGIL_STORE_CHECK_MB", "0")
    window = MainWindow(Supervisor(), settings=QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.show()
    try:
        window.sup.open_store()
        window.sessions.attach(window.sup)
        panel = window.sessions
        if found == "at open":  # refused: no store, the controller's reason under the list
            assert window.sup.sessions is None
            said = panel.details.text()
        else:  # opened; the check on its thread finds the damage and the panel says it
            assert window.sup.sessions is not None
            qtbot.waitUntil(lambda: panel.damage is not None, timeout=10000)
            said = panel.details.text()
            assert "STORE_CORRUPT" in said and "STORE_CORRUPT" in window.banner.text()
            assert panel.table.rowCount() == 0 and not panel.open_btn.isEnabled() and not panel.new_btn.isEnabled()
        for words in ("not a readable Vigil database", "vigil sessions --recover", str(db)):
            assert words in said and words in window.banner.text()
        assert window.banner.isVisible()
        panel.refresh()  # again: still said, nothing raised
        qtbot.wait(50)
    finally:
        window.sup.recording.close()
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
