"""The window's status bar: snapshot facts on the left, the loop's state and any host's button (the
MCP server's) on the right. Nothing in it overlaps at 1024 px and up, and what does not fit is cut
with "…" and shown whole in its tooltip:

- the snapshot line (`snap`) is an ElidedLabel: it takes the room left and elides at its end;
- the loop's state (`loop`) is always shown whole: its width is that of its longest word;
- a passing message (`showMessage`) is elided to the room left of the permanent widgets, whole in
  the bar's tooltip while it shows;
- a host's button (`ElidedToolButton`, e.g. "MCP: … drives this tab · http://…") takes at most
  BUTTON_SHARE of the bar and elides in the middle, its whole text in its tooltip;
- the live view's lag (`lag`): shown only while the page has changed since the snapshot the bar
  describes — "updating…", then, once it lags by more than LAG_AFTER_S, the snapshot's age
  ("snapshot 4 s old") — so the counts on the left are never taken for the page's present.
"""

from __future__ import annotations

import html
import re
import time

from PySide6.QtCore import QSize, Qt, QTimer
from PySide6.QtWidgets import QLabel, QSizePolicy, QStatusBar, QToolButton, QWidget

from engine.models.text import bidi_safe
from gui.kit.elided_label import ElidedLabel
from gui.kit.look import AMBER

BUTTON_SHARE = 0.4   # of the status bar's width, at most, for a host's button
MESSAGE_PAD = 24     # px the status bar keeps around a passing message
LAG_AFTER_S = 1.0    # a snapshot older than the page by more than this has its age said

# why a snapshot read the whole page again (the walker's reasons, engine/snapshot/js/walker/plan.js),
# in words for a person; a reason not listed is shown as the walker gave it
WHOLE_PAGE_WHY = {
    "first walk of this document": "first look at this page",
    "forced": "a fresh snapshot was asked for",
    "empty page": "the page is empty",
    "the frame moved or its clip changed": "a frame moved or was resized",
    "the viewport changed": "the page size changed",
    "the page scrolled": "the page scrolled",
    "the last walk hit the node limit": "the last read stopped at its node limit",
    "too many changes": "too much of the page changed",
    "style sheets or fonts changed": "the page's styles or fonts changed",
    "style sheets changed": "the page's styles changed",
    "fonts are loading": "fonts are still loading",
    "a floating box went away": "a floating box went away",
    "a floating box moved": "a floating box moved",
    "a floating box appeared": "a floating box appeared",
    "the document was replaced": "the page was replaced",
    "the pointer entered or left the page": "the mouse moved onto or off the page",
    "an animation moves the layout": "an animation moves things on the page",
}
# "full (reason)" as one whole part of the line (parts are joined by " · ")
_FULL_WALK = re.compile(r"(?:(?<= · )|^)full \(([^·]*)\)(?= · |$)")


def whole_page_words(reason: str) -> str:
    """The walker's reason for a full walk, in plain words."""
    if reason.startswith("focus moved and "):
        return "the focus moved, and the page's styles depend on where it is"
    return WHOLE_PAGE_WHY.get(reason, reason)


def plain_walk(line: str) -> str:
    """A snapshot line with its "full (reason)" said plainly: "whole page read again: <why>"."""
    return _FULL_WALK.sub(lambda m: f"whole page read again: {whole_page_words(m.group(1))}", line)


class ElidedToolButton(QToolButton):
    """A QToolButton whose text is elided in the middle to its width (at most `max_share` of its
    parent's); `full_text()` is the whole text, also in the tooltip's first line."""

    def __init__(self, parent: QWidget | None = None, max_share: float = BUTTON_SHARE):
        super().__init__(parent)
        self._full = ""
        self._tip = ""
        self._share = max_share
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt name
        self._full = bidi_safe(text or "")  # a client's name: its bidi controls show as markers
        self._refresh()

    def setToolTip(self, tip: str) -> None:  # noqa: N802 - Qt name
        self._tip = bidi_safe(tip or "")
        self._refresh()

    def toolTip(self) -> str:  # noqa: N802 - Qt name
        """The tooltip as its owner set it (`shown_tooltip()` adds the whole text when it is elided)."""
        return self._tip

    def shown_tooltip(self) -> str:
        return super().toolTip()

    def full_text(self) -> str:
        return self._full

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt name
        want = self.fontMetrics().horizontalAdvance(self._full) + 24
        return QSize(min(want, self._max_width()), super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt name
        return QSize(min(self.fontMetrics().horizontalAdvance("MCP: …") + 24, self._max_width()),
                     super().minimumSizeHint().height())

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt name
        super().resizeEvent(event)
        self._refresh()

    def _max_width(self) -> int:
        p = self.parentWidget()
        return max(80, int(p.width() * self._share)) if p is not None and p.width() > 0 else 10_000

    def _refresh(self) -> None:
        room = max(0, self.width() - 20)
        shown = self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideMiddle, room) if self._full else ""
        super().setText(shown)
        whole = self._full if shown != self._full else ""
        tip = "\n\n".join(t for t in (whole, self._tip) if t)
        super().setToolTip("<p style='white-space:pre-wrap'>" + html.escape(tip) + "</p>" if tip else "")
        self.updateGeometry()


class SnapshotLine(ElidedLabel):
    """The snapshot line: elided at its end; its tooltip has the whole line (when cut) and `detail`."""

    detail = ""

    def set_line(self, text: str, detail: str = "") -> None:
        self.detail = detail or ""
        self.set_full_text(plain_walk(text))

    def _refresh(self) -> None:
        super()._refresh()
        tip = "\n\n".join(t for t in (self.full_text() if self.is_elided() else "", self.detail) if t)
        self.setToolTip("<p style='white-space:pre-wrap'>" + html.escape(tip) + "</p>" if tip else "")


class StatusBar(QStatusBar):
    """`snap` (the snapshot line), `loop` (the loop's state); `showMessage` elides."""

    def __init__(self, loop_words: list[str], parent: QWidget | None = None):
        super().__init__(parent)
        self.setSizeGripEnabled(False)  # a window manager resizes the window; without one there is nothing to grip
        self.snap = SnapshotLine("no snapshot yet", mode=Qt.TextElideMode.ElideRight, min_chars=4)
        self.snap.setObjectName("snapshotLine")
        self.loop = QLabel("idle")
        self.loop.setObjectName("loopState")
        self.loop.setTextFormat(Qt.TextFormat.PlainText)
        self.loop.setMinimumWidth(max(self.loop.fontMetrics().horizontalAdvance(w) for w in [*loop_words, "idle"]) + 8)
        self.loop.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Preferred)
        self.lag = QLabel("")
        self.lag.setObjectName("snapshotLag")
        self.lag.setTextFormat(Qt.TextFormat.PlainText)
        self.lag.setStyleSheet(f"#snapshotLag {{ color:{AMBER}; }}")
        self.lag.setMinimumWidth(self.lag.fontMetrics().horizontalAdvance("snapshot 999 s old") + 8)
        self.lag.hide()
        self._ahead_since = 0.0
        self._snapshot_at = 0.0
        self._lag_timer = QTimer(self, interval=500)
        self._lag_timer.timeout.connect(self._show_lag)
        self.addWidget(self.snap, 1)
        self.addPermanentWidget(self.lag)
        self.addPermanentWidget(self.loop)
        self._message = ""
        self.messageChanged.connect(self._message_changed)

    def set_page_ahead(self, since: float, snapshot_at: float = 0.0) -> None:
        """The page changed at `since` (time.monotonic()) after the snapshot described here, taken at
        `snapshot_at`; `since` 0: the snapshot is the page's present (the lag is hidden)."""
        self._ahead_since, self._snapshot_at = float(since or 0.0), float(snapshot_at or 0.0)
        if self._ahead_since:
            self._lag_timer.start()
        else:
            self._lag_timer.stop()
        self._show_lag()

    def lag_text(self) -> str:
        if not self._ahead_since:
            return ""
        now = time.monotonic()
        if now - self._ahead_since <= LAG_AFTER_S:
            return "updating…"
        return f"snapshot {now - (self._snapshot_at or self._ahead_since):.0f} s old"

    def _show_lag(self) -> None:
        text = self.lag_text()
        self.lag.setText(text)
        self.lag.setVisible(bool(text))
        self.lag.setToolTip("The page changed after this snapshot; the live view takes a new one." if text else "")

    def showMessage(self, text: str, timeout: int | None = 0) -> None:  # noqa: N802 - Qt name
        self._message = bidi_safe(text or "")  # a step's words quote the page: bidi controls show as markers
        shown = self.fontMetrics().elidedText(self._message, Qt.TextElideMode.ElideRight, self.message_room())
        super().showMessage(shown, timeout)
        self.setToolTip(html.escape(self._message) if shown != self._message else "")

    def currentMessage(self) -> str:  # noqa: N802 - Qt name
        """The passing message, whole (`shown_message()` is what fits)."""
        return self._message if super().currentMessage() else ""

    def shown_message(self) -> str:
        return super().currentMessage()

    def message_room(self) -> int:
        """The width a passing message has: left of the first shown permanent widget."""
        right = self.width() - MESSAGE_PAD
        for w in self.findChildren(QWidget):
            if w.parentWidget() is self and w.isVisible() and w is not self.snap and w.x() > 0:
                right = min(right, w.x() - MESSAGE_PAD)
        return max(0, right)

    def _message_changed(self, text: str) -> None:
        if not text:
            self._message = ""
            self.setToolTip("")
