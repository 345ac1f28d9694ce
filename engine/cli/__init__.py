"""The `vigil` command (`python -m engine.cli`): `snapshot`, `run` (engine.cli.run), `sessions`, `export`
and `replay` (engine.cli.sessions), `mcp` (engine.mcp), `bench …` (engine.bench) and `run-demo`. The
window (`vigil gui`) is gui.launcher's; it hands every other command to `main` here."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from engine.errors import ErrorCode, VigilError
from engine.models import FORMATS

ASSETS = Path(__file__).resolve().parents[2] / "assets"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="vigil", description="Vigil — a supervisor for browser agents.")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND")

    s = sub.add_parser("snapshot", help="snapshot a page and print one serialization")
    s.add_argument("url", help="http(s) URL or path to a local HTML file")
    s.add_argument("--format", choices=FORMATS, default="semantic")
    s.add_argument("--json", action="store_true", help="print one JSON object: payload, stats and every node")
    s.add_argument("--full-page", action="store_true", help="do not prune to the viewport")
    s.add_argument("--headed", action="store_true", help="show the browser window (needs a display)")
    s.add_argument("--cdp-url", help="attach to a running browser instead of launching one")
    s.add_argument("--timeout", type=float, default=30.0, help="seconds for loading and snapshotting (default 30)")
    s.add_argument("--viewport", default="1280x800", help="WIDTHxHEIGHT (default 1280x800)")
    s.add_argument("--som", metavar="PATH", help="also write a Set-of-Mark PNG of the viewport (boxes and IDs)")

    b = sub.add_parser("bench", help="benchmarks")
    bsub = b.add_subparsers(dest="bench", metavar="WHAT")
    from engine.bench import add_parsers as add_bench_parsers
    add_bench_parsers(bsub)
    from engine.mcp.bench import add_bench_parser as add_mcp_bench_parser  # engine.bench sits beside engine.mcp
    add_mcp_bench_parser(bsub)

    from engine.cli.run import add_run_parser
    add_run_parser(sub)
    from engine.cli.sessions import add_session_parsers
    add_session_parsers(sub)
    from engine.mcp import add_parser as add_mcp_parser
    add_mcp_parser(sub)

    d = sub.add_parser("run-demo", help="serve the bundled demo shop and snapshot it")
    d.add_argument("--format", choices=FORMATS, default="semantic")
    return p


def _viewport(text: str) -> tuple[int, int]:
    try:
        w, h = text.lower().split("x")
        return int(w), int(h)
    except ValueError:
        raise VigilError(f"--viewport must look like 1280x800, not {text!r}.", code=ErrorCode.BAD_ARGUMENT) from None


async def _snapshot(args: argparse.Namespace) -> int:
    from engine import launch

    async with launch(headless=not args.headed, cdp_url=args.cdp_url, viewport=_viewport(args.viewport)) as browser:
        tab = await browser.new_tab(args.url, timeout=args.timeout)
        snap = await tab.snapshot(timeout=args.timeout)
        opts = {"full_page": True} if args.full_page and args.format in ("semantic", "skeleton") else {}
        if args.json:
            # one line, ended and flushed before anything goes to stderr (the --som note): a reader of
            # both streams gets the whole JSON line first, never a stats line run into it
            sys.stdout.write(json.dumps(snap.to_json_dict(args.format, **opts), ensure_ascii=False) + "\n")
            sys.stdout.flush()
        else:
            out = snap.serialize(args.format, **opts)
            print(out.text, flush=True)  # before the stats line on stderr
            st = snap.stats
            print(f"-- {args.format}: ~{out.tokens} tokens, {out.node_count} nodes | page: {st.nodes} nodes "
                  f"(semantic {st.tiers['semantic']}, non-semantic {st.tiers['non-semantic']}, structural "
                  f"{st.tiers['structural']}), {st.interactive} interactive, {st.frames} frame(s), "
                  f"captured in {st.timings_ms.get('capture', 0):.0f} ms", file=sys.stderr)
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


async def _run_demo(args: argparse.Namespace) -> int:
    from engine import launch
    from engine.local_server import serve_directory

    with serve_directory(ASSETS / "demo") as base:
        async with launch() as browser:
            tab = await browser.new_tab(base + "index.html")
            snap = await tab.snapshot()
            out = snap.serialize(args.format)
            print(out.text)
            print(f"-- demo shop at {base}: {snap.stats.nodes} nodes, {snap.stats.interactive} interactive, "
                  f"{out.tokens} tokens ({args.format}). The supervisor window arrives with the GUI.", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.cmd == "snapshot":
            return asyncio.run(_snapshot(args))
        if args.cmd == "bench" and args.bench == "mcp":
            from engine.mcp.bench import bench_command as mcp_bench
            return mcp_bench(args)
        if args.cmd == "bench" and args.bench:
            from engine.bench import run as run_bench
            return run_bench(args)
        if args.cmd == "run":
            from engine.cli.run import run_command
            return asyncio.run(run_command(args))
        if args.cmd == "sessions":
            from engine.cli.sessions import sessions_command
            return sessions_command(args)
        if args.cmd == "export":
            from engine.cli.sessions import export_command
            return export_command(args)
        if args.cmd == "replay":
            from engine.cli.sessions import replay_command
            return asyncio.run(replay_command(args))
        if args.cmd == "mcp":
            from engine.mcp import run as run_mcp
            return run_mcp(args)
        if args.cmd == "run-demo":
            return asyncio.run(_run_demo(args))
        _parser().print_help()
        return 2
    except VigilError as exc:
        print(f"vigil: {exc.code}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("vigil: interrupted", file=sys.stderr)
        return 130
