"""The tab an MCP client drives, with its console log and the client's view of it, and — unless a host
owns the tab — the browser context it lives in: one Chromium for the whole server (`SharedChromium`),
started at the first tool call that needs it and started again once when it went away (closed by hand,
crashed), and a context of its own for each client (cookies, storage and cache apart).

A host that owns the tab (the supervisor window: `vigil gui --mcp`) is a `TabHost`: the server then
drives the host's tab and never opens or closes a browser or a tab of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from engine.errors import VigilError
from engine.mcp.console import ConsoleLog
from engine.mcp.failure import ToolFailure
from engine.mcp.known_secrets import KnownSecrets
from engine.mcp.view import ClientView
from engine.tab import Tab

if TYPE_CHECKING:
    from engine.browser.browser import Browser
    from engine.loop.runner import AgentLoop
    from engine.mcp.planner import ToolCallPlanner
    from engine.models import RunResult
    from engine.snapshot.dom_snapshot import DomSnapshot
    from engine.store.recorder import SessionRecorder

log = logging.getLogger("vigil.mcp")


class TabHost(Protocol):
    """What a host that owns the tab gives the server (see the module docstring)."""

    @property
    def recorder(self) -> SessionRecorder | None: ...

    async def mcp_tab(self) -> Tab:
        """The tab to drive now; ToolFailure when it cannot be driven (the person runs a task in it …)."""
        ...

    def mcp_run_started(self, loop: AgentLoop, planner: ToolCallPlanner, task: asyncio.Task) -> None: ...

    def mcp_run_ended(self, result: RunResult) -> None: ...


class SharedChromium:
    """The server's one Chromium: each client gets a browser context of it (`Browser.open_context`), so
    clients share the process, never cookies, storage, tabs or pictures' secrets.

    `warm()` starts it at once, with one spare context holding a blank tab, while the client is still starting:
    the first client's first call then finds them ready instead of paying for the start."""

    def __init__(self, *, headless: bool, executable: str | None, viewport: tuple[int, int]):
        self.headless, self.executable, self.viewport = headless, executable, viewport
        self.base: Browser | None = None
        self._stack: contextlib.AsyncExitStack | None = None
        self._lock = asyncio.Lock()
        self._spare: Browser | None = None  # a fresh context (one blank tab) no client has had yet
        self._warming: asyncio.Task | None = None

    def warm(self, ready: Callable[[], None] | None = None) -> None:
        """Start the Chromium and a spare context in the background, then call `ready` (a failure is met again, and
        said, by the first call that needs the browser)."""
        if self._warming is None:
            self._warming = asyncio.ensure_future(self._warm(ready))

    async def _warm(self, ready: Callable[[], None] | None) -> None:
        try:
            async with self._lock:
                if self.base is None or not browser_alive(self.base):
                    await self._launch()
                assert self.base is not None  # _launch() starts one or raises
                spare = await self.base.open_context()
                await spare.new_tab()
                self._spare = spare
        except Exception as exc:  # noqa: BLE001 - only an early start: the first call starts it again and says why
            log.info("the browser could not be started early: %s", exc)
            return
        if ready is not None:
            ready()

    async def context(self) -> Browser:
        """A fresh context; the Chromium is started (again) when it is not running. ToolFailure when it cannot."""
        async with self._lock:  # two clients arriving at once start one Chromium
            if self.base is None or not browser_alive(self.base):
                await self._launch()
            base = self.base
            assert base is not None  # _launch() starts one or raises
            spare, self._spare = self._spare, None
        if spare is not None and browser_alive(spare):
            return spare
        # contexts open side by side (Browser.open_context serialises only what must be)
        try:
            return await base.open_context()
        except VigilError as exc:
            raise ToolFailure(exc.code, f"Could not open a browser context: {exc.message}") from None
        except Exception as exc:  # noqa: BLE001 - Playwright's own error when the Chromium just went away
            raise ToolFailure("BROWSER_CLOSED", "Could not open a browser context "
                                                f"({type(exc).__name__}); call again.") from None

    async def _launch(self) -> None:
        await self._stop()
        from engine import launch
        from engine.vision.screenshot import warm_hashing

        warm_hashing()  # while the browser starts: the first step's picture does not wait for its libraries
        self._stack = contextlib.AsyncExitStack()
        try:
            self.base = await self._stack.enter_async_context(
                launch(headless=self.headless, executable=self.executable, viewport=self.viewport))
        except VigilError as exc:
            await self._stop()
            raise ToolFailure(exc.code, f"The browser could not start: {exc.message}") from None

    async def close(self) -> None:
        warming, self._warming = self._warming, None
        if warming is not None and not warming.done():
            warming.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await warming
        await self._stop()

    async def _stop(self) -> None:
        stack, self._stack, self.base, self._spare = self._stack, None, None, None
        if stack is not None:
            with contextlib.suppress(Exception):
                await stack.aclose()


class ClientTab:
    """The client's tab (None until one is needed), its console and the client's view, and its browser context."""

    def __init__(self, *, known: KnownSecrets, start_url: str | None, chromium: SharedChromium):
        self.known = known
        self.start_url, self.chromium = start_url, chromium
        self.view = ClientView()
        self.console = ConsoleLog()
        self.tab: Tab | None = None
        self.browser: Browser | None = None   # this client's context of the shared Chromium

    def adopt(self, tab: Tab) -> Tab:
        """Work in `tab` from now on: its console, a fresh view."""
        self.tab = tab
        self.console = ConsoleLog()
        self.console.attach(tab.page)
        self.view.forget()
        return tab

    def follow(self, page: object) -> Tab | None:
        """`page` (where a run works now) adopted when it is another open tab — a step opened, selected or
        closed a tab, or a popup closed itself; None when unchanged."""
        if page is self.tab or not isinstance(page, Tab) or page.closed or not alive(page):
            return None
        return self.adopt(page)

    def usable(self) -> Tab | None:
        """The tab, when it is open and alive."""
        tab = self.tab
        return tab if tab is not None and not tab.closed and alive(tab) else None

    async def from_host(self, host: TabHost) -> Tab:
        """The host's tab (a new one after a restart is adopted), on the start page the first time."""
        tab = await host.mcp_tab()
        if tab is not self.tab:
            self.adopt(tab)
        await self._open_start_page(tab)
        return tab

    async def open(self) -> Tab:
        """A new tab, on the start page the first time; the context (and the Chromium) is opened again when it
        is not there."""
        tab: Tab | None = None
        for attempt in (1, 2):
            fresh = self.browser is None or not browser_alive(self.browser)
            if fresh:
                await self._launch()
            assert self.browser is not None  # _launch() starts one or raises
            try:
                ready = self.browser.active_tab if fresh else None  # a spare context comes with its blank tab
                tab = self.tab = ready if ready is not None and not ready.closed else await self.browser.new_tab()
                break
            except VigilError as exc:
                await self.close_browser()
                if attempt == 2:
                    raise ToolFailure(exc.code, f"Could not open a tab: {exc.message}") from None
        assert tab is not None  # the loop above opened one or raised
        self.adopt(tab)
        await self._open_start_page(tab)
        return tab

    async def _open_start_page(self, tab: Tab) -> None:
        if self.start_url:
            url, self.start_url = self.start_url, None  # the start page is opened once
            try:
                await tab.goto(url)
            except VigilError as exc:
                log.warning("the start page %s could not be opened: %s", url, exc.message)

    async def snapshot_or_none(self) -> DomSnapshot | None:
        tab = self.tab
        if tab is None or tab.closed or not alive(tab):
            return None
        try:
            return await tab.snapshot()
        except VigilError:
            return None

    async def drop(self, why: str | None) -> None:
        """Forget the tab, closing it when it is still open."""
        tab, self.tab = self.tab, None
        self.view.forget()
        if tab is not None and not tab.closed:
            with contextlib.suppress(Exception):
                await tab.close()
        if why:
            log.info("%s; a new tab is opened", why)

    async def _launch(self) -> None:
        await self.close_browser()
        browser = self.browser = await self.chromium.context()
        browser.secrets.update(self.known.kept)  # its pictures mask what was typed before, too

    async def close_browser(self) -> None:
        """Close this client's context (the shared Chromium stays for the other clients)."""
        self.known.gather()  # keep what was typed in it
        browser, self.browser = self.browser, None
        if browser is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(browser.close(), 15)


def alive(tab: Tab) -> bool:
    try:
        tab.check_alive()
        return True
    except VigilError:
        return False


def browser_alive(browser: Browser) -> bool:
    pw = getattr(browser, "pw_browser", None)
    try:
        return pw is None or bool(pw.is_connected())
    except Exception:  # noqa: BLE001
        return False
