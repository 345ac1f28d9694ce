"""The approval bar: the proposed step in plain words, its target and expected outcome, sensitive
reasons, and the person's answer (Approve / Edit / Skip / Reject / Take over / Stop) as a
`Decision`. Edits are validated with the engine's own parsers before any decision is emitted.

Keys: Enter approves an ordinary step (Approve is the default button and has the focus). One keypress makes
one decision: the Enter that answers in a field (Reject's reason, Edit's action) goes no further, and a held
key's auto-repeat decides nothing, so a question that takes the place of the one answered
(the Fleet view's next in the queue) waits for a keypress of its own. `answered` is the request the last
decision was for: a host with several questions answers that one, whatever it shows by then. A step that needs
a deliberate yes — sensitive, with page text that reads like orders, or asked again because its target
changed after approval (TARGET_CHANGED) — is approved only by a click on Approve or Ctrl+Enter, which the
bar says; the focus rests on the bar itself and Enter or Space only repeat that. A page's dialog
(`dialog_question`) defaults to Cancel. A re-asked step shows its old → new target on one line and, as
its "Why", what changed (the planner's reason was about the old element).

Parts in their own modules: `approval_text` (what the bar says), `effect_line` (the step's "Effect:" line),
`step_edit` (the Edit panel), `dialog_question` (a page's dialog, and the key guard).

Signals:
- `decided(Decision)` — the answer to the request on show; the bar then clears itself.
- `take_over_requested(str)` — a quick command in plain words ("click Place order") for the window
  to ground with the offline planner and answer with `Decision(kind="take_over", action=…)`.
- `policy_changed(str)` — "ask", "auto" or "auto-safe".
- `grant_requested(ApprovalRequest)` — "Allow … for this session": the person approves this step and grants
  steps like it on this site for the rest of the session; offered only where a host sets `grant_offer`,
  never for a sensitive step.
- `waiting_changed(bool)` — the bar waits for the person to act in the page, or no longer does.

"I'll do it in the page" before the person acted (the host's `in_page_waits` says so) waits for them: "Act
in the page, then press Done", what they did so far (`set_in_page_progress`), Done off until they acted,
"Back to the question" to the step's buttons (`in_page_wait`). Nothing is answered before Done.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from engine.errors import ActionStringError
from engine.loop.action_string import parse_action_string
from engine.models.actions import TERMINAL_ACTIONS
from engine.models.loop import POLICIES, ApprovalRequest, Decision
from gui.approval.approval_text import (
    change_line,
    change_reason,
    default_check_words,
    deliberate,
    outcome_text,
    repeats,
    target_changed,
    target_text,
)
from gui.approval.dialog_question import ClickOnly, DialogQuestion, EnterAnswers, NoRepeat, ctrl_enter, held
from gui.approval.effect_line import EffectLine
from gui.approval.in_page_wait import InPageWait
from gui.approval.step_edit import StepEdit, show_error
from gui.kit.labels import plain_label
from gui.kit.look import AMBER_FG, AMBER_PANEL, GREEN_BUTTON, INK, LINE, RED, RED_BG, RED_DARK, TEXT, TEXT_SOFT, glyph

__all__ = ["ApprovalBar", "outcome_text", "target_text"]

_CALL = re.compile(r"^\s*[A-Za-z_][\w\-]*\s*\(")


class ApprovalBar(QWidget):
    decided = Signal(object)            # Decision
    take_over_requested = Signal(str)   # a quick command in plain words
    policy_changed = Signal(str)
    grant_requested = Signal(object)    # the ApprovalRequest approved with "Allow … for this session"
    waiting_changed = Signal(bool)      # waiting for the person to act in the page (take over), or not

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("approvalBar")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.request: ApprovalRequest | None = None
        self.answered: ApprovalRequest | None = None  # the request the last decision answered
        self.guarded = False  # the request on show needs a click on Approve or Ctrl+Enter
        self._offered = False  # the request on show is offered "Allow … for this session"
        self._seen: tuple[int, dict | None] | None = None  # step index and target last shown (for a re-ask)
        frame = QFrame()
        frame.setObjectName("approvalFrame")
        frame.setStyleSheet(f"#approvalFrame {{ background:{AMBER_PANEL}; border:1px solid #f59e0b; "
                            "border-radius:6px; }")
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(frame)
        lay = QVBoxLayout(frame)
        lay.setContentsMargins(10, 6, 10, 8)
        lay.setSpacing(4)

        top = QHBoxLayout()
        self.step_label = plain_label(name="approvalStep", style=f"color:{AMBER_FG}; font-weight:bold;")
        top.addWidget(self.step_label, 1)
        top.addWidget(QLabel("Policy:"))
        self.policy = QComboBox()
        self.policy.setObjectName("policySelector")
        self.policy.addItems(list(POLICIES))
        self.policy.setToolTip("ask: every step waits for you · auto: steps run by themselves · "
                               "auto-safe: only sensitive steps wait. Sensitive steps always ask.")
        self.policy.currentTextChanged.connect(self.policy_changed.emit)
        top.addWidget(self.policy)
        lay.addLayout(top)

        self.summary = plain_label(name="approvalSummary", style=f"font-size:14px; font-weight:bold; color:{INK};")
        self.target = plain_label(name="approvalTarget", style=f"color:{TEXT};")
        self.effect = EffectLine()  # what the step will do, as the page computed it (one line, every step)
        # a step asked again after its target changed: old → new, on one line
        self.target_change = plain_label(name="approvalTargetChange", style="color:#7c2d12; background:#fed7aa; "
                                    "font-weight:bold; padding:3px 6px; border:1px solid #ea580c;")
        self.thought = plain_label(name="approvalThought", style=f"color:{TEXT_SOFT}; font-style:italic;")
        self.expect = plain_label(name="approvalExpect", style=f"color:{TEXT};")
        self.sensitive = plain_label(name="approvalSensitive",
                                style=f"color:{RED_DARK}; background:{RED_BG}; font-weight:bold; padding:3px 6px;")
        # page text the planner read that reads like orders to it (plain text: the page cannot style it)
        self.warning = plain_label(name="approvalWarning",
                              style="color:#7c2d12; background:#ffedd5; padding:3px 6px;")
        self.error = plain_label(name="approvalError", style=f"color:{RED};")
        for w in (self.summary, self.target_change, self.target, self.effect, self.thought, self.expect,
                  self.sensitive, self.warning, self.error):
            lay.addWidget(w)

        # a JavaScript dialog the page raised (ApprovalRequest.dialog): the prompt's "Answer:" row here,
        # under the message; OK / Cancel in the button row
        self.question = DialogQuestion(self.dialog_ok, self.dialog_cancel, self._say_keys)
        self.dialog_panel, self.dialog_text = self.question.answer_row, self.question.text
        self.dialog_ok_btn, self.dialog_cancel_btn = self.question.ok_btn, self.question.cancel_btn
        lay.addWidget(self.dialog_panel)
        # which keys answer, when Enter does not approve: a line of its own above the buttons (beside them
        # a narrow bar cut it short)
        self.keys_hint = plain_label(name="approvalKeys", style=f"color:{AMBER_FG};")
        self.keys_hint.hide()
        lay.addWidget(self.keys_hint)

        buttons = QHBoxLayout()
        self.approve_btn = self._button("Approve", "Run this step (Enter)", self.approve, buttons)
        self.approve_btn.setStyleSheet(GREEN_BUTTON)
        self.approve_guard = ClickOnly(self._say_keys, self.approve_btn)
        self.approve_btn.installEventFilter(self.approve_guard)
        buttons.addWidget(self.dialog_ok_btn)
        buttons.addWidget(self.dialog_cancel_btn)
        self.edit_btn = self._button("Edit", "Change the action or the expected outcome", self.start_edit, buttons)
        self.skip_btn = self._button("Skip", "Do not run this step; the planner goes on", self.skip, buttons)
        self.reject_btn = self._button("Reject", "Refuse with a reason handed to the planner", self.start_reject,
                                       buttons)
        self.take_over_btn = self._button("Take over", "Act yourself: a command, or in the page",
                                          self.start_take_over, buttons)
        # a host that keeps grants (the MCP server in the window) says what it can grant for a request
        self.grant_offer: Callable[[ApprovalRequest], str | None] | None = None
        self.grant_btn = self._button("Allow for this session", "Approve this step, and steps like it on this site "
                                      "without asking for the rest of this session (never sensitive ones; revocable)",
                                      self.approve_and_grant, buttons)
        self.grant_btn.hide()
        buttons.addStretch(1)
        self.stop_btn = self._button("Stop", "Stop the run", self.stop, buttons)
        self.stop_btn.setStyleSheet(f"QPushButton {{ color:{RED}; }}")
        lay.addLayout(buttons)

        # inline panels
        self.edit_panel = StepEdit(self.apply_edit, self.close_panels)
        self.edit_action, self.edit_expect = self.edit_panel.action, self.edit_panel.expect
        self.edit_error, self.edit_apply = self.edit_panel.error, self.edit_panel.apply_btn
        lay.addWidget(self.edit_panel)

        self.reject_panel, rl = self._panel("rejectPanel")
        row = QHBoxLayout()
        row.addWidget(QLabel("Reason:"))
        self.reject_reason = QLineEdit()
        self.reject_reason.setObjectName("rejectReason")
        self.reject_reason.setPlaceholderText("Why not? The planner reads this.")
        self.enter = EnterAnswers(self)  # a field's Enter answers there and goes no further
        self.enter.watch(self.reject_reason, self.apply_reject)
        row.addWidget(self.reject_reason, 1)
        self.reject_apply = self._button("Reject", "", self.apply_reject, row)
        self._button("Cancel", "", self.close_panels, row)
        rl.addLayout(row)
        self.reject_error = plain_label(name="rejectError", style=f"color:{RED};")
        rl.addWidget(self.reject_error)
        lay.addWidget(self.reject_panel)

        self.take_panel, tl = self._panel("takeOverPanel")
        row = QHBoxLayout()
        self.take_command = QLineEdit()
        self.take_command.setObjectName("takeOverCommand")
        self.take_command.setPlaceholderText('click(12), or in plain words: click Place order')
        self.enter.watch(self.take_command, self.apply_take_over)
        row.addWidget(self.take_command, 1)
        self.take_apply = self._button("Run", "", self.apply_take_over, row)
        self.in_page_btn = self._button("I'll do it in the page", "Act in the live view; the agent waits",
                                        self.take_over_in_page, row)
        self._button("Cancel", "", self.close_panels, row)
        tl.addLayout(row)
        self.take_error = plain_label(name="takeOverError", style=f"color:{RED};")
        tl.addWidget(self.take_error)
        lay.addWidget(self.take_panel)

        # "I'll do it in the page" before the person acted: wait for them (see the module docstring)
        self.in_page_waits: Callable[[], bool] | None = None
        self.in_page_panel = InPageWait(self.in_page_done, self.close_panels)
        self.in_page_done_btn, self.in_page_back_btn = self.in_page_panel.done_btn, self.in_page_panel.back_btn
        lay.addWidget(self.in_page_panel)

        lay.addStretch(1)  # spare height goes below the bar's content, never between its lines
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)

        self.no_repeat = NoRepeat(self)
        for watched in (self, *self.findChildren(QPushButton)):
            watched.installEventFilter(self.no_repeat)

        self.close_panels()
        self.hide()

    # -- construction helpers -------------------------------------------------------------------
    def _button(self, text: str, tip: str, slot, layout) -> QPushButton:
        b = QPushButton(text)
        b.setObjectName(text.lower().replace(" ", "_").replace("'", "") + "_button")
        if tip:
            b.setToolTip(tip)
        b.clicked.connect(lambda _=False: slot())
        layout.addWidget(b)
        return b

    def _panel(self, name: str) -> tuple[QFrame, QVBoxLayout]:
        f = QFrame()
        f.setObjectName(name)
        f.setStyleSheet(f"#{name} {{ background:white; border:1px solid {LINE}; border-radius:4px; }}")
        lay = QVBoxLayout(f)
        lay.setContentsMargins(6, 4, 6, 4)
        return f, lay

    # -- API ------------------------------------------------------------------------------------
    def show_request(self, req: ApprovalRequest) -> None:
        old = self._seen[1] if self._seen is not None and self._seen[0] == req.step_index else None
        if req.dialog is None:  # a page's dialog during the step is not the step's target
            self._seen = (req.step_index, req.target)
        self.request = req
        p = req.proposal
        reask = target_changed(req)
        self.step_label.setText(f"Step {req.step_index + 1} is waiting for you" + (" again" if reask else ""))
        self.summary.setText(req.summary)
        self.target_change.setText(change_line(old, req.target) if reask else "")
        self.target_change.setVisible(reask)
        self.target.setText(f"Target: {target_text(req.target)}" if req.target and not reask else "")
        self.target.setVisible(bool(req.target) and not reask)
        self.effect.show_request(req)
        if reask:  # the planner's reason was about the element it saw; this is why the step is back
            why = f"Why again: the target changed after you approved it, so nothing ran: {change_reason(req)}."
        else:
            why = f"Why: {p.thought}" if p.thought and not repeats(p.thought, req.summary) else ""
        self.thought.setText(why)
        self.thought.setVisible(bool(why))
        if p.action.name in TERMINAL_ACTIONS:
            self.expect.setText("Approving ends the run; reject or skip to let the planner go on.")
        else:
            self.expect.setText("Expect: " + (p.expected_outcome.describe() if p.expected_outcome
                                              else default_check_words(p.action)))
        self.sensitive.setText("\n".join(f"⚠ Always asks: {r}" for r in req.sensitive_reasons))
        self.sensitive.setVisible(bool(req.sensitive_reasons))
        self.warning.setText("\n".join(f"⚠ Untrusted page text: {w}" for w in req.warnings))
        self.warning.setVisible(bool(req.warnings))
        self.error.setText(f"{glyph('⛔', '✖')} {req.error}" if req.error and not reask else "")
        self.error.setVisible(bool(req.error) and not reask)
        self.set_policy(req.policy)
        self.close_panels()
        for b in self.buttons():
            b.setEnabled(True)
        offer = self.grant_offer(req) if self.grant_offer is not None and not req.sensitive_reasons else None
        self.grant_btn.setText(offer or "Allow for this session")
        self.grant_btn.setVisible(bool(offer))
        self._offered = bool(offer)
        self.show()
        self._set_keys(req)
        self._show_dialog(req)

    def _set_keys(self, req: ApprovalRequest) -> None:
        """Enter approves an ordinary step (Approve is default and focused); a step that needs a deliberate
        yes takes a click or Ctrl+Enter, and the focus rests on the bar."""
        self.guarded = deliberate(req)
        self.approve_btn.setDefault(not self.guarded)
        self.approve_btn.setAutoDefault(not self.guarded)
        self.approve_guard.active = self.guarded
        self.approve_btn.setText("Approve (Ctrl+Enter)" if self.guarded else "Approve")
        self.approve_btn.setToolTip("Run this step: a click or Ctrl+Enter (Enter does not approve this step)"
                                    if self.guarded else "Run this step (Enter)")
        self._keys_say("Enter does not approve: click Approve or press Ctrl+Enter."
                               if self.guarded else "")
        self.keys_hint.setStyleSheet(f"color:{AMBER_FG};")
        if self.guarded:
            self.setFocus()
        else:
            self.approve_btn.setFocus()

    def _keys_say(self, text: str) -> None:
        self.keys_hint.setText(text)
        self.keys_hint.setVisible(bool(text))

    def _say_keys(self) -> None:
        """A key that does not answer was pressed: the hint says what does, in bold."""
        if self.request is not None and self.keys_hint.text():
            self.keys_hint.setStyleSheet(f"color:{RED}; font-weight:bold;")

    def _show_dialog(self, req: ApprovalRequest) -> None:
        """A dialog request: OK / Cancel (and the prompt's "Answer:" field) instead of the step's buttons."""
        d = req.dialog
        for b in (self.approve_btn, self.edit_btn, self.skip_btn, self.reject_btn, self.take_over_btn):
            b.setVisible(d is None)
        if d is None:
            self.question.set_visible(False)
            return
        self.step_label.setText(f"The page asks something during step {req.step_index + 1}")
        self.target.setText(f"From: {d.url}" if d.url else "")
        self.target.setVisible(bool(d.url))
        self.expect.setText(self.question.expect_text(d))
        self._keys_say(self.question.keys_text(d))
        self.question.show(d)

    def is_dialog(self) -> bool:
        """The pending request is a page dialog (OK / Cancel)."""
        return self.request is not None and self.request.dialog is not None

    def dialog_ok(self) -> None:
        req = self.request
        if req is None or req.dialog is None:
            return
        text = self.dialog_text.text() if req.dialog.kind == "prompt" else None
        self._emit(Decision(kind="approve", text=text))

    def dialog_cancel(self) -> None:
        if self.is_dialog():
            self._emit(Decision(kind="reject", reason="Cancel"))

    def clear(self) -> None:
        """Nothing is pending: hide the bar."""
        self.request = None
        self.close_panels()
        self.hide()

    def set_policy(self, policy: str) -> None:
        """Show `policy` without emitting policy_changed."""
        if policy in POLICIES and self.policy.currentText() != policy:
            self.policy.blockSignals(True)
            self.policy.setCurrentText(policy)
            self.policy.blockSignals(False)

    def is_pending(self) -> bool:
        return self.request is not None

    def buttons(self) -> list[QPushButton]:
        return [self.approve_btn, self.edit_btn, self.skip_btn, self.reject_btn, self.take_over_btn, self.stop_btn]

    # -- answers --------------------------------------------------------------------------------
    def approve(self) -> None:
        if self.is_dialog():
            return self.dialog_ok()
        self._emit(Decision.approve())

    def approve_and_grant(self) -> None:
        req = self.request
        if req is None or not self.grant_btn.isVisible():
            return
        self.grant_requested.emit(req)
        self._emit(Decision.approve())

    def skip(self) -> None:
        self._emit(Decision(kind="skip"))

    def stop(self) -> None:
        self._emit(Decision(kind="stop", reason="Stopped by the person."))

    def take_over_in_page(self) -> None:
        """The person does the step in the page: answered now when they acted already; else the bar waits
        for them to act, then for Done."""
        if self.request is None:
            return
        if self.in_page_waits is None or not self.in_page_waits():
            self._emit(Decision(kind="take_over", action=None))
            return
        self.close_panels()
        for b in (self.approve_btn, self.edit_btn, self.skip_btn, self.reject_btn, self.take_over_btn, self.grant_btn):
            b.hide()
        self._keys_say("")
        self.step_label.setText(f"Step {self.request.step_index + 1}: Vigil waits for you to act in the page")
        self.set_in_page_progress([], False)
        self.in_page_panel.show()
        self.waiting_changed.emit(True)

    def waiting_in_page(self) -> bool:
        """The bar waits for the person to act in the page (take over) and press Done."""
        return self.request is not None and self.in_page_panel.isVisibleTo(self)

    def set_in_page_progress(self, done: list[str], acted: bool) -> None:
        """What the person did in the page so far (actions in words), and whether they acted at all (Done)."""
        self.in_page_panel.set_progress(done, acted)

    def in_page_done(self) -> None:
        if self.waiting_in_page() and self.in_page_done_btn.isEnabled():
            self._emit(Decision(kind="take_over", action=None))

    def start_edit(self) -> None:
        if self.request is None:
            return
        self.close_panels()
        self.edit_panel.load(self.request)

    def apply_edit(self) -> None:
        if self.request is None:
            return
        d = self.edit_panel.decision()
        if d is not None:
            self._emit(d)

    def editing(self) -> bool:
        """The Edit panel is open for the request on show."""
        return self.request is not None and self.edit_panel.isVisibleTo(self)

    def retarget(self, node_id: str) -> bool:
        """Edit: a node picked on the live view becomes the target of the action being edited. False (and
        a line saying why) when the action has no target to change, or no edit is open."""
        return self.editing() and self.edit_panel.retarget(node_id)

    def start_reject(self) -> None:
        if self.request is None:
            return
        self.close_panels()
        self.reject_panel.show()
        self.reject_reason.setFocus()

    def apply_reject(self) -> None:
        reason = self.reject_reason.text().strip()
        if not reason:
            return self._inline(self.reject_error, "Say why: the planner reads the reason to choose another step.")
        self._emit(Decision(kind="reject", reason=reason))

    def start_take_over(self) -> None:
        if self.request is None:
            return
        self.close_panels()
        self.take_panel.show()
        self.take_command.setFocus()

    def apply_take_over(self) -> None:
        if self.request is None:
            return
        text = self.take_command.text().strip()
        if not text:
            return self._inline(self.take_error, "Type an action such as click(12) or plain words such as "
                                                 "\"click Place order\" — or choose \"I'll do it in the page\".")
        try:
            action = parse_action_string(text)
        except ActionStringError as exc:
            if _CALL.match(text):  # meant as an action string: say what is wrong with it
                return self._inline(self.take_error, str(exc))
            self.take_over_requested.emit(text)
            self.take_error.setText("Grounding the command…")
            self.take_error.setStyleSheet(f"color:{TEXT_SOFT};")
            self.take_error.show()
            return
        self._emit(Decision(kind="take_over", action=action))

    def show_take_over_error(self, message: str) -> None:
        """For the window: the plain-words command could not be grounded."""
        self.take_panel.show()
        self._inline(self.take_error, message)

    def close_panels(self) -> None:
        waited = self.in_page_panel.isVisibleTo(self)
        for panel in (self.edit_panel, self.reject_panel, self.take_panel, self.in_page_panel):
            panel.hide()
        if waited:  # back to the question: the step's buttons again
            req = self.request
            if req is not None:
                self.step_label.setText(f"Step {req.step_index + 1} is waiting for you")
                for b in (self.approve_btn, self.edit_btn, self.skip_btn, self.reject_btn, self.take_over_btn):
                    b.setVisible(req.dialog is None)
                self.grant_btn.setVisible(self._offered and req.dialog is None)
                self._set_keys(req)
            self.waiting_changed.emit(False)
        for lab in (self.edit_error, self.reject_error, self.take_error):
            lab.clear()
            lab.hide()
        self.reject_reason.clear()
        self.take_command.clear()

    def panel_open(self) -> bool:
        return any(p.isVisibleTo(self) for p in (self.edit_panel, self.reject_panel, self.take_panel,
                                                  self.in_page_panel))

    # -- internals ------------------------------------------------------------------------------
    _inline = staticmethod(show_error)

    def _emit(self, d: Decision) -> None:
        if self.request is None:
            return
        self.answered = self.request
        self.clear()
        self.decided.emit(d)

    def keyPressEvent(self, event) -> None:  # noqa: N802 - Qt name
        enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        if enter and held(event):  # a held Enter answered its question already
            event.accept()
            return
        if enter and self.request is not None and not self.panel_open():
            if ctrl_enter(event):       # the explicit yes: Approve, or OK (with the prompt's text)
                self.approve()
            elif self.is_dialog():      # Cancel is the dialog's default
                if self.focusWidget() is self.dialog_ok_btn:
                    self._say_keys()
                else:
                    self.dialog_cancel()
            elif self.guarded:
                self._say_keys()
            else:
                self.approve()
            event.accept()
            return
        if event.key() == Qt.Key.Key_Escape and self.panel_open():
            self.close_panels()
            event.accept()
            return
        super().keyPressEvent(event)
