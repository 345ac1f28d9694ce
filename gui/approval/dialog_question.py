"""A page's JavaScript dialog put to the person in the approval bar, and the keys that may not answer.

`DialogQuestion` holds the parts the bar lays out for a confirm, prompt, alert or beforeunload: the prompt's
field, labelled "Answer:", on its own row under the message, and OK / Cancel in the bar's button row, in
that order for every kind. Cancel is the default and takes the focus: Enter (or Space) on it, or Enter
anywhere else in the bar, answers Cancel, so a stray key never confirms "Delete all?". OK takes a click or
Ctrl+Enter; Enter in the prompt's field answers OK with the typed text (the person moved into the field and
typed: that is an answer, as in a browser's own prompt).

`ClickOnly` is the event filter that keeps Space and a bare Enter off a button (OK here, Approve for a
sensitive or re-asked step) while it is on, and says so instead. `NoRepeat` keeps a held key's auto-repeat off
every button and field of the bar: one keypress is one decision, and a held Enter must not answer the next
question that takes its place. `EnterAnswers` gives a field's Enter to the field's answer and ends it there:
a line edit passes its Enter on to its parents, where the bar (now showing the next question) would take it
again.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QWidget

from engine.models.browsing import DialogInfo
from gui.kit.look import GREEN_BUTTON

_PRESS_KEYS = (Qt.Key.Key_Space, Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Select)


def ctrl_enter(event) -> bool:
    """The key event is Ctrl+Enter (either Enter key): the explicit "yes" of the bar."""
    return (event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
            and bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier))


def held(event) -> bool:
    """An auto-repeated Enter or Space (the key is held down): never a decision of its own."""
    return event.type() in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease) and event.isAutoRepeat() \
        and event.key() in _PRESS_KEYS


class NoRepeat(QObject):
    """Swallows a held Enter or Space's auto-repeat on the widgets it watches."""

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt name
        return held(event)


class EnterAnswers(QObject):
    """Enter (with or without Ctrl) in a watched field calls that field's answer and goes no further."""

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._answers: dict[QObject, Callable[[], None]] = {}

    def watch(self, field: QLineEdit, answer: Callable[[], None]) -> None:
        self._answers[field] = answer
        field.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt name
        if event.type() != QEvent.Type.KeyPress or event.key() not in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            return False
        answer = self._answers.get(watched)
        if answer is None:
            return False
        if not event.isAutoRepeat():
            answer()
        event.accept()
        return True


class ClickOnly(QObject):
    """While `active`, Space and a bare Enter do not press the watched button; `blocked()` is called instead
    (the bar says what does approve). Ctrl+Enter always passes on to the bar, which handles it (an
    auto-default button such as Cancel would otherwise take it as its own Enter)."""

    def __init__(self, blocked: Callable[[], None], parent: QObject | None = None):
        super().__init__(parent)
        self.active = False
        self._blocked = blocked

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt name
        if event.type() not in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease) or event.key() not in _PRESS_KEYS:
            return False
        if event.isAutoRepeat():
            return True
        if ctrl_enter(event):  # the bar's shortcut, never this button's own press: on to the bar
            event.ignore()
            return True
        if self.active:
            if event.type() == QEvent.Type.KeyPress and not event.isAutoRepeat():
                self._blocked()
            return True
        return False


class DialogQuestion:
    """The prompt's "Answer:" row and the OK / Cancel buttons for a page dialog; the bar places them."""

    def __init__(self, ok: Callable[[], None], cancel: Callable[[], None], blocked: Callable[[], None]):
        self.answer_row = QWidget()
        self.answer_row.setObjectName("dialogPanel")
        row = QHBoxLayout(self.answer_row)
        row.setContentsMargins(0, 2, 0, 2)
        self.label = QLabel("Answer:")
        self.label.setObjectName("dialogAnswerLabel")
        self.text = QLineEdit()
        self.text.setObjectName("dialogText")
        self.text.setPlaceholderText("The text to answer the page's prompt with")
        self.text.setToolTip("Enter or Ctrl+Enter answers OK with this text; Cancel refuses")
        self.enter = EnterAnswers(self.text)
        self.enter.watch(self.text, ok)
        self.label.setBuddy(self.text)
        row.addWidget(self.label)
        row.addWidget(self.text, 1)

        self.ok_btn = QPushButton("OK")
        self.ok_btn.setObjectName("ok_button")
        self.ok_btn.setToolTip("Answer the page's dialog OK (a click, or Ctrl+Enter)")
        self.ok_btn.setStyleSheet(GREEN_BUTTON)
        self.ok_btn.setAutoDefault(False)
        self.ok_btn.clicked.connect(lambda _=False: ok())
        self.ok_guard = ClickOnly(blocked, self.ok_btn)
        self.ok_guard.active = True
        self.ok_btn.installEventFilter(self.ok_guard)
        self.cancel_btn = QPushButton("Cancel")
        self.cancel_btn.setObjectName("dialog_cancel_button")
        self.cancel_btn.setToolTip("Answer the page's dialog Cancel (Enter)")
        self.cancel_btn.setAutoDefault(True)  # Enter on it presses it, in a dialog or not
        self.cancel_btn.setDefault(True)
        self.cancel_btn.clicked.connect(lambda _=False: cancel())
        self.cancel_guard = ClickOnly(blocked, self.cancel_btn)  # inactive: only passes Ctrl+Enter on
        self.cancel_btn.installEventFilter(self.cancel_guard)
        for b in (self.ok_btn, self.cancel_btn):
            b.setMinimumWidth(90)
        self.set_visible(False)

    def set_visible(self, on: bool) -> None:
        for w in (self.answer_row, self.ok_btn, self.cancel_btn):
            w.setVisible(on)

    def show(self, d: DialogInfo) -> None:
        """Ask `d`: the field (with the page's default answer) for a prompt only; Cancel has the focus."""
        self.set_visible(True)
        prompt = d.kind == "prompt"
        self.answer_row.setVisible(prompt)
        self.text.setText(d.default_prompt if prompt else "")
        self.cancel_btn.setFocus()

    @staticmethod
    def expect_text(d: DialogInfo) -> str:
        return {"confirm": "OK confirms, Cancel refuses.",
                "beforeunload": "OK leaves the page, Cancel stays.",
                "prompt": "OK answers with the text below, Cancel refuses."}.get(d.kind, "OK acknowledges it.")

    @staticmethod
    def keys_text(d: DialogInfo) -> str:
        enter = "Enter answers Cancel (in the Answer field: OK)" if d.kind == "prompt" else "Enter answers Cancel"
        return f"{enter} · OK: click it or press Ctrl+Enter"
