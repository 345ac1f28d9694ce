"""The `vigil` command (`python -m engine.cli`): `snapshot`, `run` (engine.cli.run), `fleet` (engine.cli.fleet),
`sessions`, `export` and `replay` (engine.cli.sessions), `mcp` (engine.mcp), `bench …` (engine.bench) and
`run-demo`. The window (`vigil gui`) is gui.app.launcher's; it hands every other command to `main` here."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys

from engine.errors import VigilError
from engine.models import FORMATS
from engine.models.text import bidi_safe_streams


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="vigil", description="Vigil — a supervisor for browser agents.")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND")

    from engine.cli.snapshot import add_snapshot_parser
    add_snapshot_parser(sub)

    b = sub.add_parser("bench", help="benchmarks")
    bsub = b.add_subparsers(dest="bench", metavar="WHAT")
    from engine.bench import add_parsers as add_bench_parsers
    add_bench_parsers(bsub)
    from engine.mcp.bench import add_bench_parser as add_mcp_bench_parser  # engine.bench sits beside engine.mcp
    add_mcp_bench_parser(bsub)

    from engine.cli.run import add_run_parser
    add_run_parser(sub)
    from engine.cli.fleet import add_fleet_parser
    add_fleet_parser(sub)
    from engine.cli.sessions import add_session_parsers
    add_session_parsers(sub)
    from engine.cli.export_test import add_playwright_option
    add_playwright_option(sub)
    from engine.mcp import add_parser as add_mcp_parser
    add_mcp_parser(sub)

    from engine.cli.desktop_entry import add_desktop_entry_parser
    add_desktop_entry_parser(sub)

    d = sub.add_parser("run-demo", help="serve the bundled demo shop and snapshot it")
    d.add_argument("--format", choices=FORMATS, default="semantic")
    # the window is the gui package's (the engine never imports Qt): `vigil gui` reaches it through gui.app.launcher,
    # listed here so that `vigil --help` names every command
    sub.add_parser("gui", help="open the supervisor window (the default command): vigil gui [URL] [--demo] "
                               "[--mcp [PORT]]; vigil gui --help for its options", add_help=False)
    return p


async def _run_demo(args: argparse.Namespace) -> int:
    from engine import launch
    from engine.assets import asset
    from engine.local_server import serve_directory

    with serve_directory(asset("demo")) as base:
        async with launch() as browser:
            tab = await browser.new_tab(base + "index.html")
            snap = await tab.snapshot()
            out = snap.serialize(args.format)
            print(out.text)
            print(f"-- demo shop at {base}: {snap.stats.nodes} nodes, {snap.stats.interactive} interactive, "
                  f"{out.tokens} tokens ({args.format}). In the window: vigil gui --demo", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    try:
        with bidi_safe_streams(stdout=False):  # errors, prompts and logs show a page's bidi controls as markers
            code = _main(argv)
            sys.stdout.flush()  # a pipe its reader closed fails here, where it is handled, not at exit
        return code
    except BrokenPipeError:
        # the reader went away (`vigil sessions | head -1`): what was printed is what was wanted; no traceback,
        # and nothing more is written to the closed pipe at exit
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _main(argv: list[str] | None = None) -> int:
    given = sys.argv[1:] if argv is None else argv
    if given[:1] == ["gui"]:
        print("vigil: the window opens with `vigil gui` (the vigil command, which has Qt); "
                  "`python -m engine.cli` is the engine's commands only.", file=sys.stderr)
        return 2
    args = _parser().parse_args(argv)
    with bidi_safe_streams(stdout=not machine_stdout(args)):
        return _command(args)


def machine_stdout(args: argparse.Namespace) -> bool:
    """Whether the command's stdout is for a program, kept byte-exact: one JSON document (`--json`; `vigil
    export --json PATH` names a file instead), or the MCP protocol of a stdio server."""
    if getattr(args, "json", None) is True:
        return True
    return args.cmd == "mcp" and getattr(args, "what", None) != "grants"


def _command(args: argparse.Namespace) -> int:
    try:
        if args.cmd == "snapshot":
            from engine.cli.snapshot import snapshot_command
            return asyncio.run(snapshot_command(args))
        if args.cmd == "bench" and args.bench == "mcp":
            from engine.mcp.bench import bench_command as mcp_bench
            return mcp_bench(args)
        if args.cmd == "bench" and args.bench:
            from engine.bench import run as run_bench
            return run_bench(args)
        if args.cmd == "run":
            from engine.cli.run import run_command
            return asyncio.run(run_command(args))
        if args.cmd == "fleet":
            from engine.cli.fleet import fleet_command
            return asyncio.run(fleet_command(args))
        if args.cmd == "sessions":
            from engine.cli.sessions import sessions_command
            return sessions_command(args)
        if args.cmd == "export" and getattr(args, "playwright", None) and args.id and not getattr(args, "fleet", None):
            from engine.cli.export_test import export_playwright_command
            return export_playwright_command(args)
        if args.cmd == "export":
            from engine.cli.sessions import export_command
            return export_command(args)
        if args.cmd == "replay":
            from engine.cli.sessions import replay_command
            return asyncio.run(replay_command(args))
        if args.cmd == "mcp":
            from engine.mcp import run as run_mcp
            return run_mcp(args)
        if args.cmd == "desktop-entry":
            from engine.cli.desktop_entry import desktop_entry_command
            return desktop_entry_command(args)
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
