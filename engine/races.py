"""Awaiting one thing unless another happens first: a page call unless a dialog blocks the page
(engine.tab), a step's work unless the person presses Stop (engine.loop.runner); several at once, none
left running when one fails (`together`); and clean-up that must finish however often it is cancelled
(`to_the_end`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")


async def unless(aw: Awaitable[T], interrupt: Awaitable[Any], *,
                 interrupt_wins_tie: bool = False) -> tuple[bool, T | None]:
    """Await `aw` unless `interrupt` completes first. Returns (True, result of aw), or (False, None)
    when the interrupt came first: then `aw` has been cancelled and reaped, so nothing of it runs on.
    `aw`'s own exceptions propagate. When both are done at once, `aw` wins unless `interrupt_wins_tie`
    (a Stop must win: nothing may run after it was asked for)."""
    task = asyncio.ensure_future(aw)
    other = asyncio.ensure_future(interrupt)
    try:
        await asyncio.wait({task, other}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        other.cancel()
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    interrupted = other.done() and not other.cancelled()
    if task.cancelled() or (interrupted and interrupt_wins_tie):
        if not task.cancelled():
            task.exception()  # retrieved, so an error of the abandoned call is not reported as lost
        return False, None
    return True, task.result()


async def together(*steps: Awaitable[Any]) -> list[Any]:
    """The results of `steps`, run at once; the first error is raised once the others are cancelled and reaped
    (none is left running behind the caller's back)."""
    tasks = [asyncio.ensure_future(s) for s in steps]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


RESTARTS = 3
"""How often one clean-up step is started again after being cancelled (asyncio.run's shutdown cancels once)."""


async def to_the_end(*steps: Callable[[], Awaitable[Any]], limit: float = 15.0) -> None:
    """Run each clean-up step in turn to its end, however often the caller is cancelled meanwhile (Ctrl+C cancels a
    fleet's runs, and `asyncio.run` cancels what is left again as it shuts down): a grid session left behind holds
    a slot until the grid's own timeout. A step cancelled from outside is started again (`RESTARTS` times at most),
    one that fails — or cancels itself — is left, and all of them together get `limit` seconds. The caller's
    cancellation is raised once they are done."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit

    async def run_all() -> None:
        for step in steps:
            restarts = 0
            while loop.time() < deadline:
                try:
                    await asyncio.wait_for(step(), deadline - loop.time())
                    break
                except asyncio.CancelledError:  # (the loop shutting down cancels this task too): again
                    task = asyncio.current_task()
                    # a step that cancelled itself (no one cancelled this task) would only do so again
                    if task is None or not task.cancelling() or restarts >= RESTARTS:
                        break
                    task.uncancel()
                    restarts += 1
                except Exception:  # noqa: BLE001 - a failed clean-up step does not keep the next from running
                    break

    work = asyncio.ensure_future(run_all())
    cancelled = False
    while not work.done():
        try:
            await asyncio.shield(work)
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError
