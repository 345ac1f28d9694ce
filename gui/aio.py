"""Engine coroutines started from Qt slots."""

from __future__ import annotations

import asyncio
import logging

log = logging.getLogger("vigil.gui")


def spawn(coro) -> asyncio.Task:
    """Run an engine coroutine on the qasync loop without blocking the UI; errors are logged."""
    task = asyncio.ensure_future(coro)
    task.add_done_callback(lambda t: t.cancelled() or (t.exception() and log.error("UI task failed", exc_info=t.exception())))
    return task
