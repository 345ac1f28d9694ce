"""A snapshot taken while a CSS animation moves part of the page is not reused once it has stopped: the
next `tab.snapshot()` gives the boxes where the page has them now (a menu sliding in, as flatpickr's
calendar and most dropdown libraries open), equal to a forced full walk — not the mid-animation ones."""

from __future__ import annotations

import asyncio


def test_boxes_caught_mid_animation_are_not_reused_after_it_ends(harness, server):
    async def go(tab):
        await tab.page.evaluate("document.getElementById('toggle').click()")
        await tab.page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        mid = await tab.snapshot()
        first = mid.find("menuitem", "First", exact=True)[0]
        await asyncio.sleep(1.8)  # the 1.5 s animation is over; nothing in the DOM changed since
        after = await tab.snapshot()
        forced = await tab.snapshot(force=True)
        y_page = await tab.page.evaluate("document.querySelector('[role=menuitem]').getBoundingClientRect().y")
        return first.bounds, after.find("menuitem", "First", exact=True)[0].bounds, \
            forced.find("menuitem", "First", exact=True)[0].bounds, y_page

    mid, after, forced, y_page = harness.page(server.url("anim_menu.html"), go)
    assert abs(forced[1] - y_page) < 1.5
    assert mid[1] < forced[1] - 3, f"the first snapshot was not taken mid-animation ({mid} vs {forced})"
    assert abs(after[1] - forced[1]) < 0.5, f"reused the mid-animation box {after} (page: {forced})"
