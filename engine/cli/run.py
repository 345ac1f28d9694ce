"""`vigil run "TASK" --url URL [--planner heuristic|openai|backend|script] [--script FILE]
[--base-url URL --model NAME] [--backend-url URL] --approve ask|auto|auto-safe [--max-steps N] [--json] [--headed]
[--trace PATH]`

Prints one line per step (or, with --json, only the RunResult as JSON on stdout; the approval
prompt then goes to stderr). Exit codes: 0 finished, 1 failed or stopped, 2 bad arguments or
script, or a page that could not be opened, or a `--trace` zip that could not be written (the run is recorded:
`vigil export ID --trace PATH` writes it again).
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import TextIO

from engine.errors import VigilError
from engine.loop.timings import timing_line
from engine.models import POLICIES, Action, RunResult, StepRecord, StepRecorded
from engine.planners.registry import PLANNERS

_WORDS = {"completed": "ok", "failed": "FAILED", "skipped": "skipped", "rejected": "rejected", "stopped": "stopped"}
def add_run_parser(subparsers) -> argparse.ArgumentParser:
    """Add the `run` command to a `vigil` argparse sub-parser set."""
    r = subparsers.add_parser("run", help="run a task on a page, one approved step at a time",
                              description="Run a task on a live page: the planner proposes each step, you approve "
                                          "it (or the policy does), Vigil acts and verifies.")
    r.add_argument("task", help="what to do, in words (shown to the planner and recorded)")
    r.add_argument("--url", required=True, help="the page to start on (http(s) URL or a local HTML file)")
    r.add_argument("--planner", choices=PLANNERS, default=None,
                   help="who proposes the steps: heuristic (offline, the default), openai (any OpenAI-compatible "
                        "model), backend (a /api/agent/interact server), script (a file of steps; implied by "
                        "--script)")
    r.add_argument("--script", help="for --planner script: a JSON or YAML list of steps")
    r.add_argument("--base-url", help="for --planner openai: the server (else VIGIL_BASE_URL / OPENAI_BASE_URL); "
                                      "the key comes from VIGIL_API_KEY / OPENAI_API_KEY only")
    r.add_argument("--model", help="for --planner openai: the model name (else VIGIL_MODEL / OPENAI_MODEL)")
    r.add_argument("--vision", action="store_true", help="for --planner openai: the model can see screenshots")
    r.add_argument("--no-tools", action="store_true", help="for --planner openai: JSON replies instead of tool calls")
    r.add_argument("--backend-url", help="for --planner backend: the backend's base URL (else VIGIL_BACKEND_URL)")
    add_loop_options(r)
    return r


def add_loop_options(r: argparse.ArgumentParser, *, max_steps_default: int | None = 30,
                     max_steps_help: str = "default 30") -> None:
    """The options every command that runs the loop shares (`run`, `replay`)."""
    r.add_argument("--approve", choices=POLICIES, default="ask",
                   help="ask: every step at a prompt (default); auto-safe: only sensitive steps; auto: never")
    r.add_argument("--max-steps", type=int, default=max_steps_default,
                   help=f"end with an error after this many steps ({max_steps_help})")
    r.add_argument("--json", action="store_true", help="print the whole run as one JSON object")
    r.add_argument("--headed", action="store_true", help="show the browser window (needs a display)")
    r.add_argument("--timeout", type=float, default=30.0, help="seconds to load the start page (default 30)")
    r.add_argument("--no-record", action="store_true",
                   help="do not keep this run in the session store (`vigil sessions` lists the kept ones)")
    r.add_argument("--trace", metavar="PATH",
                   help="when the run ends, write its recorded session as a Playwright trace zip (playwright "
                        "show-trace PATH), as vigil export ID --trace PATH does, with Playwright's own trace of the "
                        "run beside it (network, console, DOM snapshots; form values and typed secrets scrubbed)")


def _fail(msg: str, code: str = "BAD_ARGUMENT", command: str = "run") -> int:
    print(f"vigil {command}: {code}: {msg}", file=sys.stderr)
    return 2


def step_line(rec: StepRecord) -> str:
    """One line per step: number, outcome, what ran (typed secrets stay masked), and what happened."""
    word = _WORDS.get(rec.status, rec.status)
    if rec.status == "completed" and rec.verification is not None and not rec.verification.success:
        word = "unverified"  # the action ran, but what it should have done was not seen
    if rec.action is not None and rec.action.name == "fail":
        word = "FAILED"  # the planner gave up: the run fails (exit status 1)
    who = " (you)" if rec.actor == "human" else ""
    if rec.result is not None:
        what, detail = rec.result.action, rec.result.message
    elif rec.actor == "human" and rec.action is None:
        what, detail = "acted in the page directly", f"instead of: {rec.proposal.description}" if rec.proposal else ""
    elif rec.action is not None:
        what, detail = rec.action.to_string(), rec.note
    elif rec.proposal is not None:
        what, detail = rec.proposal.description or rec.proposal.action.to_string(), rec.note
    else:
        what, detail = "acted in the page", rec.note
    timing = timing_line(rec.timings_ms)
    tab = f" (tab {rec.tab.index})" if rec.tab is not None and rec.tab.index else ""
    return (f"[{rec.index + 1}] {word:<8} {what}{who}{tab}" + (f" — {detail}" if detail else "")
            + (f" [{timing}]" if timing else ""))


def result_line(result: RunResult) -> str:
    note = (" (note: " + "; ".join(result.incidents) + ")") if result.incidents else ""
    if result.status == "success":
        return "finished" + (f": {result.answer}" if result.answer else "") + note
    if result.status == "interrupted":
        return f"stopped: {result.reason or 'by request'}{note}"
    return f"failed: {result.reason}{note}"


async def run_command(args: argparse.Namespace, *, stdin: TextIO | None = None) -> int:
    """Run `vigil run` with parsed arguments; returns the exit code (never raises for bad input)."""
    from engine.browser.target import normalize_url
    from engine.planners.registry import make_planner

    if args.max_steps < 1:
        return _fail("--max-steps must be at least 1.")
    try:
        name = args.planner or ("script" if args.script else "heuristic")
        planner = make_planner(name, script=args.script, base_url=args.base_url, model=args.model,
                               backend_url=args.backend_url, vision=args.vision, tools=not args.no_tools)
        url = normalize_url(args.url)
    except VigilError as exc:
        return _fail(exc.message, exc.code)
    return await execute(args, planner, name, args.task, url, stdin=stdin)


async def execute(args: argparse.Namespace, planner, planner_name: str, task: str, url: str, *,
                  stdin: TextIO | None = None, metadata: dict | None = None, command: str = "run") -> int:
    """Open `url`, run `task` with `planner` under the options of `add_loop_options`, record it in
    the session store (unless --no-record) and print the outcome; returns the exit code."""
    from engine import launch
    from engine.loop.gates import AutoApprove, TerminalGate
    from engine.loop.planner import close_planner
    from engine.loop.runner import AgentLoop

    def fail(msg: str, code: str = "BAD_ARGUMENT") -> int:
        return _fail(msg, code, command)

    if args.max_steps < 1:
        return fail("--max-steps must be at least 1.")
    unwritable = _trace_problem(args)
    if unwritable:  # (said before anything runs: a run is not repeated for a trace that could not be written)
        await close_planner(planner)
        return fail(unwritable)
    recorder = None
    live_files: dict[str, bytes] = {}  # Playwright's own trace of the run, scrubbed (with --trace)
    if not args.no_record:
        from engine.store import Store
        from engine.store.recorder import SessionRecorder
        try:
            recorder = SessionRecorder(Store.open())
        except VigilError as exc:
            await close_planner(planner)
            return fail(f"{exc.message} To run without keeping the session, add --no-record.", exc.code)
        except sqlite3.Error as exc:  # e.g. a full disk while a dead run's session is marked interrupted
            from engine.store.location import default_path
            from engine.store.reserve import disk_full, full_advice
            await close_planner(planner)
            advice = f" {full_advice(default_path())}" if disk_full(exc) else ""
            return fail(f"The session store {default_path()} could not be opened: {exc}.{advice} To run without "
                        "keeping the session, add --no-record.", "STORE_UNAVAILABLE")
        why = recorder.no_room()
        if why:  # (said before a browser is started for nothing; `start` checks again)
            recorder.store.close()
            await close_planner(planner)
            return fail(f"{why} Nothing was run. To run without keeping the session, add --no-record.", "STORE_ERROR")
    out = sys.stderr if args.json else sys.stdout
    gate = AutoApprove() if args.approve == "auto" else TerminalGate(stdin=stdin, out=out)
    try:
        async with launch(headless=not args.headed) as browser:
            try:
                tab = await browser.new_tab(url, timeout=args.timeout)
            except VigilError as exc:
                await close_planner(planner)
                return fail(exc.message, exc.code)
            if isinstance(gate, TerminalGate):  # a take-over in plain words, as the window takes it
                gate.ground = lambda text: ground_words(tab, text)
            loop = AgentLoop(tab, planner, gate=gate, policy=args.approve, max_steps=args.max_steps)
            if not args.json:
                loop.bus.subscribe(lambda ev: print(step_line(ev.record), flush=True)
                                   if isinstance(ev, StepRecorded) else None)
            if recorder is not None and recorder.start(loop, task, tab.url, planner=planner_name,
                                                       policy=args.approve, metadata=metadata) is None:
                # never a run that acts unrecorded (a full disk: no room for its steps' records)
                await close_planner(planner)
                return fail(f"{recorder.cause} Nothing was run. To run without keeping the session, add "
                            "--no-record.", recorder.cause_code)
            live = None
            if getattr(args, "trace", None):  # (Playwright's own trace: its module is needed only then)
                from engine.store.live_trace import LiveTrace
                live = LiveTrace(loop)
                await live.start()
            try:
                result = await loop.run(task)
            finally:
                await close_planner(planner)
                if live is not None:
                    live_files = await _live_files(live, loop)
            if recorder is not None:
                recorder.finish(result)
    except VigilError as exc:  # the browser could not start
        return fail(exc.message, exc.code)
    finally:
        if recorder is not None:
            recorder.store.close()
    if args.json:
        print(result.model_dump_json())
    else:
        print(result_line(result), flush=True)
    if recorder is not None:
        if recorder.error:
            print(f"vigil {command}: {recorder.error}", file=sys.stderr)
        elif recorder.session_id:
            print(f"vigil {command}: kept as session {recorder.session_id[:8]} (vigil export "
                  f"{recorder.session_id[:8]} --html report.html)", file=sys.stderr)
            if getattr(args, "trace", None) and not _write_trace(recorder.session_id, args.trace, command,
                                                                 live_files):
                return 2
    return result.exit_code


def _trace_problem(args: argparse.Namespace) -> str:
    """Why `--trace PATH` cannot be honoured ("" when it can): it exports the recorded session, into a folder
    that exists."""
    path = getattr(args, "trace", None)
    if not path:
        return ""
    if args.no_record:
        return "--trace writes the recorded session: it cannot go with --no-record."
    from engine.store.report import _check
    try:
        _check(Path(path).expanduser(), "Playwright trace")
    except VigilError as exc:
        return exc.message
    return ""


async def _live_files(live, loop) -> dict[str, bytes]:
    """Playwright's trace of the run, stopped and scrubbed of every secret the run typed (engine.store.live_trace)."""
    from engine.store.live_trace import scrub_live
    with tempfile.TemporaryDirectory(prefix="vigil-trace-") as tmp:
        raw = await live.stop(Path(tmp) / "live.zip")
        try:
            return scrub_live(raw.read_bytes(), loop.journal.secrets) if raw is not None else {}
        except (OSError, ValueError, zipfile.BadZipFile) as exc:  # the trace from the store is written all the same
            print(f"vigil: Playwright's own trace of the run is left out: {exc}", file=sys.stderr)
            return {}


def _write_trace(session_id: str, path: str, command: str, live_files: dict[str, bytes]) -> bool:
    """The recorded session's Playwright trace at `path` (with Playwright's own, when it was taken); False (said on
    stderr) when it could not be written."""
    from engine.store import Store
    from engine.store.report import write_export
    try:
        with Store.open() as store:
            [out] = write_export(store, session_id, trace_path=path, trace_extra=live_files)
    except VigilError as exc:
        print(f"vigil {command}: {exc.code}: the Playwright trace was not written: {exc.message} (vigil export "
              f"{session_id[:8]} --trace PATH writes it again)", file=sys.stderr)
        return False
    print(f"vigil {command}: Playwright trace written to {out} (playwright show-trace {out})", file=sys.stderr)
    return True


async def ground_words(tab, text: str) -> Action:
    """The action plain words ("click Place order") mean on the tab's page, as the offline planner grounds
    them (the window's take-over does the same); VigilError when nothing there matches."""
    from engine.loop.planner import Observation
    from engine.planners.heuristic import HeuristicPlanner

    snap = await tab.snapshot()
    step = await HeuristicPlanner().propose(Observation(task=text, step_index=0, snapshot=snap, url=snap.url))
    if step.action.name in ("fail", "finish"):  # nothing to do on this page: not an action of the person's
        raise VigilError(step.action.reason or step.action.answer or "nothing on the page matches it.")
    if step.action.name == "scroll" and not text.lower().startswith("scroll"):  # the planner looking for it
        raise VigilError("nothing in view on the page matches it; scroll to it first (t, then: scroll down).")
    return step.action


def main(argv: list[str] | None = None) -> int:
    """`python -m engine.cli.run TASK --url … --script …` (the same as `vigil run`)."""
    p = argparse.ArgumentParser(prog="vigil")
    add_run_parser(p.add_subparsers(dest="cmd"))
    args = p.parse_args(["run", *(sys.argv[1:] if argv is None else argv)])
    try:
        return asyncio.run(run_command(args))
    except KeyboardInterrupt:
        print("vigil run: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
