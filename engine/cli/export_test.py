"""`vigil export ID --playwright test_x.py`: the session as a runnable pytest-playwright test (see
engine.store.export_playwright); with --html/--json/--trace too, the report and traces as `vigil export` writes them."""

from __future__ import annotations

import argparse


def add_playwright_option(sub: argparse._SubParsersAction) -> None:
    """Adds --playwright to the `export` command (engine.cli.sessions defines the command)."""
    e = sub.choices.get("export")
    if e is not None:
        e.add_argument("--playwright", metavar="PATH",
                       help="a pytest-playwright test (sync API) of the session's executed steps, with an "
                            "expect() per verified step; secrets are read from environment variables it names")


def export_playwright_command(args: argparse.Namespace) -> int:
    """The test, with whatever else was asked for (--html, --json, --trace), written together by `vigil export`
    (the report links the test and the trace written with it)."""
    from engine.cli.sessions import export_command
    return export_command(args)
