"""`vigil export ID --playwright test_x.py`: a run recorded on a local shop page is exported as a
pytest-playwright test; run with pytest in a subprocess against the same site it passes, and once
the page is broken (the total changed, the button gone) it fails on the right line. The typed
password is nowhere in the file: it reads it from the environment variable it names."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from engine.browser.discovery import find_chromium
from engine.cli import main as vigil
from engine.local_server import serve_directory
from engine.store import Store

from support.cli_inprocess import vigil_in_process
from support.recording_helpers import record_scripted

SECRET = "hunter2-Zq9!"
SHOP = """<!doctype html><html><head><meta charset="utf-8"><title>Tiny shop</title></head><body>
<h1>Tiny shop</h1>
<div id="notice">Free shipping today <button onclick="this.parentNode.remove()">Dismiss</button></div>
<label for="name">Name</label> <input id="name">
<label for="size">Size</label> <select id="size"><option>Small</option><option>Large</option></select>
<label><input type="checkbox" id="gift"> Gift wrap</label>
<label for="pw">Password</label> <input id="pw" type="password">
<button id="add">Add to cart</button>
<p id="total" role="status"></p>
<a href="done.html">Checkout</a>
<script>document.getElementById('add').addEventListener('click', () => {
  document.getElementById('total').textContent = 'Total: 42.00 EUR'; });</script>
</body></html>"""
DONE = """<!doctype html><html><head><meta charset="utf-8"><title>Done</title></head><body>
<h1>Thank you for your order</h1></body></html>"""
STEPS = [
    {"action": "click", "target": {"role": "button", "name": "Dismiss"}},
    {"action": "type", "target": {"role": "textbox", "name": "Name"}, "text": "Ada Lovelace"},
    {"action": "select", "target": {"role": "combobox", "name": "Size"}, "option": "Large"},
    {"action": "check", "target": {"role": "checkbox", "name": "Gift wrap"}},
    {"action": "type", "target": {"name": "Password"}, "text": SECRET},
    {"action": "click", "target": {"role": "button", "name": "Add to cart"}},
    {"action": "click", "target": {"role": "link", "name": "Checkout"}, "expect": {"type": "navigation"}},
    {"action": "finish", "answer": "ordered"},
]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("shop")
    (root / "index.html").write_text(SHOP)
    (root / "done.html").write_text(DONE)
    with serve_directory(root) as base:
        yield root, base.rstrip("/")


@pytest.fixture(scope="module")
def exported(site, harness, tmp_path_factory):
    """(path of the exported test, its text): a real recorded run, exported through the CLI."""
    root, base = site
    home = tmp_path_factory.mktemp("vigil-home")
    mp = pytest.MonkeyPatch()
    mp.setenv("VIGIL_HOME", str(home))
    store = Store.open()
    sid = record_scripted(harness, store, base + "/index.html", STEPS, "Order a large shirt", timeout=120)
    store.close()
    out = tmp_path_factory.mktemp("export") / "test_tiny_shop.py"
    assert vigil(["export", sid[:8], "--playwright", str(out)]) == 0
    yield out, out.read_text()
    mp.undo()


def _run_on(text: str, bases: dict[str, str], run_dir: Path) -> dict[str, str | None]:
    """The exported test, once per site in `bases` (name → base URL), in ONE pytest process (one Python start,
    one Chromium): the first copy is the file as exported, moved by $VIGIL_BASE_URL; the others have their
    BASE_URL line set to their site. name → None when it passed, else pytest's report of its failure."""
    names = list(bases)
    run_dir.mkdir()
    (run_dir / f"test_{names[0]}.py").write_text(text)
    for name in names[1:]:
        (run_dir / f"test_{name}.py").write_text(re.sub(r"^BASE_URL = .*$", f"BASE_URL = {bases[name]!r}", text,
                                                        count=1, flags=re.M))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIGIL_SECRET", "PYTEST_"))}
    env.update(VIGIL_BASE_URL=bases[names[0]], VIGIL_TIMEOUT_MS="2500", VIGIL_SECRET_PASSWORD=SECRET,
               VIGIL_CHROMIUM=find_chromium(headless=True))  # the exported test runs headless
    report = run_dir / "report.xml"
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}", "."],
                       cwd=run_dir, env=env, capture_output=True, text=True, timeout=180)
    assert report.exists(), p.stdout[-3000:] + p.stderr[-2000:]
    results: dict[str, str | None] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        failure = case.find("failure")
        if failure is None:
            failure = case.find("error")
        results[case.get("classname", "").split(".")[-1].removeprefix("test_")] = (
            None if failure is None else (failure.text or failure.get("message") or "failed"))
    assert set(results) == set(names), (results, p.stdout[-3000:])
    return results


def _failed_at(out: str, line: str) -> bool:
    """pytest's report points at this line of the exported file (`>   line`)."""
    assert re.search(r"^>\s+" + re.escape(line) + r"\s*$", out, re.M), f"not failed at {line!r}:\n{out}"
    return True


def test_the_exported_file_says_what_it_does(exported, site):
    _, text = exported
    _, base = site
    assert SECRET not in text and "hunter2" not in text
    assert "secret('VIGIL_SECRET_PASSWORD')" in text and "set VIGIL_SECRET_PASSWORD" in text
    # without the variable the test stops saying which one to set (it never falls back to a value)
    assert 'pytest.fail(f"Set the environment variable {var}: this test types a secret' in text
    assert "# Recorded by Vigil" in text and "Task: Order a large shirt" in text and base in text
    for line in ('page.goto(BASE_URL + "/index.html")',
                 'expect(page.locator("#notice")).to_be_hidden()',  # the notice is gone
                 'page.get_by_role("textbox", name="Name", exact=True).fill("Ada Lovelace")',
                 'expect(page.get_by_role("textbox", name="Name", exact=True)).to_have_value("Ada Lovelace")',
                 'page.get_by_role("combobox", name="Size", exact=True).select_option("Large")',
                 'page.get_by_role("checkbox", name="Gift wrap", exact=True).check()',
                 'expect(page.get_by_role("checkbox", name="Gift wrap", exact=True)).to_be_checked(checked=True)',
                 'page.get_by_role("button", name="Add to cart", exact=True).click()',
                 'expect(page.locator("#total")).to_have_text("Total: 42.00 EUR")',  # the element that changed, exactly
                 'expect(page).to_have_url(BASE_URL + "/done.html")',
                 "# the run finished here: ordered"):
        assert line in text, f"{line!r} not in:\n{text}"
    compile(text, "test_tiny_shop.py", "exec")


def test_the_exported_test_passes_on_the_site_and_fails_when_it_breaks(exported, tmp_path):
    _, text = exported
    # the site as recorded, the site with the total changed, the site with the button gone; one pytest run
    sites = tmp_path / "sites"
    for name, page in (("ok", SHOP), ("total", SHOP.replace("42.00", "41.00")),
                       ("gone", SHOP.replace('<button id="add">Add to cart</button>', ""))):
        assert name == "ok" or page != SHOP
        (sites / name).mkdir(parents=True)
        (sites / name / "index.html").write_text(page)
        (sites / name / "done.html").write_text(DONE)
    with serve_directory(sites) as base:
        base = base.rstrip("/")
        res = _run_on(text, {n: f"{base}/{n}" for n in ("ok", "total", "gone")}, tmp_path / "run")
    assert res["ok"] is None, res["ok"]
    # the total changed: red, on the total's line
    assert res["total"] is not None, "the exported test passed on the site whose total changed"
    assert _failed_at(res["total"], 'expect(page.locator("#total")).to_have_text("Total: 42.00 EUR")')
    # the button gone: red at the click
    assert res["gone"] is not None, "the exported test passed on the site without the button"
    assert _failed_at(res["gone"], 'page.get_by_role("button", name="Add to cart", exact=True).click()')


def test_export_refuses_bad_arguments(exported, tmp_path, capsys):
    assert vigil(["export", "zzzz-no-such", "--playwright", str(tmp_path / "t.py")]) == 2
    assert "vigil export: STORE_NO_SESSION" in capsys.readouterr().err
    sid = exported[1].split("# Session ", 1)[1].split(" ", 1)[0]
    assert vigil(["export", sid, "--playwright", str(tmp_path / "t.txt")]) == 2
    err = capsys.readouterr().err
    assert "BAD_ARGUMENT" in err and "test_checkout.py" in err and not (tmp_path / "t.txt").exists()


# a coupon widget in a closed shadow root: Vigil acts in it, Playwright's locators cannot enter it
COUPON = """<!doctype html><html><head><meta charset="utf-8"><title>Coupon</title></head><body>
<h1>Basket</h1><coupon-box></coupon-box><p id="out" role="status"></p>
<script>customElements.define('coupon-box', class extends HTMLElement { connectedCallback() {
  const r = this.attachShadow({mode: 'closed'});
  r.innerHTML = '<label for="c">Coupon</label> <input id="c"> <button>Apply</button>';
  r.querySelector('button').onclick = () => {
    document.getElementById('out').textContent = 'Applied: ' + r.getElementById('c').value; }; } });</script>
</body></html>"""
COUPON_STEPS = [
    {"action": "type", "target": {"role": "textbox", "name": "Coupon"}, "text": "SAVE10"},
    {"action": "click", "target": {"role": "button", "name": "Apply"}},
    {"action": "finish", "answer": "applied"},
]


def test_steps_inside_a_closed_shadow_root_are_exported_as_input_at_their_place(harness, tmp_path):
    root = tmp_path / "coupon"
    root.mkdir()
    (root / "index.html").write_text(COUPON)
    mp = pytest.MonkeyPatch()
    mp.setenv("VIGIL_HOME", str(tmp_path / "home"))
    try:
        with serve_directory(root) as base:
            base = base.rstrip("/")
            async def applied(tab):
                assert await tab.page.text_content("#out") == "Applied: SAVE10"

            with Store.open() as store:
                sid = record_scripted(harness, store, base + "/index.html", COUPON_STEPS, "Apply the coupon", applied,
                                      timeout=120)
            out = tmp_path / "export" / "test_coupon.py"
            out.parent.mkdir()
            assert vigil(["export", sid[:8], "--playwright", str(out)]) == 0
            text = out.read_text()
            # no role-and-name guess that Playwright would never find; the input where the element was
            assert 'get_by_role("button", name="Apply"' not in text and 'get_by_role("textbox"' not in text, text
            assert text.count("inside a closed shadow root, which Playwright's locators cannot enter") == 2, text
            assert re.search(r'^\s+page\.mouse\.click\([\d.]+, [\d.]+\)\n(\s+page\.keyboard\.press\(.*\)\n)*'
                             r'\s+page\.keyboard\.type\("SAVE10"\)$', text, re.M), text
            assert 'expect(page.locator("#out")).to_have_text("Applied: SAVE10")' in text, text
            compile(text, "test_coupon.py", "exec")
            # the coupon box gone (a copy of the site under /gone): the input lands on nothing, and the check
            # after it goes red
            (root / "gone").mkdir()
            (root / "gone" / "index.html").write_text(COUPON.replace("<coupon-box></coupon-box>", ""))
            res = _run_on(text, {"ok": base, "gone": base + "/gone"}, tmp_path / "run")
            assert res["ok"] is None, res["ok"]
            assert res["gone"] is not None, "the exported test passed on the page without the coupon box"
            assert "Applied: SAVE10" in res["gone"], res["gone"]
    finally:
        mp.undo()


def test_a_take_over_is_exported_as_what_ran_under_a_whole_name(site, tmp_path, monkeypatch):
    # `vigil run` on the shop: the offline planner gives up at once (no such button), the person takes over in
    # plain words, then quits at the next question; the export says what ran, not the planner's give-up
    _, base = site
    env = {**os.environ, "VIGIL_HOME": str(tmp_path / "home")}
    task = "click the Launch rocket button on the control panel"
    r = subprocess.run([sys.executable, "-m", "engine.cli", "run", task, "--url", base + "/index.html", "--approve",
                        "ask"], input="t\nclick Add to cart\nq\n", capture_output=True, text=True, timeout=120,
                       env=env)
    assert "kept as session" in r.stderr, (r.stdout, r.stderr)
    sid = r.stderr.split("kept as session ")[1].split()[0]
    out = tmp_path / "test_rocket.py"
    monkeypatch.setenv("VIGIL_HOME", env["VIGIL_HOME"])  # the export in this process: the file it writes is the point
    p = vigil_in_process("export", sid, "--playwright", str(out))
    assert p.returncode == 0, p.stderr
    text = out.read_text()
    body = text.split("def test_", 1)[1]
    assert body.startswith("click_the_launch_rocket_button_on_the(page"), body[:80]  # cut between words
    assert "Give up" not in body and "Launch rocket" not in body, body  # the give-up is no step's comment
    step = body.splitlines()
    click = step.index('    page.get_by_role("button", name="Add to cart", exact=True).click()')
    assert re.fullmatch(r"    # Step 1 \(the person's step\): click\(\w+\) on button 'Add to cart'", step[click - 1]), \
        step[click - 1]
    assert "acted in the page directly" not in body  # the question the run stopped at is no step of the person's
    compile(text, out.name, "exec")
