"""A snapshot taken while a CSS animation moves part of the page is not reused once it has stopped: the
next `tab.snapshot()` gives the boxes where the page has them now (a menu sliding in, as flatpickr's
calendar and most dropdown libraries open), equal to a forced full walk — not the mid-animation ones."""

from __future__ import annotations

import asyncio

from engine.snapshot.serialize.hidden import hidden_reason


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


def test_a_walk_again_that_changed_nothing_gives_back_the_same_snapshot_but_a_fade_to_hidden_does_not(harness, server):
    """A colour transition under way keeps a snapshot from being reused without a walk, but when the walk again
    changes nothing the snapshot holds, the cache gives back the same snapshot object (the loop then knows the
    page is as the last step left it: no wait, the same picture). Text fading into its background does change
    what the snapshot holds (it is then hidden from a person): a new snapshot says so."""
    async def go(tab):
        await tab.page.evaluate("document.getElementById('tint').click()")
        await tab.page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        during = await tab.snapshot()
        running = await tab.page.evaluate("document.getAnimations().length")
        again = await tab.snapshot()
        await asyncio.sleep(0.8)  # the tint's 600 ms transition is over
        after = await tab.snapshot()
        await tab.page.evaluate("document.getElementById('fade').click()")
        await asyncio.sleep(0.8)  # the note's text is now the colour of its background
        faded = await tab.snapshot()
        forced = await tab.snapshot(force=True)
        return during, running, again, after, faded, forced

    during, running, again, after, faded, forced = harness.page(server.url("colour_fade.html"), go)
    assert running >= 1, "the tint's transition was not under way when the snapshot was taken"
    assert again is during and after is during, "a walk again that changed nothing gave a new snapshot"
    note = [n for n in faded.nodes() if (n.text or "").startswith("Read the terms")]
    note_forced = [n for n in forced.nodes() if (n.text or "").startswith("Read the terms")]
    assert faded is not during and note and note_forced, "the fade to the background's colour was not seen"
    said = hidden_reason(note[0])
    assert said == hidden_reason(note_forced[0]) == "the same colour as its background", \
        (said, hidden_reason(note_forced[0]))
