"""Approval gates: where a proposed step waits for a person's decision.

The loop calls `await gate.decide(request)` and acts on the returned `Decision`. Gates here:
`AutoApprove` (tests, unattended runs), `CallbackGate` (any function), `QueueGate` (a UI pushes
decisions with `submit()`), `TerminalGate` (`vigil run --approve ask`).

A gate says whether a person answers it with `person_present` (True unless the gate sets it False, as
`AutoApprove` and the MCP server's `NoPersonGate` do): what the browser holds that no step was approved
for (a script leaving the site, a download) is asked only where a person is present, and refused
elsewhere — an automatic approval is never taken for a person's.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import sys
import threading
import unicodedata
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TextIO, runtime_checkable

from pydantic import ValidationError

from engine.actions.effect import EFFECT_ACTIONS
from engine.errors import ActionStringError, VigilError
from engine.loop.action_string import parse_action_string
from engine.models import Action, ApprovalRequest, Decision, ExpectedOutcome
from engine.models.text import bidi_safe


@runtime_checkable
class ApprovalGate(Protocol):
    async def decide(self, request: ApprovalRequest) -> Decision:
        ...


def person_present(gate: object) -> bool:
    """Does a person answer this gate? (False for `AutoApprove` and `NoPersonGate`.)"""
    return bool(getattr(gate, "person_present", True))


class AutoApprove:
    """Approves every step it is asked about (and records how many requests it saw). No person is
    present: what the browser holds outside the approved steps is refused (`person_present`)."""

    person_present = False

    def __init__(self) -> None:
        self.requests: list[ApprovalRequest] = []

    async def decide(self, request: ApprovalRequest) -> Decision:
        self.requests.append(request)
        return Decision.approve()


class CallbackGate:
    """Asks `fn(request)` — sync or async — for each decision."""

    def __init__(self, fn: Callable[[ApprovalRequest], Decision | Awaitable[Decision]]):
        self.fn = fn
        self.requests: list[ApprovalRequest] = []

    async def decide(self, request: ApprovalRequest) -> Decision:
        self.requests.append(request)
        res = self.fn(request)
        if inspect.isawaitable(res):
            res = await res
        if not isinstance(res, Decision):
            raise TypeError(f"the approval callback returned {res!r}, not a Decision")
        return res


class QueueGate:
    """Decisions pushed from elsewhere (a UI): `submit(decision)`; `decide` awaits the next one.

    `pending` is the request currently waiting (None when none is). `submit` may be called from
    another thread; decisions submitted before a request arrives are kept in order."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[Decision] = asyncio.Queue()
        self._loop: asyncio.AbstractEventLoop | None = None
        self.pending: ApprovalRequest | None = None
        self.requests: list[ApprovalRequest] = []

    def submit(self, decision: Decision) -> None:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if self._loop is not None and running is not self._loop:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, decision)
        else:
            self._queue.put_nowait(decision)

    async def decide(self, request: ApprovalRequest) -> Decision:
        self._loop = asyncio.get_running_loop()
        self.pending = request
        self.requests.append(request)
        try:
            return await self._queue.get()
        finally:
            self.pending = None


class _LineReader:
    """Reads lines from a blocking stream on a daemon thread, so the event loop never blocks and an
    unanswered prompt never keeps the process alive at exit. None means end of input."""

    def __init__(self, stream: TextIO):
        self.stream = stream
        self._queue: asyncio.Queue[str | None] | None = None
        self._wanted = threading.Semaphore(0)
        self._thread: threading.Thread | None = None
        self._eof = False

    async def readline(self) -> str | None:
        if self._eof:
            return None
        loop = asyncio.get_running_loop()
        if self._thread is None:
            self._queue = asyncio.Queue()
            self._thread = threading.Thread(target=self._run, args=(loop, self._queue), daemon=True,
                                            name="vigil-stdin")
            self._thread.start()
        assert self._queue is not None
        if self._queue.empty():
            self._wanted.release()
        line = await self._queue.get()
        self._eof = line is None
        return line

    def _run(self, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[str | None]) -> None:
        while True:
            self._wanted.acquire()
            try:
                line = self.stream.readline()
            except (OSError, ValueError):
                line = ""
            value = line.rstrip("\r\n") if line else None
            try:
                loop.call_soon_threadsafe(queue.put_nowait, value)
            except RuntimeError:
                return  # the loop is gone
            if value is None:
                return


EFFECT_UNKNOWN = "not known (the page did not say what this step will do)"


def terminal_text(text: str) -> str:
    """`text` as one printable line: bidi controls show as markers (`⟦U+202E⟧`), other control and format
    characters (ESC, line breaks, zero-width joiners) become spaces, runs of spaces one (the effect quotes
    the page)."""
    text = bidi_safe(text)
    return " ".join("".join(" " if unicodedata.category(c).startswith("C") else c for c in text).split())


def effect_line(request: ApprovalRequest) -> str | None:
    """What the step will do as the page computed it (`StepEffect.line()`), for the prompt's "effect:" line;
    "not known" for an input step whose page would not say; None for a step that puts no input into the page."""
    if request.effect is not None:
        return terminal_text(request.effect.line())
    p = request.proposal
    if request.dialog is None and not p.details.get("held") and p.action.name in EFFECT_ACTIONS:
        return EFFECT_UNKNOWN
    return None


class TerminalGate:
    """A prompt per step on a terminal: [a]pprove (or y/yes; Enter for an ordinary step), [e]dit, [s]kip,
    [r]eject with reason (or n/no), [t]ake over, [q]uit. End of input means stop."""

    CHOICES = "[a]pprove (y), [e]dit, [s]kip, [r]eject with reason (n), [t]ake over, [q]uit"

    def __init__(self, stdin: TextIO | None = None, out: TextIO | None = None):
        self._reader = _LineReader(stdin or sys.stdin)
        self.out = out or sys.stdout
        # a host that keeps the person's grants (the MCP server) offers one for a request ("Allow clicks on
        # example.com for this session", or None) and gives it (returns what was granted; raises VigilError)
        self.grant_offer: Callable[[ApprovalRequest], str | None] | None = None
        self.grant_give: Callable[[ApprovalRequest], str] | None = None
        # a host with the page at hand (`vigil run`) grounds a take-over typed in plain words ("click Place
        # order") as the window does: the action it means there, or VigilError saying why there is none
        self.ground: Callable[[str], Awaitable[Action]] | None = None

    def _offer(self, request: ApprovalRequest) -> str | None:
        if self.grant_offer is None or self.grant_give is None or request.sensitive_reasons or request.error:
            return None  # never for a sensitive step, nor for one re-asked because its target changed
        return self.grant_offer(request)

    # every line of the prompt quotes the page or the planner: bidi controls show as markers, also where the
    # gate prints to a stream of the caller's own (the `vigil` command wraps its streams as well)
    def _say(self, text: str = "") -> None:
        print(bidi_safe(text), file=self.out, flush=True)

    async def _ask(self, prompt: str) -> str | None:
        print(bidi_safe(prompt), end="", file=self.out, flush=True)
        line = await self._reader.readline()
        if line is None:
            self._say()
        return line

    def show(self, request: ApprovalRequest) -> None:
        p = request.proposal
        self._say()
        self._say(f"Step {request.step_index + 1}: {request.summary}")
        t = request.target
        if t:
            x, y, w, h = t.get("bounds") or (0, 0, 0, 0)
            extra = "" if t.get("visible", True) else ", not in view"
            extra += ", covered" if t.get("occluded") else ""
            self._say(f"  target: {t.get('role') or t.get('tag')} \"{t.get('name') or ''}\" id {t.get('id')} "
                      f"at x={x} y={y} {w}x{h}{extra}")
        said = effect_line(request)
        if said:
            self._say(f"  effect: {said}")
        if p.thought and p.thought not in request.summary:
            self._say(f"  why: {p.thought}")
        if p.action.name in ("finish", "fail"):
            self._say("  (approving ends the run; reject or skip to let the planner go on)")
        elif p.details.get("held"):  # held at the browser (engine.loop.holds): approve lets it go on
            self._say("  (held at the browser: approve lets it go on, reject keeps it from happening)")
        else:
            expect = p.expected_outcome.describe() if p.expected_outcome else "the default check for this action"
            self._say(f"  expect: {expect}")
        for r in request.sensitive_reasons:
            self._say(f"  SENSITIVE: {r}")
        for w in request.warnings:
            self._say(f"  WARNING (untrusted page text): {w}")
        if request.error:
            self._say(f"  {'not run' if 'TARGET_CHANGED' in request.error else 'refused'}: {request.error}")

    async def decide(self, request: ApprovalRequest) -> Decision:
        if request.dialog is not None:
            return await self._dialog(request)
        self.show(request)
        offer = self._offer(request)
        # Enter approves an ordinary step, as in the window; a sensitive, warned or re-asked one needs a letter
        ordinary = not (request.sensitive_reasons or request.warnings or request.error)
        choices = (self.CHOICES.replace("(y)", "(Enter, y)") if ordinary else self.CHOICES) + \
            (", [g]rant" if offer else "")
        if offer:
            self._say(f"  [g]: approve, and {offer[0].lower()}{offer[1:]}")
        while True:
            answer = await self._ask(f"{choices} > ")
            if answer is None:
                return Decision(kind="stop", reason="end of input")
            c = answer.strip().lower()[:1]
            if c in ("a", "y") or (not c and ordinary):
                return Decision.approve()
            if not c:
                self._say("  This step needs a person's clear yes (see above): type a or y to approve it.")
                continue
            if c == "g" and offer and self.grant_give is not None:
                try:
                    given = self.grant_give(request)
                except VigilError as exc:
                    self._say(f"  the grant was not kept: {exc.message}")
                    continue
                self._say(f"  granted: {given}")
                return Decision.approve()
            if c == "s":
                return Decision(kind="skip")
            if c == "q":
                return Decision(kind="stop", reason="quit at the prompt")
            if c in ("r", "n"):
                reason = await self._ask("Reason (handed to the planner; Enter for none): ")
                if reason is None:
                    return Decision(kind="stop", reason="end of input")
                return Decision(kind="reject", reason=reason.strip() or None)
            if c == "e":
                d = await self._edit(request)
                if d is not None:
                    return d
            elif c == "t":
                example = "click Place order, or click(12)" if self.ground is not None else "click(12)"
                line = await self._ask(f"Your action, e.g. {example} — empty if you act in the page yourself: ")
                if line is None:
                    return Decision(kind="stop", reason="end of input")
                if not line.strip():
                    await self._ask("Act in the browser, then press Enter here when done: ")
                    return Decision(kind="take_over")
                action = await self._take_over_action(line.strip())
                if action is not None:
                    return Decision(kind="take_over", action=action)
            else:
                self._say(f"  Answer with one letter: {choices}.")

    async def _take_over_action(self, line: str) -> Action | None:
        """The action a take-over line means: an action string, else plain words grounded on the page (said
        back, so the person sees what will run); None, with why said, when it means none."""
        try:
            return parse_action_string(line)
        except ActionStringError as exc:
            if self.ground is None:
                self._say(f"  {exc}")
                return None
        try:
            action = await self.ground(line)
        except VigilError as exc:
            self._say(f"  Could not ground {line!r}: {exc.message}")
            return None
        self._say(f"  {line!r} → {action.to_string()}")
        return action

    async def _dialog(self, request: ApprovalRequest) -> Decision:
        """A JavaScript dialog the page raised: OK (y), Cancel (n), or — for a prompt — the text to answer."""
        d = request.dialog
        assert d is not None
        self._say()
        self._say(f"Step {request.step_index + 1}: {request.summary}")
        if d.url:
            self._say(f"  from: {d.url}")
        if d.kind == "prompt":
            line = await self._ask(f'Text to answer (Enter for "{d.default_prompt}"), or "-" for Cancel, [q]uit > ')
            if line is None or line.strip().lower() == "q":
                return Decision(kind="stop", reason="quit at the dialog prompt" if line else "end of input")
            if line.strip() == "-":
                return Decision(kind="reject", reason="Cancel")
            return Decision(kind="approve", text=line if line else d.default_prompt)
        while True:
            answer = await self._ask("[o]k (y), [c]ancel (n), [q]uit > ")
            if answer is None:
                return Decision(kind="stop", reason="end of input")
            c = answer.strip().lower()[:1]
            if c in ("o", "y", "a"):
                return Decision.approve()
            if c in ("c", "n", "r", "s"):
                return Decision(kind="reject", reason="Cancel")
            if c == "q":
                return Decision(kind="stop", reason="quit at the dialog prompt")
            self._say("  Answer o (OK), c (Cancel) or q (quit).")

    async def _edit(self, request: ApprovalRequest) -> Decision | None:
        proposed = request.proposal.action
        if request.target and proposed.target is not None:
            proposed = proposed.model_copy(update={"target": request.target["id"]})
        current = proposed.to_string()
        line = await self._ask(f"New action (empty keeps {current}): ")
        if line is None:
            return Decision(kind="stop", reason="end of input")
        action: Action | None = None
        if line.strip():
            try:
                action = parse_action_string(line)
            except ActionStringError as exc:
                self._say(f"  {exc}")
                return None
        line = await self._ask('New expected outcome, e.g. navigation or {"type": "element_appears", '
                               '"text": "Thanks"} (empty keeps it): ')
        if line is None:
            return Decision(kind="stop", reason="end of input")
        expect = None
        if line.strip():
            try:
                expect = parse_expected_outcome(line)
            except ValueError as exc:
                self._say(f"  {exc}")
                return None
        if action is None and expect is None:
            self._say("  Nothing changed.")
            return None
        return Decision(kind="edit", action=action, expected_outcome=expect)


def parse_expected_outcome(text: str) -> ExpectedOutcome:
    """`navigation`, `element_appears Thank you`, or a JSON object → ExpectedOutcome."""
    text = text.strip()
    try:
        data: Any = json.loads(text) if text.startswith("{") else None
        if data is None:
            kind, _, rest = text.partition(" ")
            data = {"type": kind}
            if rest.strip():
                data["text"] = rest.strip()
        return ExpectedOutcome.model_validate(data)
    except (json.JSONDecodeError, ValidationError) as exc:
        first = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
        raise ValueError(f"Not an expected outcome ({first}). Use navigation, element_appears TEXT, "
                         "element_disappears TEXT, value_changes, state_changes, any_change, no_change, submitted "
                         "or JSON.") from None
