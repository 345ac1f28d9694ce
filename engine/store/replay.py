"""Replaying a recorded session: its actions again, through the scripted planner and the normal
approval policy, on today's page.

Each recorded step that completed becomes a script step. Its target is the element it acted on,
found again in the fresh snapshot: by the recorded node ID when that ID still names an element of
the same role and name, else by the recorded `{role, name, nth}` query (IDs change when a page
changes or the browser is new; what an element is and says rarely does). The expected outcome
the step was verified against comes along, so a replay that no longer does what the recording
did fails at that step instead of wandering on.

A dialog the page raised during a recorded step (confirm, prompt, beforeunload) and the answer it got
from the person or the policy come along too: a `dialog(accept, text)` step answers it in advance,
just before the step that raises it, so the replay is not left to today's policy (auto-safe would
answer Cancel where the person said OK). It is a step like the others: the policy and the person see
it first.

What cannot be replayed is listed in `skipped` instead of guessed at: steps that failed, were
skipped or rejected, steps where the person acted in the page directly, and the run's own
finish/fail. A typed password or one-time code was never recorded (the store holds `••••••••`):
that step is proposed as sensitive, and the loop refuses to type the mask — the person edits the
step with the real value or takes over.
"""

from __future__ import annotations

from engine.errors import ErrorCode, VigilError
from engine.loop.planner import Observation
from engine.loop.scripted import ScriptedPlanner, ScriptStep
from engine.models import TERMINAL_ACTIONS, Action, ProposedStep, StepRecord, TargetQuery
from engine.names import norm
from engine.secret_values import MASK
from engine.store.session_data import SessionData
from engine.store.store import Store


def _expectation(rec: StepRecord):
    d, p = rec.decision, rec.proposal
    if d is not None and d.expected_outcome is not None:
        return d.expected_outcome
    if p is not None and rec.action is not None and p.action.name == rec.action.name and (
            d is None or d.action is None):
        return p.expected_outcome
    return None


def _script(data: SessionData) -> tuple[list[ScriptStep], list[dict | None], list[str]]:
    steps: list[ScriptStep] = []
    recorded: list[dict | None] = []
    skipped: list[str] = []
    for rec in data.steps:
        n = rec.index + 1
        a = rec.action
        if rec.status != "completed":
            skipped.append(f"step {n} ({rec.status} in the recording)")
            continue
        if a is None:
            skipped.append(f"step {n} (the person acted in the page directly)")
            continue
        if a.name in TERMINAL_ACTIONS:
            continue
        target = rec.target or {}
        query = target.get("query")
        if a.target is not None and query:
            a = a.model_copy(update={"target": TargetQuery.model_validate(query)})
        _answer_dialog_in_advance(rec, steps, recorded, skipped)
        secret = a.name == "type" and a.text == MASK
        what = (rec.proposal.description if rec.proposal and rec.proposal.description else a.to_string())
        steps.append(ScriptStep(
            action=a, expect=_expectation(rec), sensitive=secret,
            description=(f"Recorded step {n}: type the secret yourself (it was never recorded) — {what}"
                         if secret else f"Recorded step {n}: {what}"),
            thought=f"Step {n} of the recording."))
        recorded.append(target if target.get("id") else None)
    return steps, recorded, skipped


def _answer_dialog_in_advance(rec: StepRecord, steps: list[ScriptStep], recorded: list[dict | None],
                              skipped: list[str]) -> None:
    """Before a recorded step that raised a dialog someone answered, a step that answers it the same way.
    Alerts have nothing to decide; a flood was answered without asking; an answer the planner gave in
    advance was its own recorded `dialog` step, replayed as such."""
    asked = [d for d in (rec.incidents.dialogs if rec.incidents else [])
             if d.kind != "alert" and not d.flood and d.answer is not None and d.answer.by != "planner"]
    if not asked or (steps and steps[-1].action.name == "dialog"):
        return
    d, ans = asked[0], asked[0].answer
    assert ans is not None
    n = rec.index + 1
    text = ans.text if d.kind == "prompt" and ans.accept else None
    steps.append(ScriptStep(
        action=Action(name="dialog", accept=ans.accept, text=text),
        description=f"Recorded step {n} raised {d.call()}, answered {ans.describe()}: answer it the same way",
        thought=f"Step {n} of the recording raised a dialog; its answer is given in advance."))
    recorded.append(None)
    if len(asked) > 1:
        skipped.append(f"step {n}: only the first of its {len(asked)} dialogs is answered in advance; "
                       "the others go to the policy")


class ReplayPlanner(ScriptedPlanner):
    """A recorded session's steps as a script, grounding each target by its recorded ID when that
    still names the same element, else by role and name."""

    def __init__(self, data: SessionData):
        steps, self._recorded, self.skipped = _script(data)
        sid = data.session.id
        if not steps:
            why = f" ({'; '.join(self.skipped)})" if self.skipped else ""
            raise VigilError(f"Session {sid[:8]} has no step that can be replayed{why}.",
                             code=ErrorCode.NOTHING_TO_REPLAY)
        super().__init__(steps)
        self.session_id = sid
        self.start_url = data.session.metadata.get("initialUrl") or data.session.url
        self.task = f"Replay: {data.session.task}"

    async def propose(self, obs: Observation) -> ProposedStep:
        p = await super().propose(obs)
        i = p.plan_index
        rec = self._recorded[i] if i is not None and 0 <= i < len(self._recorded) else None
        if rec is None or p.action.name in TERMINAL_ACTIONS or not isinstance(p.action.target, TargetQuery):
            return p
        same = obs.snapshot.node_map.get(str(rec["id"]))
        if same is not None and same.role == rec.get("role") and norm(same.name) == norm(rec.get("name")):
            return p.model_copy(update={"action": p.action.model_copy(update={"target": same.node_id}),
                                        "thought": f"{p.thought} Same element as recorded [{same.node_id}]."})
        return p.model_copy(update={"thought": f"{p.thought} The recorded ID [{rec['id']}] no longer names "
                                               f"{p.action.target.describe()}; finding it by role and name."})


def replay_planner(store: Store, session_id: str) -> ReplayPlanner:
    """The replay planner for a stored session (id or unique prefix); VigilError when there is
    nothing to replay or no such session."""
    return ReplayPlanner(store.load(store.resolve_id(session_id)))
