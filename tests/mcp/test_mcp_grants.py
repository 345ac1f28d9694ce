"""Grants: "approve steps like this on this site" for the rest of the session — kept in the session store
with the server run and the recorded session they belong to, given with `vigil mcp --grant KIND@SITE` or
the window's bar, listed and revoked with `vigil mcp grants`, ended when the run ends and never applied in
a later one; consulted by the loop only for steps with no sensitive reason. A real server under
`--approve ask --terminal` runs a granted click and granted typing without asking, still asks for typing
into a password field and for a destructive click, asks again once a grant is revoked; the next server
run asks for everything again."""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest
from test_mcp_http import HttpServer

from engine.store import Store
from engine.store.grants import GrantBook, kind_of, new_run_id, parse_grant, session_grants
from engine.store.schema import StoreError

from support.cli_inprocess import vigil_in_process
from support.mcp_server import items_of, ref


def _vigil_mcp(home, *args: str) -> subprocess.CompletedProcess:
    """`vigil mcp ARGS` that ends without serving (grants, bad options), in this process on the store in `home`: the
    same code a `vigil mcp` process runs, without its second of Python start-up (the store is shared with the
    server process all the same)."""
    saved = os.environ.get("VIGIL_HOME")
    os.environ["VIGIL_HOME"] = str(home)
    try:
        return vigil_in_process("mcp", *args)
    finally:
        if saved is None:
            os.environ.pop("VIGIL_HOME", None)
        else:
            os.environ["VIGIL_HOME"] = saved


def _grants(home, *args: str) -> subprocess.CompletedProcess:
    return _vigil_mcp(home, "grants", *args)


def test_a_grant_covers_one_kind_on_one_origin_for_its_own_run_only(tmp_path):
    with Store.open(tmp_path / "s.db") as store:
        run, later = GrantBook(store, new_run_id()), GrantBook(store, new_run_id())
        g = run.add("click", "https://shop.example.co.uk/cart")
        assert (g.site, g.kind, g.active, g.run_id) == ("https://shop.example.co.uk", "click", True, run.run_id)
        assert run.add("click", "shop.example.co.uk").id == g.id, "the same grant twice is one grant"
        assert run.add("click", "https://shop.example.co.uk:443/x").id == g.id, "the default port is the origin's"
        assert run.covering("double_click", "https://shop.example.co.uk/other?q=1").id == g.id
        assert run.covering("type", "https://shop.example.co.uk/") is None, "another kind"
        assert run.covering("click", "https://example.com/") is None, "another site"
        for other in ("https://www.example.co.uk/", "https://example.co.uk/", "http://shop.example.co.uk/",
                      "https://shop.example.co.uk:8443/", "https://evil.shop.example.co.uk/", "about:srcdoc", ""):
            assert run.covering("click", other) is None, f"another origin: {other}"
        assert run.covering("navigate", "https://shop.example.co.uk/") is None and kind_of("navigate") is None
        assert later.covering("click", "https://shop.example.co.uk/") is None, "another run: not applied"
        assert later.active() == [] and [x.id for x in GrantBook(store).active()] == [g.id]

        t = run.add("type", "example.co.uk")
        run.attach_session("s-1")
        assert [x.session_id for x in run.all()] == ["s-1", "s-1"], "given before the session: recorded with it"
        run.revoke(g.id)
        assert run.covering("click", "https://shop.example.co.uk/") is None
        assert [x.id for x in run.end_run()] == [t.id], "the run's end ends what is still in force"
        assert run.covering("type", "https://shop.example.co.uk/") is None and run.active() == []
        kept = {x.kind: x for x in run.of_session("s-1")}
        assert kept["click"].revoked_at and not kept["click"].ended_at, "revoked stays revoked, on record"
        assert kept["type"].ended_at and kept["type"].state().startswith("ended with its session")

        gone = GrantBook(store, "999999999-gone")  # a run whose process is no more (it crashed: never ended)
        assert not gone.add("scroll", "example.com").active and gone.covering("scroll", "https://example.com/") is None
        with pytest.raises(StoreError, match="not a kind of step a grant can cover"):
            run.add("submit", "example.com")
        with pytest.raises(StoreError, match="given while a server runs"):
            GrantBook(store).add("click", "example.com")
    assert parse_grant("Click@https://example.com/x") == ("click", "https://example.com")
    assert parse_grant("click@example.com") == ("click", "https://example.com"), "no scheme: https"
    assert parse_grant("click@127.0.0.1:8123") == ("click", "http://127.0.0.1:8123"), "a local host: http"
    assert parse_grant("click@http://shop.example.com:8080/a") == ("click", "http://shop.example.com:8080")
    for bad, says in (("click", "is not KIND@SITE"), ("submit@example.com", "not a kind of step"),
                      ("click@ ", "is not KIND@SITE"), ("type@:::", "names no site")):
        with pytest.raises(StoreError, match=says):
            parse_grant(bad)


def test_vigil_mcp_grants_lists_and_revokes_and_says_where_grants_are_given(tmp_path, monkeypatch, capsys):
    from engine.mcp.cli import main

    monkeypatch.setenv("VIGIL_HOME", str(tmp_path))

    def grants(*args: str) -> tuple[int, str, str]:
        code = main(["grants", *args])
        out = capsys.readouterr()
        return code, out.out, out.err

    assert "No grants in force" in grants()[1]
    code, _, err = grants("--allow", "click", "--site", "127.0.0.1")
    assert code == 2 and "a grant lasts one session now" in err and "vigil mcp --grant KIND@SITE" in err
    code, _, err = grants("--grant", "click@127.0.0.1")
    assert code == 2 and "a grant lasts one session now" in err
    with Store.open(tmp_path / "sessions.db") as store:  # a server run of this process gave one
        GrantBook(store, new_run_id()).add("click", "127.0.0.1")
    listed = json.loads(grants("--json")[1])
    assert [(g["id"], g["kind"], g["site"], g["state"]) for g in listed] == [
        (1, "click", "http://127.0.0.1", "in force for this session")]
    assert grants("--revoke", "9")[0] == 2
    assert "revoked #1" in grants("--revoke", "1")[2]
    assert "No grants in force" in grants()[1] and "revoked" in grants("--all")[1]
    code, _, err = grants("--session", "nope")
    assert code == 2 and "No session 'nope'" in err


def test_a_server_run_applies_its_grants_and_no_later_run_does(tmp_path, server):
    code = _vigil_mcp(tmp_path, "--approve", "auto", "--grant", "tap@127.0.0.1")  # refused before it serves
    assert code.returncode == 2 and "'tap' is not a kind of step a grant can cover" in code.stderr

    s = HttpServer("--approve", "ask", "--terminal", "--grant", f"click@127.0.0.1:{server.port}", "--grant",
                   f"type@{server.url('mcp_shop.html')}", home=tmp_path)
    try:
        assert f"granted #2 for this session: typing into fields on http://127.0.0.1:{server.port}" in s.banner, \
            s.banner
        s.connect(s.token)
        pending = s.start_call("browser_navigate", {"url": server.url("mcp_shop.html")})
        s.wait_for(r"^Step \d+: Go to http://")  # navigating is no click: it asks
        s.answer("a\n")
        items = items_of(pending.result(60))

        r = s.call("browser_click", {"ref": ref(items, "Add to cart")}, timeout=60)
        assert not r.is_error and "done, verified" in r.text, r.text
        r = s.call("browser_type", {"ref": ref(items, "Username"), "text": "ada"}, timeout=60)
        assert not r.is_error and "done" in r.text, r.text
        assert not any(('Click button "Add to cart"' in line or "Username" in line) and line.startswith("Step")
                       for line in s.seen), "the grants approved them: no prompt"

        pending = s.start_call("browser_type", {"ref": ref(items, "Password"), "text": "hunter2-secret"})
        prompt = s.wait_for(r"SENSITIVE: ")  # a password field: a grant of typing never covers it
        assert "password" in prompt.lower()
        s.answer("r\nnot now\n")
        assert "REJECTED by the person" in pending.result(60).text

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
        data = store.load(summary.id)
        kept = {g.kind: g for g in session_grants(store, summary.id)}
    assert set(kept) == {"click", "type"} and kept["click"].run_id == data.session.metadata["mcp"]["run"]
    assert kept["click"].revoked_at and not kept["click"].ended_at
    assert kept["type"].ended_at and not kept["type"].revoked_at, "the run's end ended the grant still in force"
    granted = [st for st in data.steps if st.decision and "grant of the person" in (st.decision.reason or "")]
    assert [st.proposal.action.name for st in granted] == ["click", "type"]
    assert all(st.auto_approved for st in granted) and \
        f"clicks on http://127.0.0.1:{server.port} (#1, for this session)" in granted[0].decision.reason
    assert "hunter2-secret" not in json.dumps([st.model_dump(mode="json") for st in data.steps])
    listed = _grants(tmp_path, "--session", summary.id[:8])
    assert "revoked" in listed.stdout and "ended with its session" in listed.stdout, listed.stdout

    s = HttpServer("--approve", "ask", "--terminal", home=tmp_path)  # a later session: no grant applies
    try:
        s.connect(s.token)
        pending = s.start_call("browser_navigate", {"url": server.url("mcp_shop.html")})
        s.wait_for(r"^Step \d+: Go to http://")
        s.answer("a\n")
        items = items_of(pending.result(60))
        pending = s.start_call("browser_type", {"ref": ref(items, "Username"), "text": "ada"})
        s.wait_for(r"^Step \d+: Type")
        offered = s.wait_for(r"\[g\]: approve, and allow")
        assert f"typing into fields on http://127.0.0.1:{server.port} for this session" in offered, offered
        time.sleep(0.2)
        assert not pending.done(), "the last run's grant of typing does not carry over"
        s.answer("g\n")  # approved, and granted at the terminal prompt
        assert not pending.result(60).is_error
        s.wait_for(r"granted: #\d+ ")
        asked = len([line for line in s.seen if line.startswith("Step")])
        r = s.call("browser_type", {"ref": ref(items, "Username"), "text": "grace"}, timeout=60)
        assert not r.is_error, r.text
        assert len([line for line in s.seen if line.startswith("Step")]) == asked, "the new grant approved it"
    finally:
        assert s.close() == 0
