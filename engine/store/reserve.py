"""Room for the step that acts when the disk fills up: a reserve file beside the session store.

A step's input cannot be taken back, so its record must find room in the store even when the disk fills up
while the step runs. When the disk holding the store runs low (under LOW_WATER free), a file of `reserve_bytes()`
is kept beside it (`sessions.reserve`: allocated, not sparse, and not one of the `sessions.db*` files a backup
copies). When a write fails because the disk is full, the session recorder deletes that file and writes again
into the room it frees — the step that acted, the messages around it, the session's end — and stops the run
before its next step. Before each step's input the recorder checks that the room is there (one statvfs; one
stat more when the disk is low): when it is not, and cannot be made, that step does not run.

The room is not all the step's: SQLite may use part of it to checkpoint its WAL into the database file (up to the
WAL's size, about 4 MB with SQLite's default autocheckpoint), which the default 16 MB allows for. One file serves
every process recording into the store; the first to meet a full disk frees it, and the steps under way then
share its room; no new step starts until it can be made again (the file is missing, and there is no room for it).
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
import sqlite3
import threading
from pathlib import Path

log = logging.getLogger("vigil.store")

RESERVE_ENV = "VIGIL_STORE_RESERVE_MB"
DEFAULT_RESERVE_MB = 16
MB = 1024 * 1024
LOW_WATER = 512 * MB  # more free than this: a step's record has room without a reserve file
MAKE_SLACK = 1 * MB   # a reserve is made only when this much is left beside it (never a half-made one)
_SQLITE_FULL = 13
_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)


def reserve_bytes() -> int:
    """The reserve's size: `VIGIL_STORE_RESERVE_MB` (whole megabytes, at least 1), else 16 MB."""
    raw = os.environ.get(RESERVE_ENV, "").strip()
    try:
        mb = int(raw) if raw else DEFAULT_RESERVE_MB
    except ValueError:
        log.warning("%s=%r is not a whole number of megabytes; using %d", RESERVE_ENV, raw, DEFAULT_RESERVE_MB)
        mb = DEFAULT_RESERVE_MB
    return max(1, mb) * MB


def disk_full(exc: BaseException) -> bool:
    """Whether a write failed because the disk (or the user's quota) is full."""
    if isinstance(exc, sqlite3.Error):
        return getattr(exc, "sqlite_errorcode", None) == _SQLITE_FULL or "database or disk is full" in str(exc)
    return isinstance(exc, OSError) and exc.errno in _FULL_ERRNOS


def megabytes(n: int) -> str:
    return f"{n / MB:.1f} MB" if n < 10 * MB else f"{n // MB} MB"


class SpaceReserve:
    """The reserve file of one store (`reserve_for` gives the one of a store path in this process)."""

    def __init__(self, store_path: Path, size: int) -> None:
        self.store_path = store_path
        self.path = store_path.with_suffix(".reserve")
        self.size = size

    def free(self) -> int | None:
        """Bytes free to this user on the store's disk; None when it cannot be told."""
        try:
            return shutil.disk_usage(self.store_path.parent).free
        except OSError:
            return None

    def ready(self) -> bool:
        """Whether a step's record surely has room: plenty free, or the reserve in place (made now when it is
        missing and there is room for it). Never raises."""
        free = self.free()
        if free is None or free >= LOW_WATER:
            return True
        if self.present():
            return True
        return free >= self.size + MAKE_SLACK and self._make()

    def present(self) -> bool:
        try:
            return os.stat(self.path).st_size >= self.size
        except OSError:
            return False

    def release(self) -> bool:
        """Delete the reserve, freeing its room for the writes that follow; False when there was none."""
        try:
            os.unlink(self.path)
        except OSError:
            return False
        log.info("session store: the disk is full; released the %s kept beside %s", megabytes(self.size),
                 self.store_path)
        return True

    def _make(self) -> bool:
        """Allocate the file under a name of this process, then rename it: the reserve is whole or absent."""
        part = self.path.with_name(f"{self.path.name}.{os.getpid()}")
        try:
            fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                _allocate(fd, self.size)
            finally:
                os.close(fd)
            os.replace(part, self.path)
        except OSError as exc:
            log.info("session store: no reserve beside %s: %s", self.store_path, exc)
            try:
                os.unlink(part)
            except OSError:
                pass
            return False
        return True


def _allocate(fd: int, size: int) -> None:
    """Blocks really given to the file (a sparse file would reserve nothing)."""
    if hasattr(os, "posix_fallocate"):
        os.posix_fallocate(fd, 0, size)
        return
    chunk = b"\xa5" * MB  # where there is no fallocate: written, and not zeros a file system might not store
    for _ in range(0, size, MB):
        os.write(fd, chunk)


_reserves: dict[Path, SpaceReserve] = {}
_lock = threading.Lock()


def reserve_for(store_path: Path | str) -> SpaceReserve:
    """The one SpaceReserve of a store in this process (every recorder of the store shares it)."""
    path = Path(store_path).resolve()
    size = reserve_bytes()
    with _lock:
        got = _reserves.get(path)
        if got is None or got.size != size:
            got = _reserves[path] = SpaceReserve(path, size)
        return got


def full_advice(store_path: Path | str) -> str:
    """What to do about a full disk, naming where the store is."""
    return (f"Free some space on the disk holding {Path(store_path).parent} (or set VIGIL_HOME to a folder on "
            "another disk) and run again.")
