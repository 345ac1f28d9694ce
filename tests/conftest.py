"""Shared fixtures: a real local HTTP server for fixture pages and one real Chromium per session.

The browser lives on an asyncio loop in a background thread; each test submits its coroutine
with a hard timeout, so a regression shows as a failure, never as a hung suite.
"""

from __future__ import annotations

import asyncio
import http.server
import os
import threading
import time
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"

# Tesseract (the OCR checks, tests/ocr.py) runs OpenMP threads that spin on a 2-core machine already busy with
# Chromium: one thread reads the same words in about half the time there (and leaves the other core to the
# other test worker).
os.environ.setdefault("OMP_THREAD_LIMIT", "1")


class FixtureHandler(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *a, **kw):
        super().__init__(*a, directory=str(FIXTURES), **kw)

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        if self.path.startswith("/hang"):
            # Headers and half a page, then nothing: the page never finishes loading.
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(b"<!doctype html><html><head><title>Hanging</title></head><body><p>Loading")
            self.wfile.flush()
            deadline = time.time() + 20
            while time.time() < deadline and not getattr(self.server, "stopping", False):
                time.sleep(0.1)
            return
        return super().do_GET()


class FixtureServer:
    def __init__(self) -> None:
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FixtureHandler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}/{path}"

    def close(self) -> None:
        self.httpd.stopping = True
        self.httpd.shutdown()
        self.httpd.server_close()


class Harness:
    """Runs coroutines against one launched browser on a background event loop."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self._cm = None
        self.browser = None

    def run(self, coro, timeout: float = 90.0):
        fut = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return fut.result(timeout)
        except TimeoutError:
            fut.cancel()
            raise AssertionError(f"test coroutine did not finish within {timeout} s (hang)") from None

    def start(self) -> None:
        from engine import launch

        async def go():
            self._cm = launch()
            self.browser = await self._cm.__aenter__()

        self.run(go(), timeout=60)

    def stop(self) -> None:
        async def go():
            await self._cm.__aexit__(None, None, None)

        try:
            self.run(go(), timeout=30)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(5)

    def page(self, url: str, fn, timeout: float = 90.0):
        """Open `url` in a new tab, run `await fn(tab)`, close the tab; returns fn's result."""

        async def go():
            tab = await self.browser.new_tab(url)
            try:
                return await fn(tab)
            finally:
                await tab.close()

        return self.run(go(), timeout)


@pytest.fixture(scope="session")
def server():
    s = FixtureServer()
    yield s
    s.close()


@pytest.fixture(scope="session")
def harness():
    h = Harness()
    h.start()
    yield h
    h.stop()


@pytest.fixture(scope="session", autouse=True)
def _private_vigil_home(tmp_path_factory):
    """Every run the suite records goes to a throwaway store, never the user's own (tests that look
    at the store set their own VIGIL_HOME on top of this)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("VIGIL_HOME", str(tmp_path_factory.mktemp("vigil_home")))
    yield
    mp.undo()


@pytest.fixture
def make(qtbot):
    """(GUI tests) Build a widget that qtbot owns (closed and deleted through Qt after the test)."""
    def go(cls, *a, **kw):
        w = cls(*a, **kw)
        qtbot.addWidget(w)
        return w
    return go


@pytest.fixture(scope="session", autouse=True)
def _hostile_mcp_side(request, tmp_path_factory, _private_vigil_home):
    """The hostile corpus's MCP side starts with the session (on the first worker), when any of its tests is
    selected, and runs in the background while the worker goes on (tests/hostile_mcp.py)."""
    import hostile_mcp

    thread = hostile_mcp.start(request.session, tmp_path_factory)
    yield
    if thread is not None:
        thread.join(hostile_mcp.WAIT_S)
