"""A read-only view of a recorded session, in the same widgets as a live run: the PlanView with the
final plan, the ChatView with every stored message and step observation, the step list, the
selected step's before/after screenshots with their Set-of-Mark (drawn from the stored snapshots),
the stored before/after snapshots themselves in the NodeTreePanel — the element acted on
selected in "before", the IDs that appeared since marked in "after" — and in the PayloadInspector
what the planner was given: the semantic payload of the page before the step and, for a model or
backend planner, the exchange itself (loaded when those tabs are looked at: a big page's tree
costs a fraction of a second to restore).

It holds one stored session (read-only, `gui.supervisor.session_library.StoredSession`) — no tab, no loop:
nothing in it can act on a page.
All stored text (titles, tasks, URLs, page text) is shown as plain text.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFormLayout,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSizePolicy,
    QSplitter,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from engine.errors import VigilError
from engine.models.text import bidi_safe
from gui.kit.labels import plain_label
from gui.kit.look import AMBER, AMBER_FG, GREEN_DARK, LINE, MUTED, PANEL, RED, RED_DARK, TEXT
from gui.kit.window_fit import close_keys, fit_window
from gui.nodes.inspector import PayloadInspector
from gui.nodes.node_tree import NodeTreePanel
from gui.run.chat_view import ChatView
from gui.run.picture_window import PictureWindow
from gui.run.plan_view import PlanView
from gui.sessions.session_text import local_time, status_text
from gui.supervisor.session_library import SessionData, StoredSession

log = logging.getLogger("vigil.gui")
STEP_STATUS_COLOUR = {"completed": GREEN_DARK, "unverified": AMBER, "failed": RED, "skipped": AMBER,
                      "rejected": AMBER, "stopped": AMBER}


class PictureLabel(QLabel):
    """A picture scaled to fit (aspect ratio kept); `pixmap_full()` is the picture at its own size."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._full = QPixmap()
        self.setMinimumSize(200, 130)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(True)
        self.setStyleSheet(f"QLabel {{ background:#f3f4f6; color:{MUTED}; border:1px solid {LINE}; }}")

    def set_picture(self, pm: QPixmap | None, empty_text: str = "") -> None:
        self._full = pm if pm is not None else QPixmap()
        self.setText("" if pm is not None and not pm.isNull() else empty_text)
        self.update()

    def pixmap_full(self) -> QPixmap:
        return self._full

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt name
        return QSize(480, 300)

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt name
        if self._full.isNull():
            return super().paintEvent(event)
        p = QPainter(self)
        p.fillRect(self.rect(), QColor("#f3f4f6"))
        scaled = self._full.size().scaled(self.size(), Qt.AspectRatioMode.KeepAspectRatio)
        x, y = (self.width() - scaled.width()) // 2, (self.height() - scaled.height()) // 2
        p.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        p.drawPixmap(x, y, scaled.width(), scaled.height(), self._full)
        p.end()

    def mouseDoubleClickEvent(self, ev) -> None:  # noqa: N802 - Qt name
        if self._full.isNull():
            return
        self._zoom = PictureWindow(self._full, self.window().windowTitle() + " — " + str(self.property("caption")),
                                   anchor=self)  # kept alive while shown
        self._zoom.show()


class SessionView(QWidget):
    """A top-level, non-modal window showing one stored session (`SessionView(library.open(id))`)."""

    def __init__(self, session: StoredSession, parent: QWidget | None = None, *, anchor: QWidget | None = None):
        super().__init__(parent, Qt.WindowType.Window)
        self.session = session
        self.data: SessionData = session.data
        self._pictures: dict[tuple[int, str], tuple[QPixmap, int, str | None] | None] = {}
        s = self.data.session
        self.setObjectName("sessionView")
        self.setWindowTitle(bidi_safe(f"Vigil — session {s.id[:8]} (read-only): {s.title}"))
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.close_shortcuts = close_keys(self)  # closes without a window manager's close button

        outer = QVBoxLayout(self)
        outer.setContentsMargins(8, 8, 8, 8)
        outer.setSpacing(6)
        outer.addWidget(self._header())

        self.plan = PlanView(idle_text="No plan was recorded for this session.")
        self.chat = ChatView()
        self.chat.auto_scroll = False  # a stored session is read from its start, not followed to its end
        left = QSplitter(Qt.Orientation.Vertical)
        left.addWidget(self.plan)
        left.addWidget(self.chat)
        left.setSizes([200, 560])

        self.steps = QTreeWidget()
        self.steps.setObjectName("stepList")
        self.steps.setHeaderLabels(["#", "Status", "Action", "Result", "Verification"])
        self.steps.setRootIsDecorated(False)
        self.steps.setAlternatingRowColors(True)
        self.steps.setUniformRowHeights(True)
        self.steps.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.steps.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        h = self.steps.header()
        h.setStretchLastSection(True)
        h.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        h.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        h.setSectionResizeMode(2, QHeaderView.ResizeMode.Interactive)
        h.setSectionResizeMode(3, QHeaderView.ResizeMode.Interactive)
        self.steps.setColumnWidth(2, 250)
        self.steps.setColumnWidth(3, 260)
        self.steps.currentItemChanged.connect(lambda cur, _prev: self.show_step(cur.data(0, Qt.ItemDataRole.UserRole)
                                                                                if cur is not None else None))

        pics = QWidget()
        grid = QGridLayout(pics)  # captions in one row, so both pictures start at the same height
        grid.setContentsMargins(0, 4, 0, 0)
        grid.setVerticalSpacing(2)
        self.before_caption, self.before = self._picture_box(grid, 0, "before")
        self.after_caption, self.after = self._picture_box(grid, 1, "after")
        grid.setRowStretch(1, 1)
        self.nodes_before = NodeTreePanel()
        self.nodes_before.setObjectName("nodesBefore")
        self.nodes_after = NodeTreePanel()
        self.nodes_after.setObjectName("nodesAfter")
        self._snapshots: dict[tuple[int, str], object | None] = {}
        self._trees_for: int | None = None  # the step whose snapshots the node trees show
        self.detail = QTabWidget()
        self.detail.setObjectName("stepDetail")
        self.detail.addTab(pics, "Pictures")
        self.detail.addTab(self.nodes_before, "Nodes before")
        self.detail.addTab(self.nodes_after, "Nodes after")
        self.payload = PayloadInspector()
        self.payload.setObjectName("stepPayload")
        self.detail.addTab(self.payload, "Payload")
        self.detail.currentChanged.connect(lambda _i: self._show_trees())
        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(self.steps)
        right.addWidget(self.detail)
        right.setSizes([300, 480])

        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left)
        split.addWidget(right)
        split.setSizes([430, 1010])
        outer.addWidget(split, 1)
        self._fill()
        # as large as the screen it opens on allows, up to 1440x920 (the screen of the window that opened it)
        fit_window(self, QSize(1440, 920), anchor or parent)

    # -- layout --------------------------------------------------------------------------------
    def _header(self) -> QFrame:
        s = self.data.session
        box = QFrame()
        box.setObjectName("sessionHeader")
        box.setStyleSheet(f"#sessionHeader {{ background:{PANEL}; border:1px solid {LINE}; border-radius:6px; }}")
        v = QVBoxLayout(box)
        v.setContentsMargins(10, 8, 10, 8)
        v.setSpacing(4)
        top = QHBoxLayout()
        self.title_label = plain_label(s.title, name="sessionTitle")
        self.title_label.setStyleSheet("font-size:15px; font-weight:bold;")
        word, colour = status_text(s.status, s.unverified, s.reason)
        self.status_label = plain_label(word.upper(), name="sessionStatus", wrap=False, selectable=False)
        self.status_label.setStyleSheet(f"color:white; background:{colour}; border-radius:4px; padding:2px 8px; "
                                        "font-weight:bold;")
        ro = plain_label("read-only", wrap=False, selectable=False)
        ro.setStyleSheet(f"color:{MUTED}; border:1px solid #d1d5db; border-radius:4px; padding:1px 6px;")
        top.addWidget(self.title_label, 1)
        top.addWidget(self.status_label, 0, Qt.AlignmentFlag.AlignTop)
        top.addWidget(ro, 0, Qt.AlignmentFlag.AlignTop)
        v.addLayout(top)
        form = QFormLayout()
        form.setContentsMargins(0, 0, 0, 0)
        form.setHorizontalSpacing(12)
        form.setVerticalSpacing(2)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.fields: dict[str, QLabel] = {}

        def add(key: str, label: str, text: str | None, style: str = "") -> None:
            if not text:
                return
            lab = plain_label(text, name=f"session_{key}")
            if style:
                lab.setStyleSheet(style)
            self.fields[key] = lab
            name = QLabel(label)
            name.setStyleSheet(f"color:{MUTED};")
            form.addRow(name, lab)

        add("task", "Task", s.task)
        if s.answer:
            add("answer", "Answer", s.answer, f"color:{GREEN_DARK};")
        if s.reason:
            add("reason", "Reason", s.reason, f"color:{RED_DARK};" if s.status == "error" else f"color:{AMBER_FG};")
        add("url", "URL", s.url)
        start = s.metadata.get("initialUrl")
        if start and start != s.url:
            add("start", "Started at", start)
        add("run", "Run", f"planner {s.planner} · approval {s.policy} · {len(self.data.steps)} step(s) · "
                          f"started {local_time(s.started)} · updated {local_time(s.updated)}")
        replay_of = s.metadata.get("replayOf")
        add("id", "Session", s.id + (f" · replay of {str(replay_of)[:8]}" if replay_of else ""))
        v.addLayout(form)
        return box

    def _picture_box(self, grid: QGridLayout, column: int, side: str) -> tuple[QLabel, PictureLabel]:
        cap = plain_label("", name=f"{side}Caption", selectable=False)
        cap.setStyleSheet(f"font-weight:bold; color:{TEXT};")
        pic = PictureLabel()
        pic.setObjectName(f"{side}Picture")
        pic.setProperty("caption", side)
        pic.setToolTip("Double-click to see it at full size")
        grid.addWidget(cap, 0, column, Qt.AlignmentFlag.AlignBottom)
        grid.addWidget(pic, 1, column)
        grid.setColumnStretch(column, 1)
        return cap, pic

    # -- content -------------------------------------------------------------------------------
    def _fill(self) -> None:
        d = self.data
        self.plan.set_plan(d.plan)
        for m in d.messages:
            self.chat.add_or_update_message(m)
        for rec in d.steps:
            self.chat.add_step_record(rec)
            self.plan.add_step_record(rec)  # an unverified step is marked so in the plan too
        detail = d.session.answer or d.session.reason or ""
        self.chat.set_task_status(d.session.status, detail)
        first = None
        for rec in d.steps:
            v = rec.verification or (rec.result.verification if rec.result else None)
            action = rec.action.to_string() if rec.action else ("(the person acted in the page)"
                                                                if rec.actor == "human" else "")
            result = rec.result.message if rec.result else (rec.note or "")
            verdict = "" if v is None else ("✔ " if v.success else "✘ ") + (v.feedback or "")
            status = "unverified" if rec.unverified else rec.status  # the word `vigil run` prints for it
            # each cell quotes the page or the planner: bidi controls show as markers
            it = QTreeWidgetItem([bidi_safe(x) for x in (str(rec.index + 1), status, action, result, verdict)])
            it.setData(0, Qt.ItemDataRole.UserRole, rec.index)
            it.setTextAlignment(0, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            it.setForeground(1, QBrush(QColor(STEP_STATUS_COLOUR.get(status, TEXT))))
            if v is not None:
                it.setForeground(4, QBrush(QColor(GREEN_DARK if v.success else RED)))
            self.steps.addTopLevelItem(it)
            if first is None and d.blobs.get(rec.index):
                first = it
        if first is None and self.steps.topLevelItemCount():
            first = self.steps.topLevelItem(0)
        if first is not None:
            self.steps.setCurrentItem(first)
        else:
            self.show_step(None)

    def picture(self, index: int, side: str) -> QPixmap | None:
        """Step `index`'s `side` screenshot with its marks (cached), or None when none was kept."""
        got = self._picture(index, side)
        return got[0] if got is not None else None

    def _picture(self, index: int, side: str) -> tuple[QPixmap, int, str | None] | None:
        key = (index, side)
        if key not in self._pictures:
            got = None
            try:
                pic = self.session.picture(index, side)
            except VigilError as exc:
                log.warning("step %s %s picture: %s", index, side, exc.message)
                pic = None
            if pic is not None:
                pm = QPixmap()
                if pm.loadFromData(pic.jpeg):
                    got = (pm, pic.marks, pic.highlight)
            self._pictures[key] = got
        return self._pictures[key]

    def show_step(self, index: int | None) -> None:
        for side, cap, lab in (("before", self.before_caption, self.before), ("after", self.after_caption, self.after)):
            if index is None:
                cap.setText(side.capitalize())
                lab.set_picture(None, "No step selected.")
                continue
            got = self._picture(index, side)
            text = f"{side.capitalize()} step {index + 1}"
            if got is not None:
                _pm, marks, target = got
                text += f" · {marks} marked element(s)" if marks else " · no marks (no snapshot was kept)"
                if target:
                    text += f" · the element acted on [{target}] is ringed in yellow"
            cap.setText(text)
            lab.set_picture(got[0] if got is not None else None, f"No screenshot was kept {side} step {index + 1}.")
        self._show_trees()
        if index is not None:
            self._reveal_turn(index)

    def _reveal_turn(self, index: int) -> None:
        """Scroll the chat up or down (never sideways) until step `index`'s turn is in view (from its start).
        Before the window is shown nothing is laid out: it opens at the chat's start."""
        turn = self.chat.turn_for_step(index)
        if turn is None or not self.isVisible():
            return
        area = self.chat.scroll_area
        bar = area.verticalScrollBar()
        top = turn.mapTo(self.chat.inner, turn.rect().topLeft()).y()
        if not bar.value() <= top <= top + turn.height() <= bar.value() + area.viewport().height():
            bar.setValue(top - 6)  # the whole turn in view, or as much as fits from its start
        area.horizontalScrollBar().setValue(0)

    def snapshot(self, index: int, side: str):
        """Step `index`'s stored `side` snapshot as a detached DomSnapshot (cached), or None."""
        key = (index, side)
        if key not in self._snapshots:
            snap = None
            try:
                snap = self.session.snapshot(index, side)
            except VigilError as exc:
                log.warning("step %s %s snapshot: %s", index, side, exc.message)
            self._snapshots[key] = snap
        return self._snapshots[key]

    def _show_trees(self) -> None:
        """Fill the node trees and the payload for the selected step, once one of their tabs is on screen."""
        index = self.selected_step()
        if self.detail.currentIndex() == 0 or index == self._trees_for:
            return
        self._trees_for = index
        before = self.snapshot(index, "before") if index is not None else None
        after = self.snapshot(index, "after") if index is not None else None
        self.nodes_before.set_snapshot(before)
        self.nodes_after.set_snapshot(after, before)
        rec = next((r for r in self.data.steps if r.index == index), None)
        # what the planner saw: the payload of the page before the step, and a model's or backend's exchange
        self.payload.show_snapshot_payload(before)
        self.payload.show_exchange(rec.exchange if rec is not None else None)
        target = rec.target.get("id") if rec is not None and rec.target else None
        if before is not None and target:
            self.nodes_before.select_node(str(target))
        new = len(after.new_ids_since(before)) if after is not None and before is not None else 0
        self.detail.setTabText(1, f"Nodes before ({len(before)})" if before is not None else "Nodes before (none kept)")
        self.detail.setTabText(2, (f"Nodes after ({len(after)}, {new} new)" if after is not None
                                   else "Nodes after (none kept)"))

    def selected_step(self) -> int | None:
        it = self.steps.currentItem()
        return it.data(0, Qt.ItemDataRole.UserRole) if it is not None else None
