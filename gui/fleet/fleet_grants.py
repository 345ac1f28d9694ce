"""The Fleet view's grants for every run, apart from the approval bar: what the shown question's step would
be allowed as ("clicks on http://…"), a button that asks before it grants, and the grants in force, each
revocable.

Apart from the bar so its buttons never move or change width from one run's question to the next (a long
"Allow … for the whole fleet" in the bar's row widened the page's side, and a click meant for "Take over"
landed on it). A plain widget: it says what it is given and tells what the person chose (`confirmed`,
`revoke_requested(id)`); the Fleet view grants and revokes."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QListWidget, QListWidgetItem, QPushButton, QVBoxLayout, QWidget

from engine.models.text import bidi_safe
from gui.kit.labels import plain_label
from gui.kit.look import AMBER_FG, LINE, TEXT_SOFT

OFFER_WORDS = "Allow for every run…"
YES_WORDS = "Yes, for the whole fleet"


class FleetGrantsBox(QFrame):
    """`show_offer(words | None)` for the question shown; `set_grants([(id, words)])`; signals `confirmed()`
    (the person said yes to the offer on show) and `revoke_requested(grant_id)`."""

    confirmed = Signal()
    revoke_requested = Signal(int)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("fleetGrants")
        self.setStyleSheet(f"#fleetGrants {{ border:1px solid {LINE}; border-radius:4px; }}")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 4, 6, 4)
        lay.setSpacing(3)
        self.offer_line = plain_label(name="fleetGrantOffer", style=f"color:{TEXT_SOFT};")
        self.offer_btn = self._button(OFFER_WORDS, "Approve the step shown, and allow steps like it on this site "
                                      "for every run of the fleet until it ends (asks first; never sensitive steps)",
                                      self.ask)
        offer_row = QHBoxLayout()
        offer_row.addWidget(self.offer_btn)
        offer_row.addStretch(1)
        # the question before anything is granted: what, where, for whom, and the waiting steps it answers
        self.confirm = QFrame()
        self.confirm.setObjectName("fleetGrantConfirm")
        cl = QVBoxLayout(self.confirm)
        cl.setContentsMargins(0, 0, 0, 0)
        self.confirm_line = plain_label(name="fleetGrantQuestion", style=f"color:{AMBER_FG}; font-weight:bold;")
        cl.addWidget(self.confirm_line)
        row = QHBoxLayout()
        self.yes_btn = self._button(YES_WORDS, "", self.confirmed.emit)
        self.no_btn = self._button("Cancel", "", self.cancel)
        row.addWidget(self.yes_btn)
        row.addWidget(self.no_btn)
        row.addStretch(1)
        cl.addLayout(row)
        # what the last grant or revoke did, here rather than in the window's banner (which moves the page)
        self.said = plain_label(name="fleetGrantSaid", style=f"color:{TEXT_SOFT};")
        self.said.hide()
        self.in_force = plain_label("Grants for every run: none", name="fleetGrantsInForce")
        self.list = QListWidget()
        self.list.setObjectName("fleetGrantList")
        self.list.setWordWrap(True)
        self.list.setMaximumHeight(3 * self.list.fontMetrics().height() + 12)
        self.revoke_btn = self._button("Revoke", "Revoke the selected grant: such steps are asked again",
                                       self._revoke)
        grants_row = QHBoxLayout()
        grants_row.addWidget(self.list, 1)
        grants_row.addWidget(self.revoke_btn, 0, Qt.AlignmentFlag.AlignTop)
        lay.addWidget(self.offer_line)
        lay.addLayout(offer_row)
        lay.addWidget(self.confirm)
        lay.addWidget(self.said)
        lay.addWidget(self.in_force)
        lay.addLayout(grants_row)
        self._offer: str | None = None
        # the other waiting steps the grant would approve with the one shown, counted as the person asks
        self.covered: Callable[[], int] | None = None
        self.show_offer(None)
        self.set_grants([])

    def _button(self, text: str, tip: str, slot) -> QPushButton:
        b = QPushButton(text)
        b.setAutoDefault(False)  # Enter on the page's side never grants
        if tip:
            b.setToolTip(tip)
        b.clicked.connect(lambda _=False: slot())
        return b

    def show_offer(self, words: str | None) -> None:
        """What the question shown could be allowed as ("Allow clicks on SITE for the whole fleet"), or None."""
        self._offer = words
        self.confirm.hide()
        self.offer_line.setText(bidi_safe(f"Steps like this one: {_kind_and_site(words)}") if words else "")
        self.offer_line.setVisible(bool(words))
        self.offer_btn.setVisible(bool(words))

    def ask(self) -> None:
        """"Allow for every run…": the question, before anything is granted."""
        if not self._offer:
            return
        more = self.covered() if self.covered is not None else 0
        also = f" It also approves the {more} step{'s' if more != 1 else ''} waiting like it." if more else ""
        self.confirm_line.setText(bidi_safe(f"Approve this step and allow {_kind_and_site(self._offer)} for every "
                                            f"run of this fleet until it ends?{also}"))
        self.offer_btn.hide()
        self.confirm.show()
        self.no_btn.setFocus()  # a stray Enter or Space cancels

    def cancel(self) -> None:
        self.confirm.hide()
        self.offer_btn.setVisible(bool(self._offer))

    def say(self, text: str) -> None:
        self.said.setText(bidi_safe(text))
        self.said.setVisible(bool(text))

    def asking(self) -> bool:
        return self.confirm.isVisibleTo(self)

    def set_grants(self, grants: list[tuple[int, str]]) -> None:
        """The grants in force for every run: (id, words)."""
        self.list.clear()
        for gid, words in grants:
            item = QListWidgetItem(bidi_safe(f"#{gid} {words}"))
            item.setData(Qt.ItemDataRole.UserRole, gid)
            self.list.addItem(item)
        if grants:
            self.list.setCurrentRow(0)
        n = len(grants)
        self.in_force.setText(f"Grants for every run: {n}" if n else "Grants for every run: none")
        self.list.setVisible(bool(n))
        self.revoke_btn.setVisible(bool(n))

    def grant_ids(self) -> list[int]:
        return [self.list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.list.count())]

    def _revoke(self) -> None:
        item = self.list.currentItem()
        if item is not None:
            self.revoke_requested.emit(int(item.data(Qt.ItemDataRole.UserRole)))


def _kind_and_site(offer: str | None) -> str:
    """"Allow clicks on SITE for the whole fleet" → "clicks on SITE"."""
    text = (offer or "").removeprefix("Allow ")
    head, sep, _ = text.rpartition(" for ")
    return head if sep else text
