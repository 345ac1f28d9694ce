"""Fleets in the session store: `FleetBook`.

A fleet row (`fleets`) holds the fleet file's path and digest (not its contents: a script may type a
password), the options it ran with and whether its process still runs it; one `fleet_runs` row per run
holds the run's latest attempt (state, session, browser, steps, answer or reason). Every session a fleet
recorded carries its id (`sessions.fleet_id`), the sessions of earlier attempts too."""

from __future__ import annotations

import json
import os
import sqlite3
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, Field

from engine.errors import ErrorCode
from engine.store.columns import now
from engine.store.process_identity import process_token, writer_alive
from engine.store.schema import StoreError
from engine.store.session_data import SessionSummary
from engine.store.store import Store

RUN_FINISHED = ("done", "failed", "stopped")


class FleetRunRecord(BaseModel):
    index: int
    name: str
    task: str
    url: str
    status: str
    session_id: str | None = None
    browser: str | None = None
    steps: int = 0
    answer: str | None = None
    reason: str | None = None
    attempts: int = 0
    started_at: str | None = None
    ended_at: str | None = None

    @property
    def finished(self) -> bool:
        return self.status in RUN_FINISHED

    @property
    def seconds(self) -> float | None:
        if not self.started_at or not self.ended_at:
            return None
        try:
            a, b = datetime.fromisoformat(self.started_at), datetime.fromisoformat(self.ended_at)
        except ValueError:
            return None
        return round((b - a).total_seconds(), 2)


class FleetRecord(BaseModel):
    id: str
    name: str
    path: str
    digest: str
    options: dict[str, Any] = Field(default_factory=dict)
    status: str                 # running | finished | stopped | interrupted (its process is gone)
    created: str
    updated: str
    owner_pid: int | None = None
    runs: list[FleetRunRecord] = Field(default_factory=list)


def _iso(t: float | None) -> str | None:
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds") if t else None


class FleetBook:
    def __init__(self, store: Store) -> None:
        self.store = store

    # -- writing ---------------------------------------------------------------------------------
    def save_fleet(self, fleet: Any, spec: Any) -> None:
        """Record a fleet about to run (a new one, or one resumed: then its row is taken over by this process)."""
        opts = {"parallel": fleet.parallel, "approve": fleet.approve, "browsers": fleet.browsers,
                "max_steps": fleet.max_steps, "retry_lost": bool(getattr(fleet, "retry_lost", False))}
        grid = getattr(getattr(fleet, "pool", None), "grid", None)
        if getattr(fleet, "grid", None):  # (a browserless token is not kept: --resume is given --grid again)
            opts["grid"] = grid.label if grid is not None else fleet.grid
        pid, token, at = os.getpid(), process_token(os.getpid()) or "", now()
        with self.store._tx() as c:
            c.execute("INSERT INTO fleets(id, name, path, digest, options, status, owner_pid, owner_start, created_at, "
                      "updated_at) VALUES (?,?,?,?,?,'running',?,?,?,?) ON CONFLICT(id) DO UPDATE SET "
                      "status='running', owner_pid=excluded.owner_pid, owner_start=excluded.owner_start, "
                      "options=excluded.options, digest=excluded.digest, updated_at=excluded.updated_at",
                      (fleet.id, spec.name, spec.path, spec.digest, json.dumps(opts), pid, token, at, at))
            for r in fleet.runs:
                c.execute("INSERT INTO fleet_runs(fleet_id, idx, name, task, url, status) VALUES (?,?,?,?,?,?) "
                          "ON CONFLICT(fleet_id, idx) DO NOTHING",
                          (fleet.id, r.index, r.name, r.task, r.spec.url, r.state))

    def update_run(self, fleet_id: str, run: Any) -> None:
        """Write a run's state as it stands now (a run starting again counts one more attempt)."""
        with self.store._tx() as c:
            c.execute("UPDATE fleet_runs SET status=?, session_id=COALESCE(?, session_id), browser=?, steps=?, "
                      "answer=?, reason=?, started_at=?, ended_at=?, attempts=attempts + ? WHERE fleet_id=? AND idx=?",
                      (run.state, run.session_id, run.browser, run.steps, run.answer, run.reason,
                       _iso(run.started_at), _iso(run.ended_at) if run.state in RUN_FINISHED else None,
                       1 if run.state == "running" and run.session_id is None else 0, fleet_id, run.index))
            c.execute("UPDATE fleets SET updated_at=? WHERE id=?", (now(), fleet_id))

    def attach_session(self, session_id: str, fleet_id: str) -> None:
        with self.store._tx() as c:
            c.execute("UPDATE sessions SET fleet_id=? WHERE id=?", (fleet_id, session_id))

    def finish_fleet(self, fleet_id: str, status: str) -> None:
        with self.store._tx() as c:
            c.execute("UPDATE fleets SET status=?, updated_at=? WHERE id=?", (status, now(), fleet_id))

    # -- reading ---------------------------------------------------------------------------------
    def resolve_id(self, prefix: str) -> str:
        """A fleet id from a unique prefix (at least 4 characters)."""
        prefix = (prefix or "").strip()
        if len(prefix) < 4:
            raise StoreError(f"Fleet id {prefix!r} is too short: give at least 4 characters (vigil fleet prints it).",
                             code=ErrorCode.STORE_NO_SESSION)
        with self.store._lock:
            rows = self.store._conn.execute("SELECT id FROM fleets WHERE id LIKE ? ESCAPE '\\'",
                                            (prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
                                             + "%",)).fetchall()
        if not rows:
            raise StoreError(f"No fleet {prefix!r} in {self.store.path}.", code=ErrorCode.STORE_NO_SESSION)
        if len(rows) > 1:
            raise StoreError(f"Fleet id {prefix!r} is ambiguous ({len(rows)} fleets start with it): give more of it.",
                             code=ErrorCode.STORE_NO_SESSION)
        return str(rows[0][0])

    def load(self, fleet_id: str) -> FleetRecord:
        fid = self.resolve_id(fleet_id)
        with self.store._lock:
            c = self.store._conn
            row = c.execute("SELECT id, name, path, digest, options, status, created_at, updated_at, owner_pid, "
                            "owner_start FROM fleets WHERE id=?", (fid,)).fetchone()
            runs = c.execute("SELECT idx, name, task, url, status, session_id, browser, steps, answer, reason, "
                             "attempts, started_at, ended_at FROM fleet_runs WHERE fleet_id=? ORDER BY idx",
                             (fid,)).fetchall()
        status = row[5]
        if status == "running" and not writer_alive(row[8], row[9]):
            status = "interrupted"
        keys = ("index", "name", "task", "url", "status", "session_id", "browser", "steps", "answer", "reason",
                "attempts", "started_at", "ended_at")
        return FleetRecord(id=row[0], name=row[1], path=row[2], digest=row[3], options=json.loads(row[4] or "{}"),
                           status=status, created=row[6], updated=row[7], owner_pid=row[8],
                           runs=[FleetRunRecord(**dict(zip(keys, r, strict=True))) for r in runs])

    def running_elsewhere(self, fleet_id: str) -> int | None:
        """The pid of another live process running this fleet now, or None."""
        with self.store._lock:
            row = self.store._conn.execute("SELECT status, owner_pid, owner_start FROM fleets WHERE id=?",
                                           (fleet_id,)).fetchone()
        if row and row[0] == "running" and row[1] != os.getpid() and writer_alive(row[1], row[2]):
            return int(row[1])
        return None

    def sessions(self, fleet_id: str) -> list[SessionSummary]:
        """The sessions recorded by this fleet (every attempt), newest first."""
        fid = self.resolve_id(fleet_id)
        with self.store._lock:
            rows = self.store._conn.execute(self.store._SUMMARY + " WHERE s.fleet_id=? ORDER BY s.created_at DESC, "
                                            "s.rowid DESC", (fid,)).fetchall()
        return [SessionSummary(**Store._info(r).model_dump(include=set(SessionSummary.model_fields))) for r in rows]

    def list_fleets(self) -> list[FleetRecord]:
        with self.store._lock:
            ids = [r[0] for r in self.store._conn.execute("SELECT id FROM fleets ORDER BY created_at DESC")]
        out = []
        for fid in ids:
            try:
                out.append(self.load(fid))
            except (StoreError, sqlite3.Error):
                continue
        return out
