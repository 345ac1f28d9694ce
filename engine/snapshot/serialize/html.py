"""HTML serializations: `skeleton` (interactive elements only) and `full` (the annotated tree).

Both are generated from the VirtualNode tree, so they carry Vigil's node IDs, reach into
frames and shadow roots, and inherit its redaction: a password or one-time-code value never
exists in the tree, so it cannot leak here. Text and attributes are HTML-escaped.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from engine.models import Serialization
from engine.snapshot.serialize.hidden import F_HIDDEN, hidden_reason
from engine.snapshot.serialize.limits import DEFAULT_FULL_MAX_BYTES, SKELETON_MAX_NODES, describe_node, walk_cut
from engine.snapshot.serialize.tokens import clean_text, cut, estimate_tokens
from engine.snapshot.vnode import VirtualNode

if TYPE_CHECKING:
    from engine.snapshot.view import SnapshotView

SKELETON_ATTRS = ("name", "type", "href", "placeholder", "aria-label", "data-testid", "title")
FULL_ATTRS = ("id", "name", "type", "href", "placeholder", "aria-label", "title", "alt", "role",
              "data-testid", "data-test", "data-cy", "for", "action", "method", "target")
VOID = frozenset({"input", "img", "br", "hr", "area", "col", "embed", "source", "track", "wbr", "meta", "link"})


def _a(name: str, value: object) -> str:
    return f' {name}="{escape(clean_text(str(value)), quote=True)}"'


def _skeleton_tag(n: VirtualNode) -> str:
    tag = n.tag
    parts = [f"<{tag}", _a("id", n.node_id)]
    a = n.attrs
    if n.role and n.role not in ("generic", "clickable") and n.role != {"a": "link", "button": "button"}.get(n.tag):
        if n.tag not in ("input", "select", "textarea"):
            parts.append(_a("role", n.role))
    for k in SKELETON_ATTRS:
        if k in a:
            parts.append(_a(k, cut(a[k], 80)))
    if n.value and not n.redacted and n.tag != "select":
        parts.append(_a("value", cut(n.value, 80)))
    st = n.states
    for flag in ("disabled", "readonly", "checked", "selected", "required"):
        if st.get(flag) is True:
            parts.append(f" {flag}")
    if (n.name and n.tag in ("input", "textarea", "select")
            and n.name != a.get("placeholder") and n.name != a.get("aria-label")):
        parts.append(_a("label", cut(n.name, 60)))
    if n.occluded:
        parts.append(' data-occluded="true"')
    head = "".join(parts) + ">"
    if n.tag == "input":
        return head
    if n.tag == "select":
        opts = "".join(
            f"<option{' selected' if c.states.get('selected') else ''}>"
            f"{escape(clean_text(cut(c.name or c.text, 60)))}</option>"
            for c in n.children if c.tag == "option")
        return f"{head}{opts}</select>"
    body = escape(clean_text(cut(n.name or n.text or "", 80)))
    return f"{head}{body}</{tag}>"


def serialize_skeleton(snap: SnapshotView, *, full_page: bool = True,
                       max_nodes: int = SKELETON_MAX_NODES) -> Serialization:
    lines = []
    count = 0
    more = 0
    for n in snap.nodes():
        if not n.interactive or not n.rendered or n.flags & F_HIDDEN or (not full_page and not n.visible):
            continue
        if n.tag == "option":
            continue
        if count >= max_nodes:
            more += 1
            continue
        lines.append(_skeleton_tag(n))
        count += 1
    if more:
        lines.append(f"<!-- truncated: {more} more interactive elements; scroll or raise max_nodes -->")
    cut_note = walk_cut(snap)
    if cut_note:
        lines.append(f"<!-- {escape(cut_note)} -->")
    text = "\n".join(lines)
    return Serialization(format="skeleton", text=text, tokens=estimate_tokens(text), node_count=count,
                         truncated=bool(more or cut_note))


def _inline(block: VirtualNode, include_hidden: bool) -> str:
    """A text block's text with the controls inside it (its links) written in place, each with its
    own ID: `see <a data-id="12" href="…">RFC 2616</a> (which…`."""
    text = block.text
    controls: list[VirtualNode] = []
    stack = [c for c in reversed(block.children) if c.folded]
    while stack:
        c = stack.pop()
        if c.interactive:
            controls.append(c)
            continue
        stack.extend(k for k in reversed(c.children) if k.folded)
    out: list[str] = []
    rest: list[str] = []
    at = 0
    for c in controls:
        if not c.rendered and not include_hidden:
            continue
        parts = [f"<{c.tag}", _a("data-id", c.node_id)]
        for k in FULL_ATTRS:
            if k in c.attrs:
                parts.append(_a(k, cut(c.attrs[k], 120)))
        head = "".join(parts) + ' data-interactive="true">'
        i, words = -1, ""
        for words in (c.text, c.name):
            if words:
                i = text.find(words, at)
                if i >= 0:
                    break
        if i < 0:  # its words are not in the text (an icon link): written after it
            rest.append(head + escape(clean_text(c.name or c.text), quote=False) + f"</{c.tag}>")
            continue
        out.append(escape(clean_text(text[at:i]), quote=False))
        out.append(head + escape(clean_text(words), quote=False) + f"</{c.tag}>")
        at = i + len(words)
    out.append(escape(clean_text(text[at:]), quote=False))
    return "".join(out + rest)


def serialize_full(snap: SnapshotView, *, include_hidden: bool = False,
                   max_bytes: int | None = DEFAULT_FULL_MAX_BYTES) -> Serialization:
    """The annotated HTML of the whole tree, stopped with a marker once it passes `max_bytes`
    (UTF-8; None: no limit)."""
    root = snap.root
    out: list[str] = []
    count = 0
    size = 0
    stopped_at: VirtualNode | None = None
    if root is not None:
        ordinals = {f.frame_id: f.ordinal for f in snap.frames}
        # (node, closing?) — iterative to survive deep nesting
        stack: list[tuple[VirtualNode, bool]] = [(root, False)]
        while stack:
            n, closing = stack.pop()
            if closing:
                out.append(f"</{n.tag}>")
                continue
            if not n.rendered and not include_hidden and n is not root:
                continue
            if max_bytes is not None and size > max_bytes:
                stopped_at = n
                break
            count += 1
            parts = [f"<{n.tag}", _a("data-id", n.node_id)]
            for k in FULL_ATTRS:
                if k in n.attrs:
                    parts.append(_a(k, cut(n.attrs[k], 120)))
            if n.interactive:
                parts.append(' data-interactive="true"')
            if not n.visible:
                parts.append(' data-visible="false"')
            why = hidden_reason(n)
            if why:  # rendered, but no person can see it
                parts.append(_a("data-hidden", why))
            if n.occluded:
                parts.append(' data-occluded="true"')
            if n.in_shadow and (n.parent is None or not n.parent.in_shadow):
                parts.append(' data-shadow="true"')
            f = ordinals.get(n.frame_id, 0)
            if f and (n.parent is None or n.parent.frame_id != n.frame_id):
                parts.append(_a("data-frame", f))
            if n.value is not None and not n.redacted:
                parts.append(_a("value", cut(n.value, 200)))
            elif n.redacted:
                parts.append(' data-redacted="true"')
            for flag in ("disabled", "checked", "selected"):
                if n.states.get(flag) is True:
                    parts.append(f" {flag}")
            parts.append(">")
            if n.text_block:
                parts.append(_inline(n, include_hidden))
            elif n.text:
                parts.append(escape(clean_text(n.text), quote=False))
            piece = "".join(parts)
            size += len(piece.encode("utf-8", "surrogatepass"))
            out.append(piece)
            if n.tag in VOID and not n.children:
                continue
            stack.append((n, True))
            for c in reversed(n.children):
                if not c.folded:  # a text block's inline content was written with its text
                    stack.append((c, False))
    notes = []
    if stopped_at is not None:
        left = len(snap.nodes()) - count
        notes.append(f"<!-- CUT: this output stops at its size budget of {max_bytes:,} bytes, before node "
                     f"{escape(describe_node(stopped_at))}; about {left:,} more nodes are not written (and their "
                     "closing tags are left out). Raise the budget (--max-bytes) or use the tree format. -->")
    cut_note = walk_cut(snap)
    if cut_note:
        notes.append(f"<!-- {escape(cut_note)} -->")
    text = "".join(out) + "".join(notes)
    return Serialization(format="full", text=text, tokens=estimate_tokens(text), node_count=count,
                         truncated=bool(notes))
