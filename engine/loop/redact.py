"""Keeping typed secrets out of everything a run publishes or records.

The loop acts with the real text, but what leaves it — events, chat messages, step records,
plan descriptions, approval requests — carries `••••••••` instead of text typed into a password
or one-time-code field. When the field is not known yet (a scripted `{name: "Password"}` target
before grounding), its name decides."""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

from engine.models import Action, ProposedStep, TargetQuery
from engine.secret_values import MIN_SECRET_LEN, secret_forms  # noqa: F401 - re-exported for callers

if TYPE_CHECKING:
    from engine.snapshot.vnode import VirtualNode

MASK = "••••••••"
_SECRET_NAME = re.compile(r"pass(word|code|phrase)|one.?time|"
                          r"\b(otp|2fa|mfa|totp|pin|cvv2?|cvc|csc|secret|token|api ?key)\b|"
                          r"security code|verification code|card ?number", re.IGNORECASE)


def is_secret_field(node: VirtualNode) -> bool:
    attrs = node.attrs or {}
    return bool(node.redacted) or str(attrs.get("type", "")).lower() == "password" \
        or "one-time-code" in str(attrs.get("autocomplete", "")).lower()


def types_secret(action: Action, node: VirtualNode | None = None) -> bool:
    """Does this action type into a password / one-time-code field (known, or by its name)?"""
    if action.name != "type" or not action.text:
        return False
    if node is not None:
        return is_secret_field(node) or bool(_SECRET_NAME.search(node.name or ""))
    t = action.target
    return isinstance(t, TargetQuery) and bool(_SECRET_NAME.search(f"{t.name or ''} {t.text or ''}"))


def mask_action(action: Action, node: VirtualNode | None = None) -> Action:
    return action.model_copy(update={"text": MASK}) if types_secret(action, node) else action


def mask_proposal(p: ProposedStep, node: VirtualNode | None = None) -> ProposedStep:
    if not types_secret(p.action, node):
        return p
    secret = p.action.text or ""
    scrub = (lambda s: s.replace(secret, MASK) if s and secret else s)  # noqa: E731
    return p.model_copy(update={"action": mask_action(p.action, node), "thought": scrub(p.thought),
                                "description": scrub(p.description),
                                "plan": [scrub(x) for x in p.plan] if p.plan else p.plan})


@functools.lru_cache(maxsize=32)
def _prefix_rx(secrets: tuple[str, ...]) -> tuple[re.Pattern[str], re.Pattern[bytes]] | None:
    """Prefixes (4+ characters) of the secrets that end where a word ends: what a page shows when it
    echoes a field key by key ("Hunt", "Hunte", "Hunter2"), but not an ordinary word that merely
    starts the same way ("Summ" of "Summer24" in "Summary")."""
    parts = sorted({re.escape(s[:k]) for s in secrets for k in range(MIN_SECRET_LEN, len(s))}, key=len, reverse=True)
    if not parts:
        return None
    body = "(?:" + "|".join(parts) + r")(?![A-Za-z0-9])"
    return re.compile(body), re.compile(body.encode("utf-8"))


def scrub_known(value, secrets: set[str] | frozenset[str]):
    """`value` (str, bytes or a pydantic model) with every form of every known secret — and every
    echoed prefix of one — replaced by the mask; returned unchanged when there are no secrets."""
    if not secrets:
        return value
    known = tuple(sorted(s for s in secrets if len(s) >= MIN_SECRET_LEN))
    forms = [f for s in known for f in secret_forms(s)]
    if not forms:
        return value
    rx = _prefix_rx(known)
    if isinstance(value, bytes):
        out = value
        for f in forms:
            out = out.replace(f.encode("utf-8"), MASK.encode("utf-8"))
        return rx[1].sub(MASK.encode("utf-8"), out) if rx else out
    if isinstance(value, str):
        for f in forms:
            value = value.replace(f, MASK)
        return rx[0].sub(MASK, value) if rx else value
    if hasattr(value, "model_dump_json"):
        text = value.model_dump_json()
        clean = scrub_known(text, secrets)
        return value if clean == text else type(value).model_validate_json(clean)
    return value
