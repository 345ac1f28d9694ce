"""Pass 1: the complete VirtualNode tree on real pages in real Chromium."""

from __future__ import annotations


def _by_attr_id(snap, html_id):
    hits = [n for n in snap.nodes() if n.attrs.get("id") == html_id]
    assert hits, f"no node with id attribute {html_id!r}"
    return hits[0]


def test_every_label_style(harness, server):
    async def check(tab):
        snap = await tab.snapshot()
        names = {i: _by_attr_id(snap, i).name for i in
                 ("a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9", "a10", "a11", "a12", "a13", "a14")}
        assert names["a1"] == "Label For"
        assert names["a2"] == "Wrapping Label"
        assert names["a3"] == "Labelled By"
        assert names["a4"] == "Aria Label"
        assert names["a5"] == "Placeholder Text"
        assert names["a6"] == "Email Address"          # preceding sibling text
        assert names["a7"] == "Title Text"
        assert names["a8"] == "shipping zip"            # name attribute, last resort
        assert names["a9"] == "Country"
        assert names["a10"] == "Your message"
        assert names["a11"] == "Gift wrap"
        assert names["a12"] == "Save draft"             # name from content, inline text joined
        assert names["a13"] == "Home logo"              # img alt inside a link
        assert names["a14"] == "Send it"
        assert _by_attr_id(snap, "a15").name == "Subscribe to news"   # text after a checkbox
        sel = _by_attr_id(snap, "a9")
        assert sel.role == "combobox" and sel.value == "France"
        chk = _by_attr_id(snap, "a11")
        assert chk.role == "checkbox" and chk.states.get("checked") is True
        assert _by_attr_id(snap, "a6").role == "textbox"
        assert snap.find(role="textbox", name="email address")[0].node_id == _by_attr_id(snap, "a6").node_id

    harness.page(server.url("labels.html"), check)


def test_open_and_closed_shadow_roots(harness, server):
    async def check(tab):
        snap = await tab.snapshot()
        ob = snap.find(role="button", name="Open button")
        cb = snap.find(role="button", name="Closed button")
        db = snap.find(role="button", name="Declarative closed")
        assert ob and ob[0].in_shadow and ob[0].interactive
        assert cb and cb[0].in_shadow, "closed shadow root content must be in the tree"
        assert db and db[0].in_shadow, "declarative closed shadow root found through CDP"
        coupon = snap.find(role="textbox", name="Coupon")
        assert coupon and coupon[0].in_shadow  # label[for] resolved inside the shadow root
        assert snap.find(role="heading", name="Open heading")[0].states.get("level") == 3
        host = [n for n in snap.nodes() if n.tag == "closed-widget"][0]
        assert cb[0].parent is host or cb[0] in list(host.iter())

    harness.page(server.url("shadow.html"), check)


def test_same_and_cross_origin_iframes(harness, server):
    async def check(tab):
        snap = await tab.snapshot()
        inner = snap.find(role="button", name="Inner button")
        assert len(inner) == 2, "one button per frame (same-origin and cross-origin)"
        frames = {f.frame_id: f for f in snap.frames}
        assert len(frames) == 2
        assert any(f.cross_process for f in frames.values()), "localhost vs 127.0.0.1 must be out of process"
        ids = [n.node_id for n in snap.nodes()]
        assert len(ids) == len(set(ids)), "IDs unique across frames"
        same_owner = _by_attr_id(snap, "same")
        cross_owner = _by_attr_id(snap, "cross")
        by_frame = {n.frame_id: n for n in inner}
        for owner in (same_owner, cross_owner):
            child_root = [c for c in owner.children if c.frame_id != owner.frame_id]
            assert child_root, "frame document hangs under its iframe element"
            btn = by_frame[child_root[0].frame_id]
            # bounds in top-level coordinates: iframe offset + 30px spacer inside the frame
            assert abs(btn.bounds[0] - owner.bounds[0]) <= 2
            assert abs(btn.bounds[1] - (owner.bounds[1] + 30)) <= 2
            assert btn.node_id.startswith("f") and btn.frame_id != tab.main_frame_id
        sem = snap.serialize("semantic").data["interactive_tree"]
        assert {e.get("f", 0) for e in sem} >= {0, 1, 2}

    harness.page(server.url("frames.html"), check)


def test_non_semantic_clickables(harness, server):
    async def check(tab):
        snap = await tab.snapshot()
        for hid in ("c1", "c2", "c3", "c4", "c5", "c6"):
            n = _by_attr_id(snap, hid)
            assert n.tier == "non-semantic", (hid, n.tier)
            assert n.interactive, hid
        assert _by_attr_id(snap, "c3").has_click_listener
        assert _by_attr_id(snap, "c1").name == "Onclick div"
        span = [n for n in _by_attr_id(snap, "c4").children if n.tag == "span"][0]
        assert not span.interactive, "inherited cursor:pointer is not a new clickable"
        assert _by_attr_id(snap, "c6").role == "textbox"
        assert _by_attr_id(snap, "c7").tier == "semantic" and not _by_attr_id(snap, "c7").interactive
        assert _by_attr_id(snap, "c8").states.get("disabled") is True
        tiers = snap.stats.tiers
        assert tiers["non-semantic"] >= 6 and tiers["semantic"] > 0 and tiers["structural"] > 0

    harness.page(server.url("clickables.html"), check)


def test_overlay_occludes_button(harness, server):
    async def check(tab):
        snap = await tab.snapshot()
        free = snap.find(role="button", name="Free button")[0]
        covered = snap.find(role="button", name="Covered button")[0]
        accept = snap.find(role="button", name="Accept cookies")[0]
        assert not free.occluded
        assert covered.occluded
        banner = _by_attr_id(snap, "banner")
        assert covered.occluded_by == banner.node_id
        assert "banner" in covered.occluded_by_desc and "cookies" in covered.occluded_by_desc
        assert not accept.occluded
        entry = [e for e in snap.serialize("semantic").data["interactive_tree"] if e["i"] == covered.node_id][0]
        assert entry["occ"] is True

    harness.page(server.url("overlay.html"), check)


def test_offscreen_partial_hidden_and_scroll_container(harness, server):
    async def check(tab):
        snap = await tab.snapshot()
        seen = snap.find(role="button", name="Seen")[0]
        partial = snap.find(role="button", name="Partial")[0]
        far = snap.find(role="button", name="Far below")[0]
        hidden = snap.find(role="button", name="Hidden")[0]
        invis = snap.find(role="button", name="Invisible")[0]
        assert seen.visible and seen.visible_ratio == 1
        assert 0 < partial.visible_ratio < 2 / 3 and not partial.visible   # 20 of 60 px in view
        assert far.rendered and not far.visible and far.visible_ratio == 0
        assert not hidden.rendered and not hidden.visible
        assert not invis.rendered
        box = _by_attr_id(snap, "box")
        assert box.scroll and box.scroll["has_more"] is True and box.scroll["depth"] == "0%"
        rows = [snap.find(role="button", name=f"Row {i}")[0] for i in range(1, 7)]
        assert rows[0].visible and rows[1].visible
        assert not rows[4].visible and not rows[5].visible, "clipped by the scroll container"
        sem = snap.serialize("semantic").data
        listed = {e["i"] for e in sem["interactive_tree"]}
        assert seen.node_id in listed and far.node_id not in listed and rows[5].node_id not in listed
        assert sem["scrollable_containers"][0]["id"] == box.node_id
        full = snap.serialize("semantic", full_page=True).data
        assert far.node_id in {e["i"] for e in full["interactive_tree"]}
        await tab.page.evaluate("document.getElementById('box').scrollTop = 1000")
        snap2 = await tab.snapshot()
        box2 = snap2.get(box.node_id)
        assert box2.scroll["has_more"] is False and box2.scroll["depth"] == "100%"
        assert snap2.get(rows[5].node_id).visible

    harness.page(server.url("visibility.html"), check)


def test_deep_nesting_1000_levels(harness, server):
    async def check(tab):
        snap = await tab.snapshot()
        btn = snap.find(role="button", name="Deep button")[0]
        assert btn.depth > 1000
        for fmt in ("tree", "semantic", "skeleton", "full"):
            out = snap.serialize(fmt)
            assert "Deep button" in out.text
        assert len(btn.to_dict()) > 5

    harness.page(server.url("deep.html"), check)
