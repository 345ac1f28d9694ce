"""Standing grants: "approve steps like this on this site" — kept in the session store, listed and revoked
with `vigil mcp grants`, consulted by the loop only for steps with no sensitive reason. A real server under
`--approve ask --terminal` runs a granted click without asking, still asks for a destructive one, and asks
again once the grant is revoked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from test_mcp import ROOT, items_of, ref
from test_mcp_http import HttpServer

from engine.store import Store
from engine.store.grants import GrantBook, kind_of
from engine.store.schema import StoreError


def _grants(home, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "VIGIL_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "engine.mcp", "grants", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


def test_a_grant_covers_one_kind_on_one_site_until_revoked(tmp_path):
    with Store.open(tmp_path / "s.db") as store:
        book = GrantBook(store)
        g = book.add("click", "https://shop.example.co.uk/cart")
        assert (g.site, g.kind, g.active) == ("example.co.uk", "click", True)
        assert book.add("click", "example.co.uk").id == g.id, "the same grant twice is one grant"
        assert book.covering("double_click", "https://www.example.co.uk/other").id == g.id
        assert book.covering("type", "https://shop.example.co.uk/") is None, "another kind"
        assert book.covering("click", "https://example.com/") is None, "another site"
        assert book.covering("navigate", "https://shop.example.co.uk/") is None and kind_of("navigate") is None
        book.revoke(g.id)
        assert book.covering("click", "https://shop.example.co.uk/") is None and book.active() == []
        assert [x.revoked_at is not None for x in book.all()] == [True], "a revoked grant stays on record"
        with pytest.raises(StoreError, match="not a kind of step a grant can cover"):
            book.add("submit", "example.com")


def test_vigil_mcp_grants_lists_adds_and_revokes(tmp_path, monkeypatch, capsys):
    from engine.mcp.cli import main

    monkeypatch.setenv("VIGIL_HOME", str(tmp_path))

    def grants(*args: str) -> tuple[int, str, str]:
        code = main(["grants", *args])
        out = capsys.readouterr()
        return code, out.out, out.err

    assert "No standing grants" in grants()[1]
    code, _, err = grants("--allow", "click", "--site", "127.0.0.1")
    assert code == 0 and "granted #1: clicks on 127.0.0.1 (never sensitive steps)" in err
    listed = json.loads(grants("--json")[1])
    assert [(g["id"], g["kind"], g["site"]) for g in listed] == [(1, "click", "127.0.0.1")]
    code, _, err = grants("--allow", "click")
    assert code == 2 and "--allow KIND needs --site SITE" in err
    assert grants("--revoke", "9")[0] == 2
    assert "revoked #1" in grants("--revoke", "1")[2]
    assert "No standing grants" in grants()[1] and "revoked" in grants("--all")[1]


def test_a_granted_click_runs_without_asking_a_sensitive_one_still_asks(tmp_path, server):
    assert _grants(tmp_path, "--allow", "click", "--site", "127.0.0.1").returncode == 0
    s = HttpServer("--approve", "ask", "--terminal", home=tmp_path)
    try:
        s.connect(s.token)
        pending = s.start_call("browser_navigate", {"url": server.url("mcp_shop.html")})
        s.wait_for(r"^Step \d+: Go to http://")  # navigating is no click: it asks
        s.answer("a\n")
        items = items_of(pending.result(60))

        r = s.call("browser_click", {"ref": ref(items, "Add to cart")}, timeout=60)
        assert not r.is_error and "done, verified" in r.text, r.text
        assert not any('Click button "Add to cart"' in line for line in s.seen), "the grant approved it: no prompt"

        pending = s.start_call("browser_click", {"ref": ref(items, "Delete invoice 4411")})
        prompt = s.wait_for(r"SENSITIVE: ")  # destructive: a grant never covers it
        assert 'Click button "Delete invoice 4411"' in prompt
        s.answer("r\nno deleting\n")
        assert "REJECTED by the person" in pending.result(60).text

        assert "revoked #1" in _grants(tmp_path, "--revoke", "1").stderr
        pending = s.start_call("browser_click", {"ref": ref(items, "Add to cart")})
        s.wait_for(r'^Step \d+: Click button "Add to cart"')  # revoked: asked again
        time.sleep(0.2)
        assert not pending.done()
        s.answer("a\n")
        assert "done, verified" in pending.result(60).text
    finally:
        assert s.close() == 0
    with Store.open(tmp_path / "sessions.db") as store:
        [summary] = store.list_sessions()
        steps = store.load(summary.id).steps
    granted = [st for st in steps if st.decision and (st.decision.reason or "").startswith("a standing grant")]
    assert len(granted) == 1 and granted[0].auto_approved and "clicks on 127.0.0.1" in granted[0].decision.reason
