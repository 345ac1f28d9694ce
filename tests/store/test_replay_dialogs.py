"""A replay answers the page's dialogs as the recording did (real Chromium): the answer the person or
the policy gave to a confirm during a recorded step is given in advance, as a step of its own that the
policy and the person see, so today's policy does not decide it differently."""

from __future__ import annotations

from engine.loop import AgentLoop, AutoApprove, ScriptedPlanner
from engine.models import Decision
from engine.store import Store
from engine.store.recorder import SessionRecorder
from engine.store.replay import replay_planner

from support.page_helpers import FAST, DialogPerson, out_text

MARK = [{"action": "click", "target": {"role": "button", "name": "Mark all read"}}, {"action": "finish"}]


def test_a_replay_gives_the_recorded_answer_to_a_confirm(harness, server, tmp_path):
    store = Store.open(tmp_path / "sessions.db")
    try:
        async def record(tab):
            tab.stability = FAST
            loop = AgentLoop(tab, ScriptedPlanner(MARK), gate=AutoApprove(), policy="auto", screenshots=False)
            rec = SessionRecorder(store)
            sid = rec.start(loop, "mark all read", tab.url, planner="script", policy="auto")
            res = await loop.run("mark all read")
            rec.finish(res)
            return sid, res, await out_text(tab)

        sid, res, shown = harness.page(server.url("dialogs_page.html"), record)
        assert res.status == "success" and shown == "marked"   # auto answered the confirm OK
        replay = replay_planner(store, sid)
        assert [s.action.name for s in replay.steps] == ["dialog", "click"]
        armed = replay.steps[0]
        assert armed.action.accept is True and 'confirm("Mark all as read?")' in armed.description

        async def again(tab):
            # auto-safe answers a confirm raised by an ordinary step Cancel: only the recorded answer,
            # approved by the person, makes this replay mark the records again
            person = DialogPerson(Decision(kind="reject", reason="must not be asked"))
            loop = AgentLoop(tab, replay_planner(store, sid), gate=person.gate, policy="auto-safe",
                             screenshots=False)
            tab.stability = FAST
            out = await person.run(loop, "replay")
            return out, person, await out_text(tab)

        out, person, shown = harness.page(server.url("dialogs_page.html"), again)
        assert out.status == "success", out.reason
        assert shown == "marked"
        assert not person.dialogs, "the dialog was answered in advance, not put to the person"
        asked = [r for r in person.gate.requests if r.dialog is None]
        assert any("answers the page's dialog OK" in " ".join(r.sensitive_reasons) for r in asked)
        answer = out.steps[1].incidents.dialogs[0].answer
        assert answer.accept and answer.by == "planner"
    finally:
        store.close()
