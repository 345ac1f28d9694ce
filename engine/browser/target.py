"""One controlled page at the DevTools level: `PageTarget`.

What the layers above need to reach a page, and nothing more: the direct CDP connection and the
page's sessions (the main one and one per out-of-process frame), each frame's default execution
context, the page-side state key and scripts, crash and close flags, a generation counter bumped
whenever the page changes under a cached snapshot, navigation (through Playwright, which waits for
load states well), the viewport size, network activity, and the secret values typed in this browser
(so every picture paints them over). It knows nothing of snapshots or actions: those layers take a
`PageTarget`, and the `Tab` facade (`engine.tab`) puts them together.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from engine.browser.cdp import CDPConnection
from engine.browser.dialogs import DialogWatcher
from engine.browser.navigation import _history_error, navigation_error, normalize_url
from engine.browser.network import NetworkMonitor
from engine.browser.stylesheets import StyleSheets
from engine.errors import BrowserClosedError, NoContextError, TabCrashedError, VigilError
from engine.secret_values import SecretValues

log = logging.getLogger("vigil.browser")

JS_DIR = Path(__file__).resolve().parent.parent / "snapshot" / "js"
# The walker is one function (its helpers share the walk's state in a closure), kept as the sections
# of its body in js/walker/, joined in this order: head.js opens the function and finish.js closes it.
WALKER_PARTS = ("head", "names", "plan", "walk", "passes", "occlusion", "finish")


def walker_source() -> str:
    """The walker's source: its parts joined in order."""
    return "\n".join((JS_DIR / "walker" / f"{part}.js").read_text() for part in WALKER_PARTS)


@dataclass(frozen=True)
class PageScripts:
    """What Vigil runs in every document: the per-document install script (bound to the browser's
    random state key; it ends with the input guard, js/input_guard.js), the walker's source (installed
    lazily, then called by name), and the secret the input guard obeys (passed in calls, never in a
    script's source: see input_guard.js)."""

    key: str
    install_source: str
    walker_source: str
    guard_secret: str = field(default_factory=lambda: secrets.token_hex(16), repr=False)

    @classmethod
    def load(cls, key: str) -> PageScripts:
        install = (JS_DIR / "install.js").read_text()
        guard = (JS_DIR / "input_guard.js").read_text()
        k = json.dumps(key)
        return cls(key, f"({install})({k});\n({guard})({k});", walker_source())


class FrameTarget:
    """Where a frame's documents can be reached: a CDP session and its default context."""

    __slots__ = ("frame_id", "session_id", "context_id", "parent_id", "url", "cross_process")

    def __init__(self, frame_id: str, session_id: str, parent_id: str | None, url: str = "",
                 cross_process: bool = False):
        self.frame_id = frame_id
        self.session_id = session_id
        self.context_id: int | None = None
        self.parent_id = parent_id
        self.url = url
        self.cross_process = cross_process


class HasTarget(Protocol):
    """Anything that drives a page through a `PageTarget` (a `Tab`)."""

    @property
    def target(self) -> PageTarget: ...


def target_of(page: PageTarget | HasTarget) -> PageTarget:
    """The PageTarget behind a Tab (or the PageTarget itself): lets the public picture and screencast
    functions take either."""
    return page if isinstance(page, PageTarget) else page.target


NavigationListener = Callable[[str], None]


class PageTarget:
    """The CDP plumbing of one page: sessions, frames, contexts, flags, navigation and size."""

    def __init__(self, cdp: CDPConnection, page: Any, target_id: str, scripts: PageScripts,
                 secrets: SecretValues, *, on_close: Callable[[PageTarget], None] | None = None):
        self.cdp = cdp
        self.page = page  # the Playwright page
        self.target_id = target_id
        self.scripts = scripts
        self.key = scripts.key
        self.secrets = secrets  # the browser's: every tab's typed secrets are masked in every picture
        self.session_id = ""
        self.sessions: dict[str, str] = {}  # session id → target id (main page + OOPIFs)
        self.frames: dict[str, FrameTarget] = {}
        self._ordinals: dict[str, int] = {}
        self.crashed = False
        self.closed = False
        self.generation = 0  # bumped on every invalidation: a snapshot taken before is not trusted
        self.network = NetworkMonitor(page)
        self.loading = False   # a main-frame navigation is under way
        self.nav_count = 0     # main-frame navigations (new documents and same-document URL changes)
        self._on_close = on_close
        self._navigation_listeners: list[NavigationListener] = []
        self.dialogs = DialogWatcher(cdp.send)  # JavaScript dialogs: seen before anything talks to the page
        self.opener_id: str | None = None       # the target id of the tab that opened this one (a popup)
        self.title = ""                         # the page's title as last read (Browser.refresh_titles)
        # when a person last pressed a button or key in this page through the window (InputForwarder):
        # Vigil's own clock, which the page cannot set (time.monotonic(); 0: never)
        self.person_input_at = 0.0
        # when the main frame last painted two animation frames after a settle's probe (time.monotonic();
        # scroll events queued before then have fired): a snapshot check just after needs no frame of its own
        self.painted_at = -1e9
        self.owner: Any = None                  # the Browser whose tab this is
        # the DevTools console's getEventListeners, per (session, execution context): its remote object id, asked
        # for once (engine.actions.input reads a field's key listeners with it in one call)
        self.listener_readers: dict[tuple[str, int], str] = {}
        # the style sheets the browser applied (CSS domain, enabled per session when first asked)
        self.stylesheets = StyleSheets(cdp.send, self._mine)

    # -- set-up ------------------------------------------------------------------------------
    async def attach(self) -> None:
        """Attach to the page's target (flattened sessions, auto-attach to out-of-process frames)."""
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
                       ("Page.frameStoppedLoading", self._on_loaded),
                       ("Page.javascriptDialogOpening", self._on_dialog_opening),
                       ("Page.javascriptDialogClosed", self._on_dialog_closed),
                       ("CSS.styleSheetAdded", self.stylesheets.on_added),
                       ("CSS.styleSheetRemoved", self.stylesheets.on_removed),
                       ("CSS.styleSheetChanged", self.stylesheets.on_changed)):
            c.on(ev, fn)
        res = await c.send("Target.attachToTarget", {"targetId": self.target_id, "flatten": True})
        self.session_id = res["sessionId"]
        self.sessions[self.session_id] = self.target_id
        self.frames[self.target_id] = FrameTarget(self.target_id, self.session_id, None)
        await self._setup_session(self.session_id)
        tree = await c.send("Page.getFrameTree", session_id=self.session_id)
        self._register_tree(tree["frameTree"], None, self.session_id)

    async def _setup_session(self, sid: str) -> None:
        c = self.cdp
        await asyncio.gather(
            c.send("Page.enable", session_id=sid),
            c.send("Page.addScriptToEvaluateOnNewDocument", {"source": self.scripts.install_source,
                                                             "runImmediately": True}, session_id=sid),
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

    def on_navigated(self, listener: NavigationListener) -> Callable[[], None]:
        """Call `listener(url)` after every main-frame navigation (a new document or a same-document URL
        change, from a run, the person or the page itself); returns a function that stops it."""
        self._navigation_listeners.append(listener)

        def stop() -> None:
            if listener in self._navigation_listeners:
                self._navigation_listeners.remove(listener)
        return stop

    def _navigated(self, url: str) -> None:
        self.nav_count += 1
        for fn in list(self._navigation_listeners):
            try:
                fn(url)
            except Exception:  # a listener's bug must not break the page's bookkeeping
                log.exception("navigation listener failed")

    # -- CDP events ------------------------------------------------------------------------------
    def _mine(self, sid: str | None) -> bool:
        return sid is not None and sid in self.sessions

    def _on_ctx_created(self, p: dict, sid: str | None) -> None:
        if sid is None or not self._mine(sid):
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
        if sid is None or not self._mine(sid):
            return
        f = p["frame"]
        ft = self.frames.get(f["id"])
        if ft is None:
            ft = self.frames[f["id"]] = FrameTarget(f["id"], sid, f.get("parentId"))
        ft.url = f.get("url", ft.url)
        self.stylesheets.frame_navigated(f["id"], sid, top=not f.get("parentId"))
        self.invalidate()
        if f["id"] == self.main_frame_id:
            self._navigated(ft.url)

    def _on_loading(self, p: dict, sid: str | None) -> None:
        if sid == self.session_id and p.get("frameId") == self.main_frame_id:
            self.loading = True

    def _on_loaded(self, p: dict, sid: str | None) -> None:
        if sid == self.session_id and p.get("frameId") == self.main_frame_id:
            self.loading = False

    def _on_same_doc_nav(self, p: dict, sid: str | None) -> None:
        if not self._mine(sid):
            return
        ft = self.frames.get(p.get("frameId", ""))
        if ft:
            ft.url = p.get("url", ft.url)
        self.invalidate()
        if p.get("frameId") == self.main_frame_id:
            self._navigated(p.get("url", ""))

    def _on_frame_attached(self, p: dict, sid: str | None) -> None:
        if sid is not None and self._mine(sid) and p["frameId"] not in self.frames:
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
        known = self.frames.get(fid)
        ft = self.frames[fid] = FrameTarget(fid, child, known.parent_id if known else None, info.get("url", ""),
                                            cross_process=True)
        try:
            await self._setup_session(child)
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
            self.stylesheets.session_gone(child)
            ft = self.frames.get(fid)
            if ft and ft.session_id == child:
                self.frames.pop(fid, None)
            self.invalidate()
        elif child == self.session_id:
            self.gone()

    def _on_dialog_opening(self, p: dict, sid: str | None) -> None:
        if sid is not None and self._mine(sid):
            self.dialogs.opened(p, sid)

    def _on_dialog_closed(self, p: dict, sid: str | None) -> None:
        if sid is not None and self._mine(sid):
            self.dialogs.closed(p, sid)

    def _on_crashed(self, p: dict, sid: str | None) -> None:
        if sid == self.session_id:
            self.mark_crashed()

    def mark_crashed(self) -> None:
        """The renderer died (from CDP, or Playwright's `crash` event): fail what waits on it."""
        self.crashed = True
        self.invalidate()
        self.cdp.fail_session(self.session_id, lambda method: TabCrashedError(
            f"The tab crashed (renderer process died) during {method}. Open a new tab or reload the page."))

    # -- frames ----------------------------------------------------------------------------
    @property
    def main_frame_id(self) -> str:
        return self.target_id

    @property
    def url(self) -> str:
        """The page's address now."""
        return str(self.page.url)

    def pages_in_context(self) -> int:
        """How many pages this tab's browser context holds now: a new tab or popup the page opens adds one
        (Playwright lists it as soon as Chromium announces it, before Vigil has wrapped it as a tab)."""
        try:
            return len(self.page.context.pages)
        except Exception:  # Playwright's errors: the context is closing
            return 0

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

    def invalidate(self) -> None:
        """The page changed: a snapshot taken before is not trusted any more."""
        self.generation += 1

    # -- navigation and size -------------------------------------------------------------------
    async def goto(self, url: str, *, timeout: float = 30.0, wait_until: str = "load") -> None:
        """Navigate and wait; a clear NavigationError on bad URLs, unreachable hosts and timeouts."""
        url = normalize_url(url)
        self.check_alive()
        self.invalidate()
        try:
            # the timeout is the page's time: a beforeunload the person takes minutes over does not count
            resp = await self.dialogs.patient(self.page.goto(url, timeout=0, wait_until=wait_until), timeout)
        except Exception as exc:  # Playwright raises its own Error/TimeoutError types
            raise navigation_error(url, exc, timeout) from None
        finally:
            self.invalidate()
        if resp is not None and resp.status >= 400:
            log.info("%s answered HTTP %s", url, resp.status)

    async def history(self, step: int, *, timeout: float = 30.0) -> bool:
        """Go back (`step` -1), forward (1) or reload (0) and wait for the load; False when there was no
        page to go to (nothing moved). A NavigationError when the page could not be loaded."""
        self.check_alive()
        before = self.url
        self.invalidate()
        what = {-1: "Going back", 1: "Going forward", 0: "Reloading"}[step]
        try:
            if step < 0:
                go = self.page.go_back(timeout=0, wait_until="load")
            elif step > 0:
                go = self.page.go_forward(timeout=0, wait_until="load")
            else:
                go = self.page.reload(timeout=0, wait_until="load")
            resp = await self.dialogs.patient(go, timeout)  # as goto: a dialog being decided stops the clock
        except Exception as exc:  # Playwright's own error types
            raise _history_error(what, exc, timeout) from None
        finally:
            self.invalidate()
        return step == 0 or resp is not None or self.url != before

    async def set_viewport(self, width: int, height: int) -> None:
        """Resize the page's viewport to `width` x `height` CSS px (the page re-lays out, as in a resized
        browser window); a snapshot taken before is not trusted any more."""
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

    def gone(self) -> None:
        """The page closed itself (window.close(), or its browser window went away): forget it."""
        self.closed = True
        self._navigation_listeners.clear()
        self.dialogs.close()
        self._report_closed()

    def _report_closed(self) -> None:
        on_close, self._on_close = self._on_close, None  # once
        if on_close is not None:
            on_close(self)

    async def ask_to_close(self, wait: float = 5.0) -> bool:
        """Close the page as a person closing its tab would: its `beforeunload` may ask first (answered
        like any dialog). True when it closed; False when the answer was to stay."""
        if self.closed:
            return True
        seen = self.dialogs.total
        with contextlib.suppress(Exception):
            await self.page.close(run_before_unload=True)  # returns at once; the page may ask
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        while not self.closed:
            asked = [d for d in list(self.dialogs.log) if d.id > seen and d.kind == "beforeunload"]
            if asked and asked[-1].answer is not None and not asked[-1].answer.accept:
                return False  # "stay on this page"
            if self.dialogs.pending is not None:
                deadline = loop.time() + wait  # someone is deciding: wait for them
            elif loop.time() > deadline:
                break
            await asyncio.sleep(0.05)
        if not self.closed:
            await self.close()  # it neither closed nor asked: close it outright
        return True

    async def close(self) -> None:
        if self.closed:
            self._report_closed()
            return
        self.closed = True
        self._navigation_listeners.clear()
        self.dialogs.close()
        # Close through CDP first: Playwright's page.close() has been seen to wait forever
        # after a failed navigation (error page in a swapped renderer).
        with contextlib.suppress(Exception):
            await self.cdp.send("Target.closeTarget", {"targetId": self.target_id}, timeout=5)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.page.close(), 5)
        self._report_closed()
