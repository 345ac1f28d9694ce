"""BackendPlanner: a planner that asks a backend speaking seed 001's `POST {backend}/api/agent/interact`.

Each `propose()` sends one semantic-first request, lets the backend negotiate for heavier context,
and maps its answer to a `ProposedStep`. Problems (timeouts, refused connections, HTTP errors,
bodies that are not the contract, actions that do not parse) become a `fail` step whose reason
names the endpoint and the problem, so the run ends cleanly with status error.

Request (seed 001 §1, §6.4) — sent on every call:
  url, query (the task), domMode "semantic", interactiveTree (the V3 `i/r/n/v/s/xy/occ/scr/f` items),
  viewport {width, height}, pageTitle, scrollPosition ("25%"), scrollableContainers [{id, depth,
  hasMore}], recentEvents (strings in the seed's style, "[2s ago] Error: 'Invalid ZIP code'"),
  hasErrors, hasSuccess; taskId once an answer carried one; sessionId when given or answered.
  After a step ran or was declined: previousUrl, lastActionStatus, lastActionError {message, code,
  action, elementId}, lastActionResult {success, actualState}, clientObservations {didUrlChange,
  didDomMutate}, and from the sentinel check verification_passed, verification_message,
  errors_detected, success_messages. When DOM RAG (`rag_filter`, budget `max_tokens`, default 2000
  as seed 000 §2.6.2) cut the tree: dom_filtered, filter_reason, original_node_count and
  token_reduction (a percentage, as the seed's example `92`). `dom` only when asked.

Response (seed 001 §3.2, §4.2): `{"success": true, "data": {...}}` or the bare `{...}`. `action`
goes through `parse_action_string`; `thought`; `plan.steps[].description` → plan;
`plan.currentStepIndex` (else `currentStep`) → plan_index; `expectedOutcome`/`expected_outcome` →
expected_outcome; `actionDetails`, `status`, `taskId`, `sessionId`, `currentStep`, `totalSteps`,
`reasoning`, `userQuestion`, `missingInformation` → `ProposedStep.details`.

Negotiation (seed 001 §1, §5.8; seed 000 §14): `status: "needs_context"` with `requestedDomMode`
(skeleton | hybrid = skeleton + screenshot | full), `needsSkeletonDom`, `needsScreenshot`,
`needsFullDom`/`needs_full_dom`, `needs_skeleton_dom`, `needs_screenshot`, a `needs_context` list
of kinds, or legacy `status`/`action` "needs_full_dom". The same request body is sent again plus
only what was asked: `skeletonDom` (≤ 100 KB, §5.2), `screenshot` (base64 JPEG, ≤ 1024 px, q70,
no data: prefix) with `screenshotHash`, `dom` (full annotated HTML, ≤ 200,000 characters, §5.8).
At most two rounds per step; `last_exchange` keeps every call.

Decisions where the seeds are silent or disagree:
- `domMode` stays "semantic" on retries (seed 001 §1/§5.8 allow it; the artifacts' presence says
  what was added). Artifacts asked for in an earlier round of the same step are kept.
- A bare `needs_context` that names nothing asks for the skeleton, the next lighter step (§6.6).
  An answer that carries an action is taken as the answer unless its `status` is needs_context or
  needs_full_dom (a backend may echo `requestedDomMode` alongside a normal answer).
- A screenshot whose pHash matches the last one sent in an earlier step goes as `screenshot: null`
  plus its `screenshotHash` (§5.2 "null if unchanged"); within one step it is always sent. A failed
  capture is left out and the call continues (§5.8 "continue without screenshot").
- The tree is sent in full on every call: the contract requires `interactiveTree` every time.
- Declined steps report `lastActionStatus: "failure"` with code REJECTED, SKIPPED, STALE (the page
  changed before it ran) or TAKEN_OVER and the loop's feedback as the message; a step that ran but
  failed its check has code VERIFICATION_FAILED. `elementId` is a number for plain IDs, else a string.
- An answer without an action maps `status` "completed" → finish(), "failed" → fail(reason), and
  "needs_user_input" → fail(the backend's question), since the loop cannot ask mid-step.
- A new run (step 0, no history) forgets the taskId; the sessionId is kept (one tab, one session).
"""

from __future__ import annotations

import asyncio
import base64
import http.client
import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from engine.errors import ActionStringError, ErrorCode, ScreenshotError
from engine.loop.action_string import parse_action_string
from engine.loop.planner import Observation
from engine.loop.redact import types_secret
from engine.loop.untrusted import UNTRUSTED_RULE
from engine.models import Action, ExpectedOutcome, PageEvent, ProposedStep
from engine.planners.payload import RagResult, rag_filter
from engine.secret_values import scrub
from engine.snapshot.serialize.tokens import cut
from engine.vision.screenshot import ScreenshotTracker

INTERACT_PATH = "/api/agent/interact"
MAX_ROUNDS = 2
SKELETON_LIMIT = 100_000
FULL_DOM_LIMIT = 200_000
RECENT_EVENTS = 10
UNTRUSTED_FIELDS = ("url", "pageTitle", "interactiveTree", "scrollableContainers", "recentEvents", "skeletonDom", "dom",
                    "screenshot", "errors_detected", "success_messages", "verification_message", "lastActionResult",
                    "tabs")
TREE_TOKENS = 2000  # DOM RAG budget for interactiveTree: seed 000 §2.6.2 filterDomForQuery maxTokens
_KINDS = {"skeleton": {"skeleton"}, "skeletondom": {"skeleton"}, "screenshot": {"screenshot"},
          "image": {"screenshot"}, "vision": {"screenshot"}, "hybrid": {"skeleton", "screenshot"},
          "full": {"full"}, "fulldom": {"full"}, "dom": {"full"}, "html": {"full"}, "semantic": set()}
_FLAGS = {"needsSkeletonDom": "skeleton", "needs_skeleton_dom": "skeleton", "needsScreenshot": "screenshot",
          "needs_screenshot": "screenshot", "needsFullDom": "full", "needs_full_dom": "full"}
_DECLINED = {"rejected": ErrorCode.REJECTED, "skipped": ErrorCode.SKIPPED, "stale": ErrorCode.STALE,
             "taken_over": ErrorCode.TAKEN_OVER}
_DETAIL_KEYS = ("actionDetails", "status", "taskId", "sessionId", "currentStep", "totalSteps", "reasoning",
                "userQuestion", "missingInformation")


class BackendError(Exception):
    """A call to the backend went wrong; the message says how (without the endpoint)."""


def interact_endpoint(backend_url: str) -> str:
    """`http://host:8000` (or the full endpoint) → `http://host:8000/api/agent/interact`."""
    parts = urllib.parse.urlsplit(str(backend_url).strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"The backend URL must be http(s)://host[:port], not {backend_url!r}.")
    path = parts.path.rstrip("/")
    if not path.endswith(INTERACT_PATH):
        path += INTERACT_PATH
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


class BackendPlanner:
    """Proposes steps by asking `POST {backend_url}/api/agent/interact` (seed 001)."""

    def __init__(self, backend_url: str, *, timeout: float = 60, session_id: str | None = None,
                 headers: dict[str, str] | None = None, max_tokens: int | None = None):
        self.endpoint = interact_endpoint(backend_url)
        self.timeout, self.max_tokens = timeout, max_tokens or TREE_TOKENS
        self.headers = dict(headers or {})
        self.session_id = session_id
        self.task_id: str | None = None
        self.last_exchange: dict[str, Any] | None = None
        self._shots = ScreenshotTracker()
        self._last_action: str | None = None

    async def propose(self, obs: Observation) -> ProposedStep:
        """One step from the backend; every problem becomes a `fail` step naming the endpoint."""
        if obs.step_index == 0 and obs.last_outcome is None and not obs.history:
            self.task_id, self._last_action = None, None  # a new run is a new task
        exchange: dict[str, Any] = {"endpoint": self.endpoint, "rounds": 0, "requested": [], "calls": []}
        self.last_exchange = exchange
        try:
            data = await self._negotiate(obs, self._request(obs), exchange)
            step = self._step(data, obs, exchange)
        except BackendError as exc:
            reason = f"Backend {self.endpoint}: {exc}"
            step = ProposedStep(thought=reason, action=Action(name="fail", reason=reason),
                                details={"backend": self.endpoint, "error": str(exc)})
        self._last_action = step.action.to_string()
        return step

    async def aclose(self) -> None:
        """Nothing to release: every call opens and closes its own connection."""

    # -- the request -----------------------------------------------------------------------------
    def _request(self, obs: Observation) -> dict[str, Any]:
        sem = obs.snapshot.serialize("semantic").data
        body: dict[str, Any] = {"url": obs.url, "query": obs.task}
        if self.task_id:
            body["taskId"] = self.task_id
        if self.session_id:
            body["sessionId"] = self.session_id
        body["domMode"] = "semantic"
        body["interactiveTree"], rag = self._tree(sem, obs)
        events = obs.recent_events[-RECENT_EVENTS:]
        body.update(viewport=sem["viewport"], pageTitle=cut(sem["title"], 200), scrollPosition=sem["scroll_position"],
                    scrollableContainers=sem.get("scrollable_containers", []),
                    recentEvents=[event_line(e) for e in events],
                    hasErrors=any(e.category == "error" for e in events),
                    hasSuccess=any(e.category == "success" for e in events))
        body.update(self._last_step_fields(obs))
        if len(obs.tabs) > 1:  # the open tabs; the backend answers switchTab(1), closeTab(1), newTab("url")
            body["tabs"] = [{"index": t.index, "title": cut(t.title, 200), "url": t.url, "active": t.active}
                            for t in obs.tabs]
        # which fields were read from the page (untrusted data that never carries instructions)
        body["untrustedContent"] = {"fields": list(UNTRUSTED_FIELDS), "note": UNTRUSTED_RULE}
        if rag.dom_filtered:  # token_reduction as the seed's percentage (92 = 92 % fewer tokens)
            body.update(dom_filtered=True, filter_reason=rag.filter_reason,
                        original_node_count=rag.original_node_count, token_reduction=round(rag.token_reduction * 100))
        return body

    def _tree(self, sem: dict, obs: Observation) -> tuple[list[dict], RagResult]:
        """The interactive tree, cut down by DOM RAG when it is over the token budget."""
        rag = rag_filter(sem, obs.task, self.max_tokens, snapshot=obs.snapshot)
        return rag.items, rag

    def _last_step_fields(self, obs: Observation) -> dict[str, Any]:
        """What became of the previous proposal, in the contract's fields."""
        outcome, r = obs.last_outcome, obs.last_result
        if outcome is None:
            return {}
        out: dict[str, Any] = {}
        ran = outcome in ("completed", "failed", "taken_over") and r is not None
        if ran and obs.history:
            out["previousUrl"] = obs.history[-1].url_before
        v = r.verification if r is not None else None
        if outcome == "completed":
            out["lastActionStatus"] = "success"
        else:
            out["lastActionStatus"] = "failure"
            if outcome == "failed" and r is not None:
                verify_failed = r.success and v is not None and not v.success
                error: dict[str, Any] = {"message": v.feedback if v is not None and verify_failed
                         else (r.message or obs.feedback or "failed"),
                         "code": ErrorCode.VERIFICATION_FAILED if verify_failed
                         else (r.error_code or ErrorCode.ACTION_FAILED),
                         "action": r.action}
                if r.node_id:
                    error["elementId"] = int(r.node_id) if r.node_id.isdigit() else r.node_id
            else:
                error = {"message": obs.feedback or outcome.replace("_", " "),
                         "code": _DECLINED.get(outcome, ErrorCode.FAILED),
                         "action": self._last_action or ""}
            out["lastActionError"] = error
        actual = v.actual_outcome if v is not None else (r.message if ran and r is not None else obs.feedback)
        out["lastActionResult"] = {"success": outcome == "completed", **({"actualState": actual} if actual else {})}
        if v is not None:
            out["clientObservations"] = {"didUrlChange": v.page_state.url_changed,
                                         "didDomMutate": v.page_state.dom_changed}
            out.update(verification_passed=v.success, verification_message=v.feedback,
                       errors_detected=list(v.errors_detected), success_messages=list(v.success_messages))
        elif ran and obs.history:
            last = obs.history[-1]
            out["clientObservations"] = {"didUrlChange": last.url_before != last.url_after}
        return out

    # -- negotiation -------------------------------------------------------------------------------
    async def _negotiate(self, obs: Observation, body: dict, exchange: dict) -> dict:
        """Call; while the backend asks for more context, call again with the same body plus it."""
        extra: dict[str, Any] = {}
        while True:
            data = await self._call({**body, **extra}, exchange)
            self._adopt_ids(data)
            wanted = requested_artifacts(data)
            if not wanted:
                return data
            if exchange["rounds"] == MAX_ROUNDS:
                raise BackendError(f"still asked for more context ({', '.join(sorted(wanted))}) after "
                                   f"{MAX_ROUNDS} negotiation rounds; giving up on this step.")
            asked_before = set().union(*exchange["requested"])
            exchange["rounds"] += 1
            exchange["requested"].append(sorted(wanted))
            extra.update(await self._artifacts(obs, wanted, exchange, resend="screenshot" in asked_before))

    async def _artifacts(self, obs: Observation, wanted: set[str], exchange: dict, *, resend: bool) -> dict[str, Any]:
        """The requested artifacts as request fields. A screenshot unchanged since the one sent in
        an earlier step goes as null plus its hash, unless the backend asks for it again (`resend`)."""
        snap, out = obs.snapshot, dict[str, Any]()
        if "skeleton" in wanted:
            out["skeletonDom"] = snap.serialize("skeleton").text[:SKELETON_LIMIT]
        if "full" in wanted:
            out["dom"] = snap.serialize("full").text[:FULL_DOM_LIMIT]
        if "screenshot" in wanted:
            try:
                if obs.page is None:
                    raise ScreenshotError("no page is attached to this observation")
                shot = await obs.page.screenshot()
            except Exception as exc:  # the seed: carry on without a picture
                exchange["screenshot_error"] = f"{type(exc).__name__}: {exc}"
                return out
            fresh = resend or self._shots.should_send(shot)
            out["screenshot"] = base64.b64encode(shot.jpeg).decode("ascii") if fresh else None
            out["screenshotHash"] = shot.phash
            self._shots.mark_sent(shot)
        return out

    def _adopt_ids(self, data: dict) -> None:
        if data.get("taskId"):
            self.task_id = str(data["taskId"])
        if data.get("sessionId"):
            self.session_id = str(data["sessionId"])

    # -- HTTP --------------------------------------------------------------------------------------
    async def _call(self, body: dict, exchange: dict) -> dict:
        """POST the body; the unwrapped `data` object of a successful answer, else BackendError."""
        call: dict[str, Any] = {"request": elide(body), "response": None, "http_status": None, "error": None}
        exchange["calls"].append(call)
        t = time.monotonic()
        try:
            status, raw = await asyncio.to_thread(self._post, json.dumps(body, ensure_ascii=False).encode())
            call["http_status"] = status
            try:
                parsed = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                raise BackendError(f"answered HTTP {status} with a body that is not JSON: {snippet(raw)}") from None
            call["response"] = parsed
            if status >= 400:
                detail = error_text(parsed)
                raise BackendError(f"answered HTTP {status}" + (f": {detail.rstrip('.')}." if detail else "."))
            return unwrap(parsed)
        except BackendError as exc:
            call["error"] = str(exc)
            raise
        finally:
            call["ms"] = round((time.monotonic() - t) * 1000, 1)

    def _post(self, payload: bytes) -> tuple[int, bytes]:
        req = urllib.request.Request(self.endpoint, data=payload, method="POST", headers={
            "Content-Type": "application/json", "Accept": "application/json", **self.headers})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return resp.status, resp.read()
        except urllib.error.HTTPError as exc:  # 4xx/5xx: its body may say why
            return exc.code, exc.read()
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, (TimeoutError, socket.timeout)):
                raise BackendError(f"did not answer within {self.timeout:g} s (timeout).") from None
            if isinstance(exc.reason, ConnectionRefusedError):
                raise BackendError("connection refused — is the backend running at that address?") from None
            raise BackendError(f"could not be reached: {exc.reason}.") from None
        except TimeoutError:
            raise BackendError(f"did not answer within {self.timeout:g} s (timeout).") from None
        except (OSError, ValueError, http.client.HTTPException) as exc:  # dropped, or not HTTP
            raise BackendError(f"the connection failed: {type(exc).__name__}: {exc}.") from None

    # -- the answer ---------------------------------------------------------------------------------
    def _step(self, data: dict, obs: Observation, exchange: dict) -> ProposedStep:
        thought = str(data.get("thought") or "")
        action = self._action(data, thought)
        action, healed = selector_fallback(action, data, obs)
        details = {k: data[k] for k in _DETAIL_KEYS if data.get(k) is not None}
        if healed:
            details["selectorPathUsed"] = healed
        details["backend"] = self.endpoint
        if exchange["rounds"]:
            details["negotiation"] = exchange["requested"]
        expected = None
        raw = data.get("expectedOutcome", data.get("expected_outcome"))
        if raw:
            try:
                expected = ExpectedOutcome.model_validate({"type": raw} if isinstance(raw, str) else raw)
            except ValueError as exc:
                details["expected_outcome_ignored"] = f"{raw!r}: {exc}"
        plan, index = plan_of(data)
        if self._types_secret(action, obs):
            typed = (action.text or "",)
            details = scrub(details, typed, exact=True)
            exchange["calls"] = scrub(exchange["calls"], typed, exact=True)
        return ProposedStep(thought=thought, action=action, expected_outcome=expected, plan=plan, plan_index=index,
                            details=details)

    @staticmethod
    def _action(data: dict, thought: str) -> Action:
        raw, status = data.get("action"), str(data.get("status") or "").lower()
        if raw in (None, ""):
            if status == "completed":
                return Action(name="finish")
            if status == "failed":
                return Action(name="fail", reason=thought or error_text(data) or "The backend says the task failed.")
            if status == "needs_user_input":
                question = data.get("userQuestion") or data.get("missingInformation") or "no question given"
                return Action(name="fail", reason=f"The backend needs input from you: {question}")
            raise BackendError(f"answered without an action (status {status or 'missing'}).")
        if not isinstance(raw, str):
            raise BackendError(f"sent an action that is not a string: {raw!r}.")
        try:
            action = parse_action_string(raw)
        except ActionStringError as exc:
            raise BackendError(f"sent an action that does not parse: {exc.message}") from None
        if action.name == "fail" and not action.reason:
            action = action.model_copy(update={"reason": thought or "The backend gave up (fail()) without a reason."})
        return action

    @staticmethod
    def _types_secret(action: Action, obs: Observation) -> bool:
        node = obs.snapshot.node_map.get(action.target) if isinstance(action.target, str) else None
        return types_secret(action, node)


# -- helpers --------------------------------------------------------------------------------------
def selector_fallback(action: Action, data: dict, obs: Observation) -> tuple[Action, dict | None]:
    """Seed 001 §4: `actionDetails.selectorPath` stands in for an element ID the page no longer has.
    When the action's ID is not in the snapshot the backend was sent, the selector must match exactly
    one element of it, which the action then targets; else the backend's answer is refused, naming
    what the selector found. An ID still on the page is used as sent."""
    details = data.get("actionDetails")
    sel = details.get("selectorPath") if isinstance(details, dict) else None
    target = action.target
    if not isinstance(sel, str) or not sel.strip() or not isinstance(target, str) or target in obs.snapshot:
        return action, None
    from engine.snapshot.locators import match_selector
    try:
        hits = match_selector(obs.snapshot, sel)
    except ValueError as exc:
        raise BackendError(f"sent {action.name} on element {target}, which is not on the page, and its "
                           f"selectorPath cannot stand in for it: {exc}.") from None
    if len(hits) != 1:
        found = "no element" if not hits else f"{len(hits)} elements ({', '.join(n.node_id for n in hits[:5])})"
        raise BackendError(f"sent {action.name} on element {target}, which is not on the page, and its selectorPath "
                           f"{sel!r} matches {found}; it must match exactly one.")
    return action.model_copy(update={"target": hits[0].node_id}), {"from": target, "to": hits[0].node_id,
                                                                    "selectorPath": sel}


def requested_artifacts(data: dict) -> set[str]:
    """What a negotiation answer asks for: a subset of {"skeleton", "screenshot", "full"}. An
    answer with an action is an answer, unless its status says it needs context."""
    want: set[str] = set()
    status = str(data.get("status") or "").lower()
    action = data.get("action")
    if action and action != "needs_full_dom" and status not in ("needs_context", "needs_full_dom"):
        return want
    mode = data.get("requestedDomMode") or data.get("requested_dom_mode")
    if isinstance(mode, str):
        want |= _KINDS.get(_norm(mode), set())
    want |= {kind for flag, kind in _FLAGS.items() if data.get(flag) is True}
    if status == "needs_full_dom" or action == "needs_full_dom":
        want.add("full")
    asked = data.get("needs_context", data.get("needsContext"))
    if isinstance(asked, str):
        asked = [asked]
    if isinstance(asked, list) and asked:
        unknown = [k for k in asked if _norm(str(k)) not in _KINDS]
        if unknown:
            raise BackendError(f"asked for context Vigil cannot give ({', '.join(map(str, unknown))}); it can send "
                               "skeleton, screenshot, hybrid or full.")
        for k in asked:
            want |= _KINDS[_norm(str(k))]
    if not want and (status == "needs_context" or asked is True):
        want.add("skeleton")
    return want


def _norm(kind: str) -> str:
    return "".join(c for c in kind.lower() if c.isalnum())


def unwrap(body: Any) -> dict:
    """The answer's `data` object (or the bare body); BackendError for anything else."""
    if not isinstance(body, dict):
        raise BackendError(f"answered with JSON that is not an object: {snippet(json.dumps(body))}")
    if body.get("success") is False:
        raise BackendError(f"reported a failure: {error_text(body).rstrip('.') or 'success is false, no error given'}.")
    if "data" in body:
        if not isinstance(body["data"], dict):
            raise BackendError(f"answered with `data` that is not an object: {snippet(json.dumps(body['data']))}")
        return body["data"]
    return body


def plan_of(data: dict) -> tuple[list[str] | None, int | None]:
    """Plan descriptions and the current step's index from `plan` (and `currentStep`)."""
    plan = data.get("plan")
    steps = plan.get("steps") if isinstance(plan, dict) else None
    if not isinstance(plan, dict) or not isinstance(steps, list) or not steps:
        return None, None
    descs = [str(s.get("description") or f"Step {i + 1}") if isinstance(s, dict) else str(s)
             for i, s in enumerate(steps)]
    index = plan.get("currentStepIndex", data.get("currentStep"))
    ok = isinstance(index, int) and not isinstance(index, bool) and 0 <= index < len(descs)
    return descs, index if ok else None


def event_line(e: PageEvent) -> str:
    """A page event in the seed's style: "[2s ago] Error: 'Invalid ZIP code'"."""
    label = {"error": "Error", "success": "Success", "warning": "Warning"}.get(e.category, e.kind.capitalize())
    return f"[{round(e.age_ms / 1000)}s ago] {label}: '{cut(e.text, 200)}'"


def error_text(body: Any) -> str:
    """The error message a body carries (`error` string or {message, code}, or `message`)."""
    if not isinstance(body, dict):
        return ""
    err = body.get("error") or body.get("message") or ""
    if isinstance(err, dict):
        msg, code = err.get("message") or "", err.get("code") or ""
        return f"{msg} ({code})" if msg and code else str(msg or code or json.dumps(err))
    return str(err)


def snippet(raw: bytes | str, limit: int = 160) -> str:
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    text = " ".join(text.split())
    return repr(text[:limit] + ("…" if len(text) > limit else "")) if text else "(empty)"


def elide(body: dict) -> dict:
    """The body as recorded: screenshot bytes replaced by their size."""
    if not body.get("screenshot"):
        return dict(body)
    return {**body, "screenshot": f"<{len(body['screenshot'])} characters of base64 JPEG elided>"}
