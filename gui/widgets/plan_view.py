"""The plan stepper (seed 001 §3.2): past steps dimmed with ✓ (or ✗ when they failed), the current
step highlighted, future steps grey; "Planning…" while a run waits for its first plan, and a
word on how to start one while nothing runs. Hovering a step shows its reasoning and expected
outcome. Plan text is always shown as plain text."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QVBoxLayout, QWidget

from engine.models.loop import Plan, PlanStep

PLANNING_TEXT = "Planning…"
IDLE_TEXT = "No plan yet: type a task below and press Run."
# state → (mark, stylesheet of the row)
_STYLE = {
    "past": ("✓", "color:#6b7280;"),
    "failed": ("✗", "color:#b91c1c;"),
    "current": ("▶", "color:#1e3a8a; background:#dbeafe; border-left:3px solid #2563eb; font-weight:bold;"),
    "future": ("○", "color:#9ca3af;"),
}


def step_state(step: PlanStep, plan: Plan) -> str:
    """past / failed / current / future for one step."""
    if step.status == "completed":
        return "past"
    if step.status == "failed":
        return "failed"
    if step.status == "active":
        return "current"
    if not any(s.status == "active" for s in plan.steps) and step.index == plan.currentStepIndex:
        return "current"
    return "future"


def _tooltip(step: PlanStep) -> str:
    """Rich-text tooltip with every piece of plan text escaped (Qt guesses the format of tooltips)."""
    parts = [f"<b>{html.escape(step.description)}</b>"]
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
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.NoFrame)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.inner = QWidget()
        self.inner.setObjectName("planInner")
        self.inner.setStyleSheet("#planInner { background:white; }")
        self.list = QVBoxLayout(self.inner)
        self.list.setContentsMargins(4, 4, 4, 4)
        self.list.setSpacing(2)
        self.list.addStretch(1)
        self.scroll.setWidget(self.inner)
        outer.addWidget(self.scroll, 1)
        self.placeholder = QLabel(idle_text)
        self.placeholder.setWordWrap(True)
        self.placeholder.setObjectName("planPlaceholder")
        self.placeholder.setAlignment(Qt.AlignCenter)
        self.placeholder.setStyleSheet("color:#6b7280; font-style:italic; padding:12px;")
        self.list.insertWidget(0, self.placeholder)
        self._rows: list[QLabel] = []
        self.plan: Plan | None = None
        self.running = False
        self.set_plan(None)

    def set_running(self, running: bool) -> None:
        """A run is under way (then an empty plan reads "Planning…") or not."""
        self.running = bool(running)
        self.placeholder.setText(PLANNING_TEXT if self.running else self.idle_text)

    def set_plan(self, plan: Plan | None) -> None:
        self.plan = plan
        for r in self._rows:
            self.list.removeWidget(r)
            r.deleteLater()
        self._rows = []
        planning = plan is None or not plan.steps
        self.placeholder.setVisible(planning)
        self.title.setText("Plan" if planning else f"Plan · {sum(s.status == 'completed' for s in plan.steps)}"
                                                   f"/{len(plan.steps)} done")
        if planning:
            return
        current = None
        for i, step in enumerate(plan.steps):
            state = step_state(step, plan)
            mark, style = _STYLE[state]
            row = QLabel()
            row.setObjectName("planStep")
            row.setTextFormat(Qt.PlainText)
            row.setWordWrap(True)
            row.setText(f"{mark}  {step.index + 1}. {step.description}")
            row.setProperty("state", state)
            row.setProperty("stepId", step.id)
            row.setStyleSheet(f"QLabel {{ {style} padding:3px 6px; }}")
            row.setToolTip(_tooltip(step))
            self.list.insertWidget(1 + i, row)
            self._rows.append(row)
            if state == "current":
                current = row
        if current is not None:
            self.scroll.ensureWidgetVisible(current)

    def rows(self) -> list[QLabel]:
        return list(self._rows)

    def is_planning(self) -> bool:
        """A run waits for its first plan ("Planning…" on show)."""
        return self.running and self.placeholder.isVisibleTo(self)

    def is_empty(self) -> bool:
        return self.placeholder.isVisibleTo(self)
