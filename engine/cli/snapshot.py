"""`vigil snapshot URL [--format semantic|tree|skeleton|full] [--json] [--max-bytes N] [--max-nodes N] …`

Prints one serialization of the page (or, with --json, one JSON line: payload, stats and every
node). Every output stops at a size budget — 2 MB for a format's text, 10 MB for --json — and says
so where it stops: what was left out, how many nodes, and how to get more (`--max-bytes`,
`--max-nodes`). A page too big for the walk's own node budget says that in every format as well.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from engine.errors import ErrorCode, VigilError
from engine.models import FORMATS
from engine.snapshot.budget import DEFAULT_JSON_MAX_BYTES, DEFAULT_MAX_BYTES, json_document, within_budget

WALK_MAX_NODES = 200_000  # the walk's own node budget (engine.snapshot.capture); --max-nodes only raises it
_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "m": 1_000_000, "mb": 1_000_000, "g": 1_000_000_000,
          "gb": 1_000_000_000}


def byte_size(text: str) -> int:
    """`2000000`, `500k`, `2MB`, `0` (no limit) → bytes; argparse's error otherwise."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text)
    unit = m.group(2).lower() if m else ""
    if not m or unit not in _UNITS:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size; give bytes like 2000000, 500k or 2MB (0: no limit)")
    return int(float(m.group(1)) * _UNITS[unit])


def node_count(text: str) -> int:
    try:
        n = int(text.replace("_", "").replace(",", ""))
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a node count; give a whole number of at least 1")
    return n


def add_snapshot_parser(subparsers) -> argparse.ArgumentParser:
    s = subparsers.add_parser("snapshot", help="snapshot a page and print one serialization")
    s.add_argument("url", help="http(s) URL or path to a local HTML file")
    s.add_argument("--format", choices=FORMATS, default="semantic")
    s.add_argument("--json", action="store_true", help="print one JSON object: payload, stats and every node")
    s.add_argument("--full-page", action="store_true", help="do not prune to the viewport")
    s.add_argument("--max-bytes", type=byte_size, metavar="N",
                   help=f"stop the output at N bytes, with a marker saying what was left out (default "
                        f"{DEFAULT_MAX_BYTES:,}; {DEFAULT_JSON_MAX_BYTES:,} with --json; 500k, 2MB work; 0: no limit)")
    s.add_argument("--max-nodes", type=node_count, metavar="N",
                   help="write at most N nodes in tree (default 1,500) and N interactive elements in skeleton "
                        f"(default 400); also lets the walk read up to N page nodes when N is above its own "
                        f"{WALK_MAX_NODES:,}")
    s.add_argument("--headed", action="store_true", help="show the browser window (needs a display)")
    s.add_argument("--cdp-url", help="attach to a running browser instead of launching one")
    s.add_argument("--timeout", type=float, default=30.0, help="seconds for loading and snapshotting (default 30)")
    s.add_argument("--viewport", default="1280x800", help="WIDTHxHEIGHT (default 1280x800)")
    s.add_argument("--som", metavar="PATH", help="also write a Set-of-Mark PNG of the viewport (boxes and IDs)")
    return s


def _viewport(text: str) -> tuple[int, int]:
    try:
        w, h = text.lower().split("x")
        return int(w), int(h)
    except ValueError:
        raise VigilError(f"--viewport must look like 1280x800, not {text!r}.", code=ErrorCode.BAD_ARGUMENT) from None


def _budget(args: argparse.Namespace, default: int) -> int | None:
    if args.max_bytes is None:
        return default
    return args.max_bytes or None  # 0: no limit


async def snapshot_command(args: argparse.Namespace) -> int:
    from engine import launch

    walk = args.max_nodes if args.max_nodes and args.max_nodes > WALK_MAX_NODES else None
    async with launch(headless=not args.headed, cdp_url=args.cdp_url, viewport=_viewport(args.viewport)) as browser:
        tab = await browser.new_tab(args.url, timeout=args.timeout)
        snap = await tab.snapshot(timeout=args.timeout, max_nodes=walk)
        opts = {"full_page": True} if args.full_page and args.format in ("semantic", "skeleton") else {}
        if args.json:
            # one line, ended and flushed before anything goes to stderr (the --som note): a reader of
            # both streams gets the whole JSON line first, never a stats line run into it
            sys.stdout.write(json_document(snap, args.format, max_bytes=_budget(args, DEFAULT_JSON_MAX_BYTES),
                                           max_nodes=args.max_nodes, **opts) + "\n")
            sys.stdout.flush()
        else:
            out = within_budget(snap, args.format, max_bytes=_budget(args, DEFAULT_MAX_BYTES),
                                max_nodes=args.max_nodes, **opts)
            print(out.text, flush=True)  # before the stats line on stderr
            st = snap.stats
            print(f"-- {args.format}: ~{out.tokens} tokens, {out.node_count} nodes | page: {st.nodes} nodes "
                  f"(semantic {st.tiers['semantic']}, non-semantic {st.tiers['non-semantic']}, structural "
                  f"{st.tiers['structural']}), {st.interactive} interactive, {st.frames} frame(s), "
                  f"captured in {st.timings_ms.get('capture', 0):.0f} ms, {snap.walk.describe()} walk", file=sys.stderr)
            if out.truncated or st.truncated:
                print("-- TRUNCATED: this output is not the whole page; the marker in it says what was left out "
                      "and how to get more (--max-bytes, --max-nodes)", file=sys.stderr)
        if args.som:
            from engine.vision import som_png
            try:
                res = await som_png(tab, args.som, snap)
            except OSError as exc:
                raise VigilError(f"Cannot write the Set-of-Mark image to {args.som}: {exc.strerror or exc}. "
                                 "Pick a path in a writable, existing directory.",
                                 code=ErrorCode.BAD_ARGUMENT) from None
            occluded = sum(1 for m in res.marks if m.occluded)
            print(f"-- set-of-mark: {len(res.marks)} marks ({occluded} covered) written to {Path(args.som).resolve()}",
                  file=sys.stderr)
    return 0
