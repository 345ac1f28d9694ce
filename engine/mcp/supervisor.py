"""McpSupervisor: the browser tab an MCP client drives, and the supervised loop its steps run in.

One tab, one `AgentLoop` run at a time. Each action tool call is handed to the loop as one step
(`ToolCallPlanner`), so grounding, the policy, the approval gate, acting, verification and recording
all come from the loop. Tools that only read the page (snapshot, find, screenshot …) read the tab
directly, but only while no step is under way: every tool call holds one lock from start to
answer, and a step's answer comes when the loop is parked waiting for the next one.

The first action starts a run (and a recorded session: planner `mcp`, the client's name from the
MCP handshake); a run that ends (a crashed tab, a person's stop) is followed by a new run in the
same session at the next action; `close()` (browser_close) ends the run and the session, and the
next tool call opens a fresh tab. The browser starts at the first tool call that needs it.

A host that owns the tab (the supervisor window: `vigil gui --mcp`) passes itself as `host`
(`TabHost`): the server then drives the host's tab, records with the host's recorder, tells the
host about each run it starts and ends (so its approval bar, chat and Stop serve the run), and
never opens or closes a browser or a tab of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import urllib.parse
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from engine.errors import VigilError
from engine.loop.redact import MASK, scrub_known
from engine.mcp.console import ConsoleLog
from engine.mcp.grants import RunGrants
from engine.mcp.planner import StepOutcome, ToolCallPlanner
from engine.mcp.view import ClientView
from engine.models import Action, ApprovalRequest, ProposedStep
from engine.secret_values import MIN_SECRET_LEN
from engine.tab import Tab

if TYPE_CHECKING:
    from engine.browser.browser import Browser
    from engine.loop.gates import ApprovalGate
    from engine.loop.runner import AgentLoop
    from engine.models import RunResult
    from engine.store import Store
    from engine.store.recorder import SessionRecorder

log = logging.getLogger("vigil.mcp")

MAX_STEPS = 1_000_000          # a client's session has no step limit of its own; each call is one cycle
TARGET_TIMEOUT_MS = 2000       # how long a step waits for its (already checked) ref to be there
END_TIMEOUT_S = 10.0           # how long closing waits for the run to end before cancelling it


class ToolFailure(Exception):
    """A tool call that cannot go ahead: a clear message for the client, with a stable code."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


@dataclass
class ClientInfo:
    name: str = "an MCP client"
    version: str = ""
    transport: str = "stdio"


def mcp_url(url: str, *, allow_files: bool = False) -> str:
    """A URL a client may open: http(s) (a bare host gets http://), about:blank, and file URLs only
    when the server allows them. Local paths are never looked up (the client is not on this machine's
    file system, and checking would tell it which files exist)."""
    u = (url or "").strip()
    if not u:
        raise ToolFailure("BAD_URL", "No URL given: pass an http(s) URL such as https://example.com/.")
    if u == "about:blank":
        return u
    scheme = urllib.parse.urlsplit(u).scheme.lower() if "://" in u else ""
    if not scheme:
        host = u.split("/")[0]
        if host and " " not in u and ("." in host or host.startswith("localhost")):
            return "http://" + u
        raise ToolFailure("BAD_URL", f"{u!r} is not a URL: give a full one such as https://example.com/.")
    if scheme in ("http", "https"):
        return u
    if scheme == "file":
        if allow_files:
            return u
        raise ToolFailure("BAD_URL", "file:// URLs are blocked: this server was started without --allow-file-urls "
                                     "(a page opened from disk could show the agent any local file).")
    raise ToolFailure("BAD_URL", f"Cannot open {u!r}: only http, https and about:blank URLs are allowed.")


class TabHost(Protocol):
    """What a host that owns the tab gives the server (see the module docstring)."""

    @property
    def recorder(self) -> SessionRecorder | None: ...

    async def mcp_tab(self) -> Tab:
        """The tab to drive now; ToolFailure when it cannot be driven (the person runs a task in it …)."""
        ...

    def mcp_run_started(self, loop: AgentLoop, planner: ToolCallPlanner, task: asyncio.Task) -> None: ...

    def mcp_run_ended(self, result: RunResult) -> None: ...


class McpSupervisor(RunGrants):
    """The tab, the loop, the recorder and the client's view behind an MCP server."""

    def __init__(self, *, policy: str, gate: ApprovalGate, url: str | None = None, headless: bool = True,
                 record: bool = True, executable: str | None = None, allow_files: bool = False,
                 viewport: tuple[int, int] = (1280, 800), host: TabHost | None = None,
                 upload_roots: Sequence[str | Path] = ()):
        self.policy, self.gate, self.start_url = policy, gate, url
        # folders browser_file_upload may send files from (resolved): under `auto` no person sees the files
        self.upload_roots = tuple(Path(r).expanduser().resolve() for r in upload_roots)
        self.host = host
        self.headless, self.record, self.executable = headless, record, executable
        self.allow_files, self.viewport = allow_files, viewport
        self.client = ClientInfo()
        self.view = ClientView()
        self.console = ConsoleLog()
        self.store_error: str | None = None
        self._lock = asyncio.Lock()
        self._stack: contextlib.AsyncExitStack | None = None
        self._browser: Browser | None = None
        self._tab: Tab | None = None
        self._store: Store | None = None
        self._recorder: SessionRecorder | None = None
        self._planner: ToolCallPlanner | None = None
        self._loop: AgentLoop | None = None
        self._run_task: asyncio.Task | None = None
        self.session_ids: list[str] = []
        self._known_secrets: set[str] = set()  # kept across browsers and runs of this server (memory only)
        # the store the person's grants are kept in (engine.store.grants); they last this server run (run_id)
        self._grant_store: Store | None = None
        from engine.store.grants import new_run_id
        self.run_id = new_run_id()

    def grant_offer(self, request: ApprovalRequest) -> str | None:
        """What the person may grant at the terminal prompt for this request ("Allow clicks on example.com
        for this session"), or None: a page's dialog, an action no grant covers, a page without a site."""
        from engine.store.grants import KIND_WORDS, kind_of, site_of_url

        if request.dialog is not None or self._tab is None:
            return None
        kind, site = kind_of(request.proposal.action.name), site_of_url(self._tab.url)
        return f"Allow {KIND_WORDS[kind]} on {site} for this session" if kind and site else None

    def grant_for_request(self, request: ApprovalRequest) -> str:
        """Give the grant `grant_offer` offered; what was granted, in words. VigilError when it cannot be kept."""
        from engine.store.grants import kind_of

        kind = kind_of(request.proposal.action.name)
        if kind is None or self._tab is None:
            raise VigilError("No grant covers this step.")
        try:
            g = self.grant(kind, self._tab.url)
        except ToolFailure as exc:
            raise VigilError(exc.message) from None
        return f"#{g.id} {g.describe()}, until this session ends"

    def upload_problem(self, paths: Sequence[str]) -> str | None:
        """Why these files may not be sent, or None. With --upload-from folders, every file (links
        followed) must lie inside one; without them, only a person may let files go (not under `auto`)."""
        if not self.upload_roots:
            if self.policy == "auto":
                return ("Under --approve auto no person sees which files leave this machine, so this server sends "
                        "files only from the folders named with --upload-from DIR (none were). Restart it with "
                        "--upload-from, or use --approve ask. Nothing ran.")
            return None
        for p in paths:
            real = Path(p).expanduser().resolve()
            if not any(real == r or r in real.parents for r in self.upload_roots):
                where = ", ".join(str(r) for r in self.upload_roots)
                shown = p if str(real) == p else f"{p} (which is {real})"
                return (f"{shown} is outside the folders this server may send files from ({where}: --upload-from). "
                        "Copy it there, or restart the server with another --upload-from. Nothing ran.")
        return None

    # -- the client ---------------------------------------------------------------------------------
    def seen_client(self, name: str | None, version: str | None = None, transport: str | None = None) -> None:
        """The client's name and version from the MCP handshake (the first one seen is kept)."""
        if name and self.client.name == ClientInfo.name:
            self.client.name, self.client.version = name, version or ""
        if transport:
            self.client.transport = transport

    def secrets(self) -> frozenset[str]:
        """Secret values typed since this server started (memory only): scrubbed from every text result."""
        if self._browser is not None:
            self._known_secrets |= set(self._browser.secrets.raw())
        if self._loop is not None:
            self._known_secrets |= set(self._loop.journal.secrets)
        return frozenset(self._known_secrets)

    def scrub(self, text: str) -> str:
        """`text` without any typed secret: its known forms, and any of its prefixes of 4 characters or
        more (the engine types key by key, so a page that echoes the field shows every prefix)."""
        found = self.secrets()
        if not found:
            return text
        text = scrub_known(text, set(found))
        for secret in sorted(found, key=len, reverse=True):
            for k in range(len(secret) - 1, MIN_SECRET_LEN - 1, -1):
                if secret[:k] in text:
                    text = text.replace(secret[:k], MASK)
        return text

    # -- the tab --------------------------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def reading(self) -> AsyncIterator[Tab]:
        """The tab, for a tool that only reads it: no step runs meanwhile."""
        async with self._lock:
            await self._steps_done()
            yield await self._ensure_tab()

    def _follow_loop_tab(self) -> Tab | None:
        """The tab the run works on now, when a step opened, selected or closed a tab (or a popup closed
        itself): the reading tools follow it, with its console and a fresh view. None when unchanged."""
        loop, task = self._loop, self._run_task
        if loop is None or task is None or task.done():
            return None
        page = loop.page
        if page is self._tab or not isinstance(page, Tab) or page.closed or not _alive(page):
            return None
        self._tab = page
        self.console = ConsoleLog()
        self.console.attach(page.page)
        self.view.forget()
        return page

    async def _ensure_tab(self) -> Tab:
        followed = self._follow_loop_tab()
        if followed is not None:
            return followed
        if self.host is not None:
            return await self._host_tab(self.host)
        tab = self._tab
        if tab is not None and not tab.closed and _alive(tab):
            return tab
        if tab is not None:
            await self._drop_tab("the tab crashed or was closed")
        for attempt in (1, 2):  # a browser that went away (closed by hand, crashed) is started again once
            if self._browser is None or not _browser_alive(self._browser):
                await self._launch()
            assert self._browser is not None  # _launch() starts one or raises
            try:
                tab = self._tab = await self._browser.new_tab()
                break
            except VigilError as exc:
                await self._close_browser()
                if attempt == 2:
                    raise ToolFailure(exc.code, f"Could not open a tab: {exc.message}") from None
        assert tab is not None  # the loop above opened one or raised
        self.console = ConsoleLog()
        self.console.attach(tab.page)
        self.view.forget()
        if self.start_url:
            url, self.start_url = self.start_url, None  # the start page is opened once
            try:
                await tab.goto(url)
            except VigilError as exc:
                log.warning("the start page %s could not be opened: %s", url, exc.message)
        return tab

    async def _host_tab(self, host: TabHost) -> Tab:
        tab = await host.mcp_tab()
        if tab is not self._tab:  # the host's tab (a new one after a restart): its console, a fresh view
            self._tab = tab
            self.console = ConsoleLog()
            self.console.attach(tab.page)
            self.view.forget()
        if self.start_url:
            url, self.start_url = self.start_url, None
            try:
                await tab.goto(url)
            except VigilError as exc:
                log.warning("the start page %s could not be opened: %s", url, exc.message)
        return tab

    async def _launch(self) -> None:
        await self._close_browser()
        from engine import launch
        from engine.vision.screenshot import warm_hashing

        warm_hashing()  # while the browser starts: the first step's picture does not wait for its libraries
        self._stack = contextlib.AsyncExitStack()
        try:
            browser = await self._stack.enter_async_context(
                launch(headless=self.headless, executable=self.executable, viewport=self.viewport))
            self._browser = browser
        except VigilError as exc:
            await self._close_browser()
            raise ToolFailure(exc.code, f"The browser could not start: {exc.message}") from None
        browser.secrets.update(self._known_secrets)  # its pictures mask what was typed before, too

    # -- steps ------------------------------------------------------------------------------------------
    async def run_steps(self, proposals: list[ProposedStep], *, refs: Sequence[str] = ()) -> list[StepOutcome]:
        """Run the steps one after the other through the loop (each decided, run, verified and
        recorded); stops after the first that did not complete. `refs` are checked against the page
        first: an unknown one fails the call before anything runs."""
        async with self._lock:
            await self._steps_done()
            tab = await self._ensure_tab()
            if refs:
                await self._check_refs(tab, refs)
            outcomes: list[StepOutcome] = []
            for p in proposals:
                planner = await self._ensure_run(tab)
                out = await planner.submit(p)
                tab = self._follow_loop_tab() or tab
                if out.snapshot is None or out.status == "ended":
                    out.snapshot = await self._snapshot_or_none()
                outcomes.append(out)
                if out.status not in ("completed", "taken_over"):
                    break
            return outcomes

    async def _steps_done(self) -> None:
        """Wait for a step whose tool call was cancelled (it still runs to its end)."""
        if self._planner is not None and self._run_task is not None and not self._run_task.done():
            await self._planner.wait_idle()

    async def _check_refs(self, tab: Tab, refs: Sequence[str]) -> None:
        try:
            snap = await tab.snapshot()
        except VigilError as exc:
            raise ToolFailure(exc.code, f"Could not read the page to check the ref: {exc.message}") from None
        for ref in refs:
            if str(ref).strip() not in snap.node_map:
                raise ToolFailure("NOT_FOUND", f"No element with ref {str(ref)!r} on this page ({_short(snap.url)}). "
                                               "Refs are the `i` values of browser_snapshot and browser_find; the page "
                                               "may have changed — take a new snapshot. Nothing ran.")

    async def _snapshot_or_none(self):
        tab = self._tab
        if tab is None or tab.closed or not _alive(tab):
            return None
        try:
            return await tab.snapshot()
        except VigilError:
            return None

    async def _ensure_run(self, tab: Tab) -> ToolCallPlanner:
        if self._run_task is not None and not self._run_task.done() and self._planner is not None:
            return self._planner
        from engine.loop.runner import AgentLoop

        planner = ToolCallPlanner()
        loop = AgentLoop(tab, planner, gate=self.gate, policy=self.policy, max_steps=MAX_STEPS,
                         target_timeout_ms=TARGET_TIMEOUT_MS, artifacts=self.host is not None)
        loop.grants = self.granted
        task = f"MCP session with {self.client.name}"
        recorder = self._session_recorder()
        if recorder is not None:
            meta = {"mcp": {"client": self.client.name, "clientVersion": self.client.version,
                            "transport": self.client.transport, "run": self.run_id}}
            sid = recorder.start(loop, task, tab.url, planner="mcp", policy=self.policy, metadata=meta)
            if sid and sid not in self.session_ids:
                self.session_ids.append(sid)
                self._attach_grants(sid)
            if recorder.error:
                self._store_failed(recorder.error)
        self._planner, self._loop = planner, loop
        self._run_task = asyncio.create_task(self._run(loop, planner, recorder, task), name="vigil-mcp-run")
        if self.host is not None:
            self.host.mcp_run_started(loop, planner, self._run_task)
        return planner

    async def _run(self, loop: AgentLoop, planner: ToolCallPlanner, recorder, task: str) -> None:
        from engine.models import RunResult

        result = RunResult(task=task, status="interrupted", reason="The run was cancelled.")
        try:
            result = await loop.run(task)
        finally:  # the store first, then the client: an answered step is always a stored one
            if recorder is not None:
                recorder.finish(result)
                if recorder.error:
                    self._store_failed(recorder.error)
            planner.run_ended(result)
            if self.host is not None:
                self.host.mcp_run_ended(result)

    def _session_recorder(self) -> SessionRecorder | None:
        if self.host is not None:
            return self.host.recorder if self.record else None
        if not self.record or self.store_error:
            return None
        if self._recorder is None:
            from engine.store import Store
            from engine.store.recorder import SessionRecorder
            if self._store is None:
                try:
                    self._store = Store.open()
                except VigilError as exc:
                    self._store_failed(f"This session is not being recorded: {exc.message}")
                    return None
            self._recorder = SessionRecorder(self._store)
        return self._recorder

    def _store_failed(self, message: str) -> None:
        if self.store_error is None:
            log.error("%s", message)
        self.store_error = message

    # -- ending ---------------------------------------------------------------------------------------
    async def close(self, reason: str = "The client closed the browser.") -> StepOutcome | None:
        """browser_close: end the run (a `finish` step, recorded), close the tab and the browser; the
        next tool call opens a new tab and a new session."""
        async with self._lock:
            await self._steps_done()
            out = await self._end_run(reason, ask_ok=True)
            if self.host is not None:  # the host's tab stays open; the next action starts a new session in it
                self._forget_run()
                return out
            await self._drop_tab(None)
            await self._close_browser()
            return out

    async def aclose(self) -> None:
        """Shut down (the client went away): end the run, store it, close the browser."""
        async with self._lock:
            await self._end_run("The MCP client disconnected.", ask_ok=False)
            self._end_grants()
            if self.host is not None:  # the host's tab, browser and store are the host's to close
                self._forget_run()
                if self._grant_store is not None:
                    with contextlib.suppress(Exception):
                        self._grant_store.close()
                    self._grant_store = None
                return
            await self._drop_tab(None)
            await self._close_browser()
            for store in {id(s): s for s in (self._store, self._grant_store) if s is not None}.values():
                with contextlib.suppress(Exception):
                    store.close()
            self._store = self._grant_store = None

    async def _end_run(self, reason: str, *, ask_ok: bool) -> StepOutcome | None:
        task, planner, loop = self._run_task, self._planner, self._loop
        if task is None or task.done() or planner is None or loop is None:
            return None
        out = None
        if (ask_ok or self.policy != "ask") and not planner.pending:
            finish = ProposedStep(thought=reason, description="End the MCP session",
                                  action=Action(name="finish", answer=reason))
            try:
                out = await asyncio.wait_for(planner.submit(finish), END_TIMEOUT_S)
            except TimeoutError:
                log.warning("the run did not end within %.0f s; stopping it", END_TIMEOUT_S)
        if not task.done():
            loop.stop()
            try:
                await asyncio.wait_for(asyncio.shield(task), END_TIMEOUT_S)
            except TimeoutError:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        return out

    def _forget_run(self) -> None:
        self.secrets()  # keep what was typed
        self._run_task = self._planner = self._loop = None
        recorder = self._session_recorder()
        if recorder is not None:
            recorder.new_session()
        self.view.forget()

    async def _drop_tab(self, why: str | None) -> None:
        """Forget the tab (closing it when it is still open); its session ends with it."""
        self.secrets()  # keep what was typed in it
        if self._run_task is not None and not self._run_task.done() and self._loop is not None:
            self._loop.stop()
            await asyncio.gather(self._run_task, return_exceptions=True)
        self._run_task = self._planner = self._loop = None
        if self._recorder is not None:
            self._recorder.new_session()
        tab, self._tab = self._tab, None
        self.view.forget()
        if tab is not None and not tab.closed:
            with contextlib.suppress(Exception):
                await tab.close()
        if why:
            log.info("%s; a new tab is opened", why)

    async def _close_browser(self) -> None:
        self.secrets()  # keep what was typed in it
        stack, self._stack, self._browser = self._stack, None, None
        if stack is not None:
            with contextlib.suppress(Exception):
                await stack.aclose()


def _alive(tab: Tab) -> bool:
    try:
        tab.check_alive()
        return True
    except VigilError:
        return False


def _browser_alive(browser: Browser) -> bool:
    pw = getattr(browser, "pw_browser", None)
    try:
        return pw is None or bool(pw.is_connected())
    except Exception:  # noqa: BLE001
        return False


def _short(url: str, n: int = 80) -> str:
    return url if len(url) <= n else url[: n - 1] + "…"
