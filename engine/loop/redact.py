"""Keeping typed secrets out of everything a run publishes or records.

The loop acts with the real text, but what leaves it — events, chat messages, step records,
plan descriptions, approval requests — carries `••••••••` instead of text typed into a password
or one-time-code field. When the field is not known yet (a scripted `{name: "Password"}` target
before grounding), its name decides. The mask and the scrubbing itself are the ground floor's
(`engine.secret_values`)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from engine.models import Action, ProposedStep, TargetQuery
from engine.secret_values import MASK, scrub

if TYPE_CHECKING:
    from engine.snapshot.vnode import VirtualNode

_SECRET_NAME = re.compile(r"pass(word|code|phrase)|one.?time|"
                          r"\b(otp|2fa|mfa|totp|pin|cvv2?|cvc|csc|secret|token|api ?key)\b|"
                          r"security code|verification code|card ?number", re.IGNORECASE)


# a card's number and security code are secrets as a password is: never shown, never kept
_SECRET_AUTOCOMPLETE = ("one-time-code", "cc-number", "cc-csc")


def is_secret_field(node: VirtualNode) -> bool:
    attrs = node.attrs or {}
    return bool(node.redacted) or str(attrs.get("type", "")).lower() == "password" \
        or any(k in str(attrs.get("autocomplete", "")).lower() for k in _SECRET_AUTOCOMPLETE)


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
    typed = (p.action.text or "",)
    return p.model_copy(update={"action": mask_action(p.action, node), "thought": scrub(p.thought, typed, exact=True),
                                "description": scrub(p.description, typed, exact=True),
                                "plan": scrub(p.plan, typed, exact=True) if p.plan else p.plan})
