"""`vigil bench store-check [--size-mb 1024]`: what the integrity check costs when a store is opened.

Builds a store of about the size asked for under the system's temporary folder (removed afterwards),
written through the real Store API as runs write it: sessions of 40 steps, each step with a 60 KB
picture (random bytes: a JPEG does not compress) and a snapshot of a 2,500-element page, compressed as
stored. Then, each open followed by a close, median of `--opens` (interleaved, so all see the same
machine noise): the open without any check ("off"), as Vigil opens it ("auto": whole check at open up to
VIGIL_STORE_CHECK_MB, else the cheap checks and the whole check on a thread), with the whole check at open
("now"), and how long that thread takes to give its verdict ("background"). `--cold` evicts the file from
the page cache before each open (posix_fadvise), as after a reboot; `--store PATH` measures an existing
store instead (opened as Vigil opens any store: a session left running by a process that ended is
marked interrupted; nothing else is written).
"""

from __future__ import annotations

import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

STEPS_PER_SESSION = 40
PICTURE_BYTES = 60_000


def _step(i: int):
    from engine.models import Action, ActionResult, Decision, ProposedStep, StepRecord

    a = Action(name="click", target=str(10 + i))
    return StepRecord(index=i, proposal=ProposedStep(thought=f"step {i}", action=a), decision=Decision.approve(),
                      action=a, result=ActionResult(success=True, action=a.to_string()),
                      url_before="http://shop.test/", url_after="http://shop.test/cart")


def _snapshot(rng: random.Random) -> bytes:
    nodes = [{"id": rng.randrange(10**6), "role": rng.choice(("button", "link", "textbox", "heading")),
              "name": f"item {rng.randrange(10**5)}", "box": [rng.randrange(1000) for _ in range(4)]}
             for _ in range(2500)]
    return json.dumps({"nodes": nodes}).encode()


def _size(db: Path) -> int:
    return sum(p.stat().st_size for p in db.parent.glob(db.name + "*"))


def build_store(db: Path, size_mb: int) -> dict[str, Any]:
    """Write sessions through the real Store API until the store holds about `size_mb` MB."""
    from engine.store import Store

    rng = random.Random(1)
    t0, sessions = time.perf_counter(), 0
    with Store.open(db, check="off") as store:
        while _size(db) < size_mb * 2**20:
            sid = store.create_session(f"task {sessions}", "http://shop.test/", "heuristic", "auto")
            for i in range(STEPS_PER_SESSION):
                store.add_step(sid, _step(i), files={"screenshot_after": ("screenshot", os.urandom(PICTURE_BYTES)),
                                                     "snapshot_after": ("snapshot", _snapshot(rng))})
            store.finish(sid, "success", answer="ok")
            sessions += 1
    return {"sessions": sessions, "steps": sessions * STEPS_PER_SESSION, "build_s": round(time.perf_counter() - t0, 1)}


def _evict(db: Path) -> None:
    """Drop the store's files from the page cache (the next open reads them from the disk)."""
    for p in db.parent.glob(db.name + "*"):
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def _open_ms(db: Path, mode: str, cold: bool) -> tuple[float, float | None]:
    """(ms to open and close the store with `mode`; for "background", ms until the check's verdict)."""
    from engine.store import Store

    if cold:
        _evict(db)
    t0 = time.perf_counter()
    store = Store.open(db, check=mode)  # type: ignore[arg-type]
    opened = (time.perf_counter() - t0) * 1000
    verdict = None
    if mode == "background":
        store.wait_checked()
        verdict = (time.perf_counter() - t0) * 1000
        if store.damage is not None:
            raise RuntimeError(store.damage.message)
    store.close()
    return opened, verdict


def _cheap_ms(db: Path, cold: bool) -> float:
    """ms of the checks every open runs whatever the size (on their read-only connection)."""
    from engine.store.integrity import check_file

    if cold:
        _evict(db)
    t0 = time.perf_counter()
    if check_file(db, whole=False).problem is not None:
        raise RuntimeError(f"{db} is damaged")
    return (time.perf_counter() - t0) * 1000


def bench_store_check(db: Path, opens: int, cold: bool) -> dict[str, Any]:
    from engine.store.integrity import whole_check_limit

    modes = ("off", "auto", "now", "background")
    times: dict[str, list[float]] = {m: [] for m in modes}
    verdicts: list[float] = []
    cheap: list[float] = []
    _open_ms(db, "off", False)  # the first open after writing: WAL checkpointed, caches as they will be
    for _ in range(opens):
        for mode in modes:
            opened, verdict = _open_ms(db, mode, cold)
            times[mode].append(opened)
            if verdict is not None:
                verdicts.append(verdict)
        cheap.append(_cheap_ms(db, cold))
    med = {m: round(statistics.median(v), 1) for m, v in times.items()}
    return {"store_mb": round(db.stat().st_size / 2**20, 1), "opens": opens, "cold": cold,
            "whole_check_at_open_up_to_mb": round(whole_check_limit() / 2**20, 1),
            "open_ms": med, "check_at_open_ms": round(med["now"] - med["off"], 1),
            "cheap_checks_ms": round(statistics.median(cheap), 1),
            "background_verdict_ms": round(statistics.median(verdicts), 1),
            "open_ms_all": {m: [round(x, 1) for x in v] for m, v in times.items()}}


def format_report(rep: dict[str, Any]) -> str:
    o = rep["open_ms"]
    built = rep.get("built")
    lines = [f"vigil bench store-check — a {rep['store_mb']} MB store"
             + (f" ({built['sessions']} sessions, {built['steps']} steps, written in {built['build_s']} s)"
                if built else "") + f", median of {rep['opens']} opens, {'cold' if rep['cold'] else 'warm'} cache",
             "",
             f"  open without any check (off)           {o['off']:>9.1f} ms",
             f"  open as Vigil opens it (auto)          {o['auto']:>9.1f} ms   (whole check at open up to "
             f"{rep['whole_check_at_open_up_to_mb']:g} MB: VIGIL_STORE_CHECK_MB)",
             f"  open with the whole check (now)        {o['now']:>9.1f} ms   (+{rep['check_at_open_ms']:.1f} ms)",
             f"  open, the whole check on a thread      {o['background']:>9.1f} ms",
             f"    of which the cheap checks            {rep['cheap_checks_ms']:>9.1f} ms   (page counts, schema, "
             "the ends of every table and index)",
             f"  that thread's verdict, from the open   {rep['background_verdict_ms']:>9.1f} ms   "
             "(the store's writes wait for it)"]
    return "\n".join(lines)


def add_bench_parser(bsub) -> None:
    b = bsub.add_parser("store-check", help="what the session store's integrity check costs at open, on a big store")
    b.add_argument("--size-mb", type=int, default=1024, help="size of the store to build (default 1024)")
    b.add_argument("--opens", type=int, default=5, help="opens per way of opening, median taken (default 5)")
    b.add_argument("--cold", action="store_true", help="evict the store from the page cache before each open")
    b.add_argument("--store", metavar="PATH", help="measure this existing store instead of building one")
    b.add_argument("--json", action="store_true")
    b.set_defaults(bench="store_check")  # the module's name (`vigil bench` imports engine.bench.<bench>)


def bench_command(args) -> int:
    if args.store:
        rep = bench_store_check(Path(args.store).expanduser(), args.opens, args.cold)
    else:
        with tempfile.TemporaryDirectory(prefix="vigil-store-check-") as tmp:
            db = Path(tmp) / "sessions.db"
            built = build_store(db, args.size_mb)
            rep = {**bench_store_check(db, args.opens, args.cold), "built": built}
    print(json.dumps(rep, indent=2) if args.json else format_report(rep))
    return 0
