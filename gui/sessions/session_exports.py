"""The Sessions tab's exports of a stored session: Export… (the HTML report, with the JSON trace and the Playwright
trace beside it), Export as test… (a pytest-playwright test) and Export trace… (a Playwright trace zip). Each asks
where in a save dialog (non-modal, opening in the folder last written to), then writes through the controller's
sessions; what was written goes to the status bar, a failure to the banner."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFileDialog, QPushButton, QWidget

from engine.errors import VigilError
from gui.kit.aio import spawn

if TYPE_CHECKING:
    from gui.supervisor.session_library import SessionLibrary


class SessionExports:
    """The three export buttons and what they do, for a panel: `library()` gives the controller's sessions (None
    without a store), `title(id)` a session's title ("" when unknown), `say(line, ms)` a status line and `fail(line)`
    an error. `dialog` is the save dialog last opened (the panel closes it with its other windows)."""

    def __init__(self, parent: QWidget, library: Callable[[], SessionLibrary | None], title: Callable[[str], str],
                 say: Callable[[str, int], None], fail: Callable[[str], None]) -> None:
        self.parent, self.library, self.title, self.say, self.fail = parent, library, title, say, fail
        self.dialog: QFileDialog | None = None
        self._dir: str | None = None  # the folder last written to: the next dialog opens there
        self.html_btn = QPushButton("Export…")
        self.html_btn.setToolTip("Write an HTML report (screenshots inline) with a JSON trace and a Playwright "
                                 "trace beside it")
        self.trace_btn = QPushButton("Export trace…")
        self.trace_btn.setToolTip("Write a Playwright trace zip: open it with `playwright show-trace` or at "
                                  "trace.playwright.dev (each step a group with its pictures and verdict)")
        self.test_btn = QPushButton("Export as test…")
        self.test_btn.setToolTip("Write a runnable pytest-playwright test of the session's executed steps, with a "
                                 "check per verified step (secrets read from environment variables)")

    def ask_export(self, session_id: str) -> QFileDialog:
        """Ask where to write the HTML report (the JSON and Playwright traces go next to it), then write them."""
        return self._ask_save("Export session", f"{_stem(self.title(session_id))}-{session_id[:8]}.html",
                              "HTML report (*.html)", "html", lambda path: spawn(self.export_to(session_id, path)))

    async def export_to(self, session_id: str, html_path: str) -> list[Path]:
        """Write the HTML report to `html_path`, the JSON trace (.json) and Playwright trace (.trace.zip) beside it."""
        library = self._library_for(html_path)
        if library is None:
            return []
        self.say(f"Exporting session {session_id[:8]}…", 0)
        try:
            paths = await library.export(session_id, html_path)
        except VigilError as exc:
            self.say("", 0)
            self.fail(f"Export failed: {exc.message}")
            return []
        self.say(f"Exported session {session_id[:8]}: " + ", ".join(map(str, paths)), 15000)
        return paths

    def ask_export_test(self, session_id: str) -> QFileDialog:
        """Ask where to write the Playwright test (a test_*.py file), then write it."""
        stem = re.sub(r"[^A-Za-z0-9]+", "_", self.title(session_id)).strip("_").lower()[:40]
        return self._ask_save("Export as test", f"test_{stem or 'session'}.py", "Python test (*.py)", "py",
                              lambda path: spawn(self.export_test_to(session_id, path)))

    async def export_test_to(self, session_id: str, py_path: str) -> Path | None:
        """Write the session as a pytest-playwright test to `py_path`; the path, or None (said in the banner)."""
        return await self._write(session_id, py_path, lambda lib: lib.export_test(session_id, py_path),
                                 "Export as test", "as a test: {path} (run it with pytest)")

    def ask_export_trace(self, session_id: str) -> QFileDialog:
        """Ask where to write the Playwright trace (a .zip), then write it."""
        name = f"{_stem(self.title(session_id))}-{session_id[:8]}.trace.zip"
        return self._ask_save("Export trace", name, "Playwright trace (*.zip)", "zip",
                              lambda path: spawn(self.export_trace_to(session_id, path)))

    async def export_trace_to(self, session_id: str, zip_path: str) -> Path | None:
        """Write the session's Playwright trace to `zip_path`; the path, or None (said in the banner)."""
        return await self._write(session_id, zip_path, lambda lib: lib.export_trace(session_id, zip_path),
                                 "Export trace", "as a Playwright trace: {path} (open it with playwright show-trace)")

    async def _write(self, session_id: str, path: str, write: Callable[[SessionLibrary], Awaitable[Path]], what: str,
                     done: str) -> Path | None:
        """One file of the session written to `path` by `write(library)`; the path, or None when it failed (`what`
        failed, said in the banner). `done` says it in the banner, `{path}` standing for where it went."""
        library = self._library_for(path)
        if library is None:
            return None
        try:
            written = await write(library)
        except VigilError as exc:
            self.fail(f"{what} failed: {exc.message}")
            return None
        self.say(f"Exported session {session_id[:8]} " + done.format(path=written), 15000)
        return written

    def _library_for(self, path: str) -> SessionLibrary | None:
        """The sessions to export from (None without a store); the next dialog opens in `path`'s folder."""
        library = self.library()
        if library is not None:
            self._dir = str(Path(path).expanduser().parent)
        return library

    def _ask_save(self, title: str, name: str, kinds: str, suffix: str, then: Callable[[str], object]) -> QFileDialog:
        """A save dialog for `name` in the last export folder; `then(path)` once a path is chosen."""
        folder = self._dir or str(Path.home())
        dlg = QFileDialog(self.parent, title, str(Path(folder) / name), kinds)
        dlg.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dlg.setDefaultSuffix(suffix)
        if QGuiApplication.platformName() in ("offscreen", "minimal"):
            dlg.setOption(QFileDialog.Option.DontUseNativeDialog, True)
        dlg.fileSelected.connect(then)
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.dialog = dlg
        dlg.open()  # not exec(): a nested event loop would stall the engine
        return dlg


def _stem(title: str) -> str:
    """A file name's stem from a session's title."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", title or "session").strip("-.")[:48] or "session"
