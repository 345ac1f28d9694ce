"""What a person pointing at the page means (`engine.loop.person_steps.control_at`, used by Pick locator and
by the person's own steps): a label's text means its control — a `for` label, a wrapping label, and a label
whose native control a library hid behind a widget of its own (select2, choices, tom-select) —, a select's
chevron means its control, and empty space means nothing. On real library pages of the corpus; each locator
found is resolved by Playwright to exactly the intended element."""

from __future__ import annotations

import pytest

from engine.loop.person_steps import PersonSteps, control_at
from gui.nodes.node_models import locator_code

from support.real_corpus import corpus_installed, open_widget  # noqa: F401  (fixture)

# a label: the centre of its words (its first non-blank text); anything else: the centre of its box
POINT = """(sel) => {
  const e = document.querySelector(sel);
  let r = e.getBoundingClientRect();
  if (e.tagName === 'LABEL') {
    const walk = document.createTreeWalker(e, NodeFilter.SHOW_TEXT);
    let t;
    while ((t = walk.nextNode()) && !t.textContent.trim()) {}
    const range = document.createRange(); range.selectNodeContents(t);
    r = range.getClientRects()[0];
  }
  return [r.x + r.width / 2, r.y + r.height / 2];
}"""

# page, where the person points (CSS), what they mean (role, name), how it was found (or the ways it may be),
# and what Playwright's locator must reach (a check on the element it resolves to)
CASES = [
    ("offline_shop.html", "label:has(#gift)", "checkbox", "Gift wrap", "label", "e => e.id === 'gift'"),
    ("offline_shop.html", "label[for=country]", "combobox", "Country", "label", "e => e.id === 'country'"),
    ("real/radix.html", "label[for=terms]", "checkbox", "Accept terms and conditions", "label",
     "e => e.id === 'terms' && e.getAttribute('role') === 'checkbox'"),
    ("real/antd.html", "label[for=city]", "combobox", "Destination", "label", "e => e.id === 'city'"),
    # the chevron: its own box around the control's, or a part of the control (as the snapshot has it)
    ("real/antd.html", ".ant-select-arrow", "combobox", "Destination", ("widget", ""), "e => e.id === 'city'"),
    ("real/select2.html", "label[for=carrier]", "combobox", "Choose a carrier", "label",
     "e => e.matches('.select2-selection')"),
    ("real/choices.html", "label[for=tags]", "combobox", "Delivery days", "label",
     "e => e.matches('.choices[role=combobox]') && !!e.querySelector('#tags')"),
    ("real/tom-select.html", "label[for=country-ts-control]", "combobox", "Country", "label",
     "e => e.id === 'country-ts-control'"),
]


@pytest.mark.usefixtures("corpus_installed")
@pytest.mark.parametrize("page", sorted({c[0] for c in CASES}))
def test_a_label_or_a_widget_part_means_its_control_and_empty_space_nothing(harness, server, page):
    cases = [c for c in CASES if c[0] == page]

    async def go(tab):
        snap = await tab.snapshot()
        out = []
        for _, where, *_want, check in cases:
            x, y = await tab.page.evaluate(POINT, where)
            node, how = control_at(snap, x, y)
            assert node is not None, f"nothing found under {where} on {page}"
            code = locator_code(snap, node.node_id)
            loc = eval(code, {"page": tab.page})  # noqa: S307 - our own generated locator line
            reached = await loc.count() == 1 and await loc.evaluate(check)
            out.append((where, node.role, node.name, how, code, reached))
        vw, vh = snap.context.viewport.width, snap.context.viewport.height
        empty = control_at(snap, vw - 3, vh - 3)
        return out, empty

    if page.startswith("real/"):
        out, empty = open_widget(harness, server, page.removeprefix("real/"), go)
    else:
        out, empty = harness.page(server.url(page), go)
    for (where, role, name, how, code, reached), case in zip(out, cases, strict=True):
        want_how = case[4] if isinstance(case[4], tuple) else (case[4],)
        assert (role, name) == case[2:4] and how in want_how, f"{where} on {page}: {role} {name!r} via {how!r} ({code})"
        assert reached, f"{where} on {page}: {code} does not resolve to exactly the intended element"
    assert empty == (None, ""), f"empty space on {page} picked {empty}"


def test_a_persons_click_on_a_label_is_a_click_on_its_control(harness, server):
    """Clicking a checkbox's label text checks it: the person's step is a click on the checkbox (it was not
    recorded at all when the label was all there was under the pointer)."""
    async def go(tab):
        snap = await tab.snapshot()
        x, y = await tab.page.evaluate(POINT, "label:has(#gift)")
        steps = PersonSteps(lambda: snap)
        steps.feed("mouse", ("down", x, y), {"button": "left", "click_count": 1})
        steps.feed("mouse", ("up", x, y), {"button": "left", "click_count": 1})
        return steps.finish(), snap.find("checkbox", "Gift wrap")[0]

    done, gift = harness.page(server.url("offline_shop.html"), go)
    assert [p.action.to_string() for p in done] == [f"click({gift.node_id})"]
    assert done[0].target["locator"]["code"] == 'page.get_by_role("checkbox", name="Gift wrap", exact=True)'
