"""SessionRecorder: one tab's session, written to the store while loops run in that tab.

The first task run in a tab creates the session (titled `{domain}: {task}`); later tasks in the same
tab append to it (messages and steps carry on numbering), and navigating keeps it — the session's
url and domain follow the page. The recorder listens to the loop's event bus. Each step (record,
screenshots, snapshots) is committed in the callback, before the loop goes on to the next one — a
killed process never loses a recorded step. An after picture that came after its step's record
(`StepPictureTaken`) is added to the stored step by a background write, queued before the planner
is asked for the next step. The chat messages and plan updates around a step go to the store's
background writer (`engine.store.writer`: one thread, in order, flushed before each step is
written), so their fsyncs are off the loop's critical path. The loop waits for every write of a
run before the run ends (`AgentLoop.track_write`), `finish()` flushes, and so does `Store.close()`
(a run ended by Ctrl+C). A failing write ends the run with a clear error (`AgentLoop.fail_run`) — never
a run that goes on unrecorded without saying so; the first failure is kept in `error` (and logged)
for the UI to show, and recording stops.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from engine.errors import ErrorCode, VigilError
from engine.loop.runner import AgentLoop
from engine.models import MessageAdded, PlanUpdated, RunResult, StepPictureTaken, StepRecorded
from engine.models.loop import LoopEvent
from engine.secret_values import scrub
from engine.snapshot.dom_snapshot import DomSnapshot
from engine.snapshot.stored import snapshot_bytes
from engine.store.downloads import downloads_folder
from engine.store.store import Store
from engine.store.writer import WRITER_THREAD

log = logging.getLogger("vigil.store")

# step blob roles → blob kind
SCREENSHOT_ROLES = ("screenshot_before", "screenshot_after")
SNAPSHOT_ROLES = ("snapshot_before", "snapshot_after")


class SessionRecorder:
    """`rec.start(loop, task, url, planner=…, policy=…)` before `loop.run(task)`, `rec.finish(result)` after."""

    def __init__(self, store: Store, session_id: str | None = None, *, background: bool = True):
        self.store = store
        self.session_id = session_id
        self.error: str | None = None
        self.background = background  # writes on the store's writer thread (False: written in the callback)
        self._url: str | None = None
        self._seq0 = self._step0 = 0
        self._plan_steps: list[str] | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._snap_cache: tuple[DomSnapshot, bytes] | None = None  # consecutive steps share one snapshot
        self._loop: AgentLoop | None = None
        self._downloads: Any = None  # the browser's DownloadKeeper while a run saves into this session's folder
        self._secrets: set[str] = set()  # typed secrets of this tab's runs (memory only), scrubbed from all we write

    # -- a run ---------------------------------------------------------------------------------
    def start(self, loop: AgentLoop, task: str, url: str, *, planner: str, policy: str,
              metadata: dict[str, Any] | None = None) -> str | None:
        """Open (or resume) the tab's session for a run of `task` and subscribe to the loop; returns
        the session id, or None when the store failed (see `error`)."""
        self.stop_listening()
        try:
            if self.session_id is None:
                self.session_id = self.store.create_session(task, url, planner, policy, metadata)
                self._url = url
            else:
                self.store.resume(self.session_id, planner, policy)
                self.page_moved(url)
            self._seq0, self._step0 = self.store.next_indexes(self.session_id)
        except VigilError as exc:
            self._failed(exc)
            return None
        self.error = None
        self._plan_steps = None
        self._keep_downloads(loop)
        loop.artifacts = True
        self._loop = loop
        self._unsubscribe = loop.bus.subscribe(self._on_event)
        return self.session_id

    def _keep_downloads(self, loop: AgentLoop) -> None:
        """The run's downloads go into the session's own folder under the store's directory."""
        browser = getattr(loop.page, "browser", None)
        if browser is not None and self.session_id is not None:
            browser.downloads.folder = downloads_folder(self.store.path, self.session_id)
            self._downloads = browser.downloads

    def finish(self, result: RunResult) -> None:
        """The run ended: stop listening and store its status, reason and answer."""
        self.stop_listening()
        if self._downloads is not None:  # downloads after the run are not this session's
            self._downloads.folder = None
            self._downloads = None
        if self.background and not self.store.writer.flush():
            self._failed(VigilError("the last writes did not finish within 60 s", code=ErrorCode.STORE_ERROR))
        if self.session_id is None or self.error:
            return
        try:
            self.page_moved(result.url)
            self.store.finish(self.session_id, result.status if result.status != "running" else "interrupted",
                              reason=result.reason, answer=result.answer)
        except VigilError as exc:
            self._failed(exc)

    def new_session(self) -> None:
        """The next run in this tab starts a session of its own (the typed secrets of the tab are
        still remembered and scrubbed)."""
        self.stop_listening()
        self.session_id = None
        self._url = None

    def stop_listening(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self._snap_cache = None

    def page_moved(self, url: str) -> None:
        """The tab's page is now `url` (a navigation, in or out of a run): the session follows it."""
        url = scrub(url, self._secrets)
        if self.session_id is None or not url or url == self._url:
            return
        try:
            self.store.update_url(self.session_id, url)
            self._url = url
        except VigilError as exc:
            self._failed(exc)

    # -- events --------------------------------------------------------------------------------
    def _on_event(self, ev: LoopEvent) -> None:
        if self.error or self.session_id is None:
            return
        sid = self.session_id
        if self._loop is not None and not self._loop.journal.secrets <= self._secrets:
            self._secrets |= self._loop.journal.secrets
            secrets = frozenset(self._secrets)
            # what was written before the secret was known (the task may spell it out) is redacted
            self._write(lambda: self.store.redact(sid, secrets), "redacting a typed secret")
        if isinstance(ev, (MessageAdded, PlanUpdated)):  # step records come scrubbed by the loop already
            ev = scrub(ev, self._secrets)
        if isinstance(ev, MessageAdded):
            m = ev.message
            update: dict[str, Any] = {"sequenceNumber": m.sequenceNumber + self._seq0}
            step = m.metadata.get("step_index")
            if isinstance(step, int) and self._step0:  # the step it speaks of, numbered as stored
                update["metadata"] = {**m.metadata, "step_index": step + self._step0}
            msg = m.model_copy(update=update)
            self._write(lambda: self.store.add_message(sid, msg), f"message {msg.sequenceNumber}")
        elif isinstance(ev, PlanUpdated):
            steps = [s.description for s in ev.plan.steps]
            plan, new = ev.plan, steps != self._plan_steps
            self._plan_steps = steps
            self._write(lambda: self.store.save_plan(sid, plan, new_version=new), "the plan")
        elif isinstance(ev, StepRecorded):
            # a step is committed before the loop goes on (a killed process never loses a recorded step);
            # the messages and plan updates around it are written in the background, before it, in order
            self._write(lambda: self._step(ev), f"step {ev.record.index + self._step0}", now=True)
        elif isinstance(ev, StepPictureTaken):  # a step's after picture, taken after its record was stored
            a, index = ev.artifacts, ev.step_index + self._step0
            if a is not None and a.screenshot_after:
                jpeg, fields = a.screenshot_after, {"screenshot_after": ev.screenshot_after,
                                                    "screenshot_distance": ev.screenshot_distance}
                self._write(lambda: self.store.add_step_picture(sid, index, "screenshot_after", jpeg, fields),
                            f"step {index}'s after picture")

    def _write(self, fn: Callable[[], object], what: str, *, now: bool = False) -> None:
        """Run one write: on the writer thread (tracked by the run, which waits for it), or — `now`, or
        without a background writer — here, after the writes queued before it."""
        def run() -> None:
            if self.error:  # recording stopped at an earlier failure
                return
            try:
                fn()
            except VigilError as exc:
                self._failed(exc, what)
                raise
            except Exception as exc:
                log.exception("recording the session failed")
                self._failed(VigilError(f"Recording the session failed: {type(exc).__name__}: {exc}",
                                        code=ErrorCode.STORE_ERROR), what)
                raise
        if now or not self.background:
            if self.background and not self.store.writer.flush():
                self._failed(VigilError("earlier writes did not finish within 60 s", code=ErrorCode.STORE_ERROR), what)
                return
            try:
                run()
            except Exception:  # noqa: BLE001 — kept in `error` and reported to the run by _failed
                pass
            return
        fut = self.store.writer.submit(run, f"storing {what}")
        if self._loop is not None:
            self._loop.track_write(fut)

    def _step(self, ev: StepRecorded) -> None:
        if self.session_id is None:
            return
        rec = ev.record.model_copy(update={"index": ev.record.index + self._step0})
        files: dict[str, tuple[str, bytes]] = {}
        a = ev.artifacts
        if a is not None:
            for role in SCREENSHOT_ROLES:
                data = getattr(a, role)
                if data:
                    files[role] = ("screenshot", data)
            for role in SNAPSHOT_ROLES:
                snap = getattr(a, role)
                if snap is not None:
                    files[role] = ("snapshot", self._snapshot_bytes(snap))
        self.store.add_step(self.session_id, rec, files=files)
        if rec.url_after:
            self.page_moved(rec.url_after)

    def _snapshot_bytes(self, snap: DomSnapshot) -> bytes:
        cached = self._snap_cache
        if cached is not None and cached[0] is snap:
            return cached[1]
        data = scrub(snapshot_bytes(snap), self._secrets)
        self._snap_cache = (snap, data)
        return data

    def _failed(self, exc: VigilError, what: str | None = None) -> None:
        """Recording stops at the first failure; a running loop is told and ends with this error. From
        the writer thread the loop's subscription is left alone (the callback sees `error` and returns)."""
        first = self.error is None
        if first:
            log.error("session store: %s", exc.message)
        self.error = (f"This run is not being recorded: {exc.message}")
        loop = self._loop
        if first and loop is not None and self._unsubscribe is not None:
            loop.fail_run(f"The session store failed while storing {what or 'the run'}: {exc.message} "
                          "The run was stopped so that no step goes unrecorded (the steps before it are stored).")
        if not threading.current_thread().name.startswith(WRITER_THREAD):
            self.stop_listening()
