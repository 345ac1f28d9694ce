"""An MCP-driven session is recorded like any run: planner `mcp`, the client's name from the MCP
handshake, every step — and it can be exported and replayed. A typed password never reaches the
store. Real server subprocess over stdio, real Chromium, the SDK's client; VIGIL_HOME is a temp dir.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.mcp_server import ROOT, McpServerProcess, items_of, ref

SECRET = "Correct-Horse-42"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, server):
    """Two sessions by one client: a shop session ended with browser_close, then a sign-in session
    ended by the client going away."""
    home = tmp_path_factory.mktemp("vigil-home")
    mcp = McpServerProcess("--approve", "auto", home=home, client_name="store-test-client")
    try:
        items = items_of(mcp.call("browser_navigate", {"url": server.url("mcp_shop.html")}))
        assert not mcp.call("browser_click", {"ref": ref(items, "Add to cart")}).is_error
        assert not mcp.call("browser_type", {"ref": ref(items, "Username"), "text": "ada"}).is_error
        assert not mcp.call("browser_close").is_error
        items = items_of(mcp.call("browser_navigate", {"url": server.url("mcp_shop.html")}))
        assert not mcp.call("browser_type", {"ref": ref(items, "Password"), "text": SECRET}).is_error
    finally:
        mcp.close()  # the client disconnects: the server ends the run, stores it and exits
    return home, mcp.stderr()


def _store(home: Path):
    from engine.store import Store
    return Store.open(home / "sessions.db")


def test_sessions_are_recorded_with_planner_mcp_and_the_client_name(recorded):
    home, stderr = recorded
    with _store(home) as store:
        sessions = sorted(store.list_sessions(), key=lambda s: s.started)
        assert len(sessions) == 2, sessions
        data = [store.load(s.id) for s in sessions]
    for d in data:
        assert d.session.planner == "mcp" and d.session.policy == "auto"
        assert d.session.metadata["mcp"]["client"] == "store-test-client"
        assert d.session.metadata["mcp"]["transport"] == "stdio"
        assert d.session.task == "MCP session with store-test-client"
        assert d.session.status == "success", (d.session.status, d.session.reason)
    shop, signin = data
    assert [s.action.name for s in shop.steps] == ["navigate", "click", "type", "finish"]
    assert shop.steps[-1].action.answer == "The client closed the browser."
    assert [s.status for s in shop.steps] == ["completed"] * 4
    assert signin.steps[-1].action.answer == "The MCP client disconnected."
    assert f"kept as session {shop.session.id[:8]}" in stderr


def test_a_typed_password_never_reaches_the_store(recorded):
    home, _ = recorded
    with _store(home) as store:
        signin = store.load(sorted(store.list_sessions(), key=lambda s: s.started)[1].id)
    typed = [s for s in signin.steps if s.action is not None and s.action.name == "type"]
    assert typed and typed[0].action.text == "••••••••"
    for f in home.glob("sessions.db*"):
        assert SECRET.encode() not in f.read_bytes(), f


def test_no_prefix_of_a_typed_password_reaches_the_store(recorded):
    home, _ = recorded
    data = b"".join(f.read_bytes() for f in home.glob("sessions.db*"))
    assert not [k for k in range(8, len(SECRET)) if SECRET[:k].encode() in data]


def test_a_recorded_session_exports_and_replays(recorded, tmp_path):
    home, _ = recorded
    env = {**os.environ, "VIGIL_HOME": str(home)}
    with _store(home) as store:
        shop = sorted(store.list_sessions(), key=lambda s: s.started)[0].id
    html = tmp_path / "report.html"
    out = subprocess.run([sys.executable, "-m", "engine.cli", "export", shop[:8], "--html", str(html)], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "Add to cart" in html.read_text(encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "engine.cli", "replay", shop[:8], "--approve", "auto", "--no-record"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.count(" ok ") >= 3 and "finished" in out.stdout, out.stdout
