"""Stale IDs fall back to locators: when ghost match cannot heal an ID, the locators the node had
where its ID was seen are tried and must find exactly one element; the backend's
`actionDetails.selectorPath` stands in for an ID the page no longer has (seed 001 §4)."""

from __future__ import annotations

import pytest

from engine.actions.heal import Ghost, ghost_match
from engine.errors import UnknownNodeError
from engine.planners.backend import BackendPlanner
from engine.snapshot.locators import match_selector

from support.fake_backend import FakeBackend, ok
from support.fake_backend import backend_observation as _obs

PAGE = """<!doctype html><html><body style="margin:0">
<div id="app"><button data-testid="save-btn" style="margin:10px">Save</button></div>
<p id="out">-</p>
<script>
  const wire = () => document.querySelectorAll('#app button').forEach(b =>
    b.addEventListener('click', () => { document.getElementById('out').textContent = 'clicked ' + b.textContent; }));
  wire();
  // the framework re-renders: a new element, renamed and 300 px lower (ghost match scores 0.3)
  window.rerender = (copies) => {
    document.getElementById('app').innerHTML = Array.from({length: copies}, () =>
      '<button data-testid="save-btn" style="margin-top:300px">Store changes</button>').join('');
    wire();
  };
</script></body></html>"""


@pytest.fixture
def heal_page(tmp_path):
    p = tmp_path / "heal_locator.html"
    p.write_text(PAGE)
    return p.as_uri()


def test_a_stale_id_is_healed_by_its_test_id(harness, heal_page):
    async def go(tab):
        snap = await tab.snapshot()
        old = snap.find("button", "Save")[0]
        await tab.page.evaluate("rerender(1)")  # the page re-renders by itself (as a timer would)
        fresh = await tab.snapshot(force=True)
        assert old.node_id not in fresh or fresh.get(old.node_id).name != "Save"
        ghost = Ghost.of(old, snap)
        assert [loc.code() for loc in ghost.locators][:2] == [
            'page.get_by_test_id("save-btn")', 'page.get_by_role("button", name="Save", exact=True)']
        r = await tab.click(old.node_id)
        return r, await tab.page.inner_text("#out")

    r, out = harness.page(heal_page, go)
    assert r.success, r.message
    assert r.recovered_from is not None and r.node_id != r.recovered_from
    assert r.data["recovery"]["locator"] == 'page.get_by_test_id("save-btn")'  # which locator found it
    assert out == "clicked Store changes"


def test_a_locator_that_finds_two_elements_fails_clearly(harness, heal_page):
    async def go(tab):
        snap = await tab.snapshot()
        old = snap.find("button", "Save")[0]
        await tab.page.evaluate("rerender(2)")
        fresh = await tab.snapshot(force=True)
        with pytest.raises(UnknownNodeError) as info:
            ghost_match(Ghost.of(old, snap), fresh)
        r = await tab.click(old.node_id)
        return info.value, r, await tab.page.inner_text("#out")

    exc, r, out = harness.page(heal_page, go)
    assert exc.code == "STALE"
    assert 'page.get_by_test_id("save-btn") finds 2 elements' in exc.message
    assert 'get_by_role("button", name="Save", exact=True) finds no element' in exc.message
    assert not r.success and r.error_code == "STALE" and "finds 2 elements" in r.message
    assert out == "-", "nothing was clicked"


def test_css_selectors_on_a_snapshot(harness, server):
    async def go(tab):
        snap = await tab.snapshot()
        return {sel: [n.node_id for n in match_selector(snap, sel)] for sel in (
            "#email", "input[name='email']", 'input[type="password"]', "button#join", "body input", "body > input",
            "input")}, snap.find("textbox", "Email address")[0].node_id

    got, email = harness.page(server.url("backend_form.html"), go)
    assert got["#email"] == got["input[name='email']"] == got["body input"][:1] == [email]
    assert len(got["input[type=\"password\"]"]) == 1 and len(got["button#join"]) == 1
    assert len(got["input"]) == 2 and got["body > input"] == got["input"]
    with pytest.raises(ValueError, match="tag, #id and"):
        match_selector(None, "div.card:hover")  # type: ignore[arg-type]


@pytest.mark.parametrize("action, selector, expect", [
    ("click(999)", "button#join", "join"),                        # the ID is gone: the selector stands in
    ("click(JOIN)", "button#join", "JOIN"),                       # an ID still on the page is used as sent
    ("click(999)", "input", "matches 2 elements"),                # ambiguous: refused, said
    ("click(999)", "button[data-testid='nope']", "matches no element"),
    ("click(999)", "div.card", "cannot stand in for it"),         # a selector a snapshot cannot answer
])
def test_backend_selector_path_stands_in_for_a_stale_id(harness, server, action, selector, expect):
    async def go(tab):
        snap = await tab.snapshot()
        join = snap.find("button", "Join newsletter")[0].node_id
        fake = FakeBackend(ok(thought="join", action=action.replace("JOIN", join),
                              actionDetails={"name": "click", "elementId": 999, "selectorPath": selector}))
        try:
            step = await BackendPlanner(fake.url, timeout=5).propose(_obs(snap))
        finally:
            fake.close()
        return step, join

    step, join = harness.page(server.url("backend_form.html"), go)
    if expect in ("join", "JOIN"):
        assert step.action.name == "click" and step.action.target == join
        used = step.details.get("selectorPathUsed")
        assert (used == {"from": "999", "to": join, "selectorPath": selector}) if expect == "join" else used is None
    else:
        assert step.action.name == "fail" and expect in step.action.reason, step.action.reason
        assert "element 999, which is not on the page" in step.action.reason
