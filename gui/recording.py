"""The window's side of the session store (a part of `Supervisor`).

The store is opened at start (a store that cannot be opened is reported on `error`, and runs go on
unrecorded); one SessionRecorder belongs to the tab, so every task run in it adds to the tab's session until
`new_session()` (or a replay, which is always a session of its own). The tab's session follows its page when
the person moves it outside a run."""

from __future__ import annotations

import logging
from typing import Any

from engine.errors import ErrorCode, VigilError
from engine.store import Store
from engine.store.recorder import SessionRecorder
from gui.sessions import SessionLibrary

log = logging.getLogger("vigil.gui")


class SessionRecording:
    """Mixed into `Supervisor` (its signals and `running()` are used here)."""

    _store: Store | None
    sessions: SessionLibrary | None
    store_error: str
    recorder: SessionRecorder | None
    _reported: str | None
    error: Any
    session_changed: Any
    sessions_changed: Any

    def open_store(self) -> bool:
        """Open the session store (once); a store that cannot be opened is reported on `error` and
        the window goes on without recording."""
        if self._store is not None or self.store_error:
            return self._store is not None
        try:
            self._store = Store.open()
        except VigilError as exc:
            self.store_error = f"Sessions are not being recorded: {exc.message}"
            log.error("session store: %s", exc.message)
            self.error.emit(self.store_error)
            return False
        self.sessions = SessionLibrary(self._store)
        self.recorder = SessionRecorder(self._store)
        return True

    @property
    def recording(self) -> bool:
        """Runs in this window are kept in the session store."""
        return self.recorder is not None

    def current_session(self) -> str | None:
        return self.recorder.session_id if self.recorder is not None else None

    def new_session(self) -> bool:
        """The next task starts a new session in this tab (not while a task runs)."""
        if self.recorder is None or self.running():
            return False
        self.recorder.new_session()
        self.session_changed.emit("")
        return True

    def delete_session(self, session_id: str) -> None:
        """Delete a stored session; the tab's own session is let go first (its next task starts a new
        one). VigilError when there is no store, the session runs here, or the store refuses."""
        if self.sessions is None:
            raise VigilError(self.store_error or "There is no session store.", code=ErrorCode.STORE_UNAVAILABLE)
        if session_id == self.current_session():
            if self.running():
                raise VigilError("This tab's session is running; stop the task before deleting it.",
                                 code=ErrorCode.STORE_BUSY)
            self.new_session()
        self.sessions.delete(session_id)
        self.sessions_changed.emit()

    def _report_recorder(self) -> None:
        err = self.recorder.error if self.recorder is not None else None
        if err and err != self._reported:
            self._reported = err
            self.error.emit(err)

    def _page_moved(self, url: str) -> None:
        """The tab moved outside a run (URL bar, back/forward, a link): the tab's session follows."""
        if self.recorder is None or self.running() or not self.recorder.session_id:
            return
        self.recorder.page_moved(url)
        self._report_recorder()
        self.sessions_changed.emit()
