"""Boxes where a person can see the element, and roles that fit, on real library pages
(tests/fixtures/real/): an option scrolled out of its menu's scroll area is not boxed; a link wrapped
over two lines has one box per line; a custom select's combobox has its visible field's box (and the
field's words as its value); labels, scroll bar thumbs and resize handles are no click targets of
their own; an open dialog's title and words reach the semantic payload. Each checked against the page
itself (getBoundingClientRect / getClientRects) and, where it applies, Playwright's
aria_snapshot(mode="ai")."""

from __future__ import annotations

import asyncio

import pytest

from engine.snapshot.locators import Locators
from engine.snapshot.serialize.hidden import hidden_reason

from support.real_corpus import corpus_installed, open_widget, payload  # noqa: F401 - a fixture

pytestmark = pytest.mark.usefixtures("corpus_installed")

# the part of each option's box inside its menu's scroll area, as the page lays it out
_OPTION_TRUTH = """([scroller, option]) => {
  const s = document.querySelector(scroller).getBoundingClientRect();
  return [...document.querySelectorAll(option)].map((o) => {
    const r = o.getBoundingClientRect();
    const x = Math.max(r.left, s.left), y = Math.max(r.top, s.top);
    const x2 = Math.min(r.right, s.right), y2 = Math.min(r.bottom, s.bottom);
    return {text: o.textContent.trim(), box: [r.left, r.top, r.width, r.height],
            seen: x2 > x && y2 > y ? [x, y, x2 - x, y2 - y] : null};
  });
}"""


# resolves once the element's scroll position held still for 6 frames (a widget may scroll its menu to the active
# option, smoothly, after it opens), 3 s at most
_SCROLL_STILL = """(sel) => new Promise((done) => {
  const el = document.querySelector(sel), t0 = performance.now();
  let last = null, still = 0;
  const tick = () => {
    const now = el ? el.scrollTop : 0;
    still = now === last ? still + 1 : 0;
    last = now;
    if (still >= 6 || performance.now() - t0 > 3000) done(now); else requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})"""


async def _scrolled(page, sel: str, top: int) -> None:
    """Scroll `sel` to `top` once the widget stopped scrolling it itself, and wait until it holds still there."""
    await page.evaluate(_SCROLL_STILL, sel)
    await page.evaluate("([sel, top]) => { document.querySelector(sel).scrollTop = top; }", [sel, top])
    await page.evaluate(_SCROLL_STILL, sel)


def _near(a, b, tol=1.5) -> bool:
    return all(abs(p - q) <= tol for p, q in zip(a, b, strict=True))


async def _check_menu(tab, scroller: str, option: str, role: str) -> int:
    """Every option of an open menu whose scroll area was scrolled: boxed only where it is seen."""
    snap = await tab.snapshot()
    truth = await tab.page.evaluate(_OPTION_TRUTH, [scroller, option])
    shown = {e.get("n") for e in (await payload(tab)) if e["r"] in ("opt", "clk")}
    by_name = {}
    for n in snap.nodes():
        if n.role == role and n.rendered and n.bounds[2] > 0 and n.tag != "option":   # (not a native <option>)
            by_name.setdefault(n.name, n)
    out = 0
    for t in truth:
        n = by_name.get(t["text"])
        assert n is not None, f"no {role} node for {t['text']!r}"
        assert _near(n.bounds, t["box"]), (t["text"], n.bounds, t["box"])
        if t["seen"] is None:
            out += 1
            assert n.visible_ratio == 0 and not n.visible, f"{t['text']!r} is scrolled out of its menu, yet visible"
            assert t["text"] not in shown, f"{t['text']!r} is scrolled out of its menu, yet in the payload"
        elif not _near(t["seen"], t["box"]):
            assert n.visible_bounds is not None and _near(n.visible_bounds, t["seen"]), (
                f"{t['text']!r} is cut by its menu at {t['seen']}, drawn at {n.shown_bounds}")
        else:
            assert n.visible_bounds is None and n.visible and t["text"] in shown
    return out


def test_options_scrolled_out_of_their_menu_are_not_boxed(harness, server):
    async def go(tab):
        page = tab.page
        page.set_default_timeout(8000)
        # Tom Select: a 40-city list in its dropdown's scroll area, scrolled 10 options down
        await page.click("#ts-city + .ts-wrapper .ts-control")
        await page.wait_for_selector("#ts-city-ts-dropdown .option")
        await _scrolled(page, "#ts-city-ts-dropdown", 290)   # (the menu scrolls to its active option as it opens)
        out_ts = await _check_menu(tab, "#ts-city-ts-dropdown", "#ts-city-ts-dropdown .option",
                                   "option")
        await page.keyboard.press("Escape")
        # Select2: its results list (a portal at the end of <body>)
        await page.click(".select2-container:has(#select2-s2-city-container) .select2-selection")
        await page.wait_for_selector(".select2-results__option")
        await _scrolled(page, ".select2-results__options", 250)
        out_s2 = await _check_menu(tab, ".select2-results__options", ".select2-results__option", "option")
        assert out_ts >= 20 and out_s2 >= 20
        # the native <select> Tom Select keeps (cut to nothing by clip / clip-path) shows none of its options
        snap = await tab.snapshot()
        native = [n for n in snap.nodes() if n.tag == "option" and n.parent and n.parent.attrs.get("id") == "ts-tags"]
        assert native and all(n.visible_ratio == 0 and hidden_reason(n) == "clipped away" for n in native), [
            (n.name, n.bounds, n.visible_ratio, hidden_reason(n)) for n in native]

    open_widget(harness, server, "long-menus.html", go)


def test_antd_virtual_list_scrolled(harness, server):
    """Ant Design draws its options in a virtual list inside a portal; its scroll bar thumb (an empty
    8-px box that only listens) is no click target."""
    async def go(tab):
        page = tab.page
        await page.click(".ant-select:has(#folder) .ant-select-selector")
        await page.wait_for_selector(".ant-select-item-option")
        await page.evaluate("document.querySelector('.rc-virtual-list-holder').scrollTop = 300")
        await asyncio.sleep(0.3)
        await _check_menu(tab, ".rc-virtual-list-holder", ".ant-select-item-option", "clickable")
        entries = await payload(tab)
        assert not [e for e in entries if e["r"] == "clk" and not e.get("n")], entries
        assert await page.locator(".rc-virtual-list-scrollbar-thumb").count() == 1

    open_widget(harness, server, "antd-long.html", go)


# a link's line boxes: its client rects, those on one line (text around an inline child) as one
_LINE_TRUTH = """() => [...document.querySelectorAll('a')].flatMap((a) => {
  const rs = [];
  for (const r of a.getClientRects()) {
    if (r.width < 1 || r.height < 1) continue;
    const l = rs[rs.length - 1];
    if (l && r.top < l.bottom && r.bottom > l.top) {
      const x = Math.min(l.left, r.left), y = Math.min(l.top, r.top);
      rs[rs.length - 1] = {left: x, top: y, right: Math.max(l.right, r.right), bottom: Math.max(l.bottom, r.bottom)};
    } else rs.push({left: r.left, top: r.top, right: r.right, bottom: r.bottom});
  }
  const b = a.getBoundingClientRect();
  if (b.bottom <= 0 || b.top >= innerHeight || getComputedStyle(a).display !== 'inline') return [];
  return [{href: a.getAttribute('href'), text: a.textContent.replace(/\\s+/g, ' ').trim(),
           rects: rs.map((r) => [r.left, r.top, r.right - r.left, r.bottom - r.top])}];
})"""


def test_wrapped_link_has_one_box_per_line(harness, server):
    async def go(tab):
        truth = await tab.page.evaluate(_LINE_TRUTH)
        snap = await tab.snapshot()
        links = {}
        for n in snap.nodes():
            if n.role == "link" and n.visible_ratio > 0:
                links.setdefault((n.attrs.get("href"), n.name), n)
        wrapped = 0
        for t in truth:
            n = links.get((t["href"], t["text"]))
            if n is None:
                continue
            if len(t["rects"]) >= 2:
                wrapped += 1
                assert n.line_rects is not None and len(n.line_rects) == len(t["rects"]), (t, n.line_rects)
                for got, want in zip(n.line_rects, t["rects"], strict=True):
                    assert _near(got, want), (t["text"], n.line_rects, t["rects"])
                x, y, w, h = n.bounds   # the box stays the union of the lines
                assert min(r[0] for r in n.line_rects) >= x - 1 and max(r[1] + r[3] for r in n.line_rects) <= y + h + 1
            else:
                assert n.line_rects is None, (t, n.line_rects)
        assert wrapped >= 3, f"only {wrapped} wrapped links in view"

    open_widget(harness, server, "pydoc/library/json.html", go)


async def _field_box(page, sel: str):
    return await page.evaluate("(s) => { const r = document.querySelector(s).getBoundingClientRect();"
                               " return [r.left, r.top, r.width, r.height]; }", sel)


def test_custom_select_combobox_has_its_field_box(harness, server):
    """The box a person clicks (the chosen value, the chevron) is the combobox's, with the value it
    shows; the field is no clickable of its own; its remove buttons keep boxes and locators that
    Playwright resolves to one element."""
    async def go(tab):
        page = tab.page
        snap = await tab.snapshot()
        locs = Locators(snap)
        entries = await payload(tab)
        folder = snap.find("combobox", "Folder")[0]
        labels = snap.find("combobox", "Labels")[0]
        assert _near(folder.bounds, await _field_box(page, ".ant-select:has(#folder) .ant-select-selector"))
        assert _near(labels.bounds, await _field_box(page, ".ant-select:has(#labels) .ant-select-selector"))
        assert labels.bounds[2] > 300, "the multiple select's box is more than its input's sliver"
        assert folder.value == "Folder 3" and labels.value == "Folder 1, Folder 2"
        chevron = await _field_box(page, ".ant-select:has(#folder) .ant-select-arrow")
        cx, cy = chevron[0] + chevron[2] / 2, chevron[1] + chevron[3] / 2
        x, y, w, h = folder.bounds
        assert x <= cx <= x + w and y <= cy <= y + h, "the chevron is part of the combobox's box"
        assert [e["n"] for e in entries if e["r"] == "sel"] == ["Folder", "Labels"]
        assert not [e for e in entries if e["r"] == "clk" and e.get("n") in ("Folder 3", "Folder 1 Folder 2")], entries
        for n in (folder, labels):
            loc = locs.for_node(n)
            assert loc is not None and await loc.build_on(page).count() == 1
            assert await loc.build_on(page).evaluate("(el) => el.id") == n.attrs.get("id")
        removes = [n for n in snap.nodes() if n.interactive and n.name == "close" and n.visible]
        assert len(removes) == 2
        for n in removes:
            loc = locs.for_node(n)
            assert loc is not None and await loc.build_on(page).count() == 1
        aria = await page.aria_snapshot(mode="ai")
        assert 'combobox "Folder"' in aria and 'combobox "Labels"' in aria

    open_widget(harness, server, "antd-long.html", go)


def test_tom_select_with_a_value_keeps_its_combobox(harness, server):
    """Tom Select moves its input off-screen once a value is chosen: the combobox is then its field."""
    async def go(tab):
        page = tab.page
        await page.evaluate("document.querySelector('#ts-city').tomselect.setValue('bern')")
        await asyncio.sleep(0.1)
        snap = await tab.snapshot()
        entries = await payload(tab)
        city = [e for e in entries if e["r"] == "sel" and e.get("n") == "Tom Select city"]
        assert city and city[0].get("v") == "Bern", entries
        n = snap.get(city[0]["i"])
        assert _near(n.bounds, await _field_box(page, "#ts-city + .ts-wrapper .ts-control"))
        loc = Locators(snap).for_node(n)
        assert loc is not None and await loc.build_on(page).count() == 1
        await page.click("#ts-city + .ts-wrapper .ts-control")   # where the box is, the menu opens
        await page.wait_for_selector("#ts-city-ts-dropdown .option")

    open_widget(harness, server, "long-menus.html", go)


def test_labels_and_drag_handles_are_not_click_targets(harness, server):
    """A label of a control a person sees is part of that control (Shoelace's select label and
    checkbox words, Tom Select's labels); Tabulator's column resize handles are not offered."""
    async def shoelace(tab):
        entries = await payload(tab)
        assert not [e for e in entries if e["r"] == "clk"], entries
        assert [e["n"] for e in entries if e["r"] in ("chk", "switch", "sel")] == [
            "Email me the newsletter", "Dark mode", "T-shirt size"]
        aria = await tab.page.aria_snapshot(mode="ai")
        assert 'checkbox "Email me the newsletter"' in aria and 'combobox "T-shirt size"' in aria

    async def grid(tab):
        assert await tab.page.locator(".tabulator-col-resize-handle").count() >= 4
        entries = await payload(tab)
        assert not [e for e in entries if e["r"] == "clk" and not e.get("n")], entries

    async def tom(tab):
        entries = await payload(tab)
        assert not [e for e in entries if e["r"] == "clk" and e.get("n") in ("Country", "Gift extras")], entries

    open_widget(harness, server, "shoelace.html", shoelace)
    open_widget(harness, server, "grid.html", grid)
    open_widget(harness, server, "tom-select.html", tom)


def test_docs_menu_toggle_is_its_control(harness, server):
    """On a narrow window the Python docs show a menu toggle: a checkbox (role=button, "Menu") under an
    unnamed icon label. The label is part of it; the one control is named."""
    async def go(tab):
        await tab.page.set_viewport_size({"width": 600, "height": 800})
        await asyncio.sleep(0.2)
        snap = await tab.snapshot()
        label = [n for n in snap.nodes() if n.tag == "label" and n.attrs.get("for") == "menuToggler"]
        assert label and not label[0].interactive
        entries = await payload(tab)
        assert not [e for e in entries if e["r"] == "clk" and not e.get("n")], entries
        assert [e for e in entries if e["r"] == "btn" and e.get("n") == "Menu"], entries
        assert 'button "Menu"' in await tab.page.aria_snapshot(mode="ai")

    open_widget(harness, server, "pydoc/library/json.html", go)


def test_dialog_title_and_words_reach_the_payload(harness, server):
    async def antd(tab):
        await tab.page.click("button.ant-btn-dangerous")
        await tab.page.wait_for_selector(".ant-modal-confirm-title")
        await asyncio.sleep(0.4)
        entries = await payload(tab)
        kinds = [(e["r"], e.get("n")) for e in entries]
        d = kinds.index(("dialog", "Delete roadmap.pdf?"))
        assert kinds[d + 1:] == [("btn", "Keep it"), ("btn", "Delete")], kinds
        assert "bin for 30 days" in entries[d]["txt"]
        aria = await tab.page.aria_snapshot(mode="ai")
        assert 'dialog "Delete roadmap.pdf?"' in aria and "bin for 30 days" in aria

    async def bootstrap(tab):
        await tab.page.click("[data-bs-target='#signin']")
        await tab.page.wait_for_selector("#signin.show")
        await asyncio.sleep(0.4)
        entries = await payload(tab)
        dialogs = [e for e in entries if e["r"] == "dialog"]
        assert [e.get("n") for e in dialogs] == ["Sign in"], entries
        assert 'dialog "Sign in"' in await tab.page.aria_snapshot(mode="ai")

    open_widget(harness, server, "antd-long.html", antd)
    open_widget(harness, server, "modal.html", bootstrap)


def _facts(snap) -> dict:
    from engine.snapshot.stored import _row
    return {n.node_id: (*_row(n), n.line_rects, n.visible_bounds) for n in snap.nodes()}


# both walks must see one state: finite animations end, endless ones pause, two frames pass
_SETTLE = """() => { for (const a of document.getAnimations()) {
  try { const it = a.effect && a.effect.getTiming().iterations; if (it === Infinity) a.pause(); else a.finish(); }
  catch (e) {} }
  return new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(() => res(true)))); }"""


async def _same_as_full(tab, what: str) -> str:
    await asyncio.sleep(0.35)
    await tab.page.evaluate(_SETTLE)
    tab.invalidate()   # past the version check: this compares walks, not the cache
    inc = await tab.snapshot()
    full = await tab.snapshot(force=True)
    a, b = _facts(inc), _facts(full)
    assert a.keys() == b.keys(), f"{what}: nodes differ ({inc.walk.describe()})"
    bad = [(k, a[k], b[k]) for k in a if a[k] != b[k]]
    assert not bad, f"{what}: incremental ≠ full walk ({inc.walk.describe()}): {bad[:3]}"
    return f"{what}: {inc.walk.describe()}"


def test_incremental_walk_keeps_the_new_boxes(harness, server):
    """Visible parts, line boxes, a field's box and value, folded labels and dialogs: an incremental
    walk after real changes gives what a full walk gives."""
    async def menus(tab):
        page = tab.page
        await tab.snapshot(force=True)
        modes = []
        await page.click("#ts-city + .ts-wrapper .ts-control")
        modes.append(await _same_as_full(tab, "menu opened"))
        await page.evaluate("document.querySelector('#ts-city-ts-dropdown').scrollTop = 290")
        modes.append(await _same_as_full(tab, "menu scrolled"))
        await page.click("#ts-city-ts-dropdown .option[data-value='brno']")
        modes.append(await _same_as_full(tab, "city picked (the input moves off-screen)"))
        await page.evaluate("document.querySelector('#ts-tags').tomselect.setValue(['bern', 'basel'])")
        modes.append(await _same_as_full(tab, "tags set"))
        return modes

    async def docs(tab):
        await tab.snapshot(force=True)
        modes = []
        await tab.page.evaluate("window.scrollBy(0, 300)")
        modes.append(await _same_as_full(tab, "page scrolled"))
        await tab.page.evaluate("document.querySelector('.sphinxsidebarwrapper a[href=\"#character-encodings\"]')"
                                ".textContent = 'Character Encodings and their many names'")
        modes.append(await _same_as_full(tab, "a wrapped link's words changed"))
        return modes

    modes = open_widget(harness, server, "long-menus.html", menus) + open_widget(
        harness, server, "pydoc/library/json.html", docs)
    assert [m for m in modes if "incremental" in m], modes
