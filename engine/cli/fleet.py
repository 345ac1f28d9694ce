"""`vigil fleet FILE [--parallel N] [--approve ask|auto-safe|auto] [--browsers URL[,URL…] | --grid URL
[--retry-lost]] [--max-steps N] [--json]` and `vigil fleet --resume ID [FILE]`: many runs, one person, one
approval queue (engine.fleet).

Prints a line per run change and per step, each naming its run (with --json: only
{"fleet": ID, "runs": [{"name", "task", "status", "session", "browser", "steps", "answer"|"reason"}]} on
stdout; prompts and progress go to stderr). Under ask, the terminal asks one step at a time in the order
the runs asked, naming the run; q stops that run, end of input stops the fleet. Exit codes: 0 every run
done, 1 otherwise, 2 bad input (the fleet file, an option, a fleet that cannot be resumed).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from typing import Any, TextIO

from engine.errors import VigilError
from engine.models import POLICIES, StepRecorded

COMMAND = "fleet"


def add_fleet_parser(sub: Any) -> argparse.ArgumentParser:
    f = sub.add_parser("fleet", help="supervise many runs at once through one approval queue",
                       description="Run every run of a fleet file (JSON or YAML: runs with task, url, planner, "
                                   "script …, or a template with CSV rows), at most --parallel at once, each in its "
                                   "own browser context, every question in one queue.")
    f.add_argument("file", nargs="?", help="the fleet file (with --resume: only if it moved)")
    f.add_argument("--resume", metavar="ID", help="go on with a recorded fleet: re-run the runs that had not "
                                                  "finished, keep those that had")
    f.add_argument("--parallel", type=int, default=None, help="runs at once (default 1)")
    f.add_argument("--approve", choices=POLICIES, default=None,
                   help="for every run that does not set its own: ask (default), auto-safe or auto")
    f.add_argument("--browsers", metavar="URL[,URL…]",
                   help="remote Chromium DevTools endpoints (http://host:9222 or ws://…), least busy first; "
                        "default: one local Chromium, a browser context per run")
    f.add_argument("--grid", metavar="URL",
                   help="a Selenium Grid 4 (http://hub:4444): a browser session per run, kept alive while it runs, "
                        "deleted when it ends; a DevTools endpoint (ws://…, http://host:9222) works as --browsers. "
                        "Default: the fleet file's grid:")
    f.add_argument("--retry-lost", action="store_true",
                   help="a run whose browser or grid node went away is started again on a new session")
    f.add_argument("--max-steps", type=int, default=None, help="per run, unless it sets its own (default 30)")
    f.add_argument("--json", action="store_true", help="print only the fleet's outcome as one JSON object")
    f.add_argument("--headed", action="store_true", help="show the local browser (needs a display)")
    f.add_argument("--timeout", type=float, default=30.0, help="seconds to load each start page (default 30)")
    f.add_argument("--no-record", action="store_true", help="keep nothing in the session store (no --resume then)")
    return f


def _fail(msg: str, code: str = "BAD_ARGUMENT") -> int:
    print(f"vigil {COMMAND}: {code}: {msg}", file=sys.stderr)
    return 2


def grid_label(fleet: Any) -> str:
    """The fleet's grid as it may be printed: a browserless URL without its token."""
    grid = getattr(fleet.pool, "grid", None)
    return grid.label if grid is not None else str(fleet.grid)


def parse_browsers(text: str | None) -> list[str]:
    """`http://h:9222,ws://…` → the endpoint URLs; VigilError naming a bad one."""
    if not text:
        return []
    out = []
    for raw in text.split(","):
        u = raw.strip()
        if not u:
            continue
        if not u.startswith(("http://", "https://", "ws://", "wss://")):
            raise VigilError(f"--browsers: {u!r} is not a DevTools endpoint; give http://host:9222 (what "
                             "--remote-debugging-port serves) or a ws:// browser URL.")
        out.append(u.rstrip("/") if u.startswith("http") else u)
    if not out:
        raise VigilError("--browsers names no endpoint.")
    return out


async def fleet_command(args: argparse.Namespace, *, stdin: TextIO | None = None) -> int:
    from engine.fleet import Fleet, load_fleet

    for opt, v in (("--parallel", args.parallel), ("--max-steps", args.max_steps)):
        if v is not None and v < 1:
            return _fail(f"{opt} must be at least 1.")
    if not args.file and not args.resume:
        return _fail("give a fleet file (vigil fleet FLEET.yaml), or --resume ID.")
    try:
        browsers = parse_browsers(args.browsers)
        grid = parse_browsers(args.grid)[0] if getattr(args, "grid", None) else None
    except VigilError as exc:
        return _fail(exc.message.replace("--browsers", "--grid") if args.grid else exc.message, exc.code)
    if grid and browsers:
        return _fail("give either --browsers or --grid, not both.")
    retry_lost = bool(getattr(args, "retry_lost", False))
    store = None
    if not args.no_record:
        from engine.store import Store
        try:
            store = Store.open()
        except VigilError as exc:
            return _fail(f"{exc.message} To run without keeping the fleet, add --no-record.", exc.code)
    elif args.resume:
        return _fail("--resume reads the fleet from the session store; it cannot be used with --no-record.")
    try:
        if args.resume:
            from engine.fleet.resume import resume_fleet
            fleet = resume_fleet(store, args.resume, path=args.file, parallel=args.parallel, approve=args.approve,
                                 browsers=browsers if args.browsers else None, max_steps=args.max_steps,
                                 headless=not args.headed, timeout=args.timeout, grid=grid, retry_lost=retry_lost)
        else:
            spec = load_fleet(args.file)
            fleet = Fleet(spec, parallel=args.parallel or 1, approve=args.approve or "ask", browsers=browsers,
                          max_steps=args.max_steps or 30, store=store, headless=not args.headed, timeout=args.timeout,
                          grid=grid, retry_lost=retry_lost)
        return await _run(fleet, args, stdin)
    except VigilError as exc:
        return _fail(exc.message, exc.code)
    finally:
        if store is not None:
            store.close()


class PromptLine:
    """The stream the prompt is written to, knowing the prompt it left open ("… [q]uit > " awaiting an answer):
    a line of another run printed meanwhile goes on a line of its own, and the prompt is written again under it
    (printed onto the prompt, a step's result read as the person's answer and hid the question)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.open = ""   # what the last write left on its line: an open prompt
        self.owed = False  # an answer read from input that does not echo (a pipe): its line is not ended yet

    def write(self, text: str) -> int:
        if self.owed and text:
            self.owed = False
            if not text.startswith("\n"):
                self.stream.write("\n")
        n = self.stream.write(text)
        tail = text.rpartition("\n")
        self.open = tail[2] if tail[1] else self.open + text
        return n

    def flush(self) -> None:
        self.stream.flush()

    def line(self, text: str, stream: TextIO | None = None) -> None:
        """`text` on a line of its own (on `stream`, default this one), the open prompt again after it."""
        prompt, self.open = self.open, ""
        if prompt or self.owed:
            self.owed = False
            self.stream.write("\n")
            self.stream.flush()
        print(text, file=stream or self, flush=True)
        if prompt:
            self.write(prompt)
            self.flush()

    def answered(self, echoed: bool) -> None:
        """The person's line ended the prompt: their terminal echoed it (a newline), or it came from a pipe
        (nothing echoed: the next line starts with one)."""
        self.owed = bool(self.open) and not echoed
        self.open = ""


async def _run(fleet: Any, args: argparse.Namespace, stdin: TextIO | None) -> int:
    from engine.cli.run import step_line
    from engine.fleet.words import status_word

    out = PromptLine(sys.stderr if args.json else sys.stdout)
    kept = [r for r in fleet.runs if r.kept]
    print(f"fleet {fleet.id}: {len(fleet.runs)} runs" + (f" ({len(kept)} kept from before)" if kept else "")
          + f", {fleet.parallel} at once, on " + (f"the grid {grid_label(fleet)}" if fleet.grid else "")
          + ("" if fleet.grid else ", ".join(fleet.browsers) or "a local Chromium"), file=out,
          flush=True)
    seen: dict[str, str] = {}

    def changed(ch: Any) -> None:
        r = ch.run
        if ch.kind != "run" or r is None:
            return
        if r.loop is not None and f"bus:{r.name}" not in seen:
            seen[f"bus:{r.name}"] = "1"
            if not args.json:
                r.loop.bus.subscribe(lambda ev, name=r.name: out.line(f"[{name}] {step_line(ev.record)}", sys.stdout)
                                     if isinstance(ev, StepRecorded) else None)
        if r.waiting_for and seen.get(r.name) != "browser":
            seen[r.name] = "browser"
            out.line(f"[{r.name}] {status_word('browser')} (the grid's slots are all busy)")
            return
        if r.retried and seen.get(f"retry:{r.name}") != str(len(r.retried)):
            seen[f"retry:{r.name}"] = str(len(r.retried))
            out.line(f"[{r.name}] started again on a new browser: {r.retried[-1]}")
        if seen.get(r.name) == r.state or r.state == "waiting":
            return
        seen[r.name] = r.state
        extra = {"running": f" on {r.browser}" if r.browser else "", "done": f": {r.answer or ''}",
                 "failed": f": {r.reason}", "stopped": f": {r.reason}"}.get(r.state, "")
        out.line(f"[{r.name}] {status_word(r.state)}{extra}")

    fleet.subscribe(changed)
    asker = None
    if any((r.spec.approve or fleet.approve) != "auto" for r in fleet.runs if not r.kept):
        asker = asyncio.ensure_future(_terminal(fleet, stdin, out))
    try:
        result = await fleet.run()
    except KeyboardInterrupt:
        fleet.stop_all("interrupted")
        raise
    finally:
        if asker is not None:
            asker.cancel()
            with contextlib.suppress(BaseException):
                await asker
    if args.json:
        import json
        print(json.dumps(result.to_json(), ensure_ascii=False))
    else:
        print(summary_table(result.runs), flush=True)
    if fleet.store is not None:
        print(f"vigil fleet: kept as fleet {fleet.id} (vigil sessions --fleet {fleet.id}; vigil export --fleet "
              f"{fleet.id} --html fleet.html" + ("" if result.ok else f"; vigil fleet --resume {fleet.id}") + ")",
              file=sys.stderr)
    return result.exit_code


def summary_table(runs: list[Any]) -> str:
    from engine.fleet.words import status_word

    w = max(4, *(len(r.name) for r in runs))
    lines = [f"{'RUN':<{w}}  {'STATUS':<8}  {'STEPS':>5}  {'TIME':>7}  {'BROWSER':<22}  ANSWER / REASON"]
    for r in runs:
        secs = f"{r.seconds:.1f}s" if r.seconds is not None else "-"
        what = (r.answer if r.state == "done" else r.reason) or ""
        what = what if len(what) <= 90 else what[:89] + "…"
        browser = (r.browser or "-")[:22]
        lines.append(f"{r.name:<{w}}  {status_word(r.state):<8}  {r.steps:>5}  {secs:>7}  {browser:<22}  {what}"
                     + ("  (kept)" if r.kept else ""))
    done = sum(r.state == "done" for r in runs)
    lines.append(f"{done} of {len(runs)} runs done")
    return "\n".join(lines)


async def _terminal(fleet: Any, stdin: TextIO | None, out: PromptLine) -> None:
    """Under ask: the oldest waiting question at the prompt, one at a time, naming its run."""
    from engine.fleet.queue import QueueError
    from engine.loop.gates import TerminalGate
    from engine.models import Decision

    gate = TerminalGate(stdin=stdin, out=out)  # type: ignore[arg-type]  # a stream: write and flush
    read, stream = gate._reader.readline, gate._reader.stream
    echoed = bool(getattr(stream, "isatty", lambda: False)())

    async def readline() -> str | None:  # the person's line ends the open prompt, as soon as it is read
        line = await read()
        out.answered(echoed)
        return line
    gate._reader.readline = readline  # type: ignore[method-assign]
    while True:
        entry = await fleet.queue.next_waiting()
        others = len(fleet.queue.waiting) - 1
        out.line(f"\n── run {entry.run}" + (f" ({others} more waiting)" if others > 0 else "") + " ──")
        fleet.queue.mark_shown(entry.id)
        gate.grant_offer = lambda req, run=entry.run: fleet.grant_offer(req, run)
        gate.grant_give = lambda req, run=entry.run: fleet.grant_for_request(req, run)
        ask = asyncio.ensure_future(gate.decide(entry.request))
        gone = asyncio.Event()
        stop_watch = fleet.queue.subscribe(lambda ch, e=entry, g=gone: g.set()
                                           if ch.entry is e and ch.kind in ("withdrawn", "answered") else None)
        waiter = asyncio.ensure_future(gone.wait())
        try:
            await asyncio.wait({ask, waiter}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop_watch()
            waiter.cancel()
        if not ask.done():
            ask.cancel()
            out.line(f"  (run {entry.run} no longer waits for this step)")
            continue
        decision: Decision = ask.result()
        if decision.kind == "stop" and decision.reason == "end of input":
            fleet.stop_all("end of input at the prompt")
            return
        with contextlib.suppress(QueueError):
            fleet.queue.answer(entry.id, decision)
