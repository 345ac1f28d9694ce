"""Incremental snapshots return the tree a full walk returns — proved on random sequences of real DOM
changes (insert, remove, move, text, attribute, class, style, hidden/shown, scroll, resize, hover,
focus, form state, listeners, shadow content, iframe content) on corpus pages and a generated page.

After each change the incremental snapshot is compared with a forced full walk node for node (every
field, parent included). The sequence is drawn from a seed: a failure prints the seed and every
change made so far; `VIGIL_INC_SEED=…` replays one seed, `VIGIL_INC_STEPS=…` makes runs longer.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import pytest

from engine.bench import generate_page
from engine.snapshot.stored import COLUMNS, _row

from real_corpus import corpus_installed, open_widget  # noqa: F401

MUTATE = (Path(__file__).parent / "fixtures" / "incremental_mutate.js").read_text()
OPS = {"insert": 3, "remove": 2, "move": 2, "text": 3, "attr": 3, "class": 3, "style": 3, "hide": 1, "show": 1,
       "scroll": 1, "resize": 0.5, "hover": 1, "focus": 1, "value": 1, "listener": 1, "shadow": 2, "iframe": 2}
STEPS = int(os.environ.get("VIGIL_INC_STEPS", "12"))
BUDGET_S = float(os.environ.get("VIGIL_INC_BUDGET_S", "9"))   # per page: a test, not a soak
# Let finite animations and transitions end, and pause endless ones: both walks then see one state.
# Then two frames pass, as after any change a settle waits for (focus moves off a hidden field then).
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


async def _run(tab, seed: int, steps: int, budget_s: float) -> dict:
    rnd = random.Random(seed)
    done: list[str] = []
    modes = {"incremental": 0, "full": 0}
    await tab.snapshot(force=True)
    t_end = time.monotonic() + budget_s
    names, weights = list(OPS), list(OPS.values())
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
            what = await tab.page.evaluate(MUTATE, {"op": op, "r": r, "n": n})
        done.append(f"{n + 1}. {what}")
        await tab.page.evaluate(SETTLE_ANIMATIONS)
        tab.invalidate()  # past the version check: this compares walks, not the cache
        inc = await tab.snapshot()
        full = await tab.snapshot(force=True)
        modes[inc.walk.mode] = modes.get(inc.walk.mode, 0) + 1
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
