"""Printed output held to a budget: every output stops at a size budget with a marker saying what
was cut and how to get more.

`within_budget` is a serialization held to a byte budget (and, for `tree` and `skeleton`, a node
budget); `json_document` is what `vigil snapshot --json` prints: the payload, the stats and the
flat list of nodes, held to one byte budget with a `truncated` list naming every cut. Both ask the
snapshot for its (cached) serializations, so they sit above it; the serializers' own words about a
cut are in `engine.snapshot.serialize.limits`.
"""

from __future__ import annotations

import html
import json
from typing import Any

from engine.models import Serialization
from engine.snapshot.serialize.hidden import hidden_reason
from engine.snapshot.serialize.limits import DEFAULT_FULL_MAX_BYTES, TREE_MAX_NODES, describe_node, walk_cut
from engine.snapshot.serialize.tokens import estimate_tokens
from engine.snapshot.view import SnapshotView

DEFAULT_MAX_BYTES = DEFAULT_FULL_MAX_BYTES  # any printed format: the budget `full` holds to on its own
DEFAULT_JSON_MAX_BYTES = 10_000_000  # `--json` of a 200k-element page would be ~77 MB; ~25k nodes fit
MORE_BYTES = "Raise the budget with --max-bytes N (0: no limit)"
MORE_NODES = "To see more, raise the node budget with --max-nodes N (Python: serialize(fmt, max_nodes=N))"


def size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def within_budget(snap: SnapshotView, fmt: str, *, max_bytes: int | None = DEFAULT_MAX_BYTES,
                  max_nodes: int | None = None, **options: Any) -> Serialization:
    """`snap.serialize(fmt, …)` held to `max_bytes` of UTF-8 (None: no limit) and, for `tree` and
    `skeleton`, to `max_nodes` written nodes (None: their defaults). What a budget cut is said in
    the output itself: what was left out, how many nodes, and how to get more."""
    opts = dict(options)
    if max_nodes is not None and fmt in ("tree", "skeleton"):
        opts["max_nodes"] = max_nodes
    if fmt == "full":
        return _full_within(snap, max_bytes, opts)
    s = snap.serialize(fmt, **opts)
    if fmt == "skeleton" and s.text.find(_SKELETON_MORE) >= 0:  # name the flag too
        s = s.model_copy(update={"text": s.text.replace(_SKELETON_MORE, _SKELETON_MORE[:-4] + " (--max-nodes N) -->")})
    if fmt == "tree":
        return _tree_within(snap, s, max_bytes, opts)
    if max_bytes is None or size(s.text) <= max_bytes:
        return s
    if fmt == "semantic":
        return _semantic_cut(s, max_bytes)
    return _lines_cut(s, max_bytes)


_SKELETON_MORE = "scroll or raise max_nodes -->"


def _full_within(snap: SnapshotView, max_bytes: int | None, opts: dict) -> Serialization:
    """`full` stops at its budget before a node; the closing tags written before that stop can take
    it past the budget, so it is asked again for less until the whole text fits."""
    s = snap.serialize("full", **opts, max_bytes=max_bytes)
    inner, tries = max_bytes, 0
    while max_bytes is not None and inner is not None and size(s.text) > max_bytes and inner > 1 and tries < 4:
        inner = max(1, int(inner * max_bytes / size(s.text)) - 2000)
        s = snap.serialize("full", **opts, max_bytes=inner)
        tries += 1
    if inner != max_bytes:  # the marker names the budget the person set
        s = s.model_copy(update={"text": s.text.replace(f"size budget of {inner:,} bytes",
                                                        f"size budget of {max_bytes:,} bytes", 1)})
    return s


def _semantic_cut(s: Serialization, max_bytes: int) -> Serialization:
    payload = dict(s.data)
    items = list(payload.get("interactive_tree") or ())
    payload["interactive_tree"] = []
    base = size(json.dumps(payload, ensure_ascii=False, separators=(",", ":"))) + 400  # + the marker
    room, k = max_bytes - base, 0
    for e in items:
        room -= size(json.dumps(e, ensure_ascii=False, separators=(",", ":"))) + 1
        if room < 0:
            break
        k += 1
    first = items[k] if k < len(items) else None
    payload["interactive_tree"] = items[:k]
    payload["cut"] = (f"CUT: this payload stops at its size budget of {max_bytes:,} bytes: {k:,} of {len(items):,} "
                      f"listed elements are written; the {len(items) - k:,} from element "
                      f"{first['i'] if first else '?'} on are not. {MORE_BYTES}, or leave out --full-page.")
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return s.model_copy(update={"text": text, "tokens": estimate_tokens(text), "node_count": k, "truncated": True,
                                "data": payload})


def _lines_cut(s: Serialization, max_bytes: int) -> Serialization:
    """A line-per-node output (skeleton) cut at the last whole line that fits, with a marker."""
    lines = s.text.split("\n")
    room, k = max_bytes - 300, 0
    for line in lines:
        room -= size(line) + 1
        if room < 0:
            break
        k += 1
    text = "\n".join(lines[:k] + [f"<!-- CUT: this output stops at its size budget of {max_bytes:,} bytes, after "
                                  f"{k:,} of {len(lines):,} lines; the rest is not written. {MORE_BYTES}. -->"])
    return s.model_copy(update={"text": text, "tokens": estimate_tokens(text), "node_count": min(k, s.node_count),
                                "truncated": True})


def _tree_within(snap: SnapshotView, s: Serialization, max_bytes: int | None, opts: dict) -> Serialization:
    """The tree at a node budget small enough for `max_bytes`, its cuts said with how to get more."""
    asked = int(opts.get("max_nodes") or TREE_MAX_NODES)
    budget, tries = asked, 0
    while max_bytes is not None and size(s.text) > max_bytes and budget > 1 and tries < 8:
        budget = max(1, min(budget - 1, int(budget * max_bytes / size(s.text) * 0.9)))
        s = snap.serialize("tree", **{**opts, "max_nodes": budget})
        tries += 1
    page = s.data["page"]
    meta = dict(page["meta"])
    kids = []
    for c in page["body"].get("children") or ():
        if c.get("role") == "truncated" and str(c.get("text", "")).startswith("Truncated:") and budget == asked:
            c = {**c, "text": f"{c['text']} {MORE_NODES}."}
        kids.append(c)
    if budget < asked:
        note = (f"CUT: this output stops at its size budget of {max_bytes:,} bytes: "
                f"{meta['kept_nodes']:,} nodes are written "
                f"(the page has {meta['total_nodes']:,}) (node budget lowered from {asked:,} to {budget:,}). "
                f"{MORE_BYTES}.")
        kids.append({"role": "truncated", "tag": "summary", "text": note})
        meta.update(truncated=True, size_budget=max_bytes, size_cut=note)
    if not s.truncated and budget == asked:
        return s
    payload = {"page": {**page, "body": {**page["body"], "children": kids}, "meta": meta}}
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return s.model_copy(update={"text": text, "tokens": estimate_tokens(text), "truncated": True, "data": payload})


def json_document(snap: SnapshotView, fmt: str, *, max_bytes: int | None = DEFAULT_JSON_MAX_BYTES,
                  max_nodes: int | None = None, **options: Any) -> str:
    """One line of JSON: format, `truncated` (every cut, in words; only when something was cut),
    context, payload (held to a quarter of the budget), tokens, stats, frames and the flat `nodes`
    list (each node as `VirtualNode.to_dict`, plus `hidden` with why when no person can see it),
    which stops where the budget runs out."""
    s = within_budget(snap, fmt, max_bytes=None if max_bytes is None else max(1, max_bytes // 4),
                      max_nodes=max_nodes, **options)
    notes: list[str] = []
    walked = walk_cut(snap)
    if walked:
        notes.append(walked)
    if s.truncated:
        marker = _marker(s)
        if marker and marker != walked:
            notes.append(marker)
    head: dict[str, Any] = {"context": snap.context.model_dump(),
                            "payload": s.data if s.data is not None else s.text, "tokens": s.tokens,
                            "stats": snap.stats.model_dump(), "frames": [f.model_dump() for f in snap.frames]}
    head_text = json.dumps(head, ensure_ascii=False)
    room = None if max_bytes is None else max_bytes - size(head_text) - 1000
    parts: list[str] = []
    nodes = snap.nodes()
    for n in nodes:
        d = n.to_dict()
        why = hidden_reason(n)
        if why:
            d["hidden"] = why
        piece = json.dumps(d, ensure_ascii=False)
        if room is not None:
            room -= size(piece) + 2
            if room < 0:
                break
        parts.append(piece)
    if len(parts) < len(nodes):
        nxt = nodes[len(parts)]
        notes.append(f"CUT: the nodes list stops at the size budget of {max_bytes:,} bytes: {len(parts):,} of "
                     f"{len(nodes):,} nodes are listed; the {len(nodes) - len(parts):,} from node "
                     f"{describe_node(nxt)} on are not. {MORE_BYTES}.")
    trunc = json.dumps({"truncated": notes}, ensure_ascii=False)[1:-1] + "," if notes else ""
    return '{"format":' + json.dumps(fmt) + "," + trunc + head_text[1:-1] + ',"nodes":[' + ",".join(parts) + "]}"


def _marker(s: Serialization) -> str | None:
    """The sentence a cut output carries about its own cut (not the walk's)."""
    data = s.data or {}
    if s.format == "semantic":
        return data.get("cut")
    if s.format == "tree":
        page = data.get("page", {})
        texts = [c.get("text", "") for c in page.get("body", {}).get("children") or () if c.get("role") == "truncated"]
        return " ".join(t for t in texts if not t.startswith("TRUNCATED")) or None
    for line in reversed(s.text.rsplit("<!--", 3)[1:]):
        if "CUT:" in line or "truncated:" in line:
            return html.unescape(line.strip().removesuffix("-->").strip())
    return None
