"""One turn of the chat of a supervised run (seed 001 §3.3): a user message right and blue, an
assistant turn left and grey with its Thought (collapsible), Action badge and Observation, a system
note centred and small. `ChatView` (chat_view.py) lists them under the task header.

A step whose action ran but whose check failed is neither a success nor a failure of the action: its
turn says `unverified` in an amber badge (the word `vigil run` prints for it), with a warning mark, and
its observation says "Unverified: …" in amber — once: the turn's own error line, which says the same,
is hidden while the observation shows it.

Every piece of page or model text is shown as plain text (`Qt.PlainText` labels): nothing that
comes from a page or a model is ever interpreted as rich text; the one tooltip made from it (an
elided action badge's) is escaped.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from engine.loop.timings import ms_text, step_duration, step_phases
from engine.models.loop import ChatMessage, StepRecord
from gui.kit.labels import plain_label
from gui.kit.look import (
    AMBER_BG,
    AMBER_FG,
    AMBER_PANEL,
    BLUE,
    BLUE_BG,
    GREEN_DARK,
    INK,
    LINE,
    MUTED,
    PANEL,
    RED,
    RED_BG,
    RED_DARK,
    TEXT_SOFT,
    glyph,
    ok_mark,
    warn_mark,
)

MAX_EVENTS = 6  # recent page events shown per observation
UNVERIFIED = "unverified"  # the step word of `vigil run` for an action that ran but was not seen to work


def timing_tooltip(rec: StepRecord) -> str:
    """Where a step's time went, one phase a row (rich text made only of our own words and numbers)."""
    total = step_duration(rec.timings_ms)
    rows = "".join(f"<tr><td>{k}</td><td align='right'>&nbsp;&nbsp;{ms_text(v)}</td></tr>"
                   for k, v in step_phases(rec.timings_ms))
    return (f"<b>Step {rec.index + 1}: {ms_text(total or 0)}</b>"
            f"<table cellspacing='0' cellpadding='1'>{rows}</table>")


def _msg_icon(status: str | None, unverified: bool = False) -> str:
    if unverified:
        return warn_mark()
    if status == "pending":
        return glyph("⏳", "…")
    if status in ("success", "error"):
        return ok_mark(status == "success")
    return ""


class _Observation(QFrame):
    """What happened after a step ran: verification, errors caught, recent page events."""

    def __init__(self, rec: StepRecord, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("observation")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 4, 8, 4)
        lay.setSpacing(2)
        self.labels: list[QLabel] = []

        def add(text: str, name: str, style: str = "") -> None:
            lab = plain_label(text, name=name)
            if style:
                lab.setStyleSheet(style)
            lay.addWidget(lab)
            self.labels.append(lab)

        v = rec.verification or (rec.result.verification if rec.result else None)
        ok = rec.status == "completed" and (v is None or v.success) and (rec.result is None or rec.result.success)
        self.unverified = rec.unverified
        if rec.status in ("skipped", "rejected", "stopped"):
            word = rec.status.capitalize()
            note = (rec.note or "").strip()
            if note.lower().startswith(word.lower() + ":"):  # the note says the word already ("Rejected: …")
                note = note[len(word) + 1:].strip()
            add(f"{glyph('⏭', '»')} {word}" + (f": {note}" if note else ""), "obsStatus", f"color:{AMBER_FG};")
        elif self.unverified and v is not None:
            add(f"{warn_mark()} Unverified: {v.feedback}", "obsVerification", f"color:{AMBER_FG}; font-weight:bold;")
        elif v is not None:
            mark = ok_mark(v.success)
            add(f"{mark} {v.feedback}", "obsVerification",
                f"color:{GREEN_DARK};" if v.success else f"color:{RED_DARK}; font-weight:bold;")
        elif rec.result is not None:
            add(f"{ok_mark(rec.result.success)} {rec.result.message}", "obsVerification",
                f"color:{GREEN_DARK};" if rec.result.success else f"color:{RED_DARK}; font-weight:bold;")
        elif rec.note:
            add(f"{ok_mark(ok)} {rec.note}", "obsVerification")
        if rec.result is not None and not rec.result.success and v is not None and rec.result.message:
            add(f"Action: {rec.result.message}", "obsActionError", f"color:{RED_DARK};")
        errors = list(v.errors_detected) if v is not None else []
        if rec.result is not None and rec.result.error_code and not errors:
            errors.append(f"{rec.result.error_code}: {rec.result.message}")
        for e in errors:
            add(f"⚠ Error on the page: {e}", "obsError", f"color:{RED};")
        if v is not None:
            for s in v.success_messages:
                add(f"✔ {s}", "obsSuccess", f"color:{GREEN_DARK};")
        events = rec.events or []
        if events:
            add("Recent page events:", "obsEventsTitle", f"color:{TEXT_SOFT}; font-size:11px;")
            for ev in events[-MAX_EVENTS:]:
                add(f"• {ev.describe()}", "obsEvent", f"color:{TEXT_SOFT}; font-size:11px;")
        self.ok = ok
        bg = "#f0fdf4" if ok else AMBER_PANEL if self.unverified else "#fef2f2"
        self.setStyleSheet(f"#observation {{ background:{bg}; border-radius:6px; }}")
        if not self.labels:  # e.g. a finish step: nothing observed, so no empty box under the turn
            self.hide()

    def text(self) -> str:
        return "\n".join(lab.text() for lab in self.labels)


class MessageTurn(QFrame):
    """One chat turn. objectName is `userTurn`, `assistantTurn` or `systemTurn`; the bubble's
    alignment in its row follows the role (right, left, centre)."""

    ALIGN = {"user": Qt.AlignmentFlag.AlignRight, "assistant": Qt.AlignmentFlag.AlignLeft,
             "system": Qt.AlignmentFlag.AlignHCenter}

    def __init__(self, msg: ChatMessage, parent: QWidget | None = None):
        super().__init__(parent)
        self.role = msg.role
        self.setObjectName(f"{msg.role}Turn")
        self.setProperty("role", msg.role)
        self.alignment = self.ALIGN[msg.role]
        row = QHBoxLayout(self)
        row.setContentsMargins(4, 2, 4, 2)
        self.bubble = QFrame()
        self.bubble.setObjectName(f"{msg.role}Bubble")
        self.bubble.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        if msg.role == "user":
            row.addStretch(1)
            row.addWidget(self.bubble, 0, Qt.AlignmentFlag.AlignRight)
        elif msg.role == "assistant":  # agent turns use the full bubble width
            self.bubble.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)
            row.addWidget(self.bubble, 10)
            row.addStretch(1)
        else:
            row.addStretch(1)
            row.addWidget(self.bubble, 0, Qt.AlignmentFlag.AlignHCenter)
            row.addStretch(1)
        self.box = QVBoxLayout(self.bubble)
        self.box.setContentsMargins(10, 6, 10, 6)
        self.box.setSpacing(3)
        self.observation: _Observation | None = None
        self.timing: QLabel | None = None  # assistant turns: the step's duration, its phases on hover
        self._max_width = 360
        self.header = plain_label(name="turnHeader", selectable=False)
        self.header.setStyleSheet(f"color:{MUTED}; font-size:11px;")
        self.action_text = ""  # the whole action string; the badge may show it elided or shortened
        self.action_short = False  # the badge shows only the action's name: its argument is said elsewhere
        self._shown_text: str | None = None  # what the body shows instead of the content (see set_shown_text)
        self._error_said = False  # the error line repeats the task header
        self.thought_toggle: QToolButton | None = None
        self.body = plain_label(name="turnBody")
        self.badge = plain_label(name="actionBadge", wrap=False)
        self.badge.setStyleSheet(f"background:#1f2937; color:{PANEL}; border-radius:4px; padding:2px 6px; "
                                 "font-family:monospace;")
        self.error = plain_label(name="turnError")
        self.error.setStyleSheet(f"color:{RED_DARK};")
        # assistant turns: "unverified" when the step ran but its check failed (see the module docstring)
        self.outcome_badge = plain_label(UNVERIFIED, name="outcomeBadge", wrap=False, selectable=False)
        self.outcome_badge.setStyleSheet(f"background:{AMBER_BG}; color:{AMBER_FG}; border:1px solid {AMBER_FG}; "
                                         "border-radius:4px; padding:0px 5px; font-size:11px; font-weight:bold;")
        self.outcome_badge.setToolTip("The action ran, but what it should have done was not seen on the page.")
        self.outcome_badge.hide()
        self._record_unverified: bool | None = None  # what the step's record says, once it is attached
        self._record_human = False  # the step's record says the person did it (took over)
        if msg.role == "user":
            self.bubble.setStyleSheet(f"#userBubble {{ background:{BLUE}; border-radius:10px; }}"
                                      "#userBubble QLabel { color:white; }")
            self.header.setStyleSheet(f"color:{BLUE_BG}; font-size:11px;")
            self.box.addWidget(self.header)
            self.box.addWidget(self.body)
            self.box.addWidget(self.badge, 0, Qt.AlignmentFlag.AlignRight)
            self.box.addWidget(self.error)
            self.error.setStyleSheet(f"color:{RED_BG};")
        elif msg.role == "assistant":
            self.bubble.setStyleSheet(f"#assistantBubble {{ background:{LINE}; border-radius:10px; }}"
                                      f"#assistantBubble QLabel {{ color:{INK}; }}")
            top = QHBoxLayout()
            top.setSpacing(6)
            self.thought_toggle = QToolButton()
            self.thought_toggle.setObjectName("thoughtToggle")
            self.thought_toggle.setCheckable(True)
            self.thought_toggle.setChecked(True)
            self.thought_toggle.setAutoRaise(True)
            self.thought_toggle.setToolTip("Show or hide the agent's thought")
            self.thought_toggle.toggled.connect(self.set_thought_visible)
            # never squeezed to "T…ght"
            self.thought_toggle.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
            top.addWidget(self.thought_toggle)
            top.addWidget(self.header, 1)
            self.timing = plain_label(name="stepTiming", wrap=False, selectable=False)
            self.timing.setStyleSheet(f"color:{MUTED}; font-size:11px;")
            self.timing.hide()
            top.addWidget(self.timing)
            self.box.addLayout(top)
            self.body.setObjectName("thought")
            self.box.addWidget(self.body)
            # the outcome beside the action it judges: the top row stays short enough for a narrow panel
            act = QHBoxLayout()
            act.setSpacing(6)
            act.addWidget(self.badge)
            act.addWidget(self.outcome_badge)
            act.addStretch(1)
            self.box.addLayout(act)
            self.box.addWidget(self.error)
            self.set_thought_visible(True)
        else:
            self.bubble.setStyleSheet("#systemBubble { background:transparent; }"
                                      f"#systemBubble QLabel {{ color:{MUTED}; font-size:11px; }}")
            self.body.setAlignment(Qt.AlignmentFlag.AlignHCenter)
            self.box.addWidget(self.body)
            self.box.addWidget(self.error)
            self.header.hide()
        self.update_message(msg)

    # -- content --------------------------------------------------------------------------------
    def update_message(self, msg: ChatMessage) -> None:
        self.message = msg
        icon = _msg_icon(msg.status, self.unverified)
        if msg.role == "assistant":
            step = msg.metadata.get("step_index")
            who = f"Agent · step {step + 1}" if isinstance(step, int) else "Agent"
            if msg.metadata.get("edited"):
                who += " · edited"
            if self.taken_over:  # neither the agent's success nor its failure: the person's turn says how it went
                who += " · taken over by you"
                icon = glyph("↪", ">")
            self.header.setText(f"{who}  {icon}".rstrip())
        elif msg.role == "user":
            self.header.setText(f"You  {icon}".rstrip())
        shown = self._shown_text
        self.body.setText(msg.content if shown is None else shown)
        self.body.setVisible(bool(msg.content) and (self.thought_toggle is None or self.thought_toggle.isChecked()))
        if self.thought_toggle is not None and not msg.content:
            self.thought_toggle.hide()
        elif self.thought_toggle is not None:
            self.thought_toggle.show()
        self.action_text = msg.actionString or ""
        self.badge.setVisible(bool(msg.actionString) and msg.role != "system")
        self.error.setText(msg.error or "")
        self.outcome_badge.setVisible(self.unverified)
        colour = AMBER_FG if self.unverified else RED_BG if msg.role == "user" else \
            TEXT_SOFT if self.taken_over else RED_DARK
        self.error.setStyleSheet(f"color:{colour};")
        self.error.setVisible(bool(msg.error) and not self.error_repeated())
        self._fit()

    def set_shown_text(self, text: str | None) -> None:
        """Show `text` instead of the message's content ("" hides the turn; None shows the content)."""
        self._shown_text = text
        self.body.setText(self.message.content if text is None else text)
        self.setVisible(text != "")
        self._fit()

    def hide_error_as_said(self, said: bool) -> None:
        """The error line repeats what the task header says."""
        self._error_said = said
        self.error.setVisible(bool(self.message.error) and not self.error_repeated())

    def error_repeated(self) -> bool:
        """The turn's error line would only repeat what is shown already: a system note's own text
        ("Stopped by request."), or the "Unverified: …" its observation states."""
        err = (self.message.error or "").strip()
        if self._error_said:
            return True
        if self.role == "system":
            return err == self.message.content.strip()
        obs = self.observation
        return bool(err) and obs is not None and obs.unverified and any(
            lab.text().endswith(err) for lab in obs.labels)

    def shorten_action(self, short: bool) -> None:
        """Show only the action's name (`finish(…)`) when its argument is said elsewhere (the task
        header); the whole action stays in the badge's tooltip."""
        self.action_short = short
        self._fit_badge()

    def _fit_badge(self) -> None:
        """The action badge on one line within the bubble: elided at the end when too long, the whole
        action in its tooltip."""
        full = self.action_text
        text = full
        if self.action_short and "(" in full:
            text = full[: full.index("(")] + "(…)"
        room = max(40, self._max_width - 40 - (self.outcome_badge.sizeHint().width() + 6 if self.unverified else 0))
        shown = self.badge.fontMetrics().elidedText(text, Qt.TextElideMode.ElideRight, room)
        self.badge.setText(shown)
        self.badge.setToolTip(f"<p style='white-space:pre-wrap'>{html.escape(full)}</p>" if shown != full else "")

    def _fit(self) -> None:
        """User and system bubbles are as wide as their text (up to the maximum): a word-wrapped
        label alone would wrap short messages far too early."""
        self._fit_badge()
        if self.role == "assistant":
            return
        inner = self._max_width - 24
        for lab in (self.body, self.error):
            lines = lab.text().splitlines() or [""]
            natural = max(lab.fontMetrics().horizontalAdvance(line) for line in lines) + 6
            lab.setMinimumWidth(min(natural, inner) if lab.text() else 0)

    def set_thought_visible(self, visible: bool) -> None:
        if self.thought_toggle is None:
            return
        if self.thought_toggle.isChecked() != visible:
            self.thought_toggle.setChecked(visible)  # re-enters through toggled
            return
        self.thought_toggle.setText(("▾" if visible else "▸") + " Thought")
        self.body.setVisible(visible and bool(self.message.content if hasattr(self, "message") else True))

    @property
    def unverified(self) -> bool:
        """The step ran but its check failed: said by the loop in the message, or by the step's record."""
        if self.role != "assistant":
            return False
        if self._record_unverified is not None:
            return self._record_unverified
        return bool(self.message.metadata.get("unverified")) if hasattr(self, "message") else False

    @property
    def taken_over(self) -> bool:
        """The person took this step over (did it in the page, or ran their own action): the agent's step did
        not run, which is no failure of it — said by the loop in the message, or by the step's record."""
        if self.role != "assistant" or not hasattr(self, "message"):
            return False
        return bool(self.message.metadata.get("taken_over")) or self._record_human

    @property
    def outcome(self) -> str:
        """The turn's step in one word: pending, ok, unverified, taken_over or error ('' when it has no status)."""
        status = self.message.status
        if self.unverified:
            return UNVERIFIED
        if self.taken_over:
            return "taken_over"
        return {"pending": "pending", "success": "ok", "error": "error"}.get(status or "", "")

    def thought_visible(self) -> bool:
        return self.thought_toggle is not None and self.thought_toggle.isChecked()

    def set_observation(self, rec: StepRecord) -> None:
        if self.observation is not None:
            self.box.removeWidget(self.observation)
            self.observation.deleteLater()
        self.observation = _Observation(rec)
        self.box.addWidget(self.observation)
        if self.role == "assistant":
            self._record_unverified = self.observation.unverified
            self._record_human = rec.actor == "human"
        self.update_message(self.message)
        total = step_duration(rec.timings_ms)
        if self.timing is not None and total is not None:
            self.timing.setText(f"{glyph('⏱', '')} {ms_text(total)}".strip())
            self.timing.setToolTip(timing_tooltip(rec))
            self.timing.show()

    def set_max_bubble_width(self, w: int) -> None:
        self._max_width = max(160, w)
        self.bubble.setMaximumWidth(self._max_width)
        self._fit()
