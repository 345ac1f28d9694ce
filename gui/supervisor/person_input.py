"""The person's own steps while a run's step waits for approval (a part of `Supervisor`: `sup.person_input`; the
window's side is gui.window.take_over). What they do in the live view is fed, in order, to the step's `PersonSteps`;
taking over in the page answers the step with what they did there, on node IDs."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Protocol

from engine.errors import VigilError
from engine.loop import QueueGate
from engine.loop.person_steps import PersonSteps
from engine.models import Decision
from engine.tab import Tab


class PersonHost(Protocol):
    """What the person's input uses of its supervisor."""

    @property
    def tab(self) -> Tab | None: ...
    @property
    def resizing(self) -> bool: ...


class PersonInput:
    """`PersonInput(sup)`: `steps` (the person's steps while a step waits, else None), fed by `feed()`."""

    def __init__(self, sup: PersonHost) -> None:
        self.sup = sup
        self.steps: PersonSteps | None = None
        self._feed: asyncio.Future[None] | None = None  # the last input on its way into `steps`

    def begin(self, tab: Tab | None) -> None:
        """A step waits for approval: what the person does in `tab` from now on are their steps."""
        self.steps = PersonSteps(lambda: tab.latest_snapshot if tab is not None else None)
        self._feed = None

    def take(self) -> PersonSteps | None:
        """The person's steps so far, handed over once (the step is answered)."""
        steps, self.steps = self.steps, None
        return steps

    def feed(self, method: str, args: tuple, kw: dict) -> None:
        """The live view's input while a step waits for approval: the person's own steps, if they take over."""
        person = self.steps
        if person is None:
            return
        prev = self._feed
        self._feed = asyncio.ensure_future(self._feed_person(person, prev, method, args, kw))

    async def _feed_person(self, person: PersonSteps, prev: asyncio.Future[None] | None, method: str, args: tuple,
                           kw: dict) -> None:
        if prev is not None:
            with contextlib.suppress(Exception):
                await prev
        tab = self.sup.tab
        if tab is not None and ((method == "mouse" and args and args[0] == "down") or
                                (method == "key" and person.typing_blind and not _is_text_key(args))):
            with contextlib.suppress(VigilError):
                # the page as the person sees it when they press (cached if unchanged); after a Tab, the
                # field that has focus now is the one their held typing went to
                await tab.snapshot()
        person.feed(method, args, kw)

    async def submit(self, gate: QueueGate, decision: Decision, person: PersonSteps) -> None:
        """Take over in the page: the decision carries what the person did there, on node IDs."""
        if self._feed is not None:
            with contextlib.suppress(Exception):
                await self._feed
        after = None
        tab = self.sup.tab
        if tab is not None:
            with contextlib.suppress(VigilError):
                after = await tab.snapshot()
        while self.sup.resizing:
            await asyncio.sleep(0.02)
        gate.submit(decision.model_copy(update={"performed": person.finish(after)}))


def _is_text_key(args: tuple) -> bool:
    """A key-down that types a character (the live view sends ("down", key, code, text, modifiers))."""
    return len(args) > 3 and bool(args[3]) and args[3] != "\r"
