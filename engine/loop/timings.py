"""Where a step's time went: the phases a step record's `timings_ms` holds, in the order they are spent,
how the loop measures them, and how `vigil run` and the window's chat say them."""

from __future__ import annotations

import time

# where a step's time goes, in the order it is spent (keys of StepRecord.timings_ms)
PHASES = ("observe", "model", "approval", "act", "settle", "verify", "screenshots")


def ms_since(t: float) -> float:
    """The milliseconds since `t` (a `time.monotonic()` reading), to a tenth."""
    return round((time.monotonic() - t) * 1000, 1)


def split_action(timings: dict[str, float], whole_ms: float, parts: dict[str, float]) -> None:
    """Where an action's time went (`whole_ms`, from its input to the end of its check): the page settling and
    the verification as the action layer measured them (`parts`), and the action itself (the rest)."""
    for phase in ("settle", "verify"):
        if phase in parts:
            timings[phase] = parts[phase]
    timings["act"] = round(max(0.0, whole_ms - timings.get("settle", 0) - timings.get("verify", 0)), 1)


def ms_text(ms: float) -> str:
    """A duration for people: `840 ms`, `1.42 s`, `12.3 s`."""
    if ms < 1000:
        return f"{ms:.0f} ms"
    return f"{ms / 1000:.2f} s" if ms < 10_000 else f"{ms / 1000:.1f} s"


def step_phases(timings: dict[str, float]) -> list[tuple[str, float]]:
    """The phases a step spent time in, in order; what no phase accounts for (grounding waits,
    reading page events) is `other`."""
    parts = [(k, float(timings[k])) for k in PHASES if timings.get(k) is not None]
    total = timings.get("total")
    if total is not None:
        rest = float(total) - sum(v for _, v in parts)
        if rest >= 1:
            parts.append(("other", rest))
    return parts


def step_duration(timings: dict[str, float]) -> float | None:
    """The step's wall time in ms (its `total`, else the sum of its phases), or None when unknown."""
    if timings.get("total") is not None:
        return float(timings["total"])
    parts = step_phases(timings)
    return sum(v for _, v in parts) if parts else None


def timing_line(timings: dict[str, float]) -> str:
    """`1.42 s: observe 120 ms · model 3 ms · approval 0 ms · act 95 ms · settle 310 ms · verify 20 ms`."""
    total = step_duration(timings)
    if total is None:
        return ""
    return f"{ms_text(total)}: " + " · ".join(f"{k} {ms_text(v)}" for k, v in step_phases(timings))
