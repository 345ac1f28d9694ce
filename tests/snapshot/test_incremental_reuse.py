"""An incremental snapshot reuses the Python nodes of the last one (engine.snapshot.incremental.build_reusing):
only changed rows get new nodes, and the tree is still exactly the one built afresh from the same rows —
same facts, parents, depths, children in order, lookups, counts. Older snapshots keep what they held:
their node list, lookups and children lists do not change when a newer snapshot reuses their nodes.

Proved on seeded random sequences of real DOM changes (tests/fixtures/incremental_mutate.js), where
each incremental snapshot is built from the previous incremental one (a chain, not from a forced walk),
and compared with a tree built afresh from the very rows the walker sent, then with a forced full walk.
`VIGIL_INC_SEED=…` replays one seed.
"""

from __future__ import annotations

import os
import random
import time

import pytest

from engine.bench import generate_page
from engine.snapshot.capture import _build
from engine.snapshot.incremental import patch_runs
from engine.snapshot.stored import _row

from support.page_helpers import pointer_still
from support.paths import FIXTURES
from support.real_corpus import corpus_installed, open_widget, page_params, sweep_check, swept  # noqa: F401

MUTATE = (FIXTURES / "incremental_mutate.js").read_text()
LABELS = (FIXTURES / "incremental_labels.js").read_text()
LABEL_OPS = {"labeltext": 2, "wraptext": 2, "reftext": 2, "hint": 1, "retarget": 1, "reid": 1, "dupid": 1,
             "unlabel": 1, "addlabel": 1, "refattr": 1, "button": 1}
# no "iframe": a second document makes every build a fresh one (tested on its own below)
OPS = {"insert": 3, "remove": 2, "move": 2, "text": 3, "attr": 3, "class": 3, "style": 3, "hide": 1, "show": 1,
       "scroll": 1, "hover": 1, "focus": 1, "value": 1, "listener": 1, "shadow": 2}
SETTLE = """() => { for (const a of document.getAnimations()) {
  try { const it = a.effect && a.effect.getTiming().iterations; if (it === Infinity) a.pause(); else a.finish(); }
  catch (e) {} }
  return new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(() => res(true)))); }"""
CHANGE_ONE = "(k) => { const p = document.querySelectorAll('.price'); p[3].textContent = '$' + k + '.99'; }"


def _sig(snap) -> list:
    """Everything a snapshot says of each node: its facts, parent ID, depth and children IDs in order."""
    return [(*_row(n), n.depth, tuple(c.node_id for c in n.children)) for n in snap.nodes()]


def _stats(snap) -> tuple:
    s = snap.stats
    return (s.nodes, s.interactive, s.visible_interactive, s.shadow_nodes, tuple(sorted(s.tiers.items())))


def _linked(snap) -> str:
    """'' when the tree is one consistent object graph: lookups, traversal and both link directions."""
    nodes = snap.nodes()
    if list(snap.root.iter()) != list(nodes) or any(a is not b for a, b in zip(snap.root.iter(), nodes, strict=True)):
        return "the tree's traversal is not the node list"
    for n in nodes:
        if snap.get(n.node_id) is not n:
            return f"lookup of {n.node_id} gives another node"
        for c in n.children:
            if c.parent is not n:
                return f"{c.node_id}'s parent is not the node listing it as a child ({n.node_id})"
            if c.depth != n.depth + 1:
                return f"{c.node_id} has depth {c.depth} under {n.node_id} at {n.depth}"
    if len(snap.node_map) != len(nodes):
        return f"{len(snap.node_map)} IDs for {len(nodes)} nodes"
    return ""


def _fresh_sig(tab) -> tuple[list, tuple] | None:
    """The tree built afresh from the rows the cache now holds (the ones the last snapshot was built
    from), every document; None when a frame's rows were changed after the walk (cross-frame occlusion)."""
    memo = tab.snapshots._rows
    if any(memo.last.mods.values()):
        return None
    docs = [(fid, {"rows": memo._rows[fid].rows, "par": memo._rows[fid].par}, pf, oid)
            for fid, pf, oid in memo.last.shape]
    built = _build(docs)
    sig = []
    for n in built.root.iter():
        sig.append((*_row(n), n.depth, tuple(c.node_id for c in n.children)))
    c = built.counts
    return sig, (len(sig), c["interactive"], c["visible_interactive"], c["shadow"],
                 tuple(sorted({k: c[k] for k in ("structural", "non-semantic", "semantic")}.items())))


def _first_difference(a: list, b: list) -> str:
    if len(a) != len(b):
        return f"{len(a)} nodes vs {len(b)}"
    for x, y in zip(a, b, strict=True):
        if x != y:
            return f"node {y[0]}: {x} ≠ {y}"
    return ""


async def _chain(tab, seed: int, steps: int, budget_s: float, ops: dict | None = None) -> dict:
    rnd = random.Random(seed)
    done: list[str] = []
    ops = ops or OPS
    names, weights = list(ops), list(ops.values())
    if "iframe" in ops:  # a second document from the start
        done.append("0. " + await tab.page.evaluate(MUTATE, {"op": "iframe", "r": [0.1] * 8, "n": 0}))
        await tab.page.evaluate(SETTLE)
    await tab.snapshot(force=True)
    held: list[tuple] = []  # (snapshot, its signature when taken)
    made = []
    t_end = time.monotonic() + budget_s
    for n in range(steps):
        if time.monotonic() > t_end:
            break
        op = rnd.choices(names, weights)[0]
        r = [rnd.random() for _ in range(8)]
        if op == "hover":
            got = await tab.page.evaluate(MUTATE, {"op": "hoverpoint", "r": r, "n": n})
            if got:
                await tab.page.mouse.move(got[0], got[1])
            what = f"pointer over {got[2] if got else 'nothing'}"
        else:
            what = await tab.page.evaluate(LABELS if op in LABEL_OPS else MUTATE, {"op": op, "r": r, "n": n})
        done.append(f"{n + 1}. {what}")
        await tab.page.evaluate(SETTLE)
        tab.invalidate()
        snap = await tab.snapshot()
        where = f"(seed {seed}, walk: {snap.walk.describe()})\nchanges:\n  " + "\n  ".join(done)
        if snap.walk.nodes_made >= 0:
            made.append((snap.walk.nodes_made, len(snap)))
        broken = _linked(snap)
        assert not broken, f"the reused tree is not consistent: {broken} {where}"
        sig = _sig(snap)
        fresh = _fresh_sig(tab)
        if fresh is not None:
            ref, ref_stats = fresh
            diff = _first_difference(sig, ref)
            assert not diff, f"reused tree ≠ tree built afresh from the same rows: {diff} {where}"
            assert _stats(snap) == ref_stats, f"counts differ: {_stats(snap)} vs {ref_stats} {where}"
        for k, (old, old_sig) in enumerate(held):
            diff = _first_difference(_sig(old), old_sig)
            assert not diff, f"snapshot {k + 1} of the chain changed after a newer one reused it: {diff} {where}"
        held.append((snap, sig))
    full = await tab.snapshot(force=True)
    last = held[-1][0]
    diff = _first_difference(_sig(last), _sig(full))
    assert not diff, f"the chain's last snapshot ≠ a forced full walk: {diff}\nchanges:\n  " + "\n  ".join(done)
    return {"steps": len(held), "made": made}


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    from engine.local_server import serve_directory

    d = tmp_path_factory.mktemp("reuse")
    (d / "page.html").write_text(generate_page(1200, seed=11), encoding="utf-8")
    with serve_directory(str(d)) as base:
        yield base + "page.html"


def _seed(default: int) -> int:
    return int(os.environ.get("VIGIL_INC_SEED", default))


def test_one_change_makes_few_nodes_and_keeps_the_rest(harness, generated):
    async def body(tab):
        await pointer_still(tab)
        first = await tab.snapshot(force=True)
        before = _sig(first)
        await tab.page.evaluate(CHANGE_ONE, 123)
        tab.invalidate()
        second = await tab.snapshot()
        same = sum(1 for n in second.nodes() if first.node_map.get(n.node_id) is n)
        return first, before, second, same

    first, before, second, same = harness.page(generated, body)
    assert second.walk.mode == "incremental", second.walk
    n = len(second)
    assert 0 < second.walk.nodes_made < 40, f"a one-text change made {second.walk.nodes_made} of {n} nodes"
    assert same >= n - 40, f"only {same} of {n} nodes were reused"
    assert _sig(first) == before, "the older snapshot changed when the newer one reused its nodes"
    price = [x for x in second.nodes() if x.text == "$123.99"]
    assert len(price) == 1 and first.node_map[price[0].node_id].text != "$123.99"
    assert not _linked(second)


def test_chain_of_incremental_snapshots_equals_fresh_builds(harness, generated):
    async def body(tab):
        return await _chain(tab, _seed(1401), 16, 14)

    res = harness.page(generated, body, timeout=150)
    assert res["steps"] >= 6, res
    # the point: most builds reused nearly everything
    small = [m for m, n in res["made"] if m < n / 4]
    assert len(small) >= len(res["made"]) // 2 and len(small) >= 3, res["made"]


def test_chain_with_a_frame_reuses_both_documents(harness, generated):
    """A page with a same-origin iframe: changes in either document, each build reusing the last one."""
    async def body(tab):
        return await _chain(tab, _seed(1403), 14, 12, OPS | {"iframe": 4})

    res = harness.page(generated, body, timeout=150)
    assert res["steps"] >= 6, res
    small = [m for m, n in res["made"] if m < n / 4]
    assert len(small) >= 3, res["made"]


@pytest.fixture(scope="module")
def built_like_sites(tmp_path_factory):
    """A generated page whose style sheet (with sibling rules) comes from another origin, and a form page."""
    from engine.bench.snapshot import shop_css
    from engine.bench.snapshot_pages import SHOP_SIBLING_CSS, generate_form_page
    from engine.local_server import serve_directory

    pages = tmp_path_factory.mktemp("reuse-pages")
    sheets = tmp_path_factory.mktemp("reuse-sheets")
    (sheets / "shop.css").write_text(shop_css() + SHOP_SIBLING_CSS, encoding="utf-8")
    (pages / "form.html").write_text(generate_form_page(120), encoding="utf-8")
    with serve_directory(str(sheets)) as other, serve_directory(str(pages)) as base:
        (pages / "xo.html").write_text(generate_page(900, seed=12, css_href=f"{other}shop.css"), encoding="utf-8")
        yield {"xorigin": base + "xo.html", "form": base + "form.html"}


def test_chain_on_a_cross_origin_styled_page_equals_fresh_builds(harness, built_like_sites):
    async def body(tab):
        return await _chain(tab, _seed(1404), 12, 10)

    res = harness.page(built_like_sites["xorigin"], body, timeout=150)
    assert res["steps"] >= 5, res
    small = [m for m, n in res["made"] if m < n / 4]
    assert len(small) >= 3, f"too few builds reused the last tree: {res['made']}"


def test_chain_of_label_changes_on_a_form_equals_fresh_builds(harness, built_like_sites):
    async def body(tab):
        return await _chain(tab, _seed(1405), 14, 10, LABEL_OPS | {"text": 2, "insert": 1, "remove": 1})

    res = harness.page(built_like_sites["form"], body, timeout=150)
    assert res["steps"] >= 5, res
    small = [m for m, n in res["made"] if m < n / 4]
    assert len(small) >= 3, f"too few builds reused the last tree: {res['made']}"


@pytest.mark.usefixtures("corpus_installed")
def test_chain_on_a_corpus_app_equals_fresh_builds(harness, server):
    async def body(tab):
        return await _chain(tab, _seed(1402), 10, 9)

    res = open_widget(harness, server, "todomvc-react.html", body, timeout=150)
    assert res["steps"] >= 4, res


def test_a_second_document_builds_afresh_and_reuse_resumes_after(harness, generated):
    add = ("() => { const f = document.createElement('iframe'); f.id = 'reuse-f'; "
           "f.srcdoc = '<button>In frame</button>'; document.querySelector('main').prepend(f); "
           "return new Promise((res) => f.onload = () => res(true)); }")

    async def body(tab):
        await tab.snapshot(force=True)
        await tab.page.evaluate(add)
        await tab.page.evaluate(SETTLE)
        tab.invalidate()
        with_frame = await tab.snapshot()
        await tab.page.evaluate("() => document.getElementById('reuse-f').remove()")
        await tab.page.evaluate(SETTLE)
        tab.invalidate()
        after = await tab.snapshot()
        await tab.page.evaluate(CHANGE_ONE, 77)
        tab.invalidate()
        again = await tab.snapshot()
        full = await tab.snapshot(force=True)
        return with_frame, after, again, full

    with_frame, after, again, full = harness.page(generated, body)
    assert any(n.name == "In frame" for n in with_frame.nodes()), "the frame's button is in the tree"
    assert with_frame.walk.nodes_made == -1, "two documents: every node made afresh"
    assert not any(n.name == "In frame" for n in after.nodes())
    assert again.walk.mode == "incremental" and 0 <= again.walk.nodes_made < 40, again.walk
    assert not _linked(again)
    assert _sig(again) == _sig(full)


def test_patch_runs_refuses_a_diff_outside_the_held_rows():
    held = [[-1, "1", "html"], [0, "2", "body"]]
    rows = patch_runs(held, {"n": 3, "par": [-1, 0, 1], "same": [0, 0, 2], "ch": [2]}, [[1, "3", "p"]])
    assert rows[0] is held[0] and rows[2] == [1, "3", "p"]
    with pytest.raises(ValueError):  # a run past the end of the held rows
        patch_runs(held, {"n": 3, "par": [-1, 0, 1], "same": [0, 1, 2], "ch": [2]}, [[1, "3", "p"]])
    with pytest.raises(ValueError):  # a row nobody sent
        patch_runs(held, {"n": 3, "par": [-1, 0, 1], "same": [0, 0, 1], "ch": [2]}, [[1, "3", "p"]])


def test_the_page_sends_parents_in_the_compact_form(harness, generated):
    """Real diffs of real changes (insert, remove, move, text, class): the walker sends only the parents
    its runs do not imply (`pd`, not every parent), the reply stays small, and the tree built from it
    equals a forced full walk of the same page, parent for parent; a compact diff that leaves a parent
    out is refused."""
    from engine.snapshot.incremental import parents

    seen: list[tuple] = []
    pairs: list[tuple] = []

    async def body(tab):
        memo = tab.snapshots._rows
        take = memo.take

        def spy(frame_id, data):
            held = memo._rows.get(frame_id)
            before = list(held.par) if held is not None else None
            take(frame_id, data)
            if data.get("diff") is not None and before is not None:
                seen.append((data["diff"], before, data["rows"], data["_bytes"]))

        memo.take = spy
        await tab.snapshot(force=True)
        for n, op in enumerate(["insert", "remove", "move", "text", "class", "insert", "move", "remove"]):
            await tab.page.evaluate(MUTATE, {"op": op, "r": [0.31, 0.62, 0.17, 0.83, 0.45, 0.5, 0.7, 0.2], "n": n})
            tab.invalidate()
            k = len(seen)
            inc = await tab.snapshot()
            if len(seen) > k and inc.walk.mode == "incremental":
                pairs.append((inc, await tab.snapshot(force=True)))

    harness.page(generated, body)
    assert len(seen) >= 6 and len(pairs) >= 4, (len(seen), len(pairs))
    for diff, _held_par, _rows, size in seen:
        assert "par" not in diff and isinstance(diff.get("pd"), list), sorted(diff)
        assert len(diff["pd"]) < diff["n"] // 4, "the compact form lists far fewer parents than rows"
        if not diff["ch"]:  # nothing changed in this document: the reply is a few runs, not a row or parent each
            assert size < 2000, f"a reply of {size} bytes for {diff['n']} unchanged rows"
    assert any(not d["ch"] for d, *_ in seen), "the full walk after an incremental one found nothing changed"
    for inc, full in pairs:
        assert _sig(inc) == _sig(full)
    diff, held_par, rows, _ = next(x for x in seen if x[0]["same"] and x[0]["same"][2])
    with pytest.raises(ValueError):  # a run left out: its rows' parents are undefined
        parents(diff | {"same": diff["same"][3:]}, held_par, rows)


@sweep_check("row order")
async def _row_order_at_load(tab, page, snap):
    return [n.node_id for n in snap.root.iter()] == [n.node_id for n in snap.nodes()], len(snap)


@pytest.mark.usefixtures("corpus_installed")
@pytest.mark.parametrize("page", page_params())
def test_rows_come_in_tree_order_on_every_corpus_page(harness, server, page):
    """A snapshot of one document lists its nodes in row order (no walk over the tree): that is the
    tree's own pre-order on every corpus page (shadow roots, slots, text blocks, tables included)."""
    same, n = swept(harness, server, page, "row order")
    assert n > 0 and same, f"row order is not tree order on {page} ({n} nodes)"
