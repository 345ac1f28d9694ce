"""`Fleet`: many runs, at most `parallel` at once, one approval queue, browsers from a `BrowserPool`.

See engine/fleet/__init__.py for the API as a whole."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from engine.errors import ErrorCode, VigilError
from engine.fleet.browsers import BrowserPool, Endpoint, NoBrowserError
from engine.fleet.queue import ApprovalQueue, QueueChange
from engine.fleet.spec import FleetSpec, RunSpec
from engine.fleet.words import status_word
from engine.loop.gates import AutoApprove
from engine.loop.planner import close_planner
from engine.loop.runner import AgentLoop
from engine.models import POLICIES, ApprovalRequest, Decision, RunResult, StepRecorded
from engine.races import together
from engine.tab import Tab

log = logging.getLogger("vigil.fleet")

RunState = Literal["queued", "running", "waiting", "done", "failed", "stopped"]
FINISHED: tuple[RunState, ...] = ("done", "failed", "stopped")
MAX_RETRIES = 2   # --retry-lost: new sessions a lost run gets at most
STATE_WORDS: dict[str, str] = {s: status_word(s) for s in ("queued", "running", "waiting", *FINISHED)}


def carried_out(record: Any) -> bool:
    """A step that did something in the page (run by the agent or the person): a refused, skipped or stopped
    one is not counted in a run's steps."""
    return record.action is not None and record.status in ("completed", "failed")


def grantable(request: ApprovalRequest) -> bool:
    """A step a grant may answer: not sensitive, no page text that reads like orders, not re-asked after its
    target changed, not a page's dialog."""
    return not (request.dialog is not None or request.sensitive_reasons or request.warnings or request.error)


def new_fleet_id() -> str:
    return uuid.uuid4().hex[:12]


@dataclass
class FleetRun:
    """One run of the fleet as it stands. `tab` is its live page while it runs (None before and after);
    `loop` its AgentLoop while it runs."""

    spec: RunSpec
    state: RunState = "queued"
    session_id: str | None = None
    browser: str | None = None          # the endpoint it ran on: "local" or the URL given
    steps: int = 0
    answer: str | None = None
    reason: str | None = None
    started_at: float | None = None     # time.time()
    ended_at: float | None = None
    kept: bool = False                  # finished in an earlier attempt (`--resume` keeps it)
    waiting_for: str | None = None      # "a browser" while a grid queues its session request
    lost: str | None = None             # its browser or grid session went away: where and at which step
    retried: list[str] = field(default_factory=list)  # with --retry-lost: each earlier attempt lost, and where
    tab: Tab | None = field(default=None, repr=False)
    loop: AgentLoop | None = field(default=None, repr=False)
    result: RunResult | None = field(default=None, repr=False)
    _stop_reason: str | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def index(self) -> int:
        return self.spec.index

    @property
    def task(self) -> str:
        return self.spec.task

    @property
    def finished(self) -> bool:
        return self.state in FINISHED

    @property
    def seconds(self) -> float | None:
        if self.started_at is None or self.ended_at is None:
            return None
        return round(self.ended_at - self.started_at, 2)

    def summary(self) -> dict[str, Any]:
        """The run's line of `vigil fleet --json`."""
        out: dict[str, Any] = {"name": self.name, "task": self.task, "status": self.state,
                               "session": self.session_id, "browser": self.browser, "steps": self.steps}
        if self.retried:
            out["retried"] = list(self.retried)
        if self.state == "done":
            out["answer"] = self.answer
        else:
            out["reason"] = self.reason
        return out


@dataclass
class FleetChange:
    """What changed: a run's state or counts (`kind="run"`), the queue (`"queue"`, with `queue`), or the
    fleet ended (`"finished"`)."""

    kind: Literal["run", "queue", "finished"]
    run: FleetRun | None = None
    queue: QueueChange | None = None


@dataclass
class FleetResult:
    fleet: str
    runs: list[FleetRun]
    seconds: float

    @property
    def ok(self) -> bool:
        return all(r.state == "done" for r in self.runs)

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def to_json(self) -> dict[str, Any]:
        return {"fleet": self.fleet, "runs": [r.summary() for r in self.runs]}


class Fleet:
    """Runs a `FleetSpec`: `result = await Fleet(spec, parallel=4, approve="ask").run()`.

    `store`: an open `engine.store.Store` to record each run as a session grouped under the fleet's id
    (None: nothing is kept). `keep`: runs finished in an earlier attempt (by index), kept as they are
    (`engine.fleet.resume`). `browser`: a launched `Browser` to open the runs' contexts in instead of launching a
    local Chromium (left open at the end; the window passes its own)."""

    def __init__(self, spec: FleetSpec, *, parallel: int = 1, approve: str = "ask", browsers: list[str] | None = None,
                 max_steps: int = 30, store: Any = None, fleet_id: str | None = None, headless: bool = True,
                 timeout: float = 30.0, keep: dict[int, FleetRun] | None = None, browser: Any = None,
                 grid: str | None = None, retry_lost: bool = False, keepalive: float | None = None) -> None:
        if parallel < 1:
            raise VigilError("--parallel must be at least 1.", code=ErrorCode.BAD_ARGUMENT)
        if max_steps < 1:
            raise VigilError("--max-steps must be at least 1.", code=ErrorCode.BAD_ARGUMENT)
        if approve not in POLICIES:
            raise VigilError(f"--approve must be one of {', '.join(POLICIES)}.", code=ErrorCode.BAD_ARGUMENT)
        self.spec, self.parallel, self.approve, self.max_steps = spec, parallel, approve, max_steps
        self.browsers = list(browsers or [])
        self.store, self.headless, self.timeout = store, headless, timeout
        self.id = fleet_id or new_fleet_id()
        self.queue = ApprovalQueue()
        self.grid, self.retry_lost = grid or spec.grid, retry_lost
        if self.grid:
            from engine.fleet.grid import KEEPALIVE_S
            self.pool = BrowserPool(headless=headless, grid=self.grid, keepalive=keepalive or KEEPALIVE_S)
        else:
            self.pool = BrowserPool(self.browsers, headless=headless, local=browser)
        self.runs = [(keep or {}).get(s.index) or FleetRun(spec=s) for s in spec.runs]
        self._listeners: list[Callable[[FleetChange], None]] = []
        self._stopping: str | None = None
        self._endpoints: dict[int, Endpoint] = {}
        self.book: Any = None             # engine.store.fleets.FleetBook when recording
        self.grants: Any = None           # engine.fleet.grants.FleetGrants (fleet-wide grants) when recording
        self.started_at: float | None = None
        self.queue.subscribe(self._queue_changed)
        self.pool.on_dead = self._endpoint_dead

    # -- watching ----------------------------------------------------------------------------------
    def subscribe(self, fn: Callable[[FleetChange], None]) -> Callable[[], None]:
        """Call `fn(change)` on every change of a run or of the queue; returns a function that stops it."""
        self._listeners.append(fn)
        return lambda: self._listeners.remove(fn) if fn in self._listeners else None

    def _emit(self, change: FleetChange) -> None:
        for fn in list(self._listeners):
            try:
                fn(change)
            except Exception:
                log.exception("fleet listener failed")

    def _set(self, run: FleetRun, state: RunState | None = None) -> None:
        if state is not None:
            run.state = state
        if self.book is not None:
            try:
                self.book.update_run(self.id, run)
            except VigilError as exc:
                log.warning("the fleet's record of run %s could not be written: %s", run.name, exc.message)
        self._emit(FleetChange("run", run))

    def _queue_changed(self, change: QueueChange) -> None:
        run = self.runs[change.entry.run_index] if 0 <= change.entry.run_index < len(self.runs) else None
        d = change.entry.decision
        if run is not None and change.kind == "answered" and d is not None and d.kind == "stop" \
                and not run._stop_reason:
            run._stop_reason = d.reason or "stopped by the person"  # "stop this run" at the queue
        if run is not None and not run.finished:
            waiting = bool(self.queue.waiting_for(run.name))
            if change.kind == "asked" or (run.state == "waiting") != waiting:
                run.state = "waiting" if waiting else "running"
                self._emit(FleetChange("run", run))
        self._emit(FleetChange("queue", run, change))

    def run_named(self, name: str) -> FleetRun:
        for r in self.runs:
            if r.name == name:
                return r
        raise VigilError(f"The fleet has no run named {name!r}.", code=ErrorCode.BAD_ARGUMENT)

    def tab_of(self, name: str) -> Tab | None:
        """The run's live page (None unless it runs)."""
        return self.run_named(name).tab

    # -- control -----------------------------------------------------------------------------------
    def stop(self, name: str, reason: str = "stopped by the person") -> None:
        """Stop one run: now if it waits at the queue, after its current action otherwise; a queued run never
        starts."""
        run = self.run_named(name)
        if run.finished:
            return
        run._stop_reason = reason
        self.queue.stop_run(run.name, reason)
        if run.loop is not None:
            run.loop.stop()

    def stop_all(self, reason: str = "the whole fleet was stopped") -> None:
        self._stopping = reason
        for r in self.runs:
            if not r.finished:
                self.stop(r.name, reason)

    # -- grants ------------------------------------------------------------------------------------
    def grant_offer(self, request: ApprovalRequest, run: str) -> str | None:
        """"Allow clicks on SITE for the whole fleet", for a request of `run`, or None."""
        from engine.store.grants import KIND_WORDS, kind_of, site_of_url

        tab = self.tab_of(run)
        if self.grants is None or request.dialog is not None or tab is None:
            return None
        kind, site = kind_of(request.proposal.action.name), site_of_url(tab.url)
        return f"Allow {KIND_WORDS[kind]} on {site} for the whole fleet" if kind and site else None

    def grant_for_request(self, request: ApprovalRequest, run: str) -> str:
        from engine.store.grants import kind_of

        tab = self.tab_of(run)
        kind = kind_of(request.proposal.action.name)
        if kind is None or tab is None or self.grants is None:
            raise VigilError("No grant covers this step.", code=ErrorCode.BAD_ARGUMENT)
        g = self.grants.add(kind, tab.url)
        words = f"#{g.id} {g.describe()}, for every run of this fleet until it ends"
        answered = self.answer_covered(but=request)
        if answered:
            words += "; approved with it, as they waited: " + ", ".join(e.describe() for e in answered)
        return words

    def answer_covered(self, but: ApprovalRequest | None = None) -> list[Any]:
        """Approve the steps already waiting that a grant now covers (a grant given at one question answers the
        others like it, in every run), except `but` (the question it was given at, which its asker answers).
        Never a sensitive step, one with page text that reads like orders, one re-asked, nor a page's dialog.
        The entries approved, in the order asked."""
        if self.grants is None:
            return []
        done = []
        for e in self.queue.waiting:
            req = e.request
            if req is but or not grantable(req):
                continue
            tab = self.tab_of(e.run)
            if tab is None or self.grants.covering(req.proposal.action, tab.url) is None:
                continue
            self.queue.answer(e.id, Decision.approve())
            done.append(e)
        return done

    def waiting_like(self, request: ApprovalRequest, run: str) -> list[Any]:
        """The other waiting steps a grant offered for `request` would approve with it: the same kind of step on
        the same site, in any run (none sensitive, warned, re-asked or a page's dialog)."""
        from engine.store.grants import kind_of, origin_of

        def key(req: ApprovalRequest, name: str) -> tuple[str | None, str]:
            tab = self.tab_of(name)
            return kind_of(req.proposal.action.name), origin_of(tab.url) if tab is not None else ""

        want = key(request, run)
        if want[0] is None or not want[1]:
            return []
        return [e for e in self.queue.waiting if e.request is not request and grantable(e.request)
                and key(e.request, e.run) == want]

    # -- running -----------------------------------------------------------------------------------
    async def run(self) -> FleetResult:
        """Run every run not kept from an earlier attempt; returns when all are finished."""
        self.started_at = time.time()
        t0 = time.monotonic()
        if self.store is not None:
            from engine.fleet.grants import FleetGrants
            from engine.store.fleets import FleetBook
            self.book = FleetBook(self.store)
            self.book.save_fleet(self, self.spec)
            self.grants = FleetGrants(self.store, self.id)
        todo = [r for r in self.runs if not r.finished]
        try:
            if todo:
                await self._grid_or_endpoint()
                try:
                    await self.pool.start()
                except NoBrowserError as exc:
                    for r in todo:
                        self._end(r, "failed", exc.message)
                    todo = []
                sem = asyncio.Semaphore(self.parallel)
                # (not a plain gather: cancelled (Ctrl+C), it would return at the first run that ends and leave
                # the others releasing their browsers while the pool closes under them)
                await together(*(self._guarded(r, sem) for r in todo))
        finally:
            await self.pool.close()
            if self.grants is not None:
                self.grants.end()
            if self.book is not None:
                with contextlib.suppress(VigilError):
                    self.book.finish_fleet(self.id, "stopped" if self._stopping else "finished")
        self._emit(FleetChange("finished"))
        return FleetResult(self.id, self.runs, round(time.monotonic() - t0, 2))

    async def _grid_or_endpoint(self) -> None:
        """A `grid` URL that is not a Selenium Grid (ws://…, a DevTools http://host:9222) is used as today's
        endpoints are: one browser, a context per run."""
        from engine.fleet.browserless import BrowserlessClient
        from engine.fleet.grid import is_selenium_grid

        if self.pool.grid is None or isinstance(self.pool.grid, BrowserlessClient) \
                or await is_selenium_grid(self.pool.grid.url):
            return
        assert self.grid is not None
        await self.pool.close()
        self.browsers = [self.grid]
        self.pool = BrowserPool(self.browsers, headless=self.headless)
        self.pool.on_dead = self._endpoint_dead

    async def _guarded(self, run: FleetRun, sem: asyncio.Semaphore) -> None:
        try:
            async with sem:
                await self._one(run)
                while run.state == "failed" and run.lost and self.retry_lost and len(run.retried) < MAX_RETRIES \
                        and not (run._stop_reason or self._stopping):
                    run.retried.append(f"session {run.session_id or '-'} {run.lost}: {run.reason}")
                    log.info("run %s is started again on a new browser: %s", run.name, run.retried[-1])
                    run.lost, run.session_id = None, None
                    await self._one(run)
        except Exception as exc:  # a bug must not take the other runs down; the run says what broke
            log.exception("fleet run %s", run.name)
            self._end(run, "failed", f"{type(exc).__name__}: {exc}")

    def _end(self, run: FleetRun, state: RunState, reason: str | None) -> None:
        run.reason, run.ended_at = reason, time.time()
        self._set(run, state)

    async def _one(self, run: FleetRun) -> None:
        if run._stop_reason or self._stopping:
            self._end(run, "stopped", f"not started: {run._stop_reason or self._stopping}")
            return
        run.started_at, run.reason, run.answer, run.steps = time.time(), None, None, 0
        try:
            planner = run.spec.make_planner()
        except VigilError as exc:
            self._end(run, "failed", exc.message)
            return
        endpoint = browser = recorder = None
        try:
            try:
                endpoint, browser = await self.pool.acquire(on_waiting=lambda: self._waiting_browser(run))
            except NoBrowserError as exc:
                run.waiting_for = None
                self._end(run, "failed", exc.message)
                return
            run.waiting_for = None
            run.browser = endpoint.label
            self._endpoints[run.index] = endpoint
            self._set(run, "running")
            try:
                tab = await browser.new_tab(run.spec.url, timeout=self.timeout)
            except VigilError as exc:
                self._end(run, "failed", self._blame(endpoint, exc.message))
                return
            run.tab = tab
            policy = run.spec.approve or self.approve
            gate = AutoApprove() if policy == "auto" else self.queue.gate(run.name, run.index)
            loop = AgentLoop(tab, planner, gate=gate, policy=policy, max_steps=run.spec.max_steps or self.max_steps)
            if self.grants is not None:
                loop.grants = self.grants.covering
            run.loop = loop
            loop.bus.subscribe(lambda ev: self._stepped(run, ev.record) if isinstance(ev, StepRecorded) else None)
            recorder = self._record(run, loop, tab, policy)
            if run._stop_reason or self._stopping:  # stopped while its browser opened
                loop.stop()
            result = await loop.run(run.spec.task)
            run.result = result
            if recorder is not None:
                recorder.finish(result)
            if result.status == "success":
                run.answer = result.answer
                state: RunState = "done"
            elif result.status == "interrupted":
                run.reason = run._stop_reason or result.reason or "stopped"
                state = "stopped"
            else:
                run.reason = self._blame(endpoint, result.reason or "failed")
                state = "failed"
            if getattr(result, "steps", None) is not None:
                run.steps = sum(1 for r in result.steps if carried_out(r))
            run.ended_at = time.time()
            self._set(run, state)
        finally:
            run.loop, run.tab = None, None
            if run.ended_at is None or run.ended_at < (run.started_at or 0):
                run.ended_at = time.time()
            await close_planner(planner)
            if endpoint is not None:
                await self.pool.release(endpoint, browser)
            self._endpoints.pop(run.index, None)

    def _record(self, run: FleetRun, loop: AgentLoop, tab: Tab, policy: str) -> Any:
        if self.store is None:
            return None
        from engine.store.recorder import SessionRecorder
        recorder = SessionRecorder(self.store)
        meta: dict[str, Any] = {"fleet": self.id, "fleetRun": run.name}
        if run.retried:  # started again after its browser was lost: the record says where and at which step
            meta["retryOf"] = list(run.retried)
        sid = recorder.start(loop, run.task, tab.url, planner=run.spec.planner, policy=policy, metadata=meta)
        if sid is None:
            log.warning("run %s is not recorded: %s", run.name, recorder.error)
            return None
        run.session_id = sid
        if self.book is not None:
            self.book.attach_session(sid, self.id)
        if self.grants is not None:
            self.grants.attach_session(sid)
        self._set(run)
        return recorder

    def _stepped(self, run: FleetRun, record: Any) -> None:
        if carried_out(record):
            run.steps += 1
        self._emit(FleetChange("run", run))

    def _blame(self, endpoint: Endpoint, reason: str) -> str:
        """A run's error on an endpoint that went away names the endpoint."""
        if endpoint.url is not None and not self.pool.check(endpoint) and endpoint.label not in reason:
            return f"the browser at {endpoint.label} went away ({endpoint.dead}): {reason}"
        return reason

    def _endpoint_dead(self, endpoint: Endpoint) -> None:
        for r in self.runs:
            if self._endpoints.get(r.index) is endpoint and not r.finished:
                r.lost = f"lost at step {r.steps + 1} on {endpoint.label}"
                if r.loop is not None:
                    r.loop.fail_run(f"the browser at {endpoint.label} went away ({endpoint.dead})")

    def _waiting_browser(self, run: FleetRun) -> None:
        """The grid queued this run's session request: said as "waiting for a browser", not a timeout."""
        run.waiting_for = "a browser"
        self._emit(FleetChange("run", run))
