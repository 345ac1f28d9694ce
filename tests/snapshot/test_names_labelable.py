"""Names as the browser computes them, on a page written to slip past each rule: a <label for> on
a button (role=checkbox/switch too), an output and a form-associated custom element; a wrapping
label without the button's own words; a label whose `for` points elsewhere; a field block above
an unnamed combobox; CSS generated content. Vigil's role family and name must equal Chromium's
accessibility tree for every control on it (no allow-list here)."""

from __future__ import annotations

from support.ax_diff import page_pairs


def test_names_equal_chromiums_on_labelable_elements(harness, server):
    async def go():
        tab = await harness.browser.new_tab(server.url("names_labelable.html"))
        try:
            return await page_pairs(tab, "names_labelable.html")
        finally:
            await tab.close()

    pairs = harness.run(go(), 60)
    got = {(p.chrome_role, p.chrome_name) for p in pairs}
    # the page is what it means to be: Chromium's own names for the tricky ones
    for want in [("button", "Save draft"), ("checkbox", "Accept terms"), ("switch", "Wi-Fi"),
                 ("button", "Upload avatar"), ("button", "Mine"), ("combobox", ""), ("button", "Normal"),
                 ("button", "Heading 2")]:
        assert want in got, f"Chromium's tree lacks {want}: {sorted(got)}"
    differ = [p.text() for p in pairs if not p.agrees()]
    assert not differ, "Vigil differs from Chromium:\n  " + "\n  ".join(differ)
