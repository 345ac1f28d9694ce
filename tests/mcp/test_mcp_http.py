"""`vigil mcp --http`: streamable HTTP on 127.0.0.1 behind a bearer token, and a person approving at
the terminal that started it. Real server subprocesses, real Chromium, the SDK's client; the person's
answers are typed into the server's stdin, exactly as at a terminal.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import httpx2
import pytest

from support.mcp_client import ThreadedProbe
from support.mcp_server import ROOT, HttpServer, items_of, ref

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def supervised(tmp_path_factory):
    s = HttpServer("--approve", "ask", "--terminal", home=tmp_path_factory.mktemp("vigil-home"))
    yield s
    s.close()


def _listening_address(port: int) -> str:
    """The local address of the listening TCP socket on `port`, from /proc/net/tcp (hex, little-endian)."""
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(path) as f:
            for row in f.read().splitlines()[1:]:
                cols = row.split()
                addr, hexport = cols[1].split(":")
                if int(hexport, 16) == port and cols[3] == "0A":
                    return addr
    return ""


def test_http_binds_loopback_only_and_prints_a_random_token(supervised):
    assert supervised.url and supervised.url.startswith("http://127.0.0.1:") and supervised.url.endswith("/mcp")
    port = int(supervised.url.rsplit(":", 1)[1].split("/")[0])
    if sys.platform.startswith("linux"):
        assert _listening_address(port) == "0100007F", "listens on 127.0.0.1, not on every interface"
    assert supervised.token and len(supervised.token) >= 32


def test_requests_without_the_token_get_401(supervised):
    r = httpx2.post(supervised.url, json=INIT, headers=HEADERS, timeout=30)
    assert r.status_code == 401
    assert r.headers["www-authenticate"].startswith("Bearer")
    assert "Authorization: Bearer" in r.json()["error_description"]
    r = httpx2.post(supervised.url, json=INIT, headers={**HEADERS, "Authorization": "Bearer not-the-token"}, timeout=30)
    assert r.status_code == 401
    r = httpx2.get(supervised.url, headers={"Authorization": f"Basic {supervised.token}"}, timeout=30)
    assert r.status_code == 401
    r = httpx2.post(supervised.url, json=INIT, headers={**HEADERS, "Authorization": f"Bearer {supervised.token}"},
                    timeout=30)
    assert r.status_code == 200, r.text


def test_host_and_origin_must_name_this_very_server(supervised):
    """Host and Origin are matched exactly (a prefix match let `127.0.0.1:PORT.evil.example` and pages on any
    other local port through): the wrong ones are refused even with the right token."""
    port = int(supervised.url.rsplit(":", 1)[1].split("/")[0])
    auth = {**HEADERS, "Authorization": f"Bearer {supervised.token}"}
    other = port + 1 if port < 65535 else port - 1
    for host in (f"127.0.0.1:{port}.evil.example", f"127.0.0.1:{other}", "evil.example", f"localhost:{port}0"):
        r = httpx2.post(supervised.url, json=INIT, headers={**auth, "Host": host}, timeout=30)
        assert r.status_code == 421, (host, r.status_code, r.text)
        assert "is not this server" in r.json()["error_description"]
    for origin in (f"http://127.0.0.1:{other}", f"http://127.0.0.1:{port}.evil.example", "http://evil.example",
                   f"https://127.0.0.1:{port}", "null"):
        r = httpx2.post(supervised.url, json=INIT, headers={**auth, "Origin": origin}, timeout=30)
        assert r.status_code == 403, (origin, r.status_code, r.text)
        assert "may not use this server" in r.json()["error_description"]
    for host, origin in ((f"127.0.0.1:{port}", f"http://127.0.0.1:{port}"), (f"localhost:{port}", None)):
        headers = {**auth, "Host": host, **({"Origin": origin} if origin else {})}
        r = httpx2.post(supervised.url, json=INIT, headers=headers, timeout=30)
        assert r.status_code == 200, (host, origin, r.status_code, r.text)


def test_a_person_at_the_terminal_approves_and_rejects_and_the_reason_reaches_the_client(supervised, server):
    s = supervised
    s.connect(s.token)
    pending = s.start_call("browser_navigate", {"url": server.url("mcp_shop.html")})
    s.wait_for(r"^Step \d+: Go to http://")
    time.sleep(0.3)
    assert not pending.done(), "nothing runs before it is approved"
    s.answer("a\n")
    items = items_of(pending.result(60))

    pending = s.start_call("browser_click", {"ref": ref(items, "Delete invoice 4411"),
                                             "element": "the delete button of invoice 4411"})
    prompt = s.wait_for(r"SENSITIVE: ")
    assert 'Click button "Delete invoice 4411"' in prompt and "why: the delete button of invoice 4411" in prompt
    s.answer("r\nArchive invoice 4411 instead, never delete invoices\n")
    r = pending.result(60)
    assert r.is_error
    assert r.text.startswith(f"click({ref(items, 'Delete invoice 4411')}) — REJECTED by the person; nothing ran. "
                             "Their reason: Archive invoice 4411 instead, never delete invoices"), r.text
    assert "Page: no change in the semantic payload" in r.text
    assert "1 match" in s.call("browser_find", {"name": "Delete invoice 4411"}).text, "the page is unchanged"

    pending = s.start_call("browser_click", {"ref": ref(items, "Add to cart")})
    s.wait_for(r'^Step \d+: Click button "Add to cart"')
    s.answer("y\n")
    r = pending.result(60)
    assert not r.is_error and "done, verified" in r.text, r.text

    # the person takes over with an action of their own: it runs as theirs, the client hears which
    add, delete = ref(items, "Add to cart"), ref(items, "Delete invoice 4412")
    pending = s.start_call("browser_click", {"ref": delete})
    s.wait_for(r'^Step \d+: Click button "Delete invoice 4412"')
    s.answer(f"t\nclick({add})\n")
    r = pending.result(60)
    assert not r.is_error, r.text
    assert r.text.startswith(f"click({delete}) — the person took over and ran click({add}) instead"), r.text
    assert "Cart: 2 items" in s.call("browser_find", {"text": "Cart:"}).page()
    assert "1 match" in s.call("browser_find", {"name": "Delete invoice 4412"}).text

    # the person edits the step: the client hears what ran instead
    user = ref(items, "Username")
    pending = s.start_call("browser_type", {"ref": user, "text": "ada"})
    s.wait_for(r'^Step \d+: Type "ada" into textbox "Username"')
    s.answer(f'e\ntype({user}, "ada.lovelace")\n\n')
    r = pending.result(60)
    assert not r.is_error, r.text
    edited = f'type({user}, "ada") — EDITED by the person to type({user}, "ada.lovelace") — done'
    assert r.text.startswith(edited), r.text
    assert '= "ada.lovelace"' in r.page()

    # a password: the person approves what they see, and neither they nor the client see the value
    secret = "pa55-w0rd-at-the-terminal"
    pending = s.start_call("browser_type", {"ref": ref(items, "Password"), "text": secret})
    prompt = s.wait_for(r"SENSITIVE: types into a password")
    s.answer("a\n")
    r = pending.result(60)
    assert not r.is_error and r.text.startswith(f'type({ref(items, "Password")}, "••••••••") — done'), r.text
    assert "Type hidden characters into textbox \"Password\"" in prompt
    assert secret[:4] not in "".join(s.seen) and secret[:4] not in r.text


def test_two_clients_questions_reach_the_person_one_at_a_time_each_naming_its_client(supervised, server):
    s = supervised
    if s.client.probe is None:
        s.connect(s.token)
    other = ThreadedProbe()
    other.connect(s.url, s.token, "second-terminal-client")
    try:
        first = s.start_call("browser_navigate", {"url": server.url("mcp_shop.html")})
        s.wait_for(r"^Step \d+: Go to http://")
        s.answer("a\n")
        first.result(60)
        first = s.start_call("browser_click", {"ref": ref(items_of(s.call("browser_snapshot", {"format": "semantic"})),
                                                           "Add to cart")})
        s.wait_for(r'^Step \d+: Click button "Add to cart"')
        # one client's step waiting for the person holds only its own tab: another client reads its own at once
        assert not other.call("browser_snapshot", {}, timeout=30).is_error and not first.done()
        s.answer("a\n")
        first.result(60)

        first = s.start_call("browser_navigate", {"url": server.url("mcp_shop.html")})
        second = other.start_call("browser_navigate", {"url": server.url("mcp_shop.html") + "?other"})
        asked = s.wait_for(r"^Step \d+: Go to http://")
        who = re.findall(r"asked by (\S+)", asked)[-1]
        time.sleep(0.5)
        while not s.lines.empty():
            s.seen.append(s.lines.get())
        assert "".join(s.seen).count("asked by") == asked.count("asked by"), "the second waits for the first's answer"
        s.answer("a\n")
        asked = s.wait_for(r"^Step \d+: Go to http://")
        assert re.findall(r"asked by (\S+)", asked)[-1] != who, "the second question names the other client"
        s.answer("r\nnot this page\n")
        results = {"http-test-client": first.result(60), "second-terminal-client": second.result(60)}
        assert not results[who].is_error, results[who].text
        rejected = results["second-terminal-client" if who == "http-test-client" else "http-test-client"]
        assert rejected.is_error and "REJECTED by the person" in rejected.text and "not this page" in rejected.text
    finally:
        other.close(quiet=True)


def test_the_token_can_come_from_the_environment(tmp_path):
    token = "test-token-" + "x" * 24
    s = HttpServer("--approve", "auto", home=tmp_path, env_update={"VIGIL_MCP_TOKEN": token})
    try:
        assert "bearer token from VIGIL_MCP_TOKEN" in s.banner and token not in s.banner
        assert httpx2.post(s.url, json=INIT, headers=HEADERS, timeout=30).status_code == 401
        s.connect(token)
        assert "browser_click" in s.client.run(s.client.probe.tools(), 60)
    finally:
        assert s.close() == 0


def test_a_short_token_in_the_environment_is_refused_at_start(tmp_path):
    env = {**os.environ, "VIGIL_MCP_TOKEN": "short", "VIGIL_HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "engine.mcp", "--http", "0", "--approve", "auto"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "VIGIL_MCP_TOKEN is too short" in out.stderr, out.stderr
