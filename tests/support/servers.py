"""The suite's local HTTP server for fixture pages, and the harness that runs coroutines against one real
Chromium on a background event loop (each with a hard timeout: a regression fails, never hangs the suite)."""

from __future__ import annotations

import asyncio
import http.server
import threading
import time

from support.paths import FIXTURES


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
