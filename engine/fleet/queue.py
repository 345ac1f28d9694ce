"""One approval queue for every run of a fleet.

Each run's loop gets its own gate (`ApprovalQueue.gate(run)` → `FleetGate`, an `ApprovalGate` with a
person present). When a loop asks, its question becomes a `QueueEntry` at the end of `waiting` (the
order asked), naming its run; the loop waits until someone answers that entry — in any order — with a
`Decision` of the same kinds as a single run (approve, edit, skip, reject with a reason, take over, stop =
stop this run). A loop stopped while it waits (its run stopped, the fleet stopped, its browser gone)
withdraws its entry.

Every change is told at once, on the event loop's thread, to the functions given to `subscribe(fn)` —
`fn(QueueChange)`, called synchronously inside `decide` before it starts waiting, so a UI hears of a
step in the same loop iteration it was asked in — and sets `changed` (an asyncio.Event the listener
clears). Each entry carries `asked_at` (time.time() when the loop asked), `shown_at` (stamped by the UI
with `mark_shown(id)` when it has painted the entry) and `answered_at`: "proposed → shown" is
`shown_at - asked_at`.

`answer()` may be called from another thread (it is then handed to the loop's thread).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from engine.errors import ErrorCode, VigilError
from engine.models import ApprovalRequest, Decision

log = logging.getLogger("vigil.fleet")

ChangeKind = Literal["asked", "answered", "withdrawn", "shown"]


@dataclass
class QueueEntry:
    """One question of one run, waiting (or once waiting) in the fleet's queue."""

    id: int                       # unique in the queue, increasing in the order asked
    run: str                      # the run's name
    run_index: int                # its index in the fleet
    request: ApprovalRequest      # what the loop asks (summary, target, sensitive reasons, warnings, dialog …)
    asked_at: float               # time.time() when the loop asked
    asked_mono: float             # time.monotonic() then (for durations)
    shown_at: float | None = None     # time.time() when a UI said it showed it (`mark_shown`)
    answered_at: float | None = None
    decision: Decision | None = None
    withdrawn: bool = False           # the loop stopped waiting without an answer (run stopped, browser gone)
    _future: asyncio.Future[Decision] | None = field(default=None, repr=False)

    @property
    def waiting(self) -> bool:
        return self.decision is None and not self.withdrawn

    @property
    def shown_after_ms(self) -> float | None:
        """How long after it was asked a UI showed it (None until `mark_shown`)."""
        return None if self.shown_at is None else round((self.shown_at - self.asked_at) * 1000, 1)

    def describe(self) -> str:
        return f"[{self.run}] step {self.request.step_index + 1}: {self.request.summary}"


@dataclass
class QueueChange:
    kind: ChangeKind
    entry: QueueEntry


class QueueError(VigilError):
    code = ErrorCode.BAD_ARGUMENT


class ApprovalQueue:
    """The fleet's one queue of questions (see the module's docstring)."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self._entries: dict[int, QueueEntry] = {}
        self._listeners: list[Callable[[QueueChange], None]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: int | None = None
        self.changed = asyncio.Event()
        self.history: list[QueueEntry] = []   # every entry ever asked, in order (answered ones too)

    # -- gates ---------------------------------------------------------------------------------
    def gate(self, run: str, run_index: int = 0) -> FleetGate:
        """The gate for one run's loop: its questions go into this queue, named `run`."""
        return FleetGate(self, run, run_index)

    # -- reading -------------------------------------------------------------------------------
    @property
    def waiting(self) -> list[QueueEntry]:
        """The questions waiting for an answer, in the order they were asked."""
        return [e for e in self._entries.values() if e.waiting]

    def waiting_for(self, run: str) -> list[QueueEntry]:
        return [e for e in self.waiting if e.run == run]

    def get(self, entry_id: int) -> QueueEntry:
        e = self._entries.get(entry_id)
        if e is None:
            raise QueueError(f"There is no question {entry_id} in the queue.")
        return e

    def subscribe(self, fn: Callable[[QueueChange], None]) -> Callable[[], None]:
        """Call `fn(change)` on every change (asked, answered, withdrawn, shown); returns a function that
        stops it. `fn` runs on the event loop's thread and must not block."""
        self._listeners.append(fn)
        return lambda: self._listeners.remove(fn) if fn in self._listeners else None

    async def next_waiting(self, after: int = 0) -> QueueEntry:
        """The oldest waiting question with an id above `after`, waiting until there is one."""
        while True:
            for e in self.waiting:
                if e.id > after:
                    return e
            self.changed.clear()
            await self.changed.wait()

    # -- answering -----------------------------------------------------------------------------
    def answer(self, entry_id: int, decision: Decision) -> None:
        """Answer one waiting question (in any order). QueueError when it is not waiting (answered already,
        or withdrawn). Safe from another thread: the answer is then handed to the loop's thread."""
        if not isinstance(decision, Decision):
            raise QueueError(f"An answer must be a Decision, not {decision!r}.")
        if self._loop is not None and threading.get_ident() != self._thread:
            e = self._entries.get(entry_id)
            if e is None or not e.waiting:
                raise QueueError(f"Question {entry_id} is not waiting for an answer.")
            self._loop.call_soon_threadsafe(self._answer_quietly, entry_id, decision)
            return
        self._answer(entry_id, decision)

    def _answer_quietly(self, entry_id: int, decision: Decision) -> None:
        try:
            self._answer(entry_id, decision)
        except QueueError as exc:
            log.info("an answer from another thread came too late: %s", exc.message)

    def _answer(self, entry_id: int, decision: Decision) -> None:
        e = self.get(entry_id)
        if not e.waiting:
            state = "was withdrawn (its run stopped)" if e.withdrawn else "is answered already"
            raise QueueError(f"Question {entry_id} ({e.run}) {state}.")
        e.decision, e.answered_at = decision, time.time()
        if e._future is not None and not e._future.done():
            e._future.set_result(decision)
        self._emit("answered", e)

    def approve(self, entry_id: int) -> None:
        self.answer(entry_id, Decision.approve())

    def reject(self, entry_id: int, reason: str | None = None) -> None:
        self.answer(entry_id, Decision(kind="reject", reason=reason))

    def skip(self, entry_id: int) -> None:
        self.answer(entry_id, Decision(kind="skip"))

    def stop_run(self, run: str, reason: str = "stopped by the person") -> int:
        """Answer every waiting question of `run` with stop; how many there were."""
        n = 0
        for e in self.waiting_for(run):
            self._answer(e.id, Decision(kind="stop", reason=reason))
            n += 1
        return n

    def stop_all(self, reason: str = "the whole fleet was stopped") -> int:
        """Answer every waiting question with stop (the fleet stops them; `Fleet.stop_all` does both)."""
        n = 0
        for e in self.waiting:
            self._answer(e.id, Decision(kind="stop", reason=reason))
            n += 1
        return n

    def mark_shown(self, entry_id: int) -> float | None:
        """A UI showed this question: stamps `shown_at` (the first time only); returns `shown_after_ms`."""
        e = self.get(entry_id)
        if e.shown_at is None:
            e.shown_at = time.time()
            self._emit("shown", e)
        return e.shown_after_ms

    # -- inside ----------------------------------------------------------------------------------
    def _emit(self, kind: ChangeKind, e: QueueEntry) -> None:
        self.changed.set()
        change = QueueChange(kind, e)
        for fn in list(self._listeners):
            try:
                fn(change)
            except Exception:  # a broken listener must not stop a run
                log.exception("fleet queue listener failed")

    async def _ask(self, run: str, run_index: int, request: ApprovalRequest) -> Decision:
        loop = asyncio.get_running_loop()
        self._loop, self._thread = loop, threading.get_ident()
        e = QueueEntry(id=next(self._ids), run=run, run_index=run_index, request=request, asked_at=time.time(),
                       asked_mono=time.monotonic())
        e._future = loop.create_future()
        self._entries[e.id] = e
        self.history.append(e)
        self._emit("asked", e)
        try:
            return await e._future
        finally:
            if e.decision is None:
                e.withdrawn = True
                self._emit("withdrawn", e)


class FleetGate:
    """One run's gate onto the fleet's queue (`ApprovalQueue.gate`). A person answers it."""

    person_present = True

    def __init__(self, queue: ApprovalQueue, run: str, run_index: int) -> None:
        self.queue, self.run, self.run_index = queue, run, run_index
        self.requests: list[ApprovalRequest] = []

    async def decide(self, request: ApprovalRequest) -> Decision:
        self.requests.append(request)
        return await self.queue._ask(self.run, self.run_index, request)
