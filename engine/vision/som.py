"""Set-of-Mark: every interactive element boxed on the screenshot and tagged with its node ID.

Boxes come from the snapshot (top-level viewport CSS px, iframe content already offset) and are
mapped to image px with one scale factor. Each box is outlined in its role's colour — a link that
wraps onto several lines one box per line — and its ID sits in a filled badge attached to it
(`engine.vision.badges`): outside the box where there is room, else in a smaller font in a corner
of the box that holds no words (dense grids: calendars, tables), never on another badge, never
equally near a neighbour's box, and where it can be helped not over another element, a label, the
box's own words or page ink. Elements another element covers (occluded) get a dashed grey-and-white
outline and a grey badge where one fits beside them without covering another element, else none.
A key strip appended below the page names the colours in use.
"""

from __future__ import annotations

import functools
import io
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image, ImageDraw, ImageFilter, ImageFont, ImageStat

from engine.browser.target import HasTarget, PageTarget
from engine.snapshot.dom_snapshot import DomSnapshot
from engine.snapshot.vnode import VirtualNode
from engine.vision.badges import (
    BadgeSpec,
    line_boxes,
    overlap,
    own_words,
    place_badges,
    shown_bounds,
    text_colour,
    text_rects,
    words_rect,
)
from engine.vision.screenshot import capture_screenshot, grab_viewport

Rect = tuple[int, int, int, int]  # x0, y0, x1, y1 in image px, end exclusive
RGB = tuple[int, int, int]

# role group → (roles, outline colour, legend text); the colours are far apart in hue
ROLE_GROUPS: dict[str, tuple[tuple[str, ...], RGB, str]] = {
    "button": (("button",), (220, 38, 38), "button"),
    "link": (("link",), (37, 99, 235), "link"),
    "text": (("textbox", "searchbox", "spinbutton"), (22, 163, 74), "text field"),
    "toggle": (("checkbox", "radio", "switch"), (234, 130, 12), "checkbox / radio"),
    "choice": (("combobox", "listbox", "option", "select"), (147, 51, 234), "select / option"),
    "menu": (("tab", "menuitem", "menuitemcheckbox", "menuitemradio", "treeitem"), (13, 148, 136), "tab / menu item"),
    "other": ((), (219, 39, 170), "other clickable"),
}
OCCLUDED_COLOUR: RGB = (100, 100, 110)
WHITE: RGB = (255, 255, 255)
_GROUP_OF = {role: g for g, (roles, _, _) in ROLE_GROUPS.items() for role in roles}

FONT_PATHS = ("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
              "/usr/share/fonts/dejavu/DejaVuSans-Bold.ttf")
FILL_ALPHA = 26  # box tint: enough to see the box, light enough to read the page through it


def role_group(role: str) -> str:
    """The colour group of an ARIA role ("other" when it has no group of its own)."""
    return _GROUP_OF.get(role or "", "other")


@dataclass(frozen=True)
class Mark:
    """One placed mark, in image px (so tests and the GUI can check and hit-test geometry)."""

    node_id: str
    role: str
    group: str
    box: Rect  # the whole element (the union of its lines)
    label: Rect | None  # the badge; None: an occluded element with no free spot for one
    colour: RGB  # outline colour actually drawn
    occluded: bool
    lines: tuple[Rect, ...] = ()  # a wrapped element's line boxes (two or more), each outlined
    small: bool = False  # the badge is drawn in the small font (a dense grid)

    @property
    def parts(self) -> tuple[Rect, ...]:
        """The boxes drawn for this element: its lines, or its one box."""
        return self.lines or (self.box,)


@dataclass
class SomResult:
    """The drawn image, the marks in reading order, the CSS→image scale and the legend's rect."""

    image: Image.Image
    marks: list[Mark]
    scale: float
    legend: Rect | None = None  # the key strip below the page, when drawn
    by_id: dict[str, Mark] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.by_id = {m.node_id: m for m in self.marks}

    def mark(self, node_id: str) -> Mark | None:
        return self.by_id.get(node_id)

    def png(self) -> bytes:
        buf = io.BytesIO()
        self.image.save(buf, "PNG")
        return buf.getvalue()

    def save(self, path: str | Path) -> Path:
        p = Path(path)
        p.write_bytes(self.png())
        return p


@functools.lru_cache(maxsize=16)
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    for path in FONT_PATHS:
        if Path(path).exists():
            return ImageFont.truetype(path, size)
    return ImageFont.load_default(size=size)


def _select(snapshot, nodes: Iterable[VirtualNode] | None) -> list[VirtualNode]:
    if nodes is not None:
        return list(nodes)
    # rendered, interactive, and some part inside the viewport and its clipping ancestors
    return [n for n in snapshot.nodes() if n.interactive and n.rendered and n.visible_ratio > 0]


def _to_image(bounds: tuple[float, float, float, float], scale: float, size: tuple[int, int]) -> Rect | None:
    x, y, w, h = bounds
    if w <= 0 or h <= 0:
        return None
    r = (max(0, math.floor(x * scale)), max(0, math.floor(y * scale)),
         min(size[0], math.ceil((x + w) * scale)), min(size[1], math.ceil((y + h) * scale)))
    return r if r[2] - r[0] >= 1 and r[3] - r[1] >= 1 else None


class Ink:
    """Page content (contrast edges) on a picture of the page: how much of it lies under a badge's
    spot (badges prefer blank background), and where inside a box the page draws its words."""

    RIM = 3  # px of a box's edge left out when measuring its words: its border, its focus ring
    MARGIN = (1, 3)  # px kept around measured words: left and right, above and below

    def __init__(self, image: Image.Image):
        self.edges = image.convert("L").filter(ImageFilter.FIND_EDGES).point(lambda v: 255 if v > 40 else 0)

    def share(self, r) -> float:
        """0 for (nearly) blank background, else the share of edge pixels (0…1). The rim is left out:
        a badge may touch the border of the box it names."""
        x0, y0, x1, y1 = (int(round(v)) for v in r)
        inner = (x0 + 2, y0 + 2, x1 - 2, y1 - 2) if x1 - x0 > 6 and y1 - y0 > 6 else (x0, y0, x1, y1)
        frac = ImageStat.Stat(self.edges.crop(inner)).mean[0] / 255
        return 0.0 if frac < 0.12 else frac  # a border line or two is not content

    def words(self, r) -> tuple[int, int, int, int] | None:
        """The part of box `r` the page draws on inside its rim (its words, an icon), or None when
        it is blank there: the box's text as drawn, where the snapshot has no text box."""
        x0, y0, x1, y1 = (int(round(v)) for v in r)
        bx0, by0, bx1, by1 = x0, y0, x1, y1
        rim = self.RIM if x1 - x0 > 4 * self.RIM and y1 - y0 > 4 * self.RIM else 0
        x0, y0 = max(0, x0 + rim), max(0, y0 + rim)
        x1, y1 = min(self.edges.width, x1 - rim), min(self.edges.height, y1 - rim)
        if x1 <= x0 or y1 <= y0:
            return None
        bb = self.edges.crop((x0, y0, x1, y1)).getbbox()
        if bb is None:
            return None
        m, mv = self.MARGIN  # the glyphs' whole line: accents above, descenders below, a pixel of air
        return (max(bx0, x0 + bb[0] - m), max(by0, y0 + bb[1] - mv),  # never beyond the box itself
                min(bx1, x0 + bb[2] + m), min(by1, y0 + bb[3] + mv))


def _dashed_rect(d: ImageDraw.ImageDraw, r: Rect, colours: tuple[RGB, RGB], width: int, dash: int) -> None:
    """Outline `r` (inside it) with dashes alternating between two colours: one of them always
    stands out, whether the page behind is light or dark."""
    x0, y0, x1, y1 = r[0], r[1], r[2] - 1, r[3] - 1
    for a, b, horizontal, fixed in ((x0, x1, True, y0), (x0, x1, True, y1 - width + 1),
                                    (y0, y1, False, x0), (y0, y1, False, x1 - width + 1)):
        for i, s in enumerate(range(a, b + 1, dash)):
            e = min(s + dash - 1, b)
            seg = (s, fixed, e, fixed + width - 1) if horizontal else (fixed, s, fixed + width - 1, e)
            d.rectangle(seg, fill=colours[i % 2])


def _legend_entries(marks: list[Mark]) -> list[tuple[RGB, str, bool]]:
    groups = {m.group for m in marks if not m.occluded}
    rows = [(c, text, False) for g, (_, c, text) in ROLE_GROUPS.items() if g in groups]
    if any(m.occluded for m in marks):
        rows.append((OCCLUDED_COLOUR, "covered by another element", True))
    return rows


def _legend_strip(width: int, marks: list[Mark], font, unit: int, lw: int) -> Image.Image:
    """A key for the colours in use, laid out in rows on a white strip `width` px wide."""
    pad, sw = max(4, unit // 2), unit
    line = max(font.getbbox("Ag")[3], sw) + pad
    head = f"{len(marks)} marks:"
    items: list[tuple[int, RGB | None, str, bool]] = [(int(font.getlength(head)), None, head, False)]
    items += [(sw + pad // 2 + int(font.getlength(t)), c, t, dashed) for c, t, dashed in _legend_entries(marks)]
    pos, x, y = [], pad, pad
    for it in items:
        if x > pad and x + it[0] > width - pad:
            x, y = pad, y + line
        pos.append((x, y))
        x += it[0] + 2 * pad
    strip = Image.new("RGB", (width, y + line), WHITE)
    d = ImageDraw.Draw(strip)
    d.line((0, 0, width, 0), fill=(150, 150, 150))
    for (x, y), (_, colour, text, dashed) in zip(pos, items, strict=True):
        if colour is not None:
            sq = (x, y, x + sw, y + sw)
            if dashed:
                _dashed_rect(d, sq, (colour, WHITE), lw, max(2, sw // 4))
            else:
                tinted = tuple(255 - (255 - c) * FILL_ALPHA // 255 for c in colour)  # as a box looks on white
                d.rectangle((sq[0], sq[1], sq[2] - 1, sq[3] - 1), fill=tinted, outline=colour, width=lw)
            x += sw + pad // 2
        d.text((x, y + sw / 2), text, font=font, fill=(30, 30, 30), anchor="lm")
    return strip


def draw_som(image: Image.Image, snapshot, *, scale: float | None = None,
             nodes: Iterable[VirtualNode] | None = None, legend: bool = True) -> SomResult:
    """Draw a Set-of-Mark overlay on a screenshot of `snapshot`'s viewport (the image is not changed).

    `scale` is image px per CSS px (default: image width / viewport width), so the same call
    works on a device-px PNG and on a downscaled JPEG payload. `nodes` overrides the default
    selection (every rendered interactive node with some part in view). With `legend`, a key
    strip is appended below the page (the page area keeps its size and coordinates)."""
    if scale is None:
        vw = snapshot.context.viewport.width
        if vw <= 0:
            raise ValueError("The snapshot has no viewport width; pass scale= explicitly.")
        scale = image.width / vw
    size = image.size
    unit = max(10, round(12 * scale))  # label font px: 12 per CSS px, never below 10 image px
    small_unit = max(8, round(9 * scale))  # the small badges of dense grids
    lw = max(2, round(2 * scale))
    font, small_font = _font(unit), _font(small_unit)
    tb = font.getbbox("0123456789f_")  # digits, letters and an underscore's descent
    padx, pady = max(2, unit // 4), max(2, unit // 6)
    lab_h = tb[3] - tb[1] + 2 * pady
    spadx, spady = 2, 1

    def to_img(b):
        return _to_image(b, scale, size)

    placed: list[tuple[VirtualNode, Rect, tuple[Rect, ...]]] = []
    for n in _select(snapshot, nodes):
        r = to_img(shown_bounds(n))
        if r is None:
            continue
        lines = tuple(x for x in (to_img(b) for b in line_boxes(n)) if x is not None)
        placed.append((n, r, lines if len(lines) >= 2 else ()))
    placed.sort(key=lambda t: (t[1][1], t[1][0]))  # reading order

    def small_size(node_id: str) -> tuple[float, float]:
        sb = small_font.getbbox(node_id)
        return int(math.ceil(small_font.getlength(node_id))) + 2 * spadx, sb[3] - sb[1] + 2 * spady

    ink = Ink(image)
    specs = []
    for n, box, lines in placed:
        words = own_words(n)
        own = tuple(t for t in (words_rect(b, words, to_img, ink.words) for b in line_boxes(n))
                    if t is not None) if words else ()
        specs.append(BadgeSpec((lines or (box,))[0], int(math.ceil(font.getlength(n.node_id))) + 2 * padx, lab_h,
                               small=small_size(n.node_id), text=own, occluded=n.occluded, parts=lines or (box,)))
    spots = place_badges(specs, (0, 0, size[0], size[1]), ink=ink.share, inset=lw / 2,
                         text=text_rects(snapshot, to_img, ink.words))
    marks: list[Mark] = []
    for (n, box, lines), spec, spot in zip(placed, specs, spots, strict=True):
        lab = None if spot is None else (int(round(spot[0])), int(round(spot[1])),
                                         int(round(spot[2])), int(round(spot[3])))
        small = spot is not None and spec.small is not None and spot[3] - spot[1] == spec.small[1] != lab_h
        group = role_group(n.role)
        colour = OCCLUDED_COLOUR if n.occluded else ROLE_GROUPS[group][1]
        marks.append(Mark(n.node_id, n.role, group, box, lab, colour, n.occluded, lines, small))

    tint = Image.new("RGBA", size, (0, 0, 0, 0))
    td = ImageDraw.Draw(tint)
    for m in marks:
        for r in m.parts:
            td.rectangle((r[0], r[1], r[2] - 1, r[3] - 1), fill=m.colour + (FILL_ALPHA,))
    out = Image.alpha_composite(image.convert("RGBA"), tint).convert("RGB")
    d = ImageDraw.Draw(out)
    # covered elements first, so a visible element's outline is never drawn over by them; a
    # white halo just outside each solid outline keeps it visible on dark backgrounds
    order = sorted(marks, key=lambda m: not m.occluded)
    for m in order:
        for r in m.parts:
            if m.occluded:
                _dashed_rect(d, r, (m.colour, WHITE), lw, max(4, 3 * lw))
            else:
                d.rectangle((r[0] - 1, r[1] - 1, r[2], r[3]), outline=WHITE, width=1)
    for m in order:
        if not m.occluded:
            for r in m.parts:
                d.rectangle((r[0], r[1], r[2] - 1, r[3] - 1), outline=m.colour, width=lw)
    for m in marks:
        lab = m.label
        if lab is None:
            continue
        anchor = m.parts[0]
        if overlap((lab[0] - 1, lab[1] - 1, lab[2] + 1, lab[3] + 1), anchor) == 0:  # detached: lead to the box
            cx = min(max((lab[0] + lab[2]) // 2, anchor[0]), anchor[2] - 1)
            cy = min(max((lab[1] + lab[3]) // 2, anchor[1]), anchor[3] - 1)
            d.line(((lab[0] + lab[2]) // 2, (lab[1] + lab[3]) // 2, cx, cy), fill=m.colour, width=1)
        d.rectangle((lab[0], lab[1], lab[2] - 1, lab[3] - 1), fill=m.colour, outline=WHITE)
        if m.small:
            sb = small_font.getbbox(m.node_id)
            d.text((lab[0] + spadx, lab[1] + spady - sb[1]), m.node_id, font=small_font, fill=text_colour(m.colour))
        else:
            d.text((lab[0] + padx, lab[1] + pady - tb[1]), m.node_id, font=font, fill=text_colour(m.colour))

    key = None
    if legend and marks:
        strip = _legend_strip(size[0], marks, _font(max(10, unit - 1)), unit, max(1, lw - 1))
        framed = Image.new("RGB", (size[0], size[1] + strip.height), WHITE)
        framed.paste(out, (0, 0))
        framed.paste(strip, (0, size[1]))
        out, key = framed, (0, size[1], size[0], size[1] + strip.height)
    return SomResult(image=out, marks=marks, scale=scale, legend=key)


async def som_image(page: PageTarget | HasTarget, snapshot: DomSnapshot, *, full_res: bool = True,
                    legend: bool = True) -> SomResult:
    """Screenshot the viewport and draw the marks of `snapshot` (taken of this page just before) on it.

    `full_res=True` draws on a PNG at 1 image px per CSS px; False on the ≤ 1024 px JPEG payload
    (what a model is sent)."""
    if full_res:
        data, vv = await grab_viewport(page, fmt="png", css_scale=1.0)
        img: Image.Image = Image.open(io.BytesIO(data))
        img.load()
        scale = img.width / float(vv["clientWidth"])
    else:
        shot = await capture_screenshot(page)
        img, scale = shot.image(), shot.scale
    return draw_som(img, snapshot, scale=scale, legend=legend)


async def som_png(page: PageTarget | HasTarget, path: str | Path, snapshot: DomSnapshot, *,
                  full_res: bool = True) -> SomResult:
    """`som_image` written to `path` as a PNG; returns the result (marks, scale, image)."""
    res = await som_image(page, snapshot, full_res=full_res)
    res.save(path)
    return res
