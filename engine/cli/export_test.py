"""`vigil export ID --playwright test_x.py`: the session as a runnable pytest-playwright test (see
engine.store.export_playwright); with --html/--json too, the report and trace as `vigil export` writes them."""

from __future__ import annotations

import argparse
import sys


def add_playwright_option(sub: argparse._SubParsersAction) -> None:
    """Adds --playwright to the `export` command (engine.cli.sessions defines the command)."""
    e = sub.choices.get("export")
    if e is not None:
        e.add_argument("--playwright", metavar="PATH",
                       help="a pytest-playwright test (sync API) of the session's executed steps, with an "
                            "expect() per verified step; secrets are read from environment variables it names")


def export_playwright_command(args: argparse.Namespace) -> int:
    from engine.errors import VigilError
    from engine.store import Store
    from engine.store.export_playwright import export_playwright
    try:
        with Store.open() as store:
            out = export_playwright(store, args.id, args.playwright)
    except VigilError as exc:
        print(f"vigil export: {exc.code}: {exc.message}", file=sys.stderr)
        return 2
    print(out)
    if args.html or args.json:
        from engine.cli.sessions import export_command
        return export_command(args)
    return 0
