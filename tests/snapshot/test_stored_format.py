"""Snapshots at rest keep where a person sees each box: the part a scroll area leaves (`visible_bounds`) and
one box per line of a wrapped link (`line_rects`) come back from the store as they were taken; snapshots
stored by an older Vigil (format 1, without them) still open."""

from __future__ import annotations

from engine.snapshot.stored import load_snapshot, snapshot_bytes

from support.paths import FIXTURES

PAGE = """<!doctype html><meta charset=utf-8><body style="font: 16px sans-serif">
<p style="width: 220px">Read the <a href="#g">guide to writing long and careful link texts</a> first.</p>
<div role=listbox style="height: 60px; overflow: auto; width: 200px">
  <div role=option tabindex=0 style="height: 40px">One</div><div role=option tabindex=0 style="height: 40px">Two</div>
  <div role=option tabindex=0 style="height: 40px">Three</div>
</div></body>"""


def test_line_boxes_and_visible_parts_survive_the_store(harness, tmp_path):
    page = tmp_path / "p.html"
    page.write_text(PAGE, encoding="utf-8")
    snap = harness.page(page.as_uri(), lambda tab: tab.snapshot(force=True))
    link = snap.find("link", "guide to writing long and careful link texts", exact=True)[0]
    two = snap.find("option", "Two", exact=True)[0]
    assert link.line_rects and len(link.line_rects) >= 2
    assert two.visible_bounds is not None and two.visible_bounds[3] < two.bounds[3]  # half scrolled out
    back = load_snapshot(snapshot_bytes(snap))
    assert back.get(link.node_id).line_rects == [tuple(r) for r in link.line_rects]
    assert back.get(two.node_id).visible_bounds == tuple(two.visible_bounds)


def test_a_snapshot_stored_by_an_older_vigil_still_opens():
    old = (FIXTURES / "snapshots" / "labels.json").read_bytes()
    assert b'"format":"vigil-snapshot/1"' in old
    snap = load_snapshot(old)
    assert snap.find("textbox", "Label For", exact=True) and all(n.line_rects is None for n in snap.nodes())
