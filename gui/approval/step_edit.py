"""The approval bar's Edit panel: the proposed action and expected outcome as text the person changes,
read back with the engine's own parsers (`parse_action_string`, `parse_expected_outcome`) before any
decision is made; a node picked on the live view becomes the action's target (`retarget`).

Only what the person changed is sent: the action shown may carry masked text (a password), which must
never come back as the value to type.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout

from engine.errors import ActionStringError
from engine.loop.action_string import parse_action_string
from engine.loop.gates import parse_expected_outcome
from engine.models.actions import Action, ExpectedOutcome
from engine.models.loop import ApprovalRequest, Decision
from gui.approval.approval_text import outcome_text
from gui.approval.dialog_question import EnterAnswers
from gui.kit.labels import plain_label
from gui.kit.look import LINE, MUTED, RED


def show_error(label: QLabel, message: str) -> None:
    label.setStyleSheet(f"color:{RED};")
    label.setText(message)
    label.show()


class StepEdit(QFrame):
    """Action: […] Expect: […] — Run edited step / Cancel. `apply` and `cancel` are the bar's."""

    def __init__(self, apply: Callable[[], None], cancel: Callable[[], None]):
        super().__init__()
        self.setObjectName("editPanel")
        self.setStyleSheet(f"#editPanel {{ background:white; border:1px solid {LINE}; border-radius:4px; }}")
        self._action0 = self._expect0 = ""
        self._proposed: Action | None = None
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 4, 6, 4)
        self.enter = EnterAnswers(self)  # a field's Enter applies the edit and goes no further
        self.action = QLineEdit()
        self.action.setObjectName("editAction")
        self.action.setPlaceholderText('Action, e.g. click(12) or type(5, "ada@example.com")')
        self.expect = QLineEdit()
        self.expect.setObjectName("editExpect")
        self.expect.setPlaceholderText('Expected outcome: navigation, element_appears TEXT, … or JSON')
        for label, field in (("Action:", self.action), ("Expect:", self.expect)):
            row = QHBoxLayout()
            row.addWidget(QLabel(label))
            row.addWidget(field, 1)
            lay.addLayout(row)
            self.enter.watch(field, apply)
        lay.addWidget(plain_label("Or click an element on the page to make it the step's target.", "editHint",
                                  f"color:{MUTED};"))
        self.error = plain_label(name="editError", style=f"color:{RED};")
        lay.addWidget(self.error)
        row = QHBoxLayout()
        row.addStretch(1)
        self.apply_btn = QPushButton("Run edited step")
        self.apply_btn.setObjectName("run_edited_step_button")
        cancel_btn = QPushButton("Cancel")
        cancel_btn.setObjectName("cancel_button")
        self.apply_btn.clicked.connect(lambda _=False: apply())
        cancel_btn.clicked.connect(lambda _=False: cancel())
        row.addWidget(self.apply_btn)
        row.addWidget(cancel_btn)
        lay.addLayout(row)

    def load(self, req: ApprovalRequest) -> None:
        """Open on `req`'s step: its action (on the target shown) and expected outcome, the action selected."""
        p = req.proposal
        action = p.action
        t = req.target
        if t and action.target is not None and t.get("id"):
            action = action.model_copy(update={"target": t["id"]})
        self._proposed = p.action
        self._action0, self._expect0 = action.to_string(), outcome_text(p.expected_outcome)
        self.action.setText(self._action0)
        self.expect.setText(self._expect0)
        self.show()
        self.action.setFocus()
        self.action.selectAll()

    def decision(self) -> Decision | None:
        """The edit as a decision; None (and a line saying what is wrong) when it does not parse or changes
        nothing."""
        a_text, e_text = self.action.text().strip(), self.expect.text().strip()
        action: Action | None = None
        expect: ExpectedOutcome | None = None
        if a_text and a_text != self._action0:
            try:
                action = parse_action_string(a_text)
            except ActionStringError as exc:
                show_error(self.error, f"Action: {exc}")
                return None
        if e_text and e_text != self._expect0:
            try:
                expect = parse_expected_outcome(e_text)
            except ValueError as exc:
                show_error(self.error, f"Expected outcome: {exc}")
                return None
        if action is None and expect is None:
            show_error(self.error, "Nothing changed: edit the action or the expected outcome, or Approve the step "
                                   "as it is.")
            return None
        return Decision(kind="edit", action=action, expected_outcome=expect)

    def retarget(self, node_id: str) -> bool:
        """The action being edited acts on `node_id`; False (and a line saying why) when it has no target."""
        action: Action | None
        try:
            action = parse_action_string(self.action.text().strip() or self._action0)
        except ActionStringError:
            action = self._proposed
        if action is None or action.target is None:
            what = action.name if action is not None else "This action"
            show_error(self.error, f"{what} has no target to change: edit the action instead.")
            return False
        self.action.setText(action.model_copy(update={"target": node_id}).to_string())
        self.error.hide()
        return True
