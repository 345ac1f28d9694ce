"""A run's background writes (the session store's): the run does not end before they have finished."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging

log = logging.getLogger("vigil.loop")

WRITES_TIMEOUT_S = 60.0  # how long a run's end waits for its background writes


class RunWrites:
    def __init__(self) -> None:
        self._pending: list[concurrent.futures.Future] = []

    def reset(self) -> None:
        self._pending = []

    def track(self, fut: concurrent.futures.Future) -> None:
        self._pending = [f for f in self._pending if not f.done()]
        self._pending.append(fut)

    async def drain(self, timeout: float = WRITES_TIMEOUT_S) -> str | None:
        """Wait for the pending writes; what went wrong, or None."""
        pending = [f for f in self._pending if not f.done()]
        if pending:
            _, late = await asyncio.to_thread(concurrent.futures.wait, pending, timeout)
            if late:
                return (f"{len(late)} write(s) of the session store did not finish within {timeout:g} s; "
                        "the last steps may be missing from the session.")
        return None

    def drain_now(self, timeout: float = WRITES_TIMEOUT_S) -> None:
        """The same from a run being cancelled (no awaiting): block for the pending writes, bounded."""
        pending = [f for f in self._pending if not f.done()]
        if pending:
            _, late = concurrent.futures.wait(pending, timeout)
            if late:
                log.error("%d session store write(s) still pending after %g s at cancellation", len(late), timeout)
