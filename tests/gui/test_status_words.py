"""The status bar's line after a step says what ran and whether it was verified — not a picture hash."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6.QtWidgets")

from engine.models.actions import Action, ActionResult, PageState, VerificationResult  # noqa: E402
from engine.models.loop import StepRecord  # noqa: E402
from gui.window.main_window import step_words  # noqa: E402


def _rec(status: str, verified: bool | None, action: Action | None) -> StepRecord:
    v = None if verified is None else VerificationResult(
        success=verified, verified_outcome="any_change" if verified else None, actual_outcome="x",
        confidence=0.9, feedback="f",
        page_state=PageState(url="http://shop/", url_changed=False, dom_changed=verified))
    r = ActionResult(success=status == "completed", action="click(12)", message="m", verification=v)
    return StepRecord(index=2, action=action, result=r, verification=v, status=status,
                      screenshot_after="80be00fe00fe00ff", timings_ms={"total": 261.4})


@pytest.mark.parametrize("status,verified,action,words", [
    ("completed", True, Action(name="click", target="12"), "Step 3: click(12) — verified · 261 ms"),
    ("completed", False, Action(name="click", target="12"), "Step 3: click(12) — not verified · 261 ms"),
    ("failed", False, Action(name="click", target="12"), "Step 3: click(12) — failed · 261 ms"),
    ("completed", None, None, "Step 3: the person acted in the page — done · 261 ms"),
    ("completed", None, Action(name="finish", answer="Done: 1 instruction carried out"),
     "Step 3: finish — done · 261 ms"),
])
def test_step_words(status, verified, action, words):
    line = step_words(_rec(status, verified, action))
    assert line == words and "80be" not in line
