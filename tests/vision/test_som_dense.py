"""Set-of-Mark badges on dense and awkward pages, in stored pictures (engine.vision.som) and in the
live overlay's placement (gui.page.overlay), on real pages in real Chromium: a flatpickr calendar
(badges in their own day cell, off every day number), a wrapped link on the Python docs (a box per
line), and a link a sticky header covers (its badge never on the header's search box)."""

from __future__ import annotations

import os

import pytest

from engine.vision import som_image

from support.calendar_badges import CALENDAR_STILL_JS, DAYS_JS, _gap, _overlaps, check_calendar_badges
from support.real_corpus import corpus_installed, open_widget  # noqa: F401  (fixture)

# the first link of a paragraph that wraps onto two lines, scrolled to the middle of the viewport
WRAPPED_JS = """() => { for (const a of document.querySelectorAll('p a')) {
  const tops = new Set([...a.getClientRects()].map(r => Math.round(r.top)));
  if (tops.size >= 2 && a.textContent.length > 12) { a.scrollIntoView({block: 'center'}); return a.textContent; } }
  return null; }"""




async def open_calendar(tab) -> list[dict]:
    snap = await tab.snapshot()
    field = next(n for n in snap.nodes() if n.role == "textbox" and n.name == "Departure date")
    await tab.click(field.node_id)
    await tab.page.wait_for_function(CALENDAR_STILL_JS)
    return await tab.page.evaluate(DAYS_JS)


def test_calendar_badges_sit_in_their_own_day_off_every_day_number(harness, server, corpus_installed):  # noqa: F811
    async def go(tab):
        days = await open_calendar(tab)
        # forced: a reused snapshot can keep the cells where the opening animation had them (a
        # transform animation changes no DOM: the incremental walk does not see it move)
        snap = await tab.snapshot(force=True)
        res = await som_image(tab, snap)
        assert res.scale == 1.0
        badges = {m.node_id: m.label for m in res.marks if m.label is not None}
        n = check_calendar_badges(badges, days, snap)
        assert n == 31, f"{n} March days checked"
        assert any(m.small for m in res.marks), "the dense grid got small badges"
        out = os.environ.get("VIGIL_ARTIFACTS")
        if out:
            res.save(os.path.join(out, "som_calendar.png"))

    open_widget(harness, server, "datepicker.html", go)


def test_wrapped_link_gets_a_box_per_line(harness, server, corpus_installed):  # noqa: F811
    from gui.page.overlay import overlay_items

    async def go(tab):
        await tab.page.set_viewport_size({"width": 900, "height": 700})
        name = await tab.page.evaluate(WRAPPED_JS)
        assert name, "the docs page has a link wrapped over two lines"
        await tab.page.wait_for_timeout(200)
        lines = await tab.page.evaluate("""(name) => [...[...document.querySelectorAll('p a')]
            .find(a => a.textContent === name).getClientRects()].map(r => [r.x, r.y, r.width, r.height])""", name)
        snap = await tab.snapshot()
        link = next(n for n in snap.nodes() if n.role == "link" and n.name == name and n.interactive)
        assert link.line_rects and len(link.line_rects) == 2, link.line_rects
        res = await som_image(tab, snap)
        m = res.mark(link.node_id)
        assert len(m.lines) == 2 and m.box[2] - m.box[0] > 600, "two line boxes, their union spans the paragraph"
        first, second = m.lines
        assert second[1] >= first[3] - 1, "line by line, top to bottom"
        assert _gap(m.label, first) <= 1, "the badge is attached to the first line"
        for got, want in zip(m.lines, [lines[0], lines[-1]], strict=True):
            assert abs(got[0] - want[0]) <= 1 and abs(got[1] - want[1]) <= 1
        # the blank corner of the rectangle around both lines (below the first, right of the second) is
        # not boxed: no link-coloured outline or tint there, and the live overlay does not hit it
        from engine.vision.som import ROLE_GROUPS
        corner = (second[2] + 20, second[1] + 6)
        assert res.image.getpixel(corner) != ROLE_GROUPS["link"][1]
        assert res.image.getpixel((first[0], (first[1] + first[3]) // 2)) == ROLE_GROUPS["link"][1]
        boxes, _ = overlay_items(snap)
        box = next(b for b in boxes if b.node_id == link.node_id)
        assert len(box.parts()) == 2
        assert not box.hit(*corner) and box.hit(second[0] + 5, second[1] + 5) and box.hit(first[0] + 5, first[1] + 5)
        out = os.environ.get("VIGIL_ARTIFACTS")
        if out:
            res.save(os.path.join(out, "som_wrapped_link.png"))

    harness.page(server.url("real/pydoc/library/functions.html"), go)


def test_covered_link_badge_never_lands_on_the_search_box(harness, server):
    async def go(tab):
        await tab.page.evaluate("window.scrollTo(0, 48)")  # the first link now lies under the header
        await tab.page.wait_for_timeout(100)
        snap = await tab.snapshot()
        under = next(n for n in snap.nodes() if n.attrs.get("id") == "under")
        search = next(n for n in snap.nodes() if n.role == "searchbox")
        assert under.occluded and not search.occluded, "the header covers the first link"
        res = await som_image(tab, snap)
        m = res.mark(under.node_id)
        assert m.occluded
        others = [o for o in res.marks if o.node_id != m.node_id and not o.occluded]
        if m.label is not None:  # drawn: attached to its own box and over no other element
            assert _gap(m.label, m.box) <= 1
            for o in others:
                assert not _overlaps(m.label, o.box), f"the covered link's badge lies on {o.role} {o.node_id}"
        # and no badge at all lands on another element's box where it can be helped: none here
        for a in res.marks:
            for o in others:
                if a.label is not None and o is not a and not (o.box[0] <= a.box[0] and o.box[1] <= a.box[1]
                                                               and o.box[2] >= a.box[2] and o.box[3] >= a.box[3]):
                    assert not _overlaps(a.label, o.box), f"the badge of {a.node_id} lies on {o.node_id}"

    harness.page(server.url("sticky_header.html"), go)


@pytest.mark.parametrize("page", ["grid.html", "gridjs.html"])
def test_table_badges_are_attached_and_apart(harness, server, corpus_installed, page):  # noqa: F811
    """On the data grids every badge is attached to its own box (inside or touching) and no two
    badges overlap."""
    async def go(tab):
        snap = await tab.snapshot()
        res = await som_image(tab, snap)
        labelled = [m for m in res.marks if m.label is not None]
        assert len(labelled) >= 20
        for m in labelled:
            assert _gap(m.label, m.parts[0]) <= 1, f"badge {m.node_id} {m.label} is detached from {m.parts[0]}"
        for i, a in enumerate(labelled):
            for b in labelled[i + 1:]:
                assert not _overlaps(a.label, b.label)

    open_widget(harness, server, page, go)
