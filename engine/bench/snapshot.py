"""`vigil bench snapshot`: Vigil's snapshot against Playwright's aria snapshot, same pages, same run.

Pages are generated: a shop-like layout (header, navigation, filters, product cards, a data
table, a form, a footer) repeated until it holds the requested number of elements.
"""

from __future__ import annotations

import asyncio
import json
import resource
import statistics
import tempfile
import time
from pathlib import Path

from engine.local_server import serve_directory
from engine.snapshot.serialize.tokens import estimate_tokens


def generate_page(n_elements: int, seed: int = 7) -> str:
    """A realistic page of about `n_elements` elements (deterministic for a given seed)."""
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
    css = ("<style>body{font:14px sans-serif;margin:0}.top{background:#234;color:#fff;padding:8px}.top a{color:#fff}"
           "nav ul{display:flex;gap:8px;list-style:none;margin:0;padding:0}.layout{display:flex}"
           ".filters{width:200px;padding:8px}"
           ".filters label{display:block}.grid{display:grid;grid-template-columns:repeat(4,1fr);gap:8px}"
           ".card{border:1px solid #ccc;padding:6px}.fav{cursor:pointer}main{flex:1;padding:8px}</style>")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>Bench {n_elements}</title>{css}</head>"
            f"<body>{''.join(parts)}</body></html>")


def _p50(xs: list[float]) -> float:
    return statistics.median(xs) if xs else 0.0


async def bench_snapshot(sizes: list[int], reps: int = 5, out=print) -> dict:
    from engine import launch

    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            Path(tmp, f"page{n}.html").write_text(generate_page(n), encoding="utf-8")
        with serve_directory(tmp) as base:
            async with launch() as browser:
                for n in sizes:
                    tab = await browser.new_tab(f"{base}page{n}.html")
                    elements = await tab.page.evaluate("document.getElementsByTagName('*').length")
                    t = time.perf_counter()
                    snap = await tab.snapshot(force=True)
                    sem = snap.serialize("semantic")
                    cold = (time.perf_counter() - t) * 1000
                    await tab.page.aria_snapshot(mode="ai", boxes=True)  # warm Playwright's side too
                    # Interleaved, so both see the same machine noise (these hosts are shared).
                    totals: list[float] = []
                    phases: dict[str, list[float]] = {}
                    pw_times: list[float] = []
                    pw_text = ""
                    for _ in range(reps):
                        t = time.perf_counter()
                        snap = await tab.snapshot(force=True)
                        sem = snap.serialize("semantic")
                        totals.append((time.perf_counter() - t) * 1000)
                        for k, v in snap.stats.timings_ms.items():
                            if k != "transfer_bytes":
                                phases.setdefault(k, []).append(v)
                        t = time.perf_counter()
                        pw_text = await tab.page.aria_snapshot(mode="ai", boxes=True)
                        pw_times.append((time.perf_counter() - t) * 1000)
                    tree = snap.serialize("tree")
                    skel = snap.serialize("skeleton")
                    row = {
                        "elements": elements, "nodes": len(snap.nodes()), "vigil_p50_ms": round(_p50(totals), 1),
                        "vigil_cold_ms": round(cold, 1),
                        "phases_p50_ms": {k: round(_p50(v), 1) for k, v in phases.items()},
                        "playwright_aria_p50_ms": round(_p50(pw_times), 1),
                        "ratio_vs_playwright": round(_p50(totals) / max(_p50(pw_times), 1e-6), 3),
                        "tokens": {"semantic": sem.tokens, "tree": tree.tokens, "skeleton": skel.tokens,
                                   "playwright_aria": estimate_tokens(pw_text)},
                        "playwright_chars": len(pw_text), "semantic_nodes": sem.node_count,
                    }
                    results.append(row)
                    await tab.close()
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    report = {"reps": reps, "pages": results, "python_peak_rss_mb": round(peak_mb, 1)}
    return report


def format_report(rep: dict) -> str:
    lines = [f"vigil bench snapshot — p50 of {rep['reps']} runs per page (complete tree + semantic payload)", ""]
    hdr = (f"{'elements':>8} {'vigil ms':>9} {'cold ms':>8} {'aria ms':>8} {'ratio':>6}  {'walk':>6} {'page':>6} "
           f"{'occl':>5} {'build':>6} {'sem':>5}  {'tok sem':>7} {'tok tree':>8} {'tok skel':>8} {'tok aria':>8}")
    lines.append(hdr)
    for r in rep["pages"]:
        ph = r["phases_p50_ms"]
        lines.append(
            f"{r['elements']:>8} {r['vigil_p50_ms']:>9.1f} {r['vigil_cold_ms']:>8.1f} "
            f"{r['playwright_aria_p50_ms']:>8.1f} "
            f"{r['ratio_vs_playwright']:>6.2f}  {ph.get('walk', 0):>6.1f} {ph.get('page_walk', 0):>6.1f} "
            f"{ph.get('page_occlusion', 0):>5.1f} {ph.get('build', 0):>6.1f} {ph.get('serialize_semantic', 0):>5.1f}  "
            f"{r['tokens']['semantic']:>7} {r['tokens']['tree']:>8} {r['tokens']['skeleton']:>8} "
            f"{r['tokens']['playwright_aria']:>8}")
    lines += ["",
              "vigil ms: snapshot(force=True) + serialize('semantic'); "
              "cold: first snapshot of the page (IDs assigned);",
              "aria ms: Playwright page.aria_snapshot(mode='ai', boxes=True), runs interleaved with Vigil's;",
              "ratio = vigil p50 / aria p50 (lower is better);",
              "walk: CDP round trip incl. in-page walk; page: in-page walk alone; tokens: 4 ASCII chars ≈ 1 token.",
              f"Python process peak RSS: {rep['python_peak_rss_mb']} MB"]
    return "\n".join(lines)


def add_bench_parser(bsub) -> None:
    bs = bsub.add_parser("snapshot", help="snapshot speed and size vs Playwright's aria snapshot")
    bs.add_argument("--sizes", default="1000,5000,25000", help="element counts (default 1000,5000,25000)")
    bs.add_argument("--reps", type=int, default=5)
    bs.add_argument("--json", action="store_true")


def bench_command(args) -> int:
    sizes = [int(x) for x in args.sizes.split(",") if x.strip()]
    return run(sizes, args.reps, args.json)


def run(sizes: list[int], reps: int, as_json: bool) -> int:
    rep = asyncio.run(bench_snapshot(sizes, reps))
    print(json.dumps(rep, indent=2) if as_json else format_report(rep))
    return 0
