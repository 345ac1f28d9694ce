"""The `tree` serialization: the flattened hierarchy the model reads (seed 003 §7.3).

Structural wrappers are hoisted (their children move up), semantic containers are kept,
atomic controls do not list their insides, a text block (a paragraph, a code block) carries its
whole inline content in reading order as its text and lists only the controls inside it (its
links), long runs of look-alike siblings are summarized,
and past a node budget a truncation marker ends the output. Everything is iterative:
pages nest thousands of levels deep.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from engine.models import Serialization
from engine.snapshot.serialize.hidden import hidden_reason
from engine.snapshot.serialize.limits import TREE_MAX_NODES, walk_cut
from engine.snapshot.serialize.tokens import clean_text, cut, estimate_tokens
from engine.snapshot.vnode import VirtualNode

if TYPE_CHECKING:
    from engine.snapshot.view import SnapshotView

VERSION = "vigil.tree.v1"
CONTAINER_ROLES = frozenset({
    "form", "table", "dialog", "alertdialog", "navigation", "main", "list", "region", "banner", "contentinfo",
    "complementary", "search", "tablist", "tabpanel", "menu", "menubar", "listbox", "grid", "tree", "treegrid",
    "toolbar", "group", "radiogroup", "article", "iframe", "row", "rowgroup", "feed", "figure"})
CONTENT_ROLES = frozenset({"heading", "img", "listitem", "paragraph", "cell", "columnheader", "rowheader",
                           "status", "alert", "log", "caption", "term", "definition", "option", "progressbar",
                           "meter", "separator", "blockquote", "code", "tooltip", "timer", "note"})
ATOMIC = frozenset({"button", "link", "menuitem", "tab", "option", "treeitem", "checkbox", "radio", "switch",
                    "slider", "spinbutton", "textbox", "searchbox", "combobox"})
STATE_KEYS = ("disabled", "checked", "expanded", "selected", "pressed", "focused", "required", "readonly",
              "invalid", "level", "open", "modal")
MAX_DEPTH = 60  # deeper output levels are hoisted (keeps nesting readable and the encoder safe)


def _keep(n: VirtualNode) -> bool:
    if n.interactive:
        return True
    if n.folded:
        return False  # its words are in the text of the block it sits in
    if n.tier == "non-semantic":
        return True
    if n.role in CONTAINER_ROLES or n.role in CONTENT_ROLES:
        return True
    return bool(n.text)


def _entry(n: VirtualNode, ordinal: int) -> dict[str, Any]:
    d: dict[str, Any] = {"id": n.node_id}
    if n.role and n.role != "generic":
        d["role"] = n.role
    if n.name:
        d["name"] = clean_text(cut(n.name, 100))
    d["tag"] = n.tag
    if n.text and n.text != n.name and not (n.name and n.text in n.name):
        # a text block's text was already bounded by the walker, with a marker saying how much is left
        d["text"] = clean_text(n.text if n.text_block else cut(n.text, 200))
    if n.value:
        d["value"] = clean_text(cut(n.value, 100))
    elif n.redacted:
        d["value"] = "[redacted]"
    for k in STATE_KEYS:
        v = n.states.get(k)
        if v is not None and v is not False or (k == "expanded" and v is False):
            d[k] = v
    a = n.attrs
    if a:
        if "href" in a and n.role == "link":
            d["href"] = cut(a["href"], 80)
        if "placeholder" in a and a["placeholder"] != n.name:
            d["placeholder"] = cut(a["placeholder"], 60)
        for t in ("data-testid", "data-test", "data-cy"):
            if t in a:
                d[t] = cut(a[t], 60)
    why = hidden_reason(n)
    if why:
        d["hidden"] = why  # rendered, but no person can see it
    if n.occluded:
        d["occluded"] = True
    if n.scroll:
        d["scroll"] = {"depth": n.scroll["depth"], "more": n.scroll["has_more"]}
    if ordinal:
        d["frame"] = ordinal
    return d


def _signature(d: dict) -> tuple:
    kids = d.get("children")
    return (d.get("role"), d["tag"], len(kids) if kids else 0)


def _summarize(children: list[dict], run_max: int, keep: int) -> list[dict]:
    """Replace long runs of look-alike siblings with the first `keep` plus a summary node."""
    if len(children) <= run_max:
        return children
    out: list[dict] = []
    i = 0
    while i < len(children):
        sig = _signature(children[i])
        j = i + 1
        while j < len(children) and _signature(children[j]) == sig:
            j += 1
        run = children[i:j]
        if len(run) > run_max:
            out.extend(run[:keep])
            rest = run[keep:]
            label = sig[0] or sig[1]
            out.append({"role": "summary", "tag": "summary",
                        "text": (f"{len(rest)} more {label} items like the above "
                                 f"(ids {rest[0]['id']} … {rest[-1]['id']})"),
                        "count": len(rest)})
        else:
            out.extend(run)
        i = j
    return out


def serialize_tree(snap: SnapshotView, *, max_nodes: int = TREE_MAX_NODES, run_max: int = 30, keep: int = 10,
                   include_hidden: bool = False) -> Serialization:
    root = snap.root
    ordinals = {f.frame_id: f.ordinal for f in snap.frames}
    ctx = snap.context
    body: dict[str, Any] = {"id": root.node_id if root else "", "role": "document", "tag": "body", "children": []}
    total = 0
    if root is not None:
        # Stack of (node, output parent dict, output depth, inside an atomic control)
        stack: list[tuple[VirtualNode, dict, int, bool]] = [(c, body, 1, False) for c in reversed(root.children)]
        while stack:
            n, parent, depth, atomic = stack.pop()
            if not n.rendered and not include_hidden:
                continue
            kept_here = _keep(n) and not (atomic and not n.interactive)
            if n.tag == "body" or n.tag == "html":
                kept_here = False
            attach, d_depth = parent, depth
            if kept_here:
                d = _entry(n, ordinals.get(n.frame_id, 0))
                parent.setdefault("children", []).append(d)
                total += 1
                if depth < MAX_DEPTH:
                    attach, d_depth = d, depth + 1
            inner_atomic = atomic or (n.interactive and n.role in ATOMIC)
            if n.children:
                for c in reversed(n.children):
                    stack.append((c, attach, d_depth, inner_atomic))
    # Over the node budget: first summarize long runs of look-alike siblings, then cut what is
    # still over. Under the budget the tree is sent whole. Both steps are iterative.
    summarized = 0
    if total > max_nodes:
        pending = [body]
        while pending:
            d = pending.pop()
            kids = d.get("children")
            if kids:
                d["children"] = kids = _summarize(kids, run_max, keep)
                pending.extend(kids)
        summarized = total - _count(body)
    kept = 0
    cut_count = 0
    order: list[dict] = [body]
    while order:
        d = order.pop()
        if d is not body:
            kept += 1
            if kept > max_nodes:
                cut_count += 1 + _count(d)
                d["_cut"] = True
                continue
        kids = d.get("children")
        if kids:
            order.extend(reversed(kids))
    truncated = total > max_nodes
    if cut_count:
        _drop_cut(body)
    if truncated:
        body.setdefault("children", []).append(
            {"role": "truncated", "tag": "summary",
             "text": (f"Truncated: {total} nodes exceed the budget of {max_nodes}; "
                      f"{summarized} look-alike siblings summarized, {cut_count} nodes cut. "
                      "Scroll, filter, or ask for a larger budget.")})
    kept = min(kept, max_nodes)
    cut_note = walk_cut(snap)
    if cut_note:  # the walk itself stopped: said in the text, whatever the budget above did
        body.setdefault("children", []).append({"role": "truncated", "tag": "summary", "text": cut_note})
    payload = {"page": {
        "context": {"url": ctx.url, "title": clean_text(ctx.title), "domain": ctx.domain,
                    "viewport": {"width": ctx.viewport.width, "height": ctx.viewport.height},
                    "scroll_position": ctx.scroll_position},
        "body": body,
        "meta": {"version": VERSION, "total_nodes": len(snap.nodes()), "kept_nodes": kept,
                 "truncated": truncated or bool(cut_note), "node_budget": max_nodes,
                 **({"walk_truncated": cut_note} if cut_note else {})},
    }}
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return Serialization(format="tree", text=text, tokens=estimate_tokens(text), node_count=kept,
                         truncated=truncated or bool(cut_note), data=payload)


def _count(d: dict) -> int:
    """Nodes below `d` (not counting `d`)."""
    n = 0
    stack = list(d.get("children") or ())
    while stack:
        c = stack.pop()
        n += 1
        stack.extend(c.get("children") or ())
    return n


def _drop_cut(body: dict) -> None:
    stack = [body]
    while stack:
        d = stack.pop()
        kids = d.get("children")
        if kids:
            kept = [c for c in kids if not c.get("_cut")]
            if len(kept) != len(kids):
                d["children"] = kept
            if not kept:
                d.pop("children", None)
            stack.extend(kept)
