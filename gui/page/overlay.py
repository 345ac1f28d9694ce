"""The Set-of-Mark layer of the live page view: boxes, ID badges, highlights and hover text,
painted with Qt over the screencast frame (nothing is injected into the page).

Badges keep one size on screen whatever the page's zoom (a preset scaled into the panel), so
they are placed in widget px, with the same placement as the stored pictures
(`engine.vision.badges`): attached to their own box — outside it where there is room, else in a
smaller font in a corner of the box that holds no words (calendars, tables) — never over another
badge, never equally near a neighbour's box and, where it can be helped, not over another element,
a label or the box's own words (measured on the frame when the view passes it, else estimated from
the box and its text). A link that wraps onto several lines is drawn (and hit) as one box per line,
its badge on the first. An element another one covers keeps its badge only where it lands on no
other element, drawn faint. The hovered node's badge is drawn last, on top of the others."""

from __future__ import annotations

import html
from dataclasses import dataclass

from PIL import Image
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QImage, QPainter, QPen

from engine.vision.badges import (
    BadgeSpec,
    line_boxes,
    own_words,
    place_badges,
    shown_bounds,
    text_colour,
    text_extent,
    words_rect,
)
from engine.vision.som import OCCLUDED_COLOUR, ROLE_GROUPS, Ink, role_group
from gui.nodes.node_models import locator_code, locator_missing

HIGHLIGHT_STYLES = {  # kind → (colour, width, dashed)
    "selected": (QColor(0, 200, 255), 3.0, False),
    "target": (QColor(255, 140, 0), 3.0, True),
    "pick": (QColor(168, 85, 247), 2.0, False),   # pick mode: the node under the pointer
}
BADGE_FONT_PX = 11  # on screen, at any zoom
SMALL_FONT_PX = 9   # the small badges of dense grids (down to 7 px when the page is shown smaller)
OCCLUDED_BADGE_OPACITY = 0.6


def _qcolour(rgb: tuple[int, int, int], alpha: int = 255) -> QColor:
    return QColor(rgb[0], rgb[1], rgb[2], alpha)


@dataclass(frozen=True)
class OverlayBox:
    """One drawn Set-of-Mark box: the node, its page rect (CSS px), its colour, and whether the box
    shows text of its own (a badge inside it would hide that)."""

    node_id: str
    role: str
    group: str
    page_rect: tuple[float, float, float, float]  # x, y, w, h in page CSS px
    colour: tuple[int, int, int]
    occluded: bool
    own_text: bool = False
    # a wrapped element's line boxes (two or more), each (dx, dy, w, h) from page_rect's top-left, so a
    # box moved by its page_rect moves its lines with it; () for one box
    lines: tuple[tuple[float, float, float, float], ...] = ()
    words: str | None = None  # the words it draws in its box (a badge inside it should not hide them)

    def parts(self) -> list[tuple[float, float, float, float]]:
        """The page rects (x, y, w, h) drawn for this element: one per line, or its one box."""
        x, y = self.page_rect[0], self.page_rect[1]
        return [(x + dx, y + dy, w, h) for dx, dy, w, h in self.lines] or [self.page_rect]

    def hit(self, x: float, y: float) -> bool:
        """The page point (CSS px) is on this element: inside one of its line boxes (a wrapped link is
        not hit in the blank corners of the rectangle around its lines)."""
        return any(bx <= x <= bx + bw and by <= y <= by + bh for bx, by, bw, bh in self.parts())


def overlay_items(snap) -> tuple[list[OverlayBox], list[tuple[float, float, float, float]]]:
    """What the overlay draws for a snapshot: a box per interactive rendered node in view (document
    order), and the page rects (x, y, w, h) of words to keep readable — each text node's words where
    `engine.vision.badges.text_extent` estimates them, line by line for a wrapped element."""
    boxes: list[OverlayBox] = []
    texts: list[tuple[float, float, float, float]] = []
    if snap is None:
        return boxes, texts
    for n in snap.nodes():
        if not (n.rendered and n.visible_ratio > 0):
            continue
        x, y, w, h = shown_bounds(n)
        if w <= 0 or h <= 0:
            continue
        parts = line_boxes(n)
        if n.text and n.text.strip():
            texts.extend(text_extent(b, n.text) for b in parts)
        if not n.interactive:
            continue
        g = role_group(n.role)
        colour = OCCLUDED_COLOUR if n.occluded else ROLE_GROUPS[g][1]
        lines = tuple((b[0] - x, b[1] - y, b[2], b[3]) for b in parts) if len(parts) >= 2 else ()
        words = own_words(n)
        boxes.append(OverlayBox(n.node_id, n.role, g, (x, y, w, h), colour, n.occluded, words is not None,
                                lines, words))
    return boxes, texts


def badge_font(base: QFont) -> QFont:
    font = QFont(base)
    font.setBold(True)
    font.setPixelSize(BADGE_FONT_PX)
    return font


def small_font(font: QFont, scale: float = 1.0) -> QFont:
    """The font of the small badges, for a page shown at `scale` widget px per CSS px."""
    f = QFont(font)
    f.setPixelSize(max(7, min(SMALL_FONT_PX, round(SMALL_FONT_PX * scale))))
    return f


def _frame_ink(frame: QImage | None, area: QRectF):
    """(measure, share) on the frame (a QImage of the whole page, painted into `area`) in widget px:
    where a rect's page draws inside it, and how much page content lies under a rect — as
    `engine.vision.som.Ink` does on a picture; (None, None) without a frame."""
    if frame is None or frame.isNull() or area.width() <= 0:
        return None, None
    grey = frame.convertToFormat(QImage.Format.Format_Grayscale8)
    img = Image.frombuffer("L", (grey.width(), grey.height()), bytes(grey.constBits()), "raw", "L",
                           grey.bytesPerLine(), 1)
    ink = Ink(img)
    k = grey.width() / area.width()  # frame px per widget px

    def to_frame(r):
        return ((r[0] - area.left()) * k, (r[1] - area.top()) * k, (r[2] - area.left()) * k, (r[3] - area.top()) * k)

    def measure(r):
        got = ink.words(to_frame(r))
        if got is None:
            return None
        return (area.left() + got[0] / k, area.top() + got[1] / k, area.left() + got[2] / k, area.top() + got[3] / k)

    def share(r) -> float:
        return ink.share(to_frame(r))
    return measure, share


def layout_badges(boxes: list[OverlayBox], text_rects: list[tuple[float, float, float, float]], to_widget,
                  font: QFont, area: QRectF, frame: QImage | None = None) -> dict[str, QRectF]:
    """Where each box's badge goes, in widget px: `to_widget` maps a page rect (x, y, w, h) to a
    QRectF; `text_rects` are page rects of words to keep readable; badges stay inside `area`, where
    the page is painted. With `frame` (the page's picture painted into `area`) the words are
    measured on its pixels inside those rects and the boxes. A box with no badge (an occluded
    element with no free spot) is not in the answer. A badge lower than `font`'s is a small one."""
    fm = QFontMetricsF(font)
    h = fm.height() + 2
    unit = to_widget((0.0, 0.0, 100.0, 100.0))
    sfont = small_font(font, unit.width() / 100.0)
    sfm = QFontMetricsF(sfont)
    measure, ink = _frame_ink(frame, area)

    def wrect(pr) -> tuple[float, float, float, float]:
        r = to_widget(pr)
        return (r.left(), r.top(), r.right(), r.bottom())

    def to_rect(pr):
        r = wrect(pr)
        return r if r[2] > r[0] and r[3] > r[1] else None

    wboxes = [wrect(b.page_rect) for b in boxes]
    order = sorted(range(len(boxes)), key=lambda i: (round(wboxes[i][1]), wboxes[i][0]))  # reading order
    specs = []
    for i in order:
        b = boxes[i]
        parts = tuple(wrect(p) for p in b.parts())
        own: tuple = ()
        if b.words:
            own = tuple(t for t in (words_rect(p, b.words, to_rect, measure) for p in b.parts()) if t is not None)
        elif b.own_text:  # words not given: the whole box
            own = parts
        tight = sfm.tightBoundingRect(b.node_id)
        specs.append(BadgeSpec(parts[0], fm.horizontalAdvance(b.node_id) + 8, h,
                               small=(sfm.horizontalAdvance(b.node_id) + 4, tight.height() + 4), text=own,
                               occluded=b.occluded, parts=parts))
    texts = []
    for t in text_rects:
        r = to_rect(t)
        if r is not None and measure is not None:
            r = measure(r)
        if r is not None:
            texts.append(r)
    spots = place_badges(specs, (area.left(), area.top(), area.right(), area.bottom()), text=texts, ink=ink,
                         inset=1.0)
    return {boxes[i].node_id: QRectF(s[0], s[1], s[2] - s[0], s[3] - s[1])
            for i, s in zip(order, spots, strict=True) if s is not None}


def node_tooltip(snap, node_id: str) -> str:
    """The hover text for a node: rich text with every page string escaped; no secret values."""
    if snap is None or node_id not in snap:
        return ""
    n = snap.get(node_id)
    e = html.escape
    rows = [("ID", n.node_id), ("role", n.role or n.tag), ("name", n.name or "—"), ("tier", n.tier)]
    if n.redacted:
        rows.append(("value", "•••• (hidden)"))
    elif n.value not in (None, ""):
        v = str(n.value)
        rows.append(("value", v if len(v) <= 120 else v[:119] + "…"))
    if n.states:
        rows.append(("states", ", ".join(f"{k}" if v is True else f"{k}={v}" for k, v in n.states.items())))
    if n.occluded:
        rows.append(("occluded", f"yes — covered by {n.occluded_by_desc or n.occluded_by or 'another element'}"))
    else:
        rows.append(("occluded", "no"))
    code = locator_code(snap, node_id)
    if code:
        rows.append(("locator", code if len(code) <= 160 else code[:159] + "…"))
    elif why := locator_missing(snap, node_id):
        rows.append(("locator", f"none: {why}"))
    body = "".join(f"<tr><td><b>{e(k)}</b></td><td>{e(str(v))}</td></tr>" for k, v in rows)
    return f"<html><table cellspacing='0' cellpadding='1'>{body}</table></html>"


def paint_boxes(p: QPainter, boxes: list[OverlayBox], to_widget, font: QFont, badges: dict[str, QRectF],
                hover_id: str | None, stale: bool) -> None:
    """Draw every box (a wrapped element line by line), then every badge (the hovered node's last, on
    top; an occluded element's faint); all faint when stale."""
    base = 0.35 if stale else 1.0
    p.setOpacity(base)
    normal_h = QFontMetricsF(font).height() + 2
    sfont = small_font(font, to_widget((0.0, 0.0, 100.0, 100.0)).width() / 100.0)
    for b in boxes:
        colour = _qcolour(b.colour)
        for part in b.parts():
            wr = to_widget(part)
            if b.occluded:
                p.setPen(QPen(QColor(255, 255, 255), 2.0))
                p.setBrush(Qt.BrushStyle.NoBrush)
                p.drawRect(wr)
                pen = QPen(colour, 2.0, Qt.PenStyle.DashLine)
            else:
                p.setBrush(QBrush(_qcolour(b.colour, 26)))
                pen = QPen(colour, 2.5 if b.node_id == hover_id else 1.5)
            p.setPen(pen)
            p.drawRect(wr)
    hovered = [b for b in boxes if b.node_id == hover_id]
    for b in [b for b in boxes if b.node_id != hover_id] + hovered:
        lab = badges.get(b.node_id)
        if lab is None:
            continue
        p.setOpacity(base * (OCCLUDED_BADGE_OPACITY if b.occluded and b.node_id != hover_id else 1.0))
        wr = to_widget(b.parts()[0])
        colour = _qcolour(b.colour)
        if not lab.adjusted(-1, -1, 1, 1).intersects(wr):  # detached: a short lead to its box
            c = lab.center()
            p.setPen(QPen(colour, 1.0))
            p.drawLine(c, _nearest(wr, c))
        p.setPen(QPen(QColor(255, 255, 255), 2.0 if b.node_id == hover_id else 1.0))
        p.setBrush(colour)
        p.drawRect(lab)
        p.setPen(_qcolour(text_colour(b.colour)))
        p.setFont(sfont if lab.height() < normal_h - 0.5 else font)
        p.drawText(lab, Qt.AlignmentFlag.AlignCenter, b.node_id)
    p.setOpacity(1.0)


def _nearest(r: QRectF, pt: QPointF) -> QPointF:
    return QPointF(min(max(pt.x(), r.left()), r.right()), min(max(pt.y(), r.top()), r.bottom()))


def paint_highlights(p: QPainter, snap, highlights: dict, to_widget) -> None:
    """Outline the selected node and the proposed step's target."""
    if snap is None:
        return
    for kind, nid in highlights.items():
        if nid not in snap:
            continue
        n = snap.get(nid)
        if n.bounds[2] <= 0 and n.bounds[3] <= 0:
            continue
        colour, width, dashed = HIGHLIGHT_STYLES[kind]
        p.setBrush(QBrush(QColor(colour.red(), colour.green(), colour.blue(), 40)))
        p.setPen(QPen(colour, width, Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine))
        for part in line_boxes(n):  # a wrapped link: each of its lines
            p.drawRect(to_widget(part).adjusted(-2, -2, 2, 2))
