"""The `vigil` command: `vigil` or `vigil gui [URL]` opens the supervisor window; every other
command (`snapshot`, `run`, `bench` …) is the engine's CLI. Kept here so the engine never imports Qt."""

from __future__ import annotations

import argparse
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
    return p


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
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] != "gui" and not argv[0].startswith("-"):
        from engine.cli import main as engine_main
        return engine_main(argv)
    if argv and argv[0] in ("-h", "--help"):
        from engine.cli import main as engine_main
        code = engine_main(argv)
        print("\n  gui       open the supervisor window (the default): vigil gui [URL] [--demo]")
        return code
    args = _gui_parser().parse_args(argv[1:] if argv and argv[0] == "gui" else argv)
    from engine.browser.target import normalize_url
    from engine.errors import VigilError
    from gui.app import run_gui
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
    code = run_gui(url, screenshot=args.screenshot, quit_after_load=args.quit_after_load or bool(args.screenshot),
                   headless=not args.headed, task=args.task, demo=args.demo or not url)
    # Everything is closed by now; leaving without the interpreter's teardown of Qt objects avoids
    # the exit-time crash a PySide6 + Playwright process is prone to.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
