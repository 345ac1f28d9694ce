"""Taking over a step in the page, the window's side.

While a step waits for approval the person may act in the live view themselves; the controller keeps
what they do (`Supervisor.person`, an `engine.loop.person_steps.PersonSteps`). "I'll do it in the page"
pressed before they acted waits for them: the approval bar says "Act in the page, then press Done" and
lists what they did so far; Done stays off until the page had their own input (a step Vigil can name, or a
press `InputForwarder` delivered: the tab's `person_input_at`), and only Done answers the step. Pressed
after they acted, it answers at once. "Back to the question" stops waiting.

Meanwhile the step's target outline follows the page: `gui.approval.step_target.target_in` finds the target
in the newest
snapshot (by its ID, kept while the element lives, else by role and name); the controller's live view
brings newer snapshots as the page changes (without one, a snapshot is asked for once the person's input
settles).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer

from gui.kit.aio import spawn

if TYPE_CHECKING:
    from gui.approval.approval_bar import ApprovalBar
    from gui.supervisor.controller import Supervisor

POLL_MS = 150     # how often the waiting bar reads what the person did
SETTLE_MS = 350   # after the person's last press, key or wheel turn: a snapshot of the page as it is now


class TakeOver(QObject):
    """`TakeOver(sup, bar, parent)`: answers the bar's `in_page_waits`, feeds its progress while it waits, and
    hears the live view's input (`heard`, set as the page view's `input_listener`)."""

    def __init__(self, sup: Supervisor, bar: ApprovalBar, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.sup, self.bar = sup, bar
        bar.in_page_waits = self.must_wait
        bar.waiting_changed.connect(self._waiting)
        self._poll = QTimer(self, interval=POLL_MS)
        self._poll.timeout.connect(self.progress)
        self._settle = QTimer(self, singleShot=True, interval=SETTLE_MS)
        self._settle.timeout.connect(self._look)

    # -- the person's input ---------------------------------------------------------------------
    def heard(self, method: str, args: tuple, kw: dict) -> None:
        """The live view's input on its way to the page: the controller keeps it as the person's steps
        while a step waits; a press, key or wheel turn then asks for a snapshot once input settles."""
        self.sup.person_input.feed(method, args, kw)
        if self.sup.person is not None and not (method == "mouse" and args and args[0] in ("move", "down")):
            self._settle.start()

    def _look(self) -> None:
        # the live view, where the controller runs one, follows the page by itself
        if self.sup.person is not None and self.sup.tab is not None and self.sup.live.follower is None:
            spawn(self.sup.refresh())

    def acted(self) -> bool:
        """The person did something in the page since the step began waiting."""
        person = self.sup.person
        if person is None:
            return False
        return bool(person.so_far()) or self._pressed_since(person.started_at)

    def must_wait(self) -> bool:
        """"I'll do it in the page" waits for the person: they have not acted in the page yet."""
        return not self.acted()

    def _pressed_since(self, t: float) -> bool:
        tabs = list(getattr(self.sup.browser, "tabs", None) or []) or [self.sup.tab]
        return any(float(getattr(getattr(x, "target", x), "person_input_at", 0.0) or 0.0) > t
                   for x in tabs if x is not None)

    # -- the waiting bar ------------------------------------------------------------------------
    def _waiting(self, on: bool) -> None:
        if on:
            self._poll.start()
            self.progress()
        else:
            self._poll.stop()

    def progress(self) -> None:
        """Tell the waiting bar what the person did so far, and whether Done may answer."""
        if not self.bar.waiting_in_page():
            self._poll.stop()
            return
        person = self.sup.person
        done = [pa.action.to_string() for pa in person.so_far()] if person is not None else []
        self.bar.set_in_page_progress(done, bool(done) or (person is not None and
                                                           self._pressed_since(person.started_at)))
