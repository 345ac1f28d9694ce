"""The approval bar's wait for the person's own input (Take over → "I'll do it in the page" before they
acted): what to do ("Act in the page, then press Done"), what they did so far, Done — off until they acted —
and Back to the question. The bar decides; this panel only shows."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QFrame, QHBoxLayout, QPushButton, QVBoxLayout

from gui.kit.labels import plain_label
from gui.kit.look import NAVY, TEXT

WAIT_WORDS = ("Act in the page, then press Done. Vigil records what you do there as this step; nothing is "
              "recorded until you act.")
NOTHING_YET = "Nothing done in the page yet."
SOMETHING_DONE = "You acted in the page (nothing Vigil can name as a step yet)."


class InPageWait(QFrame):
    """`InPageWait(done, back)`: the two buttons call the bar's slots."""

    def __init__(self, done: Callable[[], None], back: Callable[[], None]):
        super().__init__()
        self.setObjectName("inPagePanel")
        self.setStyleSheet("#inPagePanel { background:#eff6ff; border:1px solid #93c5fd; border-radius:4px; }")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 4, 6, 4)
        self.title = plain_label(WAIT_WORDS, "inPageTitle", f"color:{NAVY}; font-weight:bold;")
        self.so_far = plain_label(NOTHING_YET, "inPageSoFar", f"color:{TEXT};")
        lay.addWidget(self.title)
        lay.addWidget(self.so_far)
        row = QHBoxLayout()
        row.addStretch(1)
        self.done_btn = QPushButton("Done")
        self.done_btn.setObjectName("in_page_done_button")
        self.done_btn.setToolTip("Record what you did in the page as this step, and hand the run back to the agent")
        self.back_btn = QPushButton("Back to the question")
        self.back_btn.setObjectName("in_page_back_button")
        self.back_btn.setToolTip("Stop waiting: approve, edit, skip or reject the step instead")
        self.done_btn.clicked.connect(lambda _=False: done())
        self.back_btn.clicked.connect(lambda _=False: back())
        row.addWidget(self.done_btn)
        row.addWidget(self.back_btn)
        lay.addLayout(row)

    def set_progress(self, done: list[str], acted: bool) -> None:
        """What the person did so far (actions in words), and whether they acted at all (Done is on then)."""
        if done:
            self.so_far.setText("So far: " + " · ".join(f"{i}. {d}" for i, d in enumerate(done, 1)))
        else:
            self.so_far.setText(SOMETHING_DONE if acted else NOTHING_YET)
        self.done_btn.setEnabled(acted)
