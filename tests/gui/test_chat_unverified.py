"""The chat tells a step that ran but whose check failed apart from a success and from an error: an
amber `unverified` badge (the word `vigil run` prints), a warning mark and "Unverified: …" — on the
messages and step records of a real run on Chromium, and on hand-built ones (the record alone is
enough: a session stored before the loop marked its messages)."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6.QtWidgets")

from engine.cli.run import step_line  # noqa: E402
from engine.loop import AgentLoop, AutoApprove, ScriptedPlanner  # noqa: E402
from engine.models.actions import Action, ActionResult, PageState, VerificationResult  # noqa: E402
from engine.models.loop import ChatMessage, StepRecord  # noqa: E402
from gui.kit.look import ok_mark, warn_mark  # noqa: E402
from gui.run.chat_view import ChatView  # noqa: E402

from support.page_helpers import FAST


@pytest.fixture
def view(qtbot):
    v = ChatView()
    qtbot.addWidget(v)
    v.resize(520, 600)
    v.show()
    return v


def test_a_real_run_shows_its_unverified_step_with_its_own_badge(harness, server, view):
    async def go(tab):
        tab.stability = FAST
        # the first click runs but changes nothing (unverified); the navigation is seen (ok)
        steps = [{"action": "click", "target": {"role": "button", "name": "Do nothing"}},
                 {"action": "navigate", "url": server.url("dialogs_page.html")}, {"action": "finish"}]
        loop = AgentLoop(tab, ScriptedPlanner(steps), gate=AutoApprove(), policy="auto", screenshots=False)
        return await loop.run("press the button, then open the records")

    res = harness.page(server.url("uploads_page.html"), go)
    first, second = res.steps[0], res.steps[1]
    assert step_line(first).startswith("[1] unverified ") and step_line(second).startswith("[2] ok ")
    for m in res.messages:
        view.add_or_update_message(m)
    for rec in res.steps:
        view.add_step_record(rec)

    unverified_turn, ok_turn = view.turn_for_step(0), view.turn_for_step(1)
    assert ok_turn.outcome == "ok" and not ok_turn.outcome_badge.isVisibleTo(ok_turn)
    assert ok_mark(True) in ok_turn.header.text()
    assert unverified_turn.outcome == "unverified"
    badge = unverified_turn.outcome_badge
    assert badge.isVisibleTo(unverified_turn) and badge.text() == "unverified"
    assert warn_mark() in unverified_turn.header.text() and ok_mark(False) not in unverified_turn.header.text()
    assert unverified_turn.error.text().startswith("Unverified:") and "#92400e" in unverified_turn.error.styleSheet()
    obs = unverified_turn.observation
    assert obs.unverified and not obs.ok and "Unverified:" in obs.text() and ok_mark(False) not in obs.text()
    assert "#fffbeb" in obs.styleSheet()


def _record(status: str, verified: bool, action: str = "click") -> StepRecord:
    v = VerificationResult(success=verified, verified_outcome="any_change" if verified else None,
                           actual_outcome="nothing", confidence=0.9,
                           page_state=PageState(url="http://shop/", url_changed=False, dom_changed=False),
                           feedback="Expected any change, but nothing on the page changed.")
    r = ActionResult(success=status == "completed", action=f"{action}(12)", message="Clicked \"Pay\" [12].",
                     verification=v)
    return StepRecord(index=0, action=Action(name=action, target="12") if action == "click" else Action(name=action),
                      result=r, verification=v, status=status)


@pytest.mark.parametrize("status,verified,outcome", [("completed", False, "unverified"),
                                                     ("completed", True, "ok"),
                                                     ("failed", False, "error")])
def test_the_record_alone_decides_the_badge(view, status, verified, outcome):
    # the message says nothing about verification (as in a session kept before the loop marked it)
    msg = ChatMessage(role="assistant", content="Pay", actionString="click(12)",
                      status="success" if outcome == "ok" else "error", metadata={"step_index": 0})
    turn = view.add_or_update_message(msg)
    assert turn.outcome == ("ok" if outcome == "ok" else "error") and not turn.outcome_badge.isVisibleTo(turn)
    view.add_step_record(_record(status, verified))
    assert turn.outcome == outcome
    assert turn.outcome_badge.isVisibleTo(turn) is (outcome == "unverified")
    assert (warn_mark() in turn.header.text()) is (outcome == "unverified")


def test_a_user_turn_and_a_system_note_never_read_unverified(view):
    for role in ("user", "system"):
        turn = view.add_or_update_message(ChatMessage(role=role, content="x", status="error",
                                                      metadata={"unverified": True}))
        assert turn.outcome != "unverified" and not turn.outcome_badge.isVisibleTo(turn)
