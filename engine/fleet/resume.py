"""`vigil fleet --resume ID`: the runs of a recorded fleet that had not finished run again (each as a new
session, grouped under the same fleet id); the runs that had finished (done, failed or stopped) are kept
as they were. The fleet file is read again from where it was (or from the path given): its runs must
still be the same runs (name, task, URL, in the same order) — else a FleetSpecError says which differs."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from engine.fleet.runner import Fleet, FleetRun
from engine.fleet.spec import FleetSpecError, load_fleet

log = logging.getLogger("vigil.fleet")


def _ts(iso: str | None) -> float | None:
    if not iso:
        return None
    try:
        return datetime.fromisoformat(iso).timestamp()
    except ValueError:
        return None


def resume_fleet(store: Any, fleet_id: str, *, path: str | None = None, parallel: int | None = None,
                 approve: str | None = None, browsers: list[str] | None = None, max_steps: int | None = None,
                 headless: bool = True, timeout: float = 30.0, grid: str | None = None,
                 retry_lost: bool = False) -> Fleet:
    """A Fleet that goes on with the recorded fleet `fleet_id` (a unique prefix will do). Options not given
    are those the fleet last ran with. FleetSpecError / StoreError when it cannot be resumed."""
    from engine.store.fleets import FleetBook

    book = FleetBook(store)
    rec = book.load(fleet_id)
    pid = book.running_elsewhere(rec.id)
    if pid is not None:
        raise FleetSpecError(f"Fleet {rec.id} is still running (process {pid}); stop that process first, or wait "
                             "for it to end.")
    source = path or rec.path
    if not source:
        raise FleetSpecError(f"Fleet {rec.id} was not started from a file; it cannot be resumed.")
    try:
        spec = load_fleet(source)
    except FleetSpecError as exc:
        raise FleetSpecError(f"Fleet {rec.id} cannot be resumed: {exc.message} (pass the fleet file: "
                             f"vigil fleet FILE --resume {rec.id[:8]})") from None
    if len(spec.runs) != len(rec.runs):
        raise FleetSpecError(f"Fleet {rec.id} had {len(rec.runs)} runs, but {source} now lists {len(spec.runs)}: "
                             "it is not the same fleet. Start it as a new fleet instead.")
    for r, s in zip(rec.runs, spec.runs, strict=True):
        was = {"name": r.name, "task": r.task, "url": r.url}
        for key, value in s.identity().items():
            if was[key] != value:
                raise FleetSpecError(f"Fleet {rec.id}, run {r.index + 1} ({r.name!r}): its {key} was {was[key]!r} "
                                     f"and {source} now says {value!r}: it is not the same fleet.")
    if spec.digest != rec.digest:
        log.warning("fleet file %s changed since fleet %s ran (the same runs; their scripts may differ)", source,
                    rec.id)
    keep: dict[int, FleetRun] = {}
    for r in rec.runs:
        if r.finished:
            keep[r.index] = FleetRun(spec=spec.runs[r.index], state=r.status,  # type: ignore[arg-type]
                                     session_id=r.session_id, browser=r.browser, steps=r.steps, answer=r.answer,
                                     reason=r.reason, started_at=_ts(r.started_at), ended_at=_ts(r.ended_at),
                                     kept=True)
    opts = rec.options
    return Fleet(spec, parallel=parallel or int(opts.get("parallel") or 1),
                 approve=approve or str(opts.get("approve") or "ask"),
                 browsers=browsers if browsers is not None else list(opts.get("browsers") or []),
                 max_steps=max_steps or int(opts.get("max_steps") or 30), store=store, fleet_id=rec.id,
                 headless=headless, timeout=timeout, keep=keep, grid=grid or opts.get("grid") or None,
                 retry_lost=retry_lost or bool(opts.get("retry_lost")))
