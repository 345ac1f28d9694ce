"""The clients of one MCP server run as the Fleet view sees a fleet: each client a run, their questions in one
approval queue (`vigil gui --mcp PORT`, and `vigil mcp --http PORT` under `ask` where a window can open).

`McpClientsFleet(clients, endpoint=…)` presents an `McpClients` with the duck-typed API the Fleet view drives
(`engine.fleet`: `id`, `runs`, `queue`, `subscribe`, `run`, `run_named`, `stop`, `stop_all`, `grant_offer`,
`grant_for_request`):
- A client appears at its first tool call (the MCP handshake alone makes no supervisor), as a `FleetRun` named
  after its `clientInfo` (a name used before in this server run gets " #2", " #3" …), task "MCP session with
  NAME". Its state: "running" while it is connected (a run of its steps going or not), "waiting" while a
  question of it waits in the queue; once it left, "done" — or "failed" when its last run ended with an error,
  "stopped" when the person's stop was the last thing that happened to it.
- `steps` counts the steps that did something in its page, over all its runs; `tab` is the page it works in now
  (followed when a step opens or selects another tab); `session_id` its latest recorded session.
- Its questions: each client's gate is `queue.gate(name, index)` (`McpClients.gate_for`), so they wait in one
  `ApprovalQueue`, in the order asked, each naming its client, answered in any order.
- `stop(name)` ends that client's current run (a waiting question of it is answered "stop"); the client stays
  connected, and its next action starts a new run in its session. `stop_all` does so for every client.
- `run()` serves until `close()` (the window closes) or the server fails, then ends every client's run and
  returns a `FleetResult`.
- Grants are the server run's (`ServerGrants`): offered for the client's page, given with its latest session.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from engine.errors import ErrorCode, VigilError
from engine.fleet.queue import ApprovalQueue, QueueChange
from engine.fleet.runner import FleetChange, FleetResult, FleetRun, RunState, carried_out
from engine.fleet.spec import RunSpec
from engine.models import ApprovalRequest, StepRecorded
from engine.tab import Tab

if TYPE_CHECKING:
    from engine.loop.gates import ApprovalGate
    from engine.mcp.clients import McpClients
    from engine.mcp.supervisor import McpSupervisor
    from engine.models import RunResult

log = logging.getLogger("vigil.mcp")

TAB_CHECK_S = 0.5   # how often a client's page is looked at (a reading tool may open one without any event)
NEXT_RUN = "its next action starts a new run in its session"


class McpClientsFleet:
    """`view = McpClientsFleet(clients, endpoint=URL, serve=…, stop_serving=…)` (see the module docstring);
    `McpClientsFleet.over_http(clients, port)` builds the HTTP server too."""

    def __init__(self, clients: McpClients, *, endpoint: str, serve: Callable[[], Awaitable[Any]],
                 stop_serving: Callable[[], None]) -> None:
        self.clients, self.endpoint = clients, endpoint
        self._serve, self._stop_serving = serve, stop_serving
        self.queue = ApprovalQueue()
        self.runs: list[FleetRun] = []
        self.browsers: list[str] = []   # one Chromium: the view has no browser column
        self.started_at: float | None = None
        self._sups: dict[str, McpSupervisor] = {}        # run name → the client's supervisor
        self._names: dict[int, str] = {}                  # id(supervisor) → run name
        self._last: dict[str, RunResult] = {}             # run name → its client's last run's result
        self._stopped: dict[str, str] = {}                # run name → the person's reason, until its next run
        self._listeners: list[Callable[[FleetChange], None]] = []
        self._closing: str | None = None
        self.queue.subscribe(self._queue_changed)
        clients.gate_for = self._gate_for   # before any client joins: each one's questions go to the queue
        clients.subscribe(self._client_changed)

    @classmethod
    def over_http(cls, clients: McpClients, port: int) -> tuple[McpClientsFleet, str, bool]:
        """The view of `clients` served over streamable HTTP on 127.0.0.1:`port` (0: any free port), and the
        bearer token (and whether it came from VIGIL_MCP_TOKEN). VigilError when the port cannot be used or the
        token is bad; nothing is served before `run()`."""
        from engine.mcp.http import HOST, PATH, bind, choose_token, make_http_server
        from engine.mcp.server import build_server

        token, from_env = choose_token()
        sock = bind(port)
        clients.seen_transport("http")
        bound = sock.getsockname()[1]
        http = make_http_server(build_server(clients), token, bound, clients)
        view = cls(clients, endpoint=f"http://{HOST}:{bound}{PATH}", serve=lambda: http.serve(sock),
                   stop_serving=http.stop)
        return view, token, from_env

    @property
    def id(self) -> str:
        """The server run's id (its grants are tied to it)."""
        return self.clients.run_id

    # -- watching ------------------------------------------------------------------------------------------
    def subscribe(self, fn: Callable[[FleetChange], None]) -> Callable[[], None]:
        """`fn(FleetChange)` on every change of a client or of the queue; returns the unsubscribe function."""
        self._listeners.append(fn)
        return lambda: self._listeners.remove(fn) if fn in self._listeners else None

    def _emit(self, change: FleetChange) -> None:
        for fn in list(self._listeners):
            try:
                fn(change)
            except Exception:  # noqa: BLE001 - a listener's bug must not stop a client
                log.exception("an MCP clients view listener failed")

    def run_named(self, name: str) -> FleetRun:
        for r in self.runs:
            if r.name == name:
                return r
        raise VigilError(f"No MCP client named {name!r} has connected.", code=ErrorCode.BAD_ARGUMENT)

    def supervisor(self, name: str) -> McpSupervisor | None:
        """The client's supervisor (None once it left)."""
        return self._sups.get(name)

    # -- clients coming, acting and going ------------------------------------------------------------------
    def _gate_for(self, sup: McpSupervisor, _index: int) -> ApprovalGate:
        run = self._add(sup)
        return self.queue.gate(run.name, run.index)

    def _add(self, sup: McpSupervisor) -> FleetRun:
        name, base, k = sup.client.name, sup.client.name.split(" #")[0], 2
        taken = {r.name for r in self.runs}
        while name in taken:  # a client of this name left earlier: the view keeps its row
            name, k = f"{base} #{k}", k + 1
        run = FleetRun(spec=RunSpec(index=len(self.runs), name=name, task=f"MCP session with {name}",
                                    url=self.endpoint, planner="mcp", approve=self.clients.policy),
                       state="running", started_at=time.time())
        self.runs.append(run)
        self._sups[name], self._names[id(sup)] = sup, name
        return run

    def _client_changed(self, what: str, sup: McpSupervisor) -> None:
        name = self._names.get(id(sup))
        if name is None:  # a client from before the view (there is none: gate_for is set at once)
            return
        run = self.run_named(name)
        if what == "run_started":
            self._run_started(run, sup)
        elif what == "run_ended":
            self._run_ended(run, sup)
        elif what == "left":
            self._left(run, sup)
        self._follow(run, sup)
        self._emit(FleetChange("run", run))

    def _run_started(self, run: FleetRun, sup: McpSupervisor) -> None:
        self._stopped.pop(run.name, None)
        client_run = sup.run
        run.loop = client_run.loop if client_run is not None else None
        run.session_id = sup.session_ids[-1] if sup.session_ids else run.session_id
        run.reason = None
        if run.loop is not None:
            run.loop.bus.subscribe(lambda ev: self._stepped(run, sup, ev.record)
                                   if isinstance(ev, StepRecorded) else None)
        self._waiting_state(run)

    def _run_ended(self, run: FleetRun, sup: McpSupervisor) -> None:
        client_run = sup.run
        result = client_run.result if client_run is not None else None
        if result is not None:
            self._last[run.name] = result
        run.loop, run.result = None, result
        stopped = self._stopped.get(run.name)
        if stopped and not self._closing:
            run.reason = then_next(stopped)
        elif result is not None and result.status == "error":
            run.reason = then_next(f"its run failed: {result.reason}")

    def _left(self, run: FleetRun, sup: McpSupervisor) -> None:
        result, stopped = self._last.get(run.name), self._stopped.get(run.name)
        run.ended_at, run.loop, run.tab = time.time(), None, None
        self._sups.pop(run.name, None)
        self._names.pop(id(sup), None)
        if stopped and not self._closing:
            run.state, run.reason = "stopped", stopped
        elif result is not None and result.status == "error":
            run.state, run.reason = "failed", result.reason or "its run failed"
        else:
            run.state = "done"
            run.answer = (sup.left_why or "disconnected").rstrip(".")
        if sup.session_ids:
            run.session_id = sup.session_ids[-1]

    def _stepped(self, run: FleetRun, sup: McpSupervisor, record: Any) -> None:
        if carried_out(record):
            run.steps += 1
        self._follow(run, sup)
        self._emit(FleetChange("run", run))

    def _follow(self, run: FleetRun, sup: McpSupervisor) -> bool:
        """Keep `run.tab` the page the client works in now; whether it changed."""
        tab = None if run.finished else page_of(sup)
        if tab is run.tab:
            return False
        run.tab = tab
        return True

    # -- the queue -------------------------------------------------------------------------------------------
    def _queue_changed(self, change: QueueChange) -> None:
        index = change.entry.run_index
        run = self.runs[index] if 0 <= index < len(self.runs) else None
        d = change.entry.decision
        if run is not None and change.kind == "answered" and d is not None and d.kind == "stop":
            self._stopped.setdefault(run.name, d.reason or "stopped by the person")  # Stop in the approval bar
        if run is not None and not run.finished:
            sup = self._sups.get(run.name)
            if sup is not None:
                self._follow(run, sup)  # the page the question is about
            if self._waiting_state(run) or change.kind == "asked":
                self._emit(FleetChange("run", run))
        self._emit(FleetChange("queue", run, change))

    def _waiting_state(self, run: FleetRun) -> bool:
        """"waiting" while a question of the client waits, else "running"; whether it changed."""
        if run.finished:
            return False
        state: RunState = "waiting" if self.queue.waiting_for(run.name) else "running"
        changed = state != run.state
        run.state = state
        return changed

    # -- control ---------------------------------------------------------------------------------------------
    def stop(self, name: str, reason: str = "stopped by the person") -> None:
        """End the client's current run (its waiting question answered "stop"); the client stays connected
        and its next action starts a new run in its session."""
        run = self.run_named(name)
        sup = self._sups.get(name)
        if run.finished or sup is None:
            return
        self._stopped[name] = reason
        self.queue.stop_run(name, reason)
        client_run = sup.run
        if client_run is not None and client_run.live:
            client_run.loop.stop()
        else:  # no run going: the next action starts one anyway; say so at once
            run.reason = then_next(reason)
            self._emit(FleetChange("run", run))

    def stop_all(self, reason: str = "the person stopped every client's run") -> None:
        for r in self.runs:
            if not r.finished:
                self.stop(r.name, reason)

    def close(self, reason: str = "the window was closed") -> None:
        """Stop serving: `run()` then ends every client's run and returns."""
        self._closing = reason
        self.queue.stop_all(reason)
        self._stop_serving()

    # -- grants (the server run's) ------------------------------------------------------------------------------
    def grant_offer(self, request: ApprovalRequest, run: str) -> str | None:
        """"Allow clicks on ORIGIN for this session" for a question of `run`, on its page, or None."""
        sup = self._sups.get(run)
        tab = page_of(sup) if sup is not None else None
        return self.clients.grants.offer(request, tab.url if tab is not None else None)

    def grant_for_request(self, request: ApprovalRequest, run: str) -> str:
        """Give the grant offered for this question (with the client's latest recorded session); what was
        granted, in words. VigilError when it cannot be kept."""
        sup = self._sups.get(run)
        tab = page_of(sup) if sup is not None else None
        if sup is None or tab is None:
            raise VigilError("This client has no page open: no grant covers its step.",
                             code=ErrorCode.BAD_ARGUMENT)
        return self.clients.grants.give(request, tab.url, sup.session_ids[-1] if sup.session_ids else None)

    # -- serving ---------------------------------------------------------------------------------------------
    async def run(self) -> FleetResult:
        """Serve until `close()` (or the server fails: its error is raised after every client's run ended)."""
        self.started_at = time.time()
        t0 = time.monotonic()
        watch = asyncio.ensure_future(self._watch_pages())
        try:
            await self._serve()
        finally:
            self._closing = self._closing or "the MCP server stopped"
            watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watch
            await self.clients.aclose()
        self._emit(FleetChange("finished"))
        return FleetResult(self.id, self.runs, round(time.monotonic() - t0, 2))

    async def _watch_pages(self) -> None:
        """A reading tool opens a client's first tab, and a step may open or select another, without telling
        anyone: look at each client's page now and then."""
        while True:
            await asyncio.sleep(TAB_CHECK_S)
            for run in self.runs:
                sup = self._sups.get(run.name)
                if sup is not None and self._follow(run, sup):
                    self._emit(FleetChange("run", run))


def then_next(why: str) -> str:
    """Why the client's run ended, and that the client goes on in a new run."""
    return f"{why.rstrip('. ')}; {NEXT_RUN}"


def page_of(sup: McpSupervisor) -> Tab | None:
    """The page the client works in now: its run's, while one goes (a step may have moved to another tab),
    else the tab its tools read."""
    client_run = sup.run
    page = client_run.loop.page if client_run is not None and client_run.live else None
    tab = page if isinstance(page, Tab) and not page.closed else sup.tabs.tab
    return tab if tab is not None and not tab.closed else None
