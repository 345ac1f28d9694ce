"""Set-of-Mark: every interactive element boxed on the screenshot and tagged with its node ID.

Boxes come from the snapshot (top-level viewport CSS px, iframe content already offset) and are
mapped to image px with one scale factor. Each box is outlined in its role's colour; its ID sits
in a filled label placed where it does not cover another label (several positions are tried
around and inside the box, preferring blank background). Elements another element covers
(occluded) get a dashed grey-and-white outline and a grey label. A key strip appended below
the page names the colours in use.
"""

from __future__ import annotations

import functools
import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from PIL import Image, ImageDraw, ImageFilter, ImageFont, ImageStat

from engine.snapshot.vnode import VirtualNode
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
    box: Rect
    label: Rect
    colour: RGB  # outline colour actually drawn
    occluded: bool


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


def _overlap(a: Rect, b: Rect) -> int:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w * h if w > 0 and h > 0 else 0


def _contains(outer: Rect, inner: Rect) -> bool:
    return outer[0] <= inner[0] and outer[1] <= inner[1] and outer[2] >= inner[2] and outer[3] >= inner[3]


class _Grid:
    """Rects bucketed by a coarse grid: overlap queries stay cheap on pages with hundreds of marks."""

    def __init__(self, cell: int = 64):
        self.cell = cell
        self.cells: dict[tuple[int, int], list[Rect]] = {}

    def _keys(self, r: Rect):
        c = self.cell
        for gx in range(r[0] // c, (r[2] - 1) // c + 1):
            for gy in range(r[1] // c, (r[3] - 1) // c + 1):
                yield gx, gy

    def add(self, r: Rect) -> None:
        for k in self._keys(r):
            self.cells.setdefault(k, []).append(r)

    def hits(self, r: Rect) -> set[Rect]:
        return {o for k in self._keys(r) for o in self.cells.get(k, ()) if _overlap(r, o)}


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


def _candidates(box: Rect, w: int, h: int) -> list[tuple[tuple[int, int], int]]:
    """Label positions (top-left corner, tier), best first. Tier 0 touches the box: outside it
    (above, beside, below) so the element's own text stays readable, then inside its corners.
    Tier 1, one row further out, is used only when every tier-0 spot covers another mark."""
    x0, y0, x1, y1 = box
    near = [(x0, y0 - h), (x1 - w, y0 - h), (x0 - w, y0), (x1, y0), (x0, y1), (x1 - w, y1),
            (x0 - w, y1 - h), (x1, y1 - h), (x0, y0), (x1 - w, y0), (x0, y1 - h), (x1 - w, y1 - h)]
    far = [(x, y) for y in (y0 - 2 * h, y1 + h) for x in (x0, x1 - w, x0 - w, x1)]
    return [(p, 0) for p in near] + [(p, 1) for p in far]


class _Ink:
    """How much page content (contrast edges) lies under a rect: labels prefer blank background
    to covering text."""

    def __init__(self, image: Image.Image):
        self.edges = image.convert("L").filter(ImageFilter.FIND_EDGES).point(lambda v: 255 if v > 40 else 0)

    def cost(self, r: Rect) -> int:
        """0 for (nearly) blank background, else the share of edge pixels in tenths (1…10). The
        rim is left out: a label may touch the border of the box it names."""
        x0, y0, x1, y1 = r
        inner = (x0 + 2, y0 + 2, x1 - 2, y1 - 2) if x1 - x0 > 6 and y1 - y0 > 6 else r
        frac = ImageStat.Stat(self.edges.crop(inner)).mean[0] / 255
        return 0 if frac < 0.04 else math.ceil(frac * 10)


def _place(box: Rect, w: int, h: int, size: tuple[int, int], labels: _Grid, boxes: _Grid, ink: _Ink) -> Rect:
    """The best candidate inside the image: covering no placed label comes first (else the least
    label overlap), then covering no other element's box, then staying next to the box, then
    blank background, then the order of `_candidates`."""
    W, H = size
    best, best_key = None, None
    for i, ((x, y), tier) in enumerate(_candidates(box, w, h)):
        if x < 0 or y < 0 or x + w > W or y + h > H:
            continue
        r = (x, y, x + w, y + h)
        covered = sum(_overlap(r, o) for o in labels.hits(r))
        others = sum(1 for o in boxes.hits(r) if o != box and not _contains(o, box))
        key = (covered, others, tier, ink.cost(r), i)
        if best_key is None or key < best_key:
            best, best_key = r, key
    return best if best is not None else (0, 0, min(W, w), min(H, h))  # a label wider than the image


def _text_colour(bg: RGB) -> RGB:
    """Black or white, whichever contrasts more with `bg` (WCAG relative luminance)."""
    def lin(c: int) -> float:
        c = c / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    lum = 0.2126 * lin(bg[0]) + 0.7152 * lin(bg[1]) + 0.0722 * lin(bg[2])
    return (0, 0, 0) if (lum + 0.05) / 0.05 > 1.05 / (lum + 0.05) else (255, 255, 255)


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
    for (x, y), (_, colour, text, dashed) in zip(pos, items):
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
    lw = max(2, round(2 * scale))
    font = _font(unit)
    tb = font.getbbox("0123456789f_")  # digits, letters and an underscore's descent
    padx, pady = max(2, unit // 4), max(2, unit // 6)
    lab_h = tb[3] - tb[1] + 2 * pady

    # boxes first, so labels can avoid every element, not only those placed before them
    placed: list[tuple[VirtualNode, Rect]] = []
    boxes = _Grid()
    for n in _select(snapshot, nodes):
        r = _to_image(n.bounds, scale, size)
        if r is not None:
            placed.append((n, r))
            boxes.add(r)
    placed.sort(key=lambda t: (t[1][1], t[1][0]))  # reading order

    labels, ink = _Grid(), _Ink(image)
    marks: list[Mark] = []
    for n, box in placed:
        lab = _place(box, int(math.ceil(font.getlength(n.node_id))) + 2 * padx, lab_h, size, labels, boxes, ink)
        labels.add(lab)
        group = role_group(n.role)
        colour = OCCLUDED_COLOUR if n.occluded else ROLE_GROUPS[group][1]
        marks.append(Mark(n.node_id, n.role, group, box, lab, colour, n.occluded))

    tint = Image.new("RGBA", size, (0, 0, 0, 0))
    td = ImageDraw.Draw(tint)
    for m in marks:
        td.rectangle((m.box[0], m.box[1], m.box[2] - 1, m.box[3] - 1), fill=m.colour + (FILL_ALPHA,))
    out = Image.alpha_composite(image.convert("RGBA"), tint).convert("RGB")
    d = ImageDraw.Draw(out)
    # covered elements first, so a visible element's outline is never drawn over by them; a
    # white halo just outside each solid outline keeps it visible on dark backgrounds
    order = sorted(marks, key=lambda m: not m.occluded)
    for m in order:
        if m.occluded:
            _dashed_rect(d, m.box, (m.colour, WHITE), lw, max(4, 3 * lw))
        else:
            d.rectangle((m.box[0] - 1, m.box[1] - 1, m.box[2], m.box[3]), outline=WHITE, width=1)
    for m in order:
        if not m.occluded:
            d.rectangle((m.box[0], m.box[1], m.box[2] - 1, m.box[3] - 1), outline=m.colour, width=lw)
    for m in marks:
        lab = m.label
        if _overlap((lab[0] - 1, lab[1] - 1, lab[2] + 1, lab[3] + 1), m.box) == 0:  # detached: lead to the box
            cx = min(max((lab[0] + lab[2]) // 2, m.box[0]), m.box[2] - 1)
            cy = min(max((lab[1] + lab[3]) // 2, m.box[1]), m.box[3] - 1)
            d.line(((lab[0] + lab[2]) // 2, (lab[1] + lab[3]) // 2, cx, cy), fill=m.colour, width=1)
        d.rectangle((lab[0], lab[1], lab[2] - 1, lab[3] - 1), fill=m.colour, outline=WHITE)
        d.text((lab[0] + padx, lab[1] + pady - tb[1]), m.node_id, font=font, fill=_text_colour(m.colour))

    key = None
    if legend and marks:
        strip = _legend_strip(size[0], marks, _font(max(10, unit - 1)), unit, max(1, lw - 1))
        framed = Image.new("RGB", (size[0], size[1] + strip.height), WHITE)
        framed.paste(out, (0, 0))
        framed.paste(strip, (0, size[1]))
        out, key = framed, (0, size[1], size[0], size[1] + strip.height)
    return SomResult(image=out, marks=marks, scale=scale, legend=key)


async def som_image(tab, snapshot=None, *, full_res: bool = True, legend: bool = True) -> SomResult:
    """Snapshot (unless given) and screenshot the viewport, and draw the marks.

    `full_res=True` draws on a PNG at 1 image px per CSS px; False on the ≤ 1024 px JPEG payload
    (what a model is sent)."""
    snap = snapshot if snapshot is not None else await tab.snapshot()
    if full_res:
        data, vv = await grab_viewport(tab, fmt="png", css_scale=1.0)
        img = Image.open(io.BytesIO(data))
        img.load()
        scale = img.width / float(vv["clientWidth"])
    else:
        shot = await capture_screenshot(tab)
        img, scale = shot.image(), shot.scale
    return draw_som(img, snap, scale=scale, legend=legend)


async def som_png(tab, path: str | Path, snapshot=None, *, full_res: bool = True) -> SomResult:
    """`som_image` written to `path` as a PNG; returns the result (marks, scale, image)."""
    res = await som_image(tab, snapshot, full_res=full_res)
    res.save(path)
    return res
