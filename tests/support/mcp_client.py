"""An MCP client for synchronous tests: `engine.mcp.probe.http_probe` kept connected to a `vigil mcp --http`
server on an event loop of its own thread (the test's thread may block, e.g. on the server's terminal)."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Future

from engine.mcp.probe import Reply, http_probe


class ThreadedProbe:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        self.probe = None
        self._stop: asyncio.Event | None = None
        self._client: Future | None = None

    def connect(self, url: str, token: str | None, client_name: str, timeout: float = 60) -> None:
        """Connect (raises what the connection raised, e.g. a refused token)."""
        ready = threading.Event()

        async def hold():
            self._stop = asyncio.Event()
            try:
                async with http_probe(url, token, client_name=client_name, timeout=120) as probe:
                    self.probe = probe
                    ready.set()
                    await self._stop.wait()
            finally:
                ready.set()

        self._client = asyncio.run_coroutine_threadsafe(hold(), self.loop)
        assert ready.wait(timeout), f"the MCP client did not connect within {timeout:.0f} s"
        if self._client.done():
            self._client.result()

    def start_call(self, name: str, arguments: dict | None = None) -> Future:
        return asyncio.run_coroutine_threadsafe(self.probe.call(name, arguments or {}), self.loop)

    def call(self, name: str, arguments: dict | None = None, timeout: float = 90) -> Reply:
        return self.start_call(name, arguments).result(timeout)

    def run(self, coro, timeout: float = 60):
        """Any other coroutine on the client's loop (e.g. `probe.tools()`)."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self, *, quiet: bool = False) -> None:
        """Disconnect and stop the loop; `quiet`: a server already gone is no error."""
        try:
            if self._stop is not None:
                self.loop.call_soon_threadsafe(self._stop.set)
                try:
                    self._client.result(30)
                except Exception:
                    if not quiet:
                        raise
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
