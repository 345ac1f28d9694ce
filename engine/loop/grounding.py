"""Grounding: turn a step's target (a node ID or a {role, name, text, nth} query) into a node of
the current snapshot, and describe nodes and actions in plain words.

Matching rules for a TargetQuery:
- `role` must be equal when given;
- `name` is compared case- and whitespace-insensitively: exact matches first; substring matches
  only when there is no exact match (and never when `exact=True`);
- `text` must occur in the node's own text (same normalisation);
- among the matches, interactive nodes come first, then rendered ones (an off-screen but rendered
  node still counts: the action scrolls it into view), then document order; `nth` (0-based)
  picks from that list. For a text-only query, a non-interactive match prefers the deepest node.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.errors import UnknownNodeError
from engine.loop.redact import types_secret
from engine.models import Action, ExpectedOutcome, TargetQuery
from engine.names import norm, similarity

if TYPE_CHECKING:
    from engine.snapshot.dom_snapshot import DomSnapshot
    from engine.snapshot.vnode import VirtualNode

MAX_CANDIDATES = 5


def describe_node(node: VirtualNode) -> str:
    """`button "Create account" [42]` — role (or tag), name when there is one, ID."""
    name = node.name or ""
    if len(name) > 60:
        name = name[:59] + "…"
    return f'{node.role or node.tag}{f" {_quote(name)}" if name else ""} [{node.node_id}]'


def node_summary(node: VirtualNode) -> dict:
    """The facts a person needs about a target: what it is and where it is."""
    x, y, w, h = node.bounds
    return {"id": node.node_id, "role": node.role, "name": node.name, "tag": node.tag,
            "bounds": [round(x), round(y), round(w), round(h)], "frame": node.frame_id,
            "visible": node.visible, "occluded": node.occluded, "redacted": node.redacted}


def target_record(node: VirtualNode, snapshot: DomSnapshot) -> dict:
    """What a step record keeps about the node acted on: `node_summary` plus `query`, the
    {role, name, exact, nth} query that finds it again by what it is (replay re-grounds with it
    when IDs changed)."""
    if not (node.role or node.name):
        return node_summary(node)
    q = TargetQuery(role=node.role or None, name=node.name or "", exact=True)
    nth = next((i for i, n in enumerate(find_matches(snapshot, q)) if n is node), 0)
    return {**node_summary(node), "query": {**q.model_dump(exclude_none=True, exclude={"nth"}), "nth": nth}}


def resolve_target(snapshot: DomSnapshot, target: str | int | TargetQuery) -> VirtualNode:
    """The node `target` refers to in `snapshot`, or UnknownNodeError naming what was looked for
    and up to five closest candidates."""
    if isinstance(target, (str, int)):  # a node ID (a bare number in a script is one too)
        node_id = str(target).strip()
        node = snapshot.node_map.get(node_id)
        if node is not None:
            return node
        raise UnknownNodeError(f"No node with ID {node_id!r} on {snapshot.url}. Use an ID from the latest "
                               "snapshot, or describe the target by role and name.")
    matches = find_matches(snapshot, target)
    if len(matches) > target.nth:
        return matches[target.nth]
    if matches:
        raise UnknownNodeError(f"Only {len(matches)} node(s) match {target.describe()}, so there is no match "
                               f"#{target.nth + 1}: {', '.join(describe_node(n) for n in matches[:MAX_CANDIDATES])}.")
    near = closest_candidates(snapshot, target)
    hint = (" Closest: " + ", ".join(describe_node(n) for n in near) + ".") if near else ""
    raise UnknownNodeError(f"Nothing on {snapshot.url} matches {target.describe()}.{hint}")


def find_matches(snapshot: DomSnapshot, q: TargetQuery) -> list[VirtualNode]:
    """Every node matching `q`, best first (see the module docstring)."""
    want_name = norm(q.name) if q.name is not None else None
    want_text = norm(q.text) if q.text is not None else None
    exact: list[tuple] = []
    partial: list[tuple] = []
    for i, n in enumerate(snapshot.nodes()):
        if q.role is not None and n.role != q.role:
            continue
        if want_text is not None and want_text not in norm(n.text):
            continue
        bucket = exact
        if want_name is not None:
            nm = norm(n.name)
            if nm != want_name:
                if q.exact or not want_name or want_name not in nm:
                    continue
                bucket = partial
        depth = -n.depth if (q.name is None and q.role is None and not n.interactive) else 0
        bucket.append((not n.interactive, not n.rendered, depth, i, n))
    hits = exact or partial
    hits.sort(key=lambda t: t[:4])
    return [t[-1] for t in hits]


def closest_candidates(snapshot: DomSnapshot, q: TargetQuery, limit: int = MAX_CANDIDATES) -> list[VirtualNode]:
    """Nodes that look most like what `q` asked for (name similarity, same role, interactive)."""
    want = norm(q.name or q.text)
    scored = []
    for n in snapshot.nodes():
        if not (n.interactive or n.name):
            continue
        label = norm(n.name or n.text)
        score = similarity(want, label)
        if want and label and (want in label or label in want):
            score += 0.3
        if q.role and n.role == q.role:
            score += 0.35
        if n.interactive:
            score += 0.1
        if score >= 0.45:
            scored.append((-score, n.depth, n))
    scored.sort(key=lambda t: (t[0], t[1]))
    return [t[2] for t in scored[:limit]]


def node_changed(node: VirtualNode, fresh: DomSnapshot) -> str | None:
    """Why `node` no longer stands for the same element in the `fresh` snapshot (gone, or another
    role or name under its ID); None when it still does."""
    cur = fresh.node_map.get(node.node_id)
    if cur is None:
        return f"{describe_node(node)} is gone"
    if cur.role != node.role or norm(cur.name) != norm(node.name):
        return f"{describe_node(node)} is now {describe_node(cur)}"
    return None


def target_label(target: str | TargetQuery | None, node: VirtualNode | None = None) -> str:
    if node is not None:
        return describe_node(node)
    if isinstance(target, TargetQuery):
        return target.describe() if target.role else "the element " + target.describe()
    return f"[{target}]" if target else ""


def describe_action(action: Action, node: VirtualNode | None = None,
                    expect: ExpectedOutcome | None = None) -> str:
    """The action in plain words, e.g. `Click button "Create account" [42] — expect navigation`.
    Text typed into a password or one-time-code field is never shown."""
    t = target_label(action.target, node)
    n = action.name
    if n == "type":
        shown = "hidden characters" if types_secret(action, node) else _quote(_clip(action.text or ""))
        s = f"Type {shown} into {t}" + (" and submit" if action.submit else "")
    elif n == "press":
        s = f"Press {action.key}" + (f" in {t}" if action.target else "")
    elif n == "select":
        s = f"Select {_quote(action.option or '')} in {t}"
    elif n == "scroll":
        s = f"Scroll {action.direction}" + (f" in {t}" if action.target else "") + (
            f" by {action.amount} px" if action.amount else "")
    elif n == "navigate":
        s = f"Go to {action.url}"
    elif n == "back":
        s = "Go back"
    elif n == "wait":
        s = f"Wait {action.ms} ms"
    elif n == "finish":
        s = "Finish" + (f": {_quote(_clip(action.answer))}" if action.answer else "")
    elif n == "fail":
        s = "Give up" + (f": {_clip(action.reason, 200)}" if action.reason else "")
    else:
        s = f"{n.replace('_', ' ').capitalize()} {t}" + (" (even if covered)" if action.force else "")
    if expect is not None:
        s += f" — expect {expect.describe()}"
    return s


def _clip(s: str, limit: int = 80) -> str:
    return s if len(s) <= limit else s[:limit - 1] + "…"


def _quote(s: str) -> str:
    return '"' + s.replace('"', '\\"') + '"'
