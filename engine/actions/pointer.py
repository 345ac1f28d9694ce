"""Pointer and focus: where a click lands (scrolled into view, hit-tested, refused when covered) and
how a field gets focus (a real click when the widget takes focus from nothing else)."""

from __future__ import annotations

from pathlib import Path

from engine.actions import input as inp
from engine.actions.context import ActionContext
from engine.actions.locate import (
    ActionFailure,
    Target,
    call_on,
    cover_message,
    describe,
    probe,
    scroll_into_view,
    to_top_level,
)
from engine.errors import ErrorCode

FOCUS = (Path(__file__).resolve().parent / "js" / "focus.js").read_text()
VERBS = {0: "Hovered over", 1: "Clicked", 2: "Double-clicked"}


async def pointer(c: ActionContext, *, force: bool, clicks: int, target: Target | None = None) -> None:
    """Scroll into view, hit-test, then move/click there with real input. `target` (default: the
    action's own element) lets an action click something else on its way, e.g. an option."""
    page = c.page
    t = target or c.element()
    await scroll_into_view(page, t)
    f = await probe(page, t, "pointer")
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
    if not local:
        raise ActionFailure(f"{what} has no point on the screen to act at.", code=ErrorCode.NOT_ACTIONABLE)
    snap = c.located_snapshot() if target is None else await c.snapshots.snapshot()
    (x, y), frame_cover = await to_top_level(page, snap, t, local)
    cover = None if f.get("point") else f.get("cover")
    cover = cover or frame_cover
    if cover and not force:
        raise ActionFailure(cover_message(t.node, cover, snap), code=ErrorCode.OCCLUDED)
    c.point = (round(x, 1), round(y, 1))
    if clicks:
        await inp.mouse_click(page, x, y, clicks=clicks)
    else:
        await inp.mouse_move(page, x, y)
    via = " (through its label)" if f.get("via") == "label" else ""
    if target is None:
        c.data["via"] = f.get("via")
    forced = " despite the cover (force=True)" if cover else ""
    c.message = f"{VERBS[clicks]} {what}{via}{forced}."
    if f.get("missed") and clicks:
        c.message += " (No point of it takes clicks itself, so the click went to the element around it.)"


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
