"""Is the session store damaged? The checks `Store.open` runs at once, and the one it may leave to a thread.

SQLite keeps no checksums: what can be checked is the file's structure — every b-tree page, cell and
overflow chain, every page used once — which `PRAGMA quick_check` walks, reading the whole file. Measured
(`vigil bench store-check`, warm cache): 7 ms for an 18 MB store, 330-550 ms for 1 GB: too slow for every
open of a big store. So `Store.open` always checks what costs about a millisecond at any size (the page
counts against the file, the schema, the first and last entry of every table and index), runs the whole
check at once when the file is at most VIGIL_STORE_CHECK_MB (default 64 MB, ~25 ms), and otherwise in a
thread of its own: the store's writes wait for that verdict, and once damage is known the store refuses
everything (`Store`). Every check reads through a read-only connection: it never writes the file, and a
file it refuses is left as it was.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

log = logging.getLogger("vigil.store")

CheckMode = Literal["auto", "now", "background", "off"]
CHECK_MB_DEFAULT = 64
_SQLITE_CORRUPT, _SQLITE_NOTADB = 11, 26
_PROBLEMS_KEPT = 10  # quick_check stops after this many: a badly damaged file is not walked to its end


def whole_check_limit() -> int:
    """The size (bytes) up to which `Store.open` checks the whole file before returning."""
    raw = os.environ.get("VIGIL_STORE_CHECK_MB", "").strip()
    try:
        mb = float(raw) if raw else CHECK_MB_DEFAULT
    except ValueError:
        log.warning("VIGIL_STORE_CHECK_MB=%r is not a number of megabytes; using %d", raw, CHECK_MB_DEFAULT)
        mb = CHECK_MB_DEFAULT
    return int(max(mb, 0) * 2**20)


def is_corruption(exc: BaseException) -> bool:
    """SQLite saying the file is damaged ("database disk image is malformed", "file is not a database"),
    or text in it that is not UTF-8 (never written so: bytes changed under a row)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int) and code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB):
        return True
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text or "could not decode to utf-8" in text


def is_busy(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc))


def read_only(path: Path, *, timeout: float = 15.0) -> sqlite3.Connection:
    """A connection that cannot write the file (SQLite may add the -wal/-shm files a reader needs)."""
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=timeout,
                           check_same_thread=False, isolation_level=None)


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def cheap_problem(conn: sqlite3.Connection, path: Path) -> str | None:
    """What the checks that cost about a millisecond at any size find wrong, or None. Reads only."""
    try:
        conn.execute("BEGIN")  # one read snapshot: the counts and the file sizes agree
        try:
            return _cheap(conn, path)
        finally:
            conn.execute("COMMIT")
    except sqlite3.DatabaseError as exc:
        if is_corruption(exc):
            return str(exc)
        raise


def _cheap(conn: sqlite3.Connection, path: Path) -> str | None:
    (size,), (pages,), (free,) = (conn.execute(f"PRAGMA {p}").fetchone()
                                  for p in ("page_size", "page_count", "freelist_count"))
    if free >= max(pages, 1):
        return f"{free} free pages in a file of {pages}"
    wal = Path(f"{path}-wal")
    if not (wal.exists() and wal.stat().st_size) and path.stat().st_size < pages * size:
        # with an empty WAL every page is in the file itself: a shorter file lost its end
        return f"the file is {path.stat().st_size} bytes, its pages need {pages * size}: it was cut short"
    schema = conn.execute("SELECT type, name, tbl_name, rootpage FROM sqlite_master "
                          "WHERE type IN ('table', 'index')").fetchall()
    for kind, name, _table, root in schema:
        if root and not 1 <= root <= pages:
            return f"the {kind} {name} starts at page {root}, past the file's {pages} pages"
    for kind, name, table, root in schema:
        if root:  # the first and last entry: the root page and the pages down both edges are read
            for ends in _edges(conn, kind, name, table):
                conn.execute(ends).fetchall()
    return None


def _edges(conn: sqlite3.Connection, kind: str, name: str, table: str) -> Iterator[str]:
    if kind == "table":
        for order in ("ASC", "DESC"):
            yield f"SELECT * FROM {_q(name)} ORDER BY rowid {order} LIMIT 1"
        return
    cols = [r[2] for r in conn.execute(f"PRAGMA index_info({_q(name)})").fetchall()]
    if cols and cols[0] is not None:
        for order in ("ASC", "DESC"):
            yield (f"SELECT {_q(cols[0])} FROM {_q(table)} INDEXED BY {_q(name)} "
                   f"ORDER BY {_q(cols[0])} {order} LIMIT 1")


def whole_problem(conn: sqlite3.Connection) -> str | None:
    """SQLite's structural check of the whole file (`PRAGMA quick_check`): None when it is sound, else
    its first finding (and how many more). Raises sqlite3.OperationalError "interrupted" when cancelled."""
    try:
        rows = [r[0] for r in conn.execute(f"PRAGMA quick_check({_PROBLEMS_KEPT})").fetchall()]
    except sqlite3.DatabaseError as exc:
        if is_corruption(exc):
            return str(exc)
        raise
    lines = [line for r in rows for line in str(r).splitlines() if line.strip() and not line.startswith("***")]
    if lines == ["ok"] or not lines:
        return None
    more = f" (and {len(lines) - 1} more finding{'s' * (len(lines) > 2)})" if len(lines) > 1 else ""
    return f"SQLite's check: {lines[0]}{more}"


@dataclass
class Verdict:
    """What the checks at open found: `problem` (None: nothing), whether the whole file was checked,
    and the store's schema version as read (None when it could not be read)."""

    problem: str | None
    whole: bool
    version: int | None = None


def check_file(path: Path, *, whole: bool, version: Callable[[sqlite3.Connection], int] | None = None) -> Verdict:
    """The checks of `Store.open`, on a read-only connection: the cheap ones, and the whole file when
    `whole`. A file SQLite cannot read this way for another reason (a read-only folder with no -shm yet)
    is not judged here: `Verdict(None, False)` (the store's own open then says what is wrong). Raises
    sqlite3.OperationalError when the file is locked (the caller waits and tries again)."""
    try:
        conn = read_only(path)
    except sqlite3.Error as exc:
        log.info("session store %s: not checked on a read-only connection (%s)", path, exc)
        return Verdict(None, False)
    try:
        problem = cheap_problem(conn, path)
        v = version(conn) if version is not None and problem is None else None
        if problem is None and whole:
            problem = whole_problem(conn)
        return Verdict(problem, whole, v)
    except sqlite3.DatabaseError as exc:
        if is_corruption(exc):
            return Verdict(str(exc), whole)
        if is_busy(exc):
            raise
        log.info("session store %s: not checked on a read-only connection (%s)", path, exc)
        return Verdict(None, False)
    finally:
        conn.close()


class BackgroundCheck:
    """The whole check of a big store, on a thread of its own and a read-only connection;
    `on_done(problem)` is called once from that thread (None: sound, or the check could not run or
    was cancelled: said in the log)."""

    def __init__(self, path: Path, on_done: Callable[[str | None], None]) -> None:
        self.path = path
        self._on_done = on_done
        self._conn: sqlite3.Connection | None = None
        self._guard = threading.Lock()
        self._cancelled = False
        self.seconds: float | None = None  # how long the check took, once done
        self._thread = threading.Thread(target=self._run, name="vigil-store-check", daemon=True)

    def start(self) -> None:
        self._thread.start()

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def _run(self) -> None:
        import time
        t0 = time.perf_counter()
        problem: str | None = None
        try:
            with self._connection() as conn:
                if conn is not None:
                    problem = whole_problem(conn)
        except sqlite3.Error as exc:
            if not self._cancelled:
                log.warning("session store %s: the background integrity check could not run (%s)", self.path, exc)
        except Exception:  # noqa: BLE001 — the verdict must still come, or the store's writes would wait forever
            log.exception("session store %s: the background integrity check failed", self.path)
        finally:
            self.seconds = time.perf_counter() - t0
            self._on_done(problem)

    @contextlib.contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection | None]:
        conn = read_only(self.path)
        with self._guard:
            if self._cancelled:
                conn.close()
                yield None
                return
            self._conn = conn
        try:
            yield conn
        finally:
            with self._guard:
                self._conn = None
            conn.close()

    def cancel(self, timeout: float = 5.0) -> None:
        """Stop the check (the store is closing) and wait for its thread."""
        with self._guard:
            self._cancelled = True
            if self._conn is not None:
                self._conn.interrupt()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)
