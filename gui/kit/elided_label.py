"""A one-line plain-text label that elides what does not fit ("…") instead of asking its layout for
room: a long locator or count line never widens the panel it sits in. The full text is kept
(`full_text()`) and, while elided, shown in the tooltip — as plain text: Qt guesses the format of
tooltips, so text that looks like markup is escaped first. Bidi controls (U+202E and friends) are kept as
markers (`⟦U+202E⟧`, `engine.models.text`): the text reads in the order it was written."""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from engine.models.text import bidi_safe


class ElidedLabel(QLabel):
    """`set_full_text(text)`; `full_text()`; `is_elided()`; `set_placeholder(text)`: shown (and its
    own tooltip) while there is no text. `tooltip_always` keeps the tooltip on (with `tooltip_prefix`
    before the text) even when everything fits."""

    def __init__(self, text: str = "", parent: QWidget | None = None, *,
                 mode: Qt.TextElideMode = Qt.TextElideMode.ElideMiddle,
                 min_chars: int = 8, tooltip_prefix: str = "", tooltip_always: bool = False) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(False)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self._mode = mode
        self._min_chars = min_chars
        self._prefix = tooltip_prefix
        self._always = tooltip_always
        self._full = ""
        self._placeholder = ""
        self.set_full_text(text)

    def set_placeholder(self, text: str) -> None:
        self._placeholder = bidi_safe(text or "")
        self._refresh()

    def set_full_text(self, text: str) -> None:
        self._full = bidi_safe(text or "")
        self._refresh()

    def full_text(self) -> str:
        return self._full

    def is_elided(self) -> bool:
        return self.text() != (self._full or self._placeholder)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt name
        hint = super().minimumSizeHint()
        return QSize(self.fontMetrics().horizontalAdvance("x" * self._min_chars), hint.height())

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt name
        return QSize(self.fontMetrics().horizontalAdvance(self._full or self._placeholder) + 8,
                     super().sizeHint().height())

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt name
        super().resizeEvent(event)
        self._refresh()

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt name
        super().changeEvent(event)
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):  # a style sheet's font arrives late
            self._refresh()

    def _refresh(self) -> None:
        room = max(0, self.contentsRect().width() - 2)
        src = self._full or self._placeholder
        # a placeholder is a sentence: its start matters
        mode = self._mode if self._full else Qt.TextElideMode.ElideRight
        shown = self.fontMetrics().elidedText(src, mode, room) if src else ""
        if shown != self.text():
            super().setText(shown)
        if not self._full:
            self.setToolTip(self._placeholder)
        elif shown != self._full or self._always:
            self.setToolTip("<p style='white-space:pre-wrap'>" + html.escape(self._prefix + self._full) + "</p>")
        else:
            self.setToolTip("")
