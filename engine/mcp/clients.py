"""Every client of one MCP server run, each with a supervisor of its own, found by its MCP session.

Over streamable HTTP each client session (`mcp-session-id`) gets its own `McpSupervisor`: a browser
context of the server's one Chromium (cookies apart), its own tab, run and recorded session named after
the client's `clientInfo`, its steps tagged with the client. Different clients' calls run at once; a
client's tools only ever see its own tabs. Over stdio there is one client. What is shared: the Chromium
process, the person's grants (they are the server run's) and the person — a question waits its turn
while another client's question is open (`PersonGate`).

The limits, and what a client gets beyond them:
- `max_clients` (8 unless `--max-clients`) clients hold a tab at once; the next client's tool calls get
  `BUSY` naming the limit until one leaves (its session is deleted, or idles out).
- A client session idle for `IDLE_S` (10 minutes, nothing in flight) is ended: its run is recorded and
  its context closed; the SDK forgets the session at the same time, so its next call is answered 404
  (the SDK's client then opens a new session).
- At most `MAX_SESSIONS` MCP sessions are open at once, tab or not (the SDK answers a new one 503).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.mcp.failure import ToolFailure
from engine.mcp.grants import ServerGrants
from engine.mcp.supervisor import ClientInfo, McpSupervisor
from engine.mcp.tabs import SharedChromium

if TYPE_CHECKING:
    from engine.loop.gates import ApprovalGate
    from engine.mcp.tabs import TabHost
    from engine.models import ApprovalRequest, Decision

log = logging.getLogger("vigil.mcp")

MAX_CLIENTS = 8
MAX_SESSIONS = 64
IDLE_S = 600.0
REAP_EVERY_S = 30.0
STDIO = "stdio"


class PersonGate:
    """The server's gate as one client's steps reach it: the person answers one question at a time (a second
    client's question waits its turn), and at a terminal is told which client asks and offered grants for
    that client's page."""

    def __init__(self, gate: ApprovalGate, sup: McpSupervisor, turn: asyncio.Lock) -> None:
        self.gate, self.sup, self.turn = gate, sup, turn

    @property
    def person_present(self) -> bool:
        return bool(getattr(self.gate, "person_present", True))

    async def decide(self, request: ApprovalRequest) -> Decision:
        from engine.loop.gates import TerminalGate

        async with self.turn:
            if isinstance(self.gate, TerminalGate):
                print(f"\n— asked by {self.sup.client.name} (its own tab, session of its own):", file=self.gate.out,
                      flush=True)
                self.gate.grant_offer, self.gate.grant_give = self.sup.grant_offer, self.sup.grant_for_request
            return await self.gate.decide(request)


class McpClients:
    """The supervisors of one server run's clients (see the module docstring), made with these settings."""

    def __init__(self, *, policy: str, gate: ApprovalGate, url: str | None = None, headless: bool = True,
                 record: bool = True, executable: str | None = None, allow_files: bool = False,
                 viewport: tuple[int, int] = (1280, 800), host: TabHost | None = None,
                 upload_roots: Sequence[str | Path] = (), transport: str = STDIO,
                 max_clients: int = MAX_CLIENTS, idle_s: float = IDLE_S) -> None:
        self.policy, self.gate, self.host, self.transport = policy, gate, host, transport
        self.url, self.record, self.allow_files, self.upload_roots = url, record, allow_files, tuple(upload_roots)
        # a window hosts one tab: it serves one client at a time
        self.max_clients = 1 if host is not None else max_clients
        self.idle_s = idle_s
        self.grants = ServerGrants()
        self.chromium = SharedChromium(headless=headless, executable=executable, viewport=viewport)
        self._turn = asyncio.Lock()
        self._live: dict[str, McpSupervisor] = {}
        # what is kept of the clients let go (not their supervisors: a long-lived server sees many come and go)
        self._names: collections.Counter[str] = collections.Counter()  # clients seen, by their own name
        self._kept: list[str] = []           # the sessions they recorded
        self._store_errors: list[str] = []
        self._reaper: asyncio.Task | None = None
        self._closing: set[asyncio.Task] = set()
        self._watchers: list[Callable[[str, McpSupervisor], None]] = []
        self._joined = 0
        # a window that answers each client's questions in its own queue gives the gate of each client (by
        # the order they came in); else the server's gate, one question at a time (PersonGate)
        self.gate_for: Callable[[McpSupervisor, int], ApprovalGate] | None = None

    @property
    def run_id(self) -> str:
        return self.grants.run_id

    # -- finding a client's supervisor ------------------------------------------------------------------------
    def of(self, ctx: Any) -> McpSupervisor:
        """The supervisor of the client this tool call came from (made at its first call). ToolFailure BUSY
        when `max_clients` others are being served."""
        key = session_key(ctx)
        sup = self._live.get(key)
        if sup is None:
            if len(self._live) >= self.max_clients:
                raise ToolFailure("BUSY", self._busy_message())
            info = client_info(ctx, self.transport)
            self._names[info.name] += 1
            if self._names[info.name] > 1:  # two clients of one name are told apart in the window, at the
                info.name = f"{info.name} #{self._names[info.name]}"  # terminal and in the store
            sup = self._live[key] = self._make(info)
            self._start_reaper()
        sup.used()
        return sup

    def peek(self, ctx: Any) -> McpSupervisor | None:
        """The supervisor of this call's client, when it has one (nothing is made)."""
        return self._live.get(session_key(ctx))

    def _make(self, client: ClientInfo) -> McpSupervisor:
        sup = McpSupervisor(policy=self.policy, gate=self.gate, url=self.url, record=self.record,
                            allow_files=self.allow_files, host=self.host, upload_roots=self.upload_roots,
                            chromium=self.chromium, grants=self.grants, client=client)
        sup.gate = (self.gate_for(sup, self._joined) if self.gate_for is not None
                    else PersonGate(self.gate, sup, self._turn))
        self._joined += 1
        sup.watchers.append(self._tell)
        self._tell("joined", sup)
        return sup

    def subscribe(self, fn: Callable[[str, McpSupervisor], None]) -> Callable[[], None]:
        """`fn(what, sup)` on "joined", "run_started", "run_ended" and "left" of every client; returns the
        unsubscribe function."""
        self._watchers.append(fn)
        return lambda: self._watchers.remove(fn) if fn in self._watchers else None

    def _tell(self, what: str, sup: McpSupervisor) -> None:
        for fn in list(self._watchers):
            try:
                fn(what, sup)
            except Exception:  # noqa: BLE001 - a watcher's bug must not stop a client
                log.exception("an MCP clients watcher failed")

    def _busy_message(self) -> str:
        if self.host is not None:
            who = ", ".join(s.client.name for s in self._live.values())
            return (f"The Vigil window serves one MCP client at a time, and {who} is connected. Call again when it "
                    "has disconnected, or start `vigil mcp --http PORT` for several clients at once.")
        return (f"{len(self._live)} MCP clients are being served, the most this server serves at once "
                f"(--max-clients {self.max_clients}). Call again when one has disconnected (an idle client is "
                f"let go after {duration(self.idle_s)}), or restart the server with a higher --max-clients.")

    @property
    def clients(self) -> list[McpSupervisor]:
        """The clients being served now, first come first."""
        return list(self._live.values())

    # -- settings every client follows --------------------------------------------------------------------------
    def set_policy(self, policy: str) -> None:
        self.policy = policy
        for sup in self._live.values():
            sup.policy = policy

    def seen_transport(self, transport: str) -> None:
        self.transport = transport

    # -- what the server run kept ------------------------------------------------------------------------------
    @property
    def session_ids(self) -> list[str]:
        """Every recorded session of this server run, in the order they began."""
        return self._kept + [sid for sup in self._live.values() for sid in sup.session_ids]

    @property
    def store_error(self) -> str | None:
        live = [s.store_error for s in self._live.values() if s.store_error]
        return next(iter(self._store_errors + live), None)

    # -- ending ---------------------------------------------------------------------------------------------------
    def session_ended(self, key: str) -> None:
        """The client ended its MCP session (HTTP DELETE): its run is recorded and its context closed."""
        sup = self._live.pop(key, None)
        if sup is not None:
            self._close_later(sup, "The MCP client ended its session.")

    def _close_later(self, sup: McpSupervisor, why: str) -> None:
        sup.left_why = why
        task = asyncio.ensure_future(sup.aclose(why))
        task.add_done_callback(lambda _: self._gone(sup))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    def _gone(self, sup: McpSupervisor) -> None:
        self._kept += sup.session_ids
        if sup.store_error:
            self._store_errors.append(sup.store_error)
        self._tell("left", sup)

    def _start_reaper(self) -> None:
        if self._reaper is None and self.idle_s > 0:
            self._reaper = asyncio.ensure_future(self._reap())

    async def _reap(self) -> None:
        while True:
            await asyncio.sleep(min(REAP_EVERY_S, self.idle_s))
            self.reap_idle()

    def reap_idle(self) -> list[str]:
        """End the clients idle longer than `idle_s` (nothing in flight); their names."""
        now = time.monotonic()
        gone = [k for k, s in self._live.items() if not s.busy and now - s.last_used > self.idle_s]
        for key in gone:
            sup = self._live.pop(key)
            log.info("%s was idle for %s; its session is ended", sup.client.name, duration(self.idle_s))
            self._close_later(sup, f"The MCP client was idle for {duration(self.idle_s)}.")
        return gone

    async def aclose(self) -> None:
        """The server stops: every client's run is ended and recorded, the grants end, the Chromium closes."""
        if self._reaper is not None:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reaper
        # over stdio the server stops because its one client went away
        why = "The MCP client disconnected." if self.transport == STDIO else "The MCP server stopped."
        for key in list(self._live):
            self._close_later(self._live.pop(key), why)
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)
        self.grants.end()
        await self.chromium.close()


def duration(seconds: float) -> str:
    return f"{seconds / 60:g} minutes" if seconds >= 120 else f"{seconds:g} second{'' if seconds == 1 else 's'}"


def session_key(ctx: Any) -> str:
    """The client's MCP session id over HTTP; `stdio` for the one client of a stdio server."""
    try:
        headers = ctx.headers
    except Exception:  # noqa: BLE001 - no request (an in-process call)
        headers = None
    sid = headers.get("mcp-session-id") if headers is not None else None
    return str(sid) if sid else STDIO


def client_info(ctx: Any, transport: str) -> ClientInfo:
    """The client's name and version from the MCP handshake (`clientInfo`)."""
    info = None
    try:
        params = ctx.session.client_params
        info = params.client_info if params is not None else None
    except Exception:  # noqa: BLE001 - no session (an in-process call) or no client info
        info = None
    name = str(getattr(info, "name", "") or "").strip()[:80] or ClientInfo.name
    return ClientInfo(name=name, version=str(getattr(info, "version", "") or "")[:40], transport=transport)
