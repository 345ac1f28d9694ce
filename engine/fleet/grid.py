"""Browsers asked of a Selenium Grid 4, one session per run: `GridClient` and its `GridLease`.

`POST {grid}/session` (W3C, Chromium options) gives a session whose `se:cdp` (`ws://HUB/session/ID/se/cdp`) the
run's `Browser` attaches to. A queued request (every slot busy) simply waits: the caller is told through
`on_waiting` ("waiting for a browser"), not timed out. While the run lives a keeper sends a cheap WebDriver
command (`GET /session/ID/url`) every few seconds — a grid ends a session with no command for its node's
`--session-timeout`, and a run waiting for its person sends none — and checks the DevTools socket with a short
CDP call, because the hub keeps CDP websockets open when a node dies. Either failing marks the session lost
(`on_lost`, naming the node and the session). `DELETE /session/ID` releases it when the lease ends: the run's end,
Ctrl+C/cancellation and a crash of the run alike (the lease is an async context manager)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx2 as httpx  # the HTTP client openai and mcp already bring (engine/mcp/probe.py uses it too)

from engine.browser.browser import Browser
from engine.errors import ErrorCode, VigilError
from engine.races import to_the_end
from engine.tab import Tab

log = logging.getLogger("vigil.fleet")
JSON_UTF8 = {"Content-Type": "application/json; charset=utf-8"}  # what the hub's POST /session accepts
KEEPALIVE_S = 5.0    # well inside any sane --session-timeout (Selenium's default is 300 s)
PROBE_S = 4.0        # a CDP or WebDriver call slower than this means the node is gone
QUEUE_S = 600.0      # how long a queued session request may wait for a free slot


NODE_GONE_TRIES = 30  # a hub keeps choosing a dead node until its health check (--healthcheck-interval) drops it


class GridError(VigilError):
    code = ErrorCode.LAUNCH_FAILED


class _NodeGone(GridError):
    """The hub sent our request to a node it could not reach."""


@dataclass
class GridSession:
    """One browser session of the grid: `id`, its DevTools URL `cdp`, and the node it runs on (when known)."""

    grid: str
    id: str
    cdp: str
    node: str | None = None

    def describe(self) -> str:
        return f"grid node {self.node or '(unknown)'}, session {self.id}"


def chromium_capabilities(headless: bool = True, tag: str = "") -> dict[str, Any]:
    """W3C capabilities for a Chromium session; `tag` (an extension capability nodes ignore) lets us find our
    own request in the grid's queue."""
    args = ["--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,800"]
    if headless:
        args.insert(0, "--headless=new")
    caps: dict[str, Any] = {"browserName": "chrome", "goog:chromeOptions": {"args": args}}
    if tag:
        caps["vigil:request"] = tag
    return {"capabilities": {"alwaysMatch": caps}}


async def is_selenium_grid(url: str, timeout: float = 5.0) -> bool:
    """Does `url` (http/https) answer as a Selenium Grid (`GET /status` with `value.ready`)? A ws:// URL or a
    plain DevTools endpoint (`/json/version`) is not one."""
    if not url.startswith(("http://", "https://")):
        return False
    try:
        async with httpx.AsyncClient(timeout=timeout) as c:
            r = await c.get(url.rstrip("/") + "/status")
            value = r.json().get("value") if r.status_code == 200 else None
    except (httpx.HTTPError, ValueError, OSError):
        return False
    return isinstance(value, dict) and "ready" in value


class GridClient:
    """A Selenium Grid 4 at `url` (`http://hub:4444`, or with a path prefix such as `…/wd/hub`)."""

    def __init__(self, url: str, *, headless: bool = True, keepalive: float = KEEPALIVE_S, probe: float = PROBE_S,
                 queue_timeout: float = QUEUE_S, launch_timeout: float = 30.0) -> None:
        self.url = url.rstrip("/")
        self.headless, self.keepalive, self.probe = headless, keepalive, probe
        self.queue_timeout, self.launch_timeout = queue_timeout, launch_timeout
        self.http = httpx.AsyncClient(timeout=probe)
        self.open: dict[str, GridSession] = {}   # sessions asked for and not yet deleted

    @property
    def label(self) -> str:
        """What runs and errors name it by."""
        return self.url

    async def status(self) -> dict[str, Any]:
        try:
            r = await self.http.get(self.url + "/status")
            value = r.json()["value"]
        except (httpx.HTTPError, ValueError, KeyError, OSError) as exc:
            raise GridError(f"The Selenium Grid at {self.url} does not answer ({exc or type(exc).__name__}).") from None
        return value if isinstance(value, dict) else {}

    async def sessions_on_grid(self) -> list[str]:
        """Every session the grid's nodes hold now (GET /status)."""
        nodes = (await self.status()).get("nodes") or []
        return [s["session"]["sessionId"] for n in nodes for s in n.get("slots") or [] if s.get("session")]

    async def graphql(self, query: str) -> dict[str, Any]:
        """The hub's GraphQL answer's `data` ({} when it has none: an older grid, a router without it)."""
        try:
            r = await self.http.post(self.url + "/graphql", json={"query": query})
            data = r.json().get("data") if r.status_code == 200 else None
        except (httpx.HTTPError, ValueError, OSError):
            return {}
        return data if isinstance(data, dict) else {}

    async def queued(self, tag: str) -> bool:
        """Is our request (tagged `tag`) in the grid's queue, waiting for a free slot?"""
        data = await self.graphql("{ sessionsInfo { sessionQueueRequests } }")
        return any(tag in str(q) for q in (data.get("sessionsInfo") or {}).get("sessionQueueRequests") or [])

    async def node_of(self, session_id: str) -> str | None:
        data = await self.graphql('{ session (id: "' + session_id.replace('"', "") + '") { nodeUri } }')
        if (data.get("session") or {}).get("nodeUri"):
            return str(data["session"]["nodeUri"])
        with contextlib.suppress(GridError):
            for n in (await self.status()).get("nodes") or []:
                for s in n.get("slots") or []:
                    if (s.get("session") or {}).get("sessionId") == session_id:
                        return str(n.get("uri") or n.get("id"))
        return None

    async def create(self, on_waiting: Callable[[], None] | None = None) -> GridSession:
        """Ask for a session; `on_waiting()` once, if the grid queues the request (no free slot for it): a wait
        said as such, not a timeout. A hub that sends the request to a node that just died (it lists the node
        until its health check drops it) answers "Connection error": asked again, a few times."""
        for attempt in range(NODE_GONE_TRIES):
            try:
                return await self._create(on_waiting)
            except _NodeGone as exc:
                log.info("grid %s: a session went to a node that is gone (%s); asking again", self.url, exc.message)
                if attempt == NODE_GONE_TRIES - 1:
                    raise GridError(exc.message + f" (asked {NODE_GONE_TRIES} times)") from None
                if attempt == 0 and on_waiting is not None:
                    on_waiting()   # the grid has no working slot for it yet: it waits for a browser
                await asyncio.sleep(1.0)
        raise AssertionError("unreachable")

    async def _create(self, on_waiting: Callable[[], None] | None) -> GridSession:
        tag = uuid.uuid4().hex
        body = json.dumps(chromium_capabilities(self.headless, tag)).encode()
        post = asyncio.ensure_future(self.http.post(self.url + "/session", content=body, headers=JSON_UTF8,
                                                    timeout=self.queue_timeout))
        try:
            while on_waiting is not None:
                done, _ = await asyncio.wait({post}, timeout=0.7)
                if done:
                    break
                if await self.queued(tag):
                    on_waiting()
                    break
        except BaseException:
            post.cancel()
            raise
        try:
            r = await post
            value = r.json().get("value") or {}
        except (httpx.HTTPError, ValueError, OSError) as exc:
            raise GridError(f"The Selenium Grid at {self.url} gave no session ({exc or type(exc).__name__}).") from None
        if r.status_code != 200 or "sessionId" not in value:
            why = value.get("message", r.text[:200]) if isinstance(value, dict) else r.text[:200]
            error = _NodeGone if r.status_code == 500 and "Connection error" in str(why) else GridError
            raise error(f"The Selenium Grid at {self.url} refused a session (HTTP {r.status_code}: "
                            f"{str(why).splitlines()[0] if why else ''}).")
        sid = value["sessionId"]
        cdp = (value.get("capabilities") or {}).get("se:cdp")
        s = GridSession(grid=self.url, id=sid, cdp=cdp or "")
        self.open[sid] = s
        if not cdp:
            await self.delete(s)
            raise GridError(f"The Selenium Grid at {self.url} gave session {sid} without se:cdp (is its node a "
                            "Chromium one, on Selenium 4?).")
        s.node = await self.node_of(sid)
        return s

    async def ping(self, s: GridSession) -> str | None:
        """None while the session answers its cheap WebDriver command (which also resets its idle timer), else
        why not."""
        try:
            r = await self.http.get(f"{self.url}/session/{s.id}/url")
        except (httpx.HTTPError, OSError) as exc:
            return f"no answer to GET /session/{s.id}/url ({type(exc).__name__})"
        if r.status_code == 200:
            return None
        try:
            msg = str((r.json().get("value") or {}).get("message", "")).splitlines()[0]
        except (ValueError, AttributeError, IndexError):
            msg = r.text[:120]
        return f"GET /session/{s.id}/url answered HTTP {r.status_code} {msg}".strip()

    async def delete(self, s: GridSession) -> None:
        self.open.pop(s.id, None)
        with contextlib.suppress(httpx.HTTPError, OSError):
            await self.http.delete(f"{self.url}/session/{s.id}", timeout=10)

    @contextlib.asynccontextmanager
    async def lease(self, *, on_waiting: Callable[[], None] | None = None,
                    on_lost: Callable[[GridSession, str], None] | None = None,
                    ) -> AsyncIterator[tuple[GridSession, Browser[Tab]]]:
        """A session and a `Browser` attached to it, kept alive while the block runs, released at its end
        however it ends. `on_lost(session, why)` once, when the session stops answering."""
        s = await self.create(on_waiting)
        browser: Browser[Tab] = Browser(Tab)
        keeper: asyncio.Task[None] | None = None
        try:
            await browser.start(headless=self.headless, cdp_url=s.cdp, executable=None, viewport=(1280, 800),
                                args=None, launch_timeout=self.launch_timeout)
            keeper = asyncio.ensure_future(self._keep(s, browser, on_lost))
            yield s, browser
        finally:  # (Ctrl+C cancels the run, and asyncio.run again as it shuts down: the session is deleted anyway)
            await to_the_end(lambda: end_lease(keeper, browser), lambda: self.delete(s))

    async def _keep(self, s: GridSession, browser: Browser[Tab],
                    on_lost: Callable[[GridSession, str], None] | None) -> None:
        async def check() -> str | None:
            return await self.ping(s) or await cdp_silent(browser, self.probe)
        await keep_checking(s, browser, check, self.keepalive, on_lost)

    async def close(self) -> None:
        """Delete what is still open (a safety net: each lease deletes its own) and close the HTTP client."""
        for s in list(self.open.values()):
            await self.delete(s)
        await self.http.aclose()


async def cdp_silent(browser: Browser[Tab], probe: float) -> str | None:
    """None while `browser` answers a cheap DevTools call within `probe` s, else why not (a hub or a browserless
    keeps the websocket open when the browser behind it dies: only a call with a timeout tells)."""
    cdp = browser._cdp
    if cdp is None or cdp.closed:
        return "its DevTools connection closed"
    try:
        await cdp.send("Browser.getVersion", timeout=probe)
    except Exception as exc:  # a timeout or a closed socket alike: the browser behind it is gone
        return f"its browser did not answer a DevTools call within {probe:g} s ({type(exc).__name__})"
    return None


async def end_lease(keeper: asyncio.Task[None] | None, browser: Browser[Tab]) -> None:
    """A lease's end, however it ends (a grid's and a browserless's alike): the keeper's watch stopped, then the
    browser closed (10 s at most; a browser already gone is not an error)."""
    if keeper is not None:
        keeper.cancel()
        with contextlib.suppress(BaseException):
            await keeper
    with contextlib.suppress(Exception):
        await asyncio.wait_for(browser.close(), 10)


async def cut_sockets(browser: Browser[Tab]) -> None:
    """Close a lost browser's sockets so the run's pending calls fail now rather than at their timeouts."""
    if browser._cdp is not None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(browser._cdp.close(), 3)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(browser.pw_browser.close(), 3)


async def keep_checking(s: GridSession, browser: Browser[Tab], check: Callable[[], Awaitable[str | None]],
                        every: float, on_lost: Callable[[GridSession, str], None] | None) -> None:
    """Every `every` s, `check()` (None while the session is sound, else why not); the first failure is told to
    `on_lost(s, why)`, the browser's sockets are cut, and the watch ends."""
    while True:
        await asyncio.sleep(every)
        why = await check()
        if why is None:
            continue
        log.warning("browser lost: %s: %s", s.describe(), why)
        if on_lost is not None:
            on_lost(s, why)
        await cut_sockets(browser)
        return
