"""Bad input gets a clear error (never a hang); attaching by CDP URL; the CLI."""

from __future__ import annotations

import asyncio
import json
import os
import time

import pytest

from engine.browser.discovery import find_chromium
from engine.browser.target import normalize_url
from engine.errors import BrowserNotFoundError, NavigationError, SnapshotError, UnknownNodeError

from support.cli_inprocess import vigil_in_process
from support.paths import ROOT
from support.recording_server import RecordingServer


def test_unreachable_host_is_a_clear_error(harness):
    async def go():
        tab = await harness.browser.new_tab()
        try:
            with pytest.raises(NavigationError) as e:
                await tab.goto("http://127.0.0.1:9/", timeout=10)   # discard port: nothing listens
            assert "Could not open" in str(e.value) and "ERR_" in str(e.value)
            with pytest.raises(NavigationError) as e2:
                await tab.goto("http://no-such-host.invalid/", timeout=10)
            assert "does not resolve" in str(e2.value) or "Could not open" in str(e2.value)
        finally:
            await tab.close()

    harness.run(go(), timeout=60)


@pytest.mark.parametrize("bad", ["ftp://example.com/", "javascript:alert(1)", "chrome://settings",
                                 "file-that-does-not-exist.html x", "", "   "])
def test_urls_vigil_does_not_open_are_refused(bad):
    with pytest.raises(NavigationError) as e:
        normalize_url(bad)
    assert e.value.code == "BAD_URL"


def test_a_bare_host_or_a_local_file_becomes_a_url():
    assert normalize_url("example.com") == "http://example.com"
    assert normalize_url(__file__).startswith("file://")


def test_page_that_never_finishes_loading_times_out(harness, server):
    async def go():
        tab = await harness.browser.new_tab()
        try:
            t = time.monotonic()
            with pytest.raises(NavigationError) as e:
                await tab.goto(server.url("hang"), timeout=2)
            assert e.value.code == "NAVIGATION_TIMEOUT" and "did not finish loading" in str(e.value)
            assert time.monotonic() - t < 10
            # what did arrive can still be snapshotted
            snap = await tab.snapshot(timeout=5)
            assert snap.title == "Hanging"
        finally:
            await tab.close()

    harness.run(go(), timeout=60)


def test_navigation_during_snapshot_is_handled(harness, server):
    async def go():
        tab = await harness.browser.new_tab(server.url("big5k.html"))
        try:
            outcomes = []
            for _ in range(3):
                nav = asyncio.create_task(tab.page.evaluate(
                    f"setTimeout(() => location.href = {json.dumps(server.url('labels.html'))}, 5)"))
                try:
                    snap = await tab.snapshot(force=True, timeout=10)
                    outcomes.append(snap.title)
                except SnapshotError as exc:   # allowed: a clear error, not a hang or a crash
                    outcomes.append(exc.code)
                await nav
                # the page's own 5-ms timer may not have fired yet on a loaded machine: wait for the new page
                await tab.page.wait_for_url("**/labels.html", timeout=30_000)
                await tab.page.wait_for_load_state()
                snap = await tab.snapshot()
                assert snap.title == "Labels" and snap.find(role="textbox", name="Label For")
                await tab.goto(server.url("big5k.html"))
            assert all(o in ("Big", "Labels", "NAVIGATED") for o in outcomes), outcomes
        finally:
            await tab.close()

    harness.run(go(), timeout=90)


def test_busy_page_snapshot_times_out(harness, server):
    async def go():
        tab = await harness.browser.new_tab(server.url("labels.html"))
        try:
            await tab.page.evaluate("setTimeout(() => { const t = Date.now(); while (Date.now() - t < 8000) {} }, 10)")
            await asyncio.sleep(0.1)
            t = time.monotonic()
            with pytest.raises(SnapshotError) as e:
                await tab.snapshot(force=True, timeout=1.5)
            assert e.value.code == "SNAPSHOT_TIMEOUT" and time.monotonic() - t < 8
        finally:
            await tab.close()

    harness.run(go(), timeout=60)


def test_unknown_and_stale_ids(harness, server):
    async def check(tab):
        snap = await tab.snapshot()
        with pytest.raises(UnknownNodeError):
            snap.get("99999")
        node = snap.find(role="button", name="Archive")[0]
        assert isinstance(await snap.backend_node_id(node.node_id), int)
        await tab.page.evaluate("insertOnTop(0)")  # re-render: every row re-created
        await tab.page.evaluate("document.getElementById('list').innerHTML = ''")
        with pytest.raises(UnknownNodeError) as e:
            await snap.backend_node_id(node.node_id)
        assert e.value.code == "STALE"

    harness.page(server.url("rerender.html"), check)


def test_snapshot_is_immutable(harness, server):
    async def check(tab):
        snap = await tab.snapshot()
        with pytest.raises(AttributeError):
            snap.context = None
        with pytest.raises(TypeError):
            snap.node_map["x"] = None

    harness.page(server.url("labels.html"), check)


def test_browser_discovery_env(monkeypatch, tmp_path):
    monkeypatch.setenv("VIGIL_CHROMIUM", str(tmp_path / "nope"))
    with pytest.raises(BrowserNotFoundError) as e:
        find_chromium()
    assert "VIGIL_CHROMIUM" in str(e.value) and "apt-get install chromium" in str(e.value)
    monkeypatch.delenv("VIGIL_CHROMIUM")
    assert os.access(find_chromium(), os.X_OK)


def test_attach_by_cdp_url(harness, server):
    async def go():
        import urllib.parse

        from engine import launch

        ws = harness.browser.cdp.url  # ws://127.0.0.1:PORT/devtools/browser/...
        port = urllib.parse.urlsplit(ws).port
        async with launch(cdp_url=f"http://127.0.0.1:{port}") as attached:
            tab = await attached.new_tab(server.url("labels.html"))
            snap = await tab.snapshot()
            assert snap.find(role="textbox", name="Label For")
            await tab.close()
        # the launched browser is still alive: attaching does not close it
        tab = await harness.browser.new_tab(server.url("labels.html"))
        assert (await tab.snapshot()).title == "Labels"
        await tab.close()

    harness.run(go(), timeout=90)


def test_the_cdp_socket_to_a_local_browser_is_not_compressed(harness):
    """Deflating every DevTools message cost both ends CPU on every step for nothing on a loopback socket."""
    async def go():
        from engine.browser.cdp import CDPConnection

        extensions = harness.browser.cdp._ws.protocol.extensions
        assert extensions == [], extensions
        # the same endpoint by another loopback name is local too
        other = await CDPConnection.connect(harness.browser.cdp.url.replace("127.0.0.1", "localhost"))
        try:
            assert other._ws.protocol.extensions == []
            assert "product" in await other.send("Browser.getVersion")
        finally:
            await other.close()

    harness.run(go(), timeout=60)


def test_cli_snapshot_json_and_errors(server):
    # `vigil snapshot` run in this process (engine.cli.main): its output and exit status, without three Python
    # start-ups (tests/cli/test_cli_limits.py runs `vigil snapshot` as processes)
    r = vigil_in_process("snapshot", server.url("labels.html"), "--json", "--format", "tree")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["payload"]["page"]["context"]["title"] == "Labels"
    assert out["stats"]["tiers"]["semantic"] > 0 and "capture" in out["stats"]["timings_ms"]
    assert any(n["name"] == "Email Address" for n in out["nodes"])
    r = vigil_in_process("snapshot", "http://127.0.0.1:9/")
    assert r.returncode == 2 and "Could not open" in r.stderr and "Traceback" not in r.stderr
    r = vigil_in_process("snapshot", server.url("visibility.html"), "--format", "semantic", "--full-page")
    assert r.returncode == 0 and "Far below" in r.stdout and "tokens" in r.stderr


def test_crashed_tab_is_a_clear_error(harness, server):
    from engine.errors import TabCrashedError

    async def go():
        tab = await harness.browser.new_tab(server.url("labels.html"))
        try:
            await tab.snapshot()
            try:
                await tab.cdp.send("Page.crash", session_id=tab.session_id, timeout=5)
            except Exception:
                pass  # the renderer dies before it can answer
            for _ in range(50):
                if tab.crashed:
                    break
                await asyncio.sleep(0.1)
            with pytest.raises(TabCrashedError) as e:
                await tab.snapshot()
            assert "crashed" in str(e.value) and "reload" in str(e.value).lower()
        finally:
            await tab.close()

    harness.run(go(), timeout=60)


def test_back_forward_and_reload_through_the_tab(harness, server):
    async def go():
        tab = await harness.browser.new_tab()
        heard: list[str] = []
        stop = tab.on_navigated(heard.append)
        try:
            assert not await tab.go_back()                       # nothing before the first page: nothing moves
            await tab.goto(server.url("labels.html"))
            await tab.goto(server.url("rerender.html"))
            first = (await tab.snapshot()).title
            assert await tab.go_back() and tab.url.endswith("labels.html")
            assert (await tab.snapshot()).title == "Labels" != first   # the cached snapshot was not reused
            assert await tab.go_forward() and tab.url.endswith("rerender.html")
            assert not await tab.go_forward()                    # nothing after the last page
            gen = tab.generation
            await tab.reload()
            assert tab.url.endswith("rerender.html") and tab.generation > gen
            assert [u.rsplit("/", 1)[-1] for u in heard][-4:] == ["rerender.html", "labels.html", "rerender.html",
                                                                  "rerender.html"]
            stop()
            told = len(heard)
            await tab.goto(server.url("labels.html"))
            assert len(heard) == told                            # no longer told
        finally:
            await tab.close()

    harness.run(go(), timeout=60)


def test_reloading_a_page_whose_server_went_away_is_a_clear_error(harness):
    async def go():
        site = RecordingServer(static=ROOT)
        tab = await harness.browser.new_tab()
        try:
            await tab.goto(site.url())
            site.close()
            with pytest.raises(NavigationError) as e:
                await tab.reload(timeout=10)
            assert "Reloading failed" in str(e.value) and "ERR_" in str(e.value)
        finally:
            site.close()
            await tab.close()

    harness.run(go(), timeout=60)
