"""Stable IDs: across snapshots, across loads, through framework re-renders."""

from __future__ import annotations


def test_ids_stable_across_snapshots_and_loads(harness, server):
    async def ids(tab):
        snap = await tab.snapshot()
        return [(n.node_id, n.tag, n.name) for n in snap.nodes()]

    first = harness.page(server.url("labels.html"), ids)
    second = harness.page(server.url("labels.html"), ids)
    assert first == second, "the same page loaded the same way gets the same IDs"

    async def twice(tab):
        a = await tab.snapshot()
        await tab.page.evaluate("document.body.insertAdjacentHTML('afterbegin', '<button>Inserted</button>')")
        b = await tab.snapshot()
        assert b is not a
        for n in a.nodes():
            assert b.get(n.node_id).tag == n.tag
        new = b.new_ids_since(a)
        assert [b.get(i).name for i in new] == ["Inserted"]

    harness.page(server.url("labels.html"), twice)


def test_rerender_rows_inserted_on_top_keep_ids(harness, server):
    async def check(tab):
        a = await tab.snapshot()
        before = {}
        for inv in ("4411", "4412", "4413"):
            row = [n for n in a.nodes() if n.role == "listitem" and f"Invoice {inv}" in " ".join(
                c.text for c in n.iter())][0]
            archive = [c for c in row.iter() if c.role == "button"][0]
            link = [c for c in row.iter() if c.role == "link"][0]
            before[inv] = (archive.node_id, link.node_id, archive.bounds[1])
        await tab.page.evaluate("insertOnTop(3)")
        b = await tab.snapshot()
        for inv, (aid, lid, y) in before.items():
            archive = b.get(aid)
            assert archive.role == "button" and archive.name == "Archive"
            row_text = " ".join(c.text for c in archive.parent.iter())
            assert f"Invoice {inv}" in row_text, "the old ID went to the re-created button of the same row"
            assert archive.bounds[1] > y, "rows shifted down"
            assert b.get(lid).name == f"Open Invoice {inv}"
        new_buttons = [n for n in b.find(role="button", name="Archive") if n.node_id not in a]
        assert len(new_buttons) == 3

    harness.page(server.url("rerender.html"), check)


def test_cache_reused_until_page_changes(harness, server):
    async def check(tab):
        a = await tab.snapshot()
        b = await tab.snapshot()
        assert a is b, "nothing changed: the cached snapshot is returned"
        await tab.page.evaluate("document.body.insertAdjacentHTML('beforeend', '<p>changed</p>')")
        c = await tab.snapshot()
        assert c is not b and c.find(tier="semantic", text="changed")
        tab.invalidate()
        d = await tab.snapshot()
        assert d is not c
        await tab.page.fill("#u", "bob")  # typing changes a property, not the DOM
        e = await tab.snapshot()
        assert e is not d and e.find(role="textbox", name="User")[0].value == "bob"

    harness.page(server.url("secrets.html"), check)


def test_cache_reused_on_a_page_with_frames_until_a_frame_changes(harness, server):
    """Same- and cross-origin frames: the snapshot is reused while no document changed, and taken
    again when only a child frame changes (its DOM, a field's value, its scroll)."""
    async def check(tab):
        a = await tab.snapshot()
        assert a.stats.frames == 3
        b = await tab.snapshot()
        assert a is b, "nothing changed in any frame: the cached snapshot is returned"
        for frame in tab.page.frames[1:]:
            await frame.evaluate("document.body.insertAdjacentHTML('beforeend', '<p>frame changed</p>')")
            c = await tab.snapshot()
            assert c is not b and any(n.text == "frame changed" and n.frame_id != c.root.frame_id for n in c.nodes())
            assert await tab.snapshot() is c
            await frame.evaluate("document.body.lastElementChild.remove()")
            b = await tab.snapshot()
            assert b is not c
        inner = tab.page.frames[1]
        box = await inner.query_selector("input, textarea")
        if box is not None:
            await box.fill("typed in the frame")
            d = await tab.snapshot()
            assert d is not b and any(n.value == "typed in the frame" for n in d.nodes())

    harness.page(server.url("frames.html"), check)
