"""The payload inspector: exactly what the planner received for the current step.

Tabs: the semantic JSON and the tree (both pretty-printed: indented, short lists on one line), the
skeleton serialization, the screenshot (when the step escalated to one) and the raw model / backend
exchange (image bytes elided). The header says in plain words what was sent and to whom — "Sent to
the model: the page as a list of elements (semantic) · 1,005 tokens" — and what more the model or
backend asked for, and why.

Page content is untrusted: every text here goes into QPlainTextEdit or plain-text labels, never
into anything that renders rich text or HTML, and its bidi controls (U+202E and friends) show as markers
(`⟦U+202E⟧`, gui.kit.labels) where the model received the control itself.
"""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontDatabase, QImage, QPixmap
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QScrollArea, QTabWidget, QVBoxLayout, QWidget

from gui.kit.labels import PlainLabel, PlainTextView

_LONG = 4000  # strings longer than this that look like image data are elided defensively


def _elide_blobs(value: Any) -> Any:
    """`value` with any inline image bytes (data: URLs, long base64 strings) replaced by a note."""
    if isinstance(value, str):
        if value.startswith("data:image"):
            return f"<image, {len(value) * 3 // 4096} KB elided>"
        if len(value) > _LONG and " " not in value[:_LONG] and "\n" not in value[:_LONG]:
            return f"<{len(value)} characters of binary data elided>"
        return value
    if isinstance(value, list):
        return [_elide_blobs(v) for v in value]
    if isinstance(value, dict):
        return {k: _elide_blobs(v) for k, v in value.items()}
    return value


INLINE = 80  # a list of plain values this short stays on one line: "xy": [312, 48], "box": [300, 40, 24, 16]


def _pretty(value: Any) -> str:
    """Indented JSON, with short lists of plain values (coordinates, boxes, states) on one line."""
    try:
        return _format(json.loads(json.dumps(value, ensure_ascii=False, default=str)), "")
    except RecursionError:  # nested deeper than Python recurses: indented by the standard library's loop
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


# what each payload kind is, in words a person reads in the header
KIND_WORDS = {
    "semantic": "the page as a list of elements (semantic)",
    "tree": "the page as a tree of elements (tree)",
    "skeleton": "the page's layout as minimal HTML (skeleton)",
    "full": "the whole page as HTML (full)",
    "screenshot": "a screenshot",
    "reading": "the page's text and controls in reading order (reading)",
}
MODE_WORDS = {"tools": "answers by tool calls", "json": "answers in JSON"}


def kind_words(kind: Any) -> str:
    return KIND_WORDS.get(str(kind), str(kind))


def _format(value: Any, pad: str) -> str:
    inner = pad + "  "
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = (f"{inner}{json.dumps(k, ensure_ascii=False)}: {_format(v, inner)}" for k, v in value.items())
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        if not any(isinstance(v, (dict, list)) for v in value):
            flat = json.dumps(value, ensure_ascii=False)
            if len(flat) <= INLINE:
                return flat
        return "[\n" + ",\n".join(inner + _format(v, inner) for v in value) + "\n" + pad + "]"
    return json.dumps(value, ensure_ascii=False)


def _text_view(parent: QWidget) -> QPlainTextEdit:
    v = PlainTextView(parent)
    v.setReadOnly(True)
    v.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
    v.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    return v


class PayloadInspector(QWidget):
    """Semantic / tree / skeleton / screenshot / exchange tabs under a one-line header."""

    TABS = ("semantic", "tree", "skeleton", "screenshot", "exchange")

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.header = PlainLabel("No payload yet.", self)  # it names the page
        self.header.setTextFormat(Qt.TextFormat.PlainText)
        self.header.setWordWrap(True)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        f = QFont(self.header.font())
        f.setBold(True)
        self.header.setFont(f)

        self.tabs = QTabWidget(self)
        self.semantic_view = _text_view(self)
        self.tree_view = _text_view(self)
        self.skeleton_view = _text_view(self)
        self.exchange_view = _text_view(self)
        self.screenshot_label = QLabel("No screenshot was sent for this step.", self)
        self.screenshot_label.setTextFormat(Qt.TextFormat.PlainText)
        self.screenshot_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._screenshot_scroll = QScrollArea(self)
        self._screenshot_scroll.setWidget(self.screenshot_label)
        self._screenshot_scroll.setWidgetResizable(True)
        self.tabs.addTab(self.semantic_view, "Semantic")
        self.tabs.addTab(self.tree_view, "Tree")
        self.tabs.addTab(self.skeleton_view, "Skeleton")
        self.tabs.addTab(self._screenshot_scroll, "Screenshot")
        self.tabs.addTab(self.exchange_view, "Exchange")

        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.header)
        lay.addWidget(self.tabs, 1)

        self.tokens: dict[str, int] = {}
        self.mode: str | None = None
        self.exchange_tokens: int | None = None
        self.negotiation: list[dict] = []
        self._page: str = ""
        self._to = "the model"
        self._pending: tuple[Any, dict[str, Any]] | None = None   # a snapshot not shown yet (while hidden)
        self._update_header()

    # -- snapshot payloads -------------------------------------------------------------------------
    def show_snapshot_payload(self, snap: Any, **semantic_options: Any) -> None:
        """Fill the semantic (pretty JSON), tree and skeleton tabs from a snapshot, with token counts.

        While the inspector sits hidden in a shown window (the window's Payload tab behind another; the live
        view sends a snapshot whenever the page changes) nothing is built: the latest snapshot waits and is
        shown as soon as the inspector is (`showEvent`) — the same text it would have shown."""
        if snap is not None and self._hidden_in_shown_window():
            self._pending = (snap, semantic_options)
            return
        self._pending = None
        self._fill_snapshot(snap, semantic_options)

    def _hidden_in_shown_window(self) -> bool:
        win = self.window()
        return win is not self and win.isVisible() and not self.isVisible()

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt name
        super().showEvent(event)
        pending, self._pending = self._pending, None
        if pending is not None:
            self._fill_snapshot(*pending)

    def _fill_snapshot(self, snap: Any, semantic_options: dict[str, Any]) -> None:
        self.tokens = {}
        if snap is None:
            for v in (self.semantic_view, self.tree_view, self.skeleton_view):
                v.setPlainText("")
            self._page = ""
            self._update_header()
            return
        sem = snap.serialize("semantic", **semantic_options)
        self.semantic_view.setPlainText(_pretty(sem.data) if sem.data is not None else sem.text)
        self.tokens["semantic"] = sem.tokens
        for fmt, view in (("tree", self.tree_view), ("skeleton", self.skeleton_view)):
            try:
                s = snap.serialize(fmt)
            except Exception as exc:  # one failing format must not hide the others
                view.setPlainText(f"Could not build the {fmt} serialization: {type(exc).__name__}: {exc}")
                continue
            if fmt == "tree" and s.data is not None:
                view.setPlainText(_pretty(s.data))  # indented, not one line of JSON
            else:
                view.setPlainText(s.text)
            self.tokens[fmt] = s.tokens
        self._page = f"{snap.title or snap.url}"
        for i, name in enumerate(("semantic", "tree", "skeleton")):
            t = self.tokens.get(name)
            self.tabs.setTabText(i, f"{name.title()} ({t:,} tok)" if t is not None else name.title())
        self._update_header()

    def show_screenshot(self, image: Any = None, note: str = "") -> None:
        """Show the screenshot sent to the model (JPEG/PNG bytes, QImage or QPixmap), or a note."""
        pix = None
        if isinstance(image, QPixmap):
            pix = image
        elif isinstance(image, QImage):
            pix = QPixmap.fromImage(image)
        elif isinstance(image, (bytes, bytearray)):
            img = QImage.fromData(bytes(image))
            pix = QPixmap.fromImage(img) if not img.isNull() else None
        if pix is not None and not pix.isNull():
            self.screenshot_label.setPixmap(pix)
            self.screenshot_label.setToolTip(note or f"{pix.width()}×{pix.height()}")
        else:
            self.screenshot_label.setPixmap(QPixmap())
            self.screenshot_label.setText(note or "No screenshot was sent for this step.")

    # -- exchanges ---------------------------------------------------------------------------------
    def show_exchange(self, exchange: Any) -> None:
        """Show an OpenAI-planner `Exchange` (or its dict) or a backend planner's `last_exchange` dict."""
        if exchange is None:
            self.exchange_view.setPlainText("")
            self.mode, self.exchange_tokens, self.negotiation = None, None, []
            self._to = "the model"
            self._update_header()
            return
        if hasattr(exchange, "model_dump"):
            exchange = exchange.model_dump()
        exchange = _elide_blobs(dict(exchange))
        if "calls" in exchange or "endpoint" in exchange:
            self._show_backend(exchange)
        else:
            self._show_model(exchange)
        self._update_header()

    def _show_model(self, ex: dict) -> None:
        self.mode = str(ex.get("mode") or "model")
        self._to = f"the model {ex.get('model', '')}".rstrip() + (
            f" ({MODE_WORDS[self.mode]})" if self.mode in MODE_WORDS else "")
        self.exchange_tokens = int(ex.get("tokens") or 0) or None
        self.negotiation = [{"kind": n.get("kind"), "reason": n.get("reason"), "tokens": n.get("tokens")}
                            for n in ex.get("negotiation") or [] if isinstance(n, dict)]
        parts = [f"model: {ex.get('model', '')} at {ex.get('base_url', '')} · mode: {self.mode} · "
                 f"requests: {ex.get('requests', 0)} · ~{ex.get('tokens', 0):,} tokens"]
        if ex.get("corrections"):
            parts.append("corrections sent to the model:\n" + "\n".join(f"- {c}" for c in ex["corrections"]))
        if ex.get("observation"):
            parts.append("observation:\n" + _pretty(ex["observation"]))
        for i, m in enumerate(ex.get("messages") or []):
            parts.append(f"──── message {i + 1}: {m.get('role', '?')} ────")
            content = m.get("content")
            if isinstance(content, list):
                for p in content:
                    if isinstance(p, dict) and p.get("type") == "text":
                        parts.append(str(p.get("text", "")))
                    elif isinstance(p, dict) and p.get("type") == "image_url":
                        parts.append(f"[{(p.get('image_url') or {}).get('url', 'image elided')}]")
                    else:
                        parts.append(_pretty(p))
            elif content is not None:
                parts.append(str(content))
            extra = {k: v for k, v in m.items() if k not in ("role", "content")}
            if extra:
                parts.append(_pretty(extra))
        parts.append("──── reply ────")
        parts.append(_pretty(ex.get("reply")))
        self.exchange_view.setPlainText("\n".join(parts))
        if any(n.get("kind") == "screenshot" for n in self.negotiation):
            self.show_screenshot(None, "The model asked for a screenshot; it was sent (image bytes are elided from "
                                       "the exchange record).")

    def _show_backend(self, ex: dict) -> None:
        self.mode = "backend"
        self._to = f"the backend {ex.get('endpoint', '')}".rstrip()
        calls = ex.get("calls") or []
        self.negotiation = []
        for i, kinds in enumerate(ex.get("requested") or []):
            resp = calls[i].get("response") if i < len(calls) and isinstance(calls[i], dict) else None
            data = resp.get("data", resp) if isinstance(resp, dict) else None
            why = ""
            if isinstance(data, dict):
                for key in ("reason", "reasoning", "thought", "message", "status"):
                    if data.get(key):
                        why = str(data[key])
                        break
            for k in kinds if isinstance(kinds, list) else [kinds]:
                self.negotiation.append({"kind": k, "reason": why})
        tok = 0
        for c in calls:
            if isinstance(c, dict) and c.get("request") is not None:
                tok = max(tok, len(json.dumps(c["request"], ensure_ascii=False, default=str)) // 4)
        self.exchange_tokens = tok or None
        parts = [f"backend: {ex.get('endpoint', '')} · rounds: {ex.get('rounds', 0)} · calls: {len(calls)}"]
        if ex.get("screenshot_error"):
            parts.append(f"screenshot error: {ex['screenshot_error']}")
        for i, c in enumerate(calls):
            parts.append(f"──── call {i + 1}: HTTP {c.get('http_status')} ────")
            parts.append("request:\n" + _pretty(c.get("request")))
            parts.append("response:\n" + _pretty(c.get("response")))
            if c.get("error"):
                parts.append(f"error: {c['error']}")
        self.exchange_view.setPlainText("\n".join(parts))
        if any(n.get("kind") == "screenshot" for n in self.negotiation):
            self.show_screenshot(None, "The backend asked for a screenshot; it was sent (image bytes are elided "
                                       "from the exchange record).")

    # -- header ------------------------------------------------------------------------------------
    def _update_header(self) -> None:
        """One plain sentence of what was sent, to whom, how big, and what more was asked for."""
        if not self.tokens and self.exchange_tokens is None and not self._page:
            self.header.setText("No payload yet: nothing has been sent to a model for this page.")
            return
        lead = f"Sent to {self._to}" if self.mode else "What the model is sent for this page"
        bits = [f"{lead}: {kind_words('semantic')}"]
        tok = self.exchange_tokens if self.exchange_tokens is not None else self.tokens.get("semantic")
        if tok is not None:
            bits.append(f"{tok:,} tokens")
        if self._page:
            bits.append(f"page: {self._page}")
        if self.negotiation:
            bits.append("then asked for " + "; ".join(
                kind_words(n.get("kind")) + (f" (why: {n['reason']})" if n.get("reason") else "")
                for n in self.negotiation))
        else:
            bits.append("nothing more was asked for")
        self.header.setText(" · ".join(bits))

    def header_text(self) -> str:
        return self.header.text()
