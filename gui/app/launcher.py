"""The `vigil` command: `vigil` or `vigil gui [URL]` opens the supervisor window; `vigil gui --mcp [PORT]` serves
MCP over HTTP with the Fleet view of its clients (each a run, one approval queue), as does `vigil mcp --http PORT`
under `ask` with a display; `vigil mcp` (stdio) under `ask` with a display opens the main window bound to the
client's tab; every other command (`snapshot`, `run`, `bench`, `mcp` without a window …) is the engine's CLI.
Kept here so the engine never imports Qt."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys


def _gui_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="vigil gui", description="Open the Vigil supervisor window.")
    p.add_argument("url", nargs="?", help="page to open (http(s) URL or a local HTML file)")
    p.add_argument("--demo", action="store_true", help="serve and open the bundled demo shop, with a task ready to run")
    p.add_argument("--task", default="", help="a task to put in the task box")
    p.add_argument("--headed", action="store_true", help="also show Chromium's own window (needs a display)")
    p.add_argument("--screenshot", metavar="PATH", help="write a PNG of the window (with --quit-after-load)")
    p.add_argument("--quit-after-load", action="store_true",
                   help="load the page, take the first snapshot, render every panel, then exit (smoke checks)")
    p.add_argument("--mcp", type=int, nargs="?", const=0, metavar="PORT",
                   help="serve MCP clients (streamable HTTP on 127.0.0.1:PORT, any free port without one; bearer "
                        "token printed at start) in a window that shows each client as a run, its steps waiting "
                        "in one approval queue")
    p.add_argument("--fleet", metavar="FILE", help="open the Fleet view on this fleet file (see `vigil fleet`): "
                   "every run, one approval queue")
    p.add_argument("--parallel", type=int, default=None, help="with --fleet: runs at once (default 1)")
    p.add_argument("--approve", choices=("ask", "auto-safe", "auto"), default=None,
                   help="with --fleet: the policy of runs that set none; with --mcp: every client's (default ask)")
    p.add_argument("--browsers", metavar="URL[,URL…]", help="with --fleet: remote DevTools endpoints for the runs")
    p.add_argument("--grid", metavar="URL", help="with --fleet: a Selenium Grid (http://hub:4444) to ask a browser "
                                                 "session of per run (default: the fleet file's grid:)")
    p.add_argument("--retry-lost", action="store_true",
                   help="with --fleet: a run whose browser or grid node went away starts again on a new one")
    p.add_argument("--max-steps", type=int, default=None, help="with --fleet: per run, unless it sets its own")
    return p


def _mcp_in_window(argv: list[str]) -> int | None:
    """`vigil mcp …` under `ask` (without --terminal) where a window can open: the window hosts the
    server, bound to the client's tab. None when the engine's command handles it (it refuses `ask`
    where no window can open, with the ways out)."""
    from engine.mcp.cli import PROG, add_options
    from gui.app import qt_messages
    from gui.app.window_app import McpLaunch, _display_problem, run_gui

    p = argparse.ArgumentParser(prog=PROG)
    add_options(p)
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            args = p.parse_args(argv[1:])
    except SystemExit:
        return None  # a bad option: the engine's parser says it
    if args.what == "grants" or args.approve != "ask" or args.terminal or _display_problem():
        return None
    if any(not os.path.isdir(os.path.expanduser(d)) for d in args.upload_from):
        return None  # the engine's command names the folder that does not exist
    if not (1 <= args.max_clients <= 64 and 1 <= args.idle_timeout <= 86_400):
        return None  # the engine's command says which value is out of range
    url = None
    if args.url:
        from engine.mcp.failure import ToolFailure
        from engine.mcp.urls import mcp_url
        try:
            url = mcp_url(args.url, allow_files=args.allow_file_urls)
        except ToolFailure as exc:
            print(f"{PROG}: {exc.code}: {exc.message}", file=sys.stderr)
            return 2
    if args.grant:  # checked before the window opens, as the engine's command checks them
        from engine.errors import VigilError
        from engine.store.grants import parse_grant
        if args.no_record:
            return None  # the engine's command refuses grants that could not be recorded, and says why
        for spec in args.grant:
            try:
                parse_grant(spec)
            except VigilError as exc:
                print(f"{PROG}: {exc.code}: {exc.message}", file=sys.stderr)
                return 2
    qt_messages.install()
    launch = McpLaunch(port=args.http, allow_files=args.allow_file_urls, record=not args.no_record,
                       grants=tuple(args.grant), upload_from=tuple(args.upload_from), max_clients=args.max_clients,
                       idle_s=args.idle_timeout)
    return run_gui(url, headless=not args.headed, mcp=launch, prog=PROG)


def _missing_file(url: str) -> str | None:
    """The local path of a file:// URL that names no file, else None."""
    import urllib.parse
    import urllib.request
    from pathlib import Path

    parts = urllib.parse.urlsplit(url)
    if parts.scheme.lower() != "file":
        return None
    path = Path(urllib.request.url2pathname(parts.path))
    return None if path.exists() else str(path)


def main(argv: list[str] | None = None) -> int:
    from engine.models.text import bidi_safe_streams
    # what the window's process says on stderr quotes URLs and pages too: bidi controls print as markers;
    # stdout is left alone (`vigil mcp` in the window speaks the MCP protocol on it)
    with bidi_safe_streams(stdout=False):
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "mcp" and "-h" not in argv and "--help" not in argv:
        code = _mcp_in_window(argv)
        if code is not None:
            _leave(code)
    if argv and argv[0] != "gui" and not argv[0].startswith("-"):
        from engine.cli import main as engine_main
        return engine_main(argv)
    if argv and argv[0] in ("-h", "--help"):
        from engine.cli import main as engine_main
        return engine_main(argv)  # its list names `gui` too
    args = _gui_parser().parse_args(argv[1:] if argv and argv[0] == "gui" else argv)
    from engine.browser.target import normalize_url
    from engine.errors import VigilError
    from gui.app import qt_messages
    from gui.app.window_app import run_gui
    qt_messages.install()
    if args.fleet:
        from gui.app.fleet_app import run_fleet_gui
        code = run_fleet_gui(args)
        _leave(code)
        return code
    url = None
    if args.url:
        try:
            url = normalize_url(args.url)
        except VigilError as exc:
            print(f"vigil gui: {exc.code}: {exc}", file=sys.stderr)
            return 2
        missing = _missing_file(url)
        if missing:
            print(f"vigil gui: BAD_URL: {url} names a file that does not exist ({missing}). Check the path, or "
                  "give an http(s) URL.", file=sys.stderr)
            return 2
    mcp = None
    if args.mcp is not None:
        from gui.app.window_app import McpLaunch
        mcp = McpLaunch(port=args.mcp, policy=args.approve or "ask")
    code = run_gui(url, screenshot=args.screenshot, quit_after_load=args.quit_after_load or bool(args.screenshot),
                   headless=not args.headed, task=args.task, demo=args.demo or (not url and mcp is None), mcp=mcp)
    _leave(code)
    return code


def _leave(code: int) -> None:
    """Everything is closed by now; leaving without the interpreter's teardown of Qt objects avoids
    the exit-time crash a PySide6 + Playwright process is prone to."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
