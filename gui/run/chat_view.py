"""The chat of a supervised run (seed 001 §3.3): its turns (chat_turn.py) in a scroll area that follows
the newest, under a task header (RUNNING / COMPLETED / FAILED / STOPPED).

Each thing is said once. When a run ends, its answer or reason is in the header, so the closing note
("Finished: …") shows only what it adds (the page's incidents), the finish()/fail() badge shows
`finish(…)` (the whole action in its tooltip) and a fail turn's error line is hidden. A run that
completed with steps that ran but were not seen to work is not a plain success: the header turns
amber and says how many steps are unverified.
"""

from __future__ import annotations

import json

from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtWidgets import QFrame, QHBoxLayout, QScrollArea, QVBoxLayout, QWidget

from engine.models.loop import ChatMessage, StepRecord
from gui.kit.labels import plain_label
from gui.kit.look import AMBER_BG, AMBER_FG, BLUE_BG, GREEN_DARK, LINE, RED_BG, RED_DARK, TEXT
from gui.run.chat_turn import MessageTurn

# task status (engine TaskStatus or the header words) → (header word, background, foreground)
_STATUS = {
    "idle": ("IDLE", LINE, TEXT),
    "running": ("RUNNING", BLUE_BG, "#1e40af"),
    "success": ("COMPLETED", "#dcfce7", GREEN_DARK),
    "completed": ("COMPLETED", "#dcfce7", GREEN_DARK),
    "error": ("FAILED", RED_BG, RED_DARK),
    "failed": ("FAILED", RED_BG, RED_DARK),
    "interrupted": ("STOPPED", AMBER_BG, AMBER_FG),
    "stopped": ("STOPPED", AMBER_BG, AMBER_FG),
}


def _quoted(text: str) -> str:
    """`text` as an action string quotes it (finish("…"))."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


class ChatView(QWidget):
    """The chat of a run, in a scroll area that follows the newest turn.

    - `add_or_update_message(msg)`: adds a turn, or updates the one with the same messageId in place.
    - `add_step_record(rec)`: attaches the Observation to the assistant turn of step `rec.index`
      (kept until that turn arrives, if it has not yet).
    - `set_task_status(status, detail="")`: the header; status is an engine TaskStatus
      (running/success/error/interrupted/idle) or RUNNING/COMPLETED/FAILED/STOPPED.
    - `clear()`.
    """

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("chatView")
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(0)
        self.header = QFrame()
        self.header.setObjectName("taskHeader")
        hl = QHBoxLayout(self.header)
        hl.setContentsMargins(8, 4, 8, 4)
        self.status_label = plain_label(name="taskStatus", wrap=False, selectable=False)
        f = self.status_label.font()
        f.setBold(True)
        self.status_label.setFont(f)
        self.detail_label = plain_label(name="taskDetail")
        # a completed run with steps that ran but were not seen to work says so beside COMPLETED
        self.unverified_label = plain_label(name="taskUnverified", wrap=False, selectable=False)
        self.unverified_label.setStyleSheet(f"background:{AMBER_BG}; color:{AMBER_FG}; border:1px solid {AMBER_FG}; "
                                            "border-radius:4px; padding:0px 5px; font-weight:bold;")
        self.unverified_label.hide()
        hl.addWidget(self.status_label)
        hl.addWidget(self.unverified_label)
        hl.addWidget(self.detail_label, 1)
        outer.addWidget(self.header)
        self.header.hide()
        self.status: str = ""
        self._status_key = ""  # the status as given (engine TaskStatus or header word), lower case
        self._detail = ""

        self.scroll_area = QScrollArea()
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll_area.setFrameShape(QFrame.Shape.NoFrame)
        self.inner = QWidget()
        self.inner.setObjectName("chatInner")
        self.inner.setStyleSheet("#chatInner { background:white; }")
        self.list = QVBoxLayout(self.inner)
        self.list.setContentsMargins(6, 6, 6, 6)
        self.list.setSpacing(6)
        self.list.addStretch(1)
        self.scroll_area.setWidget(self.inner)
        # the bubbles follow the viewport itself: a window shown after it was sized (a stored session's
        # view) resizes this widget before its viewport, and bubbles fitted then stayed too wide
        self.scroll_area.viewport().installEventFilter(self)
        outer.addWidget(self.scroll_area, 1)
        self.auto_scroll = True
        self.scroll_area.verticalScrollBar().rangeChanged.connect(self._follow)
        self._turns: dict[str, MessageTurn] = {}
        self._order: list[str] = []
        self._records: dict[int, StepRecord] = {}

    # -- API ------------------------------------------------------------------------------------
    def add_or_update_message(self, msg: ChatMessage) -> MessageTurn:
        turn = self._turns.get(msg.messageId)
        if turn is not None and turn.role == msg.role:
            turn.update_message(msg)
        else:
            if turn is not None:  # a role change: rebuild the turn where it was
                idx = self.list.indexOf(turn)
                self.list.removeWidget(turn)
                turn.deleteLater()
            else:
                idx = self.list.count() - 1  # before the stretch
                self._order.append(msg.messageId)
            turn = MessageTurn(msg)
            turn.set_max_bubble_width(self._bubble_width())
            self.list.insertWidget(idx, turn)
            self._turns[msg.messageId] = turn
            step = msg.metadata.get("step_index")
            if msg.role == "assistant" and isinstance(step, int) and step in self._records:
                turn.set_observation(self._records[step])
        if self._ended():  # a turn that arrives after the end (a stored session's order) is fitted too
            self._show_status()
            self._say_once()
        self._scroll_soon()
        return turn

    def add_step_record(self, rec: StepRecord) -> None:
        self._records[rec.index] = rec
        turn = self.turn_for_step(rec.index)
        if turn is not None:
            turn.set_observation(rec)
            self._scroll_soon()
        if self._ended():
            self._show_status()

    def set_task_status(self, status: str, detail: str = "") -> None:
        self._status_key, self._detail = status.lower(), detail
        self._show_status()
        self._say_once()

    def _show_status(self) -> None:
        word, bg, fg = _STATUS.get(self._status_key, (self._status_key.upper(), LINE, TEXT))
        self.status = word
        self.status_label.setText(word)
        self.detail_label.setText(self._detail)
        self.detail_label.setVisible(bool(self._detail))
        unverified = self.unverified_steps() if word == "COMPLETED" else []
        if unverified:  # not a plain success: amber, and how many steps were not seen to work
            bg, fg = AMBER_BG, AMBER_FG
            n = len(unverified)
            self.unverified_label.setText(f"{n} unverified")
            self.unverified_label.setToolTip(
                "Completed, but what " + ("these steps" if n > 1 else "this step") + " should have done was not "
                "seen on the page: step " + ", ".join(str(i + 1) for i in unverified) + ". Check them.")
        self.unverified_label.setVisible(bool(unverified))
        self.header.setStyleSheet(f"#taskHeader {{ background:{bg}; border-bottom:1px solid {fg}; }}"
                                  f"#taskHeader QLabel#taskStatus, #taskHeader QLabel#taskDetail {{ color:{fg}; }}")
        self.header.setProperty("status", word)
        self.header.setProperty("unverified", len(unverified))
        self.header.show()

    def unverified_steps(self) -> list[int]:
        """The indexes of the run's steps that ran but were not seen to work (the latest turn of each step)."""
        latest: dict[int, MessageTurn] = {}
        for t in self.turns():
            step = t.message.metadata.get("step_index")
            if t.role == "assistant" and isinstance(step, int):
                latest[step] = t
        return sorted(i for i, t in latest.items() if t.unverified)

    def _ended(self) -> bool:
        return self.status in ("COMPLETED", "FAILED", "STOPPED")

    def _say_once(self) -> None:
        """Once a run has ended, its answer (or reason) is in the task header: the closing note and the
        finish()/fail() turn do not repeat it (a note keeps what it adds, e.g. the page's incidents)."""
        detail = self._detail.strip()
        ended = self._ended()
        for t in self.turns():
            if t.role == "system":
                t.set_shown_text(self._note_remainder(t.message.content, detail) if ended and detail else None)
            elif t.role == "assistant":
                action = t.message.actionString or ""
                terminal = action.startswith(("finish(", "fail("))
                t.shorten_action(ended and bool(detail) and terminal and _quoted(detail) in action)
                t.hide_error_as_said(ended and bool(detail) and terminal and (t.message.error or "").strip() == detail)

    @staticmethod
    def _note_remainder(content: str, detail: str) -> str | None:
        """What a closing note adds to the header's detail: None when it says something else, "" when
        it only repeats it."""
        text = content.strip()
        for lead in ("Finished: ", "Failed: ", ""):
            said = lead + detail
            if text == said or text == said + ".":
                return ""
            if text.startswith(said + " "):
                return text[len(said):].strip()
        return None

    def clear(self) -> None:
        for turn in self._turns.values():
            self.list.removeWidget(turn)
            turn.deleteLater()
        self._turns.clear()
        self._order.clear()
        self._records.clear()
        self.header.hide()
        self.status = ""
        self._status_key = self._detail = ""

    # -- lookup (also for tests and the window) --------------------------------------------------
    def turns(self) -> list[MessageTurn]:
        return [self._turns[i] for i in self._order if i in self._turns]

    def turn(self, message_id: str) -> MessageTurn | None:
        return self._turns.get(message_id)

    def turn_for_step(self, step_index: int) -> MessageTurn | None:
        """The latest assistant turn of a step (a step asked again after the page changed has two)."""
        for t in reversed(self.turns()):
            if t.role == "assistant" and t.message.metadata.get("step_index") == step_index:
                return t
        return None

    def message_count(self) -> int:
        return len(self._turns)

    # -- layout ---------------------------------------------------------------------------------
    def _bubble_width(self) -> int:
        """Bubbles leave a margin on the side they do not belong to; a narrow panel (a 1024 px window)
        keeps less of it, so a turn's header and action badge fit."""
        w = self.scroll_area.viewport().width()
        return int(w * (0.82 if w >= 480 else 0.94)) - 12

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt name
        if obj is self.scroll_area.viewport() and event.type() == QEvent.Type.Resize:
            self._fit_bubbles()
        return super().eventFilter(obj, event)

    def _fit_bubbles(self) -> None:
        w = self._bubble_width()
        for t in self._turns.values():
            t.set_max_bubble_width(w)

    def _scroll_soon(self) -> None:
        if self.auto_scroll:
            QTimer.singleShot(0, self.scroll_to_bottom)

    def _follow(self, _min: int, maximum: int) -> None:
        if self.auto_scroll:
            self.scroll_area.verticalScrollBar().setValue(maximum)

    def scroll_to_bottom(self) -> None:
        bar = self.scroll_area.verticalScrollBar()
        bar.setValue(bar.maximum())
