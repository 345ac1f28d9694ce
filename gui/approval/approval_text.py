"""What the approval bar says about a request, as plain strings (no widgets): the target, the expected
outcome in a form the Edit panel reads back, whether a request needs a deliberate approval (a click or
Ctrl+Enter, never a bare Enter or Space), and, for a step asked again because its target changed
(TARGET_CHANGED), the old → new target and the reason it came back.

Page text (element names, dialog messages) is untrusted: it is only ever shown in plain-text labels, and
`one_line` takes out what could break a line or turn text around before it is shown in a line that must
read as one: bidi controls (U+202E and friends) show as markers (`⟦U+202E⟧`), so the person sees the page put
one there; line breaks and zero-width characters become spaces.
"""

from __future__ import annotations

import json
import unicodedata

from engine.errors import ErrorCode
from engine.models.actions import Action, ExpectedOutcome
from engine.models.loop import ApprovalRequest
from engine.models.text import bidi_safe
from engine.observe.sentinel import default_expectation

NAME_LIMIT = 60  # characters of an element's name in a one-line target


def one_line(text: str, limit: int = NAME_LIMIT) -> str:
    """`text` as one line of plain characters: bidi controls show as markers (`⟦U+202E⟧`), other control and
    format characters (line breaks, zero-width joiners) become spaces, runs of spaces one, and past `limit`
    characters it ends in "…"."""
    out = "".join(" " if unicodedata.category(c).startswith("C") else c for c in bidi_safe(text))
    out = " ".join(out.split())
    return out if len(out) <= limit else out[: limit - 1].rstrip() + "…"


def outcome_text(expect: ExpectedOutcome | None) -> str:
    """An expected outcome as text `parse_expected_outcome` reads back (simple form when it can)."""
    if expect is None:
        return ""
    data = expect.model_dump(by_alias=True, exclude_defaults=True)
    if set(data) <= {"type", "text"}:
        return f"{expect.type} {expect.text}".strip() if expect.text else expect.type
    return json.dumps(data, ensure_ascii=False)


# what the check each action gets when the planner names no outcome (engine.observe.sentinel's
# default_expectation) looks for, in plain words
DEFAULT_CHECK_WORDS = {
    "navigation": "the page goes to another address",
    "submitted": "the submission has an effect (the field clears, the page changes or goes to another address)",
    "any_change": "the page reacts (any change)",
    "value_changes": "the field's value changes",
    "state_changes": "the box's checked state changes",
    "no_change": "no error shows on the page",
}


def default_check_words(action: Action) -> str:
    """What is checked after `action` when the planner gave no expected outcome, in plain words."""
    expect = default_expectation(action.name, None, submit=action.submit)
    return DEFAULT_CHECK_WORDS.get(expect.type, expect.describe())


def repeats(thought: str, summary: str) -> bool:
    """The planner's reason says nothing the step's title does not: the same words (case, spacing and end
    punctuation aside), or a part of the title."""
    def norm(t: str) -> str:
        return " ".join(t.split()).rstrip(" .!").casefold()
    return norm(thought) in norm(summary)


def target_text(target: dict | None) -> str:
    """`button "Place order" · ID 12` (· not in view, · covered), the name on one line."""
    if not target:
        return ""
    what = one_line(str(target.get("role") or target.get("tag") or "element"), 30)
    name = one_line(str(target.get("name") or ""))
    s = f'{what} "{name}"' if name else what
    s += f" · ID {one_line(str(target.get('id')), 20)}"
    if target.get("visible") is False:
        s += " · not in view"
    if target.get("occluded"):
        s += " · covered"
    return s


def target_changed(req: ApprovalRequest) -> bool:
    """The step comes back because its target changed after it was approved (nothing ran)."""
    return bool(req.error) and ErrorCode.TARGET_CHANGED.value in (req.error or "")


def deliberate(req: ApprovalRequest) -> bool:
    """Approving `req` needs a click on Approve (or Ctrl+Enter): a page dialog, a step asked again after its
    target changed, a sensitive step, or one whose page text reads like orders to the agent."""
    return req.dialog is not None or target_changed(req) or bool(req.sensitive_reasons) or bool(req.warnings)


def change_reason(req: ApprovalRequest) -> str:
    """Why a TARGET_CHANGED step is asked again, from the loop's message: what changed about the target."""
    err = req.error or ""
    _, sep, rest = err.partition("nothing ran: ")
    if not sep:
        return err
    what, _, _ = rest.partition(". Approve again")
    return what.strip().rstrip(".")


def change_line(old: dict | None, new: dict | None) -> str:
    """The one line that says which element the step now acts on: `old → new`."""
    now = target_text(new) or "no element"
    if old is None:
        return f"Target changed → now: {now}"
    was = target_text(old)
    if was == now:
        return f"Target changed: {now} (same element, changed as said below)"
    return f"Target changed: {was} → {now}"
