"""`vigil sessions --recover`: every session that can still be read from a damaged store, copied into a new
store beside it (`sessions.recovered-<time>.db`). The damaged file is only ever read, through read-only
connections: not a byte of it (or of its -wal) is written.

A copy row by row that steps over what cannot be read: each table read in rowid order, a damaged stretch
skipped by probing further on, and read backwards from there to the damage. (SQLite's own `.recover` needs a
library built with the `sqlite_dbpage` table; Debian's `sqlite3` and Python's are not, so it cannot run on the
machines Vigil is built for, and an untested second path is not kept.) What is copied is checked as it goes in: a
picture or snapshot whose bytes no longer match their checksum, a record that is not JSON any more, a
step whose session was lost, are left out (and counted), so the new store holds only what reads back
whole. It is written at the damaged store's schema version, then migrated as any store is, and opened
(with the whole check) before it is given a name beside the damaged one.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.errors import ErrorCode
from engine.store.codecs import CodecError, decode, sha256
from engine.store.integrity import is_corruption, read_only
from engine.store.schema import LATEST_VERSION, SQLITE_HEADER, StoreError, migrate, schema_version

log = logging.getLogger("vigil.store")

# parents before children: a child row whose parent was lost is left out after the copy
TABLES = ("sessions", "messages", "plans", "steps", "blobs", "step_blobs", "grants", "fleets", "fleet_runs")
_JSON_COLUMNS = {"sessions": ("metadata",), "messages": ("body",), "plans": ("body",), "steps": ("body",),
                 "fleets": ("options",)}
# what is left out once everything readable is in: rows whose parent did not come through
_ORPHANS = (
    ("steps", "steps whose session was lost",
     "DELETE FROM steps WHERE session_id NOT IN (SELECT id FROM sessions)"),
    ("messages", "", "DELETE FROM messages WHERE session_id NOT IN (SELECT id FROM sessions)"),
    ("plans", "", "DELETE FROM plans WHERE session_id NOT IN (SELECT id FROM sessions)"),
    # a snapshot kept as a delta (schema 7) cannot be read without its base: left out when that was lost
    ("blobs", "snapshots whose earlier snapshot (needed to read them) was lost",
     "DELETE FROM blobs WHERE sha256 NOT IN (WITH RECURSIVE whole(sha) AS (SELECT sha256 FROM blobs WHERE base IS "
     "NULL UNION SELECT b.sha256 FROM blobs b JOIN whole ON b.base = whole.sha) SELECT sha FROM whole)"),
    ("step_blobs", "pictures and snapshots whose bytes were lost",
     "DELETE FROM step_blobs WHERE sha256 NOT IN (SELECT sha256 FROM blobs) OR NOT EXISTS "
     "(SELECT 1 FROM steps t WHERE t.session_id=step_blobs.session_id AND t.idx=step_blobs.idx)"),
    ("blobs", "", "DELETE FROM blobs WHERE sha256 NOT IN (WITH RECURSIVE keep(sha) AS (SELECT sha256 FROM step_blobs "
     "UNION SELECT b.base FROM blobs b JOIN keep ON b.sha256 = keep.sha WHERE b.base IS NOT NULL) "
     "SELECT sha FROM keep)"),
    ("fleet_runs", "", "DELETE FROM fleet_runs WHERE fleet_id NOT IN (SELECT id FROM fleets)"),
)
_OLD_BLOBS = {"": "DELETE FROM blobs WHERE sha256 NOT IN (SELECT sha256 FROM step_blobs)"}
_MIN_ROWID = -(2**63)


@dataclass
class Recovery:
    """What `recover` did: where from and to, how (`method`), what the new store holds, what was left out."""

    source: Path
    target: Path
    method: str
    sessions: int = 0
    steps: int = 0
    blobs: int = 0
    sessions_before: int | None = None  # how many the damaged store counts, when it can still count them
    damaged_stretches: dict[str, int] = field(default_factory=dict)  # table → stretches that could not be read
    left_out: dict[str, int] = field(default_factory=dict)  # what was read but left out, in words → how many
    unplaced: int = 0  # rows SQLite's recovery found but could not place in a table (its lost_and_found)

    @property
    def complete(self) -> bool:
        """Nothing was found missing (the damage may still have hidden rows no count shows)."""
        return not (self.damaged_stretches or self.left_out or self.unplaced) and \
            self.sessions_before in (None, self.sessions)

    def as_json(self) -> dict[str, Any]:
        return {"source": str(self.source), "target": str(self.target), "method": self.method,
                "sessions": self.sessions, "steps": self.steps, "blobs": self.blobs,
                "sessions_before": self.sessions_before, "damaged_stretches": self.damaged_stretches,
                "left_out": self.left_out, "unplaced": self.unplaced}


def recover(source: Path, *, stamp: str | None = None) -> Recovery:
    """Copy every readable session of the store at `source` into a new store beside it; StoreError when
    there is no store there, or nothing of it can be read as a store."""
    if not source.is_file():
        raise StoreError(f"There is no session store at {source}: nothing to recover.",
                         code=ErrorCode.STORE_UNAVAILABLE)
    with open(source, "rb") as f:
        if f.read(len(SQLITE_HEADER)) != SQLITE_HEADER:
            raise StoreError(f"{source} is not an SQLite file at all: no session in it can be read. Move it aside "
                             f"(mv '{source}' '{source}.broken') and start Vigil again to create a new, empty store.",
                             code=ErrorCode.STORE_CORRUPT)
    target = _free_name(source, stamp or time.strftime("%Y%m%d-%H%M%S"))
    part = target.with_name(target.name + ".part")
    rec = Recovery(source, target, "row by row")
    try:
        with contextlib.closing(_reader(source)) as src:
            _copy(src, part, rec)
        _verify(part, rec)
    except BaseException:
        for p in (part, Path(f"{part}-wal"), Path(f"{part}-shm")):
            p.unlink(missing_ok=True)
        raise
    os.replace(part, target)
    return rec


def _free_name(source: Path, stamp: str) -> Path:
    target = source.with_name(f"{source.stem}.recovered-{stamp}{source.suffix}")
    n = 2
    while target.exists():
        target = source.with_name(f"{source.stem}.recovered-{stamp}-{n}{source.suffix}")
        n += 1
    return target


def _reader(path: Path) -> sqlite3.Connection:
    """A read-only connection; `immutable` (no -shm needed, no locks) when the folder is read-only."""
    try:
        conn = read_only(path)
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        return conn
    except sqlite3.DatabaseError as exc:
        if is_corruption(exc):
            raise _unreadable(path, exc) from exc
        uri = f"{path.resolve().as_uri()}?mode=ro&immutable=1"
        return sqlite3.connect(uri, uri=True, isolation_level=None)


def _unreadable(path: Path, exc: BaseException) -> StoreError:
    return StoreError(f"Nothing of {path} can be read as a session store ({exc}): SQLite cannot read even its list "
                      f"of tables. Move it aside (mv '{path}' '{path}.broken') and start Vigil again to create a "
                      "new, empty store.", code=ErrorCode.STORE_CORRUPT)


# -- the copy ---------------------------------------------------------------------------------------
def _copy(src: sqlite3.Connection, part: Path, rec: Recovery) -> None:
    version = _version(src, rec.source)
    with contextlib.suppress(sqlite3.DatabaseError):
        rec.sessions_before = int(src.execute("SELECT count(*) FROM sessions").fetchone()[0])
    with contextlib.suppress(sqlite3.DatabaseError):
        rec.unplaced = int(src.execute("SELECT count(*) FROM lost_and_found").fetchone()[0])
    part.unlink(missing_ok=True)
    dest = sqlite3.connect(str(part), isolation_level=None)
    try:
        dest.execute("PRAGMA journal_mode=MEMORY")  # a file no one else sees yet: it is synced once, at the end
        dest.execute("PRAGMA synchronous=OFF")
        migrate(dest, target=version, path=part)
        dest.execute("BEGIN")
        for table in TABLES:
            _copy_table(src, dest, table, rec)
        deltas = _has_table(dest, "blobs") and "base" in _columns(dest, "blobs")
        for table, words, sql in _ORPHANS:
            if "base" in sql and not deltas:  # a store written before schema 7: no snapshot needs another
                sql = _OLD_BLOBS.get(words) or ""
            if sql and _has_table(dest, table):
                gone = dest.execute(sql).rowcount
                if gone and words:
                    rec.left_out[words] = rec.left_out.get(words, 0) + gone
        dest.execute("COMMIT")
        migrate(dest, path=part)  # as any older store is, on open
    finally:
        dest.close()
    with open(part, "rb+") as f:
        os.fsync(f.fileno())


def _version(src: sqlite3.Connection, source: Path) -> int:
    try:
        version = schema_version(src)
    except sqlite3.DatabaseError:
        version = LATEST_VERSION  # its meta table is lost: the tables found are copied into the newest schema
    if version > LATEST_VERSION:
        raise StoreError(f"The session store {source} was written by a newer Vigil (schema version {version}); "
                         "recover it with that Vigil.", code=ErrorCode.STORE_TOO_NEW)
    return version or LATEST_VERSION


def _has_table(conn: sqlite3.Connection, table: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (table,)).fetchone() is not None


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")').fetchall()]


def _copy_table(src: sqlite3.Connection, dest: sqlite3.Connection, table: str, rec: Recovery) -> None:
    if not _has_table(dest, table):
        return
    try:
        theirs = set(_columns(src, table)) if _has_table(src, table) else set()
    except sqlite3.DatabaseError:
        theirs = set()
    cols = [c for c in _columns(dest, table) if c in theirs]
    if not cols:
        return
    reader = RowReader(src, table, cols)
    sql = f'INSERT OR IGNORE INTO "{table}"(rowid, {", ".join(cols)}) VALUES ({", ".join("?" * (len(cols) + 1))})'
    left_out = 0
    for row in reader.rows():
        if _whole(table, cols, row[1:]):
            dest.execute(sql, row)
        else:
            left_out += 1
    if reader.stretches:
        rec.damaged_stretches[table] = reader.stretches
    if left_out:
        words = {"blobs": "pictures and snapshots whose bytes no longer match their checksum"}.get(
            table, f"{table} rows no longer readable as records")
        rec.left_out[words] = rec.left_out.get(words, 0) + left_out


def _whole(table: str, cols: list[str], values: tuple) -> bool:
    """The row reads back as what was written: a blob's bytes match their checksum, a record is JSON."""
    row = dict(zip(cols, values, strict=True))
    if table == "blobs":
        data = row.get("data")
        if not isinstance(data, bytes | bytearray) or not isinstance(row.get("sha256"), str):
            return False
        if row.get("checksum") is not None:  # (schema 7's codecs: the stored bytes' own checksum)
            return sha256(bytes(data)) == row["checksum"]
        try:
            raw = decode(str(row.get("codec")), data)
        except CodecError:
            return False
        return sha256(raw) == row["sha256"]
    for col in _JSON_COLUMNS.get(table, ()):
        if col in row:
            try:
                json.loads(row[col])
            except (TypeError, ValueError):
                return False
    return True


class RowReader:
    """Every row of `table` that SQLite can still read, in rowid order; `stretches` counts the damaged
    stretches stepped over. Past a damaged page it probes further on (1, 2, 4 … rowids on) for the next row
    that reads, then reads backwards from there to the damage, so little more than the damaged pages is lost.
    One row a query: a cursor over many rows reads the row after the one it returns, and fails on the row
    before the damage with it."""

    def __init__(self, conn: sqlite3.Connection, table: str, cols: list[str]) -> None:
        self.conn = conn
        self.stretches = 0
        self._select = f'SELECT rowid, {", ".join(cols)} FROM "{table}"'

    def _one(self, where: str, order: str, *args: int) -> tuple | None:
        """The first row `where` in `order`; None when there is none; sqlite3.DatabaseError when it is damaged."""
        return self.conn.execute(f"{self._select} WHERE {where} ORDER BY rowid {order} LIMIT 1", args).fetchone()

    def rows(self) -> Iterator[tuple]:
        after = _MIN_ROWID  # the last rowid read
        while True:
            try:
                row = self._one("rowid > ?", "ASC", after)
            except sqlite3.DatabaseError as exc:
                if not is_corruption(exc):
                    raise
                self.stretches += 1
                row = self._next_readable(after)
                if row is None:
                    return
                yield from self._back_to(after, row[0])
            if row is None:
                return
            after = row[0]
            yield row

    def _next_readable(self, after: int) -> tuple | None:
        """The first row that reads past the damage after `after` (None: none does). (Reading on with
        `rowid > after` would seek to `after` and meet the damage again: the next query starts from it.)"""
        base, step = max(after, 0), 1
        while base + step < 2**63:
            try:
                row = self._one("rowid >= ?", "ASC", base + step)
            except sqlite3.DatabaseError as exc:
                if not is_corruption(exc):
                    raise
                step *= 2
                continue
            return row
        return None

    def _back_to(self, after: int, nxt: int) -> Iterator[tuple]:
        """The rows between the damage and `nxt` that read from that side (in rowid order)."""
        found: list[tuple] = []
        upper = nxt
        while True:
            try:
                row = self._one("rowid > ? AND rowid < ?", "DESC", after, upper)
            except sqlite3.DatabaseError as exc:
                if not is_corruption(exc):
                    raise
                break
            if row is None:
                break
            found.append(row)
            upper = row[0]
        yield from reversed(found)


def _verify(part: Path, rec: Recovery) -> None:
    """Open the new store as Vigil will (the whole check included) and count what it holds."""
    from engine.store.store import Store

    with Store.open(part, check="now") as store:
        rec.sessions = len(store.list_sessions())
        with store._lock:
            rec.steps = int(store._conn.execute("SELECT count(*) FROM steps").fetchone()[0])
            rec.blobs = int(store._conn.execute("SELECT count(*) FROM blobs").fetchone()[0])
