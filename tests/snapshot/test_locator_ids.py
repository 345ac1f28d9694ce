"""Issue 39 item 10: the locator Vigil offers for an element is never built on an id a library generated.

Select2 gives each result item four random characters per page load (`select2-carrier-result-x4ki-dhl`),
React's useId `:r1:`, MUI `mui-123`, Angular `mat-option-12` …: a locator on such an id finds nothing
the next time the test runs. The locator must use role and name, text, a stable attribute or a scope
with a stable id instead, and still resolve — in Playwright itself — to exactly that element.
"""

from __future__ import annotations

import pytest

from engine.snapshot.locators import Locators, resolve
from engine.snapshot.locators.stable import generated_id

from support.real_corpus import corpus_installed, open_widget  # noqa: F401

# ids (and field names) as pages write them by hand, from their own data or their CMS: none may be taken for a
# generated one
ORDINARY = """
cart-count email checkout-button step-2 order-20417 main content header footer nav search q username password
first-name last_name firstName address-line-2 zip postcode phone country state city submit login-form signup
newsletter menu-toggle sidebar modal-close product-123 price qty quantity-1 item-42 row-7 col-3 tab-1 panel-2
section-3 slide-4 faq-5 h1-title mp3-player ipv6-address oauth2-login html5-video base64-input utf8 i18n-menu
a11y-skip b2b-signup 3d-viewer 4k-toggle s3-bucket v2-banner top-10 web3-connect covid19-banner page-1
comment-98765 post-1234 user_42 sku-AB-1234 skip-to-content twotabsearchtextbox nav-cart-count gh-ac
add-to-cart-button buy-now-button sp-cc-accept onetrust-accept-btn-handler CybotCookiebotDialog L2AGLb APjFqb
__next __nuxt app root react-root wpadminbar masthead movie_player contents guide-button searchInput
mw-content-text p-lang-btn ca-edit n-mainpage-description firstHeading toc cite_note-12 cite_ref-3 pt-login-2
vector-main-menu-dropdown-checkbox search-form js-search global-nav hero pricing-table plan-pro
billing-cycle-annual cc-number cc-exp cvc card-element terms agree-terms remember-me forgot-password
g-recaptcha-response date-2024-05-01 2fa-code otp-input-0 option-1 radio-yes q1 q2a h2o rb1 cb_3 tbl-2023q4
ipv4addr tbl2 btn1 img2 pdf-viewer-3 carrier size crust picked tracking-no invoice-INV2024-0042 ticket-JIRA-123
room-101 seat-12A flight-BA283 gate-B22 isbn-9780131103627 sku-X100 model-RTX4090 sensor-h2s step2 section_4b
user-profile-v2 api-v1-docs iphone15-case covid-19 h264-stream x86-build win10-setup ps5-bundle
xhtml-strict css3-demo rgb255 dx12 ps4pro mkv-player SKU12 a1-paper b12-vitamin
select2-carrier-container select2-carrier-results
user[addresses][0][zip] items[0][qty] wpforms-123-field_4 gform_1_field_3 ctl00_ContentPlaceHolder1_txtEmail
ctl00$MainContent$txtName edit-submitted-email
""".split()

# ids as the libraries write them
GENERATED = """
select2-size-result-x4ki-Large select2-xyz3-container select2-carrier-result-0z9q-dhl select2-size-k2-results
select2-carrier-container-choice-ab12-dhl :r1: :R2m: «r1» _r_1_ radix-:R2m: headlessui-listbox-option-:r5:
headlessui-menu-button-1 mui-123 mat-option-12 mat-input-0 mat-select-value-1 mat-tab-label-0-1 cdk-overlay-3
cdk-accordion-child-0 mat-select-0-panel cdk-step-content-0-1 mat-mdc-form-field-label-2 ember123
css-1x2y3z css-13cymwt sc-abcdef sc-bdVaJa ui-id-5
react-select-2-option-3 react-select-3-input downshift-0-item-1 rc-tabs-0-tab-1 rc_select_0 __BVID__12
vs1__combobox v-0 input-v-3 tooltip537248 3f2504e0-4f89-11d3-9a0c-0305e82c3301 mantine-k3l9x2a1b react-aria-:r1:
react-aria1234-5 dijit_form_Button_0 yui_3_5_1_1_1366 ext-gen123 gwt-uid-5 pr_id_12 jsx-123456
__privateStripeFrame5783 chakra-modal-:r3: field-:r7:-label
""".split()

_PAGE_IDS = {"carrier", "size"}  # the <select>s' own ids, which Select2 builds its stable container ids on


def test_generated_ids_are_told_from_ordinary_ones():
    wrongly_generated = [i for i in ORDINARY if generated_id(i, _PAGE_IDS)]
    missed = [i for i in GENERATED if not generated_id(i, _PAGE_IDS)]
    assert not wrongly_generated, f"{len(wrongly_generated)}/{len(ORDINARY)} ordinary ids rejected: {wrongly_generated}"
    assert not missed, f"{len(missed)}/{len(GENERATED)} generated ids taken for stable: {missed}"
    # a Select2 container is stable only when named after its <select>'s id
    assert generated_id("select2-carrier-results") and not generated_id("select2-carrier-results", {"carrier"})


_IDS = "els => els.map(e => e.id)"
_TEXTS = "els => els.map(e => e.textContent.trim())"


async def _offered(tab, snap, node) -> tuple[str, list[str], list[str], list[str]]:
    """The locator offered for a node, its alternatives (what healing keeps), and the ids of the elements
    the snapshot and Playwright find with it."""
    locs = Locators(snap)
    loc = locs.for_node(node)
    assert loc is not None, f"no locator for {node.label()}"
    mine = [(m.attrs or {}).get("id", "") for m in resolve(loc, snap)]
    theirs = await loc.build_on(tab.page).evaluate_all(_IDS)
    return loc.code(), [a.code() for a in locs.alternatives(node)], mine, theirs


def _not_on(ident: str, code: str, alts: list[str]) -> None:
    assert ident not in code, f"the locator is built on the generated id {ident!r}: {code}"
    on_it = [a for a in alts if ident in a]
    assert not on_it, f"alternatives kept for healing are built on {ident!r}: {on_it}"


# a second Select2, on a <select> with neither id nor name: Select2 names its container with 4 random characters
_SECOND_SELECT2 = """() => {
  const s = document.createElement('select');
  s.innerHTML = '<option value="dhl">DHL Express</option><option value="ups">UPS Standard</option>';
  document.querySelector('form').append(s);
  $(s).select2({ minimumResultsForSearch: Infinity });
  $('#carrier').val('dhl').trigger('change');
}"""


@pytest.mark.usefixtures("corpus_installed")
def test_select2_options_get_a_locator_that_survives_a_reload(harness, server):
    """The real Select2: its open list's options get a locator on role and name (inside the results list, whose id
    is built on the <select>'s own), never on their random ids; it still finds the same option after a reload,
    where every random id has changed. The value box named after the <select>'s id keeps its #id."""
    async def go(tab):
        await tab.page.evaluate(_SECOND_SELECT2)
        snap = await tab.snapshot()
        box = next(n for n in snap.interactive() if n.role == "combobox" and (n.attrs or {}).get("aria-labelledby")
                   == "select2-carrier-container")
        assert (await tab.click(box.node_id)).success
        await tab.page.wait_for_selector(".select2-results__option")
        snap = await tab.snapshot()
        options = [n for n in snap.nodes() if n.role == "option" and n.rendered
                   and (n.attrs or {}).get("id", "").startswith("select2-carrier-result-")]
        out = {n.name: (n.attrs["id"], *(await _offered(tab, snap, n))) for n in options}
        # the value boxes: the first named after #carrier (stable), the second after nothing (random)
        shown = [n for n in snap.nodes() if (n.attrs or {}).get("id", "").endswith("-container")
                 and n.attrs["id"].startswith("select2-")]
        boxes = {n.attrs["id"]: await _offered(tab, snap, n) for n in shown}
        # the next run of the test: a new load, new random ids
        ups = Locators(snap).for_node(next(n for n in options if n.name == "UPS Standard"))
        await tab.goto(tab.page.url)
        await tab.page.wait_for_selector("html[data-ready]", state="attached")
        await tab.page.click(".select2-selection")
        await tab.page.wait_for_selector(".select2-results__option")
        again = ups.build_on(tab.page)
        return out, boxes, (await again.evaluate_all(_TEXTS), await again.evaluate_all(_IDS))

    out, boxes, (again, new_ids) = open_widget(harness, server, "select2.html", go, timeout=60)
    assert set(out) == {"DHL Express", "UPS Standard", "FedEx Ground", "Royal Mail"}, set(out)
    for name, (ident, code, alts, mine, theirs) in out.items():
        _not_on(ident, code, alts)
        assert code == f'page.locator("#select2-carrier-results").get_by_role("option", name="{name}", exact=True)'
        assert mine == [ident] and theirs == [ident], (name, code, mine, theirs)
    assert again == ["UPS Standard"] and new_ids != [out["UPS Standard"][0]], (again, new_ids, out["UPS Standard"])
    assert len(boxes) == 2, boxes
    for ident, (code, alts, mine, theirs) in boxes.items():
        assert mine == [ident] and theirs == [ident], (ident, code, mine, theirs)
        if ident == "select2-carrier-container":
            assert code == 'page.locator("#select2-carrier-container")', code
        else:
            _not_on(ident, code, alts)


# Library-style ids as the libraries write them, each on two elements that their role, name and text do not
# tell apart: before, the id was the locator.
_LIBRARY_PAGE = """<!doctype html><html><body>
<form aria-label="Redeem">
  <label for=":r1:">Code</label><input id=":r1:" name="coupon">
  <label for="«r2»">Code</label><input id="«r2»" name="gift-card">
</form>
<section aria-label="Cart"><button id="_r_3_">Remove</button></section>
<section aria-label="Saved for later"><button id="_r_4_">Remove</button></section>
<div role="group" aria-label="Invoice 20417"><button id="radix-:R2m:" aria-haspopup="menu">Open menu</button></div>
<div role="group" aria-label="Invoice 20418"><button id="radix-:R4m:" aria-haspopup="menu">Open menu</button></div>
<ul role="listbox" id="headlessui-listbox-options-:r4:" aria-label="Assignee">
  <li role="option" id="headlessui-listbox-option-:r5:">Wade Cooper</li></ul>
<ul role="listbox" id="headlessui-listbox-options-:r6:" aria-label="Reviewer">
  <li role="option" id="headlessui-listbox-option-:r7:">Wade Cooper</li></ul>
<label for="mui-123">Quantity</label><input id="mui-123" name="qty-shirt">
<label for="mui-124">Quantity</label><input id="mui-124" name="qty-cap">
<div role="listbox" id="mat-select-0-panel" aria-label="Size">
  <mat-option role="option" id="mat-option-12">Large</mat-option></div>
<div role="listbox" id="mat-select-1-panel" aria-label="Crust">
  <mat-option role="option" id="mat-option-15">Large</mat-option></div>
<div role="tablist" aria-label="Shipping steps"><div role="tab" id="cdk-step-label-0-1">Address</div></div>
<div role="tablist" aria-label="Billing steps"><div role="tab" id="cdk-step-label-1-1">Address</div></div>
<a id="ember123" class="ember-view" href="/orders/20417">View</a>
<a id="ember124" class="ember-view" href="/orders/20418">View</a>
<span id="css-1x2y3z" title="Shipping details" onclick="1">Details</span>
<span id="sc-abcdef" title="Billing details" onclick="1">Details</span>
<button id="cart-count">Cart</button><button id="cart-count-2">Cart</button>
</body></html>"""

_STABLE = {"cart-count", "cart-count-2"}  # ordinary ids next to them keep their #id locator


def test_library_style_ids_are_never_the_locator(harness, tmp_path):
    (tmp_path / "ids.html").write_text(_LIBRARY_PAGE)

    async def body(tab):
        snap = await tab.snapshot()
        out = {}
        for n in snap.nodes():
            ident = (n.attrs or {}).get("id")
            if ident and n.interactive:
                out[ident] = await _offered(tab, snap, n)
        return out

    got = harness.page(tmp_path.joinpath("ids.html").as_uri(), body)
    generated = {i for i in got if i not in _STABLE}
    assert len(generated) == 22, sorted(got)  # the 18 controls and the 4 listboxes holding options
    for ident, (code, alts, mine, theirs) in got.items():
        assert mine == [ident] and theirs == [ident], (ident, code, mine, theirs)
        if ident in _STABLE:
            assert code == f'page.locator("#{ident}")', code
        else:
            _not_on(ident, code, alts)
    # a stable attribute or scope where the page has one
    assert got[":r1:"][0] == 'page.locator("input[name=\\"coupon\\"]")'
    assert got["mui-123"][0] == 'page.locator("input[name=\\"qty-shirt\\"]")'
    assert got["ember123"][0] == 'page.locator("a[href=\\"/orders/20417\\"]")'
    assert got["css-1x2y3z"][0] == 'page.locator("span[title=\\"Shipping details\\"]")'
    assert got["headlessui-listbox-option-:r5:"][0] == (
        'page.locator("ul[aria-label=\\"Assignee\\"]").get_by_role("option", name="Wade Cooper", exact=True)')
