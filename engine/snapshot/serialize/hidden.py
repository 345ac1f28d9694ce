"""Content that is rendered but that no person can see — aria-hidden, transparent, clipped away,
zero-size, off-screen beyond the page, font-size 0, or the same colour as its background. The
walker marks it (flag 2048, the reason in bits 12–14: see js/walker/head.js); it never reaches the
model's semantic payload, and `tree` and `full` mark it hidden with the reason.

One exception is read here: a native range input hidden the visually-hidden way inside the thumb a
person drags (MUI's Slider) is seen as that thumb (`shown_thumb`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.snapshot.vnode import F_INTERACTIVE, F_RENDERED

if TYPE_CHECKING:
    from engine.snapshot.vnode import VirtualNode

F_HIDDEN = 2048
REASONS = ("", "aria-hidden", "transparent", "clipped away", "zero-size", "off-screen beyond the page",
           "font-size 0", "the same colour as its background")
_CUT = (3, 4)  # clipped away, zero-size: how the visually-hidden pattern hides a box


def hidden_reason(node: VirtualNode) -> str | None:
    """Why a person cannot see this rendered node, or None when they can (or it is not rendered)."""
    f = node.flags
    if not f & F_HIDDEN or shown_thumb(node) is not None:
        return None
    return REASONS[(f >> 12) & 7] or "hidden"


def shown_thumb(node: VirtualNode) -> VirtualNode | None:
    """The thumb a person sees and drags for a slider control hidden the visually-hidden way inside it (an
    <input type=range> cut to nothing by `clip` or shrunk to 1 px, as MUI's Slider keeps it for the keyboard
    and assistive technology); None for anything else. The control is operable (focus, arrow keys): it is
    where its thumb is, as a hidden native checkbox is where its label is."""
    f = node.flags
    if not f & F_HIDDEN or (f >> 12) & 7 not in _CUT or node.role != "slider" or node.tag != "input":
        return None
    if f & (F_RENDERED | F_INTERACTIVE) != F_RENDERED | F_INTERACTIVE:
        return None
    thumb = node.parent
    if thumb is None or thumb.flags & (F_RENDERED | F_HIDDEN) != F_RENDERED:
        return None
    return thumb if thumb.bounds[2] >= 2 and thumb.bounds[3] >= 2 else None
