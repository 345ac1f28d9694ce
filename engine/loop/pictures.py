"""A step's pictures and the page it left (issues [13], [5/7]).

`StepPictures` takes the viewport pictures of a run's steps and keeps the last step's after picture
with the snapshot taken just before it: the next step's before picture when the page is unchanged
since (the snapshot cache hands back that same snapshot only while nothing it holds changed: no
mutation, scroll, resize, navigation or action, or a walk again that reused every node), and the sign
that its page is still settled. That picture may still be on its way (a `Pending` one): whoever needs
it waits for it then.

`AfterPicture` is a step's after picture, kept off the step's critical path. Pictures are started
while the action runs: in a headless browser the moment its input has been dispatched (a capture
shows the page as it is when asked: the browser paints a new frame for it), and on every browser
each time the settle is about to check the expected outcome on a painted, quiet page
(`engine.observe.stability.on_quiet`). Each records the page's mark (every frame's DOM version,
bumped by any mutation, input or scroll) just before it was asked for. At the step's end the latest
one whose mark is the page's mark then — and that began after the last request of the action ended
and after the last moving animation the settle saw — is the after picture: nothing changed after its
frame. When none qualifies, a new one is asked for then. A picture begun at an outcome check whose mark
is the last one's takes that one's frame (no second capture). The step does not wait for a picture still
being taken: `LatePicture` sends it after the step's record, before the next step's input goes out (the planner
may be asked and the next step judged meanwhile: an MCP client gets the step's result without waiting for its
picture, and its next call's checks overlap it)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import cast

from engine.errors import VigilError
from engine.loop.driver import PageDriver
from engine.models import ActionResult, StepArtifacts, StepPictureTaken, StepRecord
from engine.observe.stability import PageMark, QuietPage, StabilityResult, page_mark
from engine.snapshot.dom_snapshot import DomSnapshot
from engine.vision.screenshot import Screenshot, hash_distance, on_capture_asked, warm_hashing

log = logging.getLogger("vigil.loop")

Take = Callable[[], Awaitable[Screenshot | None]]
ASK_TIMEOUT_S = 2.0  # how long a step waits for its after picture to be asked of the browser (not taken)
Pending = asyncio.Future  # of Screenshot | None: a picture still being taken


@dataclass
class _Candidate:
    mark: asyncio.Future   # PageMark | None, read just before the picture was asked for
    shot: asyncio.Future   # Screenshot | None
    early: bool            # started at the dispatch (else at an outcome check)


def _target(page: object) -> object | None:
    """The page's CDP target (a Tab's), or None for a driver without one (then no mark is read)."""
    return getattr(page, "target", None)


def _headless(target: object) -> bool:
    return bool(getattr(getattr(target, "owner", None), "headless", False))


class AfterPicture:
    def __init__(self, take: Take, page: PageDriver | None = None) -> None:
        self._take = take
        self._target = _target(page) if page is not None else None
        self._early = self._target is not None and _headless(self._target)
        self._candidates: list[_Candidate] = []
        self.settle: StabilityResult | None = None

    # -- told by the settle (engine.observe.stability.SettleWatcher) ---------------------------------
    def dispatched(self) -> None:
        """The action's input went out: in a headless browser, start a picture now."""
        if self._early:
            self._start(early=True)

    def quiet(self, page: QuietPage) -> None:
        """The page is painted and quiet and its outcome is about to be checked: start a picture — unless
        the last one started still shows it (its mark read, the page's only frame still at that version,
        nothing the version does not count changed since it). On a page with child frames the version is
        not known here: the new picture reads the mark of every frame first, and takes the last picture's
        frame instead of a new one when nothing changed since that picture was asked for."""
        last = self._candidates[-1] if self._candidates else None
        if last is not None and last.mark.done() and not last.mark.cancelled() and last.mark.exception() is None:
            m: PageMark | None = last.mark.result()
            if (m is not None and page.version is not None and len(m.versions) == 1
                    and m.nav == getattr(self._target, "nav_count", -1)
                    and m.versions[0][1] == page.version and m.at > page.changed_at):
                return
        self._start(early=False, changed_at=page.changed_at)

    def settled(self, result: StabilityResult) -> None:
        self.settle = result

    def _start(self, *, early: bool, changed_at: float = 0.0) -> None:
        target = self._target
        mark: asyncio.Future = asyncio.ensure_future(page_mark(target)) if target is not None else _done(None)  # type: ignore[arg-type]
        last = self._candidates[-1] if self._candidates else None

        async def shoot() -> Screenshot | None:
            with contextlib.suppress(Exception):
                m = await mark  # asked for after the mark was read: everything before it is in its frame
                if last is not None and m is not None and await _still_shows(last, m, changed_at):
                    # the page is as it was when the last picture was asked for: that picture is this one too
                    # (one capture less, competing with the outcome check for the browser)
                    try:
                        shot = await asyncio.shield(last.shot)
                    except asyncio.CancelledError:
                        if not last.shot.cancelled():
                            raise  # this picture was cancelled, not the last one
                        shot = None
                    if shot is not None:
                        return shot
            return await self._take()

        self._candidates.append(_Candidate(mark, asyncio.ensure_future(shoot()), early))

    # -- the step's end ------------------------------------------------------------------------------
    async def result(self, usable: bool = True) -> Pending:
        """The after-picture, possibly still being taken: the latest picture started during the action
        that still shows the page (see the module docstring), else a new one. `usable` False (the loop
        went to another tab, the action failed to run): a new one."""
        keep = await self._pick() if usable else None
        # (those begun before the one kept may be its picture: they finish, and are not waited for)
        older = self._candidates.index(keep) if keep is not None else 0
        others = self._candidates[older + 1:] if keep is not None else self._candidates
        self._candidates = []
        await _cancel([c.shot for c in others] + [c.mark for c in others])
        if keep is not None:
            first = keep.shot
            if first.done() and not first.cancelled() and first.exception() is None and first.result() is not None:
                return first

            async def or_new() -> Screenshot | None:  # a picture that failed is taken again
                try:
                    shot = await first
                except (asyncio.CancelledError, Exception):  # noqa: BLE001
                    shot = None
                if shot is None:
                    log.debug("the after picture begun during the action failed; taking a new one")
                    shot = await self._take()
                return shot
            return asyncio.ensure_future(or_new())
        # a new one: the step goes on once the browser has been asked for it (its frame is the page from then
        # on, before anything of the next step can change it), not once it is taken
        asked = asyncio.get_running_loop().create_future()

        def tell() -> None:
            if not asked.done():
                asked.set_result(None)

        async def shoot() -> Screenshot | None:
            with on_capture_asked(tell):
                return await self._take()

        shot = asyncio.ensure_future(shoot())
        shot.add_done_callback(lambda _: tell())
        await asyncio.wait([asked], timeout=ASK_TIMEOUT_S)
        return shot

    async def _pick(self) -> _Candidate | None:
        if not self._candidates:
            return None
        target = self._target
        if target is None:  # no mark to compare: the last outcome check that saw the outcome (as the settle says)
            last = self._candidates[-1]
            return last if not last.early and self.settle is not None and self.settle.outcome_seen else None
        now = await page_mark(target)  # type: ignore[arg-type]
        if now is None:
            return None
        changed_at = self.settle.changed_at if self.settle is not None else 0.0
        for c in reversed(self._candidates):
            if await _still_shows(c, now, changed_at):
                return c
        return None

    async def drop(self) -> None:
        """Cancel the pictures not used."""
        cands, self._candidates = self._candidates, []
        await _cancel([c.shot for c in cands] + [c.mark for c in cands])


async def _still_shows(last: _Candidate, now: PageMark, changed_at: float) -> bool:
    """Does `last`'s picture show the page whose mark is `now`: same navigation and every frame's DOM
    version, and nothing a version does not count (a request of the action ending, a moving animation, at
    `changed_at`) after it was asked for?"""
    try:
        m: PageMark | None = await asyncio.shield(last.mark)
    except asyncio.CancelledError:
        if not last.mark.cancelled():
            raise  # the caller was cancelled, not the mark
        return False
    except Exception:  # noqa: BLE001 - an unreadable mark: not the same page
        return False
    return m is not None and m.same_page(now) and m.at > changed_at


def taken(pending: Pending) -> Screenshot | None:
    """The picture when it is already taken (None when it failed or is still being taken)."""
    if not pending.done() or pending.cancelled() or pending.exception() is not None:
        return None
    return cast(Screenshot | None, pending.result())


def _done(value: object) -> asyncio.Future:
    f = asyncio.get_running_loop().create_future()
    f.set_result(value)
    return f


async def _cancel(tasks: list[asyncio.Future]) -> None:
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
        if enabled:
            warm_hashing()  # (the first picture's hash would otherwise wait for its libraries to load)
        self._last: tuple[DomSnapshot, Screenshot | Pending | None, object] | None = None

    def reset(self) -> None:
        self._last = None

    async def take(self) -> Screenshot | None:
        """The viewport now (a Screenshot: JPEG and pHash), or None (pictures off or failing)."""
        if not self.enabled:
            return None
        try:
            return await self.current().screenshot()
        except Exception as exc:  # a missing picture never stops a run
            log.info("screenshot failed: %s", exc)
            return None

    async def after(self, picture: AfterPicture, usable: bool) -> Pending:
        """The step's after picture (`AfterPicture.result`), perhaps still being taken; one that came back empty
        is taken again, in the background (a record is not published without it)."""
        pending = await picture.result(usable)
        if pending.done() and taken(pending) is None and self.enabled:
            pending = asyncio.ensure_future(self.take())
        return pending

    def left(self, snap: DomSnapshot | None, shot: Screenshot | Pending | None, settled: bool) -> None:
        """What the step just done left: the snapshot taken after it and then its picture (perhaps still
        being taken), kept when the step ended on a settled page."""
        self._last = (snap, shot, self.current()) if snap is not None and settled else None

    def settled_snapshot(self) -> DomSnapshot | None:
        """The snapshot the last step left on a settled page, if that was on the current page (whether it
        is still the page's, the caller asks the snapshot cache)."""
        last = self._last
        return last[0] if last is not None and last[2] is self.current() else None

    async def unchanged(self, snap: DomSnapshot) -> Screenshot | None:
        """The last step's after picture when `snap` is the very snapshot taken right before it on this
        page (so the page has not changed since that picture; one still being taken is waited for), else
        None."""
        last = self._last
        if last is None or last[1] is None or last[0] is not snap or last[2] is not self.current():
            return None
        shot = last[1]
        if isinstance(shot, Screenshot):
            return shot
        try:
            return await asyncio.shield(shot)
        except asyncio.CancelledError:
            if shot.cancelled():
                return None
            raise
        except Exception:  # noqa: BLE001 - a picture that failed is no picture
            return None


class LatePicture:
    """A step's after picture still being taken when the step's result was ready: the step's record is published
    without it, and the picture follows it (`StepPictureTaken`: the store keeps it with the step, the window shows
    it; the record itself gets its hash). The loop waits for it before the next step's input goes out (or a person
    is asked about that step) and before the run ends, so a run's pictures are all in when it returns; a cancelled
    run does not wait (the step stays stored, without that picture)."""

    def __init__(self, take: Take, publish: Callable[[StepPictureTaken], None]) -> None:
        self._take, self._publish = take, publish
        self._task: asyncio.Future | None = None

    def follow(self, rec: StepRecord, pending: Pending, before: str | None, snap_after: DomSnapshot | None, *,
               keep: bool) -> None:
        """`rec` is published; `pending` is its after picture (`keep`: with the JPEG and snapshot for the store)."""
        self._task = asyncio.ensure_future(self._attach(rec, pending, before, snap_after, keep))

    async def _attach(self, rec: StepRecord, pending: Pending, before: str | None, snap_after: DomSnapshot | None,
                      keep: bool) -> None:
        try:
            shot = await asyncio.shield(pending)
        except asyncio.CancelledError:
            pending.cancel()
            raise
        except Exception as exc:  # noqa: BLE001 - a missing picture never stops a run
            log.debug("after picture failed: %s", exc)
            shot = None
        if shot is None:  # (one that failed — a capture while the page was being replaced — is taken again)
            shot = await self._take()
        if shot is None:
            return
        rec.screenshot_after = shot.phash
        rec.screenshot_distance = hash_distance(before, shot.phash) if before else None
        self._publish(StepPictureTaken(
            step_index=rec.index, screenshot_after=shot.phash, screenshot_distance=rec.screenshot_distance,
            artifacts=StepArtifacts(screenshot_after=shot.jpeg, snapshot_after=snap_after) if keep else None))

    async def wait(self) -> None:
        """Until the last step's after picture is in and published (nothing when none is under way). A wait that is
        cancelled (a stop while the planner is asked) leaves the picture coming: the run's end waits for it."""
        task = self._task
        if task is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(task)
            if self._task is task:
                self._task = None

    def drop(self) -> None:
        """Stop waiting for it (a cancelled run)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()


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
