"""The person's own steps while a run's step waits for approval (a part of `Supervisor`; the window's side
is gui.take_over). What they do in the live view is fed, in order, to the step's `PersonSteps`; taking over
in the page answers the step with what they did there, on node IDs."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from engine.errors import VigilError
from engine.loop import QueueGate
from engine.loop.person_steps import PersonSteps
from engine.models import Decision


class PersonInput:
    """Mixed into `Supervisor` (its tab and resize state are used here)."""

    tab: Any
    person: PersonSteps | None
    _person_feed: asyncio.Future | None
    _resizing: bool

    def person_input(self, method: str, args: tuple, kw: dict) -> None:
        """The live view's input while a step waits for approval: the person's own steps, if they take over."""
        person = self.person
        if person is None:
            return
        prev = self._person_feed
        self._person_feed = asyncio.ensure_future(self._feed_person(person, prev, method, args, kw))

    async def _feed_person(self, person: PersonSteps, prev: asyncio.Future | None, method: str, args: tuple,
                           kw: dict) -> None:
        if prev is not None:
            with contextlib.suppress(Exception):
                await prev
        if self.tab is not None and ((method == "mouse" and args and args[0] == "down") or
                                     (method == "key" and person.typing_blind and not _is_text_key(args))):
            with contextlib.suppress(VigilError):
                # the page as the person sees it when they press (cached if unchanged); after a Tab, the
                # field that has focus now is the one their held typing went to
                await self.tab.snapshot()
        person.feed(method, args, kw)

    async def _submit_person_steps(self, gate: QueueGate, decision: Decision, person: PersonSteps) -> None:
        """Take over in the page: the decision carries what the person did there, on node IDs."""
        if self._person_feed is not None:
            with contextlib.suppress(Exception):
                await self._person_feed
        after = None
        if self.tab is not None:
            with contextlib.suppress(VigilError):
                after = await self.tab.snapshot()
        while self._resizing:
            await asyncio.sleep(0.02)
        gate.submit(decision.model_copy(update={"performed": person.finish(after)}))


def _is_text_key(args: tuple) -> bool:
    """A key-down that types a character (the live view sends ("down", key, code, text, modifiers))."""
    return len(args) > 3 and bool(args[3]) and args[3] != "\r"
