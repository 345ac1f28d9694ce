"""A launched (or attached) Chromium: Playwright for its lifecycle and pages, a direct CDP websocket
for everything bulky (snapshots), and the state every page of it shares (scripts, typed secrets)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import socket
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from engine.browser.cdp import CDPConnection
from engine.browser.discovery import BASE_FLAGS, find_chromium, running_as_root
from engine.browser.target import PageScripts, PageTarget
from engine.errors import BrowserLaunchError
from engine.secret_values import SecretValues

DEFAULT_VIEWPORT = (1280, 800)
TabT = TypeVar("TabT")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _http_json(url: str, timeout: float = 5.0) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as r:  # local DevTools endpoint only
        return json.loads(r.read().decode())


class Browser(Generic[TabT]):
    """A Chromium that Vigil drives. Its pages are opened as `PageTarget`s and handed to `make_tab`,
    which wraps each in what the caller works with (`engine.launch` makes `Tab`s)."""

    def __init__(self, make_tab: Callable[[PageTarget], TabT]) -> None:
        self._make_tab = make_tab
        self._pw: Any = None
        self._pw_cm: Any = None
        self.pw_browser: Any = None
        self.context: Any = None
        self._cdp: CDPConnection | None = None
        self.tabs: list[TabT] = []
        self._targets: dict[PageTarget, TabT] = {}
        self.scripts = PageScripts.load("__vigil_" + secrets.token_hex(6))
        self.headless = True
        self.executable = ""
        self.attached = False
        self.viewport = DEFAULT_VIEWPORT
        # secret values typed in this browser's tabs (memory only): every picture paints them over
        self.secrets = SecretValues()

    @property
    def cdp(self) -> CDPConnection:
        if self._cdp is None:
            raise BrowserLaunchError("The browser is not started: use `async with launch() as browser`.")
        return self._cdp

    @property
    def state_key(self) -> str:
        return self.scripts.key

    async def start(self, *, headless: bool, cdp_url: str | None, executable: str | None,
                    viewport: tuple[int, int], args: list[str] | None, launch_timeout: float) -> None:
        from playwright.async_api import async_playwright

        self.headless = headless
        self.viewport = viewport
        self._pw_cm = async_playwright()
        self._pw = await self._pw_cm.__aenter__()
        size = {"width": viewport[0], "height": viewport[1]}
        if cdp_url:
            self.attached = True
            ws_url = _resolve_ws(cdp_url)
            try:
                self.pw_browser = await self._pw.chromium.connect_over_cdp(cdp_url, timeout=launch_timeout * 1000)
            except Exception as exc:
                raise BrowserLaunchError(f"Could not attach to the browser at {cdp_url}: {str(exc).splitlines()[0]}. "
                                         "Check that it runs with --remote-debugging-port and the URL is right."
                                         ) from None
            contexts = self.pw_browser.contexts
            self.context = contexts[0] if contexts else await self.pw_browser.new_context(viewport=size)
        else:
            self.executable = executable or find_chromium()
            port = _free_port()
            flags = BASE_FLAGS + [f"--remote-debugging-port={port}", "--remote-debugging-address=127.0.0.1"]
            try:
                self.pw_browser = await self._pw.chromium.launch(
                    executable_path=self.executable, headless=headless, args=flags + (args or []),
                    chromium_sandbox=not running_as_root(), timeout=launch_timeout * 1000,
                    handle_sigint=False, handle_sigterm=False, handle_sighup=False)
            except Exception as exc:
                msg = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
                hint = ""
                if not headless and not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
                    hint = " A headed browser needs a display: run under Xvfb (xvfb-run) or use headless=True."
                raise BrowserLaunchError(f"Chromium at {self.executable} failed to start: {msg}.{hint}") from None
            ws_url = await _wait_ws(port, launch_timeout)
            self.context = await self.pw_browser.new_context(viewport=size)
        self._cdp = await CDPConnection.connect(ws_url)

    async def new_tab(self, url: str | None = None, *, timeout: float = 30.0, wait_until: str = "load") -> TabT:
        """Open a tab (page); `url` is loaded after Vigil's per-document script is in place."""
        page = await self.context.new_page()
        target = PageTarget(self.cdp, page, await _target_id(self.context, page), self.scripts, self.secrets,
                            on_close=self._closed)
        page.on("crash", lambda *_: target.mark_crashed())
        await target.attach()
        tab = self._make_tab(target)
        self._targets[target] = tab
        self.tabs.append(tab)
        if url:
            await target.goto(url, timeout=timeout, wait_until=wait_until)
        return tab

    def _closed(self, target: PageTarget) -> None:
        tab = self._targets.pop(target, None)
        if tab is not None and tab in self.tabs:
            self.tabs.remove(tab)

    async def close(self) -> None:
        for t in list(self._targets):
            t.closed = True
        if self._cdp is not None:
            await self._cdp.close()
        with contextlib.suppress(Exception):
            # An attached browser was not ours to start: leave it running (stopping the
            # Playwright driver below disconnects). A launched one is closed.
            if not self.attached and self.pw_browser is not None:
                await self.pw_browser.close()
        if self._pw_cm is not None:
            with contextlib.suppress(Exception):
                await self._pw_cm.__aexit__(None, None, None)


async def _target_id(context: Any, page: Any) -> str:
    s = await context.new_cdp_session(page)
    try:
        info = await s.send("Target.getTargetInfo")
        return str(info["targetInfo"]["targetId"])
    finally:
        with contextlib.suppress(Exception):
            await s.detach()


async def _wait_ws(port: int, timeout: float) -> str:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last: Exception | None = None
    while loop.time() < deadline:
        try:
            info = await loop.run_in_executor(None, _http_json, f"http://127.0.0.1:{port}/json/version")
            return str(info["webSocketDebuggerUrl"])
        except (OSError, urllib.error.URLError, KeyError, ValueError) as exc:
            last = exc
            await asyncio.sleep(0.05)
    raise BrowserLaunchError(f"Chromium started but its DevTools endpoint on port {port} never answered ({last}).")


def _resolve_ws(cdp_url: str) -> str:
    if cdp_url.startswith(("ws://", "wss://")):
        return cdp_url
    base = cdp_url.rstrip("/")
    try:
        return str(_http_json(base + "/json/version")["webSocketDebuggerUrl"])
    except Exception as exc:
        raise BrowserLaunchError(f"No DevTools endpoint at {cdp_url} ({exc}). Start Chromium with "
                                 "--remote-debugging-port=9222 and pass http://127.0.0.1:9222.") from None
