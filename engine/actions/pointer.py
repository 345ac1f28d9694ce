"""Pointer and focus: where a click lands (scrolled into view, hit-tested, refused when covered) and
how a field gets focus (a real click when the widget takes focus from nothing else)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path

from engine.actions import input as inp
from engine.actions.context import ActionContext
from engine.actions.locate import (
    ActionFailure,
    Target,
    call_on,
    cover_message,
    describe,
    guard,
    misdirected_message,
    opens_list,
    probe,
    scroll_into_view,
    to_top_level,
)
from engine.browser.target import PageTarget
from engine.errors import ErrorCode, VigilError

FOCUS = (Path(__file__).resolve().parent / "js" / "focus.js").read_text()
VERBS = {0: "Hovered over", 1: "Clicked", 2: "Double-clicked"}
SCROLL_WAIT_S = 2.0  # how long a cross-process scroll may take to reach the parent frames


async def pointer(c: ActionContext, *, force: bool, clicks: int, target: Target | None = None) -> None:
    """Scroll into view, hit-test, then move/click there with real input. `target` (default: the
    action's own element) lets an action click something else on its way, e.g. an option."""
    page = c.page
    t = target or c.element()
    await scroll_into_view(page, t)
    what = describe(t.node)
    # A frame in another process scrolls its parents by asking the browser, which answers later:
    # until the parent has moved, the point lies outside its window and a click there hits nothing.
    # Look again every animation frame or so, up to SCROLL_WAIT_S; the same for a target whose
    # fade-in has not begun to show it (a delayed or just-started animation holds it at opacity 0).
    deadline = time.monotonic() + SCROLL_WAIT_S
    # the action's own element may open a list where its opener was pressed (a select's box, its value)
    opens = opens_list(t.node) or (c.target is not None and opens_list(c.target.node))
    armed = None
    try:
        while True:
            # a click also arms the page's input guard for its press sequence at the point found (no extra call)
            f = await probe(page, t, "pointer", arm=clicks, opens=opens)
            armed = f.get("armed")
            if f.get("disabled") and clicks:
                raise ActionFailure(f"{what} is disabled; it cannot be clicked until the page enables it "
                                    "(often after required fields are filled).", code=ErrorCode.DISABLED)
            if not f.get("rendered"):
                if f.get("fading") and time.monotonic() < deadline:
                    await asyncio.sleep(0.03)  # a fade-in that has not shown it yet: look again
                    continue
                raise ActionFailure(f"{what} is not visible (hidden with CSS, or zero size), so it cannot be "
                                    "clicked. Open the menu or section that shows it first.",
                                    code=ErrorCode.NOT_ACTIONABLE)
            if f.get("offscreen"):
                raise ActionFailure(f"{what} could not be scrolled into view.", code=ErrorCode.NOT_ACTIONABLE)
            local = f.get("point") or f.get("center")
            if not local:
                raise ActionFailure(f"{what} has no point on the screen to act at.", code=ErrorCode.NOT_ACTIONABLE)
            snap = c.located_snapshot() if target is None else await c.snapshots.snapshot()
            (x, y), frame_cover, in_view = await to_top_level(page, snap, t, local)
            if in_view:
                break
            if time.monotonic() >= deadline:
                raise ActionFailure(f"{what} could not be scrolled into view: its frame stayed outside the "
                                    "window. Scroll the page to it, then try again.", code=ErrorCode.NOT_ACTIONABLE)
            await asyncio.sleep(0.03)
        cover = None if f.get("point") else f.get("cover")
        cover = cover or frame_cover
        if cover and not force:
            raise ActionFailure(cover_message(t.node, cover, snap), code=ErrorCode.OCCLUDED)
        if armed == "refused":  # the page claimed the guard before Vigil did: never click on it
            raise ActionFailure(misdirected_message(t.node, {"refused": True}), code=ErrorCode.MISDIRECTED)
        c.point = (round(x, 1), round(y, 1))
        if t.session_id != page.session_id:
            await _route_to_frame(page, t, x, y, what)
        await inp.mouse_move(page, x, y)
        if clicks:
            if armed:
                # The pointer is there: is the approved element still what it hits (the page may swap it on
                # the first pointermove)? If not, no press is sent at all. The one page call this check adds.
                moved = await guard(page, t, "moved", local[0], local[1])
                if isinstance(moved, dict) and moved.get("misdirected"):
                    c.data["misdirected"] = received(moved)
                    raise ActionFailure(misdirected_message(t.node, moved), code=ErrorCode.MISDIRECTED)
            # A swap at the press (pointerdown/mousedown) is stopped in the page: the guard cancels every
            # later event of the press that reaches another element, so no listener of it runs and no
            # default action (activation, submit, focus) happens; the step's verification reads its verdict.
            await inp.mouse_press(page, x, y, clicks=clicks)
    except VigilError as exc:
        if armed is True and exc.code is not ErrorCode.MISDIRECTED:
            with contextlib.suppress(VigilError):
                await guard(page, t, "disarm")  # a watch Vigil will not read must not outlive the step
        raise
    via = " (through its label)" if f.get("via") == "label" else ""
    if target is None:
        c.data["via"] = f.get("via")
    forced = " despite the cover (force=True)" if cover else ""
    c.message = f"{VERBS[clicks]} {what}{via}{forced}."
    if f.get("missed") and clicks:
        c.message += " (No point of it takes clicks itself, so the click went to the element around it.)"


def received(verdict: dict) -> dict:
    """What really received the input, for the result's data (role, name, #id or tag, snapshot ID)."""
    got = verdict.get("got") or {}
    return {"phase": verdict.get("phase"), "role": got.get("role"), "name": got.get("name"),
            "ref": got.get("ref"), "id": got.get("id"), "event": got.get("kind")}


# Run on the target element: from now on, note whether its document sees the mouse move. A mousemove is
# dispatched at the document's next animation frame, which a frame whose rendering Chromium throttles may not
# have for a long while; pointerrawupdate (secure contexts: https, localhost) comes at once, as the press will.
_ROUTE_ARM = ("function(KEY) { const S = window[KEY]; if (!S) return false; S.routed = false;"
              " if (!S.routeListen) { S.routeListen = true; const seen = () => { S.routed = true; };"
              " addEventListener('mousemove', seen, true);"
              " if ('onpointerrawupdate' in window) addEventListener('pointerrawupdate', seen, true); }"
              " return true; }")
_ROUTE_READ = "function(KEY) { const S = window[KEY]; return !!(S && S.routed); }"


async def _route_to_frame(page: PageTarget, t: Target, x: float, y: float, what: str) -> None:
    """Before clicking into a frame in another process, move the mouse there until that frame's document
    sees the move. The browser routes input to such a frame from its own map of where frames are, which
    is updated a frame or more after a scroll (seen on a loaded machine: the press went to the parent
    page's <iframe> element and the button never heard it)."""
    if not await call_on(page, t.session_id, t.object_id, _ROUTE_ARM, page.key):
        return  # no page-side state in that document: nothing to ask, click as before
    deadline = time.monotonic() + SCROLL_WAIT_S
    jitter = 0.0
    while True:
        await inp.mouse_move(page, x + jitter, y)
        if await call_on(page, t.session_id, t.object_id, _ROUTE_READ, page.key):
            return
        if time.monotonic() >= deadline:
            raise ActionFailure(f"{what} is in a frame that does not receive the mouse yet (the browser still "
                                "routes input at that point elsewhere). Try again in a moment.",
                                code=ErrorCode.NOT_ACTIONABLE)
        await asyncio.sleep(0.03)
        jitter = 1.0 if jitter == 0 else 0.0  # a move to the same pixel may not count as a move


async def focus(c: ActionContext, clear: bool) -> dict:
    """Focus the element (selecting its text when `clear`); the page's answer says what happened."""
    t = c.element()
    await scroll_into_view(c.page, t)
    r = await call_on(c.page, t.session_id, t.object_id, FOCUS, clear)
    if not r.get("focused"):
        # Some widgets only take focus from a real click.
        await pointer(c, force=False, clicks=1)
        r = await call_on(c.page, t.session_id, t.object_id, FOCUS, clear)
    return dict(r)
