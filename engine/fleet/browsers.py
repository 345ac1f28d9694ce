"""Where a fleet's runs get their browsers: `BrowserPool`.

Default: one local Chromium; each run gets a fresh browser context of it (`Browser.open_context`:
cookies and storage apart). With endpoints (`--browsers http://host:9222,ws://…`: what Chromium's
`--remote-debugging-port`, Selenium Grid 4's `se:cdp`, browserless and pods of headless Chromium expose)
each run gets a fresh context on the least busy endpoint that is alive. An endpoint that cannot be
reached is marked dead (`Endpoint.dead` says why) and the next one is tried; one that dies later (its
Playwright connection says disconnected, or its DevTools socket closes) is marked dead and the runs on
it are told (`on_dead`), so the fleet ends them as errors naming the endpoint.

With a Selenium Grid (`grid=http://hub:4444`) each run gets a session of its own (`engine.fleet.grid`): asked for
when the run starts (a queued request tells `on_waiting`: "waiting for a browser"), kept alive while it runs,
deleted when it ends; a session whose node stops answering is marked dead like an endpoint, naming the node and
the session."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine.browser.browser import Browser
from engine.errors import ErrorCode, VigilError
from engine.fleet.browserless import BrowserlessClient, is_browserless
from engine.fleet.grid import KEEPALIVE_S, GridClient, GridError
from engine.races import to_the_end
from engine.tab import Tab

log = logging.getLogger("vigil.fleet")
LOCAL = "local"


class NoBrowserError(VigilError):
    code = ErrorCode.LAUNCH_FAILED


@dataclass
class Endpoint:
    """One browser the fleet uses: `label` is "local" or the endpoint's URL as given."""

    label: str
    url: str | None = None               # None: the local Chromium
    base: Browser[Tab] | None = None     # the connection (its own default context stays unused)
    busy: int = 0                        # runs on it now
    runs: int = 0                        # runs it was given, in all
    dead: str | None = None              # why it is not used any more
    session: Any = None                  # a grid's session (engine.fleet.grid.GridSession) this run holds
    _started: bool = field(default=False, repr=False)
    _lease: contextlib.AsyncExitStack | None = field(default=None, repr=False)

    @property
    def alive(self) -> bool:
        return self.dead is None


class BrowserPool:
    """`await pool.start()`, then per run `endpoint, browser = await pool.acquire()` … `await
    pool.release(endpoint, browser)`; `await pool.close()` at the end (a local Chromium is closed, remote
    ones are left running)."""

    def __init__(self, endpoints: list[str] | None = None, *, headless: bool = True, timeout: float = 15.0,
                 local: Browser[Tab] | None = None, grid: str | None = None,
                 keepalive: float = KEEPALIVE_S) -> None:
        urls = [u.strip() for u in (endpoints or []) if u.strip()]
        self.endpoints = [Endpoint(label=u, url=u) for u in urls] or [Endpoint(label=LOCAL)]
        # a Selenium Grid: `endpoints` holds the grid's own row; each run's session is an Endpoint of its own
        self.grid: GridClient | BrowserlessClient | None = None
        if grid:  # browserless: a browser per run, leased alike
            kind = BrowserlessClient if is_browserless(grid) else GridClient
            self.grid = kind(grid, headless=headless, keepalive=keepalive)
            self.endpoints = [Endpoint(label=self.grid.label, url=self.grid.url)]
        self.sessions: list[Endpoint] = []
        self.local = local  # a Browser already launched to use instead of launching one (left open at the end)
        self.headless, self.timeout = headless, timeout
        self.on_dead: Callable[[Endpoint], None] | None = None
        self._lock = asyncio.Lock()
        self._closing = False

    @property
    def remote(self) -> bool:
        return self.endpoints[0].url is not None

    async def start(self) -> None:
        """Connect to every endpoint (launch the local Chromium). Unreachable endpoints are marked dead;
        NoBrowserError (naming each and why) when none can be used."""
        if self.grid is not None:  # only whether it answers: sessions are asked for per run
            try:
                await self.grid.status()
            except GridError as exc:
                self.endpoints[0].dead = exc.message
                raise NoBrowserError(exc.message) from None
            return
        await asyncio.gather(*(self._start(e) for e in self.endpoints))
        if not any(e.alive for e in self.endpoints):
            raise NoBrowserError("No browser could be used: " + "; ".join(f"{e.label}: {e.dead}"
                                                                           for e in self.endpoints))

    async def _start(self, e: Endpoint) -> None:
        if e.url is None and self.local is not None:
            e.base = self.local
            return
        b: Browser[Tab] = Browser(Tab)
        try:
            await b.start(headless=self.headless, cdp_url=e.url, executable=None, viewport=(1280, 800), args=None,
                          launch_timeout=self.timeout)
        except VigilError as exc:
            with contextlib.suppress(Exception):
                await b.close()
            e.dead = exc.message
            log.warning("browser %s cannot be used: %s", e.label, exc.message)
            return
        e.base, e._started = b, True
        with contextlib.suppress(Exception):
            b.pw_browser.on("disconnected", lambda *_: self.mark_dead(e, "its connection closed"))

    def mark_dead(self, e: Endpoint, why: str) -> None:
        if e.dead is not None or self._closing:
            return
        e.dead = why
        log.warning("browser %s went away: %s", e.label, why)
        if self.on_dead is not None:
            self.on_dead(e)

    def check(self, e: Endpoint) -> bool:
        """Is the endpoint still there? (Its DevTools socket or Playwright connection closed: dead.)"""
        if e.dead is None and e.base is not None:
            closed = e.base._cdp is None or e.base._cdp.closed
            connected = True
            with contextlib.suppress(Exception):
                connected = bool(e.base.pw_browser.is_connected())
            if closed or not connected:
                self.mark_dead(e, "its DevTools connection closed" if closed else "its connection closed")
        return e.dead is None

    async def acquire(self, on_waiting: Callable[[], None] | None = None) -> tuple[Endpoint, Browser[Tab]]:
        """A fresh context on the least busy live endpoint (a grid: a session of its own, `on_waiting()` while the
        grid queues the request); NoBrowserError when none is left."""
        if self.grid is not None:
            return await self._lease(self.grid, on_waiting)
        while True:
            async with self._lock:
                alive = [e for e in self.endpoints if self.check(e)]
                if not alive:
                    raise NoBrowserError("No browser is left: " + "; ".join(f"{e.label}: {e.dead}"
                                                                            for e in self.endpoints))
                e = min(alive, key=lambda x: (x.busy, x.runs))
                e.busy += 1
                e.runs += 1
            try:
                assert e.base is not None
                browser = await asyncio.wait_for(e.base.open_context(), self.timeout)
                return e, browser
            except (VigilError, TimeoutError, Exception) as exc:  # noqa: B014 - Playwright's own errors too
                e.busy -= 1
                msg = getattr(exc, "message", None) or str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                self.mark_dead(e, f"a new browser context could not be opened there ({msg})")

    async def _lease(self, grid: GridClient | BrowserlessClient,
                     on_waiting: Callable[[], None] | None) -> tuple[Endpoint, Browser[Tab]]:
        e = Endpoint(label=grid.label, url=grid.url, busy=1, runs=1)
        stack = contextlib.AsyncExitStack()
        try:
            s, browser = await stack.enter_async_context(grid.lease(
                on_waiting=on_waiting, on_lost=lambda s, why: self.mark_dead(e, f"it stopped answering: {why}")))
        except VigilError as exc:
            await stack.aclose()
            raise NoBrowserError(exc.message) from None
        e.label, e.session, e.base, e._lease = f"{grid.label} ({s.describe()})", s, browser, stack
        self.sessions.append(e)
        self.endpoints[0].busy += 1
        self.endpoints[0].runs += 1
        return e, browser

    async def release(self, e: Endpoint, browser: Browser[Tab] | None) -> None:
        e.busy = max(0, e.busy - 1)
        if e._lease is not None:  # a grid's session: close its browser, delete the session
            stack, e._lease = e._lease, None
            self.endpoints[0].busy = max(0, self.endpoints[0].busy - 1)
            await to_the_end(stack.aclose)  # (a Ctrl+C that cancels the run again does not cut it short)
            return
        if browser is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(browser.close(), 15)

    async def close(self) -> None:
        self._closing = True
        for e in self.sessions:
            if e._lease is not None:
                await self.release(e, None)
        if self.grid is not None:
            await self.grid.close()
        for e in self.endpoints:
            if e.base is not None and e.base is not self.local and self.grid is None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(e.base.close(), 20)
                e.base = None

    def describe(self) -> list[dict[str, Any]]:
        return [{"browser": e.label, "busy": e.busy, "runs": e.runs, "dead": e.dead} for e in self.endpoints]
