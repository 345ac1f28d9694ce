"""Issue 12's snapshot defects, reproduced minimally on our own pages (tests/fixtures/snap_*.html).

Each defect also has a regression test on a real library in tests/acceptance/test_snapshot_real_defects.py;
these pin the rule itself on the smallest page that shows it.
"""

from __future__ import annotations

import json

from engine.names import norm


def _by_attr_id(snap, html_id):
    hits = [n for n in snap.nodes() if n.attrs.get("id") == html_id]
    assert hits, f"no node with id attribute {html_id!r}"
    return hits[0]


def _semantic(snap, **kw):
    return {e["i"]: e for e in snap.serialize("semantic", **kw).data["interactive_tree"]}


def test_transparent_controls_are_present_visible_and_checked(harness, server):
    """Defect 1: opacity:0 native inputs (TodoMVC toggles, switches) are laid out and take clicks."""
    async def check(tab):
        snap = await tab.snapshot()
        sem = _semantic(snap)
        toggles = snap.find(role="checkbox", name="Buy milk") + snap.find(role="checkbox", name="Walk the dog")
        assert len(toggles) == 2
        for t in toggles:
            assert t.rendered and t.visible and t.interactive, t
            assert t.node_id in sem
        assert toggles[0].states.get("checked") is True and "checked" in sem[toggles[0].node_id]["s"]
        assert not toggles[1].states.get("checked")
        # a switch whose input is shrunk to 0×0 inside its label: listed where the label is, with its state
        wifi = snap.find(role="checkbox", name="Wi-Fi")[0]
        label = _by_attr_id(snap, "sw1")
        assert wifi.visible and wifi.bounds == label.bounds and wifi.states.get("checked") is True
        assert "checked" in sem[wifi.node_id]["s"]
        bt = snap.find(role="checkbox", name="Bluetooth")[0]
        assert bt.visible and not bt.states.get("checked")
        plan = snap.find(role="radio", name="Plan A")[0]   # 1px visually-hidden radio
        assert plan.visible and plan.states.get("checked") is True and plan.bounds[2] > 2
        # but a transparent menu that lets clicks through is not there
        faded = snap.find(role="button", name="Faded item")[0]
        assert not faded.rendered and faded.node_id not in sem

    harness.page(server.url("snap_controls.html"), check)


def test_names_follow_slots_and_hosts_do_not_cover(harness, server):
    """Defects 2 and 3: slotted light-DOM text names shadow controls; a hit on the own host is no cover."""
    async def check(tab):
        snap = await tab.snapshot()
        assert snap.find(role="button", name="Save changes", exact=True)
        box = snap.find(role="checkbox", name="Remember me", exact=True)
        assert box and box[0].in_shadow
        assert [n.name for n in snap.find(role="option")] == ["Vanilla", "Chocolate"]
        assert snap.find(role="heading", name="Card title", exact=True)
        assert snap.find(role="link", name="Closed slot text", exact=True)  # a slot in a closed root
        # the label inside <x-checkbox> is part of its checkbox (not a click target of its own); the
        # checkbox's slotted words are hit as the host, which is itself: not covered (below)
        label = [n for n in snap.nodes() if n.tag == "label" and n.in_shadow]
        assert label and not label[0].interactive
        for n in snap.interactive():
            assert not n.occluded, (n, n.occluded_by_desc)

    harness.page(server.url("snap_components.html"), check)


def test_clipping_follows_containing_blocks_and_overflow_propagation(harness, server):
    """Defect 4: body overflow:hidden is the viewport's; absolute boxes escape non-positioned clips."""
    async def check(tab):
        snap = await tab.snapshot()
        email = snap.find(role="textbox", name="Email")[0]
        signin = snap.find(role="button", name="Sign in")[0]
        assert email.visible and signin.visible, "a dialog under a body scroll lock is in view"
        assert _by_attr_id(snap, "minprice").visible, "body overflow:hidden clips by the viewport, not body's box"
        assert _by_attr_id(snap, "escapes").visible, "absolute: its containing block is not the overflow box"
        clipped = _by_attr_id(snap, "clipped")
        assert clipped.rendered and not clipped.visible, "its positioned, clipping parent hides it"
        assert _by_attr_id(snap, "fixedbtn").visible, "fixed: the viewport is its containing block"
        sem = _semantic(snap)
        assert email.node_id in sem and signin.node_id in sem and clipped.node_id not in sem

    harness.page(server.url("snap_clip.html"), check)


def test_clickable_items_get_roles_from_their_list(harness, server):
    """Defect 6: li/tr that are click targets become option / menuitem / clickable, named by text."""
    async def check(tab):
        snap = await tab.snapshot()
        assert [n.name for n in snap.find(role="option")] == ["Paris", "Berlin"]
        assert [n.name for n in snap.find(role="menuitem")] == ["Rename", "Delete"]
        lis = [n for n in _by_attr_id(snap, "plain-ac").children]
        assert [(n.role, n.name, n.interactive) for n in lis] == [("clickable", "Lisbon", True),
                                                                  ("clickable", "Porto", True)]
        static = _by_attr_id(snap, "static-list").children
        assert all(n.role == "listitem" and not n.interactive for n in static), "plain list items stay text"
        row = _by_attr_id(snap, "clickrow")
        assert row.interactive and row.role == "clickable" and row.name == "Invoice 4411 $20"
        sem = _semantic(snap)
        assert {sem[n.node_id]["r"] for n in snap.find(role="option")} == {"opt"}
        assert all(n.node_id in sem for n in lis)

    harness.page(server.url("snap_controls.html"), check)


def test_aria_values_and_round_targets(harness, server):
    """Defects 7 and 8: range widgets carry their value; round cells are not covered by their grid."""
    async def check(tab):
        snap = await tab.snapshot()
        vol = snap.find(role="slider", name="Volume")[0]
        assert vol.value == "30" and vol.states.get("min") == "0" and vol.states.get("max") == "100"
        assert snap.find(role="slider", name="Day")[0].value == "Wednesday"   # aria-valuetext wins
        assert snap.find(role="spinbutton", name="Quantity")[0].value == "2"
        assert snap.find(role="progressbar", name="Upload")[0].value == "40"
        assert snap.find(role="meter", name="Disk")[0].value == "0.6"
        sem = _semantic(snap)
        assert sem[vol.node_id]["v"] == "30"
        days = [c for c in _by_attr_id(snap, "cal").children if c.role == "button"]
        assert len(days) == 7
        for d in days:
            assert not d.occluded, (d.name, d.occluded_by_desc)
            assert "occ" not in sem[d.node_id]
        # round cells under a real cover are still covered, and the cover is named
        for d in (c for c in _by_attr_id(snap, "cal2").children if c.role == "button"):
            assert d.occluded and d.occluded_by == _by_attr_id(snap, "cal-cover").node_id

    harness.page(server.url("snap_controls.html"), check)


def test_names_are_normalised(harness, server):
    """Defect 9: zero-width characters dropped, <wbr> joined, whitespace collapsed."""
    async def check(tab):
        snap = await tab.snapshot()
        assert _by_attr_id(snap, "zw").name == "get/pets/{petId}"
        assert _by_attr_id(snap, "wbr").name == "Supercalifragilistic"
        assert _by_attr_id(snap, "spaces").name == "Save draft"
        zl = _by_attr_id(snap, "zwlabel")
        assert zl.name == "Delete items" and zl.attrs["aria-label"] == "Delete items" and zl.attrs["title"] == "Delete"
        assert snap.find(role="button", name="get\u200b/pets/{petId}")[0].attrs["id"] == "zw"
        for fmt in ("tree", "semantic", "skeleton", "full"):
            text = snap.serialize(fmt).text
            assert "\u200b" not in text and "get/pets/{petId}" in text, fmt
        assert norm("Get\u200b /pets\u00ad ") == "get /pets"

    harness.page(server.url("snap_controls.html"), check)


def test_root_listeners_are_not_click_targets(harness, server):
    """Defect 11: a container whose only interactivity is a delegated listener is not clickable."""
    async def check(tab):
        snap = await tab.snapshot()
        root = _by_attr_id(snap, "root")
        assert root.has_click_listener and not root.interactive and root.tier == "structural" and not root.name
        marked = _by_attr_id(snap, "react-root")   # a marked framework root, with no control inside
        assert marked.has_click_listener and not marked.interactive
        leaf = _by_attr_id(snap, "leaf")
        assert leaf.interactive and leaf.role == "clickable" and leaf.name == "Listener-only leaf"
        names = [e.get("n", "") for e in snap.serialize("semantic").data["interactive_tree"]]
        assert not any("todos" in n and "All" in n for n in names), names

    harness.page(server.url("snap_text.html"), check)


def test_text_blocks_keep_inline_content_in_reading_order(harness, server):
    """Defects 12 and 13: a paragraph keeps its links' and code's words; a code block is one leaf."""
    sentence = ("The urllib.parse module, specified by RFC 2616 (which obsoletes RFC 2068) and by RFC 3986, "
                "is a lightweight parser.")

    async def check(tab):
        snap = await tab.snapshot()
        para = _by_attr_id(snap, "para")
        assert para.text_block and para.text == sentence
        links = [snap.find(role="link", name=f"RFC {n}")[0] for n in (2616, 2068, 3986)]
        assert all(ln.folded and ln.interactive and ln.parent is para for ln in links)
        # tree: the sentence whole, the links as addressable children, no shredded spans
        tree = snap.serialize("tree").data["page"]["body"]
        flat = []
        stack = [tree]
        while stack:
            d = stack.pop()
            flat.append(d)
            stack.extend(d.get("children") or ())
        entry = [d for d in flat if d.get("id") == para.node_id][0]
        assert entry["text"] == sentence
        assert [c["id"] for c in entry["children"]] == [ln.node_id for ln in links]
        assert not [d for d in flat if d.get("tag") == "em" or d.get("tag") == "span" and d.get("text") in ("def", "(")]
        assert not [d for d in flat if d.get("role") == "summary"], "no '100 more span items'"
        # full: the links in place, with their IDs
        full = snap.serialize("full").text
        assert (f'specified by <a data-id="{links[0].node_id}" href="https://tools.ietf.org/html/rfc2616" '
                f'data-interactive="true">RFC 2616</a> (which obsoletes <a data-id="{links[1].node_id}"') in full
        # semantic: the links are still listed on their own
        sem = _semantic(snap)
        assert all(sem[ln.node_id]["n"] == ln.name for ln in links)
        item = _by_attr_id(snap, "item")
        assert item.text == "Use get() to fetch, or put() to store."
        nav = _by_attr_id(snap, "navitem")
        assert not nav.text_block and not nav.text, "a list item that is only a link is not a text block"
        # the hidden permalink is not part of the heading's name
        assert _by_attr_id(snap, "sec").name == "Module contents"
        # code blocks: one leaf each, lines and indentation kept, a long one cut with a marker
        code = _by_attr_id(snap, "code")
        assert code.text_block and code.text == 'def greet(name):\n    return f"Hello {name}"'
        assert all(c.folded for c in code.children)
        long = _by_attr_id(snap, "long")
        assert long.text.startswith("x0 = 0\nx1 = 1\n") and long.text.endswith(" more characters)")
        assert len(long.text) < 2100
        entry = [d for d in flat if d.get("id") == long.node_id][0]
        assert "children" not in entry and entry["text"] == long.text
        json.dumps(snap.to_json_dict("tree"))

    harness.page(server.url("snap_text.html"), check)


def test_clips_of_transformed_boxes_and_the_visually_hidden_pattern(harness, server):
    """A transformed box holds the absolutely placed boxes in it (its scroll area clips them); a box cut
    to nothing by `clip` or `clip-path` shows nothing of what is in it."""
    async def check(tab):
        snap = await tab.snapshot()
        seen = snap.find(role="button", name="Seen in the menu", exact=True)[0]
        out = snap.find(role="button", name="Scrolled out of the menu", exact=True)[0]
        assert seen.visible and out.visible_ratio == 0 and not out.visible, (seen, out.bounds, out.visible_ratio)
        for name in ("Cut away by clip", "Cut away by clip-path"):
            n = snap.find(role="button", name=name, exact=True)[0]
            assert n.visible_ratio == 0 and n.flags & 2048, (name, n.bounds, n.visible_ratio)
        names = [e.get("n") for e in json.loads(snap.serialize("semantic").text)["interactive_tree"] if e["r"] == "btn"]
        assert names == ["Seen in the menu"], names

    harness.page(server.url("snap_clips.html"), check)
