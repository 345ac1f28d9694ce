"""The suite's local HTTP server for fixture pages, and the harness that runs coroutines against one real
Chromium on a background event loop (each with a hard timeout: a regression fails, never hangs the suite)."""

from __future__ import annotations

import asyncio
import threading

from support.paths import FIXTURES
from support.recording_server import RecordingServer, Reply

# Headers and half a page, then nothing: the page never finishes loading (until the server closes).
HANGING_PAGE = Reply(b"<!doctype html><html><head><title>Hanging</title></head><body><p>Loading", length=False,
                     hold=20)
FIXTURE_ROUTES = {"GET /hang*": HANGING_PAGE}


class FixtureServer(RecordingServer):
    """tests/fixtures/ as files, and /hang: the page that never finishes loading."""

    def __init__(self) -> None:
        super().__init__(FIXTURE_ROUTES, static=FIXTURES)


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
