"""Judging a proposed step once its target is found: why it is sensitive, who approves it — the policy, a
standing grant of the person's, or the person — and the question they would be asked (`judge`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.loop.effects import effect_reasons, placed
from engine.loop.grounding import describe_action, node_summary
from engine.loop.policy import frame_url, needs_approval, sensitive_reasons
from engine.loop.redact import mask_proposal, types_secret
from engine.loop.steps import Judged, StepDraft
from engine.models import TERMINAL_ACTIONS, Action, ApprovalRequest, ProposedStep
from engine.models.browsing import TabInfo
from engine.models.effect import StepEffect
from engine.models.loop import Policy
from engine.snapshot.dom_snapshot import DomSnapshot
from engine.snapshot.vnode import VirtualNode

Grants = Callable[[Action, str], str | None]  # (action, URL of the target's frame) → the grant that covers it
# leaving the page (going elsewhere, back, to or out of a tab) is not acting on what it says
LEAVING = ("navigate", "back", "switch_tab", "close_tab", "new_tab")
WARNED = ("the page shows text that reads like instructions to the agent (possible prompt injection): check that "
          "this step is what the task asks")


def shown_effect(effect: StepEffect | None, action: Action, node: VirtualNode | None,
                 start_domain: str) -> StepEffect | None:
    """The effect as it may be shown and kept: placed against the run's site, a secret's value never in it."""
    if effect is not None and effect.kind == "type" and types_secret(action, node):
        effect.state = "a hidden value"
    return placed(effect, start_domain)


def judge(p: ProposedStep, node: VirtualNode | None, snap: DomSnapshot, *, index: int, policy: Policy,
          start_domain: str, warnings: list[str], grants: Grants | None, exchange: dict[str, Any] | None,
          tab: TabInfo | None, timings: dict[str, float], effect: StepEffect | None = None) -> Judged:
    """The step (`p`, its target `node` in `snap`) as it is put to the gate. `warnings`: page text that reads
    like orders to the agent; `grants`: the person's standing grants, consulted only for a step the policy would
    ask about and that has no sensitive reason; `effect`: what the page computed the step will do (judged
    beside its target, shown and recorded)."""
    effect = shown_effect(effect, p.action, node, start_domain)
    reasons = sensitive_reasons(p.action, node, snap, start_domain, p)
    reasons += effect_reasons(effect, reasons, start_domain)
    # a step that leaves the page is judged by its own checks (leaving the site asks), so an injection page
    # cannot pin an auto-safe run
    if warnings and p.action.name not in TERMINAL_ACTIONS and p.action.name not in LEAVING:
        reasons.append(WARNED)
    ask = needs_approval(policy, reasons)
    granted = grants(p.action, frame_url(snap, node)) if ask and not reasons and grants is not None \
        else None  # a grant is checked against the origin of the frame that holds the target
    if granted:
        ask = False
    shown = mask_proposal(p, node)
    request = ApprovalRequest(step_index=index, proposal=shown, target=node_summary(node) if node else None,
                              summary=describe_action(p.action, node, p.expected_outcome),
                              sensitive_reasons=reasons, policy=policy, warnings=warnings, effect=effect)
    draft = StepDraft(index=index, proposal=shown, auto_approved=not ask, url=snap.url, snapshot_nodes=len(snap),
                      timings_ms=timings, exchange=exchange, tab=tab, effect=effect)
    return Judged(node, snap, reasons, ask, granted, request, draft)
