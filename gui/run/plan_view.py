"""The plan stepper (seed 001 §3.2): past steps dimmed with ✓ (or ✗ when they failed), the current
step highlighted, future steps grey; "Planning…" while a run waits for its first plan, and a
word on how to start one while nothing runs. Hovering a step shows its reasoning and expected
outcome. Plan text is always shown as plain text, its bidi controls as markers (gui.kit.labels).

A step whose action ran but was not seen to work (its record is `unverified`, as `vigil run` and the
chat say) is done but not a success: it is marked ⚠ in amber, not ✓, and the title counts it
("Plan · 1/1 done · 1 unverified"). The plan itself only says "completed", so the window hands the
plan view each step record (`add_step_record`)."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QVBoxLayout, QWidget

from engine.models.loop import Plan, PlanStep, StepRecord
from gui.kit.labels import PlainLabel
from gui.kit.look import AMBER_FG, BLUE, BLUE_BG, MUTED, NAVY, RED, warn_mark

PLANNING_TEXT = "Planning…"
IDLE_TEXT = "No plan yet: type a task below and press Run."
# state → (mark, stylesheet of the row)
_STYLE = {
    "past": ("✓", f"color:{MUTED};"),
    "failed": ("✗", f"color:{RED};"),
    "unverified": ("!", f"color:{AMBER_FG};"),  # the mark is warn_mark() where a font can draw it
    "current": ("▶", f"color:{NAVY}; background:{BLUE_BG}; border-left:3px solid {BLUE}; font-weight:bold;"),
    "future": ("○", "color:#9ca3af;"),
}


def step_state(step: PlanStep, plan: Plan, unverified: frozenset[int] | set[int] = frozenset()) -> str:
    """past / unverified / failed / current / future for one step (`unverified`: the indexes of the
    plan steps whose action ran but was not seen to work)."""
    if step.status == "completed":
        return "unverified" if step.index in unverified else "past"
    if step.status == "failed":
        return "failed"
    if step.status == "active":
        return "current"
    if not any(s.status == "active" for s in plan.steps) and step.index == plan.currentStepIndex:
        return "current"
    return "future"


def _tooltip(step: PlanStep, unverified: str | None = None) -> str:
    """Rich-text tooltip with every piece of plan text escaped (Qt guesses the format of tooltips)."""
    parts = [f"<b>{html.escape(step.description)}</b>"]
    if unverified is not None:
        parts.append(f"<i>Unverified:</i> {html.escape(unverified or 'what it should have done was not seen')}")
    if step.reasoning:
        parts.append(f"<i>Why:</i> {html.escape(step.reasoning)}")
    if step.expectedOutcome:
        parts.append(f"<i>Expect:</i> {html.escape(step.expectedOutcome)}")
    parts.append(f"<i>Status:</i> {html.escape(step.status)} · {html.escape(step.toolType)}")
    return "<p style='white-space:pre-wrap'>" + "<br>".join(parts) + "</p>"


class PlanView(QWidget):
    """`set_plan(plan | None)`; `rows()` gives the step labels, each with the property `state`
    (past / failed / current / future) and objectName `planStep`."""

    def __init__(self, parent: QWidget | None = None, *, idle_text: str = IDLE_TEXT):
        super().__init__(parent)
        self.setObjectName("planView")
        self.idle_text = idle_text
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        self.title = QLabel("Plan")
        self.title.setObjectName("planTitle")
        self.title.setStyleSheet("font-weight:bold; padding:4px 6px;")
        outer.addWidget(self.title)
        self.scroll_area = QScrollArea()
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.inner = QWidget()
        self.inner.setObjectName("planInner")
        self.inner.setStyleSheet("#planInner { background:white; }")
        self.list = QVBoxLayout(self.inner)
        self.list.setContentsMargins(4, 4, 4, 4)
        self.list.setSpacing(2)
        self.list.addStretch(1)
        self.scroll_area.setWidget(self.inner)
        outer.addWidget(self.scroll_area, 1)
        self.placeholder = PlainLabel(idle_text)  # later an MCP client's name
        self.placeholder.setWordWrap(True)
        self.placeholder.setObjectName("planPlaceholder")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setStyleSheet(f"color:{MUTED}; font-style:italic; padding:12px;")
        self.list.insertWidget(0, self.placeholder)
        self._rows: list[QLabel] = []
        self._shown: list[tuple[str, str, str, str]] = []  # what each row shows: its text, state, style, tooltip
        self.plan: Plan | None = None
        # plan step index → why the step was not seen to work, for steps whose latest record is unverified
        self._unverified: dict[int, str] = {}
        self._record_steps: dict[int, int] = {}  # record index → the plan step it worked on
        self.running = False
        self.driver = ""  # who sends the steps of a run that has no plan (an MCP client), or ""
        self.set_plan(None)

    def set_running(self, running: bool) -> None:
        """A run is under way (then an empty plan reads "Planning…", or who sends its steps) or not."""
        self.running = bool(running)
        self._say()

    def set_driver(self, text: str | None) -> None:
        """A run without a plan whose steps come from elsewhere (an MCP client): the panel says so instead of
        "Planning…" (e.g. "Steps from Inspector (MCP) …"); None when that run is over."""
        self.driver = text or ""
        self._say()

    def _say(self) -> None:
        self.placeholder.setText(self.driver or (PLANNING_TEXT if self.running else self.idle_text))

    def add_step_record(self, rec: StepRecord) -> None:
        """A step of the run ended: a plan step whose latest record is unverified is marked so (a later
        verified try of the same plan step clears it)."""
        index = rec.proposal.plan_index if rec.proposal is not None else None
        if index is None:
            index = self._record_steps.get(rec.index)
        if index is None:
            return
        self._record_steps[rec.index] = index
        if rec.unverified:
            v = rec.verification or (rec.result.verification if rec.result else None)
            self._unverified[index] = v.feedback if v is not None else ""
        elif rec.status == "completed" and rec.action is not None and rec.action.name not in ("finish", "fail"):
            self._unverified.pop(index, None)
        self.set_plan(self.plan)

    def unverified_steps(self) -> list[int]:
        """The plan steps marked unverified (indexes)."""
        return sorted(self._unverified)

    def set_plan(self, plan: Plan | None) -> None:
        """Show `plan`: its rows made anew when its steps changed, else only the rows whose words or state
        changed updated (a step's status changes twice a step: a 10,000-step plan must not be rebuilt)."""
        if plan is None:  # a new run (or none): what was unverified belonged to the last one
            self._unverified.clear()
            self._record_steps.clear()
        self.plan = plan
        same_steps = plan is not None and len(plan.steps) == len(self._rows) and all(
            r.property("stepId") == st.id for r, st in zip(self._rows, plan.steps, strict=True))
        if not same_steps:
            for r in self._rows:
                self.list.removeWidget(r)
                r.deleteLater()
            self._rows, self._shown = [], []
        self.placeholder.setVisible(plan is None or not plan.steps)
        if plan is None or not plan.steps:
            self.title.setText("Plan")
            return
        unverified = {s.index for s in plan.steps if s.status == "completed" and s.index in self._unverified}
        self.title.setText(f"Plan · {sum(s.status == 'completed' for s in plan.steps)}/{len(plan.steps)} done"
                           + (f" · {len(unverified)} unverified" if unverified else ""))
        self.title.setStyleSheet("font-weight:bold; padding:4px 6px;" + (f" color:{AMBER_FG};" if unverified else ""))
        current = None
        for i, step in enumerate(plan.steps):
            state = step_state(step, plan, unverified)
            mark, style = _STYLE[state]
            if state == "unverified":
                mark = warn_mark()
            shown = (f"{mark}  {step.index + 1}. {step.description}", state, style,
                     _tooltip(step, self._unverified.get(step.index) if state == "unverified" else None))
            if same_steps:
                row = self._rows[i]
                if self._shown[i] != shown:
                    self._show_row(row, shown)
                    self._shown[i] = shown
            else:
                row = PlainLabel()
                row.setObjectName("planStep")
                row.setTextFormat(Qt.TextFormat.PlainText)
                row.setWordWrap(True)
                row.setProperty("stepId", step.id)
                self._show_row(row, shown)
                self.list.insertWidget(1 + i, row)
                self._rows.append(row)
                self._shown.append(shown)
            if state == "current":
                current = row
        if current is not None:
            self.scroll_area.ensureWidgetVisible(current)

    @staticmethod
    def _show_row(row: QLabel, shown: tuple[str, str, str, str]) -> None:
        text, state, style, tip = shown
        row.setText(text)
        row.setProperty("state", state)
        row.setStyleSheet(f"QLabel {{ {style} padding:3px 6px; }}")
        row.setToolTip(tip)

    def rows(self) -> list[QLabel]:
        return list(self._rows)

    def is_planning(self) -> bool:
        """A run waits for its first plan ("Planning…" on show)."""
        return self.running and not self.driver and self.placeholder.isVisibleTo(self)

    def is_empty(self) -> bool:
        return self.placeholder.isVisibleTo(self)
