"""A launched (or attached) Chromium: Playwright for its lifecycle and pages, a direct CDP websocket
for everything bulky (snapshots), and the state every page of it shares (scripts, typed secrets)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
import socket
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from engine.browser.cdp import CDPConnection
from engine.browser.discovery import BASE_FLAGS, find_chromium, running_as_root
from engine.browser.downloads import DownloadKeeper
from engine.browser.exits import ExitHold
from engine.browser.popups import PopupGuard
from engine.browser.target import PageScripts, PageTarget
from engine.errors import BrowserLaunchError, ErrorCode, VigilError
from engine.models.browsing import TabInfo
from engine.secret_values import SecretValues

log = logging.getLogger("vigil.browser")
DEFAULT_VIEWPORT = (1280, 800)
TabT = TypeVar("TabT")
TabListener = Callable[[str, Any], None]  # (what: "opened" | "closed" | "active", tab)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _http_json(url: str, timeout: float = 5.0) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as r:  # local DevTools endpoint only
        return json.loads(r.read().decode())


class Browser(Generic[TabT]):
    """A Chromium that Vigil drives. Its pages are opened as `PageTarget`s and handed to `make_tab`,
    which wraps each in what the caller works with (`engine.launch` makes `Tab`s).

    Every page of the context is tracked, also those the page opens itself (a `target=_blank` link,
    `window.open`, a sign-in popup): `tabs` (in the order they opened), `active_tab` (the one being
    worked on), `switch_to(i)`, `close_tab(i)`, `tab_infos()`, `opened` (every tab ever adopted, in
    order, for "what opened since") and `on_tabs(fn)`. Downloads are saved by `downloads`
    (`engine.browser.downloads.DownloadKeeper`, with its size limit); while a run needs it, popup floods
    are ended by `popups` (`engine.browser.popups.PopupGuard`) and top-level navigations are held by
    `exits` (`engine.browser.exits.ExitHold`)."""

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
        self.active_tab: TabT | None = None
        self.opened: list[TabT] = []          # every tab adopted or opened, in order (never shrinks)
        self.downloads = DownloadKeeper(self._index_of_page)
        self._openers: dict[PageTarget, PageTarget | None] = {}
        self._own_pages = 0                   # pages being opened by new_tab (their "page" event is not a popup)
        self._listeners: list[TabListener] = []
        self._adopting: set[asyncio.Task[Any]] = set()
        self._page_seen_at = 0.0  # (loop time) when the context last announced a page it opened
        self.popups = PopupGuard(lambda: self.cdp, self._default_opener)
        self.exits = ExitHold(lambda: self.cdp, self._page_of_frame, self._exit_refused)
        self.ws_url = ""                      # the browser's DevTools websocket
        self._shared_from: Browser[TabT] | None = None  # open_context: the Browser whose Chromium this shares
        self._context_lock: asyncio.Lock | None = None

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
            ws_url = await _same_browser(self.pw_browser, ws_url)
        else:
            self.executable = executable or find_chromium(headless)
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
            self.context = await self.pw_browser.new_context(viewport=size, accept_downloads=True)
        await self._connect(ws_url)

    async def _connect(self, ws_url: str) -> None:
        self.ws_url = ws_url
        self._cdp = await CDPConnection.connect(ws_url)
        for event in ("Page.downloadWillBegin", "Page.downloadProgress"):  # from every tab's own session
            self._cdp.on(event, lambda p, sid: self.downloads.progress(p))
        await self.popups.listen()
        self.context.on("page", self._on_page)

    async def open_context(self) -> Browser[TabT]:
        """Another `Browser` on this one's Chromium, in a fresh browser context (cookies, storage, cache
        apart): its own tabs, CDP socket, downloads, popup guard and exit hold; the process and the
        Playwright connection are shared. Closing it closes only its context. (`engine.fleet` runs each
        run of a fleet in one.)"""
        sub: Browser[TabT] = Browser(self._make_tab)
        sub._shared_from = self
        sub._pw, sub.pw_browser = self._pw, self.pw_browser
        sub.headless, sub.executable, sub.viewport, sub.attached = (self.headless, self.executable, self.viewport,
                                                                    self.attached)
        size = {"width": self.viewport[0], "height": self.viewport[1]}
        if self._context_lock is None:
            self._context_lock = asyncio.Lock()
        async with self._context_lock:  # one new context at a time: ours is the one id that appears
            before = await self._context_ids()
            sub.context = await self.pw_browser.new_context(viewport=size, accept_downloads=True)
            new = (await self._context_ids()) - before
        sub.popups.context_id = next(iter(new)) if len(new) == 1 else None
        try:
            await sub._connect(self.ws_url)
        except BaseException:
            with contextlib.suppress(Exception):
                await sub.context.close()
            raise
        return sub

    async def _context_ids(self) -> set[str]:
        res = await self.cdp.send("Target.getBrowserContexts", timeout=10)
        return set(res.get("browserContextIds") or [])

    async def new_tab(self, url: str | None = None, *, timeout: float = 30.0, wait_until: str = "load") -> TabT:
        """Open a tab (page); `url` is loaded after Vigil's per-document script is in place. The new tab
        becomes the active one."""
        self._own_pages += 1
        try:
            page = await self.context.new_page()
        finally:
            self._own_pages = max(0, self._own_pages - 1)
        tab = await self._wrap(page, opener=None)
        self._set_active(tab)
        if url:
            await self._target_of(tab).goto(url, timeout=timeout, wait_until=wait_until)
        return tab

    async def _wrap(self, page: Any, opener: PageTarget | None, target_id: str | None = None) -> TabT:
        self._watch_page(page)
        target = PageTarget(self.cdp, page, target_id or await _target_id(self.context, page), self.scripts,
                            self.secrets, on_close=self._closed)
        target.opener_id = opener.target_id if opener is not None else None
        target.owner = self
        target.dialogs.tab_index = lambda: self._index_of_target(target)
        page.on("crash", lambda *_: target.mark_crashed())
        page.on("close", lambda *_: target.gone())
        await target.attach()
        await self.popups.install(target.target_id, target.session_id)
        tab = self._make_tab(target)
        self._targets[target] = tab
        self._openers[target] = opener
        self.tabs.append(tab)
        self.opened.append(tab)
        self._emit("opened", tab)
        return tab

    def _watch_page(self, page: Any) -> None:
        """Before anything else can happen in a page: keep Playwright from dismissing its dialogs (the
        page's DialogWatcher answers them) and save its downloads."""
        page.on("dialog", _leave_dialog_to_vigil)
        page.on("download", lambda d: self.downloads.started(d, page))

    def _on_page(self, page: Any) -> None:
        """A page the context opened: ours (new_tab) or one the page opened (a popup, a new tab)."""
        if self._own_pages:
            return
        if any(self._target_of(t).page is page for t in self.tabs):
            return
        self._watch_page(page)  # at once: a popup may raise a dialog or download before it is wrapped
        self._page_seen_at = asyncio.get_running_loop().time()
        task = asyncio.ensure_future(self._adopt(page))
        self._adopting.add(task)
        task.add_done_callback(self._adopting.discard)

    async def _adopt(self, page: Any) -> None:
        opener: PageTarget | None = None
        try:
            target_id = await _target_id(self.context, page)
        except Exception as exc:  # Playwright's errors: the page closed already (a flood's popup)
            log.debug("a new page went away before it was adopted: %s", exc)
            return
        if target_id in self.popups.refused:
            await self.popups.close(target_id)  # a popup of a flooding page: closed at once, never a tab
            return
        with contextlib.suppress(Exception):
            op = await page.opener()
            opener = next((t for t in self._targets if t.page is op), None) if op is not None else None
        if opener is None and self.active_tab is not None:
            opener = self._target_of(self.active_tab)  # noopener links (target=_blank): opened from the active tab
        try:
            await self._wrap(page, opener, target_id)
        except VigilError as exc:
            log.debug("could not adopt a new page: %s", exc)

    def _page_of_frame(self, frame_id: str) -> str | None:
        """The URL of the page a top-level frame belongs to, for the exit hold: a tab's own, a new popup's
        opener's (the page it leaves); None for frames that are no page of this browser's (subframes)."""
        urls = {t.target_id: t for t in self._targets}
        if frame_id in urls:
            return urls[frame_id].url or ""
        if frame_id in self.popups.opened_by:
            opener = urls.get(self.popups.opened_by[frame_id] or "")
            if opener is None and self.active_tab is not None:
                opener = self._target_of(self.active_tab)
            return opener.url if opener is not None else ""
        return None

    async def _exit_refused(self, frame_id: str) -> None:
        """A popup whose first page was refused is an empty tab the page opened: closed, never followed."""
        if not self.popups.opened_by.get(frame_id):
            return  # not a popup (a tab's own navigation: the tab stays where it was)
        tab = next((t for t in self._targets if t.target_id == frame_id), None)
        if tab is not None and tab.url not in ("", "about:blank"):
            return
        self.popups.refused.add(frame_id)
        await self.popups.close(frame_id)

    def _default_opener(self) -> str | None:
        """Who opened a page that names no opener (a noopener link): the active tab, unless Vigil is
        opening a tab itself."""
        if self._own_pages or self.active_tab is None:
            return None
        return self._target_of(self.active_tab).target_id

    async def settle_new_tabs(self, timeout: float = 2.0, quiet: float = 0.0) -> None:
        """Wait (briefly) until every page the context opened is wrapped as a tab — and, with `quiet`, until no
        new page has been announced for that long (pages a script opens at once are announced one by one: a
        flood of popups is counted whole). Nothing to wait for when no page came lately."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            tasks = set(self._adopting)
            if tasks:
                await asyncio.wait(tasks, timeout=max(0.0, deadline - loop.time()))
            left = min(quiet - (loop.time() - self._page_seen_at), deadline - loop.time())
            if left <= 0 and not self._adopting:
                return
            if loop.time() >= deadline:
                return
            await asyncio.sleep(max(left, 0.01))

    def _closed(self, target: PageTarget) -> None:
        tab = self._targets.pop(target, None)
        opener = self._openers.pop(target, None)
        if tab is not None and tab in self.tabs:
            self.tabs.remove(tab)
        if tab is not None and tab is self.active_tab:
            back = self._targets.get(opener) if opener is not None else None
            self._set_active(back if back is not None else (self.tabs[-1] if self.tabs else None))
        if tab is not None:
            self._emit("closed", tab)

    # -- the tabs ---------------------------------------------------------------------------------
    @staticmethod
    def _target_of(tab: Any) -> PageTarget:
        return tab if isinstance(tab, PageTarget) else tab.target

    def _index_of_target(self, target: PageTarget) -> int | None:
        for i, t in enumerate(self.tabs):
            if self._target_of(t) is target:
                return i
        return None

    def _index_of_page(self, page: Any) -> int | None:
        for i, t in enumerate(self.tabs):
            if self._target_of(t).page is page:
                return i
        return None

    def index_of(self, tab: TabT) -> int | None:
        """The tab's index in `tabs` (None once closed)."""
        return self.tabs.index(tab) if tab in self.tabs else None

    def opener_of(self, tab: TabT) -> TabT | None:
        """The tab that opened this one (a popup's opener), while it is open."""
        op = self._openers.get(self._target_of(tab))
        return self._targets.get(op) if op is not None else None

    def on_tabs(self, fn: TabListener) -> Callable[[], None]:
        """Call `fn(what, tab)` when a tab opens ("opened"), closes ("closed") or becomes active ("active");
        returns a function that stops it."""
        self._listeners.append(fn)
        return lambda: self._listeners.remove(fn) if fn in self._listeners else None

    def _emit(self, what: str, tab: Any) -> None:
        for fn in list(self._listeners):
            try:
                fn(what, tab)
            except Exception:
                log.exception("tab listener failed")

    def _set_active(self, tab: TabT | None) -> None:
        if tab is self.active_tab:
            return
        self.active_tab = tab
        if tab is not None:
            self._emit("active", tab)

    def tab_at(self, index: int) -> TabT:
        """The tab at `index`; VigilError (NO_TAB) naming the open tabs when there is none."""
        if not 0 <= index < len(self.tabs):
            names = "; ".join(i.describe() for i in self.tab_infos()) or "none"
            raise VigilError(f"There is no tab {index}. Open tabs: {names}.", code=ErrorCode.NO_TAB)
        return self.tabs[index]

    async def switch_to(self, index: int) -> TabT:
        """Make the tab at `index` the active one (brought to the front); returns it."""
        tab = self.tab_at(index)
        with contextlib.suppress(Exception):
            await self._target_of(tab).page.bring_to_front()
        self._set_active(tab)
        return tab

    async def close_tab(self, index: int | None = None, *, ask_page: bool = False) -> bool:
        """Close the tab at `index` (the active one when None); the active tab moves to its opener, else
        to the last tab. With `ask_page` the page's beforeunload may ask first (a dialog, answered like any
        other): False when the answer was to stay."""
        if index is None:
            if self.active_tab is None:
                raise VigilError("There is no active tab to close.", code=ErrorCode.NO_TAB)
            tab = self.active_tab
        else:
            tab = self.tab_at(index)
        target = self._target_of(tab)
        if ask_page:
            return await target.ask_to_close()
        await target.close()
        return True

    def tab_infos(self) -> list[TabInfo]:
        """Every open tab: index, title (as last known), URL, active, opener."""
        out = []
        for i, t in enumerate(self.tabs):
            target = self._target_of(t)
            opener = self._openers.get(target)
            out.append(TabInfo(index=i, title=_title_of(target), url=target.url, active=t is self.active_tab,
                               opener=self._index_of_target(opener) if opener is not None else None,
                               target_id=target.target_id))
        return out

    async def refresh_titles(self) -> list[TabInfo]:
        """`tab_infos()` with every title read from its page now."""
        for t in self.tabs:
            target = self._target_of(t)
            if target.dialogs.pending is not None:
                continue  # the page is stopped: its title cannot be read
            with contextlib.suppress(Exception):
                target.title = await asyncio.wait_for(target.page.title(), 2)
        return self.tab_infos()

    async def close(self) -> None:
        for task in list(self._adopting):
            task.cancel()
        for t in list(self._targets):
            t.closed = True
        if self._cdp is not None:
            await self._cdp.close()
        if self._shared_from is not None:  # a context of another Browser's Chromium (open_context): only it goes
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.context.close(), 10)
            return
        with contextlib.suppress(Exception):
            # An attached browser was not ours to start: leave it running (stopping the
            # Playwright driver below disconnects). A launched one is closed.
            if not self.attached and self.pw_browser is not None:
                await self.pw_browser.close()
        if self._pw_cm is not None:
            with contextlib.suppress(Exception):
                await self._pw_cm.__aexit__(None, None, None)


def _leave_dialog_to_vigil(dialog: Any) -> None:
    """Playwright's dialog listener: does nothing, so Playwright does not dismiss the dialog itself."""


def _title_of(target: PageTarget) -> str:
    return str(getattr(target, "title", "") or "")


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


async def _same_browser(pw_browser: Any, ws_url: str) -> str:
    """The DevTools URL of the very browser Playwright attached to. A browserless endpoint
    (`ws://host:port/?token=…`, `/chromium?token=…`) starts a new Chromium for every websocket: Vigil's own socket
    to the same URL got another browser (a step then failed with "No target with given id found"). Its running
    browsers are listed at /sessions: the one holding a page target of Playwright's browser is this one, reached at
    its `browserWSEndpoint` (with the same token). Any other URL is the browser's own and is kept."""
    parts = urllib.parse.urlsplit(ws_url)
    query = urllib.parse.parse_qs(parts.query)
    if "token" not in query or parts.path.startswith(("/devtools/browser/", "/session/")):
        return ws_url
    try:
        cdp = await pw_browser.new_browser_cdp_session()
        targets = {t["targetId"] for t in (await cdp.send("Target.getTargets"))["targetInfos"]}
        scheme = "https" if parts.scheme == "wss" else "http"
        listed = await asyncio.to_thread(_http_json, f"{scheme}://{parts.netloc}/sessions?{parts.query}")
    except Exception as exc:  # noqa: BLE001 - Playwright's errors, an endpoint that lists nothing
        raise BrowserLaunchError(f"The endpoint {ws_url.split('?')[0]} started a browser for each connection "
                                 f"and its running browsers could not be listed ({exc}). Give the running "
                                 "browser's ws://…/devtools/browser/ID URL instead.") from None
    for entry in listed if isinstance(listed, list) else []:
        if entry.get("id") in targets and entry.get("browserWSEndpoint"):
            return f"{entry['browserWSEndpoint']}?{parts.query}"
    raise BrowserLaunchError(f"The endpoint {ws_url.split('?')[0]} started a browser for each connection, and the "
                             "one Vigil attached to is not among its running browsers (/sessions).")


def _resolve_ws(cdp_url: str) -> str:
    if cdp_url.startswith(("ws://", "wss://")):
        return cdp_url
    base = cdp_url.rstrip("/")
    try:
        return str(_http_json(base + "/json/version")["webSocketDebuggerUrl"])
    except Exception as exc:
        raise BrowserLaunchError(f"No DevTools endpoint at {cdp_url} ({exc}). Start Chromium with "
                                 "--remote-debugging-port=9222 and pass http://127.0.0.1:9222.") from None
