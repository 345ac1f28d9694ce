"""Tool results for the MCP client: short, in our own words outside the fence, page content inside.

An action's result says what ran and how it ended (done / verified, failed, rejected with the
person's reason, not run because it needs a person, skipped, the page changed first), whether a
navigation happened, and — inside `<page_content>` — the step's effect as the page computed it before input
(`effect: submits 'Delete workspace' — POST /workspaces/42/delete`), the action's message, the verification
feedback, page events and the change of the semantic payload since the client's last view. Typed
secrets never appear: actions come from the loop's masked records, and every text passes through
the supervisor's scrubber before it leaves.
"""

from __future__ import annotations

import json
import urllib.parse
from typing import TYPE_CHECKING

from mcp.types import CallToolResult, ImageContent, TextContent

from engine.loop.redact import mask_action
from engine.loop.untrusted import fence
from engine.mcp.planner import NoPersonGate, StepOutcome
from engine.models import Action, StepRecord

if TYPE_CHECKING:
    from engine.mcp.supervisor import McpSupervisor
    from engine.snapshot.dom_snapshot import DomSnapshot

MAX_EVENTS = 5
EVENT_CATEGORIES = frozenset({"error", "success", "warning"})  # toasts and errors, not every DOM change
# Every text result fits well inside what the SDK's client takes in one server-sent event (1 MiB): measured as
# JSON with every non-ASCII character escaped, which is never shorter than what goes on the wire.
MAX_RESULT_BYTES = 600_000
MAX_LINE_CHARS = 1_000   # a line of an action's result longer than this is cut, its length said
TYPED_HEAD = 40          # a typed text longer than SHOWN_TYPED is shown as its first characters and its length
SHOWN_TYPED = 60


def text_result(sup: McpSupervisor | None, header: str, page: str | None = None, *,
                error: bool = False, cap_lines: bool = False) -> CallToolResult:
    """`header` (our words) and, fenced, `page` (what came from the page); scrubbed of secrets, then bounded:
    with `cap_lines` each line to MAX_LINE_CHARS, and the whole to MAX_RESULT_BYTES (a cut says so)."""
    if sup is not None:  # first: a cut must never leave part of a secret behind
        header, page = sup.scrub(header), sup.scrub(page) if page else page
    if cap_lines:
        header, page = _cap_lines(header), _cap_lines(page) if page else page
    if page:
        page = _fit(page, MAX_RESULT_BYTES - _wire_bytes(header) - 200)
    text = header if not page else f"{header}\n{fence(page)}"
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=error)


def _wire_bytes(text: str) -> int:
    return len(json.dumps(text))  # ASCII-escaped: an upper bound of the UTF-8 JSON the client receives


def _cap_lines(text: str) -> str:
    return "\n".join(line if len(line) <= MAX_LINE_CHARS else
                     f"{line[:MAX_LINE_CHARS]}… [cut: {len(line):,} characters]" for line in text.split("\n"))


def _fit(page: str, budget: int) -> str:
    """`page`, or its beginning with a note of the cut when it is over `budget` bytes on the wire."""
    size = _wire_bytes(page)
    if size <= budget:
        return page
    note = (f"\n… [cut: this result was {len(page):,} characters; a result is kept under {MAX_RESULT_BYTES // 1000} "
            "KB. Ask for less: browser_snapshot with max_tokens or focus, or browser_find.]")
    keep = int(len(page) * max(budget - _wire_bytes(note), 0) / size)
    while keep > 0 and _wire_bytes(page[:keep]) > budget - _wire_bytes(note):
        keep = int(keep * 0.9)
    return page[:keep] + note


def _without_long_texts(line: str, asked: list[Action]) -> str:
    """`line` with each long text the client asked to type (as typed, or quoted in code) shown as its head."""
    for a in asked:
        text = a.text or ""
        if a.name == "type" and len(text) > SHOWN_TYPED:
            short = f"{text[:TYPED_HEAD]}… [{len(text):,} characters]"
            line = line.replace(text, short).replace(json.dumps(text, ensure_ascii=False)[1:-1], short)
    return line


def call_text(action: Action, sup: McpSupervisor | None = None) -> str:
    """The action as a call string, a long typed text shown as its first characters and its length (never echoed
    in full: a client sent it, and a result that repeats it can outgrow what a client accepts)."""
    text = action.text or ""
    if action.name != "type" or len(text) <= SHOWN_TYPED:
        return action.to_string()
    head = (sup.scrub(text) if sup is not None else text)[:TYPED_HEAD]
    return action.model_copy(update={"text": head + "…"}).to_string() + f" [{len(text):,} characters typed]"


def error_result(code: str, message: str, sup: McpSupervisor | None = None) -> CallToolResult:
    return text_result(sup, f"Error {code}: {message}", error=True)


def image_result(sup: McpSupervisor, header: str, data_b64: str, mime: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=sup.scrub(header)),
                                   ImageContent(type="image", data=data_b64, mime_type=mime)])


# -- steps --------------------------------------------------------------------------------------------
def said(action: Action, snap: DomSnapshot | None, sup: McpSupervisor | None = None) -> str:
    """The action as a call string, text typed into a secret field masked, a long text shortened."""
    node = snap.node_map.get(action.target) if snap is not None and isinstance(action.target, str) else None
    return call_text(mask_action(action, node), sup)


def _document(url: str) -> str:
    return urllib.parse.urldefrag(url or "")[0]


def navigated(rec: StepRecord | None) -> bool:
    """Did this step load a document: another URL, or navigate()/back() that worked (a reload too)?"""
    if rec is None or rec.action is None or rec.result is None:
        return False
    if rec.action.name in ("navigate", "back") and rec.result.success:
        return True
    v = rec.verification
    if v is not None and v.page_state.url_changed and _document(v.page_state.url) != _document(rec.url_before):
        return True
    return bool(rec.url_after) and _document(rec.url_after) != _document(rec.url_before)


def step_events(rec: StepRecord) -> list[str]:
    """The toasts, errors and warnings that came up during this step (the page's words)."""
    total = rec.timings_ms.get("total")
    since = rec.started_at * 1000 - total - 250 if total is not None else None
    out = [f"{e.category} {e.text!r}" for e in rec.events
           if e.category in EVENT_CATEGORIES and (since is None or not e.at or e.at >= since)]
    return out[-MAX_EVENTS:]


def playwright_code(action: Action | None, *snaps: DomSnapshot | None) -> str | None:
    """The step's action as one line of Playwright Python (engine.snapshot.locators.code), its element found
    by the locator computed on the first snapshot that has it; None when Playwright code cannot say it."""
    from engine.snapshot.locators import locator_for
    from engine.snapshot.locators.code import action_code

    if action is None or action.name in ("finish", "fail"):
        return None
    loc = None
    if isinstance(action.target, str):
        snap = next((s for s in snaps if s is not None and action.target in s.node_map), None)
        if snap is None:
            return None
        try:
            loc = locator_for(snap, action.target)
        except Exception:  # noqa: BLE001 - a code line is a courtesy; the step's result stands without it
            return None
    code = action_code(action, loc)
    return None if code.startswith("#") else code


def _step_lines(out: StepOutcome, asked: Action, sup: McpSupervisor) -> tuple[str, list[str], bool]:
    """(the header line, page-content lines, is an error) for one step."""
    rec = out.record
    snap = out.snapshot
    what = (rec.action or (rec.proposal.action if rec.proposal else None)) if rec is not None else None
    call = call_text(what, sup) if what is not None else said(asked, snap, sup)
    page: list[str] = []
    result = rec.result if rec is not None else None
    status = out.status
    if status == "ended" and rec is not None and rec.status in ("completed", "failed") and rec.action is not None:
        status = rec.status  # the step ran, then the run ended (a terminal step, a crash)
    if status in ("completed", "failed") and rec is not None and result is not None:
        v = rec.verification
        if rec.decision is not None and rec.decision.kind == "edit":
            asked_call = (call_text(rec.proposal.action, sup) if rec.proposal is not None else said(asked, snap, sup))
            call = f"{asked_call} — EDITED by the person to {call}"
        if status == "completed":
            head = f"{call} — done"
            if v is not None:
                head += ", verified" if v.success else ", NOT verified"
        else:
            head = f"{call} — FAILED" + (f" ({result.error_code})" if result.error_code else "")
        head += f"; navigated: {'yes' if navigated(rec) else 'no'}"
        message = result.message or ""
        if message:
            page.append(f"result: {message}")
        if v is not None and v.feedback and v.feedback not in message:
            page.append(f"verification: {v.feedback}")
        if navigated(rec) and rec.url_after not in message:
            page.append(f"url: {rec.url_after}")
        events = step_events(rec)
        if events:
            page.append("events: " + " · ".join(events))
        code = playwright_code(rec.action, out.before, snap)
        if code:
            page.append(f"playwright: {code}")
        if out.status == "ended" and out.feedback:
            head += ". Then the run ended."
            page.append(out.feedback)
        return head, page, status == "failed"
    if status == "completed":  # a terminal step (finish)
        return f"{call} — done", page, False
    if status == "taken_over":
        asked_call = call_text(rec.proposal.action, sup) if rec is not None and rec.proposal is not None else call
        if rec is not None and rec.action is not None:
            head = f"{asked_call} — the person took over and ran {call_text(rec.action, sup)} instead"
        else:
            head = f"{asked_call} — the person took over and acted in the page directly instead"
        if result is not None and result.message:
            page.append(f"result: {result.message}")
        return head + f"; navigated: {'yes' if navigated(rec) else 'no'}", page, False
    if status == "rejected":
        # its reasons quote the page (names of elements): they go in the fence
        if rec is not None and NoPersonGate.refused(rec):
            page.append(f"needs a person because it: {NoPersonGate.reasons(rec)}")
            return (f"{call} — NOT RUN: this step needs a person's approval, and no person is watching this server "
                    f"(--approve {sup.policy}). Ask the user to do it themselves, or to run vigil mcp where they can "
                    "approve it.", page, True)
        reason = (rec.decision.reason if rec is not None and rec.decision is not None else None) or "no reason given"
        return f"{call} — REJECTED by the person; nothing ran. Their reason: {reason}", page, True
    if status == "skipped":
        return f"{call} — SKIPPED by the person; nothing ran. Go on with the task.", page, True
    if status == "stale":
        if out.feedback:
            page.append(out.feedback)
        return (f"{call} — NOT RUN (TARGET_CHANGED): its target changed before it could run; check the changes and "
                "propose the step again.", page, True)
    if status == "ended":  # the run's reason may quote the page
        if out.feedback:
            page.append(out.feedback)
        return f"{call} — NOT RUN: the run ended.", page, True
    if result is not None and result.message:
        page.append(f"result: {result.message}")
    return f"{call} — {status}", page, True


def effect_lines(out: StepOutcome) -> list[str]:
    """`effect: …`, what the step was judged to do as the page computed it before input (its words quote the page),
    for a step that had one; none for a step the person took over (it did not run as it was asked)."""
    rec = out.record
    if rec is None or rec.effect is None or out.status == "taken_over":
        return []
    return [f"effect: {rec.effect.line()}"]


def steps_result(sup: McpSupervisor, outcomes: list[StepOutcome], asked: list[Action]) -> CallToolResult:
    """The result of one action tool call (one step, or several for browser_fill_form)."""
    heads: list[str] = []
    page: list[str] = []
    error = False
    for i, out in enumerate(outcomes):
        head, lines, err = _step_lines(out, asked[i], sup)
        heads.append(head if len(outcomes) == 1 else f"{i + 1}. {head}")
        page += effect_lines(out) + lines
        error = error or err
    if len(outcomes) < len(asked):
        heads.append(f"Not tried: {len(asked) - len(outcomes)} more field(s) after the step that did not complete.")
    page = [_without_long_texts(line, asked) for line in page]
    snap = next((o.snapshot for o in reversed(outcomes) if o.snapshot is not None), None)
    if snap is not None:
        change = sup.view.change(snap, new_document=any(navigated(o.record) for o in outcomes))
        if change.whole:
            heads.append(f"Page: {change.summary}.")
            page.append(change.text)
        elif change.empty:
            heads.append("Page: no change in the semantic payload since your last view.")
        else:
            heads.append(f"Page changes since your last view ({change.summary}; + added, ~ changed, - gone):")
            page.append(change.text)
    return text_result(sup, "\n".join(heads), "\n".join(page) if page else None, error=error, cap_lines=True)
