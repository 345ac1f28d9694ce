"""Labels for text that comes from pages, tasks and models: shown as plain text, never as rich text, and with
bidi controls (U+202E and friends) shown as markers (`⟦U+202E⟧`) instead of turning the text around."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPlainTextEdit

from engine.models.text import bidi_safe


class PlainLabel(QLabel):
    """A QLabel whose text and tooltip, whenever they are set, show bidi controls as markers: the page's
    words read in the order they were written."""

    def setText(self, text: str) -> None:  # noqa: N802 - Qt name
        super().setText(bidi_safe(text))

    def setToolTip(self, tip: str) -> None:  # noqa: N802 - Qt name
        super().setToolTip(bidi_safe(tip))


class PlainTextView(QPlainTextEdit):
    """A QPlainTextEdit whose text, whenever it is set, shows bidi controls as markers (a payload, a model's
    exchange: what was sent, with each control the page put in it named where it was)."""

    def setPlainText(self, text: str) -> None:  # noqa: N802 - Qt name
        super().setPlainText(bidi_safe(text))


def plain_label(text: str = "", name: str = "", style: str = "", *, wrap: bool = True,
                selectable: bool = True) -> QLabel:
    """A label that shows its text as plain text (page text is never rich text), bidi controls as markers:
    wrapped and selectable unless told not to be, with an object name and a style sheet when given."""
    lab = PlainLabel()
    lab.setTextFormat(Qt.TextFormat.PlainText)
    lab.setWordWrap(wrap)
    lab.setText(text)
    if selectable:
        lab.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if name:
        lab.setObjectName(name)
    if style:
        lab.setStyleSheet(style)
    return lab
