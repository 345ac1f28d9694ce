"""The actions on snapshot node IDs, each returning an `ActionResult` (what `Tab` delegates to).

Every action: resolve the ID (self-healing a stale one by ghost match), act with real CDP
input, invalidate the snapshot (success or failure), wait for the page to settle, and verify
the expected outcome against the state captured before it ran. Page problems come back as a
result with an error code and a message for a person and a model — never as an exception.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from engine.actions import bodies
from engine.actions.choose import select
from engine.actions.context import ActionContext
from engine.actions.heal import Ghost, ghost_match
from engine.actions.locate import ActionFailure, misdirected_message, probe, release, resolve
from engine.actions.pointer import pointer, received
from engine.browser.keys import parse_chord
from engine.browser.target import PageTarget
from engine.errors import BrowserClosedError, ErrorCode, TabCrashedError, UnknownNodeError, VigilError
from engine.models import (
    NODE_ACTIONS,
    Action,
    ActionResult,
    ExpectedOutcome,
    OutcomeLike,
    PageEvent,
    VerificationResult,
)
from engine.observe.sentinel import PostFacts, PreState, check, default_expectation, ends_when, verify
from engine.observe.stability import Outcome, StabilityConfig, StabilityResult, dispatched, wait_stable
from engine.observe.stream import read_stream, recent_events
from engine.snapshot.cache import SnapshotCache

Body = Callable[[ActionContext], Awaitable[None]]
SCROLL_DIRECTIONS = ("up", "down", "left", "right", "top", "bottom")


class PageActions:
    """Acting on one page: `page` is its CDP plumbing, `snapshots` its snapshot cache (an action
    locates its element in the cached snapshot and trusts nothing after it acts)."""

    def __init__(self, page: PageTarget, snapshots: SnapshotCache, stability: StabilityConfig | None = None) -> None:
        self.page = page
        self.snapshots = snapshots
        self.stability = stability or StabilityConfig()

    # -- observing ---------------------------------------------------------------------------
    async def wait_stable(self, config: StabilityConfig | None = None, *,
                          since: float | None = None, outcome: Outcome | None = None) -> StabilityResult:
        """Wait until the page settles (see engine.observe.stability)."""
        return await wait_stable(self.page, config or self.stability, since=since, outcome=outcome)

    async def recent_events(self, max_age_ms: int = 10_000) -> list[PageEvent]:
        """The mutation stream: meaningful page changes (toasts, errors, …) from every frame."""
        return await recent_events(self.page, max_age_ms)

    # -- the actions ---------------------------------------------------------------------------
    async def click(self, node_id: str, *, force: bool = False, expect: OutcomeLike = None) -> ActionResult:
        return await self._run("click", f"click({node_id})", node_id, expect,
                               lambda c: pointer(c, force=force, clicks=1))

    async def double_click(self, node_id: str, *, force: bool = False, expect: OutcomeLike = None) -> ActionResult:
        return await self._run("double_click", f"double_click({node_id})", node_id, expect,
                               lambda c: pointer(c, force=force, clicks=2))

    async def hover(self, node_id: str, *, force: bool = False, expect: OutcomeLike = None) -> ActionResult:
        return await self._run("hover", f"hover({node_id})", node_id, expect,
                               lambda c: pointer(c, force=force, clicks=0))

    async def type(self, node_id: str, text: str, *, clear: bool = True, submit: bool = False,
                   expect: OutcomeLike = None) -> ActionResult:
        return await self._run("type", None, node_id, expect, lambda c: bodies.type_text(c, text, clear, submit),
                               text=text, submit=submit, clear=clear)

    async def press(self, key: str, node_id: str | None = None, *, repeat: int = 1,
                    expect: OutcomeLike = None) -> ActionResult:
        s = f'press("{key}"' + (f", {node_id}" if node_id else "") + (f", repeat={repeat})" if repeat > 1 else ")")
        try:
            parse_chord(key)  # a bad key name: fail before touching the page
        except VigilError as exc:
            return ActionResult(success=False, action=s, error_code=exc.code, message=str(exc))
        if not 1 <= repeat <= 500:
            return ActionResult(success=False, action=s, error_code=ErrorCode.BAD_ARGUMENT,
                                message="repeat must be 1–500.")
        return await self._run("press", s, node_id, expect, lambda c: bodies.press(c, key, repeat))

    async def select(self, node_id: str, option: str, *, expect: OutcomeLike = None) -> ActionResult:
        return await self._run("select", f'select({node_id}, "{option}")', node_id, expect,
                               lambda c: select(c, option))

    async def check(self, node_id: str, *, expect: OutcomeLike = None) -> ActionResult:
        return await self._run("check", f"check({node_id})", node_id, expect, lambda c: bodies.set_checked(c, True))

    async def uncheck(self, node_id: str, *, expect: OutcomeLike = None) -> ActionResult:
        return await self._run("uncheck", f"uncheck({node_id})", node_id, expect,
                               lambda c: bodies.set_checked(c, False))

    async def scroll(self, node_id: str | None = None, direction: str = "down", amount: int | None = None, *,
                     expect: OutcomeLike = None) -> ActionResult:
        if direction not in SCROLL_DIRECTIONS:
            return ActionResult(success=False, action=f"scroll({direction!r})", error_code=ErrorCode.BAD_ARGUMENT,
                                message=f"Unknown scroll direction {direction!r}: use up, down, left, right, top "
                                        "or bottom.")
        s = f'scroll("{direction}"' + (f", {node_id}" if node_id else "") + (f", {amount}" if amount else "") + ")"
        return await self._run("scroll", s, node_id, expect, lambda c: bodies.scroll(c, direction, amount))

    async def navigate(self, url: str, *, expect: OutcomeLike = None, timeout: float = 30.0) -> ActionResult:
        return await self._run("navigate", f'navigate("{url}")', None, expect,
                               lambda c: bodies.navigate(c, url, timeout))

    async def back(self, *, expect: OutcomeLike = None, timeout: float = 30.0) -> ActionResult:
        return await self._run("back", "back()", None, expect, lambda c: bodies.back(c, timeout))

    async def wait(self, ms: int, *, expect: OutcomeLike = None) -> ActionResult:
        return await self._run("wait", f"wait({ms})", None, expect, lambda c: bodies.wait(c, ms))

    async def act(self, action: Action, expect: OutcomeLike = None) -> ActionResult:
        """Run an `Action` (its target must be a node ID; resolve {role, name} queries first)."""
        a = action
        if a.name in ("finish", "fail"):
            return ActionResult(success=False, action=a.to_string(), error_code=ErrorCode.BAD_ARGUMENT,
                                message=f"{a.name}() ends a run; it is not a page action.")
        if a.target is not None and not isinstance(a.target, str):
            return ActionResult(success=False, action=a.to_string(), error_code=ErrorCode.BAD_ARGUMENT,
                                message=f"Target {a.target.describe()} must be resolved to a node ID before acting.")
        n, t = a.name, a.node_id
        if n in NODE_ACTIONS and t is None:
            return ActionResult(success=False, action=a.to_string(), error_code=ErrorCode.BAD_ARGUMENT,
                                message=f"{n} needs the ID of the element to act on (from the latest snapshot).")
        if n == "click":
            return await self.click(str(t), force=a.force, expect=expect)
        if n == "double_click":
            return await self.double_click(str(t), force=a.force, expect=expect)
        if n == "hover":
            return await self.hover(str(t), force=a.force, expect=expect)
        if n == "type":
            return await self.type(str(t), a.text or "", clear=a.clear, submit=a.submit, expect=expect)
        if n == "press":
            return await self.press(a.key or "", t, repeat=a.repeat, expect=expect)
        if n == "select":
            return await self.select(str(t), a.option or "", expect=expect)
        if n == "check":
            return await self.check(str(t), expect=expect)
        if n == "uncheck":
            return await self.uncheck(str(t), expect=expect)
        if n == "scroll":
            return await self.scroll(t, a.direction, a.amount, expect=expect)
        if n == "navigate":
            return await self.navigate(a.url or "", expect=expect)
        if n == "back":
            return await self.back(expect=expect)
        return await self.wait(a.ms or 0, expect=expect)

    # -- the common frame ----------------------------------------------------------------------
    async def _run(self, name: str, action_str: str | None, node_id: str | None, expect: OutcomeLike,
                   body: Body, **typed: Any) -> ActionResult:
        t0 = time.monotonic()
        timings: dict[str, float] = {}
        page = self.page
        c = ActionContext(page, self.snapshots)
        node_id = str(node_id) if node_id is not None and str(node_id).strip() else None
        if node_id is None and name in NODE_ACTIONS:
            return ActionResult(success=False, action=action_str or name, error_code=ErrorCode.BAD_ARGUMENT,
                                message=f"{name} needs the ID of the element to act on (from the latest snapshot).")
        try:
            exp = (ExpectedOutcome.model_validate(expect) if isinstance(expect, dict) else expect) \
                or default_expectation(name, node_id, submit=bool(typed.get("submit")))
        except ValueError as exc:
            return ActionResult(success=False, action=action_str or name, error_code=ErrorCode.BAD_ARGUMENT,
                                message=f"The expected outcome is not valid: {str(exc).splitlines()[0]}")

        def acted_on() -> str | None:
            return c.target.node.node_id if c.target else node_id

        def label() -> str:
            if action_str is not None:
                return action_str.replace(f"({node_id}", f"({acted_on()}", 1) if c.target and node_id else action_str
            shown = "•" * 8 if c.masked else typed.get("text", "")
            extra = (", clear=false" if not typed.get("clear", True) else "") + \
                (", submit=true" if typed.get("submit") else "")
            return f'type({acted_on()}, "{shown}"{extra})'

        try:
            page.check_alive()
            if node_id is not None:
                found = await self._locate(c, node_id)
                if exp.node_id is None and exp.type in ("value_changes", "state_changes") and node_id != found:
                    exp = exp.model_copy(update={"node_id": found})
            timings["locate"] = _ms(t0)
            pre = await self._pre_state(c)
            pages_before = page.pages_in_context()
            t1 = time.monotonic()
            await body(c)
            timings["act"] = _ms(t1)
            if c.mark:
                pre.mark = c.mark
            if c.data.get("noop") and expect is None:
                exp = ExpectedOutcome(type="no_change")  # already as asked: nothing was meant to change
            elif c.data.get("shown_as") and expect is None:
                # a multiple select's choice is a chip or a live message, never the field's value: that is the change
                exp = ExpectedOutcome(type="any_change")
        except VigilError as exc:
            page.invalidate()
            if c.target is not None and exc.code is not ErrorCode.MISDIRECTED:
                exc = await self._misdirected(c) or exc  # a check that failed because its click went elsewhere
            if c.target is not None:
                await release(page, c.target.session_id)
            timings["total"] = _ms(t0)
            # a DevTools command the page would not run (not one of the checks above): the element did
            # not take the action
            code = ErrorCode.NOT_ACTIONABLE if exc.code is ErrorCode.CDP_ERROR else exc.code
            return ActionResult(success=False, action=label(), node_id=acted_on(), error_code=code, message=str(exc),
                                recovered_from=c.recovered_from, data=c.data, timings_ms=timings)
        page.invalidate()
        acted = time.monotonic()
        dispatched()  # a step may start its after-picture now (kept only if the page does not change after it)
        verification = None
        target_id = c.target.node.node_id if c.target else None
        early: list[VerificationResult] = []

        async def outcome() -> bool:
            # the expected outcome, checked while settling: seen on a painted, quiet page, the wait ends
            v = await check(page, self.snapshots, exp, pre, target_id, self._post_facts(c))
            if v.success:
                early.append(v)
            return v.success

        try:
            st = await self.wait_stable(since=acted, outcome=outcome if exp.type != "no_change" else None)
            timings["settle"] = round(st.waited_ms - st.outcome_ms, 1)
            c.data["settled"] = st.stable
            if not st.stable:
                c.data["settle_note"] = st.describe()
            if st.outcome_seen and early:
                c.data["outcome_seen"] = True  # the settle ended on the check that saw it
                verification = early[-1]
                timings["verify"] = st.outcome_ms
            else:
                t2 = time.monotonic()
                # a page the action opened (a new tab, a popup) is its change: not waited for on this one
                with ends_when(besides=lambda: page.pages_in_context() > pages_before):
                    verification = await verify(page, self.snapshots, exp, pre, target_id, self._post_facts(c),
                                                started=acted)
                timings["verify"] = round(_ms(t2) + st.outcome_ms, 1)
        except ActionFailure as exc:
            if exc.code is not ErrorCode.MISDIRECTED:
                c.data["verify_error"] = str(exc)
            else:  # the click went elsewhere: never verified, whatever the page did
                timings["total"] = _ms(t0)
                return ActionResult(success=False, action=label(), node_id=acted_on(), error_code=exc.code,
                                    message=str(exc), recovered_from=c.recovered_from, point=c.point, data=c.data,
                                    timings_ms=timings)
        except (TabCrashedError, BrowserClosedError) as exc:
            # the action ran, but the page died before its effect could be seen
            timings["total"] = _ms(t0)
            return ActionResult(success=False, action=label(), node_id=acted_on(), error_code=exc.code,
                                message=f"{c.message} Then: {exc}".strip(), recovered_from=c.recovered_from,
                                point=c.point, data=c.data, timings_ms=timings)
        except VigilError as exc:
            c.data["verify_error"] = str(exc)
        finally:
            if c.target is not None:
                await release(page, c.target.session_id)
        timings["total"] = _ms(t0)
        msg = c.message
        if c.recovered_from:
            msg = f"(recovered {c.recovered_from} → {acted_on()}) {msg}"
        if verification is not None:
            msg = f"{msg} {verification.feedback}"
        return ActionResult(success=True, action=label(), node_id=c.target.node.node_id if c.target else None,
                            message=msg.strip(), verification=verification, recovered_from=c.recovered_from,
                            point=c.point, data=c.data, timings_ms=timings)

    async def _pre_state(self, c: ActionContext) -> PreState:
        # three reads of the page as it is now, before any input (none changes it): sent at once
        snap, reading, facts = await asyncio.gather(
            self.snapshots.snapshot(),  # (cached when nothing changed)
            read_stream(self.page, time.time() * 1000),
            probe(self.page, c.target, "state") if c.target else _nothing())
        return PreState(url=snap.url, nav_count=self.page.nav_count, mutations=reading.mutations,
                        t_ms=time.time() * 1000, snapshot=snap, node_id=c.target.node.node_id if c.target else None,
                        facts=facts, scroll=(snap.context.scroll_x, snap.context.scroll_y))

    async def _misdirected(self, c: ActionContext) -> ActionFailure | None:
        """After an action failed: had its click gone to another element (the input guard's verdict)?"""
        t = c.element()
        try:
            g = (await probe(self.page, t, "state", read_guard=True)).get("guard")
        except VigilError:
            return None
        if not isinstance(g, dict) or not g.get("misdirected"):
            return None
        c.data["misdirected"] = received(g)
        return ActionFailure(misdirected_message(t.node, g), code=ErrorCode.MISDIRECTED)

    def _post_facts(self, c: ActionContext) -> PostFacts | None:
        t = c.target
        if t is None:
            return None
        verdict: dict = {}

        async def read() -> dict:
            # The first read also takes the input guard's verdict on the action's clicks (same page call):
            # input that reached another element than the approved one fails the step (MISDIRECTED).
            try:
                facts = await probe(self.page, t, "state", read_guard=not verdict)
            except VigilError:
                return {}
            g = facts.pop("guard", None)
            if not verdict:
                verdict.update(g if isinstance(g, dict) else {"armed": False})
            if verdict.get("misdirected"):
                c.data["misdirected"] = received(verdict)
                raise ActionFailure(misdirected_message(t.node, verdict), code=ErrorCode.MISDIRECTED)
            return facts if facts.get("connected") else {}
        return read

    # -- finding the element -----------------------------------------------------------------
    async def _locate(self, c: ActionContext, node_id: str) -> str:
        """Find the live element for `node_id` (healing a stale ID by ghost match); its node ID."""
        page, snaps = self.page, self.snapshots
        snap = snaps.latest if snaps.latest is not None else await snaps.snapshot()
        ghost: Ghost | None = None
        if node_id in snap:
            try:
                c.target, c.snap = await resolve(page, snap, node_id), snap
                return node_id
            except UnknownNodeError:
                ghost = Ghost.of(snap.get(node_id), snap)
        else:
            for old in reversed(snaps.recent):
                if node_id in old:
                    ghost = Ghost.of(old.get(node_id), old)
                    break
        fresh = await snaps.snapshot(force=True)
        if node_id in fresh:
            n = fresh.get(node_id)
            if ghost is None or ((n.role or n.tag) == ghost.role and (n.name or "") == ghost.name):
                c.target, c.snap = await resolve(page, fresh, node_id), fresh
                return node_id
        if ghost is None:
            raise UnknownNodeError(f"No element with ID {node_id} on {fresh.url}. Use an ID from the latest snapshot "
                                   f"({len(fresh)} nodes, {fresh.stats.interactive} interactive).",
                                   code=ErrorCode.NOT_FOUND)
        m = ghost_match(ghost, fresh)
        if m is None:
            raise UnknownNodeError(f"Element {node_id} ({ghost.describe()}) is gone from the page and nothing similar "
                                   "replaced it (ghost match below 0.5). Take a new snapshot and choose again.",
                                   code=ErrorCode.STALE)
        c.target, c.snap = await resolve(page, fresh, m.node.node_id), fresh
        c.recovered_from = node_id
        c.data["recovery"] = {"from": node_id, "to": m.node.node_id, "score": m.score,
                              "distance_px": round(m.distance, 1),
                              # found again by a stored locator (issue [14]), not by score: which one
                              "locator": m.locator.code() if m.locator is not None else None}
        return m.node.node_id


async def _nothing() -> dict:
    return {}


def _ms(t: float) -> float:
    return round((time.monotonic() - t) * 1000, 1)
