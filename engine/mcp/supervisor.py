"""McpSupervisor: the browser tab one MCP client drives, and the supervised loop its steps run in.

One per client (`engine.mcp.clients.McpClients` keeps them, by MCP session): its own browser context of
the server's shared Chromium, its own tab, run and recorded session; the person's grants are the server
run's (`ServerGrants`, shared).

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

The parts: the tab and its browser context (`tabs`), a run (`runs`), the secrets typed so far and their
scrubbing (`known_secrets`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from engine.errors import VigilError
from engine.mcp.console import ConsoleLog
from engine.mcp.failure import ToolFailure
from engine.mcp.grants import ServerGrants
from engine.mcp.known_secrets import KnownSecrets
from engine.mcp.planner import StepOutcome, ToolCallPlanner
from engine.mcp.runs import ClientRun, new_loop
from engine.mcp.tabs import ClientTab, SharedChromium, TabHost
from engine.mcp.view import ClientView
from engine.models import Action, ApprovalRequest, ProposedStep
from engine.tab import Tab

if TYPE_CHECKING:
    from engine.loop.gates import ApprovalGate
    from engine.store import Store
    from engine.store.recorder import SessionRecorder

log = logging.getLogger("vigil.mcp")


@dataclass
class ClientInfo:
    name: str = "an MCP client"
    version: str = ""
    transport: str = "stdio"


class McpSupervisor:
    """One client's tab, loop, recorder and view of the page. Without `chromium`, it starts a Chromium of its
    own; without `grants`, the grants are its own server run's."""

    def __init__(self, *, policy: str, gate: ApprovalGate, url: str | None = None, headless: bool = True,
                 record: bool = True, executable: str | None = None, allow_files: bool = False,
                 viewport: tuple[int, int] = (1280, 800), host: TabHost | None = None,
                 upload_roots: Sequence[str | Path] = (), chromium: SharedChromium | None = None,
                 grants: ServerGrants | None = None, client: ClientInfo | None = None):
        self.policy, self.gate = policy, gate
        # folders browser_file_upload may send files from (resolved): under `auto` no person sees the files
        self.upload_roots = tuple(Path(r).expanduser().resolve() for r in upload_roots)
        self.host = host
        self.record, self.allow_files = record, allow_files
        self.client = client or ClientInfo()
        self.store_error: str | None = None
        self._lock = asyncio.Lock()
        # what was typed into secret fields, kept across browsers and runs of this client (memory only)
        self.known = KnownSecrets(self._typed)
        self._own_chromium = chromium is None
        self.chromium = chromium or SharedChromium(headless=headless, executable=executable, viewport=viewport)
        self.tabs = ClientTab(known=self.known, start_url=url, chromium=self.chromium)
        self._run: ClientRun | None = None
        self._store: Store | None = None
        self._recorder: SessionRecorder | None = None
        self.session_ids: list[str] = []
        # the person's grants (engine.store.grants): they last the server run (its run_id), for every client
        self._own_grants = grants is None
        self.grants = grants or ServerGrants()
        self.last_used = time.monotonic()
        # told "run_started" and "run_ended" with this supervisor (McpClients adds "joined" and "left")
        self.watchers: list[Callable[[str, McpSupervisor], None]] = []
        self.left_why: str | None = None  # why the server let the client go (it closed, idled, the server stopped)

    @property
    def run_id(self) -> str:
        return self.grants.run_id

    @property
    def run(self) -> ClientRun | None:
        """The client's run now (None before its first action and after it ended)."""
        return self._run

    def _tell(self, what: str) -> None:
        """Tell the watchers (a window that shows each client: `McpClients.subscribe`) what happened."""
        for fn in list(self.watchers):
            try:
                fn(what, self)
            except Exception:  # noqa: BLE001 - a watcher's bug must not stop the client's run
                log.exception("an MCP client watcher failed")

    @property
    def busy(self) -> bool:
        """A tool call of this client is under way."""
        return self._lock.locked()

    def used(self) -> None:
        self.last_used = time.monotonic()

    @property
    def view(self) -> ClientView:
        """What the client was last shown of the page (the next result says what changed since)."""
        return self.tabs.view

    @property
    def console(self) -> ConsoleLog:
        """The console messages of the tab the client drives."""
        return self.tabs.console

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

    # -- grants: the server run's, offered and given for this client's page and session --------------------
    def granted(self, action: Action, url: str) -> str | None:
        return self.grants.granted(action, url)

    def grant_offer(self, request: ApprovalRequest) -> str | None:
        return self.grants.offer(request, self.tabs.tab.url if self.tabs.tab is not None else None)

    def grant_for_request(self, request: ApprovalRequest) -> str:
        return self.grants.give(request, self.tabs.tab.url if self.tabs.tab is not None else None,
                                self.session_ids[-1] if self.session_ids else None)

    # -- the client ---------------------------------------------------------------------------------
    def seen_client(self, name: str | None, version: str | None = None, transport: str | None = None) -> None:
        """The client's name and version from the MCP handshake (the first one seen is kept)."""
        if name and self.client.name == ClientInfo.name:
            self.client.name, self.client.version = name, version or ""
        if transport:
            self.client.transport = transport

    def secrets(self) -> frozenset[str]:
        """Secret values typed since this server started (memory only): scrubbed from every text result."""
        return self.known.gather()

    def scrub(self, text: str) -> str:
        """`text` without any typed secret (`KnownSecrets.scrub`)."""
        return self.known.scrub(text)

    def _typed(self) -> Iterator[frozenset[str] | set[str]]:
        """The secret values the current browser and run hold."""
        if self.tabs.browser is not None:
            yield self.tabs.browser.secrets.raw()
        if self._run is not None:
            yield self._run.loop.journal.secrets

    # -- the tab --------------------------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def reading(self) -> AsyncIterator[Tab]:
        """The tab, for a tool that only reads it: no step runs meanwhile."""
        async with self._lock:
            try:
                await self._steps_done()
                yield await self._ensure_tab()
            finally:
                self.used()

    def _follow_run_tab(self) -> Tab | None:
        """The tab the run works on now, when a step opened, selected or closed a tab (or a popup closed
        itself): the reading tools follow it. None when unchanged."""
        run = self._run
        if run is None or not run.live:
            return None
        return self.tabs.follow(run.loop.page)

    async def _ensure_tab(self) -> Tab:
        followed = self._follow_run_tab()
        if followed is not None:
            return followed
        if self.host is not None:
            return await self.tabs.from_host(self.host)
        tab = self.tabs.usable()
        if tab is not None:
            return tab
        if self.tabs.tab is not None:
            await self._drop_tab("the tab crashed or was closed")
        return await self.tabs.open()

    # -- steps ------------------------------------------------------------------------------------------
    async def run_steps(self, proposals: list[ProposedStep], *, refs: Sequence[str] = ()) -> list[StepOutcome]:
        """Run the steps one after the other through the loop (each decided, run, verified and
        recorded); stops after the first that did not complete. `refs` are checked against the page
        first: an unknown one fails the call before anything runs."""
        async with self._lock:
            try:
                return await self._run_steps(proposals, refs)
            finally:
                self.used()

    async def _run_steps(self, proposals: list[ProposedStep], refs: Sequence[str]) -> list[StepOutcome]:
        for p in proposals:  # each step says which client asked for it (in the store, the window, the report)
            p.details.setdefault("mcp", {})["client"] = self.client.name
        await self._steps_done()
        tab = await self._ensure_tab()
        if refs:
            await self._check_refs(tab, refs)
        outcomes: list[StepOutcome] = []
        for p in proposals:
            planner = await self._ensure_run(tab)
            out = await planner.submit(p)
            tab = self._follow_run_tab() or tab
            if out.snapshot is None or out.status == "ended":
                out.snapshot = await self.tabs.snapshot_or_none()
            outcomes.append(out)
            if out.status not in ("completed", "taken_over"):
                break
        return outcomes

    async def _steps_done(self) -> None:
        """Wait for a step whose tool call was cancelled (it still runs to its end)."""
        if self._run is not None:
            await self._run.steps_done()

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

    async def _ensure_run(self, tab: Tab) -> ToolCallPlanner:
        if self._run is not None and self._run.live:
            return self._run.planner
        loop, planner = new_loop(tab, gate=self.gate, policy=self.policy, grants=self.granted,
                                 hosted=self.host is not None)
        task = f"MCP session with {self.client.name}"
        recorder = self._session_recorder()
        if recorder is not None:
            meta = {"mcp": {"client": self.client.name, "clientVersion": self.client.version,
                            "transport": self.client.transport, "run": self.run_id}}
            sid = recorder.start(loop, task, tab.url, planner="mcp", policy=self.policy, metadata=meta)
            if sid and sid not in self.session_ids:
                self.session_ids.append(sid)
                self.grants.attach_session(sid)
            if recorder.error:
                self._store_failed(recorder.error)
        run = self._run = ClientRun(loop, planner, recorder, task, host=self.host, store_failed=self._store_failed,
                                    ended=lambda result: self._tell("run_ended"))
        if self.host is not None:
            self.host.mcp_run_started(loop, planner, run.task)
        self._tell("run_started")
        return planner

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
            await self.tabs.close_browser()  # this client's context; the shared Chromium stays
            return out

    async def aclose(self, why: str = "The MCP client disconnected.") -> None:
        """Shut down (the client went away, or the server stops): end the run, store it, close the context."""
        async with self._lock:
            await self._end_run(why, ask_ok=False)
            if self._own_grants:  # grants shared by several clients end with the server run, not with one client
                self.grants.end()
            if self.host is not None:  # the host's tab, browser and store are the host's to close
                self._forget_run()
                return
            await self._drop_tab(None)
            await self.tabs.close_browser()
            if self._own_chromium:
                await self.chromium.close()
            if self._store is not None:
                with contextlib.suppress(Exception):
                    self._store.close()
            self._store = None

    async def _end_run(self, reason: str, *, ask_ok: bool) -> StepOutcome | None:
        """End the run with a `finish` step — unless it must not ask (`ask_ok` False) and the policy asks
        a person — then stop it; None when no run was going."""
        if self._run is None:
            return None
        return await self._run.end(reason, finish=ask_ok or self.policy != "ask")

    def _forget_run(self) -> None:
        self.known.gather()  # keep what was typed
        self._run = None
        recorder = self._session_recorder()
        if recorder is not None:
            recorder.new_session()
        self.tabs.view.forget()

    async def _drop_tab(self, why: str | None) -> None:
        """Forget the tab (closing it when it is still open); its session ends with it."""
        self.known.gather()  # keep what was typed in it
        if self._run is not None and self._run.live:
            await self._run.stop()
        self._run = None
        if self._recorder is not None:
            self._recorder.new_session()
        await self.tabs.drop(why)


def _short(url: str, n: int = 80) -> str:
    return url if len(url) <= n else url[: n - 1] + "…"
