"""Browser and tab sessions: Playwright for lifecycle and navigation, a direct CDP websocket
for everything bulky (snapshots), with child sessions for out-of-process iframes."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
import os
import secrets
import socket
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, AsyncIterator

from engine.browser.cdp import CDPConnection
from engine.actions.tab_actions import TabActions
from engine.browser.discovery import BASE_FLAGS, find_chromium, running_as_root
from engine.errors import (ErrorCode, BrowserClosedError, BrowserLaunchError, NavigationError, NoContextError,
                           TabCrashedError, VigilError)
from engine.observe.network import NetworkMonitor
from engine.secret_values import SecretValues

log = logging.getLogger("vigil.browser")

JS_DIR = Path(__file__).resolve().parent.parent / "snapshot" / "js"
ALLOWED_SCHEMES = ("http", "https", "file", "about", "data")
DEFAULT_VIEWPORT = (1280, 800)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _http_json(url: str, timeout: float = 5.0) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as r:  # local DevTools endpoint only
        return json.loads(r.read().decode())


def normalize_url(url: str) -> str:
    """Accept URLs and local paths; refuse schemes a browser agent has no business opening."""
    if not url or not url.strip():
        raise NavigationError("No URL given. Pass an http(s) URL or a path to a local HTML file.", code=ErrorCode.BAD_URL)
    url = url.strip()
    p = Path(url).expanduser()
    if "://" not in url and not url.startswith(("about:", "data:")):
        if p.exists():
            return p.resolve().as_uri()
        if "/" not in url.split(".")[0] and "." in url and " " not in url:
            return "http://" + url  # "example.com" → http://example.com
        raise NavigationError(f"{url!r} is neither a URL nor an existing file. Give a full URL such as "
                              "http://127.0.0.1:8000/ or a path to an HTML file.", code=ErrorCode.BAD_URL)
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        raise NavigationError(f"Cannot open {url!r}: the {scheme!r} scheme is not supported. Vigil opens "
                              "http, https and file URLs.", code=ErrorCode.BAD_URL)
    return url


class FrameTarget:
    """Where a frame's documents can be reached: a CDP session and its default context."""

    __slots__ = ("frame_id", "session_id", "context_id", "parent_id", "url", "cross_process")

    def __init__(self, frame_id: str, session_id: str, parent_id: str | None, url: str = "", cross_process: bool = False):
        self.frame_id = frame_id
        self.session_id = session_id
        self.context_id: int | None = None
        self.parent_id = parent_id
        self.url = url
        self.cross_process = cross_process


class Tab(TabActions):
    """One controlled page. Snapshots are cached until navigation, a document update or an action.

    The actions (click, type, press, select, scroll, navigate …) come from `TabActions`."""

    def __init__(self, browser: "Browser", page: Any, target_id: str):
        self.browser = browser
        self.page = page  # the Playwright page, for advanced use
        self.target_id = target_id
        self.cdp: CDPConnection = browser.cdp
        self.session_id: str = ""
        self.sessions: dict[str, str] = {}  # session id → target id (main page + OOPIFs)
        self.frames: dict[str, FrameTarget] = {}
        self._ordinals: dict[str, int] = {}
        self._snapshot = None
        self._snapshot_keys: dict[str, tuple] | None = None  # per frame: the document versions the snapshot saw
        self._invalid = True
        self.crashed = False
        self.closed = False
        self.generation = 0  # bumped on every invalidation
        self._lock = asyncio.Lock()
        self.key = browser.state_key
        self.network = NetworkMonitor(page)
        self.loading = False   # a main-frame navigation is under way
        self.nav_count = 0     # main-frame navigations (new documents and same-document URL changes)
        self.recent_snapshots: collections.deque = collections.deque(maxlen=4)  # for ghost-match recovery

    # -- CDP plumbing --------------------------------------------------------------------
    async def _attach(self) -> None:
        c = self.cdp
        for ev, fn in (("Runtime.executionContextCreated", self._on_ctx_created),
                       ("Runtime.executionContextDestroyed", self._on_ctx_destroyed),
                       ("Runtime.executionContextsCleared", self._on_ctx_cleared),
                       ("Page.frameNavigated", self._on_frame_navigated),
                       ("Page.navigatedWithinDocument", self._on_same_doc_nav),
                       ("Page.frameAttached", self._on_frame_attached),
                       ("Page.frameDetached", self._on_frame_detached),
                       ("Target.attachedToTarget", self._on_attached),
                       ("Target.detachedFromTarget", self._on_detached),
                       ("Inspector.targetCrashed", self._on_crashed),
                       ("Page.frameStartedLoading", self._on_loading),
                       ("Page.frameStoppedLoading", self._on_loaded)):
            c.on(ev, fn)
        res = await c.send("Target.attachToTarget", {"targetId": self.target_id, "flatten": True})
        self.session_id = res["sessionId"]
        self.sessions[self.session_id] = self.target_id
        self.frames[self.target_id] = FrameTarget(self.target_id, self.session_id, None)
        await self._setup_session(self.session_id, child=False)
        tree = await c.send("Page.getFrameTree", session_id=self.session_id)
        self._register_tree(tree["frameTree"], None, self.session_id)

    async def _setup_session(self, sid: str, child: bool) -> None:
        c = self.cdp
        install = self.browser.install_source
        await asyncio.gather(
            c.send("Page.enable", session_id=sid),
            c.send("Page.addScriptToEvaluateOnNewDocument", {"source": install, "runImmediately": True}, session_id=sid),
            c.send("Runtime.enable", session_id=sid),
            c.send("Inspector.enable", session_id=sid),
            c.send("Target.setAutoAttach", {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True},
                   session_id=sid),
        )


    def _register_tree(self, node: dict, parent: str | None, sid: str) -> None:
        f = node["frame"]
        ft = self.frames.get(f["id"])
        if ft is None:
            ft = self.frames[f["id"]] = FrameTarget(f["id"], sid, parent)
        ft.url = f.get("url", "")
        for ch in node.get("childFrames", []) or []:
            self._register_tree(ch, f["id"], sid)

    def _mine(self, sid: str | None) -> bool:
        return sid is not None and sid in self.sessions

    def _on_ctx_created(self, p: dict, sid: str | None) -> None:
        if not self._mine(sid):
            return
        ctx = p["context"]
        aux = ctx.get("auxData") or {}
        if not aux.get("isDefault") or not aux.get("frameId"):
            return
        fid = aux["frameId"]
        ft = self.frames.get(fid)
        if ft is None or (ft.session_id != sid and not ft.cross_process):
            ft = self.frames[fid] = FrameTarget(fid, sid, ft.parent_id if ft else None)
        if ft.session_id == sid:
            ft.context_id = ctx["id"]

    def _on_ctx_destroyed(self, p: dict, sid: str | None) -> None:
        if not self._mine(sid):
            return
        for ft in self.frames.values():
            if ft.session_id == sid and ft.context_id == p.get("executionContextId"):
                ft.context_id = None
        self.invalidate()

    def _on_ctx_cleared(self, p: dict, sid: str | None) -> None:
        if not self._mine(sid):
            return
        for ft in self.frames.values():
            if ft.session_id == sid:
                ft.context_id = None
        self.invalidate()

    def _on_frame_navigated(self, p: dict, sid: str | None) -> None:
        if not self._mine(sid):
            return
        f = p["frame"]
        if f["id"] == self.main_frame_id:
            self.nav_count += 1
        ft = self.frames.get(f["id"])
        if ft is None:
            ft = self.frames[f["id"]] = FrameTarget(f["id"], sid, f.get("parentId"))
        ft.url = f.get("url", ft.url)
        self.invalidate()

    def _on_loading(self, p: dict, sid: str | None) -> None:
        if sid == self.session_id and p.get("frameId") == self.main_frame_id:
            self.loading = True

    def _on_loaded(self, p: dict, sid: str | None) -> None:
        if sid == self.session_id and p.get("frameId") == self.main_frame_id:
            self.loading = False

    def _on_same_doc_nav(self, p: dict, sid: str | None) -> None:
        if self._mine(sid):
            if p.get("frameId") == self.main_frame_id:
                self.nav_count += 1
            ft = self.frames.get(p.get("frameId", ""))
            if ft:
                ft.url = p.get("url", ft.url)
            self.invalidate()

    def _on_frame_attached(self, p: dict, sid: str | None) -> None:
        if self._mine(sid) and p["frameId"] not in self.frames:
            self.frames[p["frameId"]] = FrameTarget(p["frameId"], sid, p.get("parentFrameId"))

    def _on_frame_detached(self, p: dict, sid: str | None) -> None:
        if not self._mine(sid):
            return
        ft = self.frames.get(p["frameId"])
        # "swap" means the frame moved to another process (an OOPIF session takes over).
        if ft and p.get("reason") != "swap" and ft.session_id == sid:
            self.frames.pop(p["frameId"], None)
        self.invalidate()

    async def _on_attached(self, p: dict, sid: str | None) -> None:
        if not self._mine(sid):
            return
        info = p["targetInfo"]
        child = p["sessionId"]
        if info.get("type") != "iframe":
            # workers and the like: let them run, we do not drive them
            with contextlib.suppress(VigilError):
                await self.cdp.send("Runtime.runIfWaitingForDebugger", session_id=child)
                await self.cdp.send("Target.detachFromTarget", {"sessionId": child}, session_id=sid)
            return
        fid = info["targetId"]  # an out-of-process frame's target id is its frame id
        self.sessions[child] = fid
        parent = self.frames.get(fid).parent_id if fid in self.frames else None
        ft = self.frames[fid] = FrameTarget(fid, child, parent, info.get("url", ""), cross_process=True)
        try:
            await self._setup_session(child, child=True)
        except VigilError as exc:
            log.debug("could not set up frame session %s: %s", fid, exc)
        finally:
            # The frame is paused until resumed: always resume it, even if set-up failed.
            with contextlib.suppress(VigilError):
                await self.cdp.send("Runtime.runIfWaitingForDebugger", session_id=child)
        ft.url = info.get("url", ft.url)
        self.invalidate()

    def _on_detached(self, p: dict, sid: str | None) -> None:
        child = p.get("sessionId")
        if child in self.sessions and child != self.session_id:
            fid = self.sessions.pop(child)
            ft = self.frames.get(fid)
            if ft and ft.session_id == child:
                self.frames.pop(fid, None)
            self.invalidate()
        elif child == self.session_id:
            self.closed = True

    def _on_crashed(self, p: dict, sid: str | None) -> None:
        if sid == self.session_id:
            self.crashed = True
            self.invalidate()
            self.cdp.fail_session(self.session_id, lambda method: TabCrashedError(
                f"The tab crashed (renderer process died) during {method}. Open a new tab or reload the page."))

    # -- frames ----------------------------------------------------------------------------
    @property
    def main_frame_id(self) -> str:
        return self.target_id

    def frame_ordinal(self, frame_id: str) -> int:
        """0 for the main frame; child frames get 1, 2, … in the order first seen (stable per tab)."""
        if frame_id == self.main_frame_id:
            return 0
        if frame_id not in self._ordinals:
            self._ordinals[frame_id] = len(self._ordinals) + 1
        return self._ordinals[frame_id]

    async def context_for(self, frame_id: str, timeout: float = 5.0) -> tuple[str, int]:
        """(session id, default execution context id) for a frame; waits briefly for a new document."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            self.check_alive()
            ft = self.frames.get(frame_id)
            if ft is not None and ft.context_id is not None:
                return ft.session_id, ft.context_id
            if loop.time() > deadline:
                raise NoContextError(f"Frame {frame_id} has no live document (it may be loading, detached or "
                                     "blocked). Take a new snapshot after the page settles.")
            await asyncio.sleep(0.02)

    def check_alive(self) -> None:
        if self.crashed:
            raise TabCrashedError("The tab crashed (renderer process died). Open a new tab or reload the page.")
        if self.closed or self.cdp.closed:
            raise BrowserClosedError("The tab or browser is closed. Launch again to continue.")

    # -- snapshots ---------------------------------------------------------------------------
    def invalidate(self) -> None:
        """Forget the cached snapshot; the next `snapshot()` captures afresh."""
        self._invalid = True
        self.generation += 1

    async def set_viewport(self, width: int, height: int) -> None:
        """Resize the page's viewport to `width` x `height` CSS px (the page re-lays out, as in a resized
        browser window); the cached snapshot is dropped."""
        w, h = int(width), int(height)
        if w < 1 or h < 1:
            raise ValueError(f"A viewport needs a positive size, not {width}x{height}.")
        self.check_alive()
        try:
            await self.page.set_viewport_size({"width": w, "height": h})
        except Exception as exc:  # Playwright's own error types: the page went away under us
            raise BrowserClosedError(f"Could not resize the page: {str(exc).splitlines()[0]}") from None
        finally:
            self.invalidate()

    async def _frame_version(self, frame_id: str) -> tuple | None:
        """What `capture.walk_key` would say of this frame's document now, or None when it cannot be
        read (then the cache is not trusted)."""
        try:
            if frame_id == self.main_frame_id:
                sid, ctx = await self.context_for(frame_id, timeout=1.0)
            else:  # a child frame without a live document is a reason to walk again, not to wait
                ft = self.frames.get(frame_id)
                if ft is None or ft.context_id is None:
                    return None
                sid, ctx = ft.session_id, ft.context_id
            # Scroll and resize events arrive with the next frame: let one pass (50 ms at most)
            # so a programmatic scroll of an inner container is seen before the cache is trusted.
            expr = ("new Promise(res => { const k = " + json.dumps(self.key) + "; const v = () => { const s = window[k]; "
                    "return s ? [s.ver, scrollX, scrollY, innerWidth, innerHeight, location.href] : null; }; "
                    "let done = false; const fin = () => { if (!done) { done = true; res(v()); } }; "
                    "requestAnimationFrame(() => setTimeout(fin, 0)); setTimeout(fin, 50); })")
            r = await self.cdp.send("Runtime.evaluate", {"expression": expr, "contextId": ctx, "returnByValue": True,
                                                         "awaitPromise": True}, session_id=sid, timeout=5)
            v = r.get("result", {}).get("value")
            return tuple(v) if v else None
        except VigilError:
            return None

    async def _page_versions(self) -> dict[str, tuple] | None:
        """Every frame's document version (all frames at once), or None when one cannot be read."""
        ids = list(self.frames)
        found = await asyncio.gather(*(self._frame_version(fid) for fid in ids))
        if any(v is None for v in found):
            return None
        return dict(zip(ids, found))

    async def snapshot(self, *, force: bool = False, full_page: bool = False, max_nodes: int | None = None,
                       timeout: float = 30.0):
        """The current snapshot: reused while nothing changed in the page, else captured afresh."""
        from engine.snapshot.capture import capture  # local: capture imports this module

        async with self._lock:
            self.check_alive()
            if not force and not self._invalid and self._snapshot is not None:
                keys = await self._page_versions()
                if keys is not None and keys == self._snapshot_keys:
                    return self._snapshot
            gen = self.generation
            snap = await capture(self, max_nodes=max_nodes, timeout=timeout)
            self._snapshot = snap
            self.recent_snapshots.append(snap)
            self._snapshot_keys = getattr(self, "_walk_keys", None)
            self._invalid = self.generation != gen
            return snap

    # -- navigation ------------------------------------------------------------------------
    async def goto(self, url: str, *, timeout: float = 30.0, wait_until: str = "load") -> None:
        """Navigate and wait; a clear NavigationError on bad URLs, unreachable hosts and timeouts."""
        url = normalize_url(url)
        self.check_alive()
        self.invalidate()
        try:
            resp = await self.page.goto(url, timeout=timeout * 1000, wait_until=wait_until)
        except Exception as exc:  # Playwright raises its own Error/TimeoutError types
            raise _navigation_error(url, exc, timeout) from None
        finally:
            self.invalidate()
        if resp is not None and resp.status >= 400:
            log.info("%s answered HTTP %s", url, resp.status)

    async def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        # Close through CDP first: Playwright's page.close() has been seen to wait forever
        # after a failed navigation (error page in a swapped renderer).
        with contextlib.suppress(Exception):
            await self.cdp.send("Target.closeTarget", {"targetId": self.target_id}, timeout=5)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.page.close(), 5)
        if self in self.browser.tabs:
            self.browser.tabs.remove(self)


def _navigation_error(url: str, exc: Exception, timeout: float) -> VigilError:
    text = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
    if "Timeout" in exc.__class__.__name__ or "Timeout" in text:
        return NavigationError(f"{url} did not finish loading within {timeout:.0f} s. The server may be slow or "
                               "stuck; try again, raise the timeout, or snapshot what has loaded with "
                               "wait_until='commit'.", code=ErrorCode.NAVIGATION_TIMEOUT)
    for marker, hint in (("ERR_NAME_NOT_RESOLVED", "the host name does not resolve — check the spelling"),
                         ("ERR_CONNECTION_REFUSED", "nothing is listening there — is the server running?"),
                         ("ERR_ADDRESS_UNREACHABLE", "the address is unreachable from this machine"),
                         ("ERR_INTERNET_DISCONNECTED", "this machine has no network route to it"),
                         ("ERR_CONNECTION_RESET", "the server reset the connection"),
                         ("ERR_FILE_NOT_FOUND", "the file does not exist"),
                         ("ERR_ABORTED", "the navigation was aborted (a download, or another navigation)"),
                         ("ERR_CERT", "the TLS certificate was rejected"),
                         ("ERR_TIMED_OUT", "the connection timed out")):
        if marker in text:
            return NavigationError(f"Could not open {url}: {hint} ({marker}).")
    if "closed" in text.lower():
        return BrowserClosedError(f"Could not open {url}: the tab or browser was closed.")
    return NavigationError(f"Could not open {url}: {text}")


class Browser:
    """A launched (or attached) Chromium with a direct CDP connection next to Playwright's."""

    def __init__(self) -> None:
        self._pw = None
        self._pw_cm = None
        self.pw_browser = None
        self.context = None
        self.cdp: CDPConnection = None  # type: ignore[assignment]
        self.tabs: list[Tab] = []
        self.state_key = "__vigil_" + secrets.token_hex(6)
        install = (JS_DIR / "install.js").read_text()
        self.install_source = f"({install})({json.dumps(self.state_key)});"
        self.walker_source = (JS_DIR / "walker.js").read_text()
        self.headless = True
        self.executable = ""
        self.attached = False
        self.viewport = DEFAULT_VIEWPORT
        # secret values typed in this browser's tabs (memory only): every picture paints them over
        self.secrets = SecretValues()

    async def _start(self, *, headless: bool, cdp_url: str | None, executable: str | None,
                     viewport: tuple[int, int], args: list[str] | None, launch_timeout: float) -> None:
        from playwright.async_api import async_playwright

        self.headless = headless
        self.viewport = viewport
        self._pw_cm = async_playwright()
        self._pw = await self._pw_cm.__aenter__()
        if cdp_url:
            self.attached = True
            ws_url = _resolve_ws(cdp_url)
            try:
                self.pw_browser = await self._pw.chromium.connect_over_cdp(cdp_url, timeout=launch_timeout * 1000)
            except Exception as exc:
                raise BrowserLaunchError(f"Could not attach to the browser at {cdp_url}: {str(exc).splitlines()[0]}. "
                                         "Check that it runs with --remote-debugging-port and the URL is right.") from None
            self.context = self.pw_browser.contexts[0] if self.pw_browser.contexts else await self.pw_browser.new_context(
                viewport={"width": viewport[0], "height": viewport[1]})
        else:
            self.executable = executable or find_chromium()
            port = _free_port()
            flags = BASE_FLAGS + [f"--remote-debugging-port={port}", "--remote-debugging-address=127.0.0.1"] + (args or [])
            try:
                self.pw_browser = await self._pw.chromium.launch(
                    executable_path=self.executable, headless=headless, args=flags,
                    chromium_sandbox=not running_as_root(), timeout=launch_timeout * 1000,
                    handle_sigint=False, handle_sigterm=False, handle_sighup=False)
            except Exception as exc:
                msg = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
                hint = ""
                if not headless and not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
                    hint = " A headed browser needs a display: run under Xvfb (xvfb-run) or use headless=True."
                raise BrowserLaunchError(f"Chromium at {self.executable} failed to start: {msg}.{hint}") from None
            ws_url = await _wait_ws(port, launch_timeout)
            self.context = await self.pw_browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
        self.cdp = await CDPConnection.connect(ws_url)

    async def new_tab(self, url: str | None = None, *, timeout: float = 30.0, wait_until: str = "load") -> Tab:
        """Open a tab (page); `url` is loaded after Vigil's per-document script is in place."""
        page = await self.context.new_page()
        target_id = await _target_id(self.context, page)
        tab = Tab(self, page, target_id)
        page.on("crash", lambda *_: tab._on_crashed({}, tab.session_id))
        await tab._attach()
        self.tabs.append(tab)
        if url:
            await tab.goto(url, timeout=timeout, wait_until=wait_until)
        return tab

    async def close(self) -> None:
        for t in list(self.tabs):
            t.closed = True
        if self.cdp is not None:
            await self.cdp.close()
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
        return info["targetInfo"]["targetId"]
    finally:
        with contextlib.suppress(Exception):
            await s.detach()


async def _wait_ws(port: int, timeout: float) -> str:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last = None
    while loop.time() < deadline:
        try:
            info = await loop.run_in_executor(None, _http_json, f"http://127.0.0.1:{port}/json/version")
            return info["webSocketDebuggerUrl"]
        except (OSError, urllib.error.URLError, KeyError, ValueError) as exc:
            last = exc
            await asyncio.sleep(0.05)
    raise BrowserLaunchError(f"Chromium started but its DevTools endpoint on port {port} never answered ({last}).")


def _resolve_ws(cdp_url: str) -> str:
    if cdp_url.startswith(("ws://", "wss://")):
        return cdp_url
    base = cdp_url.rstrip("/")
    try:
        return _http_json(base + "/json/version")["webSocketDebuggerUrl"]
    except Exception as exc:
        raise BrowserLaunchError(f"No DevTools endpoint at {cdp_url} ({exc}). Start Chromium with "
                                 "--remote-debugging-port=9222 and pass http://127.0.0.1:9222.") from None


@contextlib.asynccontextmanager
async def launch(*, headless: bool = True, cdp_url: str | None = None, executable: str | None = None,
                 viewport: tuple[int, int] = DEFAULT_VIEWPORT, args: list[str] | None = None,
                 launch_timeout: float = 30.0) -> AsyncIterator[Browser]:
    """`async with launch() as browser:` — a Chromium that Vigil drives; closed on exit.

    With `cdp_url=` Vigil attaches to a browser that is already running (remote or pooled)
    and leaves it running afterwards."""
    b = Browser()
    try:
        await b._start(headless=headless, cdp_url=cdp_url, executable=executable, viewport=viewport,
                       args=args, launch_timeout=launch_timeout)
        yield b
    finally:
        await b.close()
