"""`vigil sessions [--json] [--delete ID …] [--recover]`, `vigil export ID [--html PATH] [--json PATH] [--trace PATH]
[--playwright PATH]` (written together, the report links the trace and the test) and
`vigil replay ID [--approve ask|auto|auto-safe] [--url URL]`.

Session IDs may be shortened to any unique prefix of at least 4 characters (as `vigil sessions`
prints them). Exit codes: 0 done (a replay: finished), 1 a replay that failed or was stopped,
2 a missing session, an unusable store (a damaged one: STORE_CORRUPT) or bad arguments — always with a
message saying what to do. `sessions` and `export` check the whole store before answering (they only read
and end: their answer covers every page), so a damaged store is said at any size.
"""

from __future__ import annotations

import argparse
import json
import sys

from engine.errors import VigilError
from engine.fleet.words import status_word


def add_session_parsers(sub) -> None:
    s = sub.add_parser("sessions", help="list the recorded sessions, newest first (or delete some)")
    s.add_argument("--json", action="store_true", help="one JSON array of sessions")
    s.add_argument("--delete", metavar="ID", nargs="+",
                   help="delete these sessions with their steps and pictures (ids or unique prefixes)")
    s.add_argument("--fleet", metavar="ID", help="only the sessions of this fleet (`vigil fleet` prints its id), "
                                                 "after a line per run of the fleet")
    s.add_argument("--recover", action="store_true",
                   help="a damaged store (STORE_CORRUPT): copy every session that can still be read into a new store "
                        "beside it (the damaged file is only read), and say how to put it in place")

    e = sub.add_parser("export", help="write a recorded session as a self-contained HTML report, a JSON trace, a "
                         "Playwright trace and/or a Playwright test")
    e.add_argument("id", nargs="?", help="session id (or a unique prefix of at least 4 characters)")
    e.add_argument("--fleet", metavar="ID", help="with --html: one summary page of a fleet (every run, its outcome, "
                                                 "steps and time, linking to each run's report, written beside it)")
    e.add_argument("--html", metavar="PATH", help="the HTML report (images inline, opens without network)")
    e.add_argument("--json", metavar="PATH", help="the JSON trace")
    e.add_argument("--trace", metavar="PATH", help="a Playwright trace zip (playwright show-trace PATH): each step a "
                                                   "group with its pictures, decision and verdict")

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
    if getattr(args, "recover", False):
        return _recover(args)
    if getattr(args, "fleet", None):
        return _fleet_sessions(args)
    try:
        with Store.open(check="now") as store:
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
    words = {r.id: status_word(r.status, r.reason) + (f" ({r.unverified} unverified)" if r.unverified else "")
             for r in rows}
    w = max(11, *(len(x) for x in words.values()))
    print(f"{'ID':<8}  {'STATUS':<{w}}  {'STEPS':>5}  {'STARTED':<16}  {'DOMAIN':<24}  TITLE")
    for r in rows:
        title = r.title if len(r.title) <= 70 else r.title[:69] + "…"
        domain = r.domain if len(r.domain) <= 24 else r.domain[:23] + "…"
        print(f"{r.id[:8]:<8}  {words[r.id]:<{w}}  {r.steps:>5}  {r.started[:16].replace('T', ' '):<16}  "
              f"{domain:<24}  {title}")
        print(f"{'':<8}  {r.url}")
    return 0


def _fleet_sessions(args: argparse.Namespace) -> int:
    from engine.store import Store
    from engine.store.fleets import FleetBook
    if args.delete:
        print("vigil sessions: BAD_ARGUMENT: --fleet lists a fleet's sessions; delete them by id with --delete.",
              file=sys.stderr)
        return 2
    try:
        with Store.open(check="now") as store:
            book = FleetBook(store)
            rec = book.load(args.fleet)
            rows = book.sessions(rec.id)
    except VigilError as exc:
        return _fail("sessions", exc)
    if args.json:
        print(json.dumps({"fleet": rec.model_dump(mode="json"), "sessions": [r.model_dump(mode="json") for r in rows]},
                         ensure_ascii=False))
        return 0
    done = sum(r.status == "done" for r in rec.runs)
    print(f"fleet {rec.id} — {rec.name}: {len(rec.runs)} runs, {done} done, "
          f"{status_word(rec.status, process_gone=True)} (started "
          f"{rec.created[:16].replace('T', ' ')})")
    w = max(4, *(len(r.name) for r in rec.runs)) if rec.runs else 4
    for r in rec.runs:
        what = (r.answer if r.status == "done" else r.reason) or ""
        print(f"  {r.name:<{w}}  {status_word(r.status):<8}  {r.steps:>3} steps  "
              f"session {(r.session_id or '-')[:8]:<8}  {(r.browser or '-')[:30]}  {what[:80]}")
    print()
    print(f"{'ID':<8}  {'STATUS':<11}  {'STEPS':>5}  {'STARTED':<16}  TITLE")
    for s in rows:
        title = s.title if len(s.title) <= 70 else s.title[:69] + "…"
        word = status_word(s.status, s.reason)
        print(f"{s.id[:8]:<8}  {word:<11}  {s.steps:>5}  {s.started[:16].replace('T', ' '):<16}  {title}")
    return 0


def export_command(args: argparse.Namespace) -> int:
    from engine.store import Store
    from engine.store.report import write_export
    if getattr(args, "fleet", None):
        return _export_fleet(args)
    if not args.id:
        print("vigil export: BAD_ARGUMENT: say which session (vigil export ID --html report.html), or --fleet ID.",
              file=sys.stderr)
        return 2
    test = getattr(args, "playwright", None)  # (the option is engine.cli.export_test's)
    if not (args.html or args.json or args.trace or test):
        print("vigil export: BAD_ARGUMENT: say what to write: --html report.html, --json trace.json, --trace "
              "trace.zip and/or --playwright test_x.py.", file=sys.stderr)
        return 2
    try:
        with Store.open(check="now") as store:
            sid = store.resolve_id(args.id)
            paths = write_export(store, sid, html_path=args.html, json_path=args.json, trace_path=args.trace,
                                 test_path=test)
    except VigilError as exc:
        return _fail("export", exc)
    for p in paths:
        print(p)
    return 0


def _export_fleet(args: argparse.Namespace) -> int:
    from engine.store import Store
    from engine.store.fleet_report import write_fleet_summary
    if args.id or args.json or args.trace or getattr(args, "playwright", None) or not args.html:
        print("vigil export: BAD_ARGUMENT: a fleet exports as one summary page: vigil export --fleet ID --html "
              "fleet.html (each run's report is written beside it).", file=sys.stderr)
        return 2
    try:
        with Store.open(check="now") as store:
            paths = write_fleet_summary(store, args.fleet, args.html)
    except VigilError as exc:
        return _fail("export", exc)
    print(paths[0])
    print(f"  and {len(paths) - 1} run report(s) in {paths[0].with_suffix('').name}_runs/", file=sys.stderr)
    return 0


def _recover(args: argparse.Namespace) -> int:
    from engine.store.location import default_path
    from engine.store.recover import recover
    if args.delete or args.fleet:
        print("vigil sessions: BAD_ARGUMENT: --recover works on the whole store; give it alone (or with --json).",
              file=sys.stderr)
        return 2
    source = default_path()
    print(f"Recovering the sessions of {source} (it is only read)…", file=sys.stderr, flush=True)
    try:
        rec = recover(source)
    except VigilError as exc:
        return _fail("sessions", exc)
    if args.json:
        print(json.dumps(rec.as_json(), ensure_ascii=False))
        return 0
    print(_recovered_words(rec))
    return 0


def _recovered_words(rec) -> str:
    """What `--recover` did, what was lost, and how to put the new store in place."""
    before = f" of the {rec.sessions_before} the damaged store counts" if rec.sessions_before is not None else ""
    lines = [f"Recovered {rec.sessions} session(s){before} ({rec.steps} steps, {rec.blobs} pictures and snapshots) "
             f"into {rec.target}", f"  read {rec.method}; the damaged store {rec.source} was not changed."]
    lost = [f"{n} unreadable stretch(es) of {t}" for t, n in rec.damaged_stretches.items()]
    lost += [f"{n} {words}" for words, n in rec.left_out.items()]
    if rec.unplaced:
        lost.append(f"{rec.unplaced} rows SQLite found but could not place in a table")
    # (a damaged index or free page loses no row: the store in place is refused all the same)
    lines.append("  lost: " + "; ".join(lost) + "." if lost else "  nothing was found missing: every row read back "
                 "whole.")
    src, dst = rec.source, rec.target
    lines += ["To use it in place of the damaged store (with no Vigil running):",
              f"  mv '{src}' '{src}.broken'    # and its '-wal' and '-shm' files, if present",
              f"  mv '{dst}' '{src}'",
              f"(The store is {src.name} in VIGIL_HOME's folder, {src.parent}: to look at the recovered one "
              "first, put it as sessions.db in another folder and run VIGIL_HOME=that-folder vigil sessions.)"]
    return "\n".join(lines)


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
