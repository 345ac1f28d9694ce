"""`vigil gui --fleet FILE`: the Fleet view on its own (gui.fleet.fleet_window), with the same options as
`vigil fleet` (--parallel, --approve, --browsers or --grid, --retry-lost, --max-steps). The fleet is checked
before any window opens (a bad file is exit 2 with what is wrong); each run is kept as a session under the
fleet's ID; the window stays open on the outcome until it is closed, and the terminal says how to export or
resume it. (The main window's "Fleet…" is gui.fleet.fleet_dialog.)"""

from __future__ import annotations

import signal
import sys
from typing import Any

PROG = "vigil gui --fleet"


def fleet_from_args(args: Any) -> tuple[Any, Any]:
    """(Fleet, Store) from the parsed options; VigilError naming what is wrong."""
    from engine.cli.fleet import parse_browsers
    from engine.fleet import Fleet, load_fleet
    from engine.store import Store

    for opt, v in (("--parallel", args.parallel), ("--max-steps", args.max_steps)):
        if v is not None and v < 1:
            from engine.errors import ErrorCode, VigilError
            raise VigilError(f"{opt} must be at least 1.", code=ErrorCode.BAD_ARGUMENT)
    browsers = parse_browsers(args.browsers)
    grid = parse_browsers(args.grid)[0] if getattr(args, "grid", None) else None
    if grid and browsers:
        from engine.errors import ErrorCode, VigilError
        raise VigilError("give either --browsers or --grid, not both.", code=ErrorCode.BAD_ARGUMENT)
    spec = load_fleet(args.fleet)
    store = Store.open()
    try:
        fleet = Fleet(spec, parallel=args.parallel or 1, approve=args.approve or "ask", browsers=browsers,
                      max_steps=args.max_steps or 30, store=store, headless=not args.headed, grid=grid,
                      retry_lost=bool(getattr(args, "retry_lost", False)))
    except Exception:
        store.close()
        raise
    return fleet, store


def run_fleet_gui(args: Any) -> int:
    from engine.errors import VigilError
    from gui.app.display import display_problem

    problem = display_problem()
    if problem:
        print(f"{PROG}: NO_DISPLAY: {problem}", file=sys.stderr)
        return 2
    try:
        fleet, store = fleet_from_args(args)
    except VigilError as exc:
        print(f"{PROG}: {exc.code}: {exc.message}", file=sys.stderr)
        return 2
    from gui.app.qt_loop import qt_event_loop
    from gui.fleet.fleet_window import FleetWindow

    loop = qt_event_loop()

    async def main() -> int:
        window = FleetWindow(fleet)
        window.place_on()
        window.show()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: loop.call_soon_threadsafe(window.close))
        await window.start()
        print(f"{PROG}: fleet {fleet.id}: {len(fleet.runs)} runs, {fleet.parallel} at once, approve "
              f"{fleet.approve}", file=sys.stderr, flush=True)
        await window.closed
        result = window.result
        if result is None:
            return 1
        print(f"{PROG}: fleet {fleet.id}: " + ", ".join(f"{r.name} {r.state}" for r in result.runs)
              + f" (vigil export --fleet {fleet.id} --html fleet.html"
              + ("" if result.ok else f"; vigil fleet --resume {fleet.id}") + ")", file=sys.stderr)
        return result.exit_code

    try:
        with loop:
            return loop.run_until_complete(main())
    except KeyboardInterrupt:
        return 130
    finally:
        store.close()
