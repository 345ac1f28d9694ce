"""Browsers asked of a browserless server, one per run: `BrowserlessClient`, with the lease a Selenium Grid's
client gives (engine.fleet.grid), so a fleet's pool treats both alike.

browserless starts a new Chromium for every websocket to `ws://host:port/?token=…` (or `/chromium?token=…`): a
run's `Browser` attaching there is the run's own browser (Vigil's second socket joins it: engine.browser.browser),
and closing it ends that browser. While the run lives a short CDP call checks it every few seconds (browserless
keeps the socket open when the browser behind it dies); a run waiting for a free browser (every `CONCURRENT` slot
busy: browserless queues the connection) is said "waiting for a browser". browserless's own `TIMEOUT` ends a
connection that lasts longer, whatever happens on it: a fleet whose runs wait for a person needs it raised."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import urllib.parse
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx2 as httpx  # the HTTP client openai and mcp already bring (engine/mcp/probe.py uses it too)

from engine.browser.browser import Browser
from engine.errors import VigilError
from engine.fleet.grid import KEEPALIVE_S, PROBE_S, GridError, GridSession, cdp_silent, end_lease, keep_checking
from engine.races import to_the_end
from engine.tab import Tab

log = logging.getLogger("vigil.fleet")
WAITING_AFTER_S = 1.0   # a connection not answered by then, with every slot busy, is queued by browserless


def is_browserless(url: str) -> bool:
    """A browserless launch URL: ws(s)://host:port/[chromium]?token=… (not a running browser's own URL)."""
    parts = urllib.parse.urlsplit(url)
    return (parts.scheme in ("ws", "wss") and "token" in urllib.parse.parse_qs(parts.query)
            and parts.path in ("", "/", "/chromium", "/chromium/"))


class BrowserlessClient:
    """A browserless server at `url` (ws://host:port/?token=…)."""

    def __init__(self, url: str, *, headless: bool = True, keepalive: float = KEEPALIVE_S, probe: float = PROBE_S,
                 launch_timeout: float = 30.0) -> None:
        self.url = url
        self.headless, self.keepalive, self.probe, self.launch_timeout = headless, keepalive, probe, launch_timeout
        parts = urllib.parse.urlsplit(url)
        self._http = f"{'https' if parts.scheme == 'wss' else 'http'}://{parts.netloc}"
        self._query = parts.query
        self.open: dict[str, GridSession] = {}   # browsers leased and not yet closed

    @property
    def label(self) -> str:
        """The server without its token (what runs and errors name)."""
        return self.url.split("?", 1)[0]

    async def status(self) -> dict[str, Any]:
        """browserless's load (GET /pressure): running, queued, maxConcurrent …; GridError when it does not answer."""
        try:
            async with httpx.AsyncClient(timeout=self.probe) as c:
                r = await c.get(f"{self._http}/pressure?{self._query}")
                value = r.json().get("pressure") if r.status_code == 200 else None
        except (httpx.HTTPError, ValueError, OSError) as exc:
            raise GridError(f"The browserless server at {self.label} does not answer "
                            f"({exc or type(exc).__name__}).") from None
        if not isinstance(value, dict):
            raise GridError(f"The browserless server at {self.label} answered GET /pressure with HTTP "
                            f"{r.status_code} (is the token right?).")
        return value

    async def _full(self) -> bool:
        with contextlib.suppress(GridError):
            p = await self.status()
            return int(p.get("running") or 0) >= int(p.get("maxConcurrent") or 1 << 30)
        return False

    @contextlib.asynccontextmanager
    async def lease(self, *, on_waiting: Callable[[], None] | None = None,
                    on_lost: Callable[[GridSession, str], None] | None = None,
                    ) -> AsyncIterator[tuple[GridSession, Browser[Tab]]]:
        """A browser of its own, checked while the block runs, closed at its end however it ends."""
        browser: Browser[Tab] = Browser(Tab)
        start = asyncio.ensure_future(browser.start(headless=self.headless, cdp_url=self.url, executable=None,
                                                    viewport=(1280, 800), args=None,
                                                    launch_timeout=self.launch_timeout))
        keeper: asyncio.Task[None] | None = None
        s: GridSession | None = None
        try:
            done, _ = await asyncio.wait({start}, timeout=WAITING_AFTER_S)
            if not done and on_waiting is not None and await self._full():
                on_waiting()
            try:
                await start
            except VigilError as exc:
                raise GridError(f"The browserless server at {self.label} gave no browser: {exc.message}") from None
            ws = browser.ws_url or ""
            s = GridSession(grid=self.label, id=urllib.parse.urlsplit(ws).path.rsplit("/", 1)[-1], cdp=ws,
                            node=self.label)
            self.open[s.id] = s
            keeper = asyncio.ensure_future(keep_checking(s, browser, lambda: cdp_silent(browser, self.probe),
                                                        self.keepalive, on_lost))
            yield s, browser
        finally:
            if not start.done():
                start.cancel()
            await to_the_end(lambda: end_lease(keeper, browser))  # (closing it ends its session: however cancelled)
            if s is not None:
                self.open.pop(s.id, None)

    async def close(self) -> None:
        """Nothing is left to release: each lease closes its browser."""
