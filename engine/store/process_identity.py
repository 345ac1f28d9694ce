"""Which process writes a running session, told apart from a later one that got the same pid: a
session (or fleet) row keeps its writer's pid and start time, and is still running only while that
very process is."""

from __future__ import annotations

import os
from pathlib import Path


def process_token(pid: int) -> str | None:
    """What identifies a running process across pid reuse (its start time), or None if it is not running."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return None
    except OSError:
        stat = ""
    if stat:
        fields = stat[stat.rindex(")") + 2:].split()  # fields from #3 (state) on; comm may hold spaces
        return None if fields[0] in ("Z", "X") else fields[19]  # #22: starttime in clock ticks
    try:
        import psutil
    except ImportError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass
        return "alive"  # no start time available: a reused pid reads as alive
    try:
        proc = psutil.Process(pid)
        return None if proc.status() == psutil.STATUS_ZOMBIE else repr(proc.create_time())
    except psutil.Error:
        return None


def writer_alive(pid: int | None, start: str | None) -> bool:
    """Is the process that owns a running session still that process (not gone, not a reused pid)?"""
    return pid is not None and process_token(pid) == start
