"""BackgroundWriter: a store's writes taken off the loop's critical path, in order, never lost quietly.

One worker thread runs the submitted writes one after the other, in the order they were submitted
(SQLite's commit and its fsync release the GIL, so the loop goes on with the next step meanwhile).
Each write is a `concurrent.futures.Future`: whoever submitted it can wait for it, from a thread or
(wrapped) from asyncio. A failing write does not stop the ones after it from being tried — each is
its own transaction — but its error is kept (`errors`, and `on_error` is called in the worker
thread) so the run that made it can end with a clear error. `flush()` waits for everything
submitted so far; `close()` flushes and stops the thread (the store closes its connection after).
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger("vigil.store")

WRITER_THREAD = "vigil-store"  # the worker thread's name prefix


class WriteFailed(Exception):
    """A background write failed: what it was writing and why."""

    def __init__(self, what: str, cause: BaseException) -> None:
        super().__init__(f"{what}: {cause}")
        self.what, self.cause = what, cause


class BackgroundWriter:
    def __init__(self, name: str = WRITER_THREAD) -> None:
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
        self._lock = threading.Lock()
        self._pending: set[concurrent.futures.Future] = set()
        self.errors: list[WriteFailed] = []
        self.on_error: Callable[[WriteFailed], None] | None = None
        self.closed = False

    def submit(self, fn: Callable[[], Any], what: str) -> concurrent.futures.Future:
        """Run `fn()` after every write submitted before it. A closed writer runs it here and now."""
        if self.closed:
            fut: concurrent.futures.Future = concurrent.futures.Future()
            try:
                fut.set_result(self._run(fn, what))
            except WriteFailed as exc:
                fut.set_exception(exc)
            return fut
        fut = self._pool.submit(self._run, fn, what)
        with self._lock:
            self._pending.add(fut)
        fut.add_done_callback(self._done)
        return fut

    def _run(self, fn: Callable[[], Any], what: str) -> Any:
        try:
            return fn()
        except Exception as exc:  # noqa: BLE001 — kept, reported, and raised to whoever waits for it
            err = WriteFailed(what, exc)
            log.error("session store: %s failed: %s", what, exc)
            with self._lock:
                self.errors.append(err)
            if self.on_error is not None:
                try:
                    self.on_error(err)
                except Exception:  # noqa: BLE001 — a bad listener must not hide the error
                    log.exception("store error listener failed")
            raise err from exc

    def _done(self, fut: concurrent.futures.Future) -> None:
        with self._lock:
            self._pending.discard(fut)

    def pending(self) -> list[concurrent.futures.Future]:
        """The writes submitted and not finished yet, oldest first is not guaranteed (a set)."""
        with self._lock:
            return list(self._pending)

    def flush(self, timeout: float | None = 60.0) -> bool:
        """Wait until every write submitted so far has run; False when `timeout` passed first."""
        if self.closed:
            return True
        marker = self._pool.submit(lambda: None)  # runs after everything before it
        try:
            marker.result(timeout)
        except concurrent.futures.TimeoutError:
            return False
        return True

    def close(self, timeout: float | None = 60.0) -> bool:
        """Flush, then stop the thread; later writes run in the caller's thread. False when writes were
        still running at the timeout (they finish in the background; the thread is not killed)."""
        if self.closed:
            return True
        done = self.flush(timeout)
        self.closed = True
        self._pool.shutdown(wait=done)
        return done
