"""The `semantic` payload: seed 000's V3 format — minified keys, viewport pruning, atomic leaves.

Only interactive nodes (and visible scroll containers) are listed; descendants of atomic
controls (a span inside a button) were never marked interactive by the walker. Without
`full_page=True` only nodes that pass the 2/3 visibility rule are sent. With `text=True` the payload
also carries `txt`, the text a person reads in the viewport (serialize/text.py): the MCP default.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from engine.models import Serialization
from engine.snapshot.serialize.hidden import F_HIDDEN, shown_thumb
from engine.snapshot.serialize.limits import walk_cut
from engine.snapshot.serialize.tokens import clean_text, cut, estimate_tokens
from engine.snapshot.vnode import F_INTERACTIVE, F_RENDERED

if TYPE_CHECKING:
    from engine.snapshot.view import SnapshotView
    from engine.snapshot.vnode import VirtualNode

ROLE_MIN = {
    "button": "btn", "link": "link", "textbox": "inp", "searchbox": "inp", "checkbox": "chk", "radio": "radio",
    "combobox": "sel", "listbox": "sel", "menuitem": "menu", "menuitemcheckbox": "menu", "menuitemradio": "menu",
    "tab": "tab", "option": "opt", "switch": "switch", "slider": "slider", "spinbutton": "num",
    "clickable": "clk", "treeitem": "item", "gridcell": "cell",
}

LEGEND = """LEGEND for interactive_tree format:
- i: element ID (use it in actions: click(i), setValue(i, "text"))
- r: role (btn=button, inp=text input, link=link, chk=checkbox, radio=radio, sel=select/combobox,
  menu=menu item, tab=tab, opt=option, num=number input, clk=clickable element without a role)
- n: name or label the user sees (cut at 50 characters)
- v: current value (inputs); password and one-time-code values are never included
- s: states that are not default (disabled, checked, expanded, selected, focused, required, invalid)
- xy: [x, y] centre of the element in viewport pixels
- box: [x, y, width, height] in viewport pixels (when boxes are requested)
- occ: true when another element covers it (a click would hit the cover)
- scr: scroll container {depth: how far scrolled, h: true when more content is below}; scroll(i) to see more
- f: frame number (omitted for the main page)
- r=dialog: an open dialog (not a control): n its title, txt the words it says; its controls follow it
Only elements at least 2/3 visible in the viewport are listed; scroll to reach others. Nothing a
person cannot see (hidden, transparent, off-screen beyond the page, zero-size) is listed."""

_SHOWN = F_RENDERED | F_HIDDEN  # rendered and not hidden from a person: flags & _SHOWN == F_RENDERED

DIALOG_ROLES = frozenset({"dialog", "alertdialog"})
DIALOG_TEXT = 300  # characters of a dialog's words in the payload

_STATE_ORDER = ("disabled", "checked", "expanded", "selected", "pressed", "focused", "required", "readonly", "invalid")


def _states(st: dict) -> str | None:
    out = []
    for k in _STATE_ORDER:
        v = st.get(k)
        if v is None or v is False and k != "expanded":
            continue
        if k == "expanded":
            out.append("expanded" if v else "collapsed")
        elif v == "mixed":
            out.append(f"{k}=mixed")
        elif v:
            out.append(k)
    return ",".join(out) or None


def serialize_semantic(snap: SnapshotView, *, full_page: bool = False, boxes: bool = False,
                       max_name: int = 50, text: bool = False) -> Serialization:
    ctx = snap.context
    ordinals = {f.frame_id: f.ordinal for f in snap.frames}
    items = []
    containers = []
    for n in snap.nodes():
        # (the flags read once, not through the node's properties: this loop meets every node of the page)
        fl = n.flags
        seen = n  # what a person sees of it: itself, or the thumb of a slider hidden inside it
        if fl & _SHOWN != F_RENDERED:  # what no person can see never reaches the model
            thumb = shown_thumb(n) if fl & F_HIDDEN else None
            if thumb is None:
                continue
            seen = thumb
        sc = n.scroll
        if n.role in DIALOG_ROLES and n.visible_ratio > 0 and not fl & F_INTERACTIVE:
            d = _dialog_entry(n, max_name)
            if d:
                x, y, w, h = n.bounds
                d["xy"] = [round(x + w / 2), round(y + h / 2)]
                if boxes:
                    d["box"] = [round(x), round(y), round(w), round(h)]
                f = ordinals.get(n.frame_id, 0)
                if f:
                    d["f"] = f
                items.append(d)
        if not (fl & F_INTERACTIVE or sc):
            continue
        if not (full_page or seen.visible):
            continue
        x, y, w, h = seen.bounds
        e: dict = {"i": n.node_id, "r": ROLE_MIN.get(n.role, n.role)}
        if n.name:
            e["n"] = clean_text(cut(n.name, max_name))
        if n.value:
            e["v"] = clean_text(cut(n.value, max_name))
        s = _states(n.states) if n.states else None
        if s:
            e["s"] = s
        e["xy"] = [round(x + w / 2), round(y + h / 2)]
        if boxes:
            e["box"] = [round(x), round(y), round(w), round(h)]
        if n.occluded:
            e["occ"] = True
        if sc:
            e["scr"] = {"depth": sc["depth"], "h": sc["has_more"]}
            containers.append({"id": n.node_id, "depth": sc["depth"], "hasMore": sc["has_more"]})
        f = ordinals.get(n.frame_id, 0)
        if f:
            e["f"] = f
        items.append(e)
    payload: dict[str, Any] = {
        "mode": "semantic",
        "url": ctx.url,
        "title": clean_text(ctx.title),
        "viewport": {"width": ctx.viewport.width, "height": ctx.viewport.height},
        "scroll_position": ctx.scroll_position,
        "interactive_tree": items,
    }
    if containers:
        payload["scrollable_containers"] = containers
    if text:  # the text channel: what a person reads in the viewport
        from engine.snapshot.serialize.text import channel
        names = {e["n"] for e in items if "n" in e}
        lines, left = channel(snap, names)
        payload["txt"] = lines
        if left:
            payload["txt_cut"] = left
    cut_note = walk_cut(snap)
    if cut_note:
        payload["truncated"] = cut_note
    if ctx.page_height > ctx.viewport.height + 4 and not full_page:
        payload["more_below"] = ctx.scroll_y + ctx.viewport.height < ctx.page_height - 4
    out = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return Serialization(format="semantic", text=out, tokens=estimate_tokens(out), node_count=len(items),
                         legend=LEGEND, data=payload)


def _dialog_entry(n: VirtualNode, max_name: int) -> dict | None:
    """An open dialog as the model reads it: its title and its words (a confirmation's question and
    warning), listed right before the controls inside it. Its controls' own words are theirs."""
    title = n.name
    words: list[str] = []
    size = 0
    stack = list(reversed(n.children))
    while stack and size < DIALOG_TEXT:
        c = stack.pop()
        if c.flags & _SHOWN != F_RENDERED or c.flags & F_INTERACTIVE:
            continue   # not seen, or a control (listed with its own name)
        if not title and c.role == "heading" and c.name:
            title = c.name
            continue
        if c.text and not c.folded and c.text != title:
            words.append(c.text)
            size += len(c.text) + 1
        if c.children and not c.text_block:
            stack.extend(reversed(c.children))
    if not title and not words:
        return None
    e: dict = {"i": n.node_id, "r": "dialog"}
    if title:
        e["n"] = clean_text(cut(title, max_name * 2))
    if words:
        e["txt"] = clean_text(cut(" ".join(words), DIALOG_TEXT))
    return e
