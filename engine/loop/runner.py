"""AgentLoop: the supervised observe–act loop.

One cycle: observe (stable, fresh snapshot) → the planner proposes a step → its target is grounded
in the snapshot (waiting up to the step's timeout for it to appear) → the policy decides whether a
person is asked → the gate decides → a fresh snapshot is checked (the target must still be there
with the same role and name, else the planner is asked again) → act → verification → record.

The run ends on finish() (success), fail() (error), the step limit (error; every cycle counts,
skipped, rejected and re-proposed ones included, so a run always ends), stop() (interrupted), or
an unrecoverable page error such as a crashed tab (error) — never with an exception.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
from collections.abc import Callable
from typing import Any, cast

from engine.errors import BrowserClosedError, ErrorCode, TabCrashedError, UnknownNodeError, VigilError
from engine.loop.browsing import PageWatch, incident_events, with_incidents
from engine.loop.driver import PageDriver
from engine.loop.events import EventBus
from engine.loop.gates import ApprovalGate
from engine.loop.grounding import (
    describe_action,
    node_summary,
    resolve_target,
    target_record,
)
from engine.loop.journal import RunJournal
from engine.loop.not_run import declined, refused, target_missing
from engine.loop.person_steps import person_acted
from engine.loop.pictures import (
    AfterPicture,
    LatePicture,
    Pending,
    StepPictures,
    after_snapshot,
    verified_snapshot,
)
from engine.loop.planner import Observation, Planner
from engine.loop.policy import frame_url, needs_approval, sensitive_reasons
from engine.loop.redact import mask_action, mask_proposal, scrub_known, types_secret
from engine.loop.steps import StepDraft, Turn, chosen, exchange_of
from engine.loop.stopping import Stopped, StopSignal
from engine.loop.target_guard import target_drift
from engine.loop.untrusted import find_instructions
from engine.loop.writes import RunWrites
from engine.models import (
    POLICIES,
    TAB_ACTIONS,
    TERMINAL_ACTIONS,
    Action,
    ActionDone,
    ActionResult,
    ApprovalRequest,
    AwaitingApproval,
    ChatMessage,
    Decision,
    ExpectedOutcome,
    PageEvent,
    ProposedStep,
    RunResult,
    SnapshotTaken,
    StepArtifacts,
    StepProposed,
    StepRecord,
    TargetQuery,
    VerificationDone,
)
from engine.models.loop import Actor, Policy, TaskStatus
from engine.observe.stability import on_quiet
from engine.snapshot.dom_snapshot import DomSnapshot
from engine.snapshot.vnode import VirtualNode
from engine.vision.screenshot import Screenshot, hash_distance

log = logging.getLogger("vigil.loop")

FATAL_CODES = {ErrorCode.TAB_CRASHED: TabCrashedError, ErrorCode.BROWSER_CLOSED: BrowserClosedError}
DEFAULT_TARGET_TIMEOUT_MS = 5000


class _End(Exception):
    def __init__(self, status: TaskStatus, answer: str | None = None, reason: str | None = None):
        super().__init__(reason or answer or status)
        self.status, self.answer, self.reason = status, answer, reason


EVENT_SLACK_MS = 50  # the page's clock and ours read the same system clock; this covers rounding


def _ms(t: float) -> float:
    return round((time.monotonic() - t) * 1000, 1)


def _taken(pending: Pending) -> Screenshot | None:
    """The picture when it is already taken (None when it failed or is still being taken)."""
    if not pending.done() or pending.cancelled() or pending.exception() is not None:
        return None
    return cast(Screenshot | None, pending.result())


class AgentLoop:
    """`await AgentLoop(tab, planner, gate=QueueGate()).run("task")` → RunResult. The page is anything
    with the `PageDriver` members (a `Tab`)."""

    def __init__(self, page: PageDriver, planner: Planner, *, gate: ApprovalGate, policy: str = "ask",
                 max_steps: int = 30,
                 bus: EventBus | None = None, screenshots: bool = True,
                 target_timeout_ms: int = DEFAULT_TARGET_TIMEOUT_MS, artifacts: bool = False,
                 follow_new_tabs: bool = True):
        if policy not in POLICIES:
            raise ValueError(f"Unknown approval policy {policy!r}; use one of {', '.join(POLICIES)}.")
        if max_steps < 1:
            raise ValueError("max_steps must be at least 1")
        self.page, self.planner, self.gate = page, planner, gate
        self.policy: Policy = cast(Policy, policy)  # checked against POLICIES above
        self.max_steps, self.target_timeout_ms = max_steps, target_timeout_ms
        self.pictures = StepPictures(lambda: self.page, enabled=screenshots)
        # the last step's after picture while it is still being taken: its record is already published, the
        # picture follows it (StepPictureTaken) before the planner is asked for the next step and before the run ends
        self.late_picture = LatePicture(self.pictures.take, lambda ev: self.bus.publish(ev))
        # with `artifacts`, each executed step's StepRecorded event carries the before/after JPEGs and
        # snapshots (StepArtifacts) — what the session store keeps; it costs one snapshot per step
        self.artifacts = artifacts
        self.bus = bus or EventBus()
        self.journal = RunJournal(self.bus)
        # dialogs, tabs and downloads: who answers a dialog, following a new tab (engine.loop.browsing)
        self.watch = PageWatch(self, follow_new_tabs=follow_new_tabs)
        self.task = ""
        self.start_domain = ""
        self._prev_snap: DomSnapshot | None = None
        self._exchange: dict[str, Any] | None = None  # the planner's exchange for the step being worked on
        self._warnings: list[str] = []      # instruction-like page text in the current observation
        self.stopping = StopSignal()  # Stop, from any task or thread
        self._failure: str | None = None  # why a helper (the session store) ended the run: fail_run()
        self.writes = RunWrites()  # the session store's writes of this run: waited for before it ends
        # a person's standing grants (engine.store.grants): (action, URL of the target's frame) → what covers it;
        # consulted only for steps the policy would ask about and that have no sensitive reason
        self.grants: Callable[[Action, str], str | None] | None = None

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
        self.journal = j = RunJournal(self.bus)
        self._failure = None
        self.writes.reset()
        self.task, self.start_domain, self._prev_snap = task, "", None
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
        return scrub_known(RunResult(task=self.task, status=end.status, answer=end.answer, reason=end.reason,
                                     steps=list(j.records), plan=j.plan.model_copy(deep=True) if j.plan else None,
                                     messages=list(j.messages), url=self._url(), incidents=incidents), j.secrets)

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
                await self.watch.back_to_opener()
            self.watch.begin_step(index)
            snap = await self._observe(index)
            self.start_domain = self.start_domain or snap.context.domain
            obs = Observation(task=self.task, step_index=index, snapshot=snap, url=snap.url, page=self.page,
                              tabs=await self.watch.tabs(),
                              recent_events=await self._events(10_000), history=list(self.journal.records),
                              last_result=turn.result if turn else None, feedback=turn.feedback if turn else None,
                              plan=self.journal.plan.model_copy(deep=True) if self.journal.plan else None,
                              last_outcome=turn.outcome if turn else None)
            timings = {"observe": _ms(t0)}
            # page text the planner is about to read that reads like orders to it: warned, and asked
            self._warnings = [h.describe() for h in find_instructions(snap, obs.recent_events)]
            # the last step's after picture is in before the planner is asked (a capture shows the frame the
            # browser paints after it was asked: what the page does while the next step is planned — a person's
            # own input, the world moving on — must not get into it); it overlapped the record and this observation
            await self.late_picture.wait()
            proposal, msg = await self._propose(obs, timings)
            turn = await self._step(index, proposal, snap, msg, timings)
        if self.stopping.requested:
            raise Stopped
        return _End("error", reason=f"Reached the step limit of {self.max_steps} steps before the task was finished "
                                   "(no finish() yet). Raise --max-steps or check the plan.")

    async def _observe(self, index: int) -> DomSnapshot:
        self.journal.set_state("observing")
        self.page.check_alive()
        t = time.monotonic()
        left = self.pictures.settled_snapshot()
        if left is not None:
            # the last step ended on a settled page and took this snapshot after it: when the page still
            # has that very snapshot (nothing changed since), it is still settled and needs no wait
            snap = await self.page.snapshot()
            if snap is left:
                self._publish_snapshot(snap, index, _ms(t))
                return snap
        try:
            await self.page.wait_stable(since=0.0)  # quiet measured from the last change, not from now
        except (TabCrashedError, BrowserClosedError):
            raise
        except VigilError as exc:  # an unsettled page is still observed
            log.debug("stability wait failed: %s", exc)
        snap = await self.page.snapshot()
        self._publish_snapshot(snap, index, _ms(t))
        return snap

    def _publish_snapshot(self, snap: DomSnapshot, index: int, ms: float) -> None:
        if snap is self._prev_snap:
            return
        new = sorted(snap.new_ids_since(self._prev_snap), key=lambda s: (len(s), s))
        self._prev_snap = snap
        self.bus.publish(SnapshotTaken(step_index=index, url=snap.url, nodes=len(snap),
                                       interactive=snap.stats.interactive,
                                       capture_ms=snap.stats.timings_ms.get("capture", ms),
                                       tokens=snap.stats.tokens.get("semantic"), new_ids=new))

    async def _propose(self, obs: Observation, timings: dict[str, float]) -> tuple[ProposedStep, ChatMessage]:
        self.journal.set_state("planning")
        t = time.monotonic()
        try:
            p = await self.stopping.until(self.planner.propose(obs))
        except (Stopped, VigilError):
            raise
        except Exception as exc:
            log.exception("planner failed")
            raise VigilError(f"The planner failed: {type(exc).__name__}: {exc}",
                             code=ErrorCode.PLANNER_FAILED) from None
        if not isinstance(p, ProposedStep):
            raise VigilError(f"The planner returned {type(p).__name__}, not a ProposedStep.",
                             code=ErrorCode.PLANNER_FAILED)
        timings["model"] = _ms(t)  # the planner's time (a model's or backend's round trips included)
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
        j = self.journal
        node: VirtualNode | None = None
        if p.action.target is not None:
            try:
                node, snap = await self._ground(p.action.target, snap, index,
                                                p.timeout_ms if p.timeout_ms is not None else self.target_timeout_ms)
            except UnknownNodeError as exc:
                waited = (p.timeout_ms if p.timeout_ms is not None else self.target_timeout_ms) / 1000
                return target_missing(self.journal, self.bus, index, p, snap, msg, exc, waited, timings,
                                      self._exchange)
        reasons = sensitive_reasons(p.action, node, snap, self.start_domain, p)
        # leaving the page (going elsewhere, back, to or out of a tab) is not acting on what it says: judged
        # by its own checks (leaving the site asks), so an injection page cannot pin an auto-safe run
        if self._warnings and p.action.name not in TERMINAL_ACTIONS and p.action.name not in (
                "navigate", "back", "switch_tab", "close_tab", "new_tab"):
            reasons.append("the page shows text that reads like instructions to the agent (possible prompt "
                           "injection): check that this step is what the task asks")
        ask = needs_approval(self.policy, reasons)
        granted = self.grants(p.action, frame_url(snap, node)) if ask and not reasons and self.grants is not None \
            else None  # a grant is checked against the origin of the frame that holds the target
        if granted:
            ask = False
        shown = mask_proposal(p, node)
        request = ApprovalRequest(step_index=index, proposal=shown, target=node_summary(node) if node else None,
                                  summary=describe_action(p.action, node, p.expected_outcome),
                                  sensitive_reasons=reasons, policy=self.policy, warnings=self._warnings)
        draft = StepDraft(index=index, proposal=shown, auto_approved=not ask, url=snap.url, snapshot_nodes=len(snap),
                          timings_ms=timings, exchange=self._exchange, tab=self.watch.tab_info())
        seen, page_seen = snap, self.page  # the target as the person (or the policy) approves it
        while True:
            t = time.monotonic()
            decision = await self._decide(request) if ask else (
                Decision(kind="approve", reason=f"a standing grant of the person: {granted}") if granted
                else Decision.approve())
            timings["approval"] = timings.get("approval", 0) + _ms(t)
            draft.decision = decision
            if decision.kind == "stop":
                j.record(draft.record("stopped", note=decision.reason or "stopped"))
                j.update_message(msg, status="error", error="Stopped before this step ran.")
                raise Stopped
            if decision.kind in ("skip", "reject"):
                return declined(self.journal, decision, p, msg, draft)
            in_page = decision.kind == "take_over" and decision.action is None
            # the page as it is right before input is dispatched, and its picture (the last step's after
            # picture when nothing changed since it was taken)
            fresh = await self.page.snapshot()
            self._publish_snapshot(fresh, index, 0)
            t_shot = time.monotonic()
            shot_before = None if in_page else await self.pictures.unchanged(fresh) or await self.pictures.take()
            timings["screenshots"] = _ms(t_shot)
            if in_page:
                return await self._human_in_page(p, msg, draft, fresh, timings["approval"])
            try:
                action, run_node, expect = chosen(decision, p, node, fresh)
            except (UnknownNodeError, ValueError) as exc:
                if not ask:  # nobody to ask again: the step fails, nothing ran
                    return refused(self.journal, self.bus, p, fresh, msg, str(exc), draft)
                what = "Edit refused" if decision.kind in ("edit", "take_over") else "Refused"
                request = request.model_copy(update={"error": f"{what}, nothing ran: {exc}"})
                continue
            if decision.action is None and node is not None:
                drift = target_drift(node, seen, fresh, same_tab=self.page is page_seen)
                if drift and ask and drift.node is not None and self.page is page_seen:
                    # an approval covers what the person saw: the step comes back to them with the difference
                    node = run_node = seen_node = drift.node
                    seen = fresh
                    reasons = sensitive_reasons(p.action, seen_node, fresh, self.start_domain, p) + [
                        r for r in request.sensitive_reasons if r.startswith("the page shows text")]
                    shown = draft.proposal = mask_proposal(p, seen_node)
                    request = request.model_copy(update={
                        "proposal": shown, "target": node_summary(seen_node), "sensitive_reasons": reasons,
                        "summary": describe_action(p.action, seen_node, p.expected_outcome),
                        "error": f"The target changed before the step ran ({ErrorCode.TARGET_CHANGED}), so nothing "
                                 f"ran: {drift.describe()}. Approve again to run it on the element as it is now."})
                    j.message("system", f"Not run: the target changed after approval ({drift.describe()}); "
                                        "asking again.")
                    continue
                if drift and (ask or drift.identity):
                    note = (f"The page changed while this step waited for approval ({ErrorCode.TARGET_CHANGED}): "
                            f"{drift.describe()}. Nothing ran; asking again.")
                    j.update_message(msg, status="error", error="Not run: the target changed before it could run.")
                    j.message("system", note)
                    said = mask_action(p.action, node).to_string()
                    return Turn("stale", note, ActionResult(success=False, action=said,
                                                            error_code=ErrorCode.TARGET_CHANGED, message=note))
            break
        if self.stopping.requested:
            j.record(draft.record("stopped", note="Stop requested before this step ran."))
            raise Stopped
        actor: Actor = "human" if decision.kind == "take_over" else "agent"
        # a dialog this step raises is answered OK under auto-safe only when the person approved it as sensitive
        self.watch.sensitive_ok = ask and bool(reasons) and decision.kind in ("approve", "edit", "take_over")
        # what the browser lets the step do without asking again: leave for the site it targets, download
        self.watch.approved(action, run_node, fresh.url, reasons, asked=ask)
        said = mask_action(action, run_node).to_string()
        if action.name in TERMINAL_ACTIONS:
            self._terminal(action, actor, p, msg, draft)
        rec, result = await self._execute(action, run_node, expect, actor, draft, fresh, shot_before)
        ok = rec.status == "completed"
        if actor == "human":
            j.update_message(msg, status="error", error="The person took over this step.")
            j.message("user", f"Took over: {said}", actionString=said,
                      status="success" if ok else "error", error=None if ok else result.message)
            j.mark_plan(p.plan_index, "completed" if ok else None, "done by the person")
            self._check_fatal(result)
            return Turn("taken_over", f"The person took over and ran {said} instead of your step: "
                                       f"{result.message}", result)
        unverified = rec.unverified
        # a step that ran but whose check failed is not shown as a success: "Unverified: …"
        j.update_message(msg, status="success" if ok and not unverified else "error", actionString=said,
                         error=(f"Unverified: {rec.verification.feedback}" if unverified and rec.verification
                                else None if ok else result.message),
                         metadata={**msg.metadata, "edited": decision.kind == "edit", "unverified": unverified,
                                   **({"incidents": rec.incidents.lines()} if rec.incidents else {})})
        j.mark_plan(p.plan_index, "completed" if ok else "failed")
        self._check_fatal(result)
        return Turn("completed" if ok else "failed", None if ok else result.message, result)

    # -- pieces of a step ------------------------------------------------------------------------
    async def _ground(self, target: str | TargetQuery, snap: DomSnapshot, index: int,
                      timeout_ms: int) -> tuple[VirtualNode, DomSnapshot]:
        """Resolve the target, re-observing until it appears or `timeout_ms` passes."""
        deadline = time.monotonic() + timeout_ms / 1000
        while True:
            try:
                return resolve_target(snap, target), snap
            except UnknownNodeError:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise
            await self.stopping.until(asyncio.sleep(min(0.25, left)))
            snap = await self.page.snapshot()
            self._publish_snapshot(snap, index, 0)

    async def _decide(self, request: ApprovalRequest) -> Decision:
        # one question at a time: a page dialog that opens while a step waits is asked after it, never
        # answered by the decision meant for the step (and the other way round)
        async with self.watch.gate_lock:
            return await self._decide_now(request)

    async def _decide_now(self, request: ApprovalRequest) -> Decision:
        self.journal.set_state("awaiting_approval")
        self.bus.publish(AwaitingApproval(request=request))
        try:
            d = await self.stopping.until(self.gate.decide(request))
        except Stopped:
            return Decision(kind="stop", reason="Stop requested while waiting for approval.")
        except Exception as exc:
            log.exception("approval gate failed")
            raise VigilError(f"The approval gate failed: {type(exc).__name__}: {exc}",
                             code=ErrorCode.GATE_FAILED) from None
        if not isinstance(d, Decision):
            raise VigilError(f"The approval gate returned {type(d).__name__}, not a Decision.",
                             code=ErrorCode.GATE_FAILED)
        return d

    def _terminal(self, action: Action, actor: Actor, p: ProposedStep, msg: ChatMessage, draft: StepDraft) -> None:
        j = self.journal
        j.record(draft.record("completed", actor=actor, action=action))
        if action.name == "finish":
            j.update_message(msg, status="success", actionString=action.to_string())
            j.mark_plan(p.plan_index, "completed")
            raise _End("success", answer=action.answer)
        reason = action.reason or "The planner gave up without giving a reason."
        j.update_message(msg, status="error", actionString=action.to_string(), error=reason)
        raise _End("error", reason=reason)

    async def _human_in_page(self, p: ProposedStep, msg: ChatMessage, draft: StepDraft, fresh: DomSnapshot,
                             waited_ms: float) -> Turn:
        events = await self._events(int(waited_ms) + 1000)
        artifacts = None
        if self.artifacts:
            shot = await self.pictures.take()
            artifacts = StepArtifacts(screenshot_after=shot.jpeg if shot else None, snapshot_after=fresh)
        return person_acted(self.journal, self.bus, p, msg, draft, fresh, events, artifacts)

    async def _execute(self, action: Action, node: VirtualNode | None, expect: ExpectedOutcome | None, actor: Actor,
                       draft: StepDraft, fresh: DomSnapshot, shot_before: Screenshot | None
                       ) -> tuple[StepRecord, ActionResult]:
        """Run the action (its own result, or a failed one); the step's record and that result."""
        timings = draft.timings_ms
        run = action.model_copy(update={"target": node.node_id}) if node is not None else action
        if types_secret(action, node) and action.text:
            self.journal.learn_secret(action.text)
            self.page.remember_secret(action.text)  # so no picture shows it either
        self.journal.set_state("acting")
        t_act = time.monotonic()
        acted_on = self.page
        # started as the input goes out and as the page settles (pictures off: none)
        picture = AfterPicture(self.pictures.take, self.page if self.pictures.enabled else None)
        try:
            if run.name in TAB_ACTIONS:
                result = await self.watch.tab_action(run)
                self._prev_snap = None  # another tab: the previous snapshot's IDs are not this page's
            else:
                with on_quiet(picture):
                    result = await self.page.act(run, expect)
        except VigilError as exc:  # the action layer reports page problems in the result; be safe anyway
            result = ActionResult(success=False, action=run.to_string(), node_id=run.node_id, error_code=exc.code,
                                  message=exc.message)
        except BaseException:
            await picture.drop()
            raise
        incidents = await self.watch.end_step()
        result = with_incidents(result, incidents, acted_on, self.page)
        # where the action's time went: the action itself, the page settling, the verification
        whole, parts = _ms(t_act), result.timings_ms or {}
        for phase in ("settle", "verify"):
            if phase in parts:
                timings[phase] = parts[phase]
        timings["act"] = round(max(0.0, whole - timings.get("settle", 0) - timings.get("verify", 0)), 1)
        self.journal.set_state("verifying")
        # the page after the step: its snapshot first, then its picture, so that the next step may reuse
        # the picture when its own snapshot is this same one (nothing changed after this snapshot)
        # (the verification's own snapshot when it took one: after the settle, the page as the step left it)
        snap_after = verified_snapshot(self.page, result, acted_on) or await after_snapshot(self.page)
        t_shot = time.monotonic()
        pending = await picture.result(self.page is acted_on)
        if pending.done() and _taken(pending) is None and self.pictures.enabled:
            # (one that came back empty is taken again, in the background: a record is not published without it)
            pending = asyncio.ensure_future(self.pictures.take())
        # a picture still being taken is not waited for: the record is published without it, and the picture
        # follows (StepPictureTaken), before the planner is asked for the next step
        shot_after = _taken(pending)
        timings["screenshots"] = round(timings.get("screenshots", 0) + _ms(t_shot), 1)
        # the step's page events: those since its action began (not the page's load a moment before it)
        since_act = int(_ms(t_act)) + EVENT_SLACK_MS
        settled = bool((result.data or {}).get("settled")) and result.success
        self.pictures.left(snap_after, pending if not pending.done() else shot_after, settled)
        artifacts = None
        if self.artifacts:
            artifacts = StepArtifacts(screenshot_before=shot_before.jpeg if shot_before else None,
                                      screenshot_after=shot_after.jpeg if shot_after else None,
                                      snapshot_before=fresh, snapshot_after=snap_after)
        before = shot_before.phash if shot_before else None
        after = shot_after.phash if shot_after else None
        index = draft.index
        self.bus.publish(ActionDone(step_index=index, actor=actor, result=result))
        v = result.verification
        if v is not None:
            self.bus.publish(VerificationDone(step_index=index, result=v))
        failed = not result.success or (v is not None and not v.success and expect is not None)
        note = f"Not verified: {v.feedback}" if v is not None and not v.success and not failed else ""
        if incidents.dialog_flood or incidents.popups_blocked:  # the page misbehaved: this step did not go well
            failed = True
            note = "; ".join(x for x in incidents.lines() if "flood" in x)
        try:
            self.page.check_alive()
        except VigilError as exc:  # the action "worked" but the tab died under it
            failed, note = True, exc.message
        distance = hash_distance(before, after) if before and after else None
        rec = draft.record(
            "failed" if failed else "completed", note=note, actor=actor, action=mask_action(run, node), result=result,
            verification=v, events=await self._events(since_act) + incident_events(incidents),
            url_before=fresh.url,
            url_after=self._url(), snapshot_nodes=len(fresh), screenshots=(before, after, distance),
            target=target_record(node, fresh) if node is not None else None)
        rec = rec.model_copy(update={"incidents": None if incidents.empty() else incidents})
        rec = self.journal.record(rec, artifacts)
        if shot_after is None and self.pictures.enabled:
            # (decided by what the record holds, not by whether the picture is in by now: one that came in while
            # the record was made still follows it)
            self.late_picture.follow(rec, pending, before, snap_after, keep=self.artifacts)
        return rec, result

    def _check_fatal(self, result: ActionResult | None) -> None:
        """End the run when the tab crashed or the browser closed."""
        self.page.check_alive()
        if result is not None and result.error_code in FATAL_CODES:
            raise FATAL_CODES[result.error_code](result.message)

    # -- helpers ---------------------------------------------------------------------------------
    async def _events(self, max_age_ms: int) -> list[PageEvent]:
        try:
            return await self.page.recent_events(max_age_ms=max_age_ms)
        except VigilError as exc:
            log.debug("could not read page events: %s", exc)
            return []

    def _url(self) -> str:
        try:
            return self.page.url
        except Exception:  # the page is gone: where it last was
            return self._prev_snap.url if self._prev_snap is not None else ""


