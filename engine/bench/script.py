"""`vigil bench script`: what one step of a scripted run costs as the script grows, and as the run goes on.

Scripts of 100, 1,000 and 10,000 cheap real steps — typing into the demo shop's "Full name" field,
scrolling the page down and back up, typing again, in turn — run through the real loop (auto-approved, pictures on,
recorded into a session store as `vigil run` records). Of each script only its first `--measure` steps
are run (a step's cost should not depend on the steps still to come); the wall time of a step runs from
the previous step's record to its own, so everything the loop does between steps is in it. Then one
script of `--long` steps is run to its end: its first 100 steps against its last 100.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from engine.assets import asset
from engine.local_server import serve_directory

SIZES = (100, 1000, 10_000)
WINDOW = 100  # the long run's first and last steps compared


def script_of(n: int) -> list[dict[str, Any]]:
    """`n` steps that each really act on the demo shop, in fours: a typing (its text changes every time, so the
    field's value changes), a scroll down, a scroll back up, a typing."""
    out: list[dict[str, Any]] = []
    for i in range(n):
        if i % 4 in (0, 3):
            out.append({"action": "type", "target": {"role": "textbox", "name": "Full name"}, "text": f"Ada {i}"})
        else:
            out.append({"action": "scroll", "direction": "down" if i % 4 == 1 else "up", "amount": 300})
    return out


async def _accept_cookies(tab) -> None:
    """The cookie banner covers the page's lower half: accepted once per tab, outside the measured runs."""
    button = tab.page.locator("#cookie-accept")
    if await button.is_visible():
        await button.click()


async def run_script(tab, url: str, n: int, steps: int, store=None) -> list[float]:
    """Run the first `steps` steps of an `n`-step script; each step's wall time in ms (from the previous
    step's record to its own; the first from the run's start)."""
    from engine.loop import AgentLoop, AutoApprove, ScriptedPlanner
    from engine.models import StepRecorded

    await tab.goto(url)
    await _accept_cookies(tab)
    planner = ScriptedPlanner(script_of(n))
    loop = AgentLoop(tab, planner, gate=AutoApprove(), policy="auto", max_steps=steps)
    rec = None
    if store is not None:
        from engine.store.recorder import SessionRecorder

        rec = SessionRecorder(store)
        rec.start(loop, f"bench script {n}", url, planner="script", policy="auto")
    stamps = [time.perf_counter()]
    loop.bus.subscribe(lambda ev: stamps.append(time.perf_counter()) if isinstance(ev, StepRecorded) else None)
    result = await loop.run(f"bench script {n}")
    if rec is not None:
        rec.finish(result)
        if rec.error:
            raise RuntimeError(f"bench script: recording failed: {rec.error}")
    done = [s for s in result.steps if s.action is None or s.action.name != "finish"]
    bad = [s for s in done if s.status != "completed"]
    if bad:
        raise RuntimeError(f"bench script: step {bad[0].index + 1} ended {bad[0].status}: "
                           f"{bad[0].result.message if bad[0].result else bad[0].note}")
    if len(done) < steps:
        raise RuntimeError(f"bench script: the run stopped after {len(done)} of {steps} steps: {result.reason}")
    return [(b - a) * 1000 for a, b in zip(stamps[:steps], stamps[1:steps + 1], strict=True)]


def _stats(ms: list[float]) -> dict[str, float]:
    xs = ms[1:] if len(ms) > 1 else ms  # the first step also pays for the run's start
    return {"median_ms": round(statistics.median(xs), 1),
            "p90_ms": round(statistics.quantiles(xs, n=10)[-1], 1) if len(xs) >= 10 else round(max(xs), 1),
            "steps": len(ms)}


async def bench_script(sizes: tuple[int, ...] = SIZES, measure: int = 200, long: int = 1000,
                       record: bool = True) -> dict:
    from engine import launch
    from engine.store import Store

    with serve_directory(asset("demo")) as demo, tempfile.TemporaryDirectory() as tmp:
        url = demo + "index.html"
        store = Store.open(Path(tmp, "script.db")) if record else None
        try:
            async with launch() as browser:
                tab = await browser.new_tab(url)
                await run_script(tab, url, 20, 20, store)  # warm-up: browser, page, store
                rows = []
                for n in sizes:
                    k = min(n, measure)
                    rows.append({"script_steps": n, **_stats(await run_script(tab, url, n, k, store))})
                long_run = None
                if long:
                    ms = await run_script(tab, url, long, long, store)
                    w = min(WINDOW, long // 2)
                    long_run = {"steps": long, "window": w, "first": _stats(ms[:w]), "last": _stats(ms[-w:])}
                await tab.close()
        finally:
            if store is not None:
                store.close()
    return {"measure": measure, "recorded": record, "sizes": rows, "long_run": long_run}


def format_report(rep: dict) -> str:
    rec = "recorded into a session store" if rep["recorded"] else "not recorded (--no-record)"
    lines = [f"vigil bench script — per-step wall time of a scripted run on the demo shop (type / scroll, "
             f"auto-approved, pictures on, {rec}); of each script its first {rep['measure']} steps", "",
             f"{'script steps':>12}{'run':>6}{'median ms':>11}{'p90 ms':>9}"]
    for r in rep["sizes"]:
        lines.append(f"{r['script_steps']:>12,}{r['steps']:>6}{r['median_ms']:>11.1f}{r['p90_ms']:>9.1f}")
    lr = rep.get("long_run")
    if lr:
        w = lr["window"]
        lines += ["", f"A {lr['steps']:,}-step script run to its end: steps 1–{w} median {lr['first']['median_ms']} ms "
                  f"(p90 {lr['first']['p90_ms']}), steps {lr['steps'] - w + 1}–{lr['steps']} median "
                  f"{lr['last']['median_ms']} ms (p90 {lr['last']['p90_ms']})"]
    return "\n".join(lines)


def _sizes(text: str) -> tuple[int, ...]:
    return tuple(int(x.replace("_", "")) for x in text.split(",") if x.strip())


def add_bench_parser(bsub) -> None:
    bs = bsub.add_parser("script", help="per-step cost of a scripted run against the script's and the run's length")
    bs.add_argument("--sizes", type=_sizes, default=SIZES, help="script lengths, comma-separated "
                    "(default 100,1000,10000)")
    bs.add_argument("--measure", type=int, default=200, help="steps run of each script (default 200)")
    bs.add_argument("--long", type=int, default=1000, help="steps of the script run to its end, its first 100 "
                    "steps against its last 100 (default 1000; 0: none)")
    bs.add_argument("--no-record", action="store_true", help="run without a session store")
    bs.add_argument("--json", action="store_true")


def bench_command(args) -> int:
    rep = asyncio.run(bench_script(args.sizes, args.measure, args.long, record=not args.no_record))
    print(json.dumps(rep, indent=2) if args.json else format_report(rep))
    return 0
