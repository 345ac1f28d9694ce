"""EventBus: how the loop tells UIs (and tests, and the CLI) what is happening.

Subscribers are plain callbacks (sync or async) or async iterators from `stream()`. A failing
subscriber is logged and otherwise ignored: a broken UI widget must never break a run.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable

from engine.models.loop import LoopEvent

log = logging.getLogger("vigil.loop.events")

Subscriber = Callable[[LoopEvent], object]  # what it returns is awaited when it is awaitable


class EventBus:
    """Publish typed loop events (`engine.models.loop`) to every subscriber, in publish order."""

    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []
        self._queues: set[asyncio.Queue[LoopEvent | None]] = set()
        self._tasks: set[asyncio.Future[object]] = set()
        self.closed = False

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call `callback(event)` for every event; returns a function that unsubscribes.

        An async callback is scheduled as a task (so a slow UI never stalls the loop);
        `drain()` waits for the ones still running."""
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    def publish(self, event: LoopEvent) -> None:
        """Deliver `event` to every callback and stream. Never raises because of a subscriber."""
        for cb in list(self._subscribers):
            try:
                res = cb(event)
                if inspect.isawaitable(res):
                    task = asyncio.ensure_future(res)
                    self._tasks.add(task)
                    task.add_done_callback(self._task_done)
            except Exception:  # a subscriber's bug is logged, never propagated into the loop
                log.exception("event subscriber %r failed on %s", cb, type(event).__name__)
        for q in list(self._queues):
            q.put_nowait(event)

    def _task_done(self, task: asyncio.Future[object]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("async event subscriber failed", exc_info=task.exception())

    async def drain(self) -> None:
        """Wait until every async callback scheduled so far has finished."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def stream(self) -> EventStream:
        """`async for event in bus.stream():` — every event published from this call on, until
        `close()` (or the stream's own `close()`). The queue is registered at once, so nothing
        published between creating the stream and first iterating it is lost."""
        return EventStream(self)

    def close(self) -> None:
        """End every open `stream()`; callbacks stay subscribed."""
        self.closed = True
        for q in list(self._queues):
            q.put_nowait(None)


class EventStream:
    """An async iterator over a bus's events, backed by an asyncio.Queue."""

    def __init__(self, bus: EventBus) -> None:
        self._bus = bus
        self._queue: asyncio.Queue[LoopEvent | None] = asyncio.Queue()
        self._done = bus.closed
        if not self._done:
            bus._queues.add(self._queue)

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> LoopEvent:
        if self._done:
            raise StopAsyncIteration
        ev = await self._queue.get()
        if ev is None:  # the bus closed
            self.close()
            raise StopAsyncIteration
        return ev

    def close(self) -> None:
        """Stop receiving events."""
        self._done = True
        self._bus._queues.discard(self._queue)
