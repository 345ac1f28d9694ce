"""`vigil bench …`: measurements of the engine on generated and real pages, each run on demand (never by
the test suite's timing): `snapshot` (speed and size against Playwright's aria snapshot), `store` (what
recording costs per step), `step` (a supervised step's phases against plain Playwright), `miniwob`
(MiniWoB++ tasks solved by a planner), `real` (the real-app corpus), `read` (can an agent read the page and
learn what its action did, against Playwright's snapshot), `live` (the live view: popup-to-badges time and
idle cost), `fleet` (a fleet's runs at once), `script` (a step's cost as a script grows) and `store-check` (the
session store's integrity check at open, on a big store). Each module has its
`add_bench_parser(bench_subparsers)` and `bench_command(args)`."""

from __future__ import annotations

import argparse
import importlib

from engine.bench.snapshot import generate_page

BENCHES = ("snapshot", "store", "miniwob", "real", "step", "read", "live", "fleet", "script", "store_check")

__all__ = ["BENCHES", "add_parsers", "generate_page", "run"]


def add_parsers(bench_subparsers) -> None:
    """Add every `vigil bench WHAT` command."""
    for name in BENCHES:
        importlib.import_module(f"engine.bench.{name}").add_bench_parser(bench_subparsers)


def run(args: argparse.Namespace) -> int:
    """Run the bench `args.bench` names (from the parsers above)."""
    return int(importlib.import_module(f"engine.bench.{args.bench}").bench_command(args))
