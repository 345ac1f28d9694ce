"""Engine coroutines started from Qt slots."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger("vigil.gui")


def spawn(coro: Coroutine[Any, Any, Any]) -> asyncio.Future[Any]:
    """Run an engine coroutine on the qasync loop without blocking the UI; errors are logged."""
    task = asyncio.ensure_future(coro)
    task.add_done_callback(_log_failure)
    return task


def _log_failure(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("UI task failed", exc_info=task.exception())
