"""Bidi controls from pages and people never take effect in the window (issue 38, item 6): every text a
widget shows — labels, tooltips, item views, text views, tab and window titles — carries markers
(`⟦U+202E⟧`), never a control.

A session recorded by `vigil run` (a real process, a real Chromium) on a page whose element names and title
hold every control (tests/fixtures/bidi_names.html) is opened in the read-only session window (plan, chat,
steps, the stored snapshots' node trees, the payload), and its steps are put to the approval bar; the tab
strip, the status bar and the fleet's lists are given the page's words by hand.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("PySide6.QtWidgets")

from PySide6.QtCore import QModelIndex, Qt  # noqa: E402
from PySide6.QtWidgets import (  # noqa: E402
    QAbstractButton,
    QAbstractItemView,
    QLabel,
    QPlainTextEdit,
    QStatusBar,
    QTabBar,
    QWidget,
)

from engine.models import Action, ProposedStep  # noqa: E402
from engine.models.browsing import TabInfo  # noqa: E402
from engine.models.loop import ApprovalRequest, Plan  # noqa: E402
from engine.models.text import BIDI_CONTROLS, bidi_safe  # noqa: E402

from support.gui_helpers import hosted_bar  # noqa: E402
from support.paths import ROOT  # noqa: E402

PAY = "Pay \u202e001$ won\u202c"
AGREE = "Agree \u202aleft\u202c \u202bright\u202c \u202dlro\u202c"
GREET = "שלום مرحبا"
TASK = "pay the invoice \u202e now"
STEPS = [
    {"action": "type", "target": {"name": "Payee \u2066(\u2067name\u2069)\u2068x\u2069"}, "text": "Ada \u202eevil"},
    {"action": "check", "target": {"name": AGREE}},
    {"action": "click", "target": {"role": "button", "name": GREET}},
    {"action": "click", "target": {"role": "button", "name": PAY}},
    {"action": "finish", "answer": "paid \u202e ok"},
]


def _raw(texts: list[str]) -> list[str]:
    return [t for t in texts if any(c in t for c in BIDI_CONTROLS)]


def _model_texts(model, parent=QModelIndex(), depth: int = 0) -> list[str]:
    """Every cell's text and tooltip of an item model (a tree to 40 levels: the page is shallow)."""
    out: list[str] = []
    try:
        columns = max(1, model.columnCount(parent))
    except TypeError:  # a list model's is not for callers: one column
        columns = 1
    for row in range(model.rowCount(parent)):
        for col in range(columns):
            idx = model.index(row, col, parent)
            for role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
                v = model.data(idx, role)
                if isinstance(v, str):
                    out.append(v)
        first = model.index(row, 0, parent)
        if depth < 40 and model.rowCount(first) > 0:
            out += _model_texts(model, first, depth + 1)
    return out


def shown_texts(root: QWidget) -> list[str]:
    """What `root` and every widget in it show a person as text (editable fields aside: they hold input)."""
    out = [root.windowTitle()]
    for w in [root, *root.findChildren(QWidget)]:
        out.append(w.toolTip())
        if isinstance(w, (QLabel, QAbstractButton)):
            out.append(w.text())
        elif isinstance(w, QPlainTextEdit):
            out.append(w.toPlainText())
        elif isinstance(w, QTabBar):
            out += [x for i in range(w.count()) for x in (w.tabText(i), w.tabToolTip(i))]
        elif isinstance(w, QStatusBar):
            out.append(w.currentMessage())
        elif isinstance(w, QAbstractItemView) and w.model() is not None:
            out += _model_texts(w.model())
    return [t for t in out if t]


@pytest.fixture(scope="module")
def recorded(server, tmp_path_factory):
    """A session `vigil run` recorded on the page: (its store's home, its id)."""
    home = tmp_path_factory.mktemp("bidi_gui_home")
    steps = home / "steps.json"
    steps.write_text(json.dumps(STEPS))
    env = {**os.environ, "VIGIL_HOME": str(home)}
    r = subprocess.run([sys.executable, "-m", "engine.cli", "run", TASK, "--url", server.url("bidi_names.html"),
                        "--script", str(steps), "--approve", "auto"], cwd=ROOT, capture_output=True, text=True,
                       timeout=180, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    from engine.store import Store

    with Store.open(home / "sessions.db") as store:  # (its id read from the store: no second process)
        [row] = store.list_sessions()
    return home, row.id


def test_the_session_window_shows_markers_never_controls(qtbot, aio, recorded):
    from engine.store import Store
    from gui.sessions.session_view import SessionView
    from gui.supervisor.session_library import SessionLibrary

    home, sid = recorded
    with Store.open(home / "sessions.db") as store:
        view = SessionView(SessionLibrary(store).open(sid))
        qtbot.addWidget(view)
        view.show()
        texts: list[str] = []
        for i in range(view.steps.topLevelItemCount()):  # each step, with its pictures, node trees and payload
            view.steps.setCurrentItem(view.steps.topLevelItem(i))
            for tab in range(view.detail.count()):
                view.detail.setCurrentIndex(tab)
                qtbot.wait(10)
                texts += shown_texts(view)
    assert not _raw(texts), _raw(texts)[:5]
    joined = "\n".join(texts)
    assert bidi_safe(PAY) in joined and bidi_safe(AGREE) in joined and bidi_safe(TASK) in joined
    assert "Invoice ⟦U+202E⟧fdp.exe⟦U+202C⟧ review" in joined  # the page's title, in the payload
    assert GREET in joined  # right-to-left letters as they are


def test_the_sessions_list_shows_markers_and_a_rename_keeps_them(qtbot, aio, recorded, tmp_path, monkeypatch):
    from PySide6.QtCore import QSettings

    from gui.sessions.sessions_panel import TITLE_COL
    from gui.supervisor.controller import Supervisor
    from gui.window.main_window import MainWindow

    home, sid = recorded
    monkeypatch.setenv("VIGIL_HOME", str(home))
    window = MainWindow(Supervisor(), settings=QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.show()
    try:
        window.sup.open_store()
        panel = window.sessions
        panel.attach(window.sup)
        panel.select_session(sid)
        qtbot.wait(20)
        texts = shown_texts(panel)
        assert not _raw(texts), _raw(texts)[:5]
        assert bidi_safe(TASK) in "\n".join(texts)
        before = {x.id: x.title for x in window.sup.sessions.list()}
        item = panel.table.item(0, TITLE_COL)
        item.setText(item.text())  # an edit that changes nothing (markers shown, controls kept) renames nothing
        assert {x.id: x.title for x in window.sup.sessions.list()} == before
    finally:
        window.sup.recording.close()


def test_the_approval_bar_shows_markers_never_controls(qtbot, recorded):
    from engine.store import Store

    home, sid = recorded
    with Store.open(home / "sessions.db") as store:
        records = [r for r in store.load(sid).steps if r.proposal is not None]
    bar = hosted_bar(qtbot, 1366, 260)
    shown = 0
    for rec in records:
        req = ApprovalRequest(step_index=rec.index, proposal=rec.proposal, target=rec.target, effect=rec.effect,
                              summary=rec.proposal.description or rec.proposal.action.to_string(),
                              warnings=[f"the page says: {PAY}"] if rec.target else [])
        bar.show_request(req)
        texts = shown_texts(bar.host)
        assert not _raw(texts), _raw(texts)[:5]
        shown += bool(rec.target)
        if (rec.target or {}).get("name") == PAY:
            assert bidi_safe(PAY) in bar.target.text() and bidi_safe(PAY) in bar.warning.text()
            assert bidi_safe(PAY) in bar.summary.text()
    assert shown >= 4


def test_tabs_status_bar_plan_and_fleet_lists_show_markers(qtbot):
    from types import SimpleNamespace

    from gui.fleet.fleet_lists import QueueList, RunTable
    from gui.page.tab_strip import TabStrip
    from gui.run.plan_view import PlanView
    from gui.window.status_bar import StatusBar

    host = QWidget()
    qtbot.addWidget(host)
    strip = TabStrip(host)
    strip.set_tabs([TabInfo(index=0, title="Invoice \u202efdp.exe", url="http://127.0.0.1/a", active=True),
                    TabInfo(index=1, title=GREET, url="http://127.0.0.1/b", opener=0)], 0)
    bar = StatusBar(["idle"], host)
    bar.showMessage(f'Clicked button "{PAY}"')
    plan = PlanView(host)
    plan.set_plan(Plan.from_descriptions([f'Click "{PAY}"', GREET]))
    runs = RunTable(host)
    run = SimpleNamespace(name="payer \u202eA", state="done", steps=2, browser="", answer=f"paid {PAY}", reason="",
                          task=TASK)
    runs.set_runs([run])
    queue = QueueList(host)
    req = ApprovalRequest(step_index=0, proposal=ProposedStep(action=Action(name="click", target="12")),
                          summary=f'Click button "{PAY}"')
    queue.add_entry(SimpleNamespace(id=1, run=run.name, request=req))
    texts = shown_texts(host)
    assert not _raw(texts), _raw(texts)[:5]
    joined = "\n".join(texts)
    assert "Invoice ⟦U+202E⟧fdp.exe" in joined and bidi_safe(PAY) in joined and GREET in joined
    runs.selectRow(0)
    assert runs.selected_run() == run.name, "the run is still found by its own name"
