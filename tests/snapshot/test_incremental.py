"""Incremental snapshots return the tree a full walk returns — proved on random sequences of real DOM
changes (insert, remove, move, text, attribute, class, style, hidden/shown, scroll, resize, hover,
focus, form state, listeners, shadow content, iframe content) on corpus pages and a generated page.

After each change the incremental snapshot is compared with a forced full walk node for node (every
field, parent included). The sequence is drawn from a seed: a failure prints the seed and every
change made so far; `VIGIL_INC_SEED=…` replays one seed, `VIGIL_INC_STEPS=…` makes runs longer.
"""

from __future__ import annotations

import json
import os
import random
import time

import pytest

from engine.bench import generate_page
from engine.snapshot.stored import COLUMNS, _row

from support.page_helpers import pointer_still
from support.paths import FIXTURES
from support.real_corpus import corpus_installed, open_widget  # noqa: F401

MUTATE = (FIXTURES / "incremental_mutate.js").read_text()
LABELS = (FIXTURES / "incremental_labels.js").read_text()
LABEL_OPS = {"labeltext": 2, "wraptext": 2, "reftext": 2, "hint": 1, "retarget": 1.5, "reid": 1.5, "dupid": 1,
             "unlabel": 1.5, "addlabel": 1, "refattr": 1, "button": 1}
OPS = {"insert": 3, "remove": 2, "move": 2, "text": 3, "attr": 3, "class": 3, "style": 3, "hide": 1, "show": 1,
       "scroll": 1, "resize": 0.5, "hover": 1, "focus": 1, "value": 1, "listener": 1, "shadow": 2, "iframe": 2}
STEPS = int(os.environ.get("VIGIL_INC_STEPS", "12"))
BUDGET_S = float(os.environ.get("VIGIL_INC_BUDGET_S", "9"))   # per page: a test, not a soak
# Let finite animations and transitions end, and pause endless ones: both walks then see one state.
# Then two frames pass, as after any change a settle waits for (focus moves off a hidden field then).
POINTER_MOVED = "the pointer entered or left the page"  # the walk's reason (engine/snapshot/js/walker/plan.js)
SETTLE_ANIMATIONS = """() => { for (const a of document.getAnimations()) {
  try { const it = a.effect && a.effect.getTiming().iterations; if (it === Infinity) a.pause(); else a.finish(); }
  catch (e) {} }
  return new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(() => res(true)))); }"""


def _rows(snap) -> list[list]:
    return [_row(n) for n in snap.nodes()]


def _difference(inc, full) -> str:
    a, b = _rows(inc), _rows(full)
    if len(a) != len(b):
        ids_a, ids_b = {r[0] for r in a}, {r[0] for r in b}
        return (f"{len(a)} nodes incremental vs {len(b)} full; only incremental: {sorted(ids_a - ids_b)[:8]}, "
                f"only full: {sorted(ids_b - ids_a)[:8]}; first differing position: "
                f"{next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))}")
    out = []
    for x, y in zip(a, b, strict=True):
        if x != y:
            fields = [f"{c}: {u!r} ≠ {v!r}" for c, u, v in zip(COLUMNS, x, y, strict=True) if u != v]
            out.append(f"node {y[0]} <{y[2]}> " + "; ".join(fields))
        if len(out) >= 6:
            break
    return "\n  ".join(out)


async def _run(tab, seed: int, steps: int, budget_s: float, ops: dict | None = None,
               reasons: list | None = None) -> dict:
    """`steps` changes drawn from `ops` (the ops of incremental_mutate.js, or of incremental_labels.js),
    each followed by an incremental snapshot and a forced full walk that must be equal; the count of
    each kind of walk (and in `reasons` why each full one was); "pointer": full walks the hover's move caused."""
    rnd = random.Random(seed)
    done: list[str] = []
    modes = {"incremental": 0, "full": 0}
    await tab.snapshot(force=True)
    t_end = time.monotonic() + budget_s
    ops = ops or OPS
    names, weights = list(ops), list(ops.values())
    for n in range(steps):
        if time.monotonic() > t_end:
            break
        op = rnd.choices(names, weights)[0]
        r = [rnd.random() for _ in range(8)]
        if op == "resize":
            w, h = rnd.choice([(1280, 800), (1100, 700), (900, 760), (1280, 640)])
            await tab.set_viewport(w, h)
            what = f"resize to {w}×{h}"
        elif op == "hover":
            got = await tab.page.evaluate(MUTATE, {"op": "hoverpoint", "r": r, "n": n})
            if got:
                await tab.page.mouse.move(got[0], got[1])
                what = f"pointer over {got[2]}"
            else:
                what = "hover: nothing in view"
        else:
            what = await tab.page.evaluate(LABELS if op in LABEL_OPS else MUTATE, {"op": op, "r": r, "n": n})
        done.append(f"{n + 1}. {what}")
        await tab.page.evaluate(SETTLE_ANIMATIONS)
        tab.invalidate()  # past the version check: this compares walks, not the cache
        inc = await tab.snapshot()
        full = await tab.snapshot(force=True)
        # a full walk because the browser moved the hover after a layout change (its own timer, the pointer still)
        # is counted apart: whether it lands before this snapshot or the next is timing, not what the op did
        kind = "pointer" if inc.walk.mode == "full" and inc.walk.reason == POINTER_MOVED else inc.walk.mode
        modes[kind] = modes.get(kind, 0) + 1
        if reasons is not None and inc.walk.mode == "full":
            reasons.append(inc.walk.reason)
        assert full.walk.mode == "full"
        diff = _difference(inc, full)
        assert not diff, (f"incremental snapshot ≠ full walk (seed {seed}, walk: {inc.walk.describe()})\n"
                          f"changes:\n  " + "\n  ".join(done) + f"\ndifferences:\n  {diff}")
    return modes


def _seed(default: int) -> int:
    return int(os.environ.get("VIGIL_INC_SEED", default))


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    from engine.local_server import serve_directory

    d = tmp_path_factory.mktemp("inc")
    (d / "page.html").write_text(generate_page(1500, seed=3), encoding="utf-8")
    with serve_directory(str(d)) as base:
        yield base + "page.html"


def test_generated_page_incremental_equals_full(harness, generated):
    async def body(tab):
        return await _run(tab, _seed(1301), STEPS + 6, BUDGET_S + 4)

    modes = harness.page(generated, body, timeout=120)
    # the point of the test: most of these changes are taken incrementally, not by falling back
    assert modes["incremental"] >= modes["full"], f"too few incremental walks to prove anything: {modes}"


@pytest.mark.usefixtures("corpus_installed")
@pytest.mark.parametrize("page,seed", [("shoelace.html", 1302), ("todomvc-react.html", 1303), ("grid.html", 1304),
                                       ("pydoc/library/json.html", 1305)])
def test_corpus_page_incremental_equals_full(harness, server, page, seed):
    async def body(tab):
        return await _run(tab, _seed(seed), STEPS, BUDGET_S)

    modes = open_widget(harness, server, page, body, timeout=150)
    assert sum(modes.values()) >= 3, f"the run made too few changes to prove anything: {modes}"


# Style sheets from another origin (as from a CDN): the page cannot read their rules, the browser reads
# them for Vigil (engine/snapshot/stylesheets.py). One sheet really styles by sibling combinators (what
# the random changes toggle: classes, title, aria-expanded, :empty), one by :has().
SIB_CSS = (".fav ~ * { cursor: pointer } .price + .stars { visibility: hidden } [title] + * { display: none } "
           "[aria-expanded=\"true\"] ~ * { opacity: 0 } .card-wrap:nth-child(2n+1) { color: rgb(0, 0, 200) } "
           "h3:empty + p { display: none } .desc.add ~ .meta { font-size: 0 }")
HAS_CSS = SIB_CSS + " .card:has(.vigil-x, [title]) { display: none } .meta:has(> .fav) { cursor: pointer }"


@pytest.fixture(scope="module")
def cross_origin(tmp_path_factory):
    """{name: address} of pages whose only style sheet comes from another origin (another port)."""
    from engine.bench.snapshot import shop_css
    from engine.local_server import serve_directory

    pages = tmp_path_factory.mktemp("xo-pages")
    sheets = tmp_path_factory.mktemp("xo-sheets")
    (sheets / "sib.css").write_text(shop_css() + SIB_CSS, encoding="utf-8")
    (sheets / "has.css").write_text(shop_css() + HAS_CSS, encoding="utf-8")
    with serve_directory(str(sheets)) as other, serve_directory(str(pages)) as base:
        for name in ("sib", "has"):
            (pages / f"{name}.html").write_text(generate_page(900, seed=4, css_href=f"{other}{name}.css"),
                                                encoding="utf-8")
        yield {name: f"{base}{name}.html" for name in ("sib", "has")}


def test_cross_origin_sibling_sheet_incremental_equals_full(harness, cross_origin):
    reasons: list[str] = []

    async def body(tab):
        return await _run(tab, _seed(1310), STEPS, BUDGET_S, reasons=reasons)

    modes = harness.page(cross_origin["sib"], body, timeout=120)
    assert modes["incremental"] >= modes["full"], f"too few incremental walks: {modes}, full because {reasons}"
    assert not any("cross-origin" in r or ":has()" in r for r in reasons), reasons


def test_cross_origin_has_sheet_walks_full_and_says_why(harness, cross_origin):
    reasons: list[str] = []

    async def body(tab):
        state = f"window[{json.dumps(tab.target.key)}].inc.css"
        await tab.snapshot(force=True)
        await tab.page.evaluate(MUTATE, {"op": "text", "r": [0.3] * 8, "n": 0})
        tab.invalidate()
        await tab.snapshot()
        css = await tab.page.evaluate(f"() => {{ const c = {state}; return [c.has, c.sib, c.unk]; }}")
        return css, await _run(tab, _seed(1311), 8, 6, reasons=reasons)

    (has, sib, unknown), modes = harness.page(cross_origin["has"], body, timeout=120)
    assert has and sib and not unknown, "the browser read the sheet: :has() and siblings, nothing unknown"
    assert "a style sheet uses :has()" in reasons, f"{modes}: full because {reasons}"
    assert not any("cross-origin" in r for r in reasons), reasons


def test_file_page_incremental_equals_full(harness):
    """A file:// page (Python's documentation as Debian ships it): all its sheets count as another origin."""
    from engine.bench.snapshot_pages import docs_page

    path = docs_page("library/json.html")
    assert path is not None, "Debian's python3-doc is not installed (bash scripts/setup.sh installs it)"
    reasons: list[str] = []

    async def body(tab):
        return await _run(tab, _seed(1312), 8, 6, reasons=reasons)

    modes = harness.page(path.as_uri(), body, timeout=120)
    assert modes["incremental"] >= modes["full"], f"too few incremental walks: {modes}, full because {reasons}"
    assert not any("cross-origin" in r for r in reasons), reasons


@pytest.fixture(scope="module")
def form_page(tmp_path_factory):
    from engine.bench.snapshot_pages import generate_form_page
    from engine.local_server import serve_directory

    d = tmp_path_factory.mktemp("form")
    (d / "form.html").write_text(generate_form_page(150), encoding="utf-8")
    with serve_directory(str(d)) as base:
        yield base + "form.html"


def test_form_label_changes_incremental_equals_full(harness, form_page):
    """Labels, label[for] targets, wrapping labels, aria-labelledby targets and ids changed at random (with
    the usual changes among them): each incremental snapshot equals a forced full walk."""
    ops = LABEL_OPS | {k: OPS[k] for k in ("insert", "remove", "move", "text", "attr", "value", "focus")}

    async def body(tab):
        return await _run(tab, _seed(1313), STEPS + 8, BUDGET_S + 4, ops=ops)

    modes = harness.page(form_page, body, timeout=150)
    assert modes["incremental"] >= modes["full"], f"too few incremental walks to prove anything: {modes}"


def test_form_one_attribute_rewalks_only_its_row(harness, form_page):
    """One data- attribute on one button re-walks that button and its ancestors, not every form control."""
    async def body(tab):
        await pointer_still(tab)
        await tab.snapshot(force=True)
        out = []
        for k in range(2):
            await tab.page.evaluate(LABELS, {"op": "button", "r": [0.5] * 8, "n": k})
            tab.invalidate()
            out.append((await tab.snapshot()).walk)
        return out

    for walk in harness.page(form_page, body):
        assert walk.mode == "incremental" and walk.dirty <= 8, walk.describe()


SIBLING_CHANGES = [
    "document.querySelectorAll('.price')[3].classList.add('fav')",              # .fav ~ *: pointer after it
    "document.querySelectorAll('.card h3')[2].setAttribute('title', 'T')",      # [title] + *: the next one hidden
    "document.querySelectorAll('.card h3')[4].setAttribute('aria-expanded', 'true')",  # … ~ *: transparent
    "document.querySelectorAll('.card h3')[5].firstElementChild.remove()",      # h3:empty + p: hidden
    "document.querySelectorAll('.desc')[6].classList.add('add')",               # .desc.add ~ .meta: font-size 0
    "document.querySelectorAll('.price')[3].classList.remove('fav')",
    "document.querySelectorAll('.card h3')[2].removeAttribute('title')",
]


def test_cross_origin_sibling_rules_restyle_siblings(harness, cross_origin):
    """Each change restyles the following siblings through a rule of the cross-origin sheet: the
    incremental walk (it stays one) re-walks them and equals a forced full walk."""
    async def body(tab):
        await pointer_still(tab)
        await tab.snapshot(force=True)
        out = []
        for js in SIBLING_CHANGES:
            await tab.page.evaluate(f"() => {{ {js}; }}")
            await tab.page.evaluate(SETTLE_ANIMATIONS)
            tab.invalidate()
            inc = await tab.snapshot()
            full = await tab.snapshot(force=True)
            out.append((js, inc.walk, _difference(inc, full)))
        return out

    for js, walk, diff in harness.page(cross_origin["sib"], body, timeout=90):
        assert walk.mode == "incremental", f"{js}: {walk.describe()}"
        assert not diff, f"{js}: incremental ≠ full walk\n  {diff}"


LABEL_CHANGES = [
    "document.getElementById('q5').setAttribute('aria-labelledby', 'm7')",     # a new reference …
    "document.getElementById('m7').textContent = 'Renamed seven'",              # … whose target then changes
    "const i = document.createElement('input'); i.setAttribute('aria-labelledby', 'm10'); "
    "document.querySelectorAll('.row')[20].appendChild(i)",                      # a new referrer …
    "document.getElementById('m10').firstChild.data = 'Ten, renamed'",          # … and its target's text
    "document.querySelector('label[for=q3]').setAttribute('for', 'q6')",        # q3 loses its label, q6 gains one
    "document.querySelector('label[for=q9]').remove()",                         # q9 loses its label
    "document.getElementById('m11').id = 'm11-old'",                            # q11's target goes away
    "const s = document.createElement('span'); s.id = 'm14'; s.textContent = 'Twin'; "
    "document.querySelectorAll('.row')[14].before(s)",                            # an earlier element takes m14
    "document.getElementById('hint').textContent = 'Per pallet.'",              # every labelledby input's name
    "document.querySelectorAll('label:not([for])')[2].firstChild.data = 'Remark '",  # a wrapping label's words
]


def test_form_directed_label_changes_equal_full(harness, form_page):
    """Each change moves a name between controls through labels, ids and aria-labelledby: the incremental
    walk (it stays one) re-walks exactly what reads it and equals a forced full walk."""
    async def body(tab):
        await pointer_still(tab)
        await tab.snapshot(force=True)
        out = []
        for js in LABEL_CHANGES:
            await tab.page.evaluate(f"() => {{ {js}; }}")
            tab.invalidate()
            inc = await tab.snapshot()
            full = await tab.snapshot(force=True)
            out.append((js, inc.walk, _difference(inc, full)))
        return out

    for js, walk, diff in harness.page(form_page, body, timeout=90):
        assert walk.mode == "incremental", f"{js}: {walk.describe()}"
        assert not diff, f"{js}: incremental ≠ full walk\n  {diff}"
