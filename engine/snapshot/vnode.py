"""VirtualNode: one element of the complete, 1:1 snapshot tree.

A plain slotted class rather than a pydantic model: a 25k-element page builds 25k of these
per snapshot, and validation would cost more than the whole in-page walk. Treat instances as
read-only; the contracts that cross process or GUI boundaries live in `engine.models`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

TIERS = ("structural", "non-semantic", "semantic")

# flags from the walker (see js/walker/head.js)
F_RENDERED, F_OCCLUDED, F_SHADOW, F_INTERACTIVE, F_REDACTED, F_LISTENER, F_POINTER, F_FOCUSABLE, F_FRAME = (
    1, 2, 4, 8, 16, 32, 64, 128, 256)
F_TEXT_BLOCK, F_FOLDED = 512, 1024
F_CLOSED_SHADOW = 32768  # inside a closed shadow root (or below one)
F_SHADOW_TOP = 65536     # a child of a shadow root itself: its parent (the host) is in another tree scope
F_REORDERS = 131072      # its layout places its children out of document order: read them by their boxes
F_PLACED = 262144        # placed out of document order by its flex or grid container (`order`, grid placement)
F_AH_SEEN = 524288       # hidden from assistive technology only (aria-hidden, with the hidden flag): a person sees it

VISIBLE_RATIO = 2 / 3  # the 2/3 rule: a node counts as visible when this much of it is in view


class VirtualNode:
    __slots__ = ("node_id", "tag", "role", "name", "text", "value", "states", "bounds", "visible_ratio",
                 "flags", "tier", "frame_id", "attrs", "scroll", "occluded_by", "occluded_by_desc",
                 "line_rects", "visible_bounds", "children", "parent", "depth")

    def __init__(self, node_id: str, tag: str, role: str, name: str, text: str, value: str | None,
                 states: dict, bounds: tuple[float, float, float, float], visible_ratio: float, flags: int,
                 tier: str, frame_id: str, attrs: dict, scroll: dict | None,
                 occluded_by: str | None = None, occluded_by_desc: str | None = None,
                 line_rects: list[tuple[float, float, float, float]] | None = None,
                 visible_bounds: tuple[float, float, float, float] | None = None):
        self.node_id = node_id
        self.tag = tag
        self.role = role
        self.name = name
        self.text = text
        self.value = value
        self.states = states
        self.bounds = bounds
        self.visible_ratio = visible_ratio
        self.flags = flags
        self.tier = tier
        self.frame_id = frame_id
        self.attrs = attrs
        self.scroll = scroll
        self.occluded_by = occluded_by
        self.occluded_by_desc = occluded_by_desc
        # (x, y, w, h) of each line box of an inline element wrapped over two or more lines (a link
        # across two lines of a paragraph), in the coordinates of `bounds` (their union); else None
        self.line_rects = line_rects
        # the part of `bounds` that can be seen when a scroll area or an overflow box between the
        # element and the viewport cuts it (an option half scrolled out of its menu); else None
        self.visible_bounds = visible_bounds
        self.children: list[VirtualNode] = []
        self.parent: VirtualNode | None = None
        self.depth = 0

    # -- derived facts -------------------------------------------------------------------
    @property
    def rendered(self) -> bool:
        """Takes part in rendering: not display:none or visibility:hidden. A transparent (opacity 0)
        box is still laid out and takes clicks, so it counts — unless it lets clicks through
        (pointer-events: none), as a faded-out menu does; native form controls always count."""
        return bool(self.flags & F_RENDERED)

    @property
    def visible(self) -> bool:
        """Rendered, and at least 2/3 of it inside the viewport and every clipping ancestor."""
        return bool(self.flags & F_RENDERED) and self.visible_ratio >= VISIBLE_RATIO - 0.005

    @property
    def occluded(self) -> bool:
        """Covered by another element at most of the sampled points (multi-point hit test)."""
        return bool(self.flags & F_OCCLUDED)

    @property
    def in_shadow(self) -> bool:
        return bool(self.flags & F_SHADOW)

    @property
    def shadow_top(self) -> bool:
        """A child of a shadow root itself: the top of a tree scope whose host is its parent node."""
        return bool(self.flags & F_SHADOW_TOP)

    @property
    def in_closed_shadow(self) -> bool:
        """Inside a closed shadow root: Vigil walks and acts on it, but no Playwright locator reaches it."""
        return bool(self.flags & F_CLOSED_SHADOW)

    @property
    def interactive(self) -> bool:
        return bool(self.flags & F_INTERACTIVE)

    @property
    def redacted(self) -> bool:
        """A password or one-time-code field: its value is never read."""
        return bool(self.flags & F_REDACTED)

    @property
    def has_click_listener(self) -> bool:
        return bool(self.flags & F_LISTENER)

    @property
    def text_block(self) -> bool:
        """A paragraph, list item, cell or code block whose `text` is its whole inline content in
        reading order (links, code and emphasis included; hidden parts left out)."""
        return bool(self.flags & F_TEXT_BLOCK)

    @property
    def folded(self) -> bool:
        """Inline content of a text block above it: its words are already in that block's text."""
        return bool(self.flags & F_FOLDED)

    @property
    def is_frame_owner(self) -> bool:
        return bool(self.flags & F_FRAME)

    @property
    def shown_bounds(self) -> tuple[float, float, float, float]:
        """Where the element can be seen: its box cut by the scroll areas and overflow boxes around it."""
        return self.visible_bounds or self.bounds

    @property
    def center(self) -> tuple[float, float]:
        x, y, w, h = self.bounds
        return (x + w / 2, y + h / 2)

    def iter(self) -> Iterator[VirtualNode]:
        """Pre-order walk of this subtree (iterative: pages nest thousands deep)."""
        stack = [self]
        while stack:
            n = stack.pop()
            yield n
            if n.children:
                stack.extend(reversed(n.children))

    def container(self, roles: frozenset[str] | tuple[str, ...],
                  tags: frozenset[str] | tuple[str, ...] = ()) -> VirtualNode | None:
        """The nearest ancestor with one of these roles or tags (a row, a list item, a form …)."""
        p = self.parent
        while p is not None:
            if p.role in roles or p.tag in tags:
                return p
            p = p.parent
        return None

    def label(self) -> str:
        """A short human description: role "name" (tag#id)."""
        bits = [self.role or self.tag]
        if self.name:
            nm = self.name if len(self.name) <= 60 else self.name[:59] + "…"
            bits.append(f'"{nm}"')
        return " ".join(bits)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "node_id": self.node_id, "tag": self.tag, "role": self.role, "name": self.name,
            "text": self.text, "value": self.value, "states": self.states, "bounds": list(self.bounds),
            "visible": self.visible, "visible_ratio": self.visible_ratio, "rendered": self.rendered,
            "occluded": self.occluded, "tier": self.tier, "interactive": self.interactive,
            "frame_id": self.frame_id, "in_shadow": self.in_shadow, "scroll": self.scroll,
            "parent_id": self.parent.node_id if self.parent else None,
        }
        if self.redacted:
            d["redacted"] = True
        if self.occluded_by or self.occluded_by_desc:
            d["occluded_by"] = self.occluded_by
            d["occluded_by_desc"] = self.occluded_by_desc
        if self.attrs:
            d["attrs"] = self.attrs
        if self.line_rects:
            d["line_rects"] = [list(r) for r in self.line_rects]
        if self.visible_bounds:
            d["visible_bounds"] = list(self.visible_bounds)
        return d

    def to_tree_dict(self) -> dict[str, Any]:
        """This subtree as nested dicts (built iteratively: no recursion limit on deep pages)."""
        root = self.to_dict()
        stack = [(self, root)]
        while stack:
            node, d = stack.pop()
            kids = []
            for c in node.children:
                cd = c.to_dict()
                kids.append(cd)
                stack.append((c, cd))
            d["children"] = kids
        return root

    def __repr__(self) -> str:
        return f"<VirtualNode {self.node_id} {self.label()} tier={self.tier}>"

    def copy_unlinked(self) -> VirtualNode:
        """The same facts in a new node without links (for a newer snapshot whose tree around this
        element changed while the element itself did not)."""
        n = VirtualNode.__new__(VirtualNode)
        for k in _FACTS:
            setattr(n, k, getattr(self, k))
        n.children, n.parent, n.depth = [], None, 0
        return n


_FACTS = tuple(k for k in VirtualNode.__slots__ if k not in ("children", "parent", "depth"))


def node_from_row(row: list, frame_id: str) -> VirtualNode:
    """A node from one walker row (js/walker/head.js): [parent, id, tag, role, name, text, value, flags,
    tier, x, y, w, h, visible ratio, extra]. The row's parent index is not read (the caller links)."""
    (_, nid, tag, role, name, text, value, flags, tier, x, y, w, h, ratio, extra) = row
    states = attrs = scroll = ob = obd = lr = vb = None
    if extra:
        states = extra.get("st")
        attrs = extra.get("a")
        sc = extra.get("sc")
        if sc:
            scroll = {"depth": f"{sc['d']}%", "depth_pct": sc["d"], "has_more": sc["m"],
                      "scroll_height": sc["sh"], "client_height": sc["ch"]}
        ob = extra.get("ob")
        obd = extra.get("obd")
        lr = extra.get("lr")
        if lr:
            lr = [tuple(r) for r in lr]
        vb = extra.get("vb")
        if vb:
            vb = tuple(vb)
    if not role:
        editable = attrs is not None and attrs.get("contenteditable") not in (None, "false")
        role = "generic" if tier == 0 else ("textbox" if editable else "clickable" if flags & 8 else "generic")
    return VirtualNode(nid, tag, role, name, text, value, states or {}, (x, y, w, h), ratio, flags, TIERS[tier],
                       frame_id, attrs or {}, scroll, ob, obd, lr, vb)
