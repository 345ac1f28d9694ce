"""Engine coroutines started from Qt slots."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger("vigil.gui")


def spawn(coro: Coroutine[Any, Any, Any]) -> asyncio.Future[Any] | None:
    """Run an engine coroutine on the qasync loop without blocking the UI; errors are logged. None when
    there is no loop any more (a widget's signal during shutdown, after the engine stopped)."""
    try:
        task = asyncio.ensure_future(coro)
    except RuntimeError:  # no event loop in this thread
        coro.close()
        log.debug("not started, the event loop is gone: %s", coro)
        return None
    task.add_done_callback(_log_failure)
    return task


def _log_failure(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("UI task failed", exc_info=task.exception())
