"""AgentLoop: the supervised observe–act loop.

One cycle: observe (stable, fresh snapshot) → the planner proposes a step → its target is grounded
in the snapshot (waiting up to the step's timeout for it to appear) → the policy decides whether a
person is asked → the gate decides → a fresh snapshot is checked (the target must still be there
with the same role and name, else the planner is asked again) → act → verification → record.

The run ends on finish() (success), fail() (error), the step limit (error; every cycle counts,
skipped, rejected and re-proposed ones included, so a run always ends), stop() (interrupted), or
an unrecoverable page error such as a crashed tab (error) — never with an exception.

Its parts: what it sees of the page (`observing`), who approves a step (`judging`), the one way to the gate
(`asker`), the approved target checked again before input (`target_guard`), dialogs, tabs and downloads
(`browsing`, which hands back the tab to work on), the pictures (`pictures`) and the records (`ran`, `not_run`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
from typing import Any, cast

from engine.errors import BrowserClosedError, ErrorCode, TabCrashedError, UnknownNodeError, VigilError
from engine.loop.asker import GateAsker
from engine.loop.browsing import PageWatch, incident_events, with_incidents
from engine.loop.driver import PageDriver
from engine.loop.events import EventBus
from engine.loop.gates import ApprovalGate
from engine.loop.grounding import describe_action, resolve_target
from engine.loop.journal import RunJournal
from engine.loop.judging import Grants, judge, shown_effect
from engine.loop.not_run import declined, refused, target_changed, target_missing
from engine.loop.observing import PageObserver
from engine.loop.person_steps import person_acted
from engine.loop.pictures import (
    AfterPicture,
    LatePicture,
    Pending,
    StepPictures,
    after_snapshot,
    taken,
    verified_snapshot,
)
from engine.loop.planner import Observation, Planner, ask_planner
from engine.loop.ran import ended, ran_record, told, verdict
from engine.loop.redact import mask_action, mask_proposal, types_secret
from engine.loop.steps import Approved, Judged, StepDraft, Turn, chosen, exchange_of
from engine.loop.stopping import Stopped, StopSignal
from engine.loop.target_guard import ask_again, effect_moved, target_drift
from engine.loop.timings import ms_since, split_action
from engine.loop.untrusted import find_instructions
from engine.loop.writes import RunWrites
from engine.models import (
    POLICIES,
    TAB_ACTIONS,
    TERMINAL_ACTIONS,
    Action,
    ActionDone,
    ActionResult,
    ChatMessage,
    Decision,
    ExpectedOutcome,
    ProposedStep,
    RunResult,
    StepArtifacts,
    StepProposed,
    StepRecord,
    VerificationDone,
)
from engine.models.browsing import PageIncidents
from engine.models.loop import Actor, Policy, TaskStatus
from engine.observe.sentinel import ends_when
from engine.observe.stability import on_quiet
from engine.races import together
from engine.secret_values import scrub
from engine.snapshot.dom_snapshot import DomSnapshot
from engine.snapshot.vnode import VirtualNode
from engine.vision.screenshot import Screenshot

log = logging.getLogger("vigil.loop")

FATAL_CODES = {ErrorCode.TAB_CRASHED: TabCrashedError, ErrorCode.BROWSER_CLOSED: BrowserClosedError}
DEFAULT_TARGET_TIMEOUT_MS = 5000


class _End(Exception):
    def __init__(self, status: TaskStatus, answer: str | None = None, reason: str | None = None):
        super().__init__(reason or answer or status)
        self.status, self.answer, self.reason = status, answer, reason


EVENT_SLACK_MS = 50  # the page's clock and ours read the same system clock; this covers rounding


class AgentLoop:
    """`await AgentLoop(tab, planner, gate=QueueGate()).run("task")` → RunResult. The page is anything
    with the `PageDriver` members (a `Tab`)."""

    def __init__(self, page: PageDriver, planner: Planner, *, gate: ApprovalGate, policy: str = "ask",
                 max_steps: int = 30, bus: EventBus | None = None, screenshots: bool = True,
                 target_timeout_ms: int = DEFAULT_TARGET_TIMEOUT_MS, artifacts: bool = False,
                 follow_new_tabs: bool = True):
        if policy not in POLICIES:
            raise ValueError(f"Unknown approval policy {policy!r}; use one of {', '.join(POLICIES)}.")
        if max_steps < 1:
            raise ValueError("max_steps must be at least 1")
        self.page, self.planner = page, planner
        self.max_steps, self.target_timeout_ms = max_steps, target_timeout_ms
        self.pictures = StepPictures(lambda: self.page, enabled=screenshots)
        # the last step's after picture while it is still being taken: its record is already published, the
        # picture follows it (StepPictureTaken) before the next step's input (or a person asked about it) and before
        # the run ends
        self.late_picture = LatePicture(self.pictures.take, lambda ev: self.bus.publish(ev))
        # with `artifacts`, each executed step's StepRecorded event carries the before/after JPEGs and
        # snapshots (StepArtifacts) — what the session store keeps; it costs one snapshot per step
        self.artifacts = artifacts
        self.bus = bus or EventBus()
        self.stopping = StopSignal()  # Stop, from any task or thread
        # the one way to the gate (steps, dialogs, what the browser holds); it keeps the run's journal
        self.asker = GateAsker(gate, cast(Policy, policy), self.bus, self.stopping)  # (policy checked above)
        # dialogs, tabs and downloads: who answers a dialog, following a new tab (engine.loop.browsing)
        self.watch = PageWatch(self.asker, lambda: self.page, lambda: self.start_domain,
                               follow_new_tabs=follow_new_tabs)
        # the page as the loop sees it: snapshots, a target waited for, the page's events
        self.observer = PageObserver(lambda: self.page, self.bus, self.pictures, self.stopping)
        self.task = ""
        self.start_domain = ""
        self._exchange: dict[str, Any] | None = None  # the planner's exchange for the step being worked on
        self._warnings: list[str] = []      # instruction-like page text in the current observation
        self._failure: str | None = None  # why a helper (the session store) ended the run: fail_run()
        self.writes = RunWrites()  # the session store's writes of this run: waited for before it ends
        # a person's standing grants (engine.store.grants): (action, URL of the target's frame) → what covers it;
        # consulted only for steps the policy would ask about and that have no sensitive reason
        self.grants: Grants | None = None

    @property
    def gate(self) -> ApprovalGate:
        return self.asker.gate

    @gate.setter
    def gate(self, gate: ApprovalGate) -> None:
        self.asker.gate = gate

    @property
    def policy(self) -> Policy:
        """The approval policy; a window may change it during a run (the next question is asked under it)."""
        return self.asker.policy

    @policy.setter
    def policy(self, policy: Policy) -> None:
        self.asker.policy = policy

    @property
    def journal(self) -> RunJournal:
        """The bookkeeping of the current (or last) run."""
        return self.asker.journal

    # -- control -------------------------------------------------------------------------------
    def stop(self) -> None:
        """Ask the run to end: after the current action, or at once when it waits at the gate, for
        the planner or for a target. Safe from any task (and from another thread)."""
        self.stopping.request()

    def fail_run(self, reason: str) -> None:
        """End the run with an error (`reason`) as soon as it can stop, as `stop()` does: for a helper that
        cannot go on, e.g. the session store failing to record a step. Safe from any thread."""
        if self._failure is None:
            self._failure = reason
        self.stop()

    def track_write(self, fut: concurrent.futures.Future) -> None:
        """A background write of this run (a step stored by the session store): the run does not end
        before it has finished — with Stop, a crash or cancellation too (then waited for a bounded time)."""
        self.writes.track(fut)

    async def run(self, task: str) -> RunResult:
        """Run the task to its end and return what happened. Never raises (except cancellation)."""
        self.stopping.start()
        self.asker.journal = j = RunJournal(self.bus)
        self._failure = None
        self.writes.reset()
        self.task, self.start_domain = task, ""
        self.observer.forget()
        self.pictures.reset()
        j.set_state("observing", "running", detail=task)
        j.message("user", task)
        self.watch.totals = dict.fromkeys(self.watch.totals, 0)
        self.watch.start()
        try:
            end = await self._cycles()
        except _End as e:
            end = e
        except Stopped:
            end = _End("interrupted", reason="Stopped by request.")
        except VigilError as exc:  # TabCrashedError, BrowserClosedError, SnapshotError, a failing planner …
            end = _End("error", reason=exc.message)
        except asyncio.CancelledError:
            self.late_picture.drop()  # (its step is stored already, without that picture)
            self.writes.drain_now()  # Ctrl+C: the steps already recorded reach the store first
            self._finish(_End("interrupted", reason=self._failure or "The run was cancelled."))
            raise
        except Exception as exc:  # a bug must still end the run cleanly
            log.exception("agent loop failed")
            end = _End("error", reason=f"Internal error in the loop: {type(exc).__name__}: {exc}")
        finally:
            self.watch.stop()
        await self.late_picture.wait()  # the last step's after picture reaches its record and the store
        late = await self.writes.drain()
        if self._failure is not None or late:  # a step that could not be stored ends the run as an error
            end = _End("error", reason=self._failure or late)
        return self._finish(end)

    def _finish(self, end: _End) -> RunResult:
        j = self.journal
        self.stopping.clear()  # the loop may run again
        text = {"success": "Finished" + (f": {end.answer}" if end.answer else "."),
                "interrupted": end.reason or "Stopped."}.get(end.status, f"Failed: {end.reason}")
        incidents = self.watch.run_incidents()
        if incidents:  # never a quiet "finished" after a page raised floods of dialogs or popups
            text += " Note: " + "; ".join(incidents) + "."
        j.message("system", text, status="success" if end.status == "success" else "error",
                  error=end.reason if end.status != "success" else None)
        j.set_state("finished", end.status, detail=end.reason or end.answer or "")
        result = RunResult(task=self.task, status=end.status, answer=end.answer, reason=end.reason,
                           steps=list(j.records), plan=j.plan.model_copy(deep=True) if j.plan else None,
                           messages=list(j.messages), url=self.observer.url(), incidents=incidents)
        return scrub(result, j.secrets)

    # -- the cycle -----------------------------------------------------------------------------
    async def _cycles(self) -> _End:
        """Cycle until the run ends: finish/fail and stop end it by raising; the step limit returns."""
        turn: Turn | None = None
        for _ in range(self.max_steps):
            if self.stopping.requested:
                raise Stopped
            index = len(self.journal.records)
            t0 = self.journal.step_started = time.monotonic()
            if getattr(self.page, "closed", False):  # the tab closed itself between steps (a popup)
                self._work_on(await self.watch.back_to_opener())
            self.watch.begin_step(index)
            self.journal.set_state("observing")
            # the tabs' titles and the page's events are read while the page is observed (none waits for another);
            # the events again after it when it was not the page the last step left, settled and unchanged (they
            # must include what changed while it settled)
            left = self.pictures.settled_snapshot()
            snap, tabs, events = await together(self.observer.observe(index), self.watch.tabs(),
                                                 self.observer.events(10_000))
            if left is None or snap is not left:
                events = await self.observer.events(10_000)
            self.start_domain = self.start_domain or snap.context.domain
            obs = Observation(task=self.task, step_index=index, snapshot=snap, url=snap.url, page=self.page,
                              tabs=tabs, recent_events=events, history=list(self.journal.records),
                              last_result=turn.result if turn else None, feedback=turn.feedback if turn else None,
                              plan=self.journal.plan,  # never changed in place (RunJournal): no copy to make
                              last_outcome=turn.outcome if turn else None)
            timings = {"observe": ms_since(t0)}
            # page text the planner is about to read that reads like orders to it: warned, and asked
            self._warnings = [h.describe() for h in find_instructions(snap, obs.recent_events)]
            proposal, msg = await self._propose(obs, timings)
            turn = await self._step(index, proposal, snap, msg, timings)
        if self.stopping.requested:
            raise Stopped
        return _End("error", reason=f"Reached the step limit of {self.max_steps} steps before the task was finished "
                                   "(no finish() yet). Raise --max-steps or check the plan.")

    async def _propose(self, obs: Observation, timings: dict[str, float]) -> tuple[ProposedStep, ChatMessage]:
        self.journal.set_state("planning")
        t = time.monotonic()

        async def planned() -> ProposedStep:
            p = await ask_planner(self.planner, obs, self.stopping)
            timings["model"] = ms_since(t)  # the planner's time (a model's or backend's round trips included)
            return p
        # the last step's after picture may still be coming: the next step is proposed and judged (reading the
        # page, changing nothing) meanwhile, and waits for it before a person is asked or its input goes out
        p = await planned()
        self._exchange = exchange_of(self.planner)
        try:  # what leaves the loop never carries typed secrets
            guess = resolve_target(obs.snapshot, p.action.target) if p.action.target is not None else None
        except UnknownNodeError:
            guess = None
        shown = mask_proposal(p, guess)
        self.bus.publish(StepProposed(step_index=obs.step_index, proposal=shown))
        self.journal.apply_proposal(shown)
        msg = self.journal.message("assistant", shown.thought or shown.description or describe_action(p.action, guess),
                                   actionString=shown.action.to_string(), status="pending",
                                   metadata={"step_index": obs.step_index})
        return p, msg

    async def _step(self, index: int, p: ProposedStep, snap: DomSnapshot, msg: ChatMessage,
                    timings: dict[str, float]) -> Turn:
        """Judge the proposal, put it to the gate (again when its target changes before it runs) and run it."""
        step = await self._judge(index, p, snap, msg, timings)
        if isinstance(step, Turn):
            return step
        go = await self._approve(step, p, msg)
        if isinstance(go, Turn):
            return go
        return await self._run_approved(step, go, p, msg)

    # -- judging: who approves the step ----------------------------------------------------------
    async def _judge(self, index: int, p: ProposedStep, snap: DomSnapshot, msg: ChatMessage,
                     timings: dict[str, float]) -> Judged | Turn:
        """Ground the target (waiting for it to appear) and judge the step (`engine.loop.judging`)."""
        node: VirtualNode | None = None
        if p.action.target is not None:
            timeout_ms = p.timeout_ms if p.timeout_ms is not None else self.target_timeout_ms
            try:
                node, snap = await self.observer.ground(p.action.target, snap, index, timeout_ms)
            except UnknownNodeError as exc:
                return target_missing(self.journal, self.bus, index, p, snap, msg, exc, timeout_ms / 1000, timings,
                                      self._exchange)
        t = time.monotonic()
        effect = await self.observer.effect(p.action, node, snap)  # what the page will do with the input
        timings["effect"] = ms_since(t)
        return judge(p, node, snap, index=index, policy=self.policy, start_domain=self.start_domain,
                     warnings=self._warnings, grants=self.grants, exchange=self._exchange, tab=self.watch.tab_info(),
                     timings=timings, effect=effect)

    # -- the gate, asked again when the target drifts ------------------------------------------
    async def _approve(self, step: Judged, p: ProposedStep, msg: ChatMessage) -> Approved | Turn:
        """Put the step to the gate until it may run as approved on the page as it is right before input: asked
        again when the approved action cannot run as given or its target changed after it was shown."""
        draft, page_seen = step.draft, self.page  # the target as the person (or the policy) approves it
        while True:
            decision = await self._decision(step)
            if decision.kind == "stop":
                self.journal.record(draft.record("stopped", note=decision.reason or "stopped"))
                self.journal.update_message(msg, status="error", error="Stopped before this step ran.")
                raise Stopped
            if decision.kind in ("skip", "reject"):
                return declined(self.journal, decision, p, msg, draft)
            in_page = decision.kind == "take_over" and decision.action is None
            fresh, shot_before = await self._before_input(draft, in_page)
            if in_page:
                return await self._human_in_page(p, msg, draft, fresh, draft.timings_ms["approval"])
            try:
                action, run_node, expect = chosen(decision, p, step.node, fresh)
            except (UnknownNodeError, ValueError) as exc:
                if not step.ask:  # nobody to ask again: the step fails, nothing ran
                    return refused(self.journal, self.bus, p, fresh, msg, str(exc), draft)
                what = "Edit refused" if decision.kind in ("edit", "take_over") else "Refused"
                step.request = step.request.model_copy(update={"error": f"{what}, nothing ran: {exc}"})
                continue
            if decision.action is None and step.node is not None:
                same_tab = self.page is page_seen
                drift = target_drift(step.node, step.seen, fresh, same_tab=same_tab)
                if drift and step.ask and drift.node is not None and same_tab:
                    ask_again(self.journal, step, p, drift.node, drift, fresh, self.start_domain)
                    continue
                if drift and (step.ask or drift.identity):
                    return target_changed(self.journal, p, msg, step.node, drift)
            moved = await self._effect_moved(step, decision, p, action, run_node, fresh)
            if moved is True:
                continue
            if moved:
                return refused(self.journal, self.bus, p, fresh, msg, str(moved), step.draft)
            return Approved(decision, action, run_node, expect, fresh, shot_before)

    async def _effect_moved(self, step: Judged, decision: Decision, p: ProposedStep, action: Action,
                            node: VirtualNode | None, fresh: DomSnapshot) -> bool | str:
        """Whether what the step will do changed since it was judged (computed again when the page changed, or
        for the person's edit): True when it is put to the gate again; a reason when it may not run."""
        if decision.action is None and fresh is step.seen:
            return False  # the very page it was judged on: the same effect
        t = time.monotonic()
        now = await self.observer.effect(action, node, fresh)
        step.draft.timings_ms["effect"] = step.draft.timings_ms.get("effect", 0) + ms_since(t)
        if decision.action is not None:  # the person's own action: what it does is recorded, not judged again
            step.draft.effect = shown_effect(now, action, node, self.start_domain)
            return False
        return effect_moved(self.journal, step, p, node=node, now=now, fresh=fresh, start_domain=self.start_domain,
                            policy=self.policy)

    async def _decision(self, step: Judged) -> Decision:
        """The gate's decision when a person is asked; else the standing grant's or the policy's approval."""
        timings = step.draft.timings_ms
        t = time.monotonic()
        if step.ask:  # the person judges the step with the last one's after picture shown
            await self.late_picture.wait()
        decision = await self.asker.ask(step.request) if step.ask else (
            Decision(kind="approve", reason=f"a standing grant of the person: {step.granted}") if step.granted
            else Decision.approve())
        timings["approval"] = timings.get("approval", 0) + ms_since(t)
        step.draft.decision = decision
        return decision

    async def _before_input(self, draft: StepDraft, in_page: bool) -> tuple[DomSnapshot, Screenshot | None]:
        """The page as it is right before input is dispatched, and its picture (the last step's after picture
        when nothing changed since it was taken; none when the person acts in the page themselves)."""
        # the last step's after picture is in before anything of this step reaches the page (its frame was asked
        # for already; the wait is for it to be stored with its step, ahead of this one's input)
        fresh, _ = await together(self.observer.now(draft.index), self.late_picture.wait())
        t_shot = time.monotonic()
        shot_before = None if in_page else await self.pictures.unchanged(fresh) or await self.pictures.take()
        draft.timings_ms["screenshots"] = ms_since(t_shot)
        return fresh, shot_before

    # -- acting ------------------------------------------------------------------------------------
    async def _run_approved(self, step: Judged, go: Approved, p: ProposedStep, msg: ChatMessage) -> Turn:
        """Run what the gate approved (unless a stop came first), and tell how it went."""
        if self.stopping.requested:
            self.journal.record(step.draft.record("stopped", note="Stop requested before this step ran."))
            raise Stopped
        actor: Actor = "human" if go.decision.kind == "take_over" else "agent"
        # a dialog this step raises is answered OK under auto-safe only when the person approved it as sensitive
        self.watch.sensitive_ok = step.ask and bool(step.reasons) and go.decision.kind in ("approve", "edit",
                                                                                           "take_over")
        # what the browser lets the step do without asking again: leave for the site it targets, download
        self.watch.approved(go.action, go.node, go.fresh.url, step.reasons, asked=step.ask, effect=step.draft.effect)
        said = mask_action(go.action, go.node).to_string()
        if go.action.name in TERMINAL_ACTIONS:
            raise _End(*ended(self.journal, go.action, actor, p, msg, step.draft))
        rec, result = await self._execute(go, actor, step.draft)
        turn = told(self.journal, p, msg, rec, result, actor, go.decision, said)
        self._check_fatal(result)
        return turn

    async def _human_in_page(self, p: ProposedStep, msg: ChatMessage, draft: StepDraft, fresh: DomSnapshot,
                             waited_ms: float) -> Turn:
        """The person acted in the page themselves (take over without an action): what they did, as steps."""
        events = await self.observer.events(int(waited_ms) + 1000)
        artifacts = None
        if self.artifacts:
            shot = await self.pictures.take()
            artifacts = StepArtifacts(screenshot_after=shot.jpeg if shot else None, snapshot_after=fresh)
        return person_acted(self.journal, self.bus, p, msg, draft, fresh, events, artifacts)

    async def _execute(self, go: Approved, actor: Actor, draft: StepDraft) -> tuple[StepRecord, ActionResult]:
        """Run the action (its own result, or a failed one); the step's record and that result."""
        action, node, expect, fresh, shot_before = go.action, go.node, go.expect, go.fresh, go.shot_before
        run = action.model_copy(update={"target": node.node_id}) if node is not None else action
        if types_secret(action, node) and action.text:
            self.journal.learn_secret(action.text)
            self.page.remember_secret(action.text)  # so no picture shows it either
        self.journal.set_state("acting")
        t_act = time.monotonic()
        acted_on = self.page
        # started as the input goes out and as the page settles (pictures off: none)
        picture = AfterPicture(self.pictures.take, self.page if self.pictures.enabled else None)
        result = await self._act(run, expect, picture)
        incidents = await self._end_step()
        result = with_incidents(result, incidents, acted_on, self.page)
        # where the action's time went: the action itself, the page settling, the verification
        split_action(draft.timings_ms, ms_since(t_act), result.timings_ms or {})
        self.journal.set_state("verifying")
        # the step's page events: those since its action began (not the page's load a moment before it), read
        # while the page after it is looked at (the settle is over: both read the page the step left)
        since_act = int(ms_since(t_act)) + EVENT_SLACK_MS
        (snap_after, pending), step_events = await together(
            self._page_after(result, acted_on, picture, draft.timings_ms), self.observer.events(since_act))
        shot_after = taken(pending)
        settled = bool((result.data or {}).get("settled")) and result.success
        self.pictures.left(snap_after, pending if not pending.done() else shot_after, settled)
        artifacts = None
        if self.artifacts:
            artifacts = StepArtifacts(screenshot_before=shot_before.jpeg if shot_before else None,
                                      screenshot_after=shot_after.jpeg if shot_after else None,
                                      snapshot_before=fresh, snapshot_after=snap_after)
        before = shot_before.phash if shot_before else None
        after = shot_after.phash if shot_after else None
        self.bus.publish(ActionDone(step_index=draft.index, actor=actor, result=result))
        if result.verification is not None:
            self.bus.publish(VerificationDone(step_index=draft.index, result=result.verification))
        failed, note = verdict(result, expect, incidents, self._dead())
        events = step_events + incident_events(incidents)
        # where the step left the page: its snapshot's document address (Playwright's page.url follows a
        # navigation on its own connection and may still say the page before on a loaded machine)
        url_after = snap_after.url if snap_after is not None and snap_after.url else self.observer.url()
        rec = ran_record(draft, failed=failed, note=note, actor=actor, run=run, node=node, result=result,
                         incidents=incidents, fresh=fresh, events=events, url_after=url_after, before=before,
                         after=after)
        rec = self.journal.record(rec, artifacts)
        if shot_after is None and self.pictures.enabled:
            # (decided by what the record holds, not by whether the picture is in by now: one that came in while
            # the record was made still follows it)
            self.late_picture.follow(rec, pending, before, snap_after, keep=self.artifacts)
        return rec, result

    async def _act(self, run: Action, expect: ExpectedOutcome | None, picture: AfterPicture) -> ActionResult:
        """The action's own result (a failed one when it raised a page problem); a tab action moves the loop."""
        try:
            if run.name in TAB_ACTIONS:
                moved, result = await self.watch.tab_action(run)
                self._work_on(moved)
                if result is None:  # switch_tab: said with the tabs' titles read now
                    result = await self.watch.switched(run)
                self.observer.forget()  # another tab: the previous snapshot's IDs are not this page's
            else:
                # (a step whose exit or download the browser refused ends BLOCKED, and one that downloaded or raised a
                # dialog did its change besides the page: neither waits for an outcome on the page)
                with on_quiet(picture), ends_when(self.watch.holds.refused_in_step, self.watch.did_besides):
                    result = await self.page.act(run, expect)
        except VigilError as exc:  # the action layer reports page problems in the result; be safe anyway
            result = ActionResult(success=False, action=run.to_string(), node_id=run.node_id, error_code=exc.code,
                                  message=exc.message)
        except BaseException:
            await picture.drop()
            raise
        return result

    async def _end_step(self) -> PageIncidents:
        """What happened besides the page during the step; the loop follows the tab it leaves it on."""
        incidents, moved = await self.watch.end_step()
        self._work_on(moved)
        await self.watch.finish_step(incidents)
        return incidents

    async def _page_after(self, result: ActionResult, acted_on: PageDriver, picture: AfterPicture,
                          timings: dict[str, float]) -> tuple[DomSnapshot | None, Pending]:
        """The page after the step: its snapshot first, then its picture, so that the next step may reuse the
        picture when its own snapshot is this same one (nothing changed after this snapshot). The verification's
        own snapshot when it took one: after the settle, the page as the step left it."""
        snap_after = verified_snapshot(self.page, result, acted_on) or await after_snapshot(self.page)
        t_shot = time.monotonic()
        # a picture still being taken is not waited for: the record is published without it, and the picture
        # follows (StepPictureTaken), before the next step's input goes out
        pending = await self.pictures.after(picture, self.page is acted_on)
        timings["screenshots"] = round(timings.get("screenshots", 0) + ms_since(t_shot), 1)
        return snap_after, pending

    def _check_fatal(self, result: ActionResult | None) -> None:
        """End the run when the tab crashed or the browser closed."""
        self.page.check_alive()
        if result is not None and result.error_code in FATAL_CODES:
            raise FATAL_CODES[result.error_code](result.message)

    # -- helpers ---------------------------------------------------------------------------------
    def _work_on(self, tab: PageDriver | None) -> None:
        """Work on `tab` from now on (the page watch moved the loop to it), when there is one."""
        if tab is not None:
            self.page = tab

    def _dead(self) -> str | None:
        """Why the page is gone (a tab that crashed or a browser that closed under the action), or None."""
        try:
            self.page.check_alive()
        except VigilError as exc:
            return exc.message
        return None
