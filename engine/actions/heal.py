"""Self-healing of stale IDs: find the element that replaced a vanished one (seed 000 §2.5.6).

Ghost match scores every candidate in a fresh snapshot: the same accessible name +0.4 (a close
name earns part of it), the same role +0.3, a centre within 50 px of the old one +0.3 (page
coordinates, so scrolling in between does not matter). The best candidate at or above 0.5
wins; ties go to the nearer one.

When nothing scores enough, the node's locators are tried (issue [14]): every Playwright locator
that was unique for it in the snapshot its ID came from (test id, role and name, label,
placeholder, text, #id, attributes — the chosen one first). The first that matches exactly one
element of the fresh snapshot heals the ID; when none does, the action fails with STALE and a
message naming each locator and what it found.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.errors import ErrorCode, UnknownNodeError
from engine.names import norm, similarity
from engine.snapshot.locators import Locator, Locators

if TYPE_CHECKING:
    from engine.snapshot.dom_snapshot import DomSnapshot
    from engine.snapshot.vnode import VirtualNode

THRESHOLD = 0.5
NEAR_PX = 50.0


@dataclass(frozen=True)
class Ghost:
    """What is remembered of a vanished node."""

    node_id: str
    role: str
    name: str
    center: tuple[float, float]  # page coordinates
    interactive: bool
    frame_id: str
    locators: tuple[Locator, ...] = ()  # unique for it where it was seen, the preferred one first

    @classmethod
    def of(cls, node: VirtualNode, snap: DomSnapshot) -> Ghost:
        x, y, w, h = node.bounds
        return cls(node.node_id, node.role or node.tag, node.name or "",
                   (x + w / 2 + snap.context.scroll_x,
                    y + h / 2 + snap.context.scroll_y), node.interactive, node.frame_id,
                   tuple(Locators(snap).alternatives(node)))

    def describe(self) -> str:
        n = f' "{self.name}"' if self.name else ""
        return f"{self.role}{n} near ({self.center[0]:.0f}, {self.center[1]:.0f})"


@dataclass(frozen=True)
class Match:
    node: VirtualNode
    score: float
    distance: float
    locator: Locator | None = None  # set when the node was found again by a locator, not by score


def name_score(old: str, new: str) -> float:
    a, b = norm(old), norm(new)
    if not a and not b:
        return 0.0
    if a == b:
        return 0.4
    ratio = similarity(a, b)
    return round(0.4 * ratio, 3) if ratio >= 0.6 else 0.0


def ghost_match(ghost: Ghost, snap: DomSnapshot, *, threshold: float = THRESHOLD) -> Match | None:
    best: Match | None = None
    sx, sy = snap.context.scroll_x, snap.context.scroll_y
    for n in snap.nodes():
        if ghost.interactive and not n.interactive:
            continue
        if not n.rendered:
            continue
        x, y, w, h = n.bounds
        dist = math.hypot(x + w / 2 + sx - ghost.center[0], y + h / 2 + sy - ghost.center[1])
        score = name_score(ghost.name, n.name or "")
        if (n.role or n.tag) == ghost.role:
            score += 0.3
        if dist <= NEAR_PX:
            score += 0.3
        if score < threshold:
            continue
        if best is None or score > best.score + 1e-9 or (abs(score - best.score) < 1e-9 and dist < best.distance):
            best = Match(n, round(score, 3), dist)
    if best is None and ghost.locators:
        return locator_match(ghost, snap)
    return best


def locator_match(ghost: Ghost, snap: DomSnapshot) -> Match:
    """The one element the ghost's locators find in `snap`; UnknownNodeError (STALE) saying what each
    found when none finds exactly one."""
    locs = Locators(snap)
    found = []
    for loc in ghost.locators:
        hits = locs.resolve(loc)
        if len(hits) == 1:
            n = hits[0]
            x, y, w, h = n.bounds
            dist = math.hypot(x + w / 2 + snap.context.scroll_x - ghost.center[0],
                              y + h / 2 + snap.context.scroll_y - ghost.center[1])
            return Match(n, 0.0, dist, loc)
        found.append(f"{loc.code()} finds {'no element' if not hits else f'{len(hits)} elements'}")
    raise UnknownNodeError(f"Element {ghost.node_id} ({ghost.describe()}) is gone from the page; nothing similar "
                           f"replaced it (ghost match below {THRESHOLD}) and no locator of it finds exactly one "
                           f"element: {'; '.join(found)}. Take a new snapshot and choose again.",
                           code=ErrorCode.STALE)
