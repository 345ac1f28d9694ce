"""The pre-dispatch guard: an approval covers exactly the element the person saw.

Between the moment a person (or the policy) approves a step and the moment its input is dispatched, the
page may change: a button swapped for another under the same spot, a banner pushing it down, a frame or
the whole document replaced. `target_drift` compares the target as it was shown with the target in the
snapshot taken right before acting and names every difference: gone, another role or name under its ID,
another frame, another document (URL without its fragment), another tab, or a box that moved or changed
size by more than `BOX_TOLERANCE_PX` — in the page and on the screen both, so a scroll alone is no move
(for an element that scrolls with the page, nor for a fixed or sticky one that stays put); not compared
when the viewport was resized, which re-lays the page out by the person's own doing. When the target
is still there and a person approved the step, `ask_again` puts it back to them as it is now.
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass, field

from engine.errors import ErrorCode
from engine.loop.effects import changed, effect_reasons
from engine.loop.grounding import describe_action, describe_node, node_summary
from engine.loop.journal import RunJournal
from engine.loop.judging import shown_effect
from engine.loop.policy import needs_approval, sensitive_reasons
from engine.loop.redact import mask_proposal
from engine.loop.steps import Judged
from engine.models import ProposedStep, StepEffect
from engine.models.loop import Policy
from engine.names import norm
from engine.snapshot.dom_snapshot import DomSnapshot
from engine.snapshot.vnode import VirtualNode

BOX_TOLERANCE_PX = 4.0  # how far the box may move or grow (CSS px) and still be the element the person saw


@dataclass
class Drift:
    """What changed about an approved target before it could be acted on."""

    node: VirtualNode | None                 # the element under the same ID now (None: gone)
    changes: list[str] = field(default_factory=list)
    identity: bool = False                   # more than the box: gone, role, name, frame, document or tab

    def __bool__(self) -> bool:
        return bool(self.changes)

    def describe(self) -> str:
        return "; ".join(self.changes)


def _document(url: str) -> str:
    return urllib.parse.urldefrag(url or "")[0]


def _page_box(node: VirtualNode, snap: DomSnapshot) -> tuple[float, float, float, float]:
    x, y, w, h = node.bounds
    return x + snap.context.scroll_x, y + snap.context.scroll_y, w, h


def target_drift(node: VirtualNode, seen: DomSnapshot, fresh: DomSnapshot, *, same_tab: bool = True,
                 tolerance: float = BOX_TOLERANCE_PX) -> Drift:
    """How `node` (in `seen`, the snapshot the step was approved on) differs in `fresh`; empty when it is
    still the same element in the same place."""
    cur = fresh.node_map.get(node.node_id)
    d = Drift(cur)
    if not same_tab:
        d.changes.append("the agent's tab is not the one the step was approved in")
    if _document(seen.url) != _document(fresh.url):
        d.changes.append(f"the page is now {fresh.url} (was {seen.url})")
    if cur is None:
        d.changes.append(f"{describe_node(node)} is gone")
        d.identity = True
        return d
    if cur.role != node.role or norm(cur.name) != norm(node.name):
        d.changes.append(f"{describe_node(node)} is now {describe_node(cur)}")
    if cur.frame_id != node.frame_id:
        d.changes.append(f"it is now in frame {cur.frame_id or 'main'} (was {node.frame_id or 'main'})")
    d.identity = bool(d.changes)
    if seen.context.viewport == fresh.context.viewport:
        (x0, y0, w0, h0), (x1, y1, w1, h1) = _page_box(node, seen), _page_box(cur, fresh)
        (vx0, vy0, _, _), (vx1, vy1, _, _) = node.bounds, cur.bounds
        in_page = abs(x1 - x0) > tolerance or abs(y1 - y0) > tolerance
        on_screen = abs(vx1 - vx0) > tolerance or abs(vy1 - vy0) > tolerance
        if in_page and on_screen:
            d.changes.append(f"it moved by {x1 - x0:+.0f}, {y1 - y0:+.0f} px")
        if abs(w1 - w0) > tolerance or abs(h1 - h0) > tolerance:
            d.changes.append(f"its size changed from {w0:.0f}×{h0:.0f} to {w1:.0f}×{h1:.0f} px")
    return d


def ask_again(j: RunJournal, step: Judged, p: ProposedStep, node: VirtualNode, drift: Drift, fresh: DomSnapshot,
              start_domain: str) -> None:
    """The approved target changed but is still there (`node`, in `fresh`): an approval covers what the person
    saw, so the step's question is put to them again with the target as it is now and the difference."""
    step.node, step.seen = node, fresh
    step.reasons = sensitive_reasons(p.action, node, fresh, start_domain, p) + [
        r for r in step.request.sensitive_reasons if r.startswith("the page shows text")]
    shown = step.draft.proposal = mask_proposal(p, node)
    step.request = step.request.model_copy(update={
        "proposal": shown, "target": node_summary(node), "sensitive_reasons": step.reasons,
        "summary": describe_action(p.action, node, p.expected_outcome),
        "error": f"The target changed before the step ran ({ErrorCode.TARGET_CHANGED}), so nothing "
                 f"ran: {drift.describe()}. Approve again to run it on the element as it is now."})
    j.message("system", f"Not run: the target changed after approval ({drift.describe()}); asking again.")


MAX_REASKS = 3  # a page whose effect keeps changing under each approval ends the step (nothing runs)


def effect_moved(j: RunJournal, step: Judged, p: ProposedStep, *, node: VirtualNode | None, now: StepEffect | None,
                 fresh: DomSnapshot, start_domain: str, policy: Policy) -> bool | str:
    """What the step will do, computed again right before input (`now`, on `fresh`), against what was judged:
    False when it is the same (or harmless under the policy: it runs, recorded as it is now); True when it is
    put to the gate again (asked: the question says what changed); a reason when it changed too often to ask
    again (nothing runs)."""
    now = shown_effect(now, p.action, node, start_domain)
    why = changed(step.draft.effect, now)
    if why is None:
        return False
    reasons = sensitive_reasons(p.action, node, fresh, start_domain, p)
    reasons += effect_reasons(now, reasons, start_domain)
    reasons += [r for r in step.reasons if r.startswith("the page shows text")]
    step.draft.effect, step.node, step.seen = now, node, fresh
    if not step.ask and not needs_approval(policy, reasons):
        step.reasons = reasons  # still nothing a person must see: it runs as it is now
        return False
    step.reasked += 1
    if step.reasked > MAX_REASKS:
        return f"what the step does kept changing before it ran ({why})"
    step.ask, step.reasons, step.draft.auto_approved = True, reasons, False
    step.request = step.request.model_copy(update={
        "effect": now, "sensitive_reasons": reasons,
        "error": f"What the step does changed before it ran ({ErrorCode.TARGET_CHANGED}), so nothing ran: {why}. "
                 "Approve again to run it as it is now."})
    j.message("system", f"Not run: what the step does changed after approval ({why}); asking again.")
    return True
