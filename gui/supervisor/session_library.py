"""The session store as the window uses it: list, rename, delete, export, and read one session with
its pictures and stored snapshots. No Qt here: the sessions panel and the read-only session view talk
to these objects (through the controller, which owns the store), never to the store itself."""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import Callable
from pathlib import Path

from engine.snapshot.dom_snapshot import DomSnapshot
from engine.snapshot.stored import load_snapshot
from engine.store import Store
from engine.store.pictures import StepPicture, step_picture
from engine.store.report import write_export
from engine.store.session_data import SessionData, SessionSummary

__all__ = ["SessionData", "SessionLibrary", "SessionSummary", "StoredSession"]  # the widgets' view of stored data


class StoredSession:
    """One stored session, read-only: its data, and each step's pictures and snapshots on demand."""

    def __init__(self, store: Store, data: SessionData) -> None:
        self._store = store
        self.data = data

    def picture(self, index: int, side: str) -> StepPicture | None:
        """Step `index`'s `side` ("before" / "after") screenshot with its Set-of-Mark; StoreError when
        the blob cannot be read."""
        return step_picture(self._store, self.data, index, side)

    def snapshot(self, index: int, side: str) -> DomSnapshot | None:
        """Step `index`'s stored `side` snapshot (detached), or None when none was kept; StoreError /
        SnapshotError when it cannot be read."""
        sha = self.data.blobs.get(index, {}).get(f"snapshot_{side}")
        return load_snapshot(self._store.get_blob(sha)) if sha is not None else None


class SessionLibrary:
    """Every recorded session of the store the controller opened."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def list(self) -> list[SessionSummary]:
        return self._store.list_sessions()

    @property
    def damage(self) -> str | None:
        """What is damaged in the store, with what to do, once known (it then refuses every read and write)."""
        err = self._store.damage
        return err.message if err is not None else None

    def on_damage(self, fn: Callable[[str], None]) -> None:
        """`fn(message)` once, when the store is found damaged (from the thread that found it: a big store is
        checked whole on a thread of its own after it opened); at once when that is already known."""
        self._store.add_damage_listener(lambda err: fn(err.message))

    def load(self, session_id: str) -> SessionData:
        return self._store.load(session_id)

    def open(self, session_id: str) -> StoredSession:
        """A session to show read-only; StoreError when it is gone."""
        return StoredSession(self._store, self._store.load(session_id))

    def rename(self, session_id: str, title: str) -> None:
        self._store.rename(session_id, title)

    def delete(self, session_id: str) -> None:
        self._store.delete(session_id)

    async def export_test(self, session_id: str, py_path: str | Path) -> Path:
        """Write the session as a pytest-playwright test (engine.store.export_playwright), off the event
        loop; VigilError when it cannot be written."""
        from engine.store.export_playwright import export_playwright
        path = Path(py_path).expanduser()
        return await asyncio.get_running_loop().run_in_executor(
            None, lambda: export_playwright(self._store, session_id, path))

    async def export(self, session_id: str, html_path: str | Path) -> builtins.list[Path]:  # `list` here is the method
        """Write the HTML report to `html_path`, and beside it (same stem) the JSON trace (.json) and the Playwright
        trace (.trace.zip), which the report links; off the event loop; VigilError when they cannot be written."""
        html = Path(html_path).expanduser()
        paths = await asyncio.get_running_loop().run_in_executor(
            None, lambda: write_export(self._store, session_id, html_path=html, json_path=html.with_suffix(".json"),
                                       trace_path=trace_beside(html)))
        return list(paths)

    async def export_trace(self, session_id: str, zip_path: str | Path) -> Path:
        """Write the session as a Playwright trace zip (engine.store.export_trace), off the event loop; VigilError
        when it cannot be written."""
        path = Path(zip_path).expanduser()
        [out] = await asyncio.get_running_loop().run_in_executor(
            None, lambda: write_export(self._store, session_id, trace_path=path))
        return out


def trace_beside(html: Path) -> Path:
    """The Playwright trace written with a report: report.html → report.trace.zip."""
    return html.with_suffix(".trace.zip")
