"""Fleets: one person supervises many runs through one approval queue, on a local Chromium or on
remote browsers (a grid). `vigil fleet FILE` (engine.cli.fleet) and the window's Fleet view are clients
of this API; it sits above the loop, planners and store, below `engine.bench`/`engine.mcp` and the CLI.

THE API
=======

Reading a fleet file (engine.fleet.spec)
----------------------------------------
`load_fleet(path_or_mapping) -> FleetSpec`; every problem is a `FleetSpecError` (a VigilError, code
BAD_ARGUMENT) naming the file, the run (number, name, CSV line) and what is wrong.
`FleetSpec`: `name`, `path`, `digest`, `runs: list[RunSpec]`, `run_named(name)`.
`RunSpec`: `index`, `name`, `task`, `url`, `planner`, `script` (parsed steps), `model`, `base_url`,
`backend_url`, `vision`, `tools`, `approve` (None: the fleet's), `max_steps` (None: the fleet's), `row`
(CSV line); `make_planner()` → a fresh planner.

Running (engine.fleet.runner)
-----------------------------
`fleet = Fleet(spec, parallel=1, approve="ask"|"auto-safe"|"auto", browsers=None | ["http://h:9222",
"ws://…"], max_steps=30, store=Store | None, fleet_id=None, headless=True, timeout=30.0, keep=None,
browser=None)` — `browser`: an already launched `Browser` (the window's) to open the runs' contexts in instead of
launching a local Chromium; it is left open at the end.
`result = await fleet.run()` → `FleetResult(fleet, runs, seconds)`: `.ok`, `.exit_code` (0 all done, else 1),
`.to_json()` → {"fleet": ID, "runs": [{"name","task","status","session","browser","steps","answer"|"reason"}]}.
- `fleet.id` (12 hex), `fleet.runs: list[FleetRun]` (in the file's order), `fleet.queue: ApprovalQueue`,
  `fleet.pool: BrowserPool` (`pool.endpoints`: label, busy, runs, dead), `fleet.grants: FleetGrants | None`
  (set once `run()` has started, when recording).
- `FleetRun`: `name`, `index`, `task`, `spec`, `state` ∈ RunState = "queued" | "running" | "waiting" (a question
  of it is in the queue: "waiting for you") | "done" | "failed" | "stopped"; `session_id`, `browser` ("local" or
  the endpoint URL), `steps`, `answer`, `reason`, `started_at`/`ended_at` (time.time()), `seconds`, `kept`
  (finished in an earlier attempt), and while it runs `tab` (its live `engine.tab.Tab`: screencast, outline
  the target, take over) and `loop` (its AgentLoop: `loop.bus` for its step events). `summary()` → its JSON line.
- `fleet.subscribe(fn) -> unsubscribe`: `fn(FleetChange)` on the event loop's thread for every change:
  `FleetChange(kind="run", run)` (state, session, steps), `("queue", run, queue=QueueChange)`, `("finished")`.
- `fleet.stop(name, reason)` (this run: at once if it waits in the queue, after its current action
  otherwise; a queued run never starts), `fleet.stop_all(reason)`, `fleet.run_named(name)`, `fleet.tab_of(name)`.
- Grants for the whole fleet: `fleet.grants.add(kind, url)` (click, type, scroll, select, check, hover on that
  origin, for every run until the fleet ends; never a sensitive step), `.revoke(id)`, `.active()`;
  `fleet.grant_offer(request, run)` ("Allow clicks on http://… for the whole fleet" or None) and
  `fleet.grant_for_request(request, run)` give one for a waiting request.

The one approval queue (engine.fleet.queue)
-------------------------------------------
`ApprovalQueue`: each run's loop gets `queue.gate(run_name, run_index)` (a `FleetGate`, person present;
runs under `auto` get `AutoApprove` and never ask).
- `queue.waiting` → [QueueEntry] in the order asked; `queue.waiting_for(run)`; `queue.get(id)`; `queue.history`.
- `QueueEntry`: `id` (increasing), `run`, `run_index`, `request` (ApprovalRequest: summary, target, sensitive
  reasons, warnings, dialog …), `asked_at` (time.time()), `asked_mono`, `shown_at`, `answered_at`, `decision`,
  `withdrawn`, `waiting`, `shown_after_ms`, `describe()`.
- Answer in any order: `queue.answer(id, Decision(...))` with the kinds of a single run — approve, edit
  (action / expected_outcome), skip, reject (reason), take_over (action, or none when the person acted in
  the page), stop (this run); shortcuts `approve(id)`, `reject(id, reason)`, `skip(id)`; `stop_run(run)`,
  `stop_all()`. QueueError when the entry is not waiting. Safe from another thread.
- Notifications: `queue.subscribe(fn)` → `fn(QueueChange(kind, entry))`, kind ∈ "asked" | "answered" |
  "withdrawn" | "shown", called synchronously when the loop asks (before it waits: a UI hears of it in the
  same loop iteration); `queue.changed` (asyncio.Event, set on each change); `await queue.next_waiting(after=0)`.
- `queue.mark_shown(id)`: a UI stamps `shown_at` when it has painted the entry → `shown_after_ms` is the
  "proposed → shown in the queue" time.

Browsers (engine.fleet.browsers)
--------------------------------
`BrowserPool(endpoints=None | [url…], headless=True)`: no endpoints → one local Chromium, a fresh browser
context per run (`Browser.open_context`: cookies and storage apart); endpoints → a fresh context on the least
busy live endpoint. An endpoint that cannot be reached is skipped (runs go to the others); one that dies
marks its runs failed with a reason naming it, the rest go on. `Endpoint`: label, url, busy, runs, dead.

Selenium Grid (engine.fleet.grid)
---------------------------------
`Fleet(spec, grid="http://hub:4444", retry_lost=False, keepalive=5.0)` (or the fleet file's `grid:`): a W3C session
per run (`GridClient.lease()`: POST /session → `se:cdp` → `Browser` attached; `GET /session/ID/url` and a short CDP
call every `keepalive` s; DELETE /session/ID at its end, however it ends). `pool.sessions`: one Endpoint per session
(`label` names the grid node and session, `session`: GridSession id/cdp/node). `FleetRun.waiting_for` is "a browser"
while the grid queues its request; `FleetRun.lost` / `.retried` say where a run's browser went away (`--retry-lost`
starts it again on a new session, at most MAX_RETRIES times). A `grid` that is not a Selenium Grid is one endpoint.

Kept and resumable (engine.fleet.resume, engine.store.fleets)
-------------------------------------------------------------
With a store, the fleet is recorded (`FleetBook`: `fleets` and `fleet_runs` tables; each run a session whose
`fleet_id` is the fleet's). `resume_fleet(store, id)` → a Fleet that re-runs the runs that had not finished and
keeps those that had. `fleet_summary_html(store, id)` (engine.store.report) is `vigil export --fleet ID --html`.
"""

from engine.fleet.browsers import BrowserPool, Endpoint, NoBrowserError
from engine.fleet.queue import ApprovalQueue, FleetGate, QueueChange, QueueEntry, QueueError
from engine.fleet.runner import FINISHED, Fleet, FleetChange, FleetResult, FleetRun, RunState
from engine.fleet.spec import FleetSpec, FleetSpecError, RunSpec, load_fleet

__all__ = ["ApprovalQueue", "BrowserPool", "Endpoint", "FINISHED", "Fleet", "FleetChange", "FleetGate", "FleetResult",
           "FleetRun", "FleetSpec", "FleetSpecError", "NoBrowserError", "QueueChange", "QueueEntry", "QueueError",
           "RunSpec", "RunState", "load_fleet"]
