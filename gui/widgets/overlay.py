"""The Set-of-Mark layer of the live page view: boxes, ID badges, highlights and hover text,
painted with Qt over the screencast frame (nothing is injected into the page).

Badges keep one size on screen whatever the page's zoom (a preset scaled into the panel), so
they are placed in widget px, with the same placement as the stored pictures
(`engine.vision.badges`): outside the box where there is room — above, then left, then inside a
corner — never over another badge and, where it can be helped, not over a label or the box's own
text. The hovered node's badge is drawn last, on top of the others."""

from __future__ import annotations

import html
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPen

from engine.vision.badges import BadgeSpec, place_badges, text_colour
from gui.widgets.node_models import locator_code, locator_missing

HIGHLIGHT_STYLES = {  # kind → (colour, width, dashed)
    "selected": (QColor(0, 200, 255), 3.0, False),
    "target": (QColor(255, 140, 0), 3.0, True),
    "pick": (QColor(168, 85, 247), 2.0, False),   # pick mode: the node under the pointer
}
BADGE_FONT_PX = 11  # on screen, at any zoom


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


def badge_font(base: QFont) -> QFont:
    font = QFont(base)
    font.setBold(True)
    font.setPixelSize(BADGE_FONT_PX)
    return font


def layout_badges(boxes: list[OverlayBox], text_rects: list[tuple[float, float, float, float]], to_widget,
                  font: QFont, area: QRectF) -> dict[str, QRectF]:
    """Where each box's badge goes, in widget px: `to_widget` maps a page rect (x, y, w, h) to a
    QRectF; `text_rects` are page rects of text to keep readable; badges stay inside `area`."""
    fm = QFontMetricsF(font)
    h = fm.height() + 2
    wboxes = [to_widget(b.page_rect) for b in boxes]
    order = sorted(range(len(boxes)), key=lambda i: (round(wboxes[i].top()), wboxes[i].left()))  # reading order
    specs = []
    for i in order:
        r = wboxes[i]
        specs.append(BadgeSpec((r.left(), r.top(), r.right(), r.bottom()), fm.horizontalAdvance(boxes[i].node_id) + 8,
                               h, boxes[i].own_text))
    texts = []
    for t in text_rects:
        r = to_widget(t)
        texts.append((r.left(), r.top(), r.right(), r.bottom()))
    spots = place_badges(specs, (area.left(), area.top(), area.right(), area.bottom()), text=texts)
    return {boxes[i].node_id: QRectF(x0, y0, x1 - x0, y1 - y0)
            for i, (x0, y0, x1, y1) in zip(order, spots, strict=True)}


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
    """Draw every box, then every badge (the hovered node's last, on top); faint when stale."""
    p.setFont(font)
    if stale:
        p.setOpacity(0.35)
    for b in boxes:
        wr = to_widget(b.page_rect)
        colour = _qcolour(b.colour)
        if b.occluded:
            p.setPen(QPen(QColor(255, 255, 255), 2.0))
            p.setBrush(Qt.NoBrush)
            p.drawRect(wr)
            pen = QPen(colour, 2.0, Qt.DashLine)
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
        wr = to_widget(b.page_rect)
        colour = _qcolour(b.colour)
        if not lab.adjusted(-1, -1, 1, 1).intersects(wr):  # detached: a short lead to its box
            c = lab.center()
            p.setPen(QPen(colour, 1.0))
            p.drawLine(c, _nearest(wr, c))
        p.setPen(QPen(QColor(255, 255, 255), 2.0 if b.node_id == hover_id else 1.0))
        p.setBrush(colour)
        p.drawRect(lab)
        p.setPen(_qcolour(text_colour(b.colour)))
        p.drawText(lab, Qt.AlignCenter, b.node_id)
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
        wr = to_widget(n.bounds).adjusted(-2, -2, 2, 2)
        p.setBrush(QBrush(QColor(colour.red(), colour.green(), colour.blue(), 40)))
        p.setPen(QPen(colour, width, Qt.DashLine if dashed else Qt.SolidLine))
        p.drawRect(wr)
