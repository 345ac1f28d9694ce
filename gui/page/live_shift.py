"""Where the live view draws a snapshot's boxes while the page has scrolled past it (a part of `PageView`).

Until the next snapshot lands, the boxes move with what scrolled:

- the page: by the scroll the screencast frame reports (its metadata), except boxes known to stay put when
  the page scrolls — fixed headers, sticky bars: seen at the same place in two snapshots taken at different
  scroll positions (`pinned_ids`);
- a scroll area under the wheel (a menu, a list, a code block): by the wheel's delta, as far as the area has
  room to scroll that way by the snapshot's own reading of it (`VirtualNode.scroll`: depth, scroll and
  client height); its boxes are cut to the area, and those scrolled out of it are not drawn (`InnerScrolls`).
"""

from __future__ import annotations

import dataclasses

from gui.page.overlay import OverlayBox

PINNED_PX = 1.5  # a box that moved less than this while the page scrolled stays put when it scrolls
ROOTS = ("html", "body")  # their scroll is the page's (the frames report it)


def pinned_ids(prev, snap, pinned: set[str]) -> set[str]:
    """The boxes of `snap` that stay put when the page scrolls: seen at the same place in `prev` though the
    page scrolled in between (fixed and sticky elements); those known before stay known while they exist."""
    if snap is None:
        return set()
    keep = {nid for nid in pinned if nid in snap}
    if prev is None:
        return keep
    a, b = prev.context, snap.context
    sx, sy = float(b.scroll_x or 0) - float(a.scroll_x or 0), float(b.scroll_y or 0) - float(a.scroll_y or 0)
    if abs(sx) < 2 * PINNED_PX and abs(sy) < 2 * PINNED_PX:
        return keep
    for n in snap.nodes():
        if not n.interactive or n.node_id not in prev:
            continue
        o = prev.get(n.node_id)
        if (abs(o.bounds[0] - n.bounds[0]) < PINNED_PX and abs(o.bounds[1] - n.bounds[1]) < PINNED_PX
                and n.bounds[2] > 0 and n.bounds[3] > 0):
            keep.add(n.node_id)
        else:
            keep.discard(n.node_id)
    return keep


@dataclasses.dataclass
class _Area:
    node_id: str
    bounds: tuple[float, float, float, float]
    room_up: float     # CSS px it can still scroll up (toward its top), as of the snapshot
    room_down: float
    dy: float = 0.0    # how far the wheel has scrolled it since the snapshot (down: positive)


class InnerScrolls:
    """The scroll areas the wheel moved since the snapshot (cleared when a new one is shown)."""

    def __init__(self) -> None:
        self.areas: dict[str, _Area] = {}
        self.version = 0

    def __bool__(self) -> bool:
        return any(a.dy for a in self.areas.values())

    def clear(self) -> None:
        if self.areas:
            self.areas.clear()
            self.version += 1

    def wheel(self, snap, pt: tuple[float, float], dy: float) -> bool:
        """The wheel turned by `dy` CSS px at page point `pt`: the innermost scroll area under it with room
        that way takes it (True), else the page does (False: the frames report that)."""
        if not dy:
            return False
        x, y = pt
        best, best_area = None, None
        for n in snap.nodes():
            sc = n.scroll
            if not sc or n.tag in ROOTS or not n.rendered:
                continue
            bx, by, bw, bh = n.bounds
            if not (bx <= x <= bx + bw and by <= y <= by + bh):
                continue
            a = self.areas.get(n.node_id) or _area(n)
            room = a.room_down - a.dy if dy > 0 else a.room_up + a.dy
            if room <= 0.5:
                continue
            if best_area is None or bw * bh < best_area:
                best, best_area = a, bw * bh
        if best is None:
            return False
        best.dy = max(-best.room_up, min(best.room_down, best.dy + dy))
        self.areas[best.node_id] = best
        self.version += 1
        return True


def _area(n) -> _Area:
    sc = n.scroll
    span = max(0.0, float(sc.get("scroll_height") or 0) - float(sc.get("client_height") or 0))
    top = span * float(sc.get("depth_pct") or 0) / 100.0
    return _Area(n.node_id, tuple(n.bounds), room_up=top, room_down=span - top)


def shift_boxes(boxes: list[OverlayBox], dx: float, dy: float, pinned: set[str],
                inner: InnerScrolls) -> list[OverlayBox]:
    """The boxes moved by the page's scroll (`dx`, `dy`: drawn = snapshot + shift; pinned ones stay) and by
    the scroll areas the wheel moved (cut to their area; dropped once out of it)."""
    areas = [a for a in inner.areas.values() if a.dy]
    out = []
    for b in boxes:
        x, y, w, h = b.page_rect
        if b.node_id not in pinned:
            x, y = x + dx, y + dy
        cx, cy = b.page_rect[0] + w / 2, b.page_rect[1] + h / 2
        for a in areas:
            ax, ay, aw, ah = a.bounds
            if b.node_id == a.node_id or not (ax <= cx <= ax + aw and ay <= cy <= ay + ah):
                continue
            y -= a.dy
            top, bottom = ay + (0 if a.node_id in pinned else dy), ay + ah + (0 if a.node_id in pinned else dy)
            y0, y1 = max(y, top), min(y + h, bottom)
            if y1 - y0 < 1:
                break
            y, h = y0, y1 - y0
        else:
            if (x, y, w, h) == b.page_rect:
                out.append(b)
            else:
                out.append(dataclasses.replace(b, page_rect=(x, y, w, h)))
    return out
