"""`vigil sessions [--json] [--delete ID …]`, `vigil export ID --html PATH [--json PATH]` and
`vigil replay ID [--approve ask|auto|auto-safe] [--url URL]`.

Session IDs may be shortened to any unique prefix of at least 4 characters (as `vigil sessions`
prints them). Exit codes: 0 done (a replay: finished), 1 a replay that failed or was stopped,
2 a missing session, an unusable store or bad arguments — always with a message saying what to do.
"""

from __future__ import annotations

import argparse
import json
import sys

from engine.errors import VigilError


def add_session_parsers(sub) -> None:
    s = sub.add_parser("sessions", help="list the recorded sessions, newest first (or delete some)")
    s.add_argument("--json", action="store_true", help="one JSON array of sessions")
    s.add_argument("--delete", metavar="ID", nargs="+",
                   help="delete these sessions with their steps and pictures (ids or unique prefixes)")

    e = sub.add_parser("export", help="write a recorded session as a self-contained HTML report, a JSON trace and/or a "
                         "Playwright test")
    e.add_argument("id", help="session id (or a unique prefix of at least 4 characters)")
    e.add_argument("--html", metavar="PATH", help="the HTML report (images inline, opens without network)")
    e.add_argument("--json", metavar="PATH", help="the JSON trace")

    from engine.cli.run import add_loop_options
    r = sub.add_parser("replay", help="run a recorded session's actions again, with approval",
                       description="Replay a recorded session: its completed actions run again through the "
                                   "scripted planner, each target found by its recorded ID or, when IDs changed, "
                                   "by role and name; approval works as in `vigil run`.")
    r.add_argument("id", help="session id (or a unique prefix of at least 4 characters)")
    r.add_argument("--url", help="start here instead of where the recorded session started (the site moved)")
    add_loop_options(r, max_steps_default=None,
                     max_steps_help="default: twice the recorded steps plus 5, at least 30")


def _fail(cmd: str, exc: VigilError) -> int:
    print(f"vigil {cmd}: {exc.code}: {exc.message}", file=sys.stderr)
    return 2


def sessions_command(args: argparse.Namespace) -> int:
    from engine.store import Store
    try:
        with Store.open() as store:
            if args.delete:
                ids = [store.resolve_id(x) for x in args.delete]  # all resolved before any is deleted
                for sid in ids:
                    store.delete(sid)
                    print(f"deleted {sid}")
                return 0
            rows = store.list_sessions()
            where = store.path
    except VigilError as exc:
        return _fail("sessions", exc)
    if args.json:
        print(json.dumps([r.model_dump(mode="json") for r in rows], ensure_ascii=False))
        return 0
    if not rows:
        print(f"No sessions yet in {where}. `vigil run` and the window record every run.")
        return 0
    words = {r.id: r.status + (f" ({r.unverified} unverified)" if r.unverified else "") for r in rows}
    w = max(11, *(len(x) for x in words.values()))
    print(f"{'ID':<8}  {'STATUS':<{w}}  {'STEPS':>5}  {'STARTED':<16}  {'DOMAIN':<24}  TITLE")
    for r in rows:
        title = r.title if len(r.title) <= 70 else r.title[:69] + "…"
        domain = r.domain if len(r.domain) <= 24 else r.domain[:23] + "…"
        print(f"{r.id[:8]:<8}  {words[r.id]:<{w}}  {r.steps:>5}  {r.started[:16].replace('T', ' '):<16}  "
              f"{domain:<24}  {title}")
        print(f"{'':<8}  {r.url}")
    return 0


def export_command(args: argparse.Namespace) -> int:
    from engine.store import Store
    from engine.store.report import write_export
    if not args.html and not args.json:
        print("vigil export: BAD_ARGUMENT: say what to write: --html report.html, --json trace.json and/or "
              "--playwright test_x.py.", file=sys.stderr)
        return 2
    try:
        with Store.open() as store:
            sid = store.resolve_id(args.id)
            paths = write_export(store, sid, html_path=args.html, json_path=args.json)
    except VigilError as exc:
        return _fail("export", exc)
    for p in paths:
        print(p)
    return 0


async def replay_command(args: argparse.Namespace, *, stdin=None) -> int:
    from engine.browser.target import normalize_url
    from engine.cli.run import execute
    from engine.store import Store
    from engine.store.replay import replay_planner
    try:
        with Store.open() as store:
            planner = replay_planner(store, args.id)
        url = normalize_url(args.url or planner.start_url)
    except VigilError as exc:
        return _fail("replay", exc)
    if args.max_steps is None:
        args.max_steps = max(30, 2 * len(planner.steps) + 5)
    out = sys.stderr if args.json else sys.stdout
    print(f"Replaying session {planner.session_id[:8]}: {len(planner.steps)} step(s) from {url}", file=out)
    for s in planner.skipped:
        print(f"  not replayed: {s}", file=out)
    return await execute(args, planner, "replay", planner.task, url, stdin=stdin,
                         metadata={"replayOf": planner.session_id}, command="replay")
