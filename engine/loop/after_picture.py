"""A step's after-picture, taken while the page settles (issue [13]).

The settle checks the step's expected outcome once the page is painted and quiet; the picture is
started at that moment, alongside the check (`engine.observe.stability.on_quiet`). When the check sees
the outcome, the settle ends there and that picture is the page as the step left it; when it does not,
the page may still change, so those pictures are dropped and one is taken after the action returns."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from engine.vision.screenshot import Screenshot

Take = Callable[[], Awaitable[Screenshot | None]]


class AfterPicture:
    def __init__(self, take: Take) -> None:
        self._take = take
        self._tasks: list[asyncio.Future] = []

    def __call__(self) -> None:
        """The page is painted and quiet and its outcome is about to be checked: start a picture."""
        self._tasks.append(asyncio.ensure_future(self._take()))

    async def result(self, settled_on_last_check: bool) -> Screenshot | None:
        """The after-picture: the one started at the check that ended the settle, or a new one."""
        last = self._tasks.pop() if settled_on_last_check and self._tasks else None
        await self.drop()
        return await (last if last is not None else self._take())

    async def drop(self) -> None:
        """Cancel the pictures not used (their page was still changing)."""
        tasks, self._tasks = self._tasks, []
        for t in tasks:
            t.cancel()
        for t in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
