"""The Sessions side tab: every recorded session, newest first, with the tab's own session marked.

Filter, rename (F2 on the title, or Rename), and the actions on the selected session: Open (a double-click on
the row, Enter, or Open: a read-only view) and Delete… (asks first) are carried out here, Export…, Export as
test… and Export trace… by its `SessionExports` (gui.sessions.session_exports), through the window's controller;
Replay and New session concern the run, so the window does them (`replay_requested`, `new_session_requested`).
Titles, URLs and domains come from pages and tasks, so every cell and label is plain text, and none of it goes
into a tooltip (Qt guesses tooltip formats).

A store found damaged (at open: the controller says why there is none; later — a big store is checked
whole on a thread after it opened, or a read meets a damaged page) is said here in the line under the
table and in the banner, with what to do; the list is emptied and its actions turned off (the store
refuses every read and write then).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from engine.errors import VigilError
from engine.models.text import bidi_safe
from gui.kit.flow_layout import FlowLayout
from gui.kit.labels import PlainLabel
from gui.kit.look import BANNER_FG, BLUE, TEXT
from gui.sessions.session_exports import SessionExports
from gui.sessions.session_text import local_time, short_time, status_text
from gui.sessions.session_view import SessionView
from gui.supervisor.session_library import SessionSummary

if TYPE_CHECKING:
    from gui.supervisor.controller import Supervisor
    from gui.supervisor.session_library import SessionLibrary

log = logging.getLogger("vigil.gui")

COLUMNS = ("", "Title", "Status", "Steps", "Domain", "Started")
MARK_COL, TITLE_COL, STATUS_COL, STEPS_COL, DOMAIN_COL, STARTED_COL = range(6)
ID_ROLE = Qt.ItemDataRole.UserRole + 1
CURRENT_MARK = "●"
TITLE_MIN_WIDTH = 110  # px the Title column keeps before Domain, then Started, are hidden


def _item(text: str, *, editable: bool = False) -> QTableWidgetItem:
    it = QTableWidgetItem(text)
    flags = Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled
    it.setFlags(flags | Qt.ItemFlag.ItemIsEditable if editable else flags)
    return it


class SessionsPanel(QWidget):
    """`attach(controller)`, `refresh()`, `set_current(id)`, `set_running(bool)`; `select_session(id)`,
    `selected_id()`, `open_session(id)`, `ask_delete(id)`, `ask_export(id)` for the window and tests."""

    replay_requested = Signal(str)
    new_session_requested = Signal()
    error = Signal(str)
    status = Signal(str, int)   # a line for the status bar, and how long to show it (ms; 0 until replaced)
    damage_found = Signal(str)  # the store's check found it damaged (emitted from that check's thread: queued)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("sessionsPanel")
        self.sup: Supervisor | None = None
        self.current: str | None = None
        self._running = False
        self._summaries: dict[str, SessionSummary] = {}
        self._filling = False
        self.views: list[SessionView] = []          # read-only windows opened from here
        self.delete_box: QMessageBox | None = None
        self.damage: str | None = None  # what is damaged in the store, with what to do, once known
        self._watched: SessionLibrary | None = None
        self.damage_found.connect(self._show_damage)

        v = QVBoxLayout(self)
        v.setContentsMargins(4, 6, 4, 4)
        v.setSpacing(6)
        top = QHBoxLayout()
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter by title, status, domain or URL")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._apply_filter)
        self.refresh_btn = QPushButton("Refresh")
        self.refresh_btn.clicked.connect(self.refresh)
        self.new_btn = QPushButton("New session")
        self.new_btn.setToolTip("The next task starts a new session in this tab instead of adding to the current one")
        self.new_btn.clicked.connect(self.new_session_requested)
        top.addWidget(self.filter, 1)
        top.addWidget(self.refresh_btn)
        top.addWidget(self.new_btn)
        v.addLayout(top)

        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("sessionsTable")
        self.table.setHorizontalHeaderLabels(COLUMNS)
        mark_header = self.table.horizontalHeaderItem(MARK_COL)
        if mark_header is not None:
            mark_header.setToolTip("● this tab's session")
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.EditKeyPressed)  # double-click handled below
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(24)
        h = self.table.horizontalHeader()
        h.setHighlightSections(False)
        h.setSectionResizeMode(MARK_COL, QHeaderView.ResizeMode.Fixed)
        h.setSectionResizeMode(TITLE_COL, QHeaderView.ResizeMode.Stretch)
        for col in (STATUS_COL, STEPS_COL, STARTED_COL):
            h.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        h.setSectionResizeMode(DOMAIN_COL, QHeaderView.ResizeMode.Interactive)
        self.table.setColumnWidth(MARK_COL, 22)
        self.table.setColumnWidth(DOMAIN_COL, 96)
        self.table.itemChanged.connect(self._renamed)
        self.table.itemDoubleClicked.connect(self._double_clicked)
        self.table.itemSelectionChanged.connect(self._selection_changed)
        v.addWidget(self.table, 1)
        self.table.viewport().installEventFilter(self)

        self.details = PlainLabel()  # a title or a reason may quote a page: bidi controls show as markers
        self.details.setObjectName("sessionDetails")
        self.details.setTextFormat(Qt.TextFormat.PlainText)
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details.setStyleSheet(f"color:{TEXT}; padding:2px 2px;")
        v.addWidget(self.details)

        # the actions wrap onto a second row in a narrow panel (a 1024 px window): none is ever cut off
        row = FlowLayout(spacing=6)
        row.setObjectName("sessionActions")
        self.actions_row = row
        self.open_btn = QPushButton("Open")
        self.open_btn.setToolTip("A read-only view of the session: plan, chat, steps and their screenshots")
        self.rename_btn = QPushButton("Rename")
        self.exports = SessionExports(self, lambda: self.library, self._title, self.status.emit, self.error.emit)
        x = self.exports
        self.export_btn, self.export_trace_btn, self.export_test_btn = x.html_btn, x.trace_btn, x.test_btn
        # the export actions, as the window and the tests call them on the panel
        self.ask_export, self.export_to = x.ask_export, x.export_to
        self.ask_export_test, self.export_test_to = x.ask_export_test, x.export_test_to
        self.ask_export_trace, self.export_trace_to = x.ask_export_trace, x.export_trace_to
        self.replay_btn = QPushButton("Replay")
        self.replay_btn.setToolTip("Run the session's steps again in this tab, with the approval policy of the "
                                   "task row; the replay is kept as a new session")
        self.delete_btn = QPushButton("Delete…")
        self.delete_btn.setToolTip("Delete the session with its steps and pictures (asks first)")
        self.open_btn.clicked.connect(lambda: self._on_selected(self.open_session))
        self.delete_btn.clicked.connect(lambda: self._on_selected(self.ask_delete))
        self.rename_btn.clicked.connect(self.start_rename)
        self.export_btn.clicked.connect(lambda: self._on_selected(self.ask_export))
        self.export_test_btn.clicked.connect(lambda: self._on_selected(self.ask_export_test))
        self.export_trace_btn.clicked.connect(lambda: self._on_selected(self.ask_export_trace))
        self.replay_btn.clicked.connect(lambda: self._on_selected(self.replay_requested.emit))
        for b in self.action_buttons():
            row.addWidget(b)
        v.addLayout(row)
        enter = QShortcut(QKeySequence(Qt.Key.Key_Return), self.table)
        enter.setContext(Qt.ShortcutContext.WidgetShortcut)
        enter.activated.connect(lambda: self._on_selected(self.open_session))
        self._update_buttons()

    def action_buttons(self) -> list[QPushButton]:
        """The actions on the selected session, in the order they are laid out."""
        return [self.open_btn, self.replay_btn, self.rename_btn, self.export_btn, self.export_test_btn,
                self.export_trace_btn, self.delete_btn]

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt name
        if obj is self.table.viewport() and event.type() == QEvent.Type.Resize:
            self._fit_columns()
        return super().eventFilter(obj, event)

    def _fit_columns(self) -> None:
        """In a narrow panel the Domain column, then the Started one, give their room to the title
        (the selected session's URL and start time are in the line under the table)."""
        h = self.table.horizontalHeader()
        room = self.table.viewport().width()
        need = {col: max(self.table.sizeHintForColumn(col), h.sectionSizeHint(col))
                for col in (STATUS_COL, STEPS_COL, STARTED_COL)}
        need[MARK_COL], need[DOMAIN_COL] = 22, 96
        shown = [MARK_COL, STATUS_COL, STEPS_COL, STARTED_COL, DOMAIN_COL]
        for col in (DOMAIN_COL, STARTED_COL):
            if room - sum(need[c] for c in shown) >= TITLE_MIN_WIDTH:
                break
            shown.remove(col)
        for col in (DOMAIN_COL, STARTED_COL):
            self.table.setColumnHidden(col, col not in shown)

    # -- data ----------------------------------------------------------------------------------
    @property
    def library(self) -> SessionLibrary | None:
        """The controller's sessions (None without a store)."""
        return self.sup.sessions if self.sup is not None else None

    def attach(self, sup: Supervisor) -> None:
        """List the sessions of the controller's store (it says why, when it could not open one)."""
        self.sup = sup
        has = self.library is not None
        self.new_btn.setEnabled(has)
        self.refresh_btn.setEnabled(has)
        self.filter.setEnabled(has)
        if not has:
            self.table.setRowCount(0)
            self.details.setText(sup.store_error or "No session store.")
            self.details.setStyleSheet(f"color:{BANNER_FG}; padding:2px 2px;")
        else:
            self.details.setStyleSheet(f"color:{TEXT}; padding:2px 2px;")
            self._watch(self.library)
            self.refresh()

    def _watch(self, library: SessionLibrary | None) -> None:
        if library is not None and library is not self._watched:
            self._watched = library
            library.on_damage(self.damage_found.emit)

    def _show_damage(self, message: str) -> None:
        """The store is damaged: say it (line and banner, once), empty the list, turn its actions off."""
        if self.damage == message:
            return
        self.damage = message
        self._filling = True
        self.table.setRowCount(0)
        self._filling = False
        self._summaries = {}
        self.details.setText(f"Sessions cannot be read or recorded (STORE_CORRUPT): {message}")
        self.details.setStyleSheet(f"color:{BANNER_FG}; padding:2px 2px;")
        for w in (self.filter, self.refresh_btn):
            w.setEnabled(False)
        self._update_buttons()
        self.error.emit(f"The session store is damaged (STORE_CORRUPT): {message}")

    def refresh(self) -> None:
        """Re-read the sessions (keeping the selection and the filter)."""
        library = self.library
        if library is None or self.damage:
            return
        keep = self.selected_id()
        try:
            rows = library.list()
        except VigilError as exc:
            if exc.code == "STORE_CORRUPT":  # met a damaged page: the store refuses everything from now on
                self._show_damage(library.damage or exc.message)
            else:
                self.error.emit(f"Could not list the sessions: {exc.message}")
            return
        self._filling = True
        try:
            self.table.setRowCount(len(rows))
            self._summaries = {}
            for r, s in enumerate(rows):
                self._summaries[s.id] = s
                word, colour = status_text(s.status, s.unverified, s.reason)
                mark = _item(CURRENT_MARK if s.id == self.current else "")
                mark.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                mark.setForeground(QBrush(QColor(BLUE)))
                title = _item(bidi_safe(s.title), editable=True)  # (an edit keeps the markers, not controls)
                title.setData(ID_ROLE, s.id)
                status = _item(word)
                if s.unverified:
                    status.setToolTip(f"{s.unverified} step(s) ran but were not seen to do what they should; "
                                      "open the session to see which.")
                status.setForeground(QBrush(QColor(colour)))
                f = QFont(status.font())
                f.setBold(True)
                status.setFont(f)
                steps = _item(str(s.steps))
                steps.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                for col, it in ((MARK_COL, mark), (TITLE_COL, title), (STATUS_COL, status), (STEPS_COL, steps),
                                (DOMAIN_COL, _item(s.domain or "—")), (STARTED_COL, _item(short_time(s.started)))):
                    self.table.setItem(r, col, it)
                self._style_current(r, s.id == self.current)
        finally:
            self._filling = False
        self._apply_filter(self.filter.text())
        if keep:
            self.select_session(keep)
        self._selection_changed()
        self._fit_columns()

    def set_current(self, session_id: str | None) -> None:
        """Mark the tab's session (None/"" when the next task starts a new one)."""
        self.current = session_id or None
        self.refresh()

    def set_running(self, running: bool) -> None:
        self._running = running
        self._update_buttons()

    # -- selection -----------------------------------------------------------------------------
    def session_ids(self, *, visible_only: bool = False) -> list[str]:
        rows = (r for r in range(self.table.rowCount()) if not (visible_only and self.table.isRowHidden(r)))
        return [item.data(ID_ROLE) for r in rows if (item := self.table.item(r, TITLE_COL)) is not None]

    def row_of(self, session_id: str) -> int:
        ids = self.session_ids()
        return ids.index(session_id) if session_id in ids else -1

    def selected_id(self) -> str | None:
        rows = {i.row() for i in self.table.selectedIndexes()}
        if len(rows) != 1:
            return None
        it = self.table.item(rows.pop(), TITLE_COL)
        return it.data(ID_ROLE) if it is not None else None

    def select_session(self, session_id: str) -> bool:
        r = self.row_of(session_id)
        if r < 0 or self.table.isRowHidden(r):
            return False
        self.table.selectRow(r)
        return True

    def summary(self, session_id: str) -> SessionSummary | None:
        return self._summaries.get(session_id)

    def _title(self, session_id: str) -> str:
        s = self._summaries.get(session_id)
        return s.title if s is not None else ""

    @property
    def export_dialog(self) -> QFileDialog | None:
        """The save dialog an export opened last (None before the first)."""
        return self.exports.dialog

    # -- reactions -----------------------------------------------------------------------------
    def _on_selected(self, action) -> None:
        sid = self.selected_id()
        if sid:
            action(sid)

    def _style_current(self, row: int, current: bool) -> None:
        for col in range(len(COLUMNS)):
            it = self.table.item(row, col)
            if it is not None and col != STATUS_COL:
                f = QFont(it.font())
                f.setBold(current)
                it.setFont(f)

    def _apply_filter(self, text: str) -> None:
        needle = text.strip().lower()
        for r, sid in enumerate(self.session_ids()):
            s = self._summaries.get(sid)
            hay = "" if s is None else " ".join((s.title, s.status, status_text(s.status, s.unverified, s.reason)[0],
                                                 s.domain, s.url, sid)).lower()
            self.table.setRowHidden(r, bool(needle) and needle not in hay)
        self._selection_changed()

    def _selection_changed(self) -> None:
        sid = self.selected_id()
        if self.library is not None and not self.damage:
            s = self._summaries.get(sid) if sid else None
            if s is not None:
                self.details.setText(f"{s.url or '(no URL)'}\nsession {s.id[:8]} · {s.steps} step(s) · started "
                                     f"{local_time(s.started)}" + (" · this tab's session" if s.id == self.current
                                                                   else ""))
            else:
                n = len(self.session_ids(visible_only=True))
                self.details.setText(f"{n} session(s). Select one to open, export, rename or replay it."
                                     if n else "No sessions yet: every task run in this window is kept here.")
        self._update_buttons()

    def _update_buttons(self) -> None:
        has = self.library is not None and not self.damage and self.selected_id() is not None
        for b in (self.open_btn, self.rename_btn, self.export_btn, self.export_test_btn, self.export_trace_btn):
            b.setEnabled(has)
        self.replay_btn.setEnabled(has and not self._running)
        self.delete_btn.setEnabled(has and not (self._running and self.selected_id() == self.current))
        self.new_btn.setEnabled(self.library is not None and not self.damage and not self._running)

    def start_rename(self) -> None:
        r = self.row_of(self.selected_id() or "")
        if r >= 0:
            self.table.setCurrentCell(r, TITLE_COL)
            item = self.table.item(r, TITLE_COL)
            if item is not None:
                self.table.editItem(item)

    def _double_clicked(self, item: QTableWidgetItem) -> None:
        """A double-click anywhere on a row opens it, as in a file list (rename: F2 or Rename)."""
        title = self.table.item(item.row(), TITLE_COL)
        sid = title.data(ID_ROLE) if title is not None else None
        if sid:
            self.open_session(sid)

    def _renamed(self, item: QTableWidgetItem) -> None:
        library = self.library
        if self._filling or item.column() != TITLE_COL or library is None:
            return
        sid = item.data(ID_ROLE)
        old = self._summaries.get(sid)
        title = " ".join(item.text().split())
        if old is None or title in (old.title, " ".join(bidi_safe(old.title).split())):
            return
        if not title:  # an empty title is not a name: put the old one back
            self._filling = True
            item.setText(bidi_safe(old.title))
            self._filling = False
            return
        try:
            library.rename(sid, title)
        except VigilError as exc:
            self.error.emit(f"Could not rename the session: {exc.message}")
        self.refresh()

    # -- open, delete --------------------------------------------------------------------------
    def open_session(self, session_id: str) -> SessionView | None:
        """A read-only window on a stored session (non-modal; several may be open)."""
        if self.library is None:
            return None
        try:
            view = SessionView(self.library.open(session_id), anchor=self)
        except VigilError as exc:
            self.error.emit(f"Could not open the session: {exc.message}")
            return None
        self.views = [v for v in self.views if shiboken6.isValid(v)] + [view]
        view.show()
        view.raise_()
        return view

    def ask_delete(self, session_id: str) -> QMessageBox:
        """Ask (non-modally) before deleting a session for good, then delete it."""
        s = self.summary(session_id)
        box = QMessageBox(QMessageBox.Icon.Warning, "Delete session",
                          f"Delete session {session_id[:8]} with its {s.steps if s else 0} step(s) and pictures? "
                          "This cannot be undone.",
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel, self)
        box.setTextFormat(Qt.TextFormat.PlainText)  # the title below came from a page or a task
        box.setInformativeText(s.title if s is not None else "")
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.buttonClicked.connect(lambda b: self.delete_session(session_id)
                                  if box.standardButton(b) == QMessageBox.StandardButton.Yes else None)
        self.delete_box = box
        box.open()  # not exec(): a nested event loop would stall the engine
        return box

    def delete_session(self, session_id: str) -> bool:
        """Delete a stored session (the tab's own is let go first; a running one is refused)."""
        if self.sup is None:
            return False
        try:
            self.sup.delete_session(session_id)
        except VigilError as exc:
            self.error.emit(exc.message)
            return False
        self.refresh()
        self.status.emit(f"Deleted session {session_id[:8]}.", 8000)
        return True

    def close_windows(self) -> None:
        """Close what was opened from here (it reads the store, which closes with the engine)."""
        for w in [*self.views, self.export_dialog, self.delete_box]:
            if w is not None and shiboken6.isValid(w):
                w.close()

