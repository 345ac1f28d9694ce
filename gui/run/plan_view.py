"""The plan stepper (seed 001 §3.2): past steps dimmed with ✓ (or ✗ when they failed), the current
step highlighted, future steps grey; "Planning…" while a run waits for its first plan, and a
word on how to start one while nothing runs. Hovering a step shows its reasoning and expected
outcome. Plan text is always shown as plain text, its bidi controls as markers (gui.kit.labels).

A step whose action ran but was not seen to work (its record is `unverified`, as `vigil run` and the
chat say) is done but not a success: it is marked ⚠ in amber, not ✓, and the title counts it
("Plan · 1/1 done · 1 unverified"). The plan itself only says "completed", so the window hands the
plan view each step record (`add_step_record`).

A step is ticked for what its records show really ran, not for what the planner proposed (issue 40): a record
ticks its plan step when the action that ran is the one proposed for it (approved as it was, or edited on the same
element); an edit or a take-over that acted on another element does not tick it, but ticks the plan step whose
words name that element and action ("Click Create account" for the person's click on Create account). A plan step
left behind undone (skipped, rejected, done on another element) shows "–", with why in its tooltip; a take-over
whose input Vigil did not see is ⚠ (unverified), not ✓."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QVBoxLayout, QWidget

from engine.loop.plan_truth import fits, same_action
from engine.models import Action
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
    "missed": ("–", f"color:{MUTED}; font-style:italic;"),  # left behind undone: skipped, rejected, done elsewhere
    "current": ("▶", f"color:{NAVY}; background:{BLUE_BG}; border-left:3px solid {BLUE}; font-weight:bold;"),
    "future": ("○", "color:#9ca3af;"),
}


def step_state(step: PlanStep, plan: Plan, unverified: frozenset[int] | set[int] = frozenset(),
               done: frozenset[int] | set[int] | None = None, missed: frozenset[int] | set[int] = frozenset(),
               live: frozenset[int] | set[int] | None = None) -> str:
    """past / unverified / failed / current / missed / future for one step. `unverified`: the plan steps whose
    action ran but was not seen to work; `done`: the plan steps the records show done (None: the plan's word is
    taken, as for a plan shown without its records); `missed`: those the records show left undone; `live`: the
    active steps still worked on (`live_steps`; computed here when not given)."""
    ran = step.index in done if done is not None else step.status == "completed"
    if ran or (step.status == "completed" and step.index not in missed and step.index not in unverified):
        return "unverified" if step.index in unverified else "past"
    if step.index in unverified:
        return "unverified"
    if step.status == "failed":
        return "failed"
    live = live_steps(plan, missed) if live is None else live
    at = plan.currentStepIndex
    if step.index in live and (step.index == at or at not in live):
        return "current"
    if step.status == "pending" and step.index == at and not live and step.index not in missed:
        return "current"
    return "missed" if step.index in missed else "future"


def live_steps(plan: Plan, missed: frozenset[int] | set[int] = frozenset()) -> set[int]:
    """The plan's active steps, but those a rejection left behind (the plan keeps them active, saying "rejected")."""
    return {s.index for s in plan.steps if s.status == "active"
            and not (s.index in missed and (s.reasoning or "").startswith("rejected:"))}


def same_step(rec: StepRecord) -> bool:
    """The action that ran is the one proposed: approved as it was, or edited (taken over) on the same element with
    the same kind of action (engine.loop.plan_truth, as the plan itself is marked)."""
    p, a = rec.proposal, rec.action
    if p is None or a is None:
        return False
    if rec.actor == "agent" and (rec.decision is None or rec.decision.action is None):
        return True
    return p.action.target is not None and same_action(p.action, a)


def _tooltip(step: PlanStep, unverified: str | None = None, missed: str | None = None) -> str:
    """Rich-text tooltip with every piece of plan text escaped (Qt guesses the format of tooltips)."""
    parts = [f"<b>{html.escape(step.description)}</b>"]
    if missed is not None:
        parts.append(f"<i>Not done:</i> {html.escape(missed)}")
    if unverified is not None:
        parts.append(f"<i>Unverified:</i> {html.escape(unverified or 'what it should have done was not seen')}")
    if step.reasoning:
        parts.append(f"<i>Why:</i> {html.escape(step.reasoning)}")
    if step.expectedOutcome:
        parts.append(f"<i>Expect:</i> {html.escape(step.expectedOutcome)}")
    parts.append(f"<i>Status:</i> {html.escape(step.status)} · {html.escape(step.toolType)}")
    return "<p style='white-space:pre-wrap'>" + "<br>".join(parts) + "</p>"


def _elsewhere(rec: StepRecord, action: Action) -> str:
    """Why a plan step is not done though a step for it ran: what ran instead, and on what."""
    who = "the person did" if rec.actor == "human" else "the step ran, as edited,"
    t = rec.target or {}
    on = f' on {t.get("role") or "the element"} "{t["name"]}"' if t.get("name") else ""
    return f"{who} {action.to_string()}{on} instead."


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
        self._done: set[int] = set()              # plan steps a record shows done
        self._missed: dict[int, str] = {}         # plan steps a record shows left undone, and why
        self._records: dict[int, StepRecord] = {}  # record index → the record, for steps a plan names later
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
        """A step of the run ended: the plan step it really did is ticked (⚠ when its record is unverified; a
        later verified try clears that), the one it was proposed for and did not do is left undone."""
        self._records[rec.index] = rec
        index = rec.proposal.plan_index if rec.proposal is not None else None
        if index is None:
            index = self._record_steps.get(rec.index)
        if index is not None:
            self._record_steps[rec.index] = index
        self._learn(rec, index)
        self.set_plan(self.plan)

    def _learn(self, rec: StepRecord, index: int | None) -> None:
        a = rec.action
        if rec.status in ("skipped", "rejected") and index is not None and index not in self._done:
            why = rec.note or rec.status
            self._missed[index] = "skipped by the person" if rec.status == "skipped" else why[:1].lower() + why[1:]
            return
        if rec.status != "completed":
            return
        if a is None:
            if rec.actor == "human" and index is not None and index not in self._done:  # input Vigil did not see
                self._unverified[index] = "The person acted in the page; Vigil did not see what they did."
            return
        if a.name in ("finish", "fail"):  # the run's end says nothing about a plan step
            return
        if index is not None and same_step(rec):
            self._tick(index, rec)
            return
        if index is not None and index not in self._done:
            self._missed[index] = _elsewhere(rec, a)
        named = self._named(a, rec.target, index)
        if named is not None:
            self._tick(named, rec)

    def _tick(self, index: int, rec: StepRecord) -> None:
        self._done.add(index)
        self._missed.pop(index, None)
        if rec.unverified:
            v = rec.verification or (rec.result.verification if rec.result else None)
            self._unverified[index] = v.feedback if v is not None else ""
        else:
            self._unverified.pop(index, None)

    def _named(self, action: Action, target: dict | None, proposed: int | None) -> int | None:
        """The plan step (not done yet) whose words name what `action` did; the one proposed first."""
        steps = self.plan.steps if self.plan is not None else []
        fitting = [s.index for s in steps if s.index not in self._done and fits(s.description, action, target)]
        return proposed if proposed in fitting else (fitting[0] if fitting else None)

    def _relearn(self) -> None:
        """Read every record again (against a plan whose words changed)."""
        self._done.clear()
        self._missed.clear()
        self._unverified.clear()
        for rec in sorted(self._records.values(), key=lambda r: r.index):
            self._learn(rec, self._record_steps.get(rec.index))

    def unverified_steps(self) -> list[int]:
        """The plan steps marked unverified (indexes)."""
        return sorted(self._unverified)

    def set_plan(self, plan: Plan | None) -> None:
        """Show `plan`: its rows made anew when its steps changed, else only the rows whose words or state
        changed updated (a step's status changes twice a step: a 10,000-step plan must not be rebuilt)."""
        if plan is None:  # a new run (or none): what was unverified belonged to the last one
            self._unverified.clear()
            self._record_steps.clear()
            self._done.clear()
            self._missed.clear()
            self._records.clear()
        elif self.plan is None or [s.description for s in self.plan.steps] != [s.description for s in plan.steps]:
            self.plan = plan  # a new plan's words: the records are read against them again
            self._relearn()
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
        done = self._done if self._records else None  # a plan shown without records: its own word
        missed = set(self._missed)
        live, unseen = live_steps(plan, missed), set(self._unverified)
        states = [step_state(step, plan, unseen, done, missed, live) for step in plan.steps]
        unverified = states.count("unverified")
        self.title.setText(f"Plan · {sum(x in ('past', 'unverified') for x in states)}/{len(plan.steps)} done"
                           + (f" · {unverified} unverified" if unverified else ""))
        self.title.setStyleSheet("font-weight:bold; padding:4px 6px;" + (f" color:{AMBER_FG};" if unverified else ""))
        current = None
        for i, step in enumerate(plan.steps):
            state = states[i]
            mark, style = _STYLE[state]
            if state == "unverified":
                mark = warn_mark()
            shown = (f"{mark}  {step.index + 1}. {step.description}", state, style,
                     _tooltip(step, self._unverified.get(step.index) if state == "unverified" else None,
                              self._missed.get(step.index) if state == "missed" else None))
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
