"""What the window does with recorded sessions: open one read-only, delete one (asked first), export
one (HTML report and JSON trace), replay one, start a new one. A mixin of `MainWindow`: it uses the
window's engine (`sup`), sessions panel, banner and status bar."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFileDialog, QMessageBox

from engine.errors import VigilError
from gui.aio import spawn
from gui.widgets.session_view import SessionView


class SessionActions:
    def _new_session(self) -> None:
        if self.sup.new_session():
            self.statusBar().showMessage("The next task starts a new session in this tab.", 6000)

    def open_session(self, session_id: str) -> SessionView | None:
        """A read-only window on a stored session (non-modal; several may be open)."""
        if self.sup.store is None:
            return None
        try:
            view = SessionView(self.sup.store, session_id)
        except VigilError as exc:
            self.show_error(f"Could not open the session: {exc.message}")
            return None
        self.session_views = [v for v in self.session_views if shiboken6.isValid(v)] + [view]
        view.show()
        view.raise_()
        return view

    def ask_delete(self, session_id: str) -> QMessageBox:
        """Ask (non-modally) before deleting a session for good, then delete it."""
        s = self.sessions.summary(session_id)
        box = QMessageBox(QMessageBox.Warning, "Delete session",
                          f"Delete session {session_id[:8]} with its {s.steps if s else 0} step(s) and pictures? "
                          "This cannot be undone.", QMessageBox.Yes | QMessageBox.Cancel, self)
        box.setTextFormat(Qt.PlainText)  # the title below came from a page or a task
        box.setInformativeText(s.title if s is not None else "")
        box.setDefaultButton(QMessageBox.Cancel)
        box.setAttribute(Qt.WA_DeleteOnClose)
        box.buttonClicked.connect(lambda b: self.delete_session(session_id)
                                  if box.standardButton(b) == QMessageBox.Yes else None)
        self.delete_box = box
        box.open()  # not exec(): a nested event loop would stall the engine
        return box

    def delete_session(self, session_id: str) -> bool:
        """Delete a stored session; the tab's own session is let go first (its next task starts a new one)."""
        if self.sup.store is None:
            return False
        if session_id == self.sup.current_session():
            if self.sup.running():
                self.show_error("This tab's session is running; stop the task before deleting it.")
                return False
            self.sup.new_session()
        try:
            self.sup.store.delete(session_id)
        except VigilError as exc:
            self.show_error(exc.message)
            return False
        self.sessions.refresh()
        self.statusBar().showMessage(f"Deleted session {session_id[:8]}.", 8000)
        return True

    def ask_export(self, session_id: str) -> QFileDialog:
        """Ask where to write the HTML report (the JSON trace goes next to it), then write both."""
        s = self.sessions.summary(session_id)
        stem = re.sub(r"[^A-Za-z0-9._-]+", "-", s.title if s is not None else "session").strip("-.")[:48] or "session"
        folder = getattr(self, "_export_dir", None) or str(Path.home())
        dlg = QFileDialog(self, "Export session", str(Path(folder) / f"{stem}-{session_id[:8]}.html"),
                          "HTML report (*.html)")
        dlg.setAcceptMode(QFileDialog.AcceptSave)
        dlg.setDefaultSuffix("html")
        if QGuiApplication.platformName() in ("offscreen", "minimal"):
            dlg.setOption(QFileDialog.DontUseNativeDialog, True)
        dlg.fileSelected.connect(lambda path: spawn(self.export_to(session_id, path)))
        dlg.setAttribute(Qt.WA_DeleteOnClose)
        self.export_dialog = dlg
        dlg.open()  # not exec(): a nested event loop would stall the engine
        return dlg

    async def export_to(self, session_id: str, html_path: str) -> list[Path]:
        """Write the HTML report to `html_path` and the JSON trace beside it (same stem, .json)."""
        from engine.store.report import write_export
        if self.sup.store is None:
            return []
        html = Path(html_path).expanduser()
        self._export_dir = str(html.parent)
        self.statusBar().showMessage(f"Exporting session {session_id[:8]}…")
        try:
            paths = await asyncio.get_running_loop().run_in_executor(
                None, lambda: write_export(self.sup.store, session_id, html_path=html,
                                           json_path=html.with_suffix(".json")))
        except VigilError as exc:
            self.statusBar().clearMessage()
            self.show_error(f"Export failed: {exc.message}")
            return []
        self.statusBar().showMessage(f"Exported session {session_id[:8]}: " + ", ".join(map(str, paths)), 15000)
        return list(paths)

    def replay(self, session_id: str) -> None:
        """Replay a stored session in this tab with the task row's approval policy."""
        if self.sup.running():
            return
        self._fresh_run()
        self.tabs.setCurrentIndex(0)  # the Run tab: the plan and the chat of the replay
        spawn(self._started(self.sup.replay(session_id, self.policy.currentText())))
