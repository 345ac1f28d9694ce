"""The actions of a `Tab` on snapshot node IDs, each returning an `ActionResult`.

Every action: resolve the ID (self-healing a stale one by ghost match), act with real CDP
input, invalidate the snapshot (success or failure), wait for the page to settle, and verify
the expected outcome against the state captured before it ran. Page problems come back as a
result with an error code and a message for a person and a model — never as an exception.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from engine.actions import input as inp
from engine.actions.choose import SelectActions
from engine.actions.heal import Ghost, ghost_match
from engine.actions.keys import parse_chord
from engine.actions.locate import (PROBE, ActionFailure, Target, call_on, cover_message, describe, probe, release,
                                   resolve, scroll_into_view, to_top_level)
from engine.errors import BrowserClosedError, ErrorCode, NavigationError, TabCrashedError, UnknownNodeError, VigilError
from engine.models import NODE_ACTIONS, Action, ActionResult, ExpectedOutcome, PageEvent
from engine.observe.sentinel import PreState, default_expectation, verify
from engine.observe.stability import StabilityConfig, StabilityResult, wait_stable
from engine.observe.stream import read_stream, recent_events

if TYPE_CHECKING:
    from engine.snapshot.dom_snapshot import DomSnapshot

_JS = __import__("pathlib").Path(__file__).resolve().parent / "js"
FOCUS, CHECK_VALUE, SCROLL = ((_JS / f).read_text() for f in ("focus.js", "check_value.js", "scroll.js"))


class _Ctx:
    """What one action learned on its way: the target, the recovery, the message and extras."""

    def __init__(self) -> None:
        self.target: Target | None = None
        self.snap: "DomSnapshot | None" = None
        self.recovered_from: str | None = None
        self.message = ""
        self.data: dict[str, Any] = {}
        self.point: tuple[float, float] | None = None
        self.masked = False  # the target holds a secret: never echo typed text
        self.mark: dict | None = None  # the page just before the action's last step (see PreState.mark)


class TabActions(SelectActions):
    """Mixed into `Tab`."""

    stability: StabilityConfig = StabilityConfig()

    # -- observing ---------------------------------------------------------------------------
    async def wait_stable(self, config: StabilityConfig | None = None, *, since: float | None = None) -> StabilityResult:
        """Wait until no DOM mutation for 300 ms and no network for 500 ms (capped at 3 s)."""
        return await wait_stable(self, config or self.stability, since=since)

    async def recent_events(self, max_age_ms: int = 10_000) -> list[PageEvent]:
        """The mutation stream: meaningful page changes (toasts, errors, …) from every frame."""
        return await recent_events(self, max_age_ms)

    # -- the actions ---------------------------------------------------------------------------
    async def click(self, node_id: str, *, force: bool = False, expect: Any = None) -> ActionResult:
        return await self._run("click", f"click({node_id})", node_id, expect,
                               lambda c: self._pointer(c, force=force, clicks=1))

    async def double_click(self, node_id: str, *, force: bool = False, expect: Any = None) -> ActionResult:
        return await self._run("double_click", f"double_click({node_id})", node_id, expect,
                               lambda c: self._pointer(c, force=force, clicks=2))

    async def hover(self, node_id: str, *, force: bool = False, expect: Any = None) -> ActionResult:
        return await self._run("hover", f"hover({node_id})", node_id, expect,
                               lambda c: self._pointer(c, force=force, clicks=0))

    async def type(self, node_id: str, text: str, *, clear: bool = True, submit: bool = False,
                   expect: Any = None) -> ActionResult:
        return await self._run("type", None, node_id, expect, lambda c: self._type(c, text, clear, submit),
                               text=text, submit=submit, clear=clear)

    async def press(self, key: str, node_id: str | None = None, *, repeat: int = 1, expect: Any = None) -> ActionResult:
        s = f'press("{key}"' + (f", {node_id}" if node_id else "") + (f", repeat={repeat})" if repeat > 1 else ")")
        try:
            parse_chord(key)  # a bad key name: fail before touching the page
        except VigilError as exc:
            return ActionResult(success=False, action=s, error_code=exc.code, message=str(exc))
        if not 1 <= repeat <= 500:
            return ActionResult(success=False, action=s, error_code=ErrorCode.BAD_ARGUMENT, message="repeat must be 1–500.")
        return await self._run("press", s, node_id, expect, lambda c: self._press(c, key, repeat))

    async def select(self, node_id: str, option: str, *, expect: Any = None) -> ActionResult:
        return await self._run("select", f'select({node_id}, "{option}")', node_id, expect,
                               lambda c: self._select(c, option))

    async def check(self, node_id: str, *, expect: Any = None) -> ActionResult:
        return await self._run("check", f"check({node_id})", node_id, expect, lambda c: self._set_checked(c, True))

    async def uncheck(self, node_id: str, *, expect: Any = None) -> ActionResult:
        return await self._run("uncheck", f"uncheck({node_id})", node_id, expect,
                               lambda c: self._set_checked(c, False))

    async def scroll(self, node_id: str | None = None, direction: str = "down", amount: int | None = None, *,
                     expect: Any = None) -> ActionResult:
        if direction not in ("up", "down", "left", "right", "top", "bottom"):
            return ActionResult(success=False, action=f"scroll({direction!r})", error_code=ErrorCode.BAD_ARGUMENT,
                                message=f"Unknown scroll direction {direction!r}: use up, down, left, right, top or bottom.")
        s = f'scroll("{direction}"' + (f", {node_id}" if node_id else "") + (f", {amount}" if amount else "") + ")"
        return await self._run("scroll", s, node_id, expect, lambda c: self._scroll(c, direction, amount))

    async def navigate(self, url: str, *, expect: Any = None, timeout: float = 30.0) -> ActionResult:
        return await self._run("navigate", f'navigate("{url}")', None, expect, lambda c: self._navigate(c, url, timeout))

    async def back(self, *, expect: Any = None, timeout: float = 30.0) -> ActionResult:
        return await self._run("back", "back()", None, expect, lambda c: self._back(c, timeout))

    async def wait(self, ms: int, *, expect: Any = None) -> ActionResult:
        async def body(c: _Ctx) -> None:
            await asyncio.sleep(max(0, ms) / 1000)
            c.message = f"Waited {ms} ms."
        return await self._run("wait", f"wait({ms})", None, expect, body)

    async def act(self, action: Action, expect: Any = None) -> ActionResult:
        """Run an `Action` (its target must be a node ID; resolve {role, name} queries first)."""
        a = action
        if a.name in ("finish", "fail"):
            return ActionResult(success=False, action=a.to_string(), error_code=ErrorCode.BAD_ARGUMENT,
                                message=f"{a.name}() ends a run; it is not a page action.")
        if a.target is not None and not isinstance(a.target, str):
            return ActionResult(success=False, action=a.to_string(), error_code=ErrorCode.BAD_ARGUMENT,
                                message=f"Target {a.target.describe()} must be resolved to a node ID before acting.")
        n, t = a.name, a.node_id
        if n == "click":
            return await self.click(t, force=a.force, expect=expect)
        if n == "double_click":
            return await self.double_click(t, force=a.force, expect=expect)
        if n == "hover":
            return await self.hover(t, force=a.force, expect=expect)
        if n == "type":
            return await self.type(t, a.text or "", clear=a.clear, submit=a.submit, expect=expect)
        if n == "press":
            return await self.press(a.key, t, repeat=a.repeat, expect=expect)
        if n == "select":
            return await self.select(t, a.option, expect=expect)
        if n == "check":
            return await self.check(t, expect=expect)
        if n == "uncheck":
            return await self.uncheck(t, expect=expect)
        if n == "scroll":
            return await self.scroll(t, a.direction, a.amount, expect=expect)
        if n == "navigate":
            return await self.navigate(a.url, expect=expect)
        if n == "back":
            return await self.back(expect=expect)
        return await self.wait(a.ms or 0, expect=expect)

    # -- the common frame ----------------------------------------------------------------------
    async def _run(self, name: str, action_str: str | None, node_id: str | None, expect: Any,
                   body: Callable[[_Ctx], Awaitable[None]], **typed: Any) -> ActionResult:
        t0 = time.monotonic()
        timings: dict[str, float] = {}
        c = _Ctx()
        node_id = str(node_id) if node_id is not None and str(node_id).strip() else None
        if node_id is None and name in NODE_ACTIONS:
            return ActionResult(success=False, action=action_str or name, error_code=ErrorCode.BAD_ARGUMENT,
                                message=f"{name} needs the ID of the element to act on (from the latest snapshot).")
        exp: ExpectedOutcome | None = None
        try:
            exp = (ExpectedOutcome.model_validate(expect) if isinstance(expect, dict) else expect) \
                or default_expectation(name, node_id, submit=bool(typed.get("submit")))
        except ValueError as exc:
            return ActionResult(success=False, action=action_str or name, error_code=ErrorCode.BAD_ARGUMENT,
                                message=f"The expected outcome is not valid: {str(exc).splitlines()[0]}")

        def label() -> str:
            if action_str is not None:
                return action_str.replace(f"({node_id}", f"({c.target.node.node_id}", 1) if c.target and node_id else action_str
            nid = c.target.node.node_id if c.target else node_id
            shown = "•" * 8 if c.masked else typed.get("text", "")
            extra = (", clear=false" if not typed.get("clear", True) else "") + (", submit=true" if typed.get("submit") else "")
            return f'type({nid}, "{shown}"{extra})'

        try:
            self.check_alive()
            if node_id is not None:
                await self._locate(c, node_id)
                if exp is not None and exp.node_id is None and exp.type in ("value_changes", "state_changes") \
                        and node_id != c.target.node.node_id:
                    exp = exp.model_copy(update={"node_id": c.target.node.node_id})
            timings["locate"] = _ms(t0)
            pre = await self._pre_state(c)
            t1 = time.monotonic()
            await body(c)
            timings["act"] = _ms(t1)
            if c.mark:
                pre.mark = c.mark
            if c.data.get("noop") and expect is None:
                exp = ExpectedOutcome(type="no_change")  # already as asked: nothing was meant to change
        except VigilError as exc:
            self.invalidate()
            if c.target is not None:
                await release(self, c.target.session_id)
            timings["total"] = _ms(t0)
            # a DevTools command the page would not run (not one of the checks above): the element did
            # not take the action
            code = ErrorCode.NOT_ACTIONABLE if exc.code is ErrorCode.CDP_ERROR else exc.code
            return ActionResult(success=False, action=label(), node_id=c.target.node.node_id if c.target else node_id,
                                error_code=code, message=str(exc), recovered_from=c.recovered_from,
                                data=c.data, timings_ms=timings)
        self.invalidate()
        acted = time.monotonic()
        verification = None
        try:
            st = await self.wait_stable(since=acted)
            timings["settle"] = st.waited_ms
            c.data["settled"] = st.stable
            if not st.stable:
                c.data["settle_note"] = st.describe()
            t2 = time.monotonic()
            verification = await verify(self, exp, pre, c.target.node.node_id if c.target else None,
                                        self._post_facts(c) if c.target else None, started=acted)
            timings["verify"] = _ms(t2)
        except (TabCrashedError, BrowserClosedError) as exc:
            # the action ran, but the page died before its effect could be seen
            timings["total"] = _ms(t0)
            return ActionResult(success=False, action=label(), node_id=c.target.node.node_id if c.target else node_id,
                                error_code=exc.code, message=f"{c.message} Then: {exc}".strip(),
                                recovered_from=c.recovered_from, point=c.point, data=c.data, timings_ms=timings)
        except VigilError as exc:
            c.data["verify_error"] = str(exc)
        finally:
            if c.target is not None:
                await release(self, c.target.session_id)
        timings["total"] = _ms(t0)
        msg = c.message
        if c.recovered_from:
            msg = f"(recovered {c.recovered_from} → {c.target.node.node_id}) {msg}"
        if verification is not None:
            msg = f"{msg} {verification.feedback}"
        return ActionResult(success=True, action=label(), node_id=c.target.node.node_id if c.target else None,
                            message=msg.strip(), verification=verification, recovered_from=c.recovered_from,
                            point=c.point, data=c.data, timings_ms=timings)

    async def _pre_state(self, c: _Ctx) -> PreState:
        snap = await self.snapshot()  # the page as it is now (cached when nothing changed)
        reading = await read_stream(self, time.time() * 1000)
        facts = await probe(self, c.target, "state") if c.target else {}
        return PreState(url=snap.url, nav_count=self.nav_count, mutations=reading.mutations,
                        t_ms=time.time() * 1000, snapshot=snap, node_id=c.target.node.node_id if c.target else None,
                        facts=facts, scroll=(snap.context.scroll_x, snap.context.scroll_y) if snap else (0.0, 0.0))

    def _post_facts(self, c: _Ctx):
        async def read() -> dict:
            try:
                return await call_on(self, c.target.session_id, c.target.object_id, PROBE, self.key, "state") or {}
            except VigilError:
                return {}
        return read

    # -- finding the element -----------------------------------------------------------------
    async def _locate(self, c: _Ctx, node_id: str) -> None:
        snap = self._snapshot if self._snapshot is not None else await self.snapshot()
        ghost: Ghost | None = None
        if node_id in snap:
            try:
                c.target, c.snap = await resolve(self, snap, node_id), snap
                return
            except UnknownNodeError:
                ghost = Ghost.of(snap.get(node_id), snap)
        else:
            for old in reversed(self.recent_snapshots):
                if node_id in old:
                    ghost = Ghost.of(old.get(node_id), old)
                    break
        fresh = await self.snapshot(force=True)
        if node_id in fresh:
            n = fresh.get(node_id)
            if ghost is None or ((n.role or n.tag) == ghost.role and (n.name or "") == ghost.name):
                c.target, c.snap = await resolve(self, fresh, node_id), fresh
                return
        if ghost is None:
            raise UnknownNodeError(f"No element with ID {node_id} on {fresh.url}. Use an ID from the latest snapshot "
                                   f"({len(fresh)} nodes, {fresh.stats.interactive} interactive).", code=ErrorCode.NOT_FOUND)
        m = ghost_match(ghost, fresh)
        if m is None:
            raise UnknownNodeError(f"Element {node_id} ({ghost.describe()}) is gone from the page and nothing similar "
                                   "replaced it (ghost match below 0.5). Take a new snapshot and choose again.",
                                   code=ErrorCode.STALE)
        c.target, c.snap = await resolve(self, fresh, m.node.node_id), fresh
        c.recovered_from = node_id
        c.data["recovery"] = {"from": node_id, "to": m.node.node_id, "score": m.score,
                              "distance_px": round(m.distance, 1)}

    # -- bodies --------------------------------------------------------------------------------
    async def _pointer(self, c: _Ctx, *, force: bool, clicks: int, target: Target | None = None) -> None:
        """Scroll into view, hit-test, then move/click there with real input. `target` (default: the
        action's own target) lets an action click something else on its way, e.g. an option."""
        t = target or c.target
        await scroll_into_view(self, t)
        f = await probe(self, t, "pointer")
        what = describe(t.node)
        if f.get("disabled") and clicks:
            raise ActionFailure(f"{what} is disabled; it cannot be clicked until the page enables it "
                                "(often after required fields are filled).", code=ErrorCode.DISABLED)
        if not f.get("rendered"):
            raise ActionFailure(f"{what} is not visible (hidden with CSS, or zero size), so it cannot be clicked. "
                                "Open the menu or section that shows it first.", code=ErrorCode.NOT_ACTIONABLE)
        if f.get("offscreen"):
            raise ActionFailure(f"{what} could not be scrolled into view.", code=ErrorCode.NOT_ACTIONABLE)
        local = f.get("point") or f.get("center")
        snap = c.snap if target is None else await self.snapshot()
        (x, y), frame_cover = await to_top_level(self, snap, t, local)
        cover = None if f.get("point") else f.get("cover")
        cover = cover or frame_cover
        if cover and not force:
            raise ActionFailure(cover_message(t.node, cover, snap), code=ErrorCode.OCCLUDED)
        c.point = (round(x, 1), round(y, 1))
        if clicks:
            await inp.mouse_click(self, x, y, clicks=clicks)
        else:
            await inp.mouse_move(self, x, y)
        verb = {0: "Hovered over", 1: "Clicked", 2: "Double-clicked"}[clicks]
        via = " (through its label)" if f.get("via") == "label" else ""
        if target is None:
            c.data["via"] = f.get("via")
        forced = " despite the cover (force=True)" if cover else ""
        c.message = f"{verb} {what}{via}{forced}."
        if f.get("missed") and clicks:
            c.message += " (No point of it takes clicks itself, so the click went to the element around it.)"

    async def _focus(self, c: _Ctx, clear: bool) -> dict:
        t = c.target
        await scroll_into_view(self, t)
        r = await call_on(self, t.session_id, t.object_id, FOCUS, clear)
        if not r.get("focused"):
            # Some widgets only take focus from a real click.
            await self._pointer(c, force=False, clicks=1)
            r = await call_on(self, t.session_id, t.object_id, FOCUS, clear)
        return r

    async def _type(self, c: _Ctx, text: str, clear: bool, submit: bool) -> None:
        t = c.target
        f = await probe(self, t, "focus")
        c.masked = bool(f.get("secret")) or bool(t.node.redacted)
        what = describe(t.node)
        if f.get("disabled"):
            raise ActionFailure(f"{what} is disabled; nothing can be typed into it.", code=ErrorCode.DISABLED)
        if not f.get("editable"):
            raise ActionFailure(f"{what} is not a text field; use click, select or check for it.", code=ErrorCode.NOT_ACTIONABLE)
        if f.get("readonly"):
            raise ActionFailure(f"{what} is read-only.", code=ErrorCode.NOT_ACTIONABLE)
        r = await self._focus(c, clear)
        if clear and r.get("selected"):
            await inp.press_chord(self, "Delete")
        await inp.type_text(self, text)
        chk = await call_on(self, t.session_id, t.object_id, CHECK_VALUE, self.key, text, clear)
        shown = "a hidden value" if c.masked else f'"{text}"'
        if not chk.get("ok"):
            if c.masked or chk.get("secret"):
                why = "the field's value does not match what was typed (value hidden)"
            else:
                why = f'the field now holds "{chk.get("value")}"'
            if chk.get("maxLength") and len(text) > chk["maxLength"]:
                why += f" — it accepts at most {chk['maxLength']} characters"
            raise ActionFailure(f"Typed {shown} into {what}, but {why}.", code=ErrorCode.VALUE_MISMATCH)
        c.message = f"Typed {shown} into {what}."
        if submit:
            reading = await read_stream(self, time.time() * 1000)
            now = await probe(self, t, "state")
            c.mark = {"mutations": reading.mutations, "nav_count": self.nav_count, "valueFp": now.get("valueFp")}
            await inp.press_chord(self, "Enter")
            c.message += " Pressed Enter to submit."

    async def _press(self, c: _Ctx, key: str, repeat: int = 1) -> None:
        if c.target is not None:
            await self._focus(c, False)
        for _ in range(repeat):
            await inp.press_chord(self, key)
        times = f" {repeat} times" if repeat > 1 else ""
        c.message = f"Pressed {key}{times}" + (f" in {describe(c.target.node)}." if c.target else ".")

    async def _set_checked(self, c: _Ctx, want: bool) -> None:
        t = c.target
        what = describe(t.node)
        f = await probe(self, t, "state")
        if f.get("checked") is None and t.node.role not in ("checkbox", "radio", "switch", "menuitemcheckbox"):
            raise ActionFailure(f"{what} is not a checkbox, radio or switch; use click instead.", code=ErrorCode.NOT_ACTIONABLE)
        if f.get("checked") == want:
            c.message = f"{what} was already {'checked' if want else 'unchecked'}; nothing to do."
            c.data["noop"] = True
            return
        if not want and f.get("type") == "radio":
            raise ActionFailure(f"{what} is a radio button: choose another option of the group instead of unchecking it.",
                                code=ErrorCode.NOT_ACTIONABLE)
        await self._pointer(c, force=False, clicks=1)
        after = await probe(self, t, "state")
        if after.get("checked") != want:
            raise ActionFailure(f"Clicked {what}, but it is still {'unchecked' if want else 'checked'}.", code=ErrorCode.NO_EFFECT)
        via = " through its label" if c.data.get("via") == "label" else ""
        c.message = f"{'Checked' if want else 'Unchecked'} {what}{via}."

    async def _scroll(self, c: _Ctx, direction: str, amount: int | None) -> None:
        if c.target is None:
            sid, ctx = await self.context_for(self.main_frame_id)
            r = await self.cdp.send("Runtime.callFunctionOn", {
                "functionDeclaration": SCROLL, "executionContextId": ctx, "returnByValue": True,
                "arguments": [{"value": direction}, {"value": amount}, {"value": False}]}, session_id=sid)
            r = r.get("result", {}).get("value") or {}
        else:
            t = c.target
            r = await call_on(self, t.session_id, t.object_id, SCROLL, direction, amount, False)
            if r.get("isRoot") and not t.node.scroll:
                # Not a scroll container: "scroll to X" means bring X into view.
                r = await call_on(self, t.session_id, t.object_id, SCROLL, direction, amount, True)
                c.message = f"Scrolled {describe(t.node)} into view."
                c.data["scroll"] = r
                return
        c.data["scroll"] = r
        dx, dy = r.get("moved", [0, 0])
        if not dx and not dy:
            end = "bottom" if direction in ("down", "bottom") else "top" if direction in ("up", "top") else "edge"
            raise ActionFailure(f"{r.get('desc', 'the page').capitalize()} did not move: it is already at the {end}.",
                                code=ErrorCode.NO_EFFECT)
        c.message = f"Scrolled {r.get('desc')} {direction} by {abs(int(dy or dx))} px (now at {r.get('pct')}%" + \
            (", the end)." if r.get("atEnd") else ").")

    async def _navigate(self, c: _Ctx, url: str, timeout: float) -> None:
        await self.goto(url, timeout=timeout)
        c.message = f"Opened {self.page.url}."

    async def _back(self, c: _Ctx, timeout: float) -> None:
        before = self.page.url
        try:
            resp = await self.page.go_back(timeout=timeout * 1000, wait_until="load")
        except Exception as exc:  # Playwright's own error types
            raise NavigationError(f"Going back failed: {str(exc).splitlines()[0]}") from None
        if resp is None and self.page.url == before:
            raise ActionFailure("There is no previous page in this tab's history.", code=ErrorCode.NOT_ACTIONABLE)
        c.message = f"Went back to {self.page.url}."


def _ms(t: float) -> float:
    return round((time.monotonic() - t) * 1000, 1)
