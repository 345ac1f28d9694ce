"""Occlusion proven by geometry (issue 41): on a page with many controls in view, the walker proves most of them
unoccluded from the boxes it walked and the text it measured instead of hit-testing each one
(engine/snapshot/js/walker/occlusion.js). Occlusion is a security check, so each case of
tests/fixtures/occlusion_attacks.html tries to slip a covered control past the proof — a transparent layer over
one button, deep in the form or under a sticky header or a fixed footer, a pseudo-element, overflowing or
indented transparent text, a transformed element from far away, a shadow root's layer, a pointer-events hole,
glyphs above a line of no height, a list marker, a modal's backdrop, an SVG drawing outside its box, a
slider's thumb — and checks that every node comes out exactly as when every control is hit-tested
(`S.occlusion = 'exact'`), that the covered controls are reported covered, and whether the proof was used.
"""

from __future__ import annotations

from engine.snapshot.stored import _row

# case → (controls that must come out occluded, by their id attribute; whether the proof may be used)
CASES = {
    "clean": ((), True),
    "overlay": (("b17",), True),
    "deep": (("q130",), True),
    "sticky": ((), True),
    "footer": ((), True),
    "pseudo": (("b21",), False),
    "textover": (("m12", "m13"), True),
    "indent": (("q14",), True),
    "transform": (("b12",), True),
    "shadow": (("q8",), True),
    "penone": (("b6",), True),
    "lineheight": (("b22",), True),
    "marker": (("b15",), False),
    "modal": (("b3", "q4"), False),
    "svg": (("q19",), False),
    "slider": (("b9",), False),
}
EXACT = "(k) => { window[k].occlusion = 'exact'; }"
PROOF = "(k) => { window[k].occlusion = 'proof'; }"


def _by_id_attr(snap) -> dict:
    return {n.attrs["id"]: n for n in snap.nodes() if n.attrs.get("id")}


def test_no_covered_control_slips_past_the_proof(harness, server):
    async def body(tab):
        out = {}
        for case in CASES:
            await tab.goto(server.url(f"occlusion_attacks.html?{case}"))
            # (on a page this small hit tests are cheap: the walker would not build the proof by itself)
            await tab.page.evaluate(PROOF, tab.key)
            snap = await tab.snapshot(force=True)
            proven = snap.stats.timings_ms.get("page_proven", 0)
            await tab.page.evaluate(EXACT, tab.key)
            exact = await tab.snapshot(force=True)
            same = [_row(n) for n in snap.nodes()] == [_row(n) for n in exact.nodes()]
            ids = _by_id_attr(snap)
            out[case] = (proven, same, {k: (ids[k].occluded, ids[k].occluded_by_desc) for k in CASES[case][0]},
                         [n.occluded_by_desc for n in snap.nodes() if n.occluded])
        return out

    res = harness.page(server.url("occlusion_attacks.html"), body, timeout=120)
    wrong = []   # (every case is judged: one report says which attacks got through)
    for case, (_, proof) in CASES.items():
        proven, same, marks, _descs = res[case]
        if not same:
            wrong.append(f"{case}: the proof changed the snapshot")
        wrong += [f"{case}: {cid} is covered but was not reported" for cid, (occ, _) in marks.items() if not occ]
        if (proven > 0) != proof:
            wrong.append(f"{case}: proof used for {proven} controls, expected {'some' if proof else 'none'}")
    assert not wrong, "\n".join(wrong)
    # the clean grid is proven, and nothing in it is occluded; the sticky header and the footer cover rows
    assert res["clean"][3] == []
    assert any("Sticky header" in (d or "") for d in res["sticky"][3])
    assert any("Fixed footer" in (d or "") for d in res["footer"][3])


# The words of a row far below the view, drawn up over row 12's "Details" by a negative indent in vertical writing
# (their element's box stays down there): the proof measures the text of rows out of view as one Range per run of rows
# first, and must still see these words where they are drawn.
FAR_TEXT = """() => {
  const m = document.getElementById('m150'), r = document.getElementById('m12').getBoundingClientRect();
  m.style.cssText = 'position:relative;z-index:4;writing-mode:vertical-lr;height:20px;overflow:visible;' +
    'color:transparent;font-size:30px;white-space:pre';
  m.textContent = 'WWWWWWWWWW';
  m.style.textIndent = -(m.getBoundingClientRect().top - r.top + 4) + 'px';
  const t = document.createRange(); t.selectNodeContents(m.firstChild);
  const b = t.getBoundingClientRect();
  const x = r.left + r.width / 2, far = m.getBoundingClientRect().top > innerHeight;
  return [far, b.top < r.top && b.bottom > r.bottom && b.left < x && b.right > x];
}"""


def test_words_drawn_from_far_below_the_view_are_seen(harness, server):
    async def body(tab):
        placed = await tab.page.evaluate(FAR_TEXT)
        await tab.page.evaluate(PROOF, tab.key)
        snap = await tab.snapshot(force=True)
        await tab.page.evaluate(EXACT, tab.key)
        exact = await tab.snapshot(force=True)
        m12 = _by_id_attr(snap)["m12"]
        return (placed, snap.stats.timings_ms.get("page_proven", 0),
                [_row(n) for n in snap.nodes()] == [_row(n) for n in exact.nodes()], m12.occluded, m12.occluded_by_desc)

    placed, proven, same, occluded, desc = harness.page(server.url("occlusion_attacks.html?clean"), body, timeout=60)
    assert placed == [True, True], "the words were not drawn from below the view over row 12"
    assert proven > 0 and same
    assert occluded and "WWWW" in (desc or ""), desc


# A zero-height flex container with a line-height far above its font's: its line box reaches up over rows 12 to 24,
# where its glyphs are not (they sit mid-line) and its own box is not (zero height). A hit test there returns it.
LINE_BOX = """() => {
  const m = document.getElementById('m150'), r = document.getElementById('m12').getBoundingClientRect();
  m.style.cssText = 'position:relative;z-index:4;display:flex;align-items:flex-end;height:0;overflow:visible;' +
    'color:transparent;font-size:30px;white-space:pre';
  m.textContent = 'WWWWWWWWWWWWWWWWWWWW';
  m.style.lineHeight = (2 * (m.getBoundingClientRect().bottom - (r.top + r.height / 2))) + 'px';
}"""


def test_a_line_box_far_taller_than_its_words_is_seen_where_it_takes_hits(harness, server):
    async def body(tab):
        await tab.page.evaluate(LINE_BOX)
        await tab.page.evaluate(PROOF, tab.key)
        snap = await tab.snapshot(force=True)
        await tab.page.evaluate(EXACT, tab.key)
        exact = await tab.snapshot(force=True)
        covered = sorted(k for k, n in _by_id_attr(exact).items()
                         if n.occluded and "WWWW" in (n.occluded_by_desc or ""))
        return covered, [_row(n) for n in snap.nodes()] == [_row(n) for n in exact.nodes()]

    covered, same = harness.page(server.url("occlusion_attacks.html?clean"), body, timeout=60)
    assert covered, "the line box covers no control: the page did not set up the attack"
    assert same, "the proof called controls clear that the line box covers"
