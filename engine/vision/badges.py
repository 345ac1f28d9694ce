"""Where a Set-of-Mark ID badge goes: next to its box without hiding what a person needs to read.

One placement for the stored pictures (`engine.vision.som`) and the live overlay of the window
(`gui.widgets.overlay`), in whatever units the caller draws in (image px, widget px), so badges keep
the size of their font at any zoom and only their positions are computed.

Each badge is placed, in reading order, at the first good spot of: above its box (left end, then
right end), left of it, right of it, below it, then inside its top corners; crowded spots one row
further out come last. A spot is good when it covers no badge already placed, no text of the page
(label and caption boxes from the snapshot, the box's own text when it shows some), no other
element's box, and — in pictures — little page ink; the least bad spot wins when none is clean.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

Rect = tuple[float, float, float, float]  # x0, y0, x1, y1; x1/y1 exclusive

# weights of what a badge may cover, per px² (a placed badge is never covered when any spot avoids it)
TEXT_WEIGHT = 1.0
BOX_WEIGHT = 0.6
INK_WEIGHT = 0.5
# a spot inside the box, or a row away from it, costs this share of the badge's area even when it
# covers nothing: outside and touching the box reads best, where there is room
INSIDE_COST = 0.15
FAR_COST = 0.3
INSIDE = (8, 9)  # indexes in `candidates`
EDGE = 1.0  # overlaps thinner than this (a shared border, a line box's half-leading) do not count


@dataclass(frozen=True)
class BadgeSpec:
    """One badge to place: the box it names, the badge's size, and whether the box shows text of its
    own (a button's caption, a field's value), which a badge inside the box would hide."""

    box: Rect
    width: float
    height: float
    own_text: bool = False


def overlap(a: Rect, b: Rect) -> float:
    """Area two rects share (0 when they only touch)."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w * h if w > 0 and h > 0 else 0.0


def _shrunk(r: Rect, by: float = EDGE) -> Rect:
    if r[2] - r[0] <= 2 * by or r[3] - r[1] <= 2 * by:
        return r
    return (r[0] + by, r[1] + by, r[2] - by, r[3] - by)


def contains(outer: Rect, inner: Rect) -> bool:
    return outer[0] <= inner[0] and outer[1] <= inner[1] and outer[2] >= inner[2] and outer[3] >= inner[3]


class RectGrid:
    """Rects bucketed by a coarse grid: overlap queries stay cheap with hundreds of boxes."""

    def __init__(self, cell: float = 64.0):
        self.cell = cell
        self.cells: dict[tuple[int, int], list[Rect]] = {}

    def _keys(self, r: Rect) -> Iterator[tuple[int, int]]:
        c = self.cell
        for gx in range(int(r[0] // c), int((r[2] - 1e-6) // c) + 1):
            for gy in range(int(r[1] // c), int((r[3] - 1e-6) // c) + 1):
                yield gx, gy

    def add(self, r: Rect) -> None:
        for k in self._keys(r):
            self.cells.setdefault(k, []).append(r)

    def hits(self, r: Rect) -> set[Rect]:
        return {o for k in self._keys(r) for o in self.cells.get(k, ()) if overlap(r, o)}


def candidates(box: Rect, w: float, h: float) -> list[tuple[float, float]]:
    """Top-left corners to try, best first: above (left end, right end), left (top, bottom), right,
    below, inside the top corners; then one row further out above and below."""
    x0, y0, x1, y1 = box
    return [(x0, y0 - h), (x1 - w, y0 - h),          # above
            (x0 - w, y0), (x0 - w, y1 - h),          # left
            (x1, y0), (x1, y1 - h),                  # right
            (x0, y1), (x1 - w, y1),                  # below
            (x0, y0), (x1 - w, y0),                  # inside, top corners
            (x0, y0 - 2 * h), (x1 - w, y0 - 2 * h), (x0, y1 + h), (x1 - w, y1 + h),  # a row further out
            (x0 - w, y0 - h), (x1, y0 - h), (x0 - w, y1), (x1, y1)]                # the outer corners


def place_badges(specs: Iterable[BadgeSpec], area: Rect, *, text: Iterable[Rect] = (),
                 ink: Callable[[Rect], float] | None = None) -> list[Rect]:
    """A rect for every badge, in the order given (give them in reading order).

    `area` is where badges may go (the image, the visible page); `text` the rects of page text that
    should stay readable; `ink(rect)` — optional — the share (0…1) of the rect covered by page
    content, for pictures where the page's pixels are at hand."""
    specs = list(specs)
    boxes, texts, placed = RectGrid(), RectGrid(), RectGrid()
    for s in specs:
        boxes.add(s.box)
    for t in text:
        if t[2] > t[0] and t[3] > t[1]:
            texts.add(t)
    out: list[Rect] = []
    ax0, ay0, ax1, ay1 = area
    for s in specs:
        w, h = s.width, s.height
        best, best_key = None, None
        for i, (x, y) in enumerate(candidates(s.box, w, h)):
            r = (x, y, x + w, y + h)
            if x < ax0 or y < ay0 or x + w > ax1 or y + h > ay1:
                continue
            badges = sum(overlap(r, o) for o in placed.hits(r))
            core = _shrunk(r)
            cost = TEXT_WEIGHT * sum(overlap(core, t) for t in texts.hits(core) if t != s.box)
            cost += BOX_WEIGHT * sum(overlap(core, o) for o in boxes.hits(core)
                                     if o != s.box and not contains(o, s.box))
            if s.own_text:
                cost += TEXT_WEIGHT * overlap(core, s.box)
            if ink is not None:
                cost += INK_WEIGHT * ink(r) * w * h
            if i in INSIDE:
                cost += INSIDE_COST * w * h
            elif i > INSIDE[-1]:
                cost += FAR_COST * w * h
            key = (badges > 0, badges, round(cost, 1), i)
            if best_key is None or key < best_key:
                best, best_key = r, key
        if best is None:  # a badge wider or taller than the area: its top-left corner, clipped
            x = min(max(s.box[0], ax0), max(ax0, ax1 - w))
            y = min(max(s.box[1], ay0), max(ay0, ay1 - h))
            best = (x, y, x + w, y + h)
        placed.add(best)
        out.append(best)
    return out


def text_colour(bg: tuple[int, int, int]) -> tuple[int, int, int]:
    """Black or white, whichever contrasts more with `bg` (WCAG relative luminance)."""
    def lin(c: int) -> float:
        v = c / 255
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4
    lum = 0.2126 * lin(bg[0]) + 0.7152 * lin(bg[1]) + 0.0722 * lin(bg[2])
    return (0, 0, 0) if (lum + 0.05) / 0.05 > 1.05 / (lum + 0.05) else (255, 255, 255)


def text_rects(snapshot, to_rect: Callable[[tuple[float, float, float, float]], Rect | None]) -> list[Rect]:
    """Rects (through `to_rect`, from a node's CSS-px bounds) of every rendered node in view that
    shows text of its own: labels, captions, headings, paragraphs."""
    out = []
    for n in snapshot.nodes():
        if n.text and n.text.strip() and n.rendered and n.visible_ratio > 0:
            r = to_rect(n.bounds)
            if r is not None:
                out.append(r)
    return out


def shows_own_text(node) -> bool:
    """Whether a badge inside this node's box would hide something it shows: its text, a value, a
    placeholder, or its name drawn as a caption (buttons, links, tabs …)."""
    if node.text and node.text.strip():
        return True
    if node.value not in (None, "") or node.redacted:
        return True
    if (node.attrs or {}).get("placeholder"):
        return True
    return bool(node.name) and node.role not in ("textbox", "searchbox", "combobox", "spinbutton", "checkbox",
                                                 "radio", "switch", "slider")
