"""Several MCP clients of one `vigil mcp --http` at once: each in a browser context, tab and recorded session of its
own, every result bounded, the stated limits kept. Real server subprocesses, the SDK's own clients over HTTP (the
sessionless 2026 revision falls back to the handshake), a local server recording what each page really sent.
"""

from __future__ import annotations

import re
import time
from concurrent.futures import Future

import pytest

from engine.mcp.results import MAX_RESULT_BYTES
from engine.mcp.tools_act import MAX_TYPED_CHARS

from support.mcp_client import ThreadedProbe
from support.mcp_server import HttpServer
from support.recording_server import RecordingServer, Reply

PAGE = """<!doctype html><title>Client {k}</title><h1>Client {k}</h1>
<form method="post" action="/save"><input type="hidden" name="client" value="{k}">
<label>Note <input name="note"></label><button>Save</button></form>
<p id="jar">no cookies read</p>
<script>
if (location.search.includes('set')) document.cookie = 'who={k}; path=/';
document.getElementById('jar').textContent = 'cookies: [' + document.cookie + ']';
</script>"""
BIG = "<!doctype html><title>Big</title>" + "".join(f"<p>Paragraph {i}: " + "lorem ipsum dolor " * 40 + "</p>"
                                                     for i in range(2500))
NAMES = ("clients-test-1", "clients-test-2", "clients-test-3")


def _page(req) -> Reply:
    return Reply(PAGE.format(k=req.path.rsplit("/", 1)[-1]))


@pytest.fixture(scope="module")
def site():
    with RecordingServer({"GET /c/*": _page, "POST /save": Reply("<h1>Saved</h1>"), "GET /big": Reply(BIG)}) as s:
        yield s


@pytest.fixture(scope="module")
def three(tmp_path_factory, site):
    """A server under `auto` and three SDK clients connected to it, each with its own clientInfo name."""
    home = tmp_path_factory.mktemp("vigil-home")
    server = HttpServer("--approve", "auto", home=home)
    probes = []
    for name in NAMES:
        p = ThreadedProbe()
        p.connect(server.url, server.token, name)
        probes.append(p)
    yield server, probes, home
    for p in probes:
        p.close(quiet=True)
    server.proc.terminate()
    server.proc.wait(30)


def _all(calls: list[Future], timeout: float = 120):
    return [f.result(timeout) for f in calls]


def _ref(text: str, role: str, name: str) -> str:
    m = re.search(rf"\[(\w+)\] {role} \"{name}\"", text)
    assert m, f"no {role} {name!r} in:\n{text}"
    return m.group(1)


def test_each_client_works_in_a_tab_and_session_of_its_own_at_once(three, site):
    server, probes, home = three
    navs = _all([p.start_call("browser_navigate", {"url": site.url(f"/c/{k}?set=1" if k == 1 else f"/c/{k}")})
                 for k, p in enumerate(probes, 1)])
    assert not any(r.is_error for r in navs), [r.text for r in navs]
    snaps = _all([p.start_call("browser_snapshot", {}) for p in probes])
    for k, snap in enumerate(snaps, 1):
        assert set(re.findall(r"Client (\d)", snap.page())) == {str(k)}, snap.text  # its own page, no other
    # cookies apart: client 1's page set one; the others' pages (same site) do not see it
    assert "cookies: [who=1]" in snaps[0].page()
    assert "cookies: []" in snaps[1].page() and "cookies: []" in snaps[2].page()

    mark = site.log.mark()
    typed = _all([p.start_call("browser_type", {"ref": _ref(s.page(), "inp", "Note"), "text": f"note from {k}"})
                  for k, (p, s) in enumerate(zip(probes, snaps, strict=True), 1)])
    assert not any(r.is_error for r in typed), [r.text for r in typed]
    clicks = _all([p.start_call("browser_click", {"ref": _ref(s.page(), "btn", "Save")})
                   for p, s in zip(probes, snaps, strict=True)])
    assert not any(r.is_error for r in clicks), [r.text for r in clicks]
    assert site.wait_until(lambda: len([r for r in site.log.since(mark) if r.path == "/save"]) == 3)
    saved = sorted((r.text().split("&")[0], r.text().split("&")[1]) for r in site.log.since(mark) if r.path == "/save")
    assert saved == [("client=1", "note=note+from+1"), ("client=2", "note=note+from+2"),
                     ("client=3", "note=note+from+3")], "each text reached its own client's page"

    tabs = probes[1].call("browser_tabs", {"action": "list"})  # its own tab only: the one its Save led to
    assert "/save" in tabs.text and tabs.text.count("http://") == 1, tabs.text

    for p in probes:
        p.call("browser_close", {})
    from engine.store import Store
    with Store.open(home / "sessions.db") as store:
        data = [store.load(s.id) for s in store.list_sessions()]
    by_client = {d.session.metadata["mcp"]["client"]: d for d in data}
    assert sorted(by_client) == sorted(NAMES), "one recorded session per client, named after its clientInfo"
    for name, d in by_client.items():
        assert d.session.task == f"MCP session with {name}"
        acted = [s for s in d.steps if s.proposal is not None and s.action is not None and s.action.name != "finish"]
        assert [s.action.name for s in acted] == ["navigate", "type", "click"], [s.action for s in acted]
        assert {s.proposal.details["mcp"]["client"] for s in acted} == {name}, "each step tagged with its client"
        k = name[-1]
        assert all(s.url_before.split("?")[0].endswith(f"/c/{k}") for s in acted[1:]), "acted on its own page"


def test_results_are_bounded_and_long_texts_refused_or_never_echoed(three, site):
    _, probes, _ = three
    p = probes[2]
    p.call("browser_navigate", {"url": site.url("/c/9")})
    note = _ref(p.call("browser_snapshot", {}).page(), "inp", "Note")

    over = p.call("browser_type", {"ref": note, "text": "x" * (MAX_TYPED_CHARS + 1)})
    assert over.is_error and over.text.startswith("Error BAD_ARGUMENT") and f"{MAX_TYPED_CHARS:,}" in over.text

    text = "".join(f"word{i} " for i in range(3000))[:MAX_TYPED_CHARS - 1]
    typed = p.call("browser_type", {"ref": note, "text": text})
    assert not typed.is_error, typed.text
    assert f"[{len(text):,} characters typed]" in typed.text and text[:40] in typed.text
    assert len(typed.text) < 3000 and text[:200] not in typed.text, "never echoed in full"

    p.call("browser_navigate", {"url": site.url("/big")})
    full = p.call("browser_snapshot", {"format": "full"})
    assert not full.is_error and "[cut: this result was" in full.text and "max_tokens" in full.text
    assert len(full.text.encode()) <= MAX_RESULT_BYTES and full.text.rstrip().endswith("</page_content>")


def test_a_client_beyond_the_limit_is_told_busy_and_an_idle_one_is_let_go(tmp_path, site):
    server = HttpServer("--approve", "auto", "--max-clients", "1", "--idle-timeout", "2", home=tmp_path)
    other = ThreadedProbe()
    try:
        assert "1 at once (--max-clients), idle ones let go after 2 seconds" in server.banner
        server.connect(server.token)
        other.connect(server.url, server.token, "second-client")  # connected before: asked at once after
        assert not server.call("browser_navigate", {"url": site.url("/c/1")}).is_error
        busy = other.call("browser_snapshot", {})
        assert busy.is_error and "BUSY" in busy.text and "--max-clients 1" in busy.text, busy.text
        deadline = time.monotonic() + 30  # the first client sends nothing: it is let go within the idle time
        while busy.is_error and time.monotonic() < deadline:
            time.sleep(0.5)
            busy = other.call("browser_navigate", {"url": site.url("/c/2")})
        assert not busy.is_error, busy.text
        assert "Client 2" in busy.text
    finally:
        other.close(quiet=True)
        server.client.close(quiet=True)
        server.proc.terminate()
        server.proc.wait(30)
    from engine.store import Store
    with Store.open(tmp_path / "sessions.db") as store:
        kept = {d.session.metadata["mcp"]["client"]: d for d in (store.load(s.id) for s in store.list_sessions())}
    assert kept["http-test-client"].steps[-1].action.answer == "The MCP client was idle for 2 seconds."
    assert kept["second-client"].steps[0].action.name == "navigate"
