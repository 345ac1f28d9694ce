"""The Set-of-Mark layer of the live page view: boxes, ID labels, highlights and hover text,
painted with Qt over the screencast frame (nothing is injected into the page)."""

from __future__ import annotations

import html
from dataclasses import dataclass

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPen

HIGHLIGHT_STYLES = {  # kind → (colour, width, dashed)
    "selected": (QColor(0, 200, 255), 3.0, False),
    "target": (QColor(255, 140, 0), 3.0, True),
}


def _qcolour(rgb: tuple[int, int, int], alpha: int = 255) -> QColor:
    return QColor(rgb[0], rgb[1], rgb[2], alpha)


@dataclass(frozen=True)
class OverlayBox:
    """One drawn Set-of-Mark box: the node, its page rect (CSS px), its colour and label rect."""

    node_id: str
    role: str
    group: str
    page_rect: tuple[float, float, float, float]  # x, y, w, h in page CSS px
    colour: tuple[int, int, int]
    occluded: bool


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
    body = "".join(f"<tr><td><b>{e(k)}</b></td><td>{e(str(v))}</td></tr>" for k, v in rows)
    return f"<html><table cellspacing='0' cellpadding='1'>{body}</table></html>"


def paint_boxes(p: QPainter, boxes, to_widget, font: QFont, hover_id: str | None, stale: bool) -> None:
    """Draw every box and its ID label (nudged off labels already drawn); faint when stale."""
    p.setFont(font)
    fm = QFontMetricsF(font)
    if stale:
        p.setOpacity(0.35)
    labels: list[QRectF] = []
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
            pen = QPen(colour, 2.0 if b.node_id == hover_id else 1.5)
        p.setPen(pen)
        p.drawRect(wr)
        # the ID label: above the box's top-left corner, else inside it; nudged off other labels
        tw, th = fm.horizontalAdvance(b.node_id) + 6, fm.height() + 2
        cands = [QRectF(wr.left(), wr.top() - th, tw, th), QRectF(wr.left(), wr.top(), tw, th),
                 QRectF(wr.right() - tw, wr.top() - th, tw, th), QRectF(wr.left(), wr.bottom(), tw, th)]
        lab = next((c for c in cands if c.top() >= 0 and not any(c.intersects(o) for o in labels)), cands[1])
        labels.append(lab)
        p.setPen(Qt.NoPen)
        p.setBrush(colour)
        p.drawRect(lab)
        p.setPen(QColor(255, 255, 255))
        p.drawText(lab, Qt.AlignCenter, b.node_id)
    p.setOpacity(1.0)

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
