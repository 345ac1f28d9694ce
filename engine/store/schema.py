"""The session store's schema: numbered migrations, a `meta` table holding `schema_version`, and the
checks that refuse a database this code cannot safely touch (newer, corrupt, not SQLite at all).

Each migration runs in its own `BEGIN IMMEDIATE` transaction, so a crash mid-migration leaves the
previous version intact, and two processes opening an old database at once migrate it only once.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from engine.errors import ErrorCode, VigilError

SQLITE_HEADER = b"SQLite format 3\x00"


class StoreError(VigilError):
    """The session store cannot be used; `code` is STORE_TOO_NEW, STORE_CORRUPT or STORE_ERROR."""

    code = ErrorCode.STORE_ERROR


# Migration N brings a database from version N-1 to N. Never edit a released entry: add a new one.
MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        """CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            title TEXT NOT NULL,
            task TEXT NOT NULL,
            url TEXT NOT NULL,
            domain TEXT NOT NULL,
            status TEXT NOT NULL,
            planner TEXT NOT NULL,
            policy TEXT NOT NULL,
            is_renamed INTEGER NOT NULL DEFAULT 0,
            metadata TEXT NOT NULL DEFAULT '{}',
            answer TEXT,
            reason TEXT,
            owner_pid INTEGER,
            owner_start TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL)""",
        "CREATE INDEX sessions_by_created ON sessions(created_at)",
        """CREATE TABLE messages (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            message_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            role TEXT NOT NULL,
            content TEXT NOT NULL,
            status TEXT,
            action_string TEXT,
            error TEXT,
            timestamp TEXT NOT NULL,
            body TEXT NOT NULL,
            PRIMARY KEY (session_id, message_id))""",
        """CREATE TABLE plans (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            version INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            body TEXT NOT NULL,
            PRIMARY KEY (session_id, version))""",
        """CREATE TABLE steps (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            status TEXT NOT NULL,
            actor TEXT NOT NULL,
            action TEXT,
            recorded_at TEXT NOT NULL,
            body TEXT NOT NULL,
            PRIMARY KEY (session_id, idx))""",
    ),
    2: (
        """CREATE TABLE blobs (
            sha256 TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            codec TEXT NOT NULL,
            size INTEGER NOT NULL,
            data BLOB NOT NULL,
            created_at TEXT NOT NULL)""",
        """CREATE TABLE step_blobs (
            session_id TEXT NOT NULL,
            idx INTEGER NOT NULL,
            role TEXT NOT NULL,
            sha256 TEXT NOT NULL REFERENCES blobs(sha256),
            PRIMARY KEY (session_id, idx, role),
            FOREIGN KEY (session_id, idx) REFERENCES steps(session_id, idx) ON DELETE CASCADE)""",
    ),
    3: (
        # a person's standing "approve steps like this on this site" (engine.store.grants); never deleted,
        # revoked by stamping revoked_at, so what was allowed when stays on record
        """CREATE TABLE grants (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            site TEXT NOT NULL,
            kind TEXT NOT NULL,
            session_id TEXT,
            created_at TEXT NOT NULL,
            revoked_at TEXT)""",
        "CREATE INDEX grants_by_site ON grants(site, kind)",
    ),
    4: (
        # a grant lasts for the server run it was given in (run_id; a grant without one is never applied) and
        # is stamped ended_at when that run ends; its session_id is the recorded session it belongs to
        "ALTER TABLE grants ADD COLUMN run_id TEXT",
        "ALTER TABLE grants ADD COLUMN ended_at TEXT",
    ),
    5: (
        # a step that ran but was not seen to do what it should (its verification failed): counted in the
        # sessions list, so a run the planner called done with such steps does not read as a plain success
        "ALTER TABLE steps ADD COLUMN unverified INTEGER NOT NULL DEFAULT 0",
        # (the rule of StepRecord.unverified, on the stored record)
        "UPDATE steps SET unverified = 1 WHERE status = 'completed' AND actor != 'human' "
        "AND COALESCE(json_extract(body, '$.verification.success'), "
        "json_extract(body, '$.result.verification.success')) = 0 "
        "AND COALESCE(json_extract(body, '$.action.name'), '') != 'fail'",
    ),
    6: (
        # a fleet (`vigil fleet`): many runs supervised together; each run's latest attempt is a row of fleet_runs
        # (its session, state, browser), and every session it recorded carries the fleet's id. The fleet file's
        # path and digest are kept, not its contents (a script may type a password): `--resume` reads it again
        """CREATE TABLE fleets (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            path TEXT NOT NULL,
            digest TEXT NOT NULL,
            options TEXT NOT NULL DEFAULT '{}',
            status TEXT NOT NULL,
            owner_pid INTEGER,
            owner_start TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL)""",
        """CREATE TABLE fleet_runs (
            fleet_id TEXT NOT NULL REFERENCES fleets(id) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            name TEXT NOT NULL,
            task TEXT NOT NULL,
            url TEXT NOT NULL,
            status TEXT NOT NULL,
            session_id TEXT,
            browser TEXT,
            steps INTEGER NOT NULL DEFAULT 0,
            answer TEXT,
            reason TEXT,
            attempts INTEGER NOT NULL DEFAULT 0,
            started_at TEXT,
            ended_at TEXT,
            PRIMARY KEY (fleet_id, idx))""",
        "ALTER TABLE sessions ADD COLUMN fleet_id TEXT",
        "CREATE INDEX sessions_by_fleet ON sessions(fleet_id)",
    ),
    7: (
        # blobs kept smaller (engine.store.codecs): a snapshot as a zstd delta against an earlier one (`base`, the
        # blob it needs to decode), a picture as WebP; `checksum` is the sha256 of the stored bytes of those
        # codecs. Blobs written before keep codec "zlib" / "raw", no base and no checksum, and read as before
        "ALTER TABLE blobs ADD COLUMN base TEXT",
        "ALTER TABLE blobs ADD COLUMN checksum TEXT",
    ),
}
LATEST_VERSION = max(MIGRATIONS)


def corrupt_error(path: Path | str, detail: str) -> StoreError:
    """STORE_CORRUPT for the store at `path`: what is wrong, and the two ways on (keep what can be read, or
    start afresh). Nothing is written to a store refused this way."""
    p = str(path)
    return StoreError(
        f"The session store {p} is not a readable Vigil database ({detail}). It was left untouched: nothing "
        f"is written to it. `vigil sessions --recover` copies every session that can still be read into a new "
        f"store beside it and says how to put that one in place. Move it aside (mv '{p}' '{p}.broken', and its "
        f"'-wal' and '-shm' files if present) and start Vigil again to create a new, empty store.",
        code=ErrorCode.STORE_CORRUPT)


def damaged_record_error(path: Path | str, what: str) -> StoreError:
    """STORE_CORRUPT for one record whose bytes changed though SQLite finds the file sound (it keeps no
    checksums): that read is refused; the rest of the store stays in use."""
    return StoreError(
        f"{what} in the session store {path} is damaged: it no longer reads back as it was written. The rest of the "
        f"store is not affected. `vigil sessions --recover` copies everything that still reads back whole into a "
        f"new store beside it.", code=ErrorCode.STORE_CORRUPT)


def check_header(path: Path) -> None:
    """Refuse a non-empty file that does not start with SQLite's header, before SQLite opens it."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with open(path, "rb") as f:
        head = f.read(len(SQLITE_HEADER))
    if head != SQLITE_HEADER:
        raise corrupt_error(path, "not an SQLite file")


def schema_version(conn: sqlite3.Connection) -> int:
    """The version recorded in `meta`; 0 for an empty database. Only reads."""
    has_meta = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
    if not has_meta:
        return 0
    row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    return int(row[0]) if row else 0


def check_not_newer(conn: sqlite3.Connection, path: Path | str) -> int:
    """Return the database's version, or raise STORE_TOO_NEW when this code does not know it."""
    version = schema_version(conn)
    if version > LATEST_VERSION:
        raise StoreError(
            f"The session store {path} has schema version {version}, but this Vigil knows versions up to "
            f"{LATEST_VERSION}: it was written by a newer Vigil. It was left untouched. Upgrade Vigil, or "
            f"point VIGIL_HOME at another directory.", code=ErrorCode.STORE_TOO_NEW)
    return version


def migrate(conn: sqlite3.Connection, target: int = LATEST_VERSION, path: Path | str = "the database") -> int:
    """Apply migrations up to `target`, one transaction each; returns the resulting version.

    `conn` must be in autocommit mode (`isolation_level=None`): transactions are explicit here."""
    check_not_newer(conn, path)
    while True:
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = check_not_newer(conn, path)  # re-read under the write lock: another process may have run
            if version >= target:
                conn.execute("ROLLBACK")
                return version
            nxt = version + 1
            if nxt == 1:
                conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            for statement in MIGRATIONS[nxt]:
                conn.execute(statement)
            conn.execute("INSERT INTO meta(key, value) VALUES ('schema_version', ?) "
                         "ON CONFLICT(key) DO UPDATE SET value=excluded.value", (str(nxt),))
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
