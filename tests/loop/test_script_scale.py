"""A step of a scripted run costs the same however long the script is and however long the run has gone on
(issue 38: 96 ms a step with 100 steps, 751 ms with 10,000).

Nothing here is timed: each test counts the work that used to grow with the script, on real pages in a real
Chromium — every observation looked up the target of every `type` step of the script to mask its text, every
proposal (and so every step record) carried the whole plan, and the plan was deep-copied for every observation
and every publication. The figures come from `vigil bench script`.
"""

from __future__ import annotations

from engine.errors import UnknownNodeError
from engine.loop import AgentLoop, AutoApprove, ScriptedPlanner, scripted
from engine.loop.grounding import resolve_target
from engine.loop.planner import Observation
from engine.loop.redact import types_secret
from engine.models import Plan, PlanUpdated
from engine.secret_values import MASK

from support.page_helpers import FAST

LONG = 3000


def long_script(n: int = LONG) -> list[dict]:
    """Typing into secrets.html's "User" field (never secret) and its "Code" field (a one-time-code field whose
    name does not say so: only the page tells), and scrolling, in turn."""
    out: list[dict] = []
    for i in range(n):
        if i % 3 == 0:
            out.append({"action": "type", "target": {"name": "User"}, "text": f"ada {i}"})
        elif i % 3 == 1:
            out.append({"action": "type", "target": {"name": "Code"}, "text": f"{100000 + i}"})
        else:
            out.append({"action": "scroll", "direction": "down", "amount": 100})
    return out


def plan_as_it_was(planner: ScriptedPlanner, snap) -> list[str]:
    """The plan as the planner showed it before issue 38: every `type` step's target looked up on the page."""
    out = []
    for st in planner.steps:
        d, a = st.description, st.action
        if a.name == "type" and a.text and a.target is not None and a.text in d:
            try:
                node = resolve_target(snap, a.target)
            except UnknownNodeError:
                node = None
            if types_secret(a, node):
                d = d.replace(a.text, MASK)
        out.append(d)
    return out


def _snapshots(harness, server):
    async def snap(tab):
        return await tab.snapshot()

    return harness.page(server.url("secrets.html"), snap), harness.page(server.url("clickables.html"), snap)


def test_the_plan_is_looked_up_per_target_and_sent_only_when_it_changes(harness, server, monkeypatch):
    secret_page, plain_page = _snapshots(harness, server)
    planner = ScriptedPlanner(long_script())
    assert plan_as_it_was(planner, secret_page)[1] == 'Type "••••••••" into the element named "Code"'

    looked_up: list = []
    real = scripted.resolve_target
    monkeypatch.setattr(scripted, "resolve_target", lambda snap, t: (looked_up.append(t), real(snap, t))[1])

    def propose(snap, plan: Plan | None):
        looked_up.clear()
        obs = Observation(task="t", step_index=0, snapshot=snap, url=snap.url, plan=plan)
        return harness.run(planner.propose(obs))

    first = propose(secret_page, None)  # the run has no plan yet: all of it, masked as it always was
    assert first.plan == plan_as_it_was(planner, secret_page)
    assert len(looked_up) == 2  # "User" and "Code" once each, not each of the 2,000 typing steps
    kept = Plan.from_descriptions(first.plan)
    again = propose(secret_page, kept)
    assert again.plan is None and len(looked_up) == 2  # the loop has this plan: the proposal does not carry it

    moved = propose(plain_page, kept)  # no secret field on this page: nothing to look up, the masks come off
    assert looked_up == [] and moved.plan == plan_as_it_was(planner, plain_page) and MASK not in "".join(moved.plan)
    assert propose(plain_page, Plan.from_descriptions(moved.plan)).plan is None and looked_up == []


def test_a_long_scripts_steps_neither_carry_nor_copy_its_plan(harness, server):
    published: list[Plan] = []
    observed: list[Plan | None] = []

    class Watched(ScriptedPlanner):
        async def propose(self, obs):
            observed.append(obs.plan)
            return await super().propose(obs)

    planner = Watched([{"action": "type", "target": {"name": "User"}, "text": f"ada {i}"} for i in range(LONG)])

    async def go(tab):
        tab.stability = FAST
        loop = AgentLoop(tab, planner, gate=AutoApprove(), policy="auto", screenshots=False, max_steps=3)
        loop.bus.subscribe(lambda ev: published.append(ev.plan) if isinstance(ev, PlanUpdated) else None)
        first = await loop.run("type the user")
        return first, len(published), await loop.run("type the user again")

    first, in_first, second = harness.page(server.url("secrets.html"), go)
    assert [s.status for s in first.steps] == ["completed"] * 3
    # the plan went with the run's first proposal only (a step record used to keep all 3,000 descriptions) …
    assert len(first.steps[0].proposal.plan) == LONG and [s.proposal.plan for s in first.steps[1:]] == [None] * 2
    # … and again with the next run's, whose journal starts without a plan
    assert len(second.steps[0].proposal.plan) == LONG and second.steps[1].proposal.plan is None
    # each step still shows in the plan as it goes: active, then done
    runs = published[:in_first]
    assert [(p.currentStepIndex, [p.steps[i].status for i in range(3)]) for p in runs] == [
        (0, ["active", "pending", "pending"]), (0, ["completed", "pending", "pending"]),
        (1, ["completed", "active", "pending"]), (1, ["completed", "completed", "pending"]),
        (2, ["completed", "completed", "active"]), (2, ["completed", "completed", "completed"])]
    # published as it is, never copied: a plan step untouched by the run is the same object in every publication
    # and in what the planner observed; what was published is never changed afterwards
    assert all(p.steps[LONG - 1] is runs[0].steps[LONG - 1] for p in runs)
    assert observed[0] is None and all(any(o is p for p in runs) for o in observed[1:3])
    assert first.plan is not None and [s.status for s in first.plan.steps[:4]] == ["completed"] * 3 + ["pending"]


def test_a_recorded_run_writes_a_long_plan_once_and_its_statuses_at_the_end(harness, server, tmp_path):
    from engine.store import Store
    from engine.store.recorder import PLAN_STATUS_EVERY_S, SessionRecorder

    store = Store.open(tmp_path / "sessions.db")
    writes: list[bool] = []
    save_plan = store.save_plan

    def counted(session_id, plan, *, new_version=True):  # each write of a 3,000-step plan, counted
        writes.append(new_version)
        return save_plan(session_id, plan, new_version=new_version)

    store.save_plan = counted  # type: ignore[method-assign]
    planner = ScriptedPlanner([{"action": "type", "target": {"name": "User"}, "text": f"ada {i}"} for i in range(LONG)])

    async def go(tab):
        tab.stability = FAST
        loop = AgentLoop(tab, planner, gate=AutoApprove(), policy="auto", screenshots=False, max_steps=4)
        recorder = SessionRecorder(store)
        recorder.start(loop, "type the user", tab.url, planner="script", policy="auto")
        result = await loop.run("type the user")
        recorder.finish(result)
        return recorder.session_id, result

    try:
        sid, result = harness.page(server.url("secrets.html"), go)
        assert [s.status for s in result.steps] == ["completed"] * 4
        # once as a new plan, its statuses at most every PLAN_STATUS_EVERY_S, and once at the end: not twice a step
        assert writes[0] is True and writes.count(True) == 1
        assert len(writes) <= 2 + int(sum(s.timings_ms.get("total", 0) for s in result.steps) / 1000
                                      / PLAN_STATUS_EVERY_S) + 1, writes
        stored = store.load(sid).plan
        assert stored is not None and [s.status for s in stored.steps[:5]] == ["completed"] * 4 + ["pending"]
    finally:
        store.close()
