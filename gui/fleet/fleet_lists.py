"""The Fleet view's two lists: every run with its state (a table), and the questions waiting for the
person in the order they were asked (a list that says when it has painted each one, for the fleet's
"proposed → shown" figure). Plain widgets: they show what they are given (as plain text, bidi controls as
markers: `engine.models.text`) and say what was picked."""

from __future__ import annotations

import html
import time
from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QListWidget,
    QListWidgetItem,
    QTableWidget,
    QTableWidgetItem,
)

from engine.fleet.words import status_word
from engine.models.text import bidi_safe
from gui.approval.effect_line import effect_words
from gui.kit.look import AMBER, BLUE, INK, MUTED, RED, TEXT_SOFT

# state → (words, colour): the words of `engine.fleet.words`, as `vigil fleet` and `vigil sessions` say them
STATE_LOOK: dict[str, tuple[str, str]] = {
    "queued": (status_word("queued"), MUTED),
    "running": (status_word("running"), BLUE),
    "waiting": (status_word("waiting"), AMBER),
    "done": ("✔ " + status_word("done"), "#15803d"),
    "failed": ("✘ " + status_word("failed"), RED),
    "stopped": ("■ " + status_word("stopped"), TEXT_SOFT),
}
RUN_COLUMNS = ("Run", "State", "Steps", "Browser", "Outcome")
BROWSER_COLUMN = RUN_COLUMNS.index("Browser")


def state_words(state: str, plain: bool = False) -> str:
    """The state in words ("✔ done"); `plain` without its mark ("done"), for sentences and counts."""
    words = STATE_LOOK.get(state, (state, ""))[0]
    return words.lstrip("✔✘■ ") if plain else words


def count_words(counts: dict[str, int]) -> str:
    """{"waiting": 3, "stopped": 1} → "3 waiting for you, 1 stopped", in the order runs move through."""
    order = list(STATE_LOOK)
    keys = sorted(counts, key=lambda s: order.index(s) if s in order else len(order))
    return ", ".join(f"{counts[s]} {state_words(s, plain=True)}" for s in keys if counts[s])


class RunTable(QTableWidget):
    """One row per run, in the fleet file's order; `run_picked(name)` when the person selects one."""

    run_picked = Signal(str)

    def __init__(self, parent=None):
        super().__init__(0, len(RUN_COLUMNS), parent)
        self.setObjectName("fleetRuns")
        self.setHorizontalHeaderLabels(list(RUN_COLUMNS))
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.verticalHeader().setVisible(False)
        head = self.horizontalHeader()
        # the short columns as wide as their words; the run's name and its outcome share the rest (cut
        # with "…" where they do not fit, whole in their tooltips), so no column is pushed out of sight
        head.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        head.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        head.setSectionResizeMode(len(RUN_COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.setWordWrap(False)
        self._rows: dict[str, int] = {}
        self.itemSelectionChanged.connect(self._picked)

    def show_browser(self, on: bool) -> None:
        """The Browser column only where the fleet has several browsers (one says nothing, and takes the
        room the outcome needs on a small screen)."""
        self.setColumnHidden(BROWSER_COLUMN, not on)

    def set_runs(self, runs) -> None:
        self.setRowCount(len(runs))
        self._rows = {}
        for i, run in enumerate(runs):
            self._rows[run.name] = i
            self.update_run(run)

    def update_run(self, run) -> None:
        row = self._rows.get(run.name)
        if row is None:  # a run that came later (an MCP client that connected): a row at the end
            row = self._rows[run.name] = self.rowCount()
            self.insertRow(row)
        words, colour = STATE_LOOK.get(run.state, (run.state, INK))
        if getattr(run, "waiting_for", None) and not run.finished:  # a grid queued its session: not a timeout
            words, colour = status_word("browser"), AMBER
        outcome = run.answer if run.state == "done" else (run.reason or "")
        cells = (run.name, words, str(run.steps), run.browser or "", outcome or "")
        for col, text in enumerate(cells):
            item = self.item(row, col)
            if item is None:
                item = QTableWidgetItem()
                self.setItem(row, col, item)
            item.setText(bidi_safe(text))  # plain text: a run's outcome may quote the page
            item.setToolTip(bidi_safe(text if col == len(cells) - 1 and text else f"{run.name}: {run.task}"))
            if col == 0:
                item.setData(Qt.ItemDataRole.UserRole, run.name)  # the name itself, as the fleet knows it
            if col == 1:
                item.setForeground(QBrush(QColor(colour)))

    def state_of(self, name: str) -> str:
        row = self._rows.get(name)
        item = self.item(row, 1) if row is not None else None
        return item.text() if item is not None else ""

    def select_run(self, name: str) -> None:
        row = self._rows.get(name)
        if row is not None and self.currentRow() != row:
            self.selectRow(row)

    def selected_run(self) -> str | None:
        rows = self.selectionModel().selectedRows()
        if not rows:
            return None
        item = self.item(rows[0].row(), 0)
        return item.data(Qt.ItemDataRole.UserRole) if item is not None else None

    def _picked(self) -> None:
        name = self.selected_run()
        if name is not None:
            self.run_picked.emit(name)


class QueueList(QListWidget):
    """The waiting questions, oldest first: "[run] step N: what it would do" (its "Effect:" line in the
    tooltip; the approval bar shows it for the selected one). `entry_picked(id)` when one is selected.
    `on_shown(id)` is called once per entry, from the first paint that drew it."""

    entry_picked = Signal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("fleetQueue")
        self.setWordWrap(True)
        self.on_shown: Callable[[int], None] | None = None
        self._unshown: set[int] = set()
        self.painted_at: dict[int, float] = {}
        self.itemSelectionChanged.connect(self._picked)

    def add_entry(self, entry) -> None:
        item = QListWidgetItem(self._words(entry))
        item.setData(Qt.ItemDataRole.UserRole, entry.id)
        item.setToolTip(self._tip(entry))
        if entry.request.sensitive_reasons or entry.request.warnings:
            item.setForeground(QBrush(QColor(RED)))
        self.addItem(item)
        self._unshown.add(entry.id)
        self.viewport().update()

    @staticmethod
    def _words(entry) -> str:
        req = entry.request
        flag = " ⚠" if req.sensitive_reasons or req.warnings else ""
        return bidi_safe(f"[{entry.run}] step {req.step_index + 1}: {req.summary}{flag}")

    @classmethod
    def _tip(cls, entry) -> str:
        """The question and its "Effect:" line, as plain text (Qt reads a tooltip that looks like markup as
        markup, and the summary and the effect quote the page)."""
        words, _ = effect_words(entry.request)
        text = f"{cls._words(entry)}\nEffect: {words}" if entry.request.dialog is None else cls._words(entry)
        return "<p style='white-space:pre-wrap'>" + html.escape(bidi_safe(text)) + "</p>"

    def remove_entry(self, entry_id: int) -> None:
        for i in range(self.count()):
            if self.item(i).data(Qt.ItemDataRole.UserRole) == entry_id:
                self.takeItem(i)
                break
        self._unshown.discard(entry_id)

    def entry_ids(self) -> list[int]:
        return [self.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.count())]

    def select_entry(self, entry_id: int) -> None:
        for i in range(self.count()):
            if self.item(i).data(Qt.ItemDataRole.UserRole) == entry_id:
                self.setCurrentRow(i)
                return

    def selected_entry(self) -> int | None:
        items = self.selectedItems()
        return items[0].data(Qt.ItemDataRole.UserRole) if items else None

    def _picked(self) -> None:
        eid = self.selected_entry()
        if eid is not None:
            self.entry_picked.emit(eid)

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt name
        super().paintEvent(event)
        if not self._unshown:
            return
        now, view = time.time(), self.viewport().rect()
        for i in range(self.count()):
            item = self.item(i)
            eid = item.data(Qt.ItemDataRole.UserRole)
            if eid in self._unshown and self.visualItemRect(item).intersects(view):  # drawn in this paint
                self._unshown.discard(eid)
                self.painted_at[eid] = now
                if self.on_shown is not None:
                    self.on_shown(eid)
