"""A run's Stop: asked for from any task or thread, honoured by the run at once wherever it waits (the
gate, the planner, a target to appear) and after the action when one is under way."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar, cast

from engine.races import unless

T = TypeVar("T")


class Stopped(Exception):
    """A stop request ended the run."""


class StopSignal:
    def __init__(self) -> None:
        self.requested = False
        self._event: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def start(self) -> None:
        """A run begins on the running event loop (a stop asked for before it still counts)."""
        self._loop = asyncio.get_running_loop()
        self._event = asyncio.Event()
        if self.requested:
            self._event.set()

    def request(self) -> None:
        """Ask for the stop. Safe from any task, and from another thread."""
        self.requested = True
        if self._loop is None or self._event is None:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            self._event.set()
        else:
            self._loop.call_soon_threadsafe(self._event.set)

    def clear(self) -> None:
        """The run ended: the loop may run again."""
        self.requested = False

    async def until(self, aw: Awaitable[T]) -> T:
        """Await `aw` unless a stop request comes first (then cancel it and raise Stopped). A stop wins a
        tie: nothing may run after it was asked for."""
        stop = self._event
        if stop is None:  # not inside a run
            return await aw
        if stop.is_set():
            if asyncio.iscoroutine(aw):
                aw.close()
            raise Stopped
        try:
            finished, result = await unless(aw, stop.wait(), interrupt_wins_tie=True)
        except Exception:
            if stop.is_set():  # it failed because, or while, the person stopped: the stop is what happened
                raise Stopped from None
            raise
        if not finished or stop.is_set():
            raise Stopped
        return cast(T, result)
