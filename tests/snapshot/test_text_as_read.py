"""What a person reads (issue 39, items 1–5), on one page served by a real local HTTP server: CSS generated
content (a currency sign, "In stock", "Only 2 left"), SVG <text> and SVG links, text that is aria-hidden but
shown (a room price whose screen-reader copy is .sr-only text), a closed <details> body, text-transform, and
flex and grid layouts that place a label beside its value out of document order. The reading must hold the
words as shown, names must stay Chromium's (its accessibility tree), and an incremental walk after a change
must read what a full walk reads."""

from __future__ import annotations

import asyncio

import pytest

from engine.snapshot.serialize.reading import render_reading

from support.ax_diff import page_pairs
from support.recording_server import RecordingServer, Reply

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Hotel Lumen</title>
<style>
body{font-family:sans-serif}
.clear::after{content:"";display:table} .icon::before{content:"\\f101"}
.price::before{content:"€"} .stock::after{content:"In stock";display:block}
.left::after{content:"Only " attr(data-n) " left"}
.sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.code{text-transform:uppercase} .cap{text-transform:capitalize}
.grid{display:grid;grid-template-columns:200px 200px;grid-template-areas:"label value"}
.grid .v{grid-area:value} .grid .l{grid-area:label}
.rev{display:flex;flex-direction:row-reverse;justify-content:flex-end;gap:8px}
.ord{display:flex;gap:8px} .ord .a{order:2} .ord .b{order:1}
</style></head><body>
<h1>Hotel Lumen</h1>
<p>Price: <span class="price">129</span></p>
<div class="stock">Deluxe room</div>
<p class="left" data-n="2"><i class="icon"></i></p><div class="clear"></div>
<p id="later">Breakfast included</p>
<a href="#t" class="price">42</a>
<div class="room"><span aria-hidden="true">$240 per night</span><span class="sr-only">Price: 240 US dollars</span></div>
<button><span aria-hidden="true">★</span> Favourite</button>
<details id="cancel"><summary>Cancellation policy</summary><p>Free cancellation until 3 days before</p></details>
<details open><summary>House rules</summary><p>No parties after 22:00</p></details>
<p>Booking code: <span class="code">xk42-lumen</span></p>
<button class="code">save draft</button>
<h2 class="cap">the blue suite</h2>
<div class="grid"><span class="v">12 March</span><span class="l">Check-in</span></div>
<div class="rev"><span>3 nights</span><span>Stay</span></div>
<div class="ord" id="ord"><span class="a">Room 12</span><span class="b">Room number</span></div>
<svg width="320" height="110" role="img" aria-label="Occupancy chart">
<text x="10" y="20">Occupancy</text><text x="10" y="50"><tspan>June</tspan> <tspan>87%</tspan></text>
<a href="#report"><text x="10" y="90">Full report</text></a>
<a xlink:href="#old" xmlns:xlink="http://www.w3.org/1999/xlink"><text x="160" y="90">Last year</text></a>
<defs><text id="unused">Never drawn</text></defs></svg>
</body></html>"""


@pytest.fixture(scope="module")
def site():
    s = RecordingServer({"GET /hotel.html": Reply(PAGE.encode(), content_type="text/html; charset=utf-8")})
    yield s
    s.close()


XPAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Deposit</title>
<link rel="stylesheet" href="%s"></head><body><p>Deposit: <span class="gbp">50</span></p></body></html>"""


@pytest.fixture(scope="module")
def xsite():
    """A page whose style sheet comes from another origin (a CDN): the page cannot read its rules."""
    css = RecordingServer({"GET /x.css": Reply(b'.gbp::before{content:"\\a3"}', content_type="text/css")})
    page = RecordingServer({"GET /deposit.html": Reply((XPAGE % css.url("x.css")).encode(),
                                                       content_type="text/html; charset=utf-8")})
    yield page
    page.close()
    css.close()


@pytest.fixture(scope="module")
def tab(harness, site):
    t = harness.run(harness.browser.new_tab(site.url("hotel.html")), 30)
    yield t
    harness.run(t.close(), 30)


def reading(harness, tab, *, force: bool = False) -> list[str]:
    async def go():
        snap = await tab.snapshot(force=force)
        return render_reading(snap, full_page=True)[0].splitlines()[1:], snap
    lines, snap = harness.run(go(), 30)
    return lines


def test_generated_content_is_read_and_named(harness, tab):
    lines = reading(harness, tab, force=True)
    assert "Price: €129" in lines
    assert any(ln.startswith("Deluxe room") and ln.endswith("In stock") for ln in lines), lines
    assert "Only 2 left" in lines                 # strings and attr(); an icon glyph and an empty clearfix are no words
    assert any(ln.endswith('link "€42"') for ln in lines), lines
    # a rule's words appear on an element that takes its class later (an incremental walk reads them)
    harness.run(tab.page.evaluate("document.getElementById('later').classList.add('stock')"), 10)
    inc = reading(harness, tab)
    assert "Breakfast included In stock" in inc, inc
    assert inc == reading(harness, tab, force=True)


def test_generated_content_of_a_cross_origin_sheet_is_read(harness, xsite):
    async def go():
        t = await harness.browser.new_tab(xsite.url("deposit.html"))
        try:
            await t.snapshot()   # the walk asks the browser for the sheet it cannot read
            # the browser reads it in the background; the next walk (after a change) knows its rules
            for i in range(30):
                await t.page.evaluate("(i) => { document.body.dataset.n = i; }", i)
                lines = render_reading(await t.snapshot())[0].splitlines()
                if "Deposit: £50" in lines:
                    return lines
                await asyncio.sleep(0.1)
            return lines
        finally:
            await t.close()
    lines = harness.run(go(), 30)
    assert "Deposit: £50" in lines, lines


def test_svg_text_is_read_and_svg_links_are_links(harness, tab):
    async def go():
        snap = await tab.snapshot(force=True)
        links = {n.name: n for n in snap.nodes() if n.role == "link" and n.tag == "a"}
        return snap, links
    snap, links = harness.run(go(), 30)
    lines = render_reading(snap, full_page=True)[0].splitlines()
    assert "Occupancy" in lines and "June 87%" in lines, lines
    assert not any("Never drawn" in ln for ln in lines)
    assert "Full report" in links and "Last year" in links, sorted(links)
    assert links["Full report"].interactive and links["Last year"].interactive

    async def click():
        await tab.click(links["Full report"].node_id)
        return await tab.page.evaluate("location.hash")
    assert harness.run(click(), 30) == "#report"


def test_aria_hidden_text_a_person_sees_is_read(harness, tab):
    lines = reading(harness, tab, force=True)
    assert "$240 per night" in lines, lines
    assert not any("240 US dollars" in ln for ln in lines)   # the .sr-only copy is not seen
    assert any(ln.endswith('btn "Favourite"') for ln in lines), lines   # names keep following accname


def test_closed_details_body_is_not_read(harness, tab):
    lines = reading(harness, tab, force=True)
    assert not any("Free cancellation" in ln for ln in lines), lines
    assert "No parties after 22:00" in lines
    harness.run(tab.page.evaluate("document.getElementById('cancel').open = true"), 10)
    inc = reading(harness, tab)
    assert "Free cancellation until 3 days before" in inc, inc
    assert inc == reading(harness, tab, force=True)
    harness.run(tab.page.evaluate("document.getElementById('cancel').open = false"), 10)


def test_text_as_rendered_and_in_layout_order(harness, tab):
    lines = reading(harness, tab, force=True)
    assert "Booking code: XK42-LUMEN" in lines
    assert "## The Blue Suite" in lines
    # a name stays as written: Playwright's get_by_role finds it so (Chromium's tree differs in case only)
    assert any(ln.endswith('btn "save draft"') for ln in lines), lines
    for pair in ("Check-in 12 March", "Stay 3 nights", "Room number Room 12"):
        assert pair in lines, (pair, lines)
    # the order changes back: an incremental walk reads the new order
    harness.run(tab.page.evaluate("for (const s of document.querySelectorAll('#ord span')) s.className = ''"), 10)
    inc = reading(harness, tab)
    assert "Room 12 Room number" in inc, inc
    assert inc == reading(harness, tab, force=True)


def test_names_equal_chromiums(harness, tab):
    pairs = harness.run(page_pairs(tab, "hotel.html"), 60)
    got = {(p.chrome_role, p.chrome_name.strip()) for p in pairs}
    for want in [("link", "€42"), ("button", "Favourite"), ("link", "Full report"),
                 ("link", "Last year")]:
        assert want in got, f"Chromium's tree lacks {want}: {sorted(got)}"
    # (a <summary>'s role, DisclosureTriangle to Chromium, is a button to Vigil: not what this page is about)
    differ = [p.text() for p in pairs if not p.agrees() and p.tag != "summary"]
    assert not differ, "Vigil differs from Chromium:\n  " + "\n  ".join(differ)
