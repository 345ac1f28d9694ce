"""`vigil bench store`: what recording a run costs — the same steps on the same generated pages
with and without the session store, interleaved so both see the same machine noise.

Each run is a scripted loop of scroll steps (down, then up, …: every step really moves the page)
under the `auto` policy. Reported per page size: median step time without and with recording and
their ratio, the median time the recorder spends committing one step (the complete snapshots
serialized and compressed, the record; inside that step's time; its pictures follow on the store's
writer thread), and the store bytes one step adds: the store file's growth, measured after a
checkpoint has folded the -wal file into it and truncated it.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from engine.bench.snapshot import generate_page
from engine.local_server import serve_directory


def _recorder_class():
    from engine.store.recorder import SessionRecorder

    class TimedRecorder(SessionRecorder):
        """Times each step's commit (record, screenshots, snapshots) as the loop waits for it."""

        def __init__(self, store):
            super().__init__(store)
            self.commit_ms: list[float] = []

        def _step(self, ev) -> None:
            t = time.perf_counter()
            super()._step(ev)
            self.commit_ms.append((time.perf_counter() - t) * 1000)

    return TimedRecorder


async def _run(tab, url: str, steps: int, store=None) -> tuple[list[float], list[float]]:
    from engine.loop import AgentLoop, AutoApprove, ScriptedPlanner
    from engine.models import StepRecorded

    await tab.goto(url)
    script = [{"action": "scroll", "direction": "down" if i % 2 == 0 else "up", "amount": 400} for i in range(steps)]
    loop = AgentLoop(tab, ScriptedPlanner(script), gate=AutoApprove(), policy="auto")
    stamps: list[float] = []
    loop.bus.subscribe(lambda ev: stamps.append(time.perf_counter()) if isinstance(ev, StepRecorded) else None)
    rec = None
    if store is not None:
        rec = _recorder_class()(store)
        rec.start(loop, "bench", url, planner="script", policy="auto")
    t0 = time.perf_counter()
    result = await loop.run("bench")
    if rec is not None:
        rec.finish(result)
    bad = [s for s in result.steps if s.status != "completed"]
    if bad:
        raise RuntimeError(f"bench step failed: {bad[0].result.message if bad[0].result else bad[0].note}")
    marks = [t0, *stamps[:steps]]
    return [(b - a) * 1000 for a, b in zip(marks, marks[1:], strict=False)], (rec.commit_ms if rec else [])


def store_bytes(store) -> int:
    """The store's bytes on disk once the -wal file is folded into the main file and truncated (the -wal alone
    swings between empty and a few MB with SQLite's checkpoints, whatever a step adds)."""
    store.checkpoint()
    return sum(p.stat().st_size for p in store.path.parent.glob(store.path.name + "*"))


async def bench_store(sizes: list[int], steps: int = 6, reps: int = 3) -> dict:
    from engine import launch
    from engine.store import Store

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            Path(tmp, f"page{n}.html").write_text(generate_page(n), encoding="utf-8")
        db = Path(tmp, "bench.db")
        with serve_directory(tmp) as base, Store.open(db) as store:
            async with launch() as browser:
                tab = await browser.new_tab(f"{base}page{sizes[0]}.html")
                for n in sizes:
                    url = f"{base}page{n}.html"
                    await _run(tab, url, 2)  # warm the page, its IDs and the caches
                    plain, recorded, commits, grew = [], [], [], []
                    for _ in range(reps):
                        plain += (await _run(tab, url, steps))[0]
                        size0 = store_bytes(store)
                        took, commit = await _run(tab, url, steps, store)
                        recorded += took
                        commits += commit
                        grew.append((store_bytes(store) - size0) / steps)
                    p, r = statistics.median(plain), statistics.median(recorded)
                    rows.append({"elements": await tab.page.evaluate("document.getElementsByTagName('*').length"),
                                 "steps": len(plain), "plain_step_ms": round(p, 1), "recorded_step_ms": round(r, 1),
                                 "ratio": round(r / max(p, 1e-6), 3),
                                 "commit_ms": round(statistics.median(commits), 1),
                                 "bytes_per_step": int(statistics.median(grew))})
    return {"steps_per_run": steps, "reps": reps, "pages": rows}


def format_report(rep: dict) -> str:
    lines = [f"vigil bench store — {rep['reps']} interleaved pairs of runs × {rep['steps_per_run']} scroll steps "
             "per page", "",
             f"{'elements':>8} {'plain ms':>9} {'recorded ms':>12} {'ratio':>6} {'commit ms':>10} {'KB/step':>8}"]
    for r in rep["pages"]:
        lines.append(f"{r['elements']:>8} {r['plain_step_ms']:>9.1f} {r['recorded_step_ms']:>12.1f} {r['ratio']:>6.2f} "
                     f"{r['commit_ms']:>10.1f} {r['bytes_per_step'] / 1024:>8.1f}")
    lines += ["", "plain / recorded ms: median time of one loop step (observe, act, verify, record) without and with",
              "the session store; ratio = recorded / plain; commit ms: the recorder's synchronous write of one step",
              "(the snapshots serialized and compressed, the record; fsync'd; its pictures follow on the writer",
              "thread); KB/step: store growth per step (the file after a checkpoint truncating the -wal)."]
    return "\n".join(lines)


def add_bench_parser(bsub) -> None:
    b = bsub.add_parser("store", help="what recording a run costs per step (with vs without the session store)")
    b.add_argument("--sizes", default="1000,5000,25000", help="element counts (default 1000,5000,25000)")
    b.add_argument("--steps", type=int, default=6, help="steps per run (default 6)")
    b.add_argument("--reps", type=int, default=3, help="interleaved pairs of runs per page (default 3)")
    b.add_argument("--json", action="store_true")


def bench_command(args) -> int:
    sizes = [int(x) for x in args.sizes.split(",") if x.strip()]
    rep = asyncio.run(bench_store(sizes, args.steps, args.reps))
    print(json.dumps(rep, indent=2) if args.json else format_report(rep))
    return 0
