"""The window's side of the session store (a part of `Supervisor`: `sup.recording`).

The store is opened at start (a store that cannot be opened is reported on `error`, and runs go on
unrecorded); one SessionRecorder belongs to the tab, so every task run in it adds to the tab's session until
`new_session()` (or a replay, which is always a session of its own). The tab's session follows its page when
the person moves it outside a run."""

from __future__ import annotations

import contextlib
import logging
from typing import Protocol

from PySide6.QtCore import SignalInstance

from engine.errors import ErrorCode, VigilError
from engine.store import Store
from engine.store.recorder import SessionRecorder
from gui.supervisor.session_library import SessionLibrary

log = logging.getLogger("vigil.gui")


class RecordingHost(Protocol):
    """What the recording uses of its supervisor."""

    error: SignalInstance
    session_changed: SignalInstance
    sessions_changed: SignalInstance

    def running(self) -> bool: ...


class SessionRecording:
    """`SessionRecording(sup)`: the store (`store`, None until opened or when it could not be: `error`), what
    the window reads of it (`library`) and the tab's recorder (`recorder`)."""

    def __init__(self, sup: RecordingHost) -> None:
        self.sup = sup
        self.store: Store | None = None
        self.library: SessionLibrary | None = None  # what the window reads and changes of the store
        self.recorder: SessionRecorder | None = None  # the tab's
        self.error = ""  # why there is no store ("" while there is one, or before it was opened)
        self._reported: str | None = None

    def open(self) -> bool:
        """Open the session store (once); a store that cannot be opened is reported on `error` and
        the window goes on without recording."""
        if self.store is not None or self.error:
            return self.store is not None
        try:
            self.store = Store.open()
        except VigilError as exc:
            self.error = f"Sessions are not being recorded: {exc.message}"
            log.error("session store: %s", exc.message)
            self.sup.error.emit(self.error)
            return False
        self.library = SessionLibrary(self.store)
        self.recorder = SessionRecorder(self.store)
        return True

    @property
    def on(self) -> bool:
        """Runs in this window are kept in the session store."""
        return self.recorder is not None

    def current_session(self) -> str | None:
        return self.recorder.session_id if self.recorder is not None else None

    def new_session(self) -> bool:
        """The next task starts a new session in this tab (not while a task runs)."""
        if self.recorder is None or self.sup.running():
            return False
        self.recorder.new_session()
        self.sup.session_changed.emit("")
        return True

    def delete_session(self, session_id: str) -> None:
        """Delete a stored session; the tab's own session is let go first (its next task starts a new
        one). VigilError when there is no store, the session runs here, or the store refuses."""
        if self.library is None:
            raise VigilError(self.error or "There is no session store.", code=ErrorCode.STORE_UNAVAILABLE)
        if session_id == self.current_session():
            if self.sup.running():
                raise VigilError("This tab's session is running; stop the task before deleting it.",
                                 code=ErrorCode.STORE_BUSY)
            self.new_session()
        self.library.delete(session_id)
        self.sup.sessions_changed.emit()

    def forget_reported(self) -> None:
        """A new run: a recorder error it meets is reported again, even one said before."""
        self._reported = None

    def report(self) -> None:
        """Say the recorder's error on `error`, once."""
        err = self.recorder.error if self.recorder is not None else None
        if err and err != self._reported:
            self._reported = err
            self.sup.error.emit(err)

    def page_moved(self, url: str) -> None:
        """The tab moved outside a run (URL bar, back/forward, a link): the tab's session follows."""
        if self.recorder is None or self.sup.running() or not self.recorder.session_id:
            return
        self.recorder.page_moved(url)
        self.report()
        self.sup.sessions_changed.emit()

    def close(self) -> None:
        """Close the store (the engine is down); nothing is recorded after this."""
        if self.store is not None:
            with contextlib.suppress(Exception):
                self.store.close()
            self.store = self.library = self.recorder = None
