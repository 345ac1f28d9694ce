"""The SQLite session store: every run, its messages, plan versions, steps and blobs, as they happen.

Durability: WAL with `synchronous=FULL`. Each write is one `BEGIN IMMEDIATE … COMMIT`; in WAL mode
the commit appends the transaction's pages and a commit frame to the `-wal` file, and FULL fsyncs that
file before `commit()` returns. A SIGKILL after the return cannot lose the step (the bytes are in the
OS), and neither can a power cut (they are on disk); a kill before the return leaves no trace of it
(WAL recovery ignores frames after the last complete commit). NORMAL would only sync at checkpoints:
enough for a killed process, not for a crashed machine — and steps take seconds, so the fsync is free.
A session recorder commits each step before its loop goes on, but hands the chat messages and plan
updates around it to `writer` (one background thread, in order): a SIGKILL may lose the last few
milliseconds of those, never a recorded step; `close()` waits for them (Ctrl+C included).

Concurrency: two processes writing wait for each other (`busy_timeout`), and write transactions take
the lock up front (`BEGIN IMMEDIATE`) so a waiting writer never fails with a stale read snapshot.

Crash handling: each session remembers its writer (pid and that process's start time); on `open`,
sessions still `running` whose writer is gone (or whose pid now belongs to another process) become
`interrupted`, keeping every step they committed.

Secrets: everything written goes through `columns` (credential-named keys dropped, key-shaped strings
masked), and `redact` masks a secret learnt only after it was written.

Damage (`integrity`): a store whose file is damaged is refused at open (STORE_CORRUPT) without a byte
written, or — a big store, checked whole on a thread — its writes wait for that check's verdict. Once
damage is known (that check, or SQLite finding a damaged page on any read or write), every read and write
raises STORE_CORRUPT, which says what to do (`vigil sessions --recover`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from engine.errors import ErrorCode
from engine.models import ChatMessage, Plan, StepRecord
from engine.secret_values import scrub
from engine.store.blobs import Blobs, NewPicture, taken_order
from engine.store.columns import domain_of, now, stored_json, stored_text
from engine.store.health import StoreHealth, check_before_open
from engine.store.integrity import CheckMode, is_corruption
from engine.store.location import default_path
from engine.store.process_identity import process_token, writer_alive
from engine.store.schema import (
    StoreError,
    check_header,
    check_not_newer,
    corrupt_error,
    damaged_record_error,
    migrate,
)
from engine.store.session_data import SessionData, SessionInfo, SessionSummary
from engine.store.writer import BackgroundWriter

log = logging.getLogger("vigil.store")

BUSY_TIMEOUT_MS = 15000
FINAL_STATUSES = ("success", "error", "interrupted", "idle")
# the -wal file is cut back to this after each checkpoint (SQLite otherwise keeps it at its largest, ~4 MB)
WAL_LIMIT_BYTES = 1 << 20


# -- the store ----------------------------------------------------------------------------------
class Store:
    """One connection to the store file; safe to share between threads of one process."""

    def __init__(self, conn: sqlite3.Connection, path: Path):
        self._conn = conn
        self.path = path
        self.health = StoreHealth(path)  # what is known of the file's soundness (engine.store.health)
        self._lock = self.health.guard  # every read and write of the connection holds it
        self._pid = os.getpid()
        self._token = process_token(self._pid) or ""
        self._writer: BackgroundWriter | None = None
        self.blobs = Blobs(conn, self._lock, path)  # how pictures and snapshots are kept (engine.store.blobs)

    @property
    def writer(self) -> BackgroundWriter:
        """This store's background writer (one thread, writes in order; `engine.store.writer`), started
        on first use; `close()` waits for its pending writes before closing the connection."""
        if self._writer is None:
            self._writer = BackgroundWriter()
        return self._writer

    @classmethod
    def open(cls, path: str | Path | None = None, *, check: CheckMode = "auto") -> Store:
        """Open (creating or migrating) the store; sessions left running by a dead process become
        `interrupted`. Raises StoreError STORE_CORRUPT / STORE_TOO_NEW without changing the file.
        Another process writing at that moment can make SQLite answer "database is locked" at once to
        the set-up pragmas (busy_timeout does not cover them all): opening is tried again then, for up
        to BUSY_TIMEOUT_MS.

        `check` (engine.store.integrity): "auto" checks the whole file before returning when it is at most
        VIGIL_STORE_CHECK_MB, else on a thread (writes wait for its verdict; an older store about to be
        migrated is always checked first); "now" always before returning (a command that only reads and
        ends: its answer covers the whole file); "background" always on a thread; "off" checks nothing
        (measurements only)."""
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        while True:
            try:
                return cls._open(path, check)
            except (StoreError, sqlite3.OperationalError) as exc:
                if "database is locked" not in str(exc) or time.monotonic() >= deadline:
                    raise
                time.sleep(0.05)

    @classmethod
    def _open(cls, path: str | Path | None, check: CheckMode) -> Store:
        path = Path(path) if path else default_path()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.is_dir():
                raise IsADirectoryError(21, "it is a folder, not a file")
            check_header(path)
            checked_whole = check_before_open(path, check)
            conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False,
                                   timeout=BUSY_TIMEOUT_MS / 1000)
        except (OSError, sqlite3.Error) as e:
            if isinstance(e, sqlite3.OperationalError) and "database is locked" in str(e):
                raise  # Store.open waits and tries again
            why = getattr(e, "strerror", None) or str(e)
            raise StoreError(f"The session store {path} cannot be opened ({why}). Set VIGIL_HOME to a folder "
                             "you can write to.", code=ErrorCode.STORE_UNAVAILABLE) from None
        try:
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            check_not_newer(conn, path)  # reads only: nothing is written before this passes
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StoreError(f"The session store {path} cannot use WAL journaling (got {mode!r}); "
                                 f"put VIGIL_HOME on a local disk.")
            conn.execute("PRAGMA synchronous=FULL")
            # overwritten text (a redacted secret) is zeroed, not left in free pages
            conn.execute("PRAGMA secure_delete=ON")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute(f"PRAGMA journal_size_limit={WAL_LIMIT_BYTES}")
            migrate(conn, path=path)
        except sqlite3.DatabaseError as e:
            conn.close()
            if is_corruption(e):
                raise corrupt_error(path, str(e)) from e
            raise StoreError(f"The session store {path} could not be opened: {e}") from e
        except BaseException:
            conn.close()
            raise
        store = cls(conn, path)
        try:
            if checked_whole or check == "off":
                try:
                    store._mark_interrupted()
                except sqlite3.OperationalError as exc:  # a full disk or a locked file: reading still works
                    if "database is locked" in str(exc):
                        raise  # Store.open waits and tries again
                    log.warning("session store %s: sessions of ended processes not marked interrupted: %s", path,
                                exc)
            else:  # marked once the whole file is known to be sound: nothing is written before
                store.health.check_in_background(on_sound=store._mark_interrupted)
        except BaseException:
            store.close()
            raise
        return store

    @property
    def damage(self) -> StoreError | None:
        """STORE_CORRUPT once the store is known to be damaged (it then refuses every read and write)."""
        return self.health.damage

    def add_damage_listener(self, fn: Callable[[StoreError], None]) -> None:
        """`fn(error)` once when damage is found (`StoreHealth.add_listener`)."""
        self.health.add_listener(fn)

    def wait_checked(self, timeout: float | None = None) -> bool:
        """Wait for the verdict on the whole file (at once when it was checked at open); False on a timeout."""
        return self.health.wait_checked(timeout)

    def close(self) -> None:
        """Close the store after every pending background write has run (a run stopped by Ctrl+C still
        gets its last steps written); a write that fails then is logged and kept in `writer.errors`."""
        self.health.cancel()
        if self._writer is not None and not self._writer.close():
            log.error("session store: background writes still running at close; the last steps may be missing")
        with self.health.mutex:
            self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, committed (durably) when the block ends; not before the whole file is
        known to be sound (a big store's background check), and never into a damaged one."""
        self.health.wait_checked()
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:  # a failed COMMIT (disk full, I/O error) leaves it open
                    self._conn.execute("ROLLBACK")
                raise

    def _mark_interrupted(self) -> None:
        with self._lock:
            rows = self._conn.execute("SELECT id, owner_pid, owner_start FROM sessions "
                                      "WHERE status='running'").fetchall()
        dead = [(sid, pid) for sid, pid, start in rows if not writer_alive(pid, start)]
        if not dead:
            return
        with self._tx() as c:
            for sid, pid in dead:
                c.execute("UPDATE sessions SET status='interrupted', updated_at=?, reason=COALESCE(reason, ?) "
                          "WHERE id=? AND status='running'",
                          (now(), f"the Vigil process running it (pid {pid}) ended before the run finished", sid))

    def _touch(self, c: sqlite3.Connection, session_id: str) -> None:
        if c.execute("UPDATE sessions SET updated_at=? WHERE id=?", (now(), session_id)).rowcount != 1:
            raise StoreError(f"No session {session_id!r} in {self.path}.", code=ErrorCode.STORE_NO_SESSION)

    # -- writing --------------------------------------------------------------------------------
    def create_session(self, task: str, url: str, planner: str, policy: str,
                       metadata: dict[str, Any] | None = None) -> str:
        """A new `running` session owned by this process, titled `{domain}: {task}`; returns its id."""
        sid = str(uuid.uuid4())
        domain = domain_of(url)
        meta = {**(metadata or {}), "initialUrl": url, "initialDomain": domain}
        at = now()
        title = f"{domain}: {task}" if domain else task
        with self._tx() as c:
            c.execute("INSERT INTO sessions(id, title, task, url, domain, status, planner, policy, metadata, "
                      "owner_pid, owner_start, created_at, updated_at) VALUES (?,?,?,?,?,'running',?,?,?,?,?,?,?)",
                      (sid, stored_text(title), stored_text(task), stored_text(url), domain, planner, policy,
                       stored_json(meta), self._pid, self._token, at, at))
        return sid

    def update_url(self, session_id: str, url: str) -> None:
        """The page moved (same tab, same session): url and domain follow; the first ones stay in metadata."""
        with self._tx() as c:
            self._touch(c, session_id)
            c.execute("UPDATE sessions SET url=?, domain=? WHERE id=?", (stored_text(url), domain_of(url), session_id))

    def resume(self, session_id: str, planner: str | None = None, policy: str | None = None) -> None:
        """The tab's session runs again (a new task in the same tab): `running`, owned by this
        process, with the planner and policy of this run (the title keeps the first task)."""
        with self._tx() as c:
            self._touch(c, session_id)
            c.execute("UPDATE sessions SET status='running', reason=NULL, answer=NULL, owner_pid=?, owner_start=?, "
                      "planner=COALESCE(?, planner), policy=COALESCE(?, policy) WHERE id=?",
                      (self._pid, self._token, planner, policy, session_id))

    def next_indexes(self, session_id: str) -> tuple[int, int]:
        """(next message sequence number, next step index) of a session: where a new run appends."""
        with self._lock:
            (seq,) = self._conn.execute("SELECT COALESCE(MAX(seq) + 1, 0) FROM messages WHERE session_id=?",
                                        (session_id,)).fetchone()
            (idx,) = self._conn.execute("SELECT COALESCE(MAX(idx) + 1, 0) FROM steps WHERE session_id=?",
                                        (session_id,)).fetchone()
        return seq, idx

    def resolve_id(self, prefix: str) -> str:
        """The full id of the one session whose id starts with `prefix` (like git's short hashes)."""
        prefix = (prefix or "").strip()
        with self._lock:
            rows = [r[0] for r in self._conn.execute(
                "SELECT id FROM sessions WHERE id LIKE ? ESCAPE '\\' ORDER BY created_at DESC LIMIT 6",
                (prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%",)).fetchall()]
        if len(prefix) >= 4 and len(rows) == 1:
            return rows[0]
        if prefix in rows:
            return prefix
        if not rows or len(prefix) < 4:
            raise StoreError(f"No session {prefix!r} in {self.path}. `vigil sessions` lists them (give at least "
                             "the first 4 characters of an id).", code=ErrorCode.STORE_NO_SESSION)
        raise StoreError(f"{prefix!r} matches {len(rows)} sessions ({', '.join(r[:8] for r in rows[:5])}…); give "
                         "more of the id.", code=ErrorCode.STORE_AMBIGUOUS)

    def delete(self, session_id: str) -> int:
        """Delete a session with its messages, plans and steps, and every blob no other session uses
        (freed pages are zeroed: secure_delete). A session another process is still running is refused.
        Returns the number of blobs removed."""
        with self._tx() as c:
            row = c.execute("SELECT status, owner_pid, owner_start FROM sessions WHERE id=?", (session_id,)).fetchone()
            if row is None:
                raise StoreError(f"No session {session_id!r} in {self.path}.", code=ErrorCode.STORE_NO_SESSION)
            status, pid, start = row
            if status == "running" and writer_alive(pid, start):
                raise StoreError(f"Session {session_id[:8]} is still running (pid {pid}); stop that run first.",
                                 code=ErrorCode.STORE_BUSY)
            # messages, plans and steps go with it, and step_blobs with the steps (ON DELETE CASCADE)
            c.execute("DELETE FROM sessions WHERE id=?", (session_id,))
            # a snapshot kept by another session may be a delta against one of this session's: its base stays
            gone = c.execute("DELETE FROM blobs WHERE sha256 NOT IN (WITH RECURSIVE keep(sha) AS (SELECT sha256 FROM "
                             "step_blobs UNION SELECT b.base FROM blobs b JOIN keep ON b.sha256 = keep.sha WHERE "
                             "b.base IS NOT NULL) SELECT sha FROM keep)").rowcount
            self.blobs.forget_session(session_id)
            self.blobs.forget_decoded()
        return gone

    def rename(self, session_id: str, title: str) -> None:
        with self._tx() as c:
            self._touch(c, session_id)
            c.execute("UPDATE sessions SET title=?, is_renamed=1 WHERE id=?", (stored_text(title), session_id))

    def add_message(self, session_id: str, message: ChatMessage) -> None:
        """Insert or update a message by messageId; an update keeps the stored sequence number."""
        m = message
        with self._tx() as c:
            self._touch(c, session_id)
            c.execute("INSERT INTO messages(session_id, message_id, seq, role, content, status, action_string, "
                      "error, timestamp, body) VALUES (?,?,?,?,?,?,?,?,?,?) "
                      "ON CONFLICT(session_id, message_id) DO UPDATE SET role=excluded.role, "
                      "content=excluded.content, status=excluded.status, action_string=excluded.action_string, "
                      "error=excluded.error, timestamp=excluded.timestamp, body=excluded.body",
                      (session_id, m.messageId, m.sequenceNumber, m.role, stored_text(m.content), m.status,
                       stored_text(m.actionString), stored_text(m.error), m.timestamp,
                       stored_json(m.model_dump(mode="json"))))

    def save_plan(self, session_id: str, plan: Plan, *, new_version: bool = True) -> int:
        """Store the plan as the session's next version, or (new_version=False) as the latest version
        again (a step's status changed; the steps did not); returns the version (1, 2, …)."""
        body = stored_json(plan.model_dump(mode="json"))
        with self._tx() as c:
            self._touch(c, session_id)
            (last,) = c.execute("SELECT COALESCE(MAX(version), 0) FROM plans WHERE session_id=?",
                                (session_id,)).fetchone()
            if new_version or last == 0:
                c.execute("INSERT INTO plans(session_id, version, created_at, body) VALUES (?,?,?,?)",
                          (session_id, last + 1, now(), body))
                return last + 1
            c.execute("UPDATE plans SET body=? WHERE session_id=? AND version=?", (body, session_id, last))
        return last

    def add_step(self, session_id: str, record: StepRecord, blobs: dict[str, str] | None = None,
                 files: dict[str, tuple[str, bytes]] | None = None) -> None:
        """Record a step (replacing one with the same index) with its blobs — `blobs`: role → sha256
        already stored by `put_blob`; `files`: role → (kind, bytes) stored here, in the same
        transaction (e.g. {"screenshot_after": ("screenshot", jpeg)}). Committed when this returns.
        A snapshot is kept as a delta against the session's previous one (`engine.store.codecs`), a picture
        as WebP (`add_step_pictures` takes that off a step's critical path)."""
        action = record.action.to_string() if record.action else None
        blobs = dict(blobs or {})
        files = files or {}
        shots = sorted((role for role, (kind, _) in files.items() if kind == "screenshot"), key=taken_order)
        pictures = {role: self.blobs.prepare_picture(files[role][1], session_id) for role in shots}
        with self._tx() as c:
            self._touch(c, session_id)
            for role, (kind, data) in files.items():
                if kind == "snapshot":
                    blobs[role] = self.blobs.put_snapshot(c, data, session_id)
                else:
                    pic = pictures.get(role) or NewPicture.as_given(data)
                    pic.insert(c, kind)
                    blobs[role] = pic.sha
            c.execute("INSERT OR REPLACE INTO steps(session_id, idx, status, actor, action, recorded_at, body, "
                      "unverified) VALUES (?,?,?,?,?,?,?,?)",
                      (session_id, record.index, record.status, record.actor, stored_text(action), now(),
                       stored_json(step_body(record)), int(record.unverified)))
            for role, sha in blobs.items():
                c.execute("INSERT OR REPLACE INTO step_blobs(session_id, idx, role, sha256) VALUES (?,?,?,?)",
                          (session_id, record.index, role, sha))

    def add_step_pictures(self, session_id: str, index: int, pictures: dict[str, bytes]) -> None:
        """A stored step's pictures (role → JPEG), added after its record: each transcoded to WebP here unless
        the same picture is stored already (a step's before picture is the step before's after picture). The
        recorder calls this on the store's writer thread. Nothing happens when the step is not stored."""
        ready = {role: self.blobs.prepare_picture(pictures[role], session_id)
                 for role in sorted(pictures, key=taken_order)}
        with self._tx() as c:
            if c.execute("SELECT 1 FROM steps WHERE session_id=? AND idx=?", (session_id, index)).fetchone() is None:
                return
            for role, pic in ready.items():
                pic.insert(c, "screenshot")
                c.execute("INSERT OR REPLACE INTO step_blobs(session_id, idx, role, sha256) VALUES (?,?,?,?)",
                          (session_id, index, role, pic.sha))

    def add_step_picture(self, session_id: str, index: int, role: str, jpeg: bytes, fields: dict[str, Any]) -> None:
        """A stored step's picture that came after its record (`role`, e.g. "screenshot_after"), and the record's
        `fields` that go with it (its hash), in one transaction. Nothing happens when the step is not stored."""
        pic = self.blobs.prepare_picture(jpeg, session_id)
        with self._tx() as c:
            row = c.execute("SELECT body FROM steps WHERE session_id=? AND idx=?", (session_id, index)).fetchone()
            if row is None:
                return
            record = json.loads(row[0])
            record.update(fields)
            pic.insert(c, "screenshot")
            c.execute("UPDATE steps SET body=? WHERE session_id=? AND idx=?", (stored_json(record), session_id, index))
            c.execute("INSERT OR REPLACE INTO step_blobs(session_id, idx, role, sha256) VALUES (?,?,?,?)",
                      (session_id, index, role, pic.sha))

    def put_blob(self, kind: str, data: bytes) -> str:
        """Store bytes once by content (sha256 of the bytes given): a snapshot as one zstd frame, a picture as
        WebP (when Pillow reads it and WebP is smaller), anything else as it is. Returns the sha256."""
        if kind == "snapshot":
            with self._tx() as c:
                return self.blobs.put_snapshot(c, data, None)
        pic = self.blobs.prepare_picture(data) if kind == "screenshot" else NewPicture.as_given(data)
        with self._tx() as c:
            pic.insert(c, kind)
        return pic.sha

    def redact(self, session_id: str, secrets: set[str] | frozenset[str]) -> int:
        """Replace every form of these typed secrets in everything stored for the session (title,
        task, url, messages, plans, steps) — for a secret learnt only after it was written, e.g. one
        the task itself spelled out. Freed pages are zeroed (secure_delete) and the WAL truncated, so
        the old bytes do not linger in the files. Returns how many rows changed."""
        if not secrets:
            return 0
        tables = (("sessions", "id", ("title", "task", "url", "metadata", "reason", "answer")),
                  ("messages", "session_id", ("content", "action_string", "error", "body")),
                  ("plans", "session_id", ("body",)), ("steps", "session_id", ("action", "body")))
        changed = 0
        with self._tx() as c:
            for table, key, cols in tables:
                rows = c.execute(f"SELECT rowid, {', '.join(cols)} FROM {table} WHERE {key}=?",
                                 (session_id, )).fetchall()
                for rowid, *values in rows:
                    clean = [scrub(v, secrets) if isinstance(v, str) else v for v in values]
                    if clean != values:
                        c.execute(f"UPDATE {table} SET {', '.join(f'{col}=?' for col in cols)} WHERE rowid=?",
                                  (*clean, rowid))
                        changed += 1
        if changed:
            self.checkpoint()
        return changed

    def checkpoint(self) -> None:
        """Fold the -wal file into the store and truncate it (what a step added is then all in the main file)."""
        with self._lock:
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def finish(self, session_id: str, status: str, reason: str | None = None, answer: str | None = None) -> None:
        """Close a run: status success / error / interrupted / idle, with its reason or answer."""
        if status not in FINAL_STATUSES:
            raise StoreError(f"A session cannot finish as {status!r}; use one of {', '.join(FINAL_STATUSES)}.",
                             code=ErrorCode.STORE_BAD_STATUS)
        with self._tx() as c:
            self._touch(c, session_id)
            c.execute("UPDATE sessions SET status=?, reason=?, answer=? WHERE id=?",
                      (status, stored_text(reason), stored_text(answer), session_id))
            self.blobs.forget_session(session_id)  # (a resumed run starts its snapshots and pictures afresh)

    # -- reading --------------------------------------------------------------------------------
    _SUMMARY = ("SELECT s.id, s.title, s.domain, s.url, s.status, "
                "(SELECT COUNT(*) FROM steps t WHERE t.session_id=s.id), s.created_at, "
                "(SELECT COUNT(*) FROM steps t WHERE t.session_id=s.id AND t.unverified), s.task, s.planner, "
                "s.policy, s.is_renamed, s.metadata, s.answer, s.reason, s.updated_at FROM sessions s")

    @staticmethod
    def _info(row: tuple) -> SessionInfo:
        keys = ("id", "title", "domain", "url", "status", "steps", "started", "unverified", "task", "planner",
                "policy", "is_renamed", "metadata", "answer", "reason", "updated")
        d = dict(zip(keys, row, strict=True))
        d["metadata"] = json.loads(d["metadata"])
        return SessionInfo(**d)

    def list_sessions(self) -> list[SessionSummary]:
        """All sessions, newest first."""
        with self._lock:
            rows = self._conn.execute(self._SUMMARY + " ORDER BY s.created_at DESC, s.rowid DESC").fetchall()
        try:
            return [SessionSummary(**self._info(r).model_dump(include=set(SessionSummary.model_fields))) for r in rows]
        except ValueError as exc:  # SQLite saw nothing wrong, but bytes under a session's row changed
            raise damaged_record_error(self.path, f"A session's row ({str(exc).splitlines()[0]})") from exc

    def load(self, session_id: str) -> SessionData:
        """One session with its messages (by sequence number), plan versions, steps and blob refs."""
        with self._lock:
            c = self._conn
            c.execute("BEGIN")  # one consistent read snapshot across the queries
            try:
                row = c.execute(self._SUMMARY + " WHERE s.id=?", (session_id,)).fetchone()
                if row is None:
                    raise StoreError(f"No session {session_id!r} in {self.path}.", code=ErrorCode.STORE_NO_SESSION)
                msgs = c.execute("SELECT seq, body FROM messages WHERE session_id=? ORDER BY seq, rowid",
                                 (session_id,)).fetchall()
                plans = c.execute("SELECT body FROM plans WHERE session_id=? ORDER BY version",
                                  (session_id,)).fetchall()
                steps = c.execute("SELECT body FROM steps WHERE session_id=? ORDER BY idx", (session_id,)).fetchall()
                refs = c.execute("SELECT idx, role, sha256 FROM step_blobs WHERE session_id=? ORDER BY idx, role",
                                 (session_id,)).fetchall()
            finally:
                c.execute("COMMIT")
        blobs: dict[int, dict[str, str]] = {}
        for idx, role, sha in refs:
            blobs.setdefault(idx, {})[role] = sha
        try:
            all_plans = [Plan.model_validate_json(b) for (b,) in plans]
            # an updated message keeps its first sequence number (the column), whatever its body says
            messages = [ChatMessage.model_validate_json(b).model_copy(update={"sequenceNumber": seq})
                        for seq, b in msgs]
            return SessionData(session=self._info(row), messages=messages,
                               plan=all_plans[-1] if all_plans else None, plans=all_plans,
                               steps=[StepRecord.model_validate_json(b) for (b,) in steps], blobs=blobs)
        except ValueError as exc:  # SQLite saw nothing wrong, but bytes under a record changed
            raise damaged_record_error(self.path, f"A record of session {session_id[:8]} "
                                                  f"({str(exc).splitlines()[0]})") from exc

    def get_blob(self, sha256: str) -> bytes:
        """The bytes stored under `sha256`: a snapshot's original bytes; a picture as kept (the JPEG in a store
        written before schema 7, else WebP, or PNG for one kept as a patch: read it by its content, not as a
        JPEG; `picture` gives it decoded). STORE_CORRUPT when they no longer read back as written (SQLite keeps
        no checksums: a damaged byte inside a picture is seen only here)."""
        return self.blobs.read(sha256)

    def picture(self, sha256: str) -> Any:
        """A stored picture as a PIL image (RGB; a patched one drawn on the pictures before it); STORE_CORRUPT
        when its bytes no longer read back as written. Do not change it: it may be kept for the next read."""
        return self.blobs.picture(sha256)

    def integrity_check(self) -> str:
        """SQLite's own full check: "ok" when the file is consistent (said even of a store known to be
        damaged: it is how that is seen)."""
        with self.health.mutex:
            return "; ".join(r[0] for r in self._conn.execute("PRAGMA integrity_check").fetchall())


def step_body(record: StepRecord) -> dict[str, Any]:
    """A step record as stored: its fields that differ from their defaults (a third fewer bytes; the record
    loads back equal — `StepRecord.model_validate_json`)."""
    return record.model_dump(mode="json", exclude_defaults=True)
