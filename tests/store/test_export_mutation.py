"""Exported tests catch the regression they were recorded to guard: mutation tests of every kind of
expectation `vigil export --playwright` writes (issue 27, items 6 and 7).

One real run is recorded on a shop page that has other "1"s on it, starting on about:blank as an MCP
session does (so the site's base comes from the first navigation, and VIGIL_BASE_URL moves the whole
test). It is exported once; then, in one pytest process, the exported test runs against the original
page (it passes) and against one twin of the page per kind of expectation, where just that step's
outcome does not happen: the cart counter never moves, the typed name is changed by the page, the
size snaps back, the gift box refuses the check, the quantity stays, no "saved" note appears, the
notice stays, the checkout link goes nowhere. Each twin must fail, at the line of that step."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from engine.browser.discovery import find_chromium
from engine.cli import main as vigil
from engine.local_server import serve_directory
from engine.store import Store

from support.recording_helpers import record_scripted

SHOP = """<!doctype html><html><head><meta charset="utf-8"><title>Shop</title></head><body>
<h1>Shop</h1>
<p>Offers: 1 shirt for 1 EUR</p><span>1</span> <b>1</b>
<div id="notice">Free shipping today <button>Dismiss</button></div>
<label for="name">Name</label> <input id="name">
<label for="size">Size</label> <select id="size"><option>Small</option><option>Large</option></select>
<label><input type="checkbox" id="gift"> Gift wrap</label>
<p>Cart: <span id="cart-count">0</span></p>
<button id="add">Add to cart</button>
<label for="qty">Quantity</label> <input id="qty" type="number" value="1"> <button id="more">More</button>
<div class="notes"></div>
<button id="save">Save for later</button>
<a href="done.html">Checkout</a>
<script>
const $ = (id) => document.getElementById(id);
document.querySelector('#notice button').addEventListener('click', () => $('notice').remove());
$('add').addEventListener('click', () => { $('cart-count').textContent = String(+$('cart-count').textContent + 1); });
$('more').addEventListener('click', () => { $('qty').value = String(+$('qty').value + 1); });
$('save').addEventListener('click', () => {
  const p = document.createElement('p'); p.textContent = 'Saved for later today';
  document.querySelector('.notes').appendChild(p); });
</script>
</body></html>"""
DONE = """<!doctype html><html><head><meta charset="utf-8"><title>Done</title></head><body>
<h1>Thank you for your order</h1></body></html>"""

STEPS = [
    {"action": "navigate", "url": "{base}/index.html", "expect": {"type": "navigation"}},
    {"action": "click", "target": {"role": "button", "name": "Dismiss"}},
    {"action": "type", "target": {"role": "textbox", "name": "Name"}, "text": "Ada Lovelace"},
    {"action": "select", "target": {"role": "combobox", "name": "Size"}, "option": "Large"},
    {"action": "check", "target": {"role": "checkbox", "name": "Gift wrap"}},
    {"action": "click", "target": {"role": "button", "name": "Add to cart"}},
    {"action": "click", "target": {"role": "button", "name": "More"}},
    {"action": "click", "target": {"role": "button", "name": "Save for later"}},
    {"action": "click", "target": {"role": "link", "name": "Checkout"}, "expect": {"type": "navigation"}},
    {"action": "finish", "answer": "ordered"},
]

# twin → (how the page is changed so that one outcome does not happen, the step whose lines must fail)
TWINS = {
    "gone": (("document.querySelector('#notice button').addEventListener('click', () => $('notice').remove());", ""),
             "Dismiss"),
    "typed_value": (("<input id=\"name\">", "<input id=\"name\" oninput=\"this.value = this.value.toUpperCase()\">"),
                    "Ada Lovelace"),
    "option": (("<select id=\"size\">", "<select id=\"size\" onchange=\"this.selectedIndex = 0\">"), "Size"),
    "checked": (("id=\"gift\">", "id=\"gift\" onclick=\"return false\">"), "Gift wrap"),
    "text": (("String(+$('cart-count').textContent + 1)", "$('cart-count').textContent"), "cart-count"),
    "value": (("String(+$('qty').value + 1)", "$('qty').value"), "More"),
    "appeared": (("document.querySelector('.notes').appendChild(p);", ""), "Saved for later"),
    "url": (("<a href=\"done.html\">", "<a href=\"#\">"), "done.html"),
}


@pytest.fixture(scope="module")
def sites(tmp_path_factory):
    """The recorded site at one origin; at another, the same page under /ok and each twin under /TWIN."""
    rec = tmp_path_factory.mktemp("shop")
    (rec / "index.html").write_text(SHOP)
    (rec / "done.html").write_text(DONE)
    twins = tmp_path_factory.mktemp("twins")
    for name, ((old, new), _step) in {"ok": (("", ""), ""), **TWINS}.items():
        d = twins / name
        d.mkdir()
        assert old in SHOP, name
        (d / "index.html").write_text(SHOP.replace(old, new) if old else SHOP)
        (d / "done.html").write_text(DONE)
    with serve_directory(rec) as a, serve_directory(twins) as b:
        yield a.rstrip("/"), b.rstrip("/")


@pytest.fixture(scope="module")
def exported(sites, harness, tmp_path_factory):
    base, _ = sites
    home = tmp_path_factory.mktemp("vigil-home")
    mp = pytest.MonkeyPatch()
    mp.setenv("VIGIL_HOME", str(home))
    steps = [{**s, "url": s["url"].format(base=base)} if "url" in s else s for s in STEPS]
    with Store.open() as store:
        sid = record_scripted(harness, store, "about:blank", steps, "Order a large shirt", timeout=120)
    out = tmp_path_factory.mktemp("export") / "test_shop.py"
    assert vigil(["export", sid[:8], "--playwright", str(out)]) == 0
    yield out, out.read_text(), base
    mp.undo()


def test_every_expectation_names_the_element_and_its_new_state_exactly(exported):
    _, text, base = exported
    # item 7: the session started on about:blank; its site is the first page it went to
    assert f'BASE_URL = os.environ.get("VIGIL_BASE_URL", "{base}")' in text
    code = [line for line in text.split("BASE_URL =")[1].splitlines() if not line.strip().startswith("#")]
    assert '    page.goto(BASE_URL + "/index.html")' in code and not any(base + "/" in line for line in code)
    expects = [line.strip() for line in text.splitlines() if line.strip().startswith("expect(")]
    for line in ('expect(page.locator("#notice")).to_be_hidden()',
                 'expect(page.get_by_role("textbox", name="Name", exact=True)).to_have_value("Ada Lovelace")',
                 'expect(page.locator("#cart-count")).to_have_text("1")',
                 'expect(page).to_have_url(BASE_URL + "/done.html")'):
        assert line in expects, f"{line!r} not in:\n" + "\n".join(expects)
    assert any(".to_have_value(\"2\")" in e and "Quantity" in e for e in expects), expects
    assert any(e.endswith('.to_have_text("Saved for later today")') for e in expects), expects
    for e in expects:  # a short text alone is never an assertion, nor "the first of many"
        assert ".first" not in e and not re.search(r'get_by_text\("[^"]{0,7}"', e), e
        assert "to_be_visible()" not in e, f"visible is not an outcome: {e}"


def _step_lines(text: str, marker: str) -> list[str]:
    """The lines of the exported step whose block mentions `marker` (its action and expectations)."""
    blocks = re.split(r"\n(?=    # Step \d+)", text)
    block = next(b for b in blocks if b.lstrip().startswith("# Step") and marker in b)
    return [line.strip() for line in block.splitlines()[1:] if line.strip() and not line.strip().startswith("#")]


# Every twin but one fails at an expect() that waits its whole timeout for an outcome that never comes: the runs
# below give expect() this much (the outcomes on the page as recorded come at once); actions keep 1.5 s.
EXPECT_MS = 700


def _with_expect_timeout(text: str) -> str:
    """The exported test with expect()'s timeout set to EXPECT_MS (the same in every file: it is one setting for
    the whole pytest process, set as each file is imported)."""
    out, n = re.subn(r"^expect\.set_options\(timeout=TIMEOUT_MS\)$", f"expect.set_options(timeout={EXPECT_MS})",
                     text, count=1, flags=re.M)
    assert n == 1, "the exported test no longer sets expect()'s timeout where this test expects it"
    return out


def test_each_exported_expectation_fails_on_a_twin_where_its_outcome_does_not_happen(exported, sites, tmp_path):
    test_file, text, _ = exported
    _, twins = sites
    run_dir = tmp_path / "runs"
    run_dir.mkdir()
    original = run_dir / "test_on_the_site.py"  # VIGIL_BASE_URL moves the whole test to the other server
    original.write_text(_with_expect_timeout(text))
    for name in TWINS:
        (run_dir / f"test_twin_{name}.py").write_text(_with_expect_timeout(re.sub(
            r"^BASE_URL = .*$", f"BASE_URL = {twins + '/' + name!r}", text, count=1, flags=re.M)))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(VIGIL_BASE_URL=twins + "/ok", VIGIL_TIMEOUT_MS="1500",
               VIGIL_CHROMIUM=find_chromium(headless=True))  # the exported test runs headless
    report = run_dir / "report.xml"
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}",
                        "."], cwd=run_dir, env=env, capture_output=True, text=True, timeout=300)
    assert report.exists(), p.stdout[-3000:] + p.stderr[-2000:]
    results = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        failure = case.find("failure")
        results[case.get("classname", "").split(".")[-1]] = None if failure is None else (failure.text or "")
    assert results.get("test_on_the_site", "missing") is None, results.get("test_on_the_site") or p.stdout[-3000:]
    for name, (_change, marker) in TWINS.items():
        got = results.get(f"test_twin_{name}", "missing")
        assert got is not None, f"the exported test passed on the twin where {name!r} does not happen"
        failed_at = re.findall(r"^>\s+(.*?)\s*$", got, re.M)
        assert failed_at and failed_at[0] in _step_lines(text, marker), (name, failed_at, got[-1500:])
