"""`Tab`, the public face of one controlled page, and `launch()`.

A Tab puts the layers together and delegates to them in one line each: `PageTarget` (the CDP
plumbing, navigation and size: `engine.browser.target`), `SnapshotCache` (snapshots, reused until
the page changes: `engine.snapshot.cache`) and `PageActions` (actions on node IDs with
verification: `engine.actions.page_actions`). It is also what the observe–act loop drives
(`engine.loop.driver.PageDriver`)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar, cast

from engine.actions.effect import step_effect
from engine.actions.page_actions import PageActions
from engine.actions.upload import upload
from engine.browser.browser import DEFAULT_VIEWPORT, Browser
from engine.browser.cdp import CDPConnection
from engine.browser.dialogs import DialogWatcher, describe_open
from engine.browser.network import NetworkMonitor
from engine.browser.target import FrameTarget, PageTarget
from engine.errors import DialogOpenError, ErrorCode, VigilError
from engine.models import Action, ActionResult, OutcomeLike, PageEvent
from engine.models.browsing import DialogAnswer, DialogInfo
from engine.models.effect import StepEffect
from engine.observe.requests import track as track_requests
from engine.observe.stability import Outcome, StabilityConfig, StabilityResult
from engine.races import unless
from engine.snapshot.cache import SnapshotCache
from engine.snapshot.dom_snapshot import DomSnapshot
from engine.vision.screenshot import Screenshot, capture_screenshot

T = TypeVar("T")


class Tab:
    """One controlled page. Snapshots are cached until navigation, a document update or an action."""

    def __init__(self, target: PageTarget) -> None:
        self.target = target
        self.snapshots = SnapshotCache(target)
        self.actions = PageActions(target, self.snapshots)
        track_requests(target)  # request start times from now on: a settle waits only for the action's requests

    # -- the page ------------------------------------------------------------------------------
    @property
    def page(self) -> Any:
        """The Playwright page, for advanced use."""
        return self.target.page

    @property
    def url(self) -> str:
        return self.target.url

    @property
    def cdp(self) -> CDPConnection:
        return self.target.cdp

    @property
    def session_id(self) -> str:
        return self.target.session_id

    @property
    def key(self) -> str:
        """The page-side state key (window[key] in every document of this browser)."""
        return self.target.key

    @property
    def frames(self) -> dict[str, FrameTarget]:
        return self.target.frames

    @property
    def main_frame_id(self) -> str:
        return self.target.main_frame_id

    @property
    def network(self) -> NetworkMonitor:
        return self.target.network

    @property
    def nav_count(self) -> int:
        return self.target.nav_count

    @property
    def generation(self) -> int:
        return self.target.generation

    @property
    def closed(self) -> bool:
        return self.target.closed

    @property
    def crashed(self) -> bool:
        return self.target.crashed

    @property
    def stability(self) -> StabilityConfig:
        """How long the page must be quiet before it counts as settled (per tab)."""
        return self.actions.stability

    @stability.setter
    def stability(self, config: StabilityConfig) -> None:
        self.actions.stability = config

    def check_alive(self) -> None:
        self.target.check_alive()

    # -- JavaScript dialogs ----------------------------------------------------------------------
    @property
    def dialogs(self) -> DialogWatcher:
        """This page's dialogs: `pending`, `log`, `handler` (who decides), `arm(answer)`, `on_dialog(fn)`."""
        return self.target.dialogs

    @property
    def pending_dialog(self) -> DialogInfo | None:
        """The dialog open on this page now (alert, confirm, prompt, beforeunload), or None."""
        return self.target.dialogs.pending

    async def answer_dialog(self, accept: bool, text: str | None = None, *, by: str = "api",
                            reason: str = "") -> DialogInfo:
        """Answer the open dialog: OK (`accept=True`, with `text` for a prompt) or Cancel. VigilError
        (NO_DIALOG) when none is open."""
        if self.target.dialogs.pending is None:
            raise VigilError("No dialog is open on this page to answer.", code=ErrorCode.NO_DIALOG)
        return await self.target.dialogs.answer(accept, text, by=by, reason=reason)

    async def _unblocked(self, aw: Awaitable[T]) -> T:
        """Await a call into the page unless a dialog nobody is deciding stops the page first: then the
        call is cancelled and DialogOpenError says which dialog waits for an answer."""
        d = self.target.dialogs
        if d.pending is not None and d.blocked.is_set():
            if asyncio.iscoroutine(aw):
                aw.close()
            raise DialogOpenError(describe_open(d.pending))
        finished, result = await unless(aw, d.wait_blocked())
        if finished:
            return cast(T, result)
        pending = d.pending
        raise DialogOpenError(describe_open(pending) if pending is not None else "A dialog stopped the page.")

    def on_navigated(self, listener: Callable[[str], None]) -> Callable[[], None]:
        """Call `listener(url)` after every main-frame navigation; returns a function that stops it."""
        return self.target.on_navigated(listener)

    async def context_for(self, frame_id: str, timeout: float = 5.0) -> tuple[str, int]:
        return await self.target.context_for(frame_id, timeout)

    # -- navigation and size ------------------------------------------------------------------------
    async def goto(self, url: str, *, timeout: float = 30.0, wait_until: str = "load") -> None:
        """Navigate and wait; a clear NavigationError on bad URLs, unreachable hosts and timeouts."""
        await self.target.goto(url, timeout=timeout, wait_until=wait_until)

    async def go_back(self, *, timeout: float = 30.0) -> bool:
        """Back in this tab's history; False when there is no previous page."""
        return await self.target.history(-1, timeout=timeout)

    async def go_forward(self, *, timeout: float = 30.0) -> bool:
        """Forward in this tab's history; False when there is no next page."""
        return await self.target.history(1, timeout=timeout)

    async def reload(self, *, timeout: float = 30.0) -> None:
        await self.target.history(0, timeout=timeout)

    async def set_viewport(self, width: int, height: int) -> None:
        """Resize the page's viewport (the page re-lays out); the cached snapshot is dropped."""
        await self.target.set_viewport(width, height)

    def invalidate(self) -> None:
        """Forget the cached snapshot; the next `snapshot()` captures afresh."""
        self.target.invalidate()

    async def close(self) -> None:
        await self.target.close()

    # -- snapshots, pictures, events -------------------------------------------------------------
    async def snapshot(self, *, force: bool = False, max_nodes: int | None = None,
                       timeout: float = 30.0) -> DomSnapshot:
        """The current snapshot: reused while nothing changed in the page, else captured afresh.
        DialogOpenError (at once, never a hang) while a dialog nobody is deciding stops the page."""
        return await self._unblocked(self.snapshots.snapshot(force=force, max_nodes=max_nodes, timeout=timeout))

    @property
    def latest_snapshot(self) -> DomSnapshot | None:
        """The last snapshot taken of this tab (by anyone: the loop, an action), without taking one."""
        return self.snapshots.latest

    async def screenshot(self, *, max_width: int = 1024, quality: int = 70, full: bool = False) -> Screenshot:
        """The viewport as a JPEG payload with its perceptual hash (secrets painted over)."""
        return await self._unblocked(capture_screenshot(self.target, max_width=max_width, quality=quality, full=full))

    async def effect(self, action: Action, snap: DomSnapshot) -> StepEffect | None:
        """What `action` (its target a node ID of `snap`) will do, computed in the page before it runs
        (engine.actions.effect); None when it puts no input into the page or the page would not say."""
        try:
            return await self._unblocked(step_effect(self.target, snap, action))
        except VigilError:  # (a dialog open in the page): not known
            return None

    def remember_secret(self, value: str) -> None:
        """A secret typed into this browser: painted over in every picture from now on."""
        self.target.secrets.add(value)

    async def wait_stable(self, config: StabilityConfig | None = None, *,
                          since: float | None = None, outcome: Outcome | None = None) -> StabilityResult:
        """Wait until the page settles (see engine.observe.stability): painted, quiet, the action's
        requests done — or, with `outcome`, as soon as that check passes on a painted, quiet page."""
        return await self._unblocked(self.actions.wait_stable(config, since=since, outcome=outcome))

    async def recent_events(self, max_age_ms: int = 10_000) -> list[PageEvent]:
        """The mutation stream: meaningful page changes (toasts, errors, …) from every frame."""
        return await self._unblocked(self.actions.recent_events(max_age_ms))

    # -- actions (see engine.actions.page_actions) --------------------------------------------------
    async def click(self, node_id: str, *, force: bool = False, expect: OutcomeLike = None) -> ActionResult:
        return await self._acting(self.actions.click(node_id, force=force, expect=expect), f"click({node_id})", node_id)

    async def double_click(self, node_id: str, *, force: bool = False, expect: OutcomeLike = None) -> ActionResult:
        return await self._acting(self.actions.double_click(node_id, force=force, expect=expect),
                                  f"double_click({node_id})", node_id)

    async def hover(self, node_id: str, *, force: bool = False, expect: OutcomeLike = None) -> ActionResult:
        return await self._acting(self.actions.hover(node_id, force=force, expect=expect), f"hover({node_id})", node_id)

    async def type(self, node_id: str, text: str, *, clear: bool = True, submit: bool = False,
                   expect: OutcomeLike = None) -> ActionResult:
        return await self._acting(self.actions.type(node_id, text, clear=clear, submit=submit, expect=expect),
                                  f"type({node_id}, …)", node_id)

    async def press(self, key: str, node_id: str | None = None, *, repeat: int = 1,
                    expect: OutcomeLike = None) -> ActionResult:
        return await self._acting(self.actions.press(key, node_id, repeat=repeat, expect=expect),
                                  f"press({key!r})", node_id)

    async def select(self, node_id: str, option: str, *, expect: OutcomeLike = None) -> ActionResult:
        return await self._acting(self.actions.select(node_id, option, expect=expect), f"select({node_id})", node_id)

    async def check(self, node_id: str, *, expect: OutcomeLike = None) -> ActionResult:
        return await self._acting(self.actions.check(node_id, expect=expect), f"check({node_id})", node_id)

    async def uncheck(self, node_id: str, *, expect: OutcomeLike = None) -> ActionResult:
        return await self._acting(self.actions.uncheck(node_id, expect=expect), f"uncheck({node_id})", node_id)

    async def scroll(self, node_id: str | None = None, direction: str = "down", amount: int | None = None, *,
                     expect: OutcomeLike = None) -> ActionResult:
        return await self._acting(self.actions.scroll(node_id, direction, amount, expect=expect),
                                  f"scroll({direction!r})", node_id)

    async def navigate(self, url: str, *, expect: OutcomeLike = None, timeout: float = 30.0) -> ActionResult:
        return await self._acting(self.actions.navigate(url, expect=expect, timeout=timeout), f"navigate({url!r})")

    async def back(self, *, expect: OutcomeLike = None, timeout: float = 30.0) -> ActionResult:
        return await self._acting(self.actions.back(expect=expect, timeout=timeout), "back()")

    async def wait(self, ms: int, *, expect: OutcomeLike = None) -> ActionResult:
        return await self._acting(self.actions.wait(ms, expect=expect), f"wait({ms})")

    async def upload(self, node_id: str, paths: list[str], *, expect: OutcomeLike = None) -> ActionResult:
        """Set files on the file input `node_id` stands for (the input, or its styled button or label); the
        paths are checked first, and the result says whether the input holds them — and, with `expect`,
        whether the page did what was expected besides (see engine.actions.upload)."""
        return await upload(self.target, self.snapshots, node_id, paths, self.actions.stability, expect=expect)

    async def dialog(self, accept: bool, text: str | None = None, *, by: str = "planner") -> ActionResult:
        """The `dialog(accept, text?)` action: answer the open dialog, or — when none is open — answer the
        next one this way (it must come within the next step)."""
        s = Action(name="dialog", accept=accept, text=text).to_string()
        d = self.target.dialogs
        if d.pending is not None:
            info = await d.answer(accept, text, by=by, reason="the dialog action")
            self.target.invalidate()
            return ActionResult(success=True, action=s, message=f"Answered {info.call()}: "
                                f"{info.answer.describe() if info.answer else ''}.", data={"dialog": info.model_dump()})
        d.arm(DialogAnswer(accept=accept, text=text, by="planner" if by == "planner" else "person",
                           reason="answered in advance"))
        return ActionResult(success=True, action=s, message="No dialog is open; the next confirm, prompt or "
                            f"beforeunload will be answered {'OK' if accept else 'Cancel'}.")

    async def act(self, action: Action, expect: OutcomeLike = None) -> ActionResult:
        """Run an `Action` (its target must be a node ID; resolve {role, name} queries first). A dialog the
        action raises and nobody decides does not hang it: the result says the dialog waits."""
        if action.name == "dialog":
            return await self.dialog(bool(action.accept), action.text)
        if action.name in ("switch_tab", "close_tab", "new_tab"):
            return ActionResult(success=False, action=action.to_string(), error_code=ErrorCode.BAD_ARGUMENT,
                                message=f"{action.name} acts on the browser's tabs, not on one page: run it "
                                        "through the loop or the Browser (switch_to, close_tab, new_tab).")
        if action.name == "upload":
            if not isinstance(action.target, str):
                return ActionResult(success=False, action=action.to_string(), error_code=ErrorCode.BAD_ARGUMENT,
                                    message="upload needs the ID of the file input (or its button) to act on.")
            run = self.upload(action.target, list(action.paths or []), expect=expect)
        else:
            run = self.actions.act(action, expect)
        return await self._acting(run, action.to_string(), action.node_id)

    async def _acting(self, run: Awaitable[ActionResult], label: str, node_id: str | None = None) -> ActionResult:
        try:
            return await self._unblocked(run)
        except DialogOpenError as exc:
            return ActionResult(success=True, action=label, node_id=node_id, error_code=ErrorCode.DIALOG_OPEN,
                                message=f"The action ran and the page raised a dialog that waits for an answer. "
                                        f"{exc.message}",
                                data={"dialog": self.pending_dialog.model_dump() if self.pending_dialog else None})

    @property
    def browser(self) -> Browser[Tab] | None:
        """The browser this tab belongs to (its other tabs, downloads), or None."""
        owner: Browser[Tab] | None = self.target.owner
        return owner

    @property
    def title(self) -> str:
        """The page's title as last read (`Browser.refresh_titles()` reads them all)."""
        return self.target.title

    def __repr__(self) -> str:
        return f"<Tab {self.target.url}>"


@contextlib.asynccontextmanager
async def launch(*, headless: bool = True, cdp_url: str | None = None, executable: str | None = None,
                 viewport: tuple[int, int] = DEFAULT_VIEWPORT, args: list[str] | None = None,
                 launch_timeout: float = 30.0) -> AsyncIterator[Browser[Tab]]:
    """`async with launch() as browser:` — a Chromium that Vigil drives; closed on exit.
    `browser.new_tab(url)` opens a `Tab`.

    With `cdp_url=` Vigil attaches to a browser that is already running (remote or pooled)
    and leaves it running afterwards."""
    b: Browser[Tab] = Browser(Tab)
    try:
        await b.start(headless=headless, cdp_url=cdp_url, executable=executable, viewport=viewport,
                      args=args, launch_timeout=launch_timeout)
        yield b
    finally:
        await b.close()
