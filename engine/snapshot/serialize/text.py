"""What a person reads on the page: headings, paragraphs, list items, table rows, labels, status
and error text — as short lines in reading order, the controls' own names left out.

One walk of the snapshot gives every line of the page with where it is and what kind of text it
is (`TextLine`); the semantic payload's text channel (`txt`, see serialize/semantic.py) lists the
ones in the viewport, and the sentinel compares the lines before and after an action to say in
words what changed (engine/observe/changes.py). Nothing hidden from a person is read (the walker's
hidden flag) — text hidden only from assistive technology (aria-hidden) is seen, so it is read, except
behind an open modal dialog —, and form controls keep their values to the payload's own items. Text is
read as shown (text-transform, CSS generated content, SVG text) and in the order of the layout: the
children of a flex or grid container that places them out of document order are read row by row by
their boxes (`visual_children`).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.snapshot.serialize.hidden import F_HIDDEN
from engine.snapshot.serialize.tokens import clean_text, cut
from engine.snapshot.vnode import F_AH_SEEN, F_FOLDED, F_INTERACTIVE, F_RENDERED, F_REORDERS, F_TEXT_BLOCK, VirtualNode

if TYPE_CHECKING:
    from engine.snapshot.view import SnapshotView

ALERT_ROLES = frozenset({"alert", "alertdialog"})
STATUS_ROLES = frozenset({"status", "log", "timer", "marquee"})
ROW_ROLES = frozenset({"row"})
CELL_ROLES = frozenset({"cell", "gridcell", "columnheader", "rowheader"})
# controls whose insides are their name: their text is already the payload item's `n`
ATOMIC = frozenset({"button", "link", "menuitem", "menuitemcheckbox", "menuitemradio", "tab", "option", "treeitem",
                    "checkbox", "radio", "switch", "slider", "spinbutton", "textbox", "searchbox", "combobox",
                    "listbox"})
SKIP_TAGS = frozenset({"script", "style", "noscript", "template", "head", "title", "option", "select", "textarea"})
MAX_LINE = 300      # characters of one line in the payload
ROW_TOLERANCE = 6   # px: pieces of text whose centres are this close vertically sit on one line

_SHOWN = F_RENDERED | F_HIDDEN
_AH_ONLY = F_RENDERED | F_AH_SEEN  # rendered, hidden from assistive technology only (aria-hidden)
MODAL_ROLES = frozenset({"dialog", "alertdialog"})


def _seen(fl: int) -> bool:
    """Rendered and seen by a person: not hidden, or hidden only from assistive technology."""
    return fl & _SHOWN == F_RENDERED or fl & _AH_ONLY == _AH_ONLY


@dataclass(slots=True)
class TextLine:
    """One piece of text a person reads."""

    node_id: str        # the element it comes from (a row: the row; merged pieces: the first one)
    text: str           # the words, whitespace collapsed (not cut)
    kind: str           # heading, alert, status, item, row, label, text
    bounds: tuple[float, float, float, float]
    in_view: bool       # some of it is inside the viewport
    level: int = 0      # a heading's level
    near_error: bool = False  # inside an element whose id says error/invalid
    aria_hidden: bool = False  # seen, but hidden from assistive technology (aria-hidden)

    def render(self, max_len: int = MAX_LINE) -> str:
        t = clean_text(cut(self.text, max_len))
        if self.kind == "heading":
            return "#" * max(1, min(self.level or 2, 6)) + " " + t
        if self.kind == "item":
            return "- " + t
        if self.kind == "alert":
            return "[alert] " + t
        if self.kind == "status":
            return "[status] " + t
        return t


_CACHE: OrderedDict[int, tuple[SnapshotView, list[TextLine], bool]] = OrderedDict()
_CACHE_SIZE = 8  # the snapshots a step compares (before, after) and a few more


def text_lines(snap: SnapshotView) -> list[TextLine]:
    """Every line of text of the page a person could read (scrolled to or not), in reading order.
    Cached per snapshot (snapshots are immutable)."""
    return _cached(snap)[1]


def _cached(snap: SnapshotView) -> tuple[SnapshotView, list[TextLine], bool]:
    hit = _CACHE.get(id(snap))
    if hit is not None and hit[0] is snap:
        _CACHE.move_to_end(id(snap))
        return hit
    got, reorders = _walk(snap)
    entry = (snap, got, reorders)
    _CACHE[id(snap)] = entry
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return entry


def reading_order(snap: SnapshotView) -> dict[str, int]:
    """Every node's rank in reading order: document order, except that a container whose layout places
    its children out of it (flag F_REORDERS) has them in the order of their boxes."""
    if not _cached(snap)[2]:
        return {n.node_id: i for i, n in enumerate(snap.nodes())}
    out: dict[str, int] = {}
    stack = [snap.root] if snap.root is not None else []
    while stack:
        n = stack.pop()
        out[n.node_id] = len(out)
        kids = visual_children(n) if n.flags & F_REORDERS else n.children
        stack.extend(reversed(kids))
    return out


def visual_children(n: VirtualNode) -> list[VirtualNode]:
    """A container's children as its layout shows them: line by line (boxes whose vertical middles fall
    within a line's height), left to right on a line; a child without a box stays after the child
    before it."""
    kids = n.children
    boxed = [(c.bounds[1], c.bounds[0], i) for i, c in enumerate(kids) if c.bounds[2] > 0 and c.bounds[3] > 0]
    if len(boxed) < 2:
        return kids
    boxed.sort()
    lines: list[list[tuple[float, float, int]]] = []
    bottom = 0.0
    for y, x, i in boxed:
        h = kids[i].bounds[3]
        if lines and y + h / 2 < bottom:
            lines[-1].append((y, x, i))
            bottom = max(bottom, y + h)
        else:
            lines.append([(y, x, i)])
            bottom = y + h
    order = [i for line in lines for _, _, i in sorted(line, key=lambda t: (t[1], t[0]))]
    placed = set(order)
    # (a child without a box rides with the boxed child before it, or leads when none is)
    after: dict[int, list[int]] = {}
    lead = -1
    for i in range(len(kids)):
        if i in placed:
            lead = i
        else:
            after.setdefault(lead, []).append(i)
    out = [kids[j] for j in after.get(-1, ())]
    for i in order:
        out.append(kids[i])
        out.extend(kids[j] for j in after.get(i, ()))
    return out


def viewport_lines(snap: SnapshotView) -> list[TextLine]:
    return [ln for ln in text_lines(snap) if ln.in_view]


def _own_text(n: VirtualNode) -> str:
    if n.role == "heading":
        return n.name or n.text or ""
    return n.text or ""


def _row_text(row: VirtualNode) -> str:
    """A table row's cells, ` | ` between them; a cell that is only a link or a button reads as its name."""
    parts: list[str] = []
    stack = list(reversed(row.children))
    while stack:
        n = stack.pop()
        fl = n.flags
        if fl & F_HIDDEN and not _seen(fl) or not fl & F_RENDERED and not n.children:
            continue
        if _seen(fl) and not fl & F_FOLDED:
            if n.role in CELL_ROLES and n.text:
                parts.append(n.text)
                continue  # a text block: its inline content is in its text
            if fl & F_INTERACTIVE and n.role in ATOMIC:
                if n.name and n.role in ("link", "button"):
                    parts.append(n.name)
                continue
            t = _own_text(n)
            if t:
                parts.append(t)
                if n.role == "heading":
                    continue
        stack.extend(reversed(visual_children(n) if fl & F_REORDERS else n.children))
    return " | ".join(p for p in parts if p)


def _walk(snap: SnapshotView) -> tuple[list[TextLine], bool]:
    """(the lines, whether some container reads its children out of document order)"""
    root = snap.root
    if root is None:
        return [], False
    out: list[TextLine] = []
    reorders = False
    modal = False      # an open modal dialog: what is aria-hidden outside it is the page behind it
    # (this loop meets every node of the page: flags and roles are read once, no calls for most nodes)
    # (dlg: inside a dialog; aria-hidden lines outside one are dropped when a modal dialog is open)
    stack: list[tuple[VirtualNode, str, bool, bool]] = [(root, "", False, False)]
    pop, push = stack.pop, stack.append
    while stack:
        n, ctx, err, dlg = pop()
        tag = n.tag
        if tag in SKIP_TAGS:
            continue
        fl = n.flags
        role = n.role
        if fl & F_INTERACTIVE and role in ATOMIC:
            continue  # a control: its words are its name in the payload
        if role in MODAL_ROLES:
            dlg = True
            if fl & F_RENDERED and (n.states or {}).get("modal"):
                modal = True
        if role in ALERT_ROLES:
            ctx = "alert"
        elif role in STATUS_ROLES and ctx != "alert":
            ctx = "status"
        attrs = n.attrs
        if attrs and not err:
            ident = attrs.get("id")
            if ident:
                low = ident.lower()
                err = "error" in low or "invalid" in low
        shown = _seen(fl)
        ah = shown and fl & F_HIDDEN != 0
        if shown and role in ROW_ROLES:
            t = _row_text(n)
            if t:
                out.append(TextLine(n.node_id, t, "alert" if ctx == "alert" else "row", n.bounds,
                                    n.visible_ratio > 0, near_error=err, aria_hidden=ah and not dlg))
            continue
        if shown and not fl & F_FOLDED:
            # (a heading reads as shown — its text block —, else by its name)
            t = ((n.text if fl & F_TEXT_BLOCK and n.text else n.name or n.text or "") if role == "heading"
                 else n.text)
            if t:
                if role == "heading":
                    kind = "heading"
                elif ctx:
                    kind = ctx
                elif role == "listitem":
                    kind = "item"
                elif tag == "label":
                    kind = "label"
                else:
                    kind = "text"
                level = (n.states or {}).get("level", 0) if role == "heading" else 0
                out.append(TextLine(n.node_id, t, kind, n.bounds, n.visible_ratio > 0,
                                    level if isinstance(level, int) else 0, err, ah and not dlg))
                if role == "heading" or fl & 512:
                    # a heading's name, a text block's text: its inside is already read (links excepted:
                    # they are controls, listed by the payload)
                    continue
        kids = n.children
        if kids:
            if fl & F_REORDERS:
                kids = visual_children(n)
                reorders = True
            for c in reversed(kids):
                push((c, ctx, err, dlg))
    if modal:
        out = [ln for ln in out if not ln.aria_hidden]
    return _merge_rows(out), reorders


def _merge_rows(lines: list[TextLine]) -> list[TextLine]:
    """Pieces of plain text side by side on one visual line ("Total" "$54.20") become one line."""
    out: list[TextLine] = []
    for ln in lines:
        prev = out[-1] if out else None
        if (prev is not None and prev.kind == ln.kind and ln.kind in ("text", "label", "status", "alert")
                and prev.in_view == ln.in_view and _same_row(prev.bounds, ln.bounds) and len(prev.text) < 200):
            x, y, w, h = prev.bounds
            x2, y2, w2, h2 = ln.bounds
            nx, ny = min(x, x2), min(y, y2)
            out[-1] = TextLine(prev.node_id, f"{prev.text} {ln.text}", prev.kind,
                               (nx, ny, max(x + w, x2 + w2) - nx, max(y + h, y2 + h2) - ny), prev.in_view, 0,
                               prev.near_error or ln.near_error, prev.aria_hidden and ln.aria_hidden)
            continue
        out.append(ln)
    return out


def _same_row(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    ay, by_ = a[1] + a[3] / 2, b[1] + b[3] / 2
    return abs(ay - by_) <= ROW_TOLERANCE and a[3] < 60 and b[3] < 60 and b[0] >= a[0] + a[2] - 2


def channel(snap: SnapshotView, control_names: set[str] | frozenset[str] = frozenset(), *,
            max_chars: int = 6000) -> tuple[list[str], int]:
    """The viewport's lines for the payload, without text that only repeats a control's name (a field's
    label), cut to about `max_chars`; (lines, how many lines were left out)."""
    out: list[str] = []
    used = 0
    last = None
    left = 0
    for ln in viewport_lines(snap):
        if ln.kind in ("label", "text") and ln.text.strip(" :*") in control_names:
            continue
        s = ln.render()
        if s == last:
            continue
        if used + len(s) > max_chars:
            left += 1
            continue
        out.append(s)
        used += len(s) + 3
        last = s
    return out, left
