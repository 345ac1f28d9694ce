"""Where a Set-of-Mark ID badge goes: on or next to its own box, without hiding what a person reads.

One placement for the stored pictures (`engine.vision.som`) and the live overlay of the window
(`gui.page.overlay`), in whatever units the caller draws in (image px, widget px), so badges keep
the size of their font at any zoom and only their positions are computed.

Each badge gets the best of its candidate spots, ranked by what the spot would do wrong, worst first:
cover a badge already placed; be ambiguous (not attached to its own box — inside it or touching it —
or facing a neighbour's box about as much as its own, as a badge on the line between two calendar
rows does); cover another element's box; cover words (text boxes of the snapshot, an estimate of
where a box's own words are drawn, and — in pictures — page ink). Only then the badge's size (a
normal badge before a small one: small badges are for dense grids, tucked into a corner of their own
box that holds no words) and the remaining cost. Spots are tried in reading order: above (left end,
right end), left, right, below, inside the corners; a row further out last.

A box fully covered by another element (occluded) gets its badge only on a spot attached to its box
that covers no other element's box and no badge; otherwise none (its outline and hover card stay).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

Rect = tuple[float, float, float, float]  # x0, y0, x1, y1; x1/y1 exclusive

# weights of what a badge may cover, per px²
TEXT_WEIGHT = 1.0
BOX_WEIGHT = 0.6
OCCLUDED_BOX_WEIGHT = 0.2  # the box of an element another one covers: what shows there is the cover
INK_WEIGHT = 0.5
# a spot inside the box, or a row away from it, costs this share of the badge's area even when it
# covers nothing: outside and touching the box reads best, where there is room
INSIDE_COST = 0.15
FAR_COST = 0.3
EDGE = 1.0    # overlaps thinner than this (a shared border, a line box's half-leading) do not count
NEAR = 3.0    # a neighbour's box this close to a badge faces it (px)
FACING = 0.5  # ambiguous: a neighbour faces the badge at least this share as much as its own box does
TEXT_SHARE = 0.02  # a spot covers words when this share of the badge lies on (measured or estimated) text
LINE = 17.0   # CSS px: the height of one line of ordinary (14–16 px) text, its content box


@dataclass(frozen=True)
class BadgeSpec:
    """One badge to place.

    `box` is where the badge attaches (a wrapped link's first line); `parts` every box of the element
    (its line boxes; default `box`) — what other badges must not cover. `small` is the size of the
    badge in its small font, tried where a normal badge has no clean spot. `text` are the rects where
    the box's own words are drawn (or estimated to be), which a badge inside the box would hide."""

    box: Rect
    width: float
    height: float
    small: tuple[float, float] | None = None
    text: tuple[Rect, ...] = ()
    occluded: bool = False
    parts: tuple[Rect, ...] = ()


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


def facing(a: Rect, b: Rect, near: float = NEAR) -> float:
    """How long an edge of `a` faces `b` across a gap of at most `near` (0 when they meet only at a
    corner or are further apart); rects that overlap face each other over their whole shared span."""
    gx = max(b[0] - a[2], a[0] - b[2])  # negative: the x spans overlap by that much
    gy = max(b[1] - a[3], a[1] - b[3])
    if gx < -EDGE and gy < -EDGE:
        return max(-gx, -gy)
    if gx <= near and gy < -EDGE:
        return -gy
    if gy <= near and gx < -EDGE:
        return -gx
    return 0.0


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

    def near(self, r: Rect, by: float) -> set[Rect]:
        """Rects within `by` of `r` (touching or overlapping it included)."""
        g = (r[0] - by, r[1] - by, r[2] + by, r[3] + by)
        return {o for k in self._keys(g) for o in self.cells.get(k, ()) if overlap(g, o)}


# candidate kinds: attached outside, inside, detached (a row further out)
OUT, IN, FAR = 0, 1, 2


def candidates(box: Rect, w: float, h: float, inset: float = 0.0) -> list[tuple[float, float, int]]:
    """Top-left corners to try with their kind, best first: above (left end, right end), left (top,
    bottom), right, below, inside the corners (`inset` from the edge); then detached spots one row
    further out."""
    x0, y0, x1, y1 = box
    i = inset
    return [(x0, y0 - h, OUT), (x1 - w, y0 - h, OUT),            # above
            (x0 - w, y0, OUT), (x0 - w, y1 - h, OUT),            # left
            (x1, y0, OUT), (x1, y1 - h, OUT),                    # right
            (x0, y1, OUT), (x1 - w, y1, OUT),                    # below
            (x0 + i, y0 + i, IN), (x1 - w - i, y0 + i, IN),      # inside, top corners
            (x0 + i, y1 - h - i, IN), (x1 - w - i, y1 - h - i, IN),  # inside, bottom corners
            (x0, y0 - 2 * h, FAR), (x1 - w, y0 - 2 * h, FAR), (x0, y1 + h, FAR), (x1 - w, y1 + h, FAR),
            (x0 - w, y0 - h, FAR), (x1, y0 - h, FAR), (x0 - w, y1, FAR), (x1, y1, FAR)]


@dataclass
class _World:
    boxes: RectGrid
    occluded_boxes: set[Rect]
    texts: RectGrid
    placed: RectGrid
    ink: Callable[[Rect], float] | None


def _judge(s: BadgeSpec, r: Rect, kind: int, world: _World) -> tuple[float, bool, float, float, float]:
    """(area of badges covered, ambiguous, box area covered, text share, cost) of badge rect `r`,
    page ink left out (`_key` adds it)."""
    w, h = r[2] - r[0], r[3] - r[1]
    area = w * h
    badges = sum(overlap(r, o) for o in world.placed.hits(r))
    core = _shrunk(r)
    own_parts = set(s.parts) | {s.box}
    boxes = 0.0
    cost = 0.0
    own_face = facing(r, s.box, EDGE) if kind != IN else max(w, h)
    other_face = 0.0
    for o in world.boxes.near(r, NEAR):
        if o in own_parts or (contains(o, s.box) and not s.occluded):
            continue  # the element itself, or a box around it (a row around its cell; not the cover of a covered one)
        if o in world.occluded_boxes:
            cost += OCCLUDED_BOX_WEIGHT * overlap(core, o)
            continue
        covered = overlap(core, o)
        boxes += covered
        cost += BOX_WEIGHT * covered
        if kind != IN or covered:
            other_face = max(other_face, facing(r, o))
    ambiguous = kind == FAR or own_face <= 0 or other_face >= FACING * own_face
    text = sum(overlap(r, t) for t in world.texts.hits(r))  # words: not even an edge of them
    if kind == IN:
        text += sum(overlap(r, t) for t in s.text)
    cost += TEXT_WEIGHT * text
    share = text / area
    if kind == IN:
        cost += INSIDE_COST * area
    elif kind == FAR:
        cost += FAR_COST * area
    return badges, ambiguous, boxes, share, cost


def _key(badges: float, ambiguous: bool, boxes: float, share: float, cost: float, small: int, i: int) -> tuple:
    """How bad a spot is, worst things first (see the module text): a clean spot takes the normal size
    first; on words anyway, whichever hides the smallest share of itself (a normal badge grazing a
    line of words before a small one sitting on it)."""
    wordy = share > TEXT_SHARE
    return (badges > 0, ambiguous, boxes > 0, wordy, round(share, 2) if wordy else 0,
            0 if wordy else small, round(badges, 1), round(cost, 1), small, i)


def place_badges(specs: Iterable[BadgeSpec], area: Rect, *, text: Iterable[Rect] = (),
                 ink: Callable[[Rect], float] | None = None, inset: float = 1.0) -> list[Rect | None]:
    """A rect for every badge, in the order given (give them in reading order); None for an occluded
    element's badge that has no spot of its own (see the module text).

    `area` is where badges may go (the image, the visible page); `text` the rects of page text that
    should stay readable; `ink(rect)` — optional — the share (0…1) of the rect covered by page
    content, for pictures where the page's pixels are at hand; `inset` how far a badge inside its box
    keeps from the box's edge (its outline). A badge's size tells which font it is drawn in: the
    spec's `small` size when it equals that."""
    specs = list(specs)
    world = _World(RectGrid(), set(), RectGrid(), RectGrid(), ink)
    for s in specs:
        for part in s.parts or (s.box,):
            world.boxes.add(part)
            if s.occluded:
                world.occluded_boxes.add(part)
    for t in text:
        if t[2] > t[0] and t[3] > t[1]:
            world.texts.add(t)
    out: list[Rect | None] = [None] * len(specs)
    ax0, ay0, ax1, ay1 = area
    # elements one can see first: an occluded element's badge takes what is left
    for idx in sorted(range(len(specs)), key=lambda i: specs[i].occluded):
        s = specs[idx]
        sizes = [(s.width, s.height, 0)] + ([(s.small[0], s.small[1], 1)] if s.small else [])
        best, best_key = None, None
        for w, h, small in sizes:
            for i, (x, y, kind) in enumerate(candidates(s.box, w, h, inset)):
                r = (x, y, x + w, y + h)
                if x < ax0 or y < ay0 or x + w > ax1 or y + h > ay1:
                    continue
                badges, ambiguous, boxes, share, cost = _judge(s, r, kind, world)
                if s.occluded and (badges > 0 or boxes > 0 or kind == FAR):
                    continue  # never over another element, never loose
                key = _key(badges, ambiguous, boxes, share, cost, small, i)
                if best_key is not None and key >= best_key:
                    continue  # page ink only makes a spot worse: no need to look at the pixels
                if world.ink is not None and (inked := world.ink(r)) > 0:
                    key = _key(badges, ambiguous, boxes, max(share, inked), cost + INK_WEIGHT * inked * w * h,
                               small, i)
                if best_key is None or key < best_key:
                    best, best_key = r, key
        if best is None and not s.occluded:  # a badge wider or taller than the area: its top-left corner
            w, h = s.small or (s.width, s.height)
            x = min(max(s.box[0], ax0), max(ax0, ax1 - w))
            y = min(max(s.box[1], ay0), max(ay0, ay1 - h))
            best = (x, y, x + w, y + h)
        if best is not None:
            world.placed.add(best)
        out[idx] = best
    return out


def text_colour(bg: tuple[int, int, int]) -> tuple[int, int, int]:
    """Black or white, whichever contrasts more with `bg` (WCAG relative luminance)."""
    def lin(c: int) -> float:
        v = c / 255
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4
    lum = 0.2126 * lin(bg[0]) + 0.7152 * lin(bg[1]) + 0.0722 * lin(bg[2])
    return (0, 0, 0) if (lum + 0.05) / 0.05 > 1.05 / (lum + 0.05) else (255, 255, 255)


Bounds = tuple[float, float, float, float]  # x, y, w, h in CSS px (a node's bounds)


def text_extent(bounds: Bounds, text: str) -> Bounds:
    """Where a box's own words are drawn, estimated from its size and the length of its text (the
    snapshot has no text boxes): text that fits on one line (~7.5 px a character, 14–16 px type) is a
    band one line high through the middle of the box, as wide as the box (the alignment is unknown) —
    cells, buttons and fields centre their line or pad it evenly; longer text fills the whole box."""
    x, y, w, h = bounds
    if h <= LINE + 2 or len(text.strip()) * 7.5 > w:
        return bounds
    return (x, y + (h - LINE) / 2, w, LINE)


def line_boxes(node) -> list[Bounds]:
    """The boxes an element is drawn in: one per line of a wrapped inline element (its `line_rects`,
    when the snapshot has them), else its bounds."""
    lines = getattr(node, "line_rects", None)
    if lines and len(lines) >= 2:
        return [tuple(r) for r in lines if r[2] > 0 and r[3] > 0] or [shown_bounds(node)]
    return [shown_bounds(node)]


def shown_bounds(node) -> Bounds:
    """Where the element can be seen: its bounds cut by the scroll areas around it (`visible_bounds`,
    when the snapshot has it), else its bounds."""
    return getattr(node, "visible_bounds", None) or node.bounds


def own_words(node) -> str | None:
    """The words a node draws in its own box (its text, value, placeholder, or its name drawn as a
    caption), or None when a badge inside it hides nothing of it. A secret's value counts as words
    (its dots), never read."""
    if node.text and node.text.strip():
        return node.text
    if node.redacted:
        return "••••••••"
    if node.value not in (None, ""):
        return str(node.value)
    if ph := (node.attrs or {}).get("placeholder"):
        return str(ph)
    if node.name and node.role not in ("textbox", "searchbox", "combobox", "spinbutton", "checkbox",
                                       "radio", "switch", "slider"):
        return node.name
    return None


def shows_own_text(node) -> bool:
    """Whether a badge inside this node's box would hide something it shows: its text, a value, a
    placeholder, or its name drawn as a caption (buttons, links, tabs …)."""
    return own_words(node) is not None


Measure = Callable[[Rect], "Rect | None"]  # a box → the part of it the page draws on (None: blank)


def words_rect(bounds: Bounds, words: str, to_rect: Callable[[Bounds], Rect | None],
               measure: Measure | None = None) -> Rect | None:
    """Where the words `words` of a box with CSS-px `bounds` are, through `to_rect`: measured on the
    page's pixels when `measure` is given and finds them, else estimated (`text_extent`)."""
    if measure is not None:
        full = to_rect(bounds)
        got = measure(full) if full is not None else None
        if got is not None:
            return got
        # blank there on the pixels at hand (a frame older than the snapshot, words the colour of the
        # background): the estimate, so as not to take a box with words for an empty one
    return to_rect(text_extent(bounds, words))


def text_rects(snapshot, to_rect: Callable[[Bounds], Rect | None], measure: Measure | None = None,
               nodes: Sequence | None = None) -> list[Rect]:
    """Rects (through `to_rect`, from CSS-px bounds) of the words of every rendered node in view that
    shows text of its own — labels, captions, headings, paragraphs, cells — line by line for a
    wrapped inline element; measured on the pixels with `measure`, else estimated (`words_rect`)."""
    out = []
    for n in (snapshot.nodes() if nodes is None else nodes):
        if n.text and n.text.strip() and n.rendered and n.visible_ratio > 0:
            for b in line_boxes(n):
                r = words_rect(b, n.text, to_rect, measure)
                if r is not None:
                    out.append(r)
    return out
