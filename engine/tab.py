"""`Tab`, the public face of one controlled page, and `launch()`.

A Tab puts the layers together and delegates to them in one line each: `PageTarget` (the CDP
plumbing, navigation and size: `engine.browser.target`), `SnapshotCache` (snapshots, reused until
the page changes: `engine.snapshot.cache`) and `PageActions` (actions on node IDs with
verification: `engine.actions.page_actions`). It is also what the observe–act loop drives
(`engine.loop.driver.PageDriver`)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from engine.actions.page_actions import PageActions
from engine.browser.browser import DEFAULT_VIEWPORT, Browser
from engine.browser.cdp import CDPConnection
from engine.browser.network import NetworkMonitor
from engine.browser.target import FrameTarget, PageTarget
from engine.models import Action, ActionResult, OutcomeLike, PageEvent
from engine.observe.stability import StabilityConfig, StabilityResult
from engine.snapshot.cache import SnapshotCache
from engine.snapshot.dom_snapshot import DomSnapshot
from engine.vision.screenshot import Screenshot, capture_screenshot


class Tab:
    """One controlled page. Snapshots are cached until navigation, a document update or an action."""

    def __init__(self, target: PageTarget) -> None:
        self.target = target
        self.snapshots = SnapshotCache(target)
        self.actions = PageActions(target, self.snapshots)

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
        """The current snapshot: reused while nothing changed in the page, else captured afresh."""
        return await self.snapshots.snapshot(force=force, max_nodes=max_nodes, timeout=timeout)

    @property
    def latest_snapshot(self) -> DomSnapshot | None:
        """The last snapshot taken of this tab (by anyone: the loop, an action), without taking one."""
        return self.snapshots.latest

    async def screenshot(self, *, max_width: int = 1024, quality: int = 70, full: bool = False) -> Screenshot:
        """The viewport as a JPEG payload with its perceptual hash (secrets painted over)."""
        return await capture_screenshot(self.target, max_width=max_width, quality=quality, full=full)

    def remember_secret(self, value: str) -> None:
        """A secret typed into this browser: painted over in every picture from now on."""
        self.target.secrets.add(value)

    async def wait_stable(self, config: StabilityConfig | None = None, *,
                          since: float | None = None) -> StabilityResult:
        """Wait until no DOM mutation for 300 ms and no network for 500 ms (capped at 3 s)."""
        return await self.actions.wait_stable(config, since=since)

    async def recent_events(self, max_age_ms: int = 10_000) -> list[PageEvent]:
        """The mutation stream: meaningful page changes (toasts, errors, …) from every frame."""
        return await self.actions.recent_events(max_age_ms)

    # -- actions (see engine.actions.page_actions) --------------------------------------------------
    async def click(self, node_id: str, *, force: bool = False, expect: OutcomeLike = None) -> ActionResult:
        return await self.actions.click(node_id, force=force, expect=expect)

    async def double_click(self, node_id: str, *, force: bool = False, expect: OutcomeLike = None) -> ActionResult:
        return await self.actions.double_click(node_id, force=force, expect=expect)

    async def hover(self, node_id: str, *, force: bool = False, expect: OutcomeLike = None) -> ActionResult:
        return await self.actions.hover(node_id, force=force, expect=expect)

    async def type(self, node_id: str, text: str, *, clear: bool = True, submit: bool = False,
                   expect: OutcomeLike = None) -> ActionResult:
        return await self.actions.type(node_id, text, clear=clear, submit=submit, expect=expect)

    async def press(self, key: str, node_id: str | None = None, *, repeat: int = 1,
                    expect: OutcomeLike = None) -> ActionResult:
        return await self.actions.press(key, node_id, repeat=repeat, expect=expect)

    async def select(self, node_id: str, option: str, *, expect: OutcomeLike = None) -> ActionResult:
        return await self.actions.select(node_id, option, expect=expect)

    async def check(self, node_id: str, *, expect: OutcomeLike = None) -> ActionResult:
        return await self.actions.check(node_id, expect=expect)

    async def uncheck(self, node_id: str, *, expect: OutcomeLike = None) -> ActionResult:
        return await self.actions.uncheck(node_id, expect=expect)

    async def scroll(self, node_id: str | None = None, direction: str = "down", amount: int | None = None, *,
                     expect: OutcomeLike = None) -> ActionResult:
        return await self.actions.scroll(node_id, direction, amount, expect=expect)

    async def navigate(self, url: str, *, expect: OutcomeLike = None, timeout: float = 30.0) -> ActionResult:
        return await self.actions.navigate(url, expect=expect, timeout=timeout)

    async def back(self, *, expect: OutcomeLike = None, timeout: float = 30.0) -> ActionResult:
        return await self.actions.back(expect=expect, timeout=timeout)

    async def wait(self, ms: int, *, expect: OutcomeLike = None) -> ActionResult:
        return await self.actions.wait(ms, expect=expect)

    async def act(self, action: Action, expect: OutcomeLike = None) -> ActionResult:
        """Run an `Action` (its target must be a node ID; resolve {role, name} queries first)."""
        return await self.actions.act(action, expect)

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
