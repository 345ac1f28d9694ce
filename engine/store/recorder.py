"""SessionRecorder: one tab's session, written to the store while loops run in that tab.

The first task run in a tab creates the session (titled `{domain}: {task}`); later tasks in the same
tab append to it (messages and steps carry on numbering), and navigating keeps it — the session's
url and domain follow the page. The recorder listens to the loop's event bus. Each step (record and
snapshots) is committed in the callback, before the loop goes on to the next one — a killed process
never loses a recorded step. An after picture that came after its step's record
(`StepPictureTaken`) is added to the stored step by a background write, queued before the next step's
input; so are the pictures that came with the record (transcoded to WebP on the
writer thread: `Store.add_step_pictures`). The chat messages and plan updates around a step go to the store's
background writer (`engine.store.writer`: one thread, in order, flushed before each step is
written), so their fsyncs are off the loop's critical path. The loop waits for every write of a
run before the run ends (`AgentLoop.track_write`), `finish()` flushes, and so does `Store.close()`
(a run ended by Ctrl+C). A failing write ends the run with a clear error (`AgentLoop.fail_run`) — never
a run that goes on unrecorded without saying so; the first failure is kept in `error` (and logged)
for the UI to show, and recording stops.

A full disk (`engine.store.reserve`): before each step's input the room for its record is checked (the step
does not run without it); a write that meets a full disk frees the reserve kept beside the store and is tried
again, the run stops before its next step, and its last writes go into that room. A step that acted and still
could not be stored is named in `error`, numbered as the run shows it (`[11]` is step 11).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Any

from engine.errors import ErrorCode, VigilError
from engine.loop.runner import AgentLoop
from engine.models import (
    MessageAdded,
    PlanUpdated,
    RunResult,
    StepPictureTaken,
    StepProposed,
    StepRecord,
    StepRecorded,
)
from engine.models.loop import LoopEvent
from engine.secret_values import scrub
from engine.snapshot.dom_snapshot import DomSnapshot
from engine.snapshot.stored import snapshot_bytes
from engine.store.downloads import downloads_folder
from engine.store.reserve import disk_full, full_advice, megabytes, reserve_for
from engine.store.store import Store
from engine.store.writer import WRITER_THREAD

log = logging.getLogger("vigil.store")
PLAN_STATUS_EVERY_S = 2.0


class NoRoom(VigilError):
    """The disk holding the store has no room for a step's record: nothing more may act."""

    code = ErrorCode.STORE_ERROR


def acted(rec: StepRecord) -> bool:
    """Whether a step did something in the page (a stopped, skipped or refused one did not)."""
    return rec.action is not None and rec.status in ("completed", "failed")


# step blob roles → blob kind
SCREENSHOT_ROLES = ("screenshot_before", "screenshot_after")
SNAPSHOT_ROLES = ("snapshot_before", "snapshot_after")


class SessionRecorder:
    """`rec.start(loop, task, url, planner=…, policy=…)` before `loop.run(task)`, `rec.finish(result)` after."""

    def __init__(self, store: Store, session_id: str | None = None, *, background: bool = True):
        self.store = store
        self.session_id = session_id
        self.error: str | None = None
        self.cause: str | None = None  # the first failure alone (`error` says what it means for the run)
        self.cause_code: str = ErrorCode.STORE_ERROR  # its code (STORE_CORRUPT for a damaged store …)
        self.background = background  # writes on the store's writer thread (False: written in the callback)
        self._url: str | None = None
        self._seq0 = self._step0 = 0
        self._plan_steps: list[str] | None = None
        self._plan_pending: Any = None  # the latest statuses of the plan, not yet written (`finish` writes them)
        self._plan_written = 0.0  # (time.monotonic()) when the plan was last written
        self._unsubscribe: Callable[[], None] | None = None
        self._snap_cache: tuple[DomSnapshot, bytes] | None = None  # consecutive steps share one snapshot
        self._loop: AgentLoop | None = None
        self._downloads: Any = None  # the browser's DownloadKeeper while a run saves into this session's folder
        self._secrets: set[str] = set()  # typed secrets of this tab's runs (memory only), scrubbed from all we write
        self.reserve = reserve_for(store.path)  # room for the step that acts when the disk fills up
        self._disk_full = False  # the disk filled up: the run is stopping, its last writes use the reserve's room
        self._unstored: list[int] = []  # steps (numbered as shown) that acted on the page and could not be stored

    # -- a run ---------------------------------------------------------------------------------
    def start(self, loop: AgentLoop, task: str, url: str, *, planner: str, policy: str,
              metadata: dict[str, Any] | None = None) -> str | None:
        """Open (or resume) the tab's session for a run of `task` and subscribe to the loop; returns
        the session id, or None when the store failed (see `error`)."""
        self.stop_listening()
        self.error = self.cause = None
        self._disk_full, self._unstored = False, []
        try:
            if not self.reserve.ready():
                raise self._no_room()
            if self.session_id is None:
                self.session_id = self.store.create_session(task, url, planner, policy, metadata)
                self._url = url
            else:
                self.store.resume(self.session_id, planner, policy)
                self.page_moved(url)
            self._seq0, self._step0 = self.store.next_indexes(self.session_id)
            if self._disk_full:  # the disk filled up as the session was resumed: its room is spent already
                raise NoRoom(f"The run cannot be recorded: the disk holding the session store {self.store.path} is "
                             f"full. {full_advice(self.store.path)}")
        except (VigilError, sqlite3.Error, OSError) as exc:
            full = self._disk_full or disk_full(exc) or isinstance(exc, NoRoom)
            self._failed(self._as_error(exc) if not isinstance(exc, VigilError) else exc)
            if full:
                self._refuse(loop)
            return None
        self.error = self.cause = None  # (the session's address not updated as it resumed does not stop a run)
        self._plan_steps, self._plan_pending, self._plan_written = None, None, 0.0
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

    def _refuse(self, loop: AgentLoop) -> None:
        """A full disk at the start: a caller that runs the loop anyway sees it stop at its first event, before
        any step acts (nothing of it could be stored)."""
        reason = self.cause or "The session store has no room left."
        self._loop = loop
        self._unsubscribe = loop.bus.subscribe(lambda ev: loop.fail_run(reason))

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
        sid = self.session_id
        try:
            self.page_moved(result.url)
            pending, self._plan_pending = self._plan_pending, None
            if pending is not None:
                self._with_room(lambda: self.store.save_plan(sid, pending, new_version=False), "the plan")
            self._with_room(lambda: self.store.finish(sid, result.status if result.status != "running"
                                                      else "interrupted", reason=result.reason, answer=result.answer),
                            "the run's end")
        except VigilError as exc:
            self._failed(exc)
        except (sqlite3.Error, OSError) as exc:
            self._failed(self._as_error(exc))

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
        sid = self.session_id
        try:
            self._with_room(lambda: self.store.update_url(sid, url), "the session's address")
            self._url = url
        except VigilError as exc:
            self._failed(exc)
        except (sqlite3.Error, OSError) as exc:
            self._failed(self._as_error(exc))

    # -- events --------------------------------------------------------------------------------
    def _on_event(self, ev: LoopEvent) -> None:
        if self.error or self.session_id is None:
            if self.error and isinstance(ev, StepRecorded):
                self._not_stored(ev.record)  # recording stopped before this step was published
            return
        if isinstance(ev, StepProposed):
            self._before_input(ev.step_index)
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
            what = f"the chat message of step {step + 1}" if isinstance(step, int) else "a chat message"
            self._write(lambda: self.store.add_message(sid, msg), what)
        elif isinstance(ev, PlanUpdated):
            steps = [s.description for s in ev.plan.steps]
            plan, new = ev.plan, steps != self._plan_steps
            self._plan_steps = steps
            # a new plan is written at once; a step's status at most every PLAN_STATUS_EVERY_S and at the run's
            # end (a 10,000-step plan is 100 ms to write: twice a step, it made a step's cost grow with the script)
            if new or time.monotonic() - self._plan_written >= PLAN_STATUS_EVERY_S:
                self._plan_pending, self._plan_written = None, time.monotonic()
                self._write(lambda: self.store.save_plan(sid, plan, new_version=new), "the plan")
            else:
                self._plan_pending = plan
        elif isinstance(ev, StepRecorded):
            # a step is committed before the loop goes on (a killed process never loses a recorded step);
            # the messages and plan updates around it are written in the background, before it, in order
            # numbered as the run shows it (`vigil run` prints step 11 as [11]), not as stored
            self._write(lambda: self._step(ev), f"step {ev.record.index + 1}", now=True, step=ev.record)
        elif isinstance(ev, StepPictureTaken):  # a step's after picture, taken after its record was stored
            a, index = ev.artifacts, ev.step_index + self._step0
            if a is not None and a.screenshot_after:
                jpeg, fields = a.screenshot_after, {"screenshot_after": ev.screenshot_after,
                                                    "screenshot_distance": ev.screenshot_distance}
                self._write(lambda: self.store.add_step_picture(sid, index, "screenshot_after", jpeg, fields),
                            f"step {ev.step_index + 1}'s after picture")

    def _write(self, fn: Callable[[], object], what: str, *, now: bool = False, step: StepRecord | None = None) -> None:
        """Run one write: on the writer thread (tracked by the run, which waits for it), or — `now`, or
        without a background writer — here, after the writes queued before it. `step`: the record it stores."""
        def run() -> None:
            if self.error:  # recording stopped at an earlier failure
                if step is not None:
                    self._not_stored(step)
                return
            try:
                self._with_room(fn, what, step)
            except VigilError as exc:
                self._failed(exc, what, step)
                raise
            except (sqlite3.Error, OSError) as exc:  # the store's own words say it: no traceback
                self._failed(self._as_error(exc), what, step)
                raise
            except Exception as exc:
                log.exception("recording the session failed")
                self._failed(VigilError(f"Recording the session failed: {type(exc).__name__}: {exc}",
                                        code=ErrorCode.STORE_ERROR), what, step)
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
        pictures: dict[str, bytes] = {}
        a = ev.artifacts
        if a is not None:
            for role in SCREENSHOT_ROLES:
                data = getattr(a, role)
                if data:
                    pictures[role] = data
            for role in SNAPSHOT_ROLES:
                snap = getattr(a, role)
                if snap is not None:
                    files[role] = ("snapshot", self._snapshot_bytes(snap))
        if not self.background:
            files.update({role: ("screenshot", data) for role, data in pictures.items()})
        self.store.add_step(self.session_id, rec, files=files)
        if self.background and pictures:
            # the pictures follow the record on the writer thread (transcoded to WebP there, ~15-40 ms): as the
            # late after picture does, written before the next step's record and before the run ends
            sid, index = self.session_id, rec.index
            self._write(lambda: self.store.add_step_pictures(sid, index, pictures), f"step {ev.record.index + 1}'s "
                        "pictures")
        if rec.url_after:
            self.page_moved(rec.url_after)

    def _snapshot_bytes(self, snap: DomSnapshot) -> bytes:
        cached = self._snap_cache
        if cached is not None and cached[0] is snap:
            return cached[1]
        data = scrub(snapshot_bytes(snap), self._secrets)
        self._snap_cache = (snap, data)
        return data

    # -- a full disk ---------------------------------------------------------------------------
    def _with_room(self, fn: Callable[[], object], what: str, step: StepRecord | None = None) -> None:
        """`fn()`; when the disk is full, once more in the room the reserve frees — and the run stops before
        its next step. A second failure goes to the caller."""
        try:
            fn()
            return
        except Exception as exc:  # noqa: BLE001 — anything but a full disk goes to the caller as it is
            if not disk_full(exc):
                raise
        first, self._disk_full = not self._disk_full, True  # (before the room is freed: see _before_input)
        self.reserve.release()  # (another recorder of this store may have freed it already: tried anyway)
        fn()
        if first:
            self._stop_for_full(step)

    def _stop_for_full(self, step: StepRecord | None) -> None:
        """The disk filled up and a write went into the reserve's room: the run stops before its next step."""
        path = self.store.path
        done = (f"Step {step.index + 1} is stored (in the room Vigil keeps free for this), and the run was stopped "
                "before its next step could act." if step is not None and acted(step)
                else "The run was stopped before its next step could act.")
        if self._loop is not None and self._unsubscribe is not None:
            self._loop.fail_run(f"The disk holding the session store {path} is full. {done} {full_advice(path)}")

    def _before_input(self, index: int) -> None:
        """Step `index` is proposed: it runs only when its record surely has room (the reserve in place). Once the
        disk filled up under this run the room is there, freed for the steps under way, and the run is stopping."""
        if self._disk_full or self.reserve.ready():
            return
        self._disk_full = True  # the run stops here: nothing more of it needs room
        if self._loop is not None:
            self._loop.fail_run(self._no_room(f"Step {index + 1} was not run").message)

    def no_room(self) -> str | None:
        """Why a run may not start now (the disk holding the store is too full to record its steps), or None."""
        return None if self.reserve.ready() else self._no_room().message

    def _no_room(self, head: str = "The run cannot be recorded") -> NoRoom:
        free = self.reserve.free()
        left = f" ({megabytes(free)} left)" if free is not None else ""
        return NoRoom(f"{head}: the disk holding the session store {self.store.path} is almost full{left}, and "
                      f"Vigil keeps {megabytes(self.reserve.size)} free there so that a step that acts can always be "
                      f"recorded. {full_advice(self.store.path)}")

    def _as_error(self, exc: BaseException) -> VigilError:
        """A store or file-system error in words (a full disk: where, and what to do)."""
        if disk_full(exc):
            return VigilError(f"the disk holding the session store {self.store.path} is full. "
                              f"{full_advice(self.store.path)}", code=ErrorCode.STORE_ERROR)
        return VigilError(f"Recording the session failed: {type(exc).__name__}: {exc}", code=ErrorCode.STORE_ERROR)

    def _not_stored(self, rec: StepRecord) -> None:
        """A step that could not be stored: named in `error` when it acted on the page."""
        n = rec.index + 1
        if acted(rec) and n not in self._unstored:
            self._unstored.append(n)
            self._say_error()

    def _say_error(self, refused: bool = False) -> None:
        acted = ", ".join(str(n) for n in self._unstored)
        which = (f" Step {acted} acted on the page and is not in the session store." if len(self._unstored) == 1
                 else f" Steps {acted} acted on the page and are not in the session store." if self._unstored
                 else "")
        head = "" if refused else "This run is not being recorded: "  # (a refused run's cause says it already)
        self.error = f"{head}{self.cause}{which}"

    def _failed(self, exc: VigilError, what: str | None = None, step: StepRecord | None = None) -> None:
        """Recording stops at the first failure; a running loop is told and ends with this error. From
        the writer thread the loop's subscription is left alone (the callback sees `error` and returns)."""
        first = self.error is None
        if first:
            log.error("session store: %s", exc.message)
            self.cause, self.cause_code = exc.message, str(exc.code or ErrorCode.STORE_ERROR)
        if step is not None:
            self._not_stored(step)
        self._say_error(refused=isinstance(exc, NoRoom) and self.cause == exc.message)
        loop = self._loop
        if first and loop is not None and self._unsubscribe is not None:
            if step is not None and step.index + 1 in self._unstored:
                loop.fail_run(f"Step {step.index + 1} acted on the page but could not be stored: {exc.message} "
                              "The run was stopped there (the steps before it are stored).")
            else:
                loop.fail_run(f"The session store failed while storing {what or 'the run'}: {exc.message} "
                              "The run was stopped so that no step goes unrecorded (the steps before it are stored).")
        if not threading.current_thread().name.startswith(WRITER_THREAD):
            self.stop_listening()
