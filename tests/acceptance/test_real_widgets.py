"""Real user tasks on real libraries, looked at step by step: what the model is sent before and after
each action (names, states, values, covers), acting by ID, and the page's real state afterwards.
Each test names the defect of issue [7] it guards."""

from __future__ import annotations

import re

import pytest

from support.real_corpus import WIDGETS, corpus_installed, entries_text, find_entries, one, open_widget, payload  # noqa: F401

pytestmark = pytest.mark.usefixtures("corpus_installed")


def _verified(r, what: str) -> None:
    v = r.verification
    assert r.success and (v is None or v.success), (
        f"{what}: {r.action} → {r.error_code or 'ok'}: {r.message}" + (f" | verification: {v.feedback}" if v else ""))


async def _js(tab, expr: str):
    return await tab.page.evaluate(expr)


# ------------------------------------------------------------------------------------- Shoelace
def test_shoelace_checkbox_named_by_slotted_label_and_checked(harness, server):
    """Defects 2 and 3: the label is slotted light DOM; clicking must not be refused as covered by
    the <sl-checkbox> host; the state the model sees follows."""
    async def body(tab):
        e = one(await payload(tab), "checkbox", "Email me the newsletter")
        assert not e.get("occ"), f"covered by its own host? {e}"
        assert "checked" not in (e.get("s") or "")
        _verified(await tab.check(e["i"]), "check the newsletter box")
        assert await _js(tab, "document.querySelector('#newsletter').checked") is True
        e2 = one(await payload(tab), "checkbox", "Email me the newsletter")
        assert "checked" in (e2.get("s") or ""), f"the payload does not show the new state: {e2}"

    open_widget(harness, server, WIDGETS["shoelace-checkbox"], body)


def test_shoelace_select_options_named_from_slots(harness, server):
    """Defect 2: <sl-option>'s text is slotted; once the list is open every option carries its name."""
    async def body(tab):
        combo = one(await payload(tab), "combobox", "T-shirt size")
        _verified(await tab.click(combo["i"]), "open the size list")
        entries = await payload(tab)
        for name in ("Small", "Medium", "Large"):
            one(entries, "option", name)
        r = await tab.select(combo["i"], "Large")
        _verified(r, "select Large")
        assert await _js(tab, "document.querySelector('#size').value") == "large"

    open_widget(harness, server, WIDGETS["shoelace-select"], body)


def test_shoelace_dialog_field_visible_under_its_scroll_lock(harness, server):
    """Defect 4: sl-dialog locks scrolling with overflow:hidden on <body>; the field inside the open
    dialog is visible, uncovered, and typed into."""
    async def body(tab):
        _verified(await tab.click(one(await payload(tab), "button", "Edit profile")["i"]), "open the dialog")
        assert await _js(tab, "getComputedStyle(document.body).overflow") == "hidden", "scroll lock not in effect"
        field = one(await payload(tab), "textbox", "Display name")
        assert not field.get("occ"), f"the dialog's own field is marked covered: {field}"
        _verified(await tab.type(field["i"], "Ada Lovelace"), "type the display name")
        assert await _js(tab, "document.querySelector('#display-name').value") == "Ada Lovelace"

    open_widget(harness, server, WIDGETS["shoelace-dialog"], body)


# ------------------------------------------------------------------------ custom selects
@pytest.mark.parametrize("wid,name,option,native,expected", [
    ("tom-select-single", "Country", "Germany", "#country", ["DE"]),
    ("tom-select-multi", "Gift extras", "Ribbon", "#extras", ["ribbon"]),
    ("choices-single", "Favourite fruit", "Mango", "#fruit", ["mango"]),
    ("choices-multi", "Delivery days", "Tuesday", "#tags", ["tue"]),
])
def test_custom_select_updates_its_hidden_native_select(harness, server, wid, name, option, native, expected):
    """Defect 5: select() on the library's combobox picks the option in its own popup (never the
    hidden native <select>), and the native select that mirrors it ends up with the value."""
    async def body(tab):
        combo = one(await payload(tab), "combobox", name)
        r = await tab.select(combo["i"], option)
        _verified(r, f"select {option} in {name}")
        got = await _js(tab, f"[...document.querySelector('{native}').selectedOptions].map((o) => o.value)")
        assert got == expected, f"native {native} holds {got}, expected {expected}"

    open_widget(harness, server, WIDGETS[wid], body)


# ---------------------------------------------------------------------------- date picker
def test_flatpickr_day_cells_are_not_covered(harness, server):
    """Defect 8: round day cells (border-radius 150px) are not taken as covered by the calendar
    behind their corners; a day is picked by its name."""
    async def body(tab):
        _verified(await tab.click(one(await payload(tab), "textbox", "Departure date")["i"]), "open the calendar")
        entries = await payload(tab)
        days = [e for e in entries if re.fullmatch(r"March \d{1,2}, 2025", e.get("n") or "")]
        assert len(days) == 31, \
            f"expected the 31 days of March 2025 in the payload, got {len(days)}: {entries_text(entries)}"
        covered = [e for e in days if e.get("occ")]
        assert not covered, f"{len(covered)} day cells marked occluded, e.g. {covered[:3]}"
        _verified(await tab.click(one(entries, None, "March 15, 2025")["i"]), "pick 15 March")
        assert await _js(tab, "document.querySelector('#departure').value") == "2025-03-15"

    open_widget(harness, server, WIDGETS["flatpickr-date"], body)


# --------------------------------------------------------------------------- autocomplete
ITEM_ROLES = ["option", "clickable", "menuitem"]


@pytest.mark.parametrize("wid,field,typed,items,not_item,pick,state_js", [
    ("autocomplete", "Search food", "pa", ["Pasta", "Pancakes", "Paella"], "Sushi", "Paella",
     "[document.querySelector('#food').value, document.querySelector('#choice').textContent]"),
    ("jquery-ui-autocomplete", "Destination city", "ber", ["Bergen", "Berlin", "Bern"], "Lisbon", "Bern",
     "[document.querySelector('#city').value, document.querySelector('#destination').textContent]"),
])
def test_autocomplete_items_listed_and_picked(harness, server, wid, field, typed, items, not_item, pick, state_js):
    """Defect 6: the open result list reaches the model, each item named by its text — also when the
    items are plain <li> with no role (jQuery UI), clickable through a listener on their list."""
    async def body(tab):
        box = one(await payload(tab), ["searchbox", "textbox"], field)
        _verified(await tab.type(box["i"], typed), f"type {typed!r}")
        entries = await payload(tab)
        for item in items:
            e = one(entries, ITEM_ROLES, item)
            assert not e.get("occ"), e
        assert not find_entries(entries, None, not_item), f"{not_item!r} does not match {typed!r} but is listed"
        _verified(await tab.click(one(entries, ITEM_ROLES, pick)["i"]), f"pick {pick}")
        assert await _js(tab, state_js) == [pick, pick]

    open_widget(harness, server, WIDGETS[wid], body)


# ------------------------------------------------------------------------ virtualised grid
def test_grid_scrolls_to_rows_it_had_not_rendered(harness, server):
    """A virtual-DOM grid renders only the rows in view: scrolling its container brings later rows
    into the payload, named, with their own row checkbox usable."""
    async def body(tab):
        entries = await payload(tab)
        before = {e.get("n") for e in entries}
        holder = [e for e in entries if e.get("scr")]
        assert holder, f"the grid's scroll container is not in the payload: {entries_text(entries)}"
        for _ in range(3):
            _verified(await tab.scroll(holder[0]["i"], "down"), "scroll the grid")
        entries = await payload(tab)
        new_rows = [e for e in entries if re.fullmatch(r"Rider \d+", e.get("n") or "") and e.get("n") not in before]
        assert new_rows, f"no newly rendered rider rows after scrolling: {entries_text(entries)}"
        row = new_rows[0]
        box = one(entries, "checkbox", "Select Row", near=row["n"])
        _verified(await tab.check(box["i"]), f"select {row['n']}")
        got = await _js(tab, "window.table.getSelectedData().map((r) => r.name)")
        assert got == [row["n"]], f"selected {got}, expected {[row['n']]}"

    open_widget(harness, server, WIDGETS["tabulator-grid"], body)


# ------------------------------------------------------- switches and checkboxes at opacity 0
def test_make_sure_both_switches_are_on(harness, server):
    """Defect 1: pretty-checkbox's native inputs are opacity:0 over their label. The model sees each
    switch with its state, so it turns on only the one that is off."""
    async def body(tab):
        entries = await payload(tab)
        wifi, bt = one(entries, "checkbox", "Wi-Fi"), one(entries, "checkbox", "Bluetooth")
        assert "checked" in (wifi.get("s") or ""), f"Wi-Fi is on, the payload does not say so: {wifi}"
        assert "checked" not in (bt.get("s") or ""), f"Bluetooth is off: {bt}"
        for e in (wifi, bt):
            if "checked" not in (e.get("s") or ""):
                _verified(await tab.click(e["i"]), f"turn on {e.get('n')}")
        assert await _js(tab,
                         "[document.querySelector('#wifi').checked, document.querySelector('#bluetooth').checked]") \
            == [True, True]
        entries = await payload(tab)
        for name in ("Wi-Fi", "Bluetooth"):
            assert "checked" in (one(entries, "checkbox", name).get("s") or "")

    open_widget(harness, server, WIDGETS["pretty-switches"], body)


# ---------------------------------------------------------------------------------- slider
def test_slider_value_is_seen_and_moves(harness, server):
    """Defect 7: aria-valuenow/aria-valuetext reach the payload; a key press moves the slider."""
    async def body(tab):
        s = one(await payload(tab), "slider", "Volume", value="40")
        _verified(await tab.press("ArrowRight", s["i"]), "press ArrowRight on the slider")
        assert await _js(tab, "document.querySelector('#volume').noUiSlider.get()") == "41"
        one(await payload(tab), "slider", "Volume", value="41")

    open_widget(harness, server, WIDGETS["nouislider"], body)


# ------------------------------------------------------------------------------- rich text
def test_rich_text_editor_typed_into(harness, server):
    async def body(tab):
        ed = one(await payload(tab), "textbox", "Message")
        _verified(await tab.type(ed["i"], "Hello from Vigil"), "type into the editor")
        assert (await _js(tab, "window.quill.getText()")).strip() == "Hello from Vigil"

    open_widget(harness, server, WIDGETS["quill-editor"], body)


# ---------------------------------------------------------------------------------- modal
def test_bootstrap_modal_fields_visible_under_body_overflow_hidden(harness, server):
    """Defect 4: Bootstrap sets overflow:hidden on a <body> shorter than the centred dialog; the
    dialog's fields are visible (the body's clip propagates to the viewport) and typed into."""
    async def body(tab):
        _verified(await tab.click(one(await payload(tab), "button", "Sign in")["i"]), "open Sign in")
        state = await _js(tab,
                          "[getComputedStyle(document.body).overflow, document.body.getBoundingClientRect().bottom,"
                               " document.querySelector('#email').getBoundingClientRect().top]")
        assert state[0] == "hidden" and state[2] > state[1], f"the page no longer exercises the clip rule: {state}"
        entries = await payload(tab)
        email = one(entries, "textbox", "Email address")
        assert not email.get("occ"), email
        one(entries, "checkbox", "Remember me")
        _verified(await tab.type(email["i"], "ada@example.com"), "type the email")
        assert await _js(tab, "document.querySelector('#email').value") == "ada@example.com"

    open_widget(harness, server, WIDGETS["bootstrap-modal"], body)


# ---------------------------------------------------------------------------------- TodoMVC
TODO_LABELS = "[...document.querySelectorAll('.todo-list li label')].map((l) => l.textContent)"


@pytest.mark.parametrize("wid", ["todomvc-react", "todomvc-vue"])
def test_todomvc_add_toggle_filter_delete(harness, server, wid):
    """Defects 1, 10, 11: type+Enter into a box that clears itself verifies as a success; the
    transparent toggles are sent with their state; the framework root is no giant clickable."""
    async def body(tab):
        box = one(await payload(tab), "textbox", "What needs to be done?")
        for title in ("Buy milk", "Walk dog"):
            r = await tab.type(box["i"], title, submit=True)
            _verified(r, f"add {title!r} with type(submit=True)")
        assert await _js(tab, TODO_LABELS) == ["Buy milk", "Walk dog"]

        entries = await payload(tab)
        milk, dog = one(entries, "checkbox", "Buy milk"), one(entries, "checkbox", "Walk dog")
        run_on = [e for e in entries if e.get("r") == "clk" and "Buy milk" in (e.get("n") or "")
                  and "Walk dog" in (e.get("n") or "")]
        assert not run_on, f"a container is sent as one clickable with a run-on name: {run_on}"
        assert "checked" not in (milk.get("s") or "")
        _verified(await tab.check(milk["i"]), "complete Buy milk")
        assert await _js(tab,
                         "[...document.querySelectorAll('.todo-list li')]"
                         ".map((li) => li.classList.contains('completed'))") \
            == [True, False]
        assert "checked" in (one(await payload(tab), "checkbox", "Buy milk").get("s") or "")

        _verified(await tab.click(one(await payload(tab), "link", "Active")["i"]), "filter Active")
        assert await _js(tab, TODO_LABELS) == ["Walk dog"]
        entries = await payload(tab)
        assert not find_entries(entries, "checkbox", "Buy milk"), "a filtered-out todo is still sent"
        dog = one(entries, "checkbox", "Walk dog")

        _verified(await tab.hover(dog["i"]), "hover Walk dog")
        destroy = one(await payload(tab), "button", None, near="Walk dog")
        _verified(await tab.click(destroy["i"]), "delete Walk dog")
        assert await _js(tab, "[...document.querySelectorAll('.todo-list li')].length") == 0
        _verified(await tab.click(one(await payload(tab), "link", "All")["i"]), "filter All")
        assert await _js(tab, TODO_LABELS) == ["Buy milk"]

    open_widget(harness, server, WIDGETS[wid], body, timeout=150)


def test_todomvc_react_root_is_not_a_clickable(harness, server):
    """Defect 11: React 18 listens at its root container (#root); that container is not a click target."""
    async def body(tab):
        box = one(await payload(tab), "textbox", "What needs to be done?")
        _verified(await tab.type(box["i"], "Buy milk", submit=True), "add a todo")
        snap = await tab.snapshot()
        roots = [n for n in snap.nodes() if n.attrs.get("id") == "root"]
        assert roots, "the React root container is not in the snapshot"
        assert not roots[0].interactive, f"React's root container is sent as a clickable: {roots[0]!r}"

    open_widget(harness, server, WIDGETS["todomvc-react"], body)


# ------------------------------------------------------------------------------- Swagger UI
INVISIBLE = re.compile("[\u00ad\u200b-\u200f\u2060-\u2064\ufeff]")


def test_swagger_names_have_no_invisible_characters(harness, server):
    """Defect 9: Swagger UI breaks paths with <wbr> and puts zero-width spaces into its labels
    ("get \\u200b/pets\\u200b/{petId}"); names reach the payload normalised: nothing invisible, <wbr>
    joined (no space), so the model reads and matches "/pets/{petId}"."""
    async def body(tab):
        entries = await payload(tab)
        dirty = [e for e in entries if INVISIBLE.search(e.get("n") or "") or INVISIBLE.search(e.get("v") or "")]
        assert not dirty, f"names with invisible characters: {[ascii(e.get('n')) for e in dirty]}"
        names = [e.get("n") for e in entries]
        assert "GET /pets/{petId} Info for a specific pet" in names, f"path not joined at its <wbr>: {names}"
        assert "get /pets/{petId}" in names, f"zero-width spaces not removed: {names}"
        snap = await tab.snapshot()
        for fmt in ("tree", "skeleton"):
            found = INVISIBLE.findall(snap.serialize(fmt).text)
            assert not found, f"{fmt} serialization carries invisible characters: {sorted(set(map(ascii, found)))}"
        arrow = one(entries, "button", "get /pets/{petId}")
        _verified(await tab.click(arrow["i"]), "expand the operation by its arrow")
        assert await _js(tab, "document.querySelector('#operations-pets-showPetById').classList.contains('is-open')")

    open_widget(harness, server, WIDGETS["swagger-arrow"], body)
