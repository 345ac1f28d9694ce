"""Issue 12's snapshot defects on the real-app corpus (tests/fixtures/real): the VirtualNode facts and
every serialization for the real library's own markup, set beside what Playwright's aria snapshot
says about the same control where it has an opinion (the real world is the reference).

Each test first checks that the page still exercises the rule (opacity 0, a scroll lock, a round
cell…), so a library upgrade that drops the pattern fails loudly instead of passing for nothing.
The task-level tests for the same libraries are in tests/test_real_*.py.
"""

from __future__ import annotations

import json
import re

import pytest

from engine.bench.real import playwright_view

from support.real_corpus import WIDGETS, corpus_installed, one, open_widget, payload  # noqa: F401

pytestmark = pytest.mark.usefixtures("corpus_installed")


def _by_attr_id(snap, html_id):
    hits = [n for n in snap.nodes() if n.attrs.get("id") == html_id]
    assert hits, f"no node with id attribute {html_id!r}"
    return hits[0]


def _tree_entries(snap) -> dict[str, dict]:
    out, stack = {}, [snap.serialize("tree").data["page"]["body"]]
    while stack:
        d = stack.pop()
        out[str(d.get("id"))] = d
        stack.extend(d.get("children") or ())
    return out


def _ok(r, what):
    assert r.success and (r.verification is None or r.verification.success), f"{what}: {r.error_code} {r.message}"


# ------------------------------------------------------------------------------ defect 1
def test_pretty_checkbox_transparent_inputs_are_visible_with_their_state(harness, server):
    async def body(tab):
        ids = ("wifi", "bluetooth", "n-comments", "n-mentions", "n-releases")
        style = await tab.page.evaluate("(ids) => ids.map((i) => getComputedStyle(document.getElementById(i)).opacity)",
                                        list(ids))
        assert style == ["0"] * len(ids), f"the page no longer hides its inputs with opacity 0: {style}"
        snap = await tab.snapshot()
        sem = {e["i"]: e for e in snap.serialize("semantic").data["interactive_tree"]}
        for i in ids:
            n = _by_attr_id(snap, i)
            checked = await tab.page.evaluate("(i) => document.getElementById(i).checked", i)
            pw = await playwright_view(tab.page, f"#{i}")
            assert (n.role, bool(n.states.get("checked"))) == (pw["role"], checked) == ("checkbox", checked)
            assert n.rendered and n.visible and n.interactive and not n.occluded, n
            assert n.node_id in sem and ("checked" in sem[n.node_id].get("s", "")) == checked
            assert n.name, f"#{i} is unnamed (its text is in the .state label beside it)"
        assert _by_attr_id(snap, "wifi").name == "Wi-Fi"
        wifi = _by_attr_id(snap, "wifi").node_id
        assert 'checked' in snap.serialize("skeleton").text.split(f'id="{wifi}"')[1].split(">")[0]

    open_widget(harness, server, WIDGETS["pretty-switches"], body)


def test_todomvc_toggles_are_transparent_and_still_sent(harness, server):
    async def body(tab):
        box = one(await payload(tab), "textbox", "What needs to be done?")
        _ok(await tab.type(box["i"], "Buy milk", submit=True), "add a todo")
        assert await tab.page.evaluate("getComputedStyle(document.querySelector('.todo-list .toggle')).opacity") == "0"
        snap = await tab.snapshot()
        toggle = snap.find(role="checkbox", name="Buy milk")[0]
        box = await tab.page.locator(".todo-list .toggle").first.bounding_box()
        x, y, w, h = toggle.bounds
        assert abs(x - box["x"]) <= 1 and abs(y - box["y"]) <= 1 and abs(w - box["width"]) <= 1, "the toggle's own box"
        assert toggle.visible and not toggle.occluded
        assert (await playwright_view(tab.page, ".todo-list .toggle"))["role"] == "checkbox"

    open_widget(harness, server, WIDGETS["todomvc-vue"], body)


# ------------------------------------------------------------------------- defects 2 and 3
def test_shoelace_names_come_through_slots_and_hosts_do_not_cover(harness, server):
    async def body(tab):
        # the label text is light DOM slotted into <sl-checkbox>; a hit on it is the host itself
        host_hit = await tab.page.evaluate("""() => {
          const lab = document.querySelector('#newsletter').shadowRoot.querySelector('label');
          const r = lab.getBoundingClientRect();
          return document.elementFromPoint(r.right - 4, r.top + r.height / 2).localName; }""")
        assert host_hit == "sl-checkbox", f"the page no longer hits the host on its label text: {host_hit}"
        snap = await tab.snapshot()
        for sel, role, name in (("#newsletter", "checkbox", "Email me the newsletter"),
                                ("#dark-mode", "switch", "Dark mode"),
                                ("#size", "combobox", "T-shirt size"), ("#open-dialog", "button", "Edit profile")):
            pw = await playwright_view(tab.page, sel)
            assert (pw["role"], pw["name"]) == (role, name), f"Playwright now says {pw} for {sel}"
            ours = snap.find(role=role, name=name, exact=True)
            assert ours and ours[0].in_shadow, f"{role} {name!r} not named through its slot"
        # options of the closed select are named from their slots too
        assert [n.name for n in snap.find(role="option")] == ["Small", "Medium", "Large"]
        for n in snap.interactive():
            assert not n.occluded, f"{n!r} marked covered by {n.occluded_by_desc}"
        # the <sl-button> host is not a second clickable beside its own <button>
        assert not [n for n in snap.interactive() if n.tag == "sl-button"]
        combo = snap.find(role="combobox", name="T-shirt size")[0]
        _ok(await tab.click(combo.node_id), "open the size list")
        snap = await tab.snapshot()
        opts = [n for n in snap.find(role="option") if n.visible]
        assert [n.name for n in opts] == ["Small", "Medium", "Large"]
        assert not [n for n in opts if n.occluded], [n.occluded_by_desc for n in opts]

    open_widget(harness, server, WIDGETS["shoelace-checkbox"], body)


# ------------------------------------------------------------------------------ defect 4
def test_bootstrap_modal_under_a_body_scroll_lock_is_in_view(harness, server):
    async def body(tab):
        snap = await tab.snapshot()
        _ok(await tab.click(snap.find(role="button", name="Sign in")[0].node_id), "open the modal")
        lock = await tab.page.evaluate("""() => [getComputedStyle(document.body).overflow,
            document.body.getBoundingClientRect().bottom,
            document.querySelector('#email').getBoundingClientRect().top]""")
        assert lock[0] == "hidden" and lock[2] > lock[1], f"the page no longer locks scrolling on a short body: {lock}"
        snap = await tab.snapshot()
        for n in (_by_attr_id(snap, "email"), snap.find(role="checkbox", name="Remember me")[0]):
            assert n.visible and n.visible_ratio == 1 and not n.occluded, n
        # the buttons of the page behind the modal are covered by it, and say so
        behind = snap.find(role="button", name="Order actions")[0]
        assert behind.occluded

    open_widget(harness, server, WIDGETS["bootstrap-modal"], body)


def test_shoelace_dialog_fields_in_view_under_its_scroll_lock(harness, server):
    async def body(tab):
        snap = await tab.snapshot()
        _ok(await tab.click(snap.find(role="button", name="Edit profile")[0].node_id), "open the dialog")
        await tab.page.wait_for_function("document.querySelector('#profile-dialog').open")
        assert await tab.page.evaluate("getComputedStyle(document.body).overflow") == "hidden"
        snap = await tab.snapshot()
        field = snap.find(role="textbox", name="Display name")[0]
        save = snap.find(role="button", name="Save")[0]
        assert field.visible and save.visible and not field.occluded and not save.occluded

    open_widget(harness, server, WIDGETS["shoelace-dialog"], body)


# ------------------------------------------------------------------------------ defect 6
def test_jquery_ui_result_items_become_clickables_named_by_text(harness, server):
    async def body(tab):
        field = one(await payload(tab), "textbox", "Destination city")
        _ok(await tab.type(field["i"], "ber"), "type ber")
        await tab.page.wait_for_selector(".ui-menu-item")
        roles = await tab.page.evaluate(
            "[...document.querySelectorAll('.ui-menu-item')].map((li) => li.getAttribute('role'))")
        assert roles == [None, None, None], f"jQuery UI now gives its items a role: {roles}"
        snap = await tab.snapshot()
        items = [n for n in snap.nodes() if n.tag == "li" and n.rendered]
        assert [(n.role, n.name) for n in items] == [("clickable", "Bergen"), ("clickable", "Berlin"),
                                                     ("clickable", "Bern")]
        assert all(n.visible and not n.occluded for n in items)

    open_widget(harness, server, WIDGETS["jquery-ui-autocomplete"], body)


# ------------------------------------------------------------------------------ defect 7
def test_nouislider_handle_carries_its_value_and_range(harness, server):
    async def body(tab):
        attrs = await tab.page.evaluate("""() => { const h = document.querySelector('.noUi-handle');
            return ['aria-valuenow', 'aria-valuemin', 'aria-valuemax', 'aria-valuetext']
              .map((a) => h.getAttribute(a)); }""")
        snap = await tab.snapshot()
        s = snap.find(role="slider", name="Volume")[0]
        assert (await playwright_view(tab.page, ".noUi-handle"))["role"] == "slider"
        assert s.value == (attrs[3] or attrs[0]) and s.value.startswith("40")
        assert (s.states.get("min"), s.states.get("max")) == (attrs[1], attrs[2])
        e = [x for x in snap.serialize("semantic").data["interactive_tree"] if x["i"] == s.node_id][0]
        assert e["v"] == s.value

    open_widget(harness, server, WIDGETS["nouislider"], body)


# ------------------------------------------------------------------------------ defect 8
def test_flatpickr_round_days_are_judged_inside_their_shape(harness, server):
    async def body(tab):
        snap = await tab.snapshot()
        _ok(await tab.click(snap.find(role="textbox", name="Departure date")[0].node_id), "open the calendar")
        radius = await tab.page.evaluate(
            "getComputedStyle(document.querySelector('.flatpickr-day')).borderTopLeftRadius")
        assert radius not in ("0px", ""), "the day cells are no longer round"
        snap = await tab.snapshot()
        days = [n for n in snap.nodes() if re.fullmatch(r"\w+ \d{1,2}, 20\d\d", n.name or "") and n.interactive]
        assert len([n for n in days if n.name.startswith("March")]) == 31, [n.name for n in days]
        assert not [n for n in days if n.occluded], [(n.name, n.occluded_by_desc) for n in days if n.occluded][:3]

    open_widget(harness, server, WIDGETS["flatpickr-date"], body)


# ------------------------------------------------------------------------------ defect 9
def test_swagger_names_match_playwright_once_normalised(harness, server):
    async def body(tab):
        raw = await tab.page.evaluate("document.querySelector('.opblock-control-arrow').getAttribute('aria-label')")
        assert "\u200b" in raw, "Swagger UI no longer puts zero-width spaces into its labels"
        snap = await tab.snapshot()
        for sel in (".opblock-control-arrow", ".opblock-summary-control"):
            pw = await playwright_view(tab.page, sel)
            assert any(n.role == pw["role"] and n.name == pw["name"] for n in snap.nodes()), f"{sel}: Playwright {pw}"
        assert snap.find(role="button", name="GET /pets/{petId} Info for a specific pet", exact=True)
        assert snap.find(role="button", name="get\u200b /pets/{petId}")   # a query with invisible characters matches

    open_widget(harness, server, WIDGETS["swagger-arrow"], body)


# ----------------------------------------------------------------------------- defect 11
def test_react_root_container_has_listeners_but_is_not_a_target(harness, server):
    async def body(tab):
        box = one(await payload(tab), "textbox", "What needs to be done?")
        _ok(await tab.type(box["i"], "Buy milk", submit=True), "add a todo")
        snap = await tab.snapshot()
        root = _by_attr_id(snap, "root")
        assert root.has_click_listener, "React no longer listens at its root container"
        assert not root.interactive and root.tier == "structural" and not root.name
        sem = snap.serialize("semantic").data["interactive_tree"]
        assert not [e for e in sem if e["r"] == "clk"], sem

    open_widget(harness, server, WIDGETS["todomvc-react"], body)


# ------------------------------------------------------------------------- defects 12 and 13
def test_python_docs_paragraph_reads_in_order_in_every_format(harness, server):
    async def body(tab):
        snap = await tab.snapshot()
        p = [n for n in snap.find(text="lightweight data interchange format") if n.tag == "p"][0]
        dom = await tab.page.evaluate("""() => [...document.querySelectorAll('p')]
            .find((p) => p.textContent.includes('lightweight data interchange'))
            .innerText.replace(/\\s+/g, ' ').trim()""")
        assert p.text_block and p.text == dom
        links = [c for c in p.iter() if c.role == "link"]
        assert [ln.name for ln in links][:4] == ["JSON (JavaScript Object Notation)", "RFC 7159", "RFC 4627",
                                                 "ECMA-404"]
        assert all(ln.folded and ln.interactive for ln in links)
        entry = _tree_entries(snap)[p.node_id]
        assert entry["text"] == dom and [c["id"] for c in entry["children"]] == [ln.node_id for ln in links]
        full = snap.serialize("full").text
        a = {ln.name: ln.node_id for ln in links}
        assert (f'<a data-id="{a["RFC 7159"]}" href="https://datatracker.ietf.org/doc/html/rfc7159.html" '
                f'data-interactive="true">RFC 7159</a> (which obsoletes <a data-id="{a["RFC 4627"]}"') in full
        sem = {e["i"]: e for e in snap.serialize("semantic", full_page=True).data["interactive_tree"]}
        assert all(ln.node_id in sem for ln in links)

    open_widget(harness, server, "pydoc/library/json.html", body)


def test_python_docs_code_blocks_are_single_leaves(harness, server):
    async def body(tab):
        snap = await tab.snapshot()
        pres = [n for n in snap.nodes() if n.tag == "pre"]
        spans = sum(1 for p in pres for c in p.iter() if c.tag == "span")
        assert len(pres) >= 10 and spans > 500, "the page no longer has highlighted code blocks"
        dom = await tab.page.evaluate("[...document.querySelectorAll('div.highlight pre')].map((p) => p.textContent)")
        tree = _tree_entries(snap)
        for pre, text in zip([p for p in pres if p.parent and "highlight" not in p.attrs.get("id", "")], dom,
                             strict=False):
            assert pre.text_block and pre.text == text.strip("\n").rstrip(), pre.node_id
            assert all(c.folded for c in pre.iter() if c is not pre)
            assert "children" not in tree[pre.node_id] and tree[pre.node_id]["text"] == pre.text
        text = snap.serialize("tree").text
        assert "more span items" not in text and '"tag":"span"' not in json.dumps(
            [tree[p.node_id] for p in pres], separators=(",", ":"))

    open_widget(harness, server, "pydoc/library/json.html", body)


def test_python_docs_long_code_block_is_cut_with_a_marker(harness, server):
    async def body(tab):
        dom = await tab.page.evaluate("""() => [...document.querySelectorAll('div.highlight pre')]
            .map((p) => p.textContent).sort((a, b) => b.length - a.length)[0]""")
        assert len(dom) > 5000, "itertools' recipes are no longer one long code block"
        snap = await tab.snapshot()
        pre = max((n for n in snap.nodes() if n.tag == "pre"), key=lambda n: len(n.text or ""))
        m = re.search(r"… \((\d+) more characters\)$", pre.text)
        assert pre.text_block and m, pre.text[-80:]
        shown = pre.text[:m.start()]
        assert len(shown) == 2000 and dom.lstrip("\n").startswith(shown[:1500])
        assert int(m.group(1)) > 2000
        entry = _tree_entries(snap)[pre.node_id]
        assert entry["text"] == pre.text and "children" not in entry

    # a documentation page sets no ready flag: it is ready once loaded
    open_widget(harness, server, {"page": "pydoc/library/itertools.html", "ready": False}, body)
