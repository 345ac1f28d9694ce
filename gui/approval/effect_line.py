"""The approval bar's "Effect:" line: what the step will do as the page computed it before any input goes out
(`StepEffect.line()`: "submits 'Delete workspace' — POST /workspaces/42/delete").

One line that elides what does not fit, the whole line in its tooltip. Every step the bar asks about has the
line, with a computed effect or with words saying why there is none, so the bar keeps its height from one
request to the next; a page's dialog is not a step and hides it. The effect quotes the page (element, option
and form names), so it is shown as plain text made one line by `one_line` (no line breaks, bidi overrides or
zero-width characters).
"""

from __future__ import annotations

from PySide6.QtCore import Qt

from engine.actions.effect import EFFECT_ACTIONS
from engine.models.loop import ApprovalRequest
from gui.approval.approval_text import one_line
from gui.kit.elided_label import ElidedLabel
from gui.kit.look import AMBER_FG, INK, MUTED

EFFECT_LIMIT = 400  # characters of the effect kept for the tooltip (the label itself elides to its width)
UNKNOWN = "not known: the page did not say what this step will do"
NO_INPUT = "nothing computed: this step puts no input into the page"
HELD = "something the page started, held at the browser: approve lets it go on, reject stops it"


def effect_words(req: ApprovalRequest) -> tuple[str, str]:
    """(what follows "Effect:", its tone: "effect", "unknown" or "none") for a step's request."""
    if req.effect is not None:
        return one_line(req.effect.line(), EFFECT_LIMIT), "effect"
    if req.proposal.details.get("held"):
        return HELD, "none"
    if req.proposal.action.name in EFFECT_ACTIONS:  # an input step whose page would not say: worth a glance
        return UNKNOWN, "unknown"
    return NO_INPUT, "none"


_STYLE = {"effect": f"color:{INK};", "unknown": f"color:{AMBER_FG}; font-style:italic;",
          "none": f"color:{MUTED};"}


class EffectLine(ElidedLabel):
    """`show_request(req)`: "Effect: …" for the step on show (hidden for a page's dialog)."""

    def __init__(self) -> None:
        # elided in the middle: the verb at the start and "— another site" at the end both stay in view
        super().__init__(mode=Qt.TextElideMode.ElideMiddle, min_chars=20, tooltip_always=True)
        self.setObjectName("approvalEffect")
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.tone = "none"

    def show_request(self, req: ApprovalRequest) -> None:
        words, self.tone = effect_words(req)
        self.setStyleSheet(_STYLE[self.tone])
        self.set_full_text(f"Effect: {words}")
        self.setVisible(req.dialog is None)
