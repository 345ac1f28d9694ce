"""Content that is rendered but that no person can see — aria-hidden, transparent, clipped away,
zero-size, off-screen beyond the page, font-size 0, or the same colour as its background. The
walker marks it (flag 2048, the reason in bits 12–14: see js/walker/head.js); it never reaches the
model's semantic payload, and `tree` and `full` mark it hidden with the reason."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.snapshot.vnode import VirtualNode

F_HIDDEN = 2048
REASONS = ("", "aria-hidden", "transparent", "clipped away", "zero-size", "off-screen beyond the page",
           "font-size 0", "the same colour as its background")


def hidden_reason(node: VirtualNode) -> str | None:
    """Why a person cannot see this rendered node, or None when they can (or it is not rendered)."""
    f = node.flags
    if not f & F_HIDDEN:
        return None
    return REASONS[(f >> 12) & 7] or "hidden"
