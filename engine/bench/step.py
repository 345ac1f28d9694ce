"""`vigil bench step`: what one supervised step costs, phase by phase, against plain Playwright.

The same actions — click, type, toggle, select, navigate — on the bundled demo shop and two corpus apps
(TodoMVC on React, pretty-checkbox switches), run as auto-approved steps of Vigil's loop (observe,
propose, approve, act, settle, verify, screenshots: `StepRecord.timings_ms`) and as plain Playwright
(`locator.click()` / `fill()` / `select_option()` / `goto()` and the same expectation awaited with
`expect`), in the same run on the same pages. Medians per kind of step.

`--steps N` (e.g. 1000) adds a long run on the demo shop, recorded into a session store: the process's
memory (RSS) after warm-up and at the end, and the store's growth per step.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
import urllib.parse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.assets import asset
from engine.bench.real import CORPUS_DIR
from engine.local_server import serve_directory

PHASES = ("observe", "model", "effect", "approval", "act", "settle", "verify", "screenshots")


@dataclass
class Step:
    kind: str                                     # click, type, toggle, select, navigate
    script: Callable[[int], dict]                 # the scripted planner's step for round i
    playwright: Callable[[Any, int, str], Awaitable[None]]  # the same with plain Playwright: (page, i, base)


def _expect():
    from playwright.async_api import expect

    return expect


async def _pw_type(page, i, base):
    loc = page.locator("#full-name")
    await loc.fill(f"Ada {i}")
    await _expect()(loc).to_have_value(f"Ada {i}")


_clicks: dict[tuple[int, str], int] = {}  # per page and control: clicks so far (toggles, "Add to cart")


def _count(page, what: str) -> int:
    n = _clicks[(id(page), what)] = _clicks.get((id(page), what), 0) + 1
    return n


async def _toggled(page, loc, what: str, force: bool = False) -> None:
    if (id(page), what) not in _clicks:  # its state at the start (the warm-up round pays for the read)
        _clicks[(id(page), what)] = 1 if await loc.is_checked() else 0
    on = _count(page, what) % 2 == 1
    await loc.click(force=force)
    await (_expect()(loc).to_be_checked() if on else _expect()(loc).not_to_be_checked())


async def _pw_toggle(page, i, base):
    await _toggled(page, page.locator("input[name=gift_wrap]"), "gift")


COUNTRIES = [("France", "FR"), ("Spain", "ES"), ("United States", "US"), ("Germany", "DE")]


async def _pw_select(page, i, base):
    loc = page.locator("#country")
    await loc.select_option(label=COUNTRIES[i % 4][0])
    await _expect()(loc).to_have_value(COUNTRIES[i % 4][1])


async def _pw_add(page, i, base):
    n = _count(page, "cart")
    await page.locator(".add-to-cart").first.click()
    await _expect()(page.locator("#cart-count")).to_have_text(str(n))


async def _pw_navigate(page, i, base):
    await page.goto(base + ("thanks.html" if i % 2 == 0 else "index.html"))
    await _expect()(page.locator("h1" if i % 2 == 0 else "#signup-title")).to_be_visible()


DEMO = [
    Step("type", lambda i: {"action": "type", "target": {"role": "textbox", "name": "Full name"}, "text": f"Ada {i}",
                            "expect": {"type": "value_changes"}}, _pw_type),
    Step("toggle", lambda i: {"action": "click", "target": {"role": "checkbox", "name": "Gift wrap"},
                              "expect": {"type": "state_changes"}}, _pw_toggle),
    Step("select", lambda i: {"action": "select", "target": {"role": "combobox", "name": "Country"},
                              "option": COUNTRIES[i % 4][0], "expect": {"type": "value_changes"}}, _pw_select),
    Step("click", lambda i: {"action": "click", "target": {"role": "button", "name": "Add to cart", "nth": 0},
                             "expect": {"type": "any_change"}}, _pw_add),
]
NAVIGATE = Step("navigate", lambda i: {"action": "navigate", "url": "thanks.html" if i % 2 == 0 else "index.html",
                                       "expect": {"type": "navigation"}}, _pw_navigate)


async def _pw_todo_type(page, i, base):
    loc = page.locator(".new-todo")
    await loc.fill(f"Task {i}")
    await loc.press("Enter")
    await _expect()(page.locator(".todo-list li").last).to_contain_text(f"Task {i}")


async def _pw_todo_toggle(page, i, base):
    await _toggled(page, page.locator(".todo-list li .toggle").first, "todo")


TODO = [
    Step("type", lambda i: {"action": "type", "target": {"role": "textbox", "name": "What needs to be done?"},
                            "text": f"Task {i}", "submit": True,
                            "expect": {"type": "element_appears", "text": f"Task {i}"}}, _pw_todo_type),
    Step("toggle", lambda i: {"action": "click", "target": {"role": "checkbox", "name": "Task 1", "exact": True},
                              "expect": {"type": "state_changes"}}, _pw_todo_toggle),
]


async def _pw_switch(page, i, base):
    # a styled switch: its input is drawn over by the library's picture of a switch
    await _toggled(page, page.locator("#wifi"), "wifi", force=True)


SWITCHES = [
    Step("toggle", lambda i: {"action": "click", "target": {"role": "checkbox", "name": "Wi-Fi"},
                              "expect": {"type": "state_changes"}}, _pw_switch),
]


def _rss_mb() -> float:
    for ln in Path("/proc/self/status").read_text().splitlines():
        if ln.startswith("VmRSS:"):
            return float(ln.split()[1]) / 1024
    return 0.0


def _heap_mb() -> float | None:
    """Memory the process's allocator has handed out and not had back (glibc mallinfo2: in-use small
    blocks plus mmapped ones), after a collection: unlike RSS it does not swing with the memory the
    allocator keeps free for later, so it is what "flat after warm-up" is judged by. None off glibc."""
    import ctypes
    import gc

    gc.collect()
    try:
        fn = ctypes.CDLL("libc.so.6").mallinfo2
    except (OSError, AttributeError):
        return None

    class _Info(ctypes.Structure):
        _fields_ = [(f, ctypes.c_size_t) for f in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                   "fsmblks", "uordblks", "fordblks", "keepcost")]

    fn.restype = _Info
    info = fn()
    return (info.uordblks + info.hblkhd) / (1024 * 1024)


def _p50(xs: list[float]) -> float:
    return round(statistics.median(xs), 1) if xs else 0.0


async def _vigil(tab, url: str, steps: list[Step], rounds: int, start: int = 0, recorder=None,
                 walls: list[float] | None = None, lags: list[float] | None = None,
                 late: list[float] | None = None) -> list:
    """Run the steps `rounds` times as one auto-approved scripted run; the StepRecords, in order. With
    `walls`, each step's wall time is appended: from the previous step's result (its ActionDone; the run's
    start for the first) to its own — everything the loop does on a step's critical path, the writes of the
    previous step's record included. (A step's after picture may still be being taken at its result: the record
    is published without it and the picture follows.) With `lags`, how long after each step's result its record
    was published (its writes done); with `late`, how long after it its after picture followed (0: it was in the
    record)."""
    from engine.loop import AgentLoop, AutoApprove, ScriptedPlanner
    from engine.models import ActionDone, StepPictureTaken, StepRecorded

    script = [s.script(start + r) for r in range(rounds) for s in steps]
    for st in script:  # addresses relative to the page's
        if "url" in st:
            st["url"] = urllib.parse.urljoin(url, st["url"])
    if tab.url.split("#")[0] != url:
        await tab.goto(url)
    loop = AgentLoop(tab, ScriptedPlanner(script), gate=AutoApprove(), policy="auto", max_steps=len(script) + 2)
    if recorder is not None:
        recorder.start(loop, "bench step", url, planner="script", policy="auto")
    stamps: list[float] = [time.perf_counter()]
    done: dict[int, float] = {}
    published: dict[int, float] = {}
    pictured: dict[int, float] = {}

    def seen(ev) -> None:
        if isinstance(ev, ActionDone):
            stamps.append(time.perf_counter())
            done[ev.step_index] = stamps[-1]
        elif isinstance(ev, StepRecorded):
            published[ev.record.index] = time.perf_counter()
        elif isinstance(ev, StepPictureTaken):
            pictured[ev.step_index] = time.perf_counter()
    loop.bus.subscribe(seen)
    result = await loop.run("bench step")
    if recorder is not None:
        recorder.finish(result)
    recs = [s for s in result.steps if s.action is None or s.action.name != "finish"]
    bad = [s for s in recs if s.status != "completed"]
    if bad:
        raise RuntimeError(f"bench step failed on {url}: "
                           f"{bad[0].result.message if bad[0].result else bad[0].note}")
    if len(recs) < len(script):
        raise RuntimeError(f"bench run on {url} stopped after {len(recs)} of {len(script)} steps")
    if lags is not None:
        lags.extend((published[i] - done[i]) * 1000 if i in done and i in published else 0.0
                    for i in range(len(script)))
    if late is not None:
        late.extend((pictured[i] - done[i]) * 1000 if i in done and i in pictured else 0.0
                    for i in range(len(script)))
    if walls is not None:
        walls.extend((b - a) * 1000 for a, b in zip(stamps[: len(script)], stamps[1: len(script) + 1], strict=True))
    return recs[: len(script)]


async def _playwright(page, base: str, steps: list[Step], rounds: int, start: int = 0) -> list[tuple[str, float]]:
    out = []
    for r in range(rounds):
        for s in steps:
            t = time.perf_counter()
            await s.playwright(page, start + r, base)
            out.append((s.kind, (time.perf_counter() - t) * 1000))
    return out


def _empty() -> dict[str, list[float]]:
    return {"total": [], **{p: [] for p in PHASES}, "dispatch": [], "pw": [], "wall": [], "picture_bg": [],
            "late": [], "inserted": []}


def _per_kind(steps: list[Step], recs: list, pw: list[tuple[str, float]], walls: list[float],
              lags: list[float], late: list[float]) -> dict:
    kinds: dict[str, dict] = {}
    for i, rec in enumerate(recs):
        k = steps[i % len(steps)].kind
        d = kinds.setdefault(k, _empty())
        d["wall"].append(walls[i])
        tm = rec.timings_ms
        d["total"].append(tm.get("total", 0.0))
        for p in PHASES:
            d[p].append(tm.get(p, 0.0))
        rt = rec.result.timings_ms if rec.result else {}
        d["dispatch"].append(rt.get("locate", 0.0))
        d["picture_bg"].append(lags[i] if i < len(lags) else 0.0)
        d["late"].append(late[i] if i < len(late) else 0.0)  # the after picture, following the step's result
        typing = ((rec.result.data or {}).get("typing") or {}) if rec.result else {}
        if typing:
            d["inserted"].append(1.0 if typing.get("mode") == "insertion" else 0.0)
    for k, ms in pw:
        kinds.setdefault(k, _empty())["pw"].append(ms)
    out = {}
    for k, d in kinds.items():
        # other: the step's wall time that no phase accounts for (events, the record and its writes, the
        # loop's own work; the writes after the record are in it since `wall` runs to the next record)
        d["other"] = [w - sum(d[p][j] for p in PHASES) for j, w in enumerate(d["wall"])]
        row: dict[str, Any] = {p: _p50(d[p]) for p in ("total", "wall", *PHASES, "dispatch", "other", "picture_bg",
                                                  "late")}
        row["late_share"] = round(sum(1 for x in d["late"] if x > 0) / max(1, len(d["late"])), 2)
        if d["inserted"]:  # how the text went in: one insertion (no key handler on the field) or keystrokes
            row["typed_by"] = "insertion" if statistics.mean(d["inserted"]) >= 0.5 else "keystrokes"
        row["playwright_ms"] = _p50(d["pw"])
        row["ratio"] = round(row["wall"] / max(row["playwright_ms"], 1e-6), 2)
        row["n"] = len(d["total"])
        out[k] = row
    return out


async def bench_step(rounds: int = 5, long_steps: int = 0, record: bool = True) -> dict:
    from engine import launch
    from engine.store import Store
    from engine.store.recorder import SessionRecorder

    pages: list[dict[str, Any]] = []
    with serve_directory(asset("demo")) as demo, serve_directory(CORPUS_DIR) as corpus, \
            tempfile.TemporaryDirectory() as tmp, Store.open(Path(tmp, "step.db")) as store:
        suites = [("demo shop", demo + "index.html", demo, DEMO),
                  ("demo shop", demo + "index.html", demo, [NAVIGATE]),
                  ("todomvc-react", corpus + "todomvc-react.html", corpus, TODO),
                  ("pretty-checkbox switches", corpus + "switches.html", corpus, SWITCHES)]
        async with launch() as browser:
            for name, url, base, steps in suites:
                tab = await browser.new_tab(url)
                await tab.page.wait_for_timeout(300)
                if name == "demo shop":  # the cookie banner first (it covers the page), once
                    await _vigil(tab, url, [Step("click", lambda i: {"action": "click", "target": {
                        "role": "button", "name": "Accept"}}, _pw_add)], 1)
                await _vigil(tab, url, steps, 1, start=1)  # warm-up (a different option, the other page)
                walls: list[float] = []
                lags: list[float] = []
                late: list[float] = []
                # recorded as `vigil run` and the window record (--no-record: as a run without a store)
                recs = await _vigil(tab, url, steps, rounds, recorder=SessionRecorder(store) if record else None,
                                    walls=walls, lags=lags, late=late)
                await tab.close()
                pw_tab = await browser.new_tab(url)
                page = pw_tab.page
                if name == "demo shop":
                    await page.locator("#cookie-accept").click()
                await _playwright(page, base, steps, 1, start=1)
                pw = await _playwright(page, base, steps, rounds)
                await pw_tab.close()
                if pages and pages[-1]["page"] == name:
                    pages[-1]["kinds"].update(_per_kind(steps, recs, pw, walls, lags, late))
                else:
                    pages.append({"page": name, "kinds": _per_kind(steps, recs, pw, walls, lags, late)})
            long_run = await _long_run(browser, demo, long_steps) if long_steps else None
    return {"rounds": rounds, "recorded": record, "pages": pages, "long_run": long_run}


async def _long_run(browser, demo: str, n: int) -> dict:
    """`n` recorded steps on the demo shop: memory after warm-up and at the end, store bytes per step."""
    from engine.bench.store import _recorder_class, store_bytes
    from engine.store import Store

    url = demo + "index.html"
    per = len(DEMO)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp, "bench.db")
        with Store.open(db) as store:
            tab = await browser.new_tab(url)
            await _vigil(tab, url, [Step("click", lambda i: {"action": "click", "target": {
                "role": "button", "name": "Accept"}}, _pw_add)], 1)
            size = lambda: store_bytes(store)  # noqa: E731
            rss_start, heap_start = _rss_mb(), _heap_mb()
            size0 = size()
            warm = min(50, n)
            done = rounds_done = 0
            marks: list[tuple[int, float, int, float | None]] = []
            t0 = time.perf_counter()
            chunk = 100
            while done < n:
                k = min(chunk, n - done)
                rounds = max(1, k // per)
                rec = _recorder_class()(store)
                done += len(await _vigil(tab, url, DEMO, rounds, start=rounds_done, recorder=rec))
                rounds_done += rounds  # the next chunk goes on from the next option, not the same one
                marks.append((done, _rss_mb(), size(), _heap_mb()))
            took = time.perf_counter() - t0
            await tab.close()
    after_warm = next((m for m in marks if m[0] >= warm), marks[0])
    end = marks[-1]
    grow = (end[2] - size0) / max(1, end[0])
    rss_grow = (end[1] - after_warm[1]) * 1024 / max(1, end[0] - after_warm[0])
    heap = after_warm[3] is not None and end[3] is not None
    heap_grow = (end[3] - after_warm[3]) * 1024 / max(1, end[0] - after_warm[0]) if heap else None  # type: ignore[operator]
    return {"steps": end[0], "seconds": round(took, 1), "ms_per_step": round(took * 1000 / max(1, end[0]), 1),
            "rss_start_mb": round(rss_start, 1), "rss_after_warmup_mb": round(after_warm[1], 1),
            "rss_end_mb": round(end[1], 1), "store_bytes_per_step": int(grow),
            "rss_by_step": [(m[0], round(m[1], 1)) for m in marks],
            "rss_growth_after_warmup_kb_per_step": round(rss_grow, 2),
            "heap_start_mb": round(heap_start, 1) if heap_start is not None else None,
            "heap_after_warmup_mb": round(after_warm[3], 1) if after_warm[3] is not None else None,
            "heap_end_mb": round(end[3], 1) if end[3] is not None else None,
            "heap_growth_after_warmup_kb_per_step": round(heap_grow, 2) if heap_grow is not None else None}


def format_report(rep: dict) -> str:
    rec = "recorded into a session store" if rep.get("recorded", True) else "not recorded (--no-record)"
    lines = [f"vigil bench step — medians of {rep['rounds']} rounds per step kind; Vigil: an auto-approved step of the "
             f"loop (pictures included, {rec}), wall time from one step's result to the next; Playwright: locator "
             "action + expect, same run", ""]
    hdr = (f"{'page':<26}{'step':<9}{'vigil ms':>9}{'pw ms':>7}{'ratio':>6}  {'observe':>7}{'propose':>8}"
           f"{'effect':>7}{'approve':>8}{'locate':>7}{'act':>6}{'settle':>7}{'verify':>7}{'shots':>6}{'other':>6}  "
           f"{'pub':>6}{'late':>6}  typed by")
    lines.append(hdr)
    for pg in rep["pages"]:
        for k, r in pg["kinds"].items():
            wall = r.get("wall", r["total"])
            lines.append(f"{pg['page']:<26}{k:<9}{wall:>9.0f}{r['playwright_ms']:>7.0f}{r['ratio']:>6.1f}  "
                         f"{r['observe']:>7.0f}{r['model']:>8.0f}{r.get('effect', 0):>7.0f}{r['approval']:>8.0f}"
                         f"{r['dispatch']:>7.0f}"
                         f"{r['act']:>6.0f}{r['settle']:>7.0f}{r['verify']:>7.0f}{r['screenshots']:>6.0f}"
                         f"{r['other']:>6.0f}  {r.get('picture_bg', 0):>6.0f}{r.get('late', 0):>6.0f}  "
                         f"{r.get('typed_by', '')}")
    lr = rep.get("long_run")
    if lr:
        lines += ["", f"Long run: {lr['steps']} recorded steps on the demo shop in {lr['seconds']} s "
                  f"({lr['ms_per_step']} ms a step); Vigil process RSS {lr['rss_start_mb']} MB at start, "
                  f"{lr['rss_after_warmup_mb']} MB after warm-up, {lr['rss_end_mb']} MB at the end "
                  f"({lr['rss_growth_after_warmup_kb_per_step']} KB a step after warm-up; RSS swings with memory "
                  f"the allocator keeps free); heap in use {lr['heap_start_mb']} → {lr['heap_after_warmup_mb']} → "
                  f"{lr['heap_end_mb']} MB ({lr['heap_growth_after_warmup_kb_per_step']} KB a step after warm-up); "
                  f"store +{lr['store_bytes_per_step'] / 1024:.1f} KB per step (the step record, its before/after "
                  "snapshots and pictures, its messages: the store file's growth after a checkpoint that folds in "
                  "and truncates the -wal file)"]
    lines += ["", "observe: snapshot before the step; propose: the planner; effect: what the step will do, computed "
              "in the page (engine.actions.effect);", "approve: the gate; locate: finding the element before input is "
              "dispatched (inside act);", "act: the action incl. dispatch; settle: the wait "
              "after it; verify: checking the expected outcome; shots: the step's wait for its pictures; other: the "
              "rest of the step (events, recording, the loop's own work);", "pub: how long after the step's result "
              "its record was published and stored; late: how long after the step's result its after picture came "
              "(taken off the step's critical path; 0: it was in);", "typed by: one insertion where the field has no "
              "key handler, else keystrokes."]
    return "\n".join(lines)


def add_bench_parser(bsub) -> None:
    bs = bsub.add_parser("step", help="per-step time of supervised steps, phase by phase, vs plain Playwright")
    bs.add_argument("--rounds", type=int, default=5, help="rounds of each page's steps (default 5)")
    bs.add_argument("--steps", type=int, default=0, help="also a long recorded run of N steps (memory, store growth)")
    bs.add_argument("--no-record", action="store_true", help="run the steps without a session store")
    bs.add_argument("--json", action="store_true")


def bench_command(args) -> int:
    rep = asyncio.run(bench_step(args.rounds, args.steps, record=not getattr(args, "no_record", False)))
    print(json.dumps(rep, indent=2) if args.json else format_report(rep))
    return 0
