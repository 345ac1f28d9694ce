"""`vigil bench snapshot`: Vigil's snapshot against Playwright's aria snapshot, same pages, same run.

Pages are generated: a shop-like layout (header, navigation, filters, product cards, a data
table, a form, a footer) repeated until it holds the requested number of elements.

Per page: the full walk (forced) against `aria_snapshot`; then the re-snapshot after a one-node change
(the text of one price), taken incrementally, as a forced full walk and as Playwright's aria snapshot
again — each after its own change, in rotating order, once the page has painted the change (as a step's
snapshot comes after its settle) and once right after it. Then one big page (`--big`, 100k elements): the full
walk, peak RSS of this process and of the tab's renderer, and the semantic payload's size.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

from engine.bench.snapshot_pages import (
    BUTTON_ATTR_CHANGE,
    PARAGRAPH_CHANGE,
    PRICE_CHANGE,
    SHOP_SIBLING_CSS,
    docs_page,
    generate_form_page,
)
from engine.local_server import serve_directory
from engine.snapshot.serialize.tokens import estimate_tokens


def generate_page(n_elements: int, seed: int = 7, css_href: str | None = None) -> str:
    """A realistic page of about `n_elements` elements (deterministic for a given seed); with `css_href`
    its style sheet (`shop_css()`) is linked from there instead of inline."""
    import random

    rnd = random.Random(seed)
    parts = ['<header class="top"><div class="wrap"><a class="logo" href="/">Shop</a><nav><ul>',
             *[f'<li><a href="/c/{i}">Category {i}</a></li>' for i in range(8)],
             '</ul></nav><form role="search"><input type="search" placeholder="Search products">'
             '<button>Search</button></form></div></header><div class="layout"><aside class="filters"><h2>Filters</h2>',
             *[f'<label><input type="checkbox" name="f{i}"> Brand {i}</label>' for i in range(12)],
             '</aside><main><h1>Results</h1><div class="grid">']
    count = 60
    i = 0
    words = ["steel", "blue", "compact", "wireless", "pro", "classic", "eco", "smart", "mini", "ultra"]
    while count < n_elements - 40:
        name = f"{rnd.choice(words).title()} {rnd.choice(words)} item {i}"
        if i % 25 == 24:
            rows = "".join(f"<tr><td>SKU-{i}-{r}</td><td>{rnd.randint(1, 99)}</td>"
                           f"<td><a href='/sku/{i}/{r}'>view</a></td></tr>"
                           for r in range(5))
            parts.append(f'<section class="table-block"><h3>Stock {i}</h3><table><thead><tr><th>SKU</th><th>Qty</th>'
                         f'<th></th></tr></thead><tbody>{rows}</tbody></table></section>')
            count += 8 + 5 * 5
        else:
            parts.append(
                f'<div class="card-wrap"><article class="card"><div class="media">'
                f'<img alt="{name}" width="120" height="80"></div>'
                f'<div class="body"><h3><a href="/p/{i}">{name}</a></h3><p class="desc">A {rnd.choice(words)} product '
                f'for everyday use.</p><div class="meta"><span class="price">${rnd.randint(5, 500)}.99</span>'
                f'<span class="stars">{rnd.randint(1, 5)} stars</span></div><div class="actions">'
                f'<button class="add">Add to cart</button><span class="fav" onclick="void 0">♡</span></div></div>'
                f'</article></div>')
            count += 14
        i += 1
    parts.append('</div></main></div><footer><form><label for="nl">Newsletter</label><input id="nl" type="email">'
                 '<button>Subscribe</button></form><p>© Shop</p></footer>')
    css = f"<link rel='stylesheet' href='{css_href}'>" if css_href else f"<style>{shop_css()}</style>"
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>Bench {n_elements}</title>{css}</head>"
            f"<body>{''.join(parts)}</body></html>")


def shop_css() -> str:
    """The generated page's style sheet."""
    return ("body{font:14px sans-serif;margin:0}.top{background:#234;color:#fff;padding:8px}.top a{color:#fff}"
            "nav ul{display:flex;gap:8px;list-style:none;margin:0;padding:0}.layout{display:flex}"
            ".filters{width:200px;padding:8px}"
            ".filters label{display:block}.grid{display:grid;grid-template-columns:repeat(4,1fr);gap:8px}"
            ".card{border:1px solid #ccc;padding:6px}.fav{cursor:pointer}main{flex:1;padding:8px}")


def _facts(snap) -> list[list]:
    """Every node of a snapshot, as JSON holds it (not the frame's id: the browser makes a new one per run)."""
    rows = [[n.node_id, n.parent.node_id if n.parent is not None else None, n.tag, n.role, n.name, n.text, n.value,
             n.states or None, n.bounds, n.visible_ratio, n.flags, n.tier, n.attrs or None, n.scroll, n.occluded_by,
             n.occluded_by_desc, n.visible_bounds, n.line_rects] for n in snap.nodes()]
    return json.loads(json.dumps(rows))


def _saved_rows(results: list[dict], save: str | None, compare: str | None) -> None:
    """Write or compare the pages' full walks (`_facts`, held in each result under `_rows`, then dropped)."""
    saved = json.loads(Path(compare).read_text(encoding="utf-8")) if compare else {}
    for r in results:
        rows = r.pop("_rows")
        if compare:
            r["equal_saved"] = saved.get(r["page"]) == rows if r["page"] in saved else None
        if save:
            saved[r["page"]] = rows
    if save:
        Path(save).write_text(json.dumps(saved), encoding="utf-8")


def _p50(xs: list[float]) -> float:
    return statistics.median(xs) if xs else 0.0


EXTRAS = ("xorigin", "inputs", "docs")  # pages built like real sites (engine/bench/snapshot_pages.py)
DOCS = ("library/json.html", "library/os.html")
_PW_MS = 180_000  # Playwright's own timeout for its aria snapshot (a loaded machine takes long on big pages)
_SNAP_S = 180.0  # and for Vigil's snapshot


async def bench_snapshot(sizes: list[int], reps: int = 5, out=print, big: int = 0,
                         extras: tuple[str, ...] = EXTRAS, save_rows: str | None = None,
                         compare_rows: str | None = None) -> dict:
    """`save_rows`: write each page's full walk (node for node) to this JSON file; `compare_rows`: compare each
    page's full walk with one saved so (by another version of the walker: its output must not change)."""
    from engine import launch

    results = []
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as tmp2:
        for n in [*sizes, big] if big else sizes:
            Path(tmp, f"page{n}.html").write_text(generate_page(n), encoding="utf-8")
        Path(tmp2, "shop.css").write_text(shop_css() + SHOP_SIBLING_CSS, encoding="utf-8")
        with serve_directory(tmp) as base, serve_directory(tmp2) as other:  # two ports: two origins
            pages = [(f"{n} elements", f"{base}page{n}.html", PRICE_CHANGE) for n in sizes]
            if "xorigin" in extras:
                Path(tmp, "xorigin.html").write_text(generate_page(5000, css_href=f"{other}shop.css"), encoding="utf-8")
                pages.append(("5000, cross-origin CSS", f"{base}xorigin.html", PRICE_CHANGE))
            if "inputs" in extras:
                Path(tmp, "inputs.html").write_text(generate_form_page(5000), encoding="utf-8")
                pages.append(("5000-row form", f"{base}inputs.html", BUTTON_ATTR_CHANGE))
            if "docs" in extras:
                for name in DOCS:
                    path = docs_page(name)
                    if path is None:
                        out(f"(skipped the documentation page {name}: install Debian's python3-doc)")
                        continue
                    pages.append((f"file:// {name.rsplit('/', 1)[-1]}", path.as_uri(), PARAGRAPH_CHANGE))
            async with launch() as browser:
                for label, url, change in pages:
                    out(f"… {label}", file=sys.stderr)
                    results.append(await _page_row(browser, label, url, change, reps))
                big_row = await _big_page(browser, base, big) if big else None
    _saved_rows(results, save_rows, compare_rows)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    report = {"reps": reps, "pages": results, "python_peak_rss_mb": round(peak_mb, 1), "big": big_row}
    return report


async def _page_row(browser, label: str, url: str, change: str, reps: int) -> dict:
    """One page: full walks against Playwright's aria snapshot (interleaved), the re-snapshot after a
    one-node change, and whether an incremental snapshot equals a forced full walk node for node."""
    from engine.snapshot.stored import _row

    tab = await browser.new_tab(url)
    try:
        elements = await tab.page.evaluate("document.getElementsByTagName('*').length")
        t = time.perf_counter()
        snap = await tab.snapshot(force=True, timeout=_SNAP_S)
        sem = snap.serialize("semantic")
        cold = (time.perf_counter() - t) * 1000
        await tab.page.aria_snapshot(mode="ai", boxes=True, timeout=_PW_MS)  # warm Playwright's side too
        # Interleaved, so both see the same machine noise (these hosts are shared).
        totals: list[float] = []
        phases: dict[str, list[float]] = {}
        pw_times: list[float] = []
        pw_text = ""
        for _ in range(reps):
            t = time.perf_counter()
            snap = await tab.snapshot(force=True, timeout=_SNAP_S)
            sem = snap.serialize("semantic")
            totals.append((time.perf_counter() - t) * 1000)
            for k, v in snap.stats.timings_ms.items():
                if k != "transfer_bytes":
                    phases.setdefault(k, []).append(v)
            t = time.perf_counter()
            pw_text = await tab.page.aria_snapshot(mode="ai", boxes=True, timeout=_PW_MS)
            pw_times.append((time.perf_counter() - t) * 1000)
        # node for node: the full walk equals one where every control is hit-tested (no occlusion proven by geometry)
        rows = _facts(snap)
        await tab.page.evaluate(_OCCLUSION, [tab.key, "exact"])
        exact_equal = _facts(await tab.snapshot(force=True, timeout=_SNAP_S)) == rows
        await tab.page.evaluate(_OCCLUSION, [tab.key, None])
        resnap = await _resnapshot(tab, reps, change)
        # node for node: an incremental snapshot after one more change, then a forced walk
        await tab.page.evaluate(change, 99991)
        await tab.page.evaluate(_PAINTED)
        tab.invalidate()
        inc = await tab.snapshot(timeout=_SNAP_S)
        full = await tab.snapshot(force=True, timeout=_SNAP_S)
        equal = [_row(n) for n in inc.nodes()] == [_row(n) for n in full.nodes()]
        tree = snap.serialize("tree")
        skel = snap.serialize("skeleton")
        return {
            "page": label, "elements": elements, "nodes": len(snap.nodes()), "vigil_p50_ms": round(_p50(totals), 1),
            "vigil_cold_ms": round(cold, 1),
            "phases_p50_ms": {k: round(_p50(v), 1) for k, v in phases.items()},
            "playwright_aria_p50_ms": round(_p50(pw_times), 1),
            "ratio_vs_playwright": round(_p50(totals) / max(_p50(pw_times), 1e-6), 3),
            "tokens": {"semantic": sem.tokens, "tree": tree.tokens, "skeleton": skel.tokens,
                       "playwright_aria": estimate_tokens(pw_text)},
            "playwright_chars": len(pw_text), "semantic_nodes": sem.node_count,
            "resnapshot": resnap, "equal_to_full": equal, "equal_walk": inc.walk.describe(),
            "equal_exact_occlusion": exact_equal, "_rows": rows,
        }
    finally:
        await tab.close()


# How the walker decides occlusion (walker/occlusion.js): "exact" hit-tests every control, None as it chooses.
_OCCLUSION = "([k, how]) => { window[k].occlusion = how || undefined; }"
# Two animation frames: what the settle after an action waits for before the step's snapshot is taken.
_PAINTED = "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"
_CHANGE = PRICE_CHANGE


async def _resnapshot(tab, reps: int, change: str = PRICE_CHANGE) -> dict:
    """Re-snapshot after a one-node change (`change`, called with a counter): incremental, forced full,
    Playwright again. Measured two ways: `painted` — the clock starts once the page has painted the
    change (two animation frames), as a step's snapshot comes after its settle; `at once` — right after
    the change, so the browser's own rendering of it (style, layout, paint of the whole page: ~15-20 ms
    on 25k elements here) falls into whichever snapshot comes next. The order of the three rotates every
    round: none always follows Playwright's aria snapshot (its garbage is collected in the page during
    what comes next)."""
    times: dict[tuple[bool, str], list[float]] = {}
    dirty: list[int] = []
    modes: dict[str, int] = {}
    reasons: dict[str, int] = {}
    kinds = ["inc", "full", "pw"]
    k = 0
    for rnd in range(max(reps, 3)):
        for painted in (True, False):
            for which in kinds[rnd % 3:] + kinds[: rnd % 3]:
                k += 1
                await tab.page.evaluate(change, k)
                if painted:
                    await tab.page.evaluate(_PAINTED)
                t = time.perf_counter()
                if which == "pw":
                    await tab.page.aria_snapshot(mode="ai", boxes=True, timeout=_PW_MS)
                else:
                    if which == "inc":
                        tab.invalidate()  # as after an action: the cache is not trusted, the walker decides
                    snap = await tab.snapshot(force=which == "full", timeout=_SNAP_S)
                    snap.serialize("semantic")
                    if which == "inc":
                        modes[snap.walk.mode] = modes.get(snap.walk.mode, 0) + 1
                        dirty.append(snap.walk.dirty)
                        if snap.walk.mode != "incremental":
                            reasons[snap.walk.reason] = reasons.get(snap.walk.reason, 0) + 1
                times.setdefault((painted, which), []).append((time.perf_counter() - t) * 1000)

    def row(painted: bool) -> dict:
        p_inc, p_full, p_pw = (_p50(times[(painted, w)]) for w in kinds)
        return {"incremental_p50_ms": round(p_inc, 1), "full_p50_ms": round(p_full, 1),
                "playwright_aria_p50_ms": round(p_pw, 1),
                "incremental_vs_full": round(p_inc / max(p_full, 1e-6), 3),
                "incremental_vs_playwright": round(p_inc / max(p_pw, 1e-6), 3)}

    return {**row(True), "at_once": row(False), "modes": modes, "dirty_p50": int(_p50([float(d) for d in dirty])),
            "full_reasons": reasons}


def _renderer_peaks_mb() -> list[float]:
    """Peak RSS (VmHWM) of every Chromium renderer started under this process, largest first."""
    me = os.getpid()
    parents: dict[int, int] = {}
    info: dict[int, tuple[str, float]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            st = Path(f"/proc/{d}/status").read_text()
            cmd = Path(f"/proc/{d}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        ppid = int(next((ln.split()[1] for ln in st.splitlines() if ln.startswith("PPid:")), "0"))
        hwm = next((float(ln.split()[1]) / 1024 for ln in st.splitlines() if ln.startswith("VmHWM:")), 0.0)
        parents[int(d)] = ppid
        info[int(d)] = (cmd, hwm)

    def mine(pid: int) -> bool:
        for _ in range(12):
            pid = parents.get(pid, 0)
            if pid == me:
                return True
            if pid <= 1:
                return False
        return False

    return sorted((hwm for pid, (cmd, hwm) in info.items() if "--type=renderer" in cmd and mine(pid)), reverse=True)


async def _big_page(browser, base: str, n: int) -> dict:
    """A 100k-element page: it snapshots, within bounded memory, and its payload stays within budget."""
    tab = await browser.new_tab(f"{base}page{n}.html")
    try:
        elements = await tab.page.evaluate("document.getElementsByTagName('*').length")
        times = []
        snap = None
        for _ in range(2):
            t = time.perf_counter()
            snap = await tab.snapshot(force=True, timeout=_SNAP_S)
            sem = snap.serialize("semantic")
            times.append((time.perf_counter() - t) * 1000)
        await tab.page.evaluate(_CHANGE, 1)
        tab.invalidate()
        t = time.perf_counter()
        inc_snap = await tab.snapshot(timeout=_SNAP_S)
        inc_snap.serialize("semantic")
        inc_ms = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        try:
            pw_text = await tab.page.aria_snapshot(mode="ai", boxes=True, timeout=180_000)
            pw_ms: float | None = (time.perf_counter() - t) * 1000
        except Exception as exc:  # noqa: BLE001 - Playwright's own failure on a big page is a result here
            pw_text, pw_ms = "", None
            pw_error = str(exc).splitlines()[0][:200]
        else:
            pw_error = ""
        renderers = _renderer_peaks_mb()
        assert snap is not None
        return {"elements": elements, "nodes": len(snap.nodes()), "truncated": snap.stats.truncated,
                "full_ms": round(min(times), 1), "incremental_ms": round(inc_ms, 1),
                "incremental_mode": inc_snap.walk.mode,
                "playwright_aria_ms": round(pw_ms, 1) if pw_ms is not None else None,
                "playwright_error": pw_error, "semantic_tokens": sem.tokens,
                "playwright_aria_tokens": estimate_tokens(pw_text),
                "vigil_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                "tab_renderer_peak_rss_mb": round(renderers[0], 1) if renderers else None}
    finally:
        await tab.close()


def format_report(rep: dict) -> str:
    lines = [f"vigil bench snapshot — p50 of {rep['reps']} runs per page (complete tree + semantic payload)", ""]
    hdr = (f"{'page':<24} {'elements':>8} {'vigil ms':>9} {'cold ms':>8} {'aria ms':>8} {'aria/vigil':>10}  "
           f"{'walk':>6} {'page':>6} {'ids':>5} {'occl':>5} {'info':>5} {'build':>6} {'sem':>5}  "
           f"{'tok sem':>7} {'tok aria':>8}")
    lines.append(hdr)
    for r in rep["pages"]:
        ph = r["phases_p50_ms"]
        lines.append(
            f"{r.get('page', r['elements']):<24} {r['elements']:>8} {r['vigil_p50_ms']:>9.1f} "
            f"{r['vigil_cold_ms']:>8.1f} "
            f"{r['playwright_aria_p50_ms']:>8.1f} {1 / max(r['ratio_vs_playwright'], 1e-6):>9.2f}x  "
            f"{ph.get('walk', 0):>6.1f} {ph.get('page_walk', 0):>6.1f} {ph.get('page_ids', 0):>5.1f} "
            f"{ph.get('page_occlusion', 0):>5.1f} {ph.get('page_info', 0):>5.1f} {ph.get('build', 0):>6.1f} "
            f"{ph.get('serialize_semantic', 0):>5.1f}  {r['tokens']['semantic']:>7} "
            f"{r['tokens']['playwright_aria']:>8}")
    lines += ["",
              "vigil ms: snapshot(force=True) + serialize('semantic'); "
              "cold: first snapshot of the page (IDs assigned);",
              "aria ms: Playwright page.aria_snapshot(mode='ai', boxes=True), runs interleaved with Vigil's;",
              "aria/vigil: how many times faster Vigil's full walk is (higher is better);",
              "walk: CDP round trip incl. the in-page walker; in the page: page (the walk and its whole-tree passes), "
              "ids, occl (occlusion hit tests), info; build: Python tree; sem: semantic payload; "
              "tokens: 4 ASCII chars ≈ 1 token.",
              f"Python process peak RSS: {rep['python_peak_rss_mb']} MB", "",
              "Full walk node for node: = exact — equal to a walk that hit-tests every control (occlusion not proven "
              "by geometry); = saved — equal to the walk saved by --save-rows (another version of the walker):",
              *[f"{r.get('page', r['elements']):<24} = exact {_yes(r.get('equal_exact_occlusion'))}"
                + (f"  = saved {_yes(r['equal_saved'])}" if "equal_saved" in r else "") for r in rep["pages"]], "",
              "Re-snapshot after a one-node change (each measurement after its own change, order rotated; p50 ms);",
              "painted: the clock starts once the page has painted the change (as after a step's settle); at once: "
              "right after it, the browser's rendering of the change included; = full: an incremental snapshot "
              "equals a forced full walk node for node:",
              f"{'page':<24} {'when':>8} {'incremental':>11} {'full':>7} {'aria':>7} {'inc/full':>8} {'inc/aria':>8}"
              f"  {'= full':>6}  walks"]
    for r in rep["pages"]:
        rs = r["resnapshot"]
        for when, x in (("painted", rs), ("at once", rs.get("at_once"))):
            if not x:
                continue
            walks = ""
            if when == "painted":
                walks = f"{rs['modes']}, {rs['dirty_p50']} rows re-walked"
                if rs.get("full_reasons"):
                    walks += "; full because: " + "; ".join(f"{k} ×{v}" for k, v in rs["full_reasons"].items())
            eq = ("yes" if r.get("equal_to_full") else "NO") if when == "painted" and "equal_to_full" in r else ""
            lines.append(f"{r.get('page', r['elements']):<24} {when:>8} {x['incremental_p50_ms']:>11.1f} "
                         f"{x['full_p50_ms']:>7.1f} {x['playwright_aria_p50_ms']:>7.1f} "
                         f"{x['incremental_vs_full']:>8.2f} "
                         f"{x['incremental_vs_playwright']:>8.2f}  {eq:>6}  {walks}")
    b = rep.get("big")
    if b:
        cut = " (TRUNCATED)" if b["truncated"] else ""
        lines += ["", f"Big page: {b['elements']} elements, {b['nodes']} nodes{cut}: "
                  f"full walk {b['full_ms']:.0f} ms, after a one-node change {b['incremental_ms']:.0f} ms "
                  f"({b['incremental_mode']}), Playwright aria "
                  f"{b['playwright_aria_ms'] if b['playwright_aria_ms'] is not None else b['playwright_error']} ms; "
                  "semantic payload "
                  f"~{b['semantic_tokens']} tokens (aria ~{b['playwright_aria_tokens']}); peak RSS: Vigil process "
                  f"{b['vigil_peak_rss_mb']} MB, tab renderer {b['tab_renderer_peak_rss_mb']} MB"]
    return "\n".join(lines)


def _yes(v: bool | None) -> str:
    return "yes" if v else "NO" if v is not None else "(not saved)"


def add_bench_parser(bsub) -> None:
    bs = bsub.add_parser("snapshot", help="snapshot speed and size vs Playwright's aria snapshot")
    bs.add_argument("--sizes", default="1000,5000,25000", help="element counts (default 1000,5000,25000)")
    bs.add_argument("--reps", type=int, default=5)
    bs.add_argument("--big", type=int, default=100000, help="elements of the big page (0: skip it)")
    bs.add_argument("--pages", default=",".join(EXTRAS),
                    help="pages built like real sites, besides the generated sizes: xorigin (its style sheet from "
                         "another origin), inputs (a 5,000-row form), docs (Python's documentation from file://); "
                         "'' for none")
    bs.add_argument("--save-rows", metavar="FILE", help="write each page's full walk (node for node) to FILE")
    bs.add_argument("--compare-rows", metavar="FILE",
                    help="compare each page's full walk with the one --save-rows wrote (by another version of Vigil)")
    bs.add_argument("--json", action="store_true")


def bench_command(args) -> int:
    sizes = [int(x) for x in args.sizes.split(",") if x.strip()]
    extras = tuple(x.strip() for x in getattr(args, "pages", ",".join(EXTRAS)).split(",") if x.strip())
    unknown = [x for x in extras if x not in EXTRAS]
    if unknown:
        print(f"Unknown page(s) {', '.join(unknown)}: choose from {', '.join(EXTRAS)}.")
        return 2
    return run(sizes, args.reps, args.json, getattr(args, "big", 0), extras, getattr(args, "save_rows", None),
               getattr(args, "compare_rows", None))


def run(sizes: list[int], reps: int, as_json: bool, big: int = 0, extras: tuple[str, ...] = EXTRAS,
        save_rows: str | None = None, compare_rows: str | None = None) -> int:
    rep = asyncio.run(bench_snapshot(sizes, reps, big=big, extras=extras, save_rows=save_rows,
                                     compare_rows=compare_rows))
    print(json.dumps(rep, indent=2) if as_json else format_report(rep))
    return 0
