"""A step's pictures and the page it left (issue [13]).

`StepPictures` takes the viewport pictures of a run's steps and keeps the last step's after picture
with the snapshot taken just before it: the next step's before picture when the page is unchanged
since (the snapshot cache hands back that same snapshot only while no mutation, scroll, resize,
navigation or action happened), and the sign that its page is still settled.

`AfterPicture` is a step's after picture, taken while the page settles: the settle checks the step's
expected outcome once the page is painted and quiet, and the picture is started at that moment,
alongside the check (`engine.observe.stability.on_quiet`). When the check sees the outcome, the
settle ends there and that picture is the page as the step left it; when it does not, the page may
still change, so those pictures are dropped and one is taken after the action returns."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from engine.errors import VigilError
from engine.loop.driver import PageDriver
from engine.models import ActionResult
from engine.snapshot.dom_snapshot import DomSnapshot
from engine.vision.screenshot import Screenshot

log = logging.getLogger("vigil.loop")

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


class StepPictures:
    """The pictures of a run's steps (none when `enabled` is off) on the loop's current page
    (`current()`: the loop follows new tabs), and the page the last step left."""

    def __init__(self, current: Callable[[], PageDriver], enabled: bool = True) -> None:
        self.current, self.enabled = current, enabled
        self._last: tuple[DomSnapshot, Screenshot | None, object] | None = None

    def reset(self) -> None:
        self._last = None

    async def take(self) -> Screenshot | None:
        """The viewport now (a Screenshot: JPEG and pHash), or None (pictures off or failing)."""
        if not self.enabled:
            return None
        try:
            return await self.current().screenshot()
        except Exception as exc:  # a missing picture never stops a run
            log.debug("screenshot failed: %s", exc)
            return None

    def left(self, snap: DomSnapshot | None, shot: Screenshot | None, settled: bool) -> None:
        """What the step just done left: the snapshot taken after it and then its picture, kept when the
        step ended on a settled page."""
        self._last = (snap, shot, self.current()) if snap is not None and settled else None

    def settled_snapshot(self) -> DomSnapshot | None:
        """The snapshot the last step left on a settled page, if that was on the current page (whether it
        is still the page's, the caller asks the snapshot cache)."""
        last = self._last
        return last[0] if last is not None and last[2] is self.current() else None

    def unchanged(self, snap: DomSnapshot) -> Screenshot | None:
        """The last step's after picture when `snap` is the very snapshot taken right before it on this
        page (so the page has not changed since that picture), else None."""
        last = self._last
        if last is None or last[1] is None or last[0] is not snap or last[2] is not self.current():
            return None
        return last[1]


def verified_snapshot(page: PageDriver, result: ActionResult, acted_on: object) -> DomSnapshot | None:
    """The snapshot the action's verification took last (after the action and its settle), when it
    verified on `page`; None otherwise. Taken before the after picture, so the reuse check holds."""
    if result.verification is None or acted_on is not page:
        return None
    latest = getattr(page, "latest_snapshot", None)
    return latest if isinstance(latest, DomSnapshot) else None


async def after_snapshot(page: PageDriver) -> DomSnapshot | None:
    """The page right after a step (for the record's after picture), or None if it cannot be taken."""
    try:
        return await page.snapshot()
    except VigilError as exc:
        log.debug("after-step snapshot failed: %s", exc)
        return None
