"""Labels for text that comes from pages, tasks and models: shown as plain text, never as rich text."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel


def plain_label(text: str = "", name: str = "", style: str = "", *, wrap: bool = True,
                selectable: bool = True) -> QLabel:
    """A label that shows its text as plain text (page text is never rich text): wrapped and selectable
    unless told not to be, with an object name and a style sheet when given."""
    lab = QLabel()
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
