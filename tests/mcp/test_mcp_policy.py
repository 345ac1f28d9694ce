"""Approval policies of `vigil mcp` without a window: `ask` is refused at start where no person can
be asked, and under `auto-safe` a sensitive step is not run — the tool error says it needs a person —
while ordinary steps run. Real server subprocesses, real Chromium, the SDK's client.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest

from engine.mcp.probe import stdio_probe

from support.mcp_server import ROOT, SECRET, McpServerProcess, items_of, ref
from support.mcp_server import vigil_script as _vigil


def _start(*options: str, env_update: dict | None = None, drop: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(env_update or {})
    return subprocess.run([sys.executable, "-m", "engine.mcp", *options], cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)


def test_ask_without_a_display_is_refused_at_start_with_the_ways_out():
    out = _start("--approve", "ask", drop=("DISPLAY", "WAYLAND_DISPLAY"))
    assert out.returncode == 2
    assert out.stdout == ""  # stdout is the protocol channel: nothing but MCP goes there
    msg = out.stderr
    assert msg.startswith("vigil mcp: NEEDS_PERSON: --approve ask needs a person"), msg
    assert "no display" in msg and "--approve auto-safe" in msg and "--approve auto" in msg
    assert "Traceback" not in msg
    assert _start(drop=("DISPLAY", "WAYLAND_DISPLAY")).returncode == 2, "ask is the default policy"


def test_ask_with_a_display_opens_the_window_hosting_the_server(server, tmp_path):
    """`vigil mcp` (the client's command) under ask where a window can open: the window hosts the server
    over stdio, on the client's tab; when the client disconnects, the window closes and the process ends."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "VIGIL_MCP_TOKEN")}
    env.update(QT_QPA_PLATFORM="offscreen", VIGIL_HOME=str(tmp_path))
    vigil = _vigil()[0]

    async def session():
        with open(tmp_path / "stderr.txt", "w+", encoding="utf-8") as errlog:
            async with stdio_probe(vigil, ["mcp", "--url", server.url("mcp_shop.html")], env=env, cwd=str(ROOT),
                                   errlog=errlog, client_name="window-client", timeout=120) as probe:
                return await probe.tools(), await probe.call("browser_snapshot")

    tools, snap = asyncio.run(asyncio.wait_for(session(), 180))
    assert "browser_click" in tools
    assert not snap.is_error and "Add to cart" in snap.page(), snap.text
    said = (tmp_path / "stderr.txt").read_text(encoding="utf-8")
    assert "serving MCP over stdio; each step is approved in the Vigil window" in said, said
    assert "Traceback" not in said


def test_the_engine_entry_point_cannot_open_the_window_and_names_vigil_mcp():
    out = _start("--approve", "ask", env_update={"DISPLAY": ":99"})
    assert out.returncode == 2 and "run `vigil mcp`" in out.stderr and "--http PORT --terminal" in out.stderr, \
        out.stderr


def test_terminal_approval_needs_http():
    out = _start("--approve", "ask", "--terminal")
    assert out.returncode == 2 and "--terminal needs --http" in out.stderr, out.stderr


def test_a_bad_start_url_is_refused_at_start():
    out = _start("--approve", "auto", "--url", "file:///etc/passwd")
    assert out.returncode == 2 and "BAD_URL" in out.stderr and "--allow-file-urls" in out.stderr, out.stderr


@pytest.fixture(scope="module")
def auto_safe(tmp_path_factory):
    s = McpServerProcess("--approve", "auto-safe", home=tmp_path_factory.mktemp("vigil-home"))
    yield s
    s.close()


def test_auto_safe_refuses_a_password_step_it_cannot_ask_about_and_nothing_is_typed(auto_safe, server):
    items = items_of(auto_safe.call("browser_navigate", {"url": server.url("mcp_shop.html")}))
    pw = ref(items, "Password")
    r = auto_safe.call("browser_type", {"ref": pw, "text": SECRET})
    assert r.is_error
    assert r.text.startswith(f'type({pw}, "••••••••") — NOT RUN: this step needs a person\'s approval, and no '
                             "person is watching this server (--approve auto-safe)"), r.text
    assert "needs a person because it: types into a password, one-time-code or card field" in r.page()
    assert SECRET not in r.text
    # nothing reached the page: it echoes every keystroke, and there is no echo
    assert "password is" not in auto_safe.call("browser_console_messages").text
    assert "No element matches" in auto_safe.call("browser_find", {"text": "You typed"}).text


def test_auto_safe_refuses_a_destructive_click_and_runs_an_ordinary_one(auto_safe, server):
    items = items_of(auto_safe.call("browser_navigate", {"url": server.url("mcp_shop.html")}))
    r = auto_safe.call("browser_click", {"ref": ref(items, "Delete invoice 4411")})
    assert r.is_error and "NOT RUN" in r.text, r.text
    assert 'is destructive or irreversible ("delete"): button "Delete invoice 4411"' in r.page(), "page words fenced"
    assert "Page: no change" in r.text
    assert "1 match" in auto_safe.call("browser_find", {"name": "Delete invoice 4411"}).text, "still there"
    r = auto_safe.call("browser_click", {"ref": ref(items, "Add to cart")})
    assert not r.is_error and "done, verified" in r.text, r.text
