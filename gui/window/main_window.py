"""The supervisor window: live page, Set-of-Mark overlay, node tree, plan stepper, chat turns,
approval bar, payload inspector, sessions (browse, open read-only, export, delete: the sessions panel;
replay and a new session: here), task input, settings and status bar. It talks to the engine only
through its controller (`gui.supervisor.controller.Supervisor`). Its first size, and what it remembers between
runs, come from `gui.window.layout`."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from PySide6.QtCore import QRect, QSettings, Qt
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMainWindow,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from engine.models import ChatMessage
from engine.snapshot.serialize.limits import status_words, walk_cut
from gui.approval.approval_bar import ApprovalBar
from gui.fleet.fleet_dialog import open_fleet_dialog
from gui.kit.aio import spawn
from gui.kit.labels import PlainLabel
from gui.kit.look import BANNER_BG, BANNER_FG
from gui.kit.window_fit import screen_at
from gui.nodes.inspector import PayloadInspector
from gui.nodes.node_models import locator_missing
from gui.nodes.node_tree import NodeTreePanel
from gui.page.page_input import NOTHING_TO_PICK
from gui.page.page_view import PageView
from gui.page.step_overlay import StepOverlay
from gui.page.tab_strip import TabStrip, with_tab_strip
from gui.run.chat_view import ChatView
from gui.run.plan_view import PlanView
from gui.sessions.sessions_panel import SessionsPanel
from gui.supervisor.controller import Supervisor
from gui.window.layout import clamp_to, first_geometry, to_bytes, window_settings
from gui.window.run_wiring import LOOP_WORDS, RunWiring, step_words
from gui.window.settings_dialog import SettingsDialog
from gui.window.status_bar import StatusBar
from gui.window.take_over import TakeOver
from gui.window.toolbar import FIT, OVERLAY_ON_WORDS, PAGE_SIZES, NavigationBar

if TYPE_CHECKING:
    from gui.fleet.fleet_window import FleetWindow

__all__ = ["MainWindow", "step_words"]

log = logging.getLogger("vigil.gui")
PLANNER_CHOICES = ("heuristic", "openai", "backend")
SIDE_SHARE, SIDE_MAX = 0.3, 520  # the side panel's first width: this share of the window, at most this
VIA_WORDS = {"label": "its label's control", "widget": "the control of this widget"}  # pick mode: found how


class MainWindow(QMainWindow):
    def __init__(self, sup: Supervisor, *, suggested_task: str = "", settings: QSettings | None = None) -> None:
        super().__init__()
        self.sup = sup
        self.setWindowTitle("Vigil — browser agent supervisor")
        self._closing = False
        self.start_maximized = False  # set by place_on()
        self.closed = asyncio.get_event_loop().create_future()
        self.layout_settings = settings if settings is not None else window_settings()
        self.fleet_windows: list[FleetWindow] = []  # Fleet views opened from here (gui.fleet.fleet_dialog)
        self._build(suggested_task)
        self.run_wiring = RunWiring(self, self)  # the run's side: Run, the step asked, what ran
        self._wire()
        self._restore_layout()

    # -- layout --------------------------------------------------------------------------------
    def _build(self, suggested_task: str) -> None:
        bar = self.toolbar = NavigationBar(self)
        self.act_back, self.act_fwd, self.act_reload = bar.act_back, bar.act_fwd, bar.act_reload
        self.url, self.viewport = bar.url, bar.viewport
        self.act_overlay, self.act_snapshot, self.act_mask = bar.act_overlay, bar.act_snapshot, bar.act_mask
        self.act_settings, self.act_new_session = bar.act_settings, bar.act_new_session
        self.act_pick, self.act_fleet = bar.act_pick, bar.act_fleet
        self.overlay_hint, self.overlay_hint_fit = bar.overlay_hint, bar.overlay_hint_fit

        self.banner = PlainLabel()  # an error may quote the page: its bidi controls show as markers
        self.banner.setTextFormat(Qt.TextFormat.PlainText)
        self.banner.setWordWrap(True)
        self.banner.setStyleSheet(f"background:{BANNER_BG};color:{BANNER_FG};padding:6px;"
                                  "border-bottom:1px solid #f5c2bd")
        self.banner.hide()

        self.page = PageView()
        self.plan = PlanView()
        self.chat = ChatView()
        self.nodes = NodeTreePanel()
        self.inspector = PayloadInspector()
        self.sessions = SessionsPanel()
        self.run_split = left = QSplitter(Qt.Orientation.Vertical)
        left.setObjectName("runSplit")
        left.addWidget(self.plan)
        left.addWidget(self.chat)
        left.setStretchFactor(1, 1)
        left.setSizes([160, 520])
        self.tabs = QTabWidget()
        self.tabs.addTab(left, "Run")
        self.tabs.addTab(self.nodes, "Nodes")
        self.tabs.addTab(self.inspector, "Payload")
        self.tabs.addTab(self.sessions, "Sessions")
        self.tabs.setMinimumWidth(260)
        # the page takes what the side panel leaves; drag the handle to give it (nearly) the whole window,
        # or collapse the side panel altogether
        self.split = split = QSplitter(Qt.Orientation.Horizontal)
        split.setObjectName("mainSplit")
        self.tab_strip = TabStrip()  # the browser's tabs above the page; the page follows the active one
        self.page_column = with_tab_strip(self.page, self.tab_strip)
        split.addWidget(self.page_column)
        split.addWidget(self.tabs)
        split.setCollapsible(0, False)
        split.setStretchFactor(0, 1)
        split.setSizes([1000, 420])

        self.approval = ApprovalBar()
        self.task = QLineEdit(suggested_task)
        self.task.setPlaceholderText("Task, e.g. “type ada@example.com into Email and click Create account”")
        self.planner = QComboBox()
        self.planner.addItems(PLANNER_CHOICES)
        self.planner.setToolTip("heuristic: offline, no model · openai: any OpenAI-compatible model · "
                                "backend: a /api/agent/interact server")
        self.policy = QComboBox()
        self.policy.addItems(["ask", "auto-safe", "auto"])
        self.policy.setToolTip("ask: every step · auto-safe: only sensitive steps (passwords, submitting, leaving "
                               "the site, files) · auto: never")
        self.run_btn = QPushButton("Run")
        self.stop_btn = QPushButton("Stop")
        self.stop_btn.setEnabled(False)
        row = QHBoxLayout()
        row.addWidget(QLabel("Task"))
        row.addWidget(self.task, 1)
        row.addWidget(self.planner)
        row.addWidget(QLabel("Approve"))
        row.addWidget(self.policy)
        row.addWidget(self.run_btn)
        row.addWidget(self.stop_btn)

        # the approval bar floats over the page's panel: the page keeps its size while a step is asked
        self.step_overlay = StepOverlay(self.page_column, self.approval)
        central = QWidget()
        v = QVBoxLayout(central)
        v.setContentsMargins(4, 0, 4, 4)
        v.addWidget(self.banner)
        v.addWidget(split, 1)
        v.addLayout(row)
        self.setCentralWidget(central)
        # nothing in the status bar overlaps at 1024 px and up: what does not fit is elided, whole in its tooltip
        self.status_bar = StatusBar(list(LOOP_WORDS.values()))
        self.setStatusBar(self.status_bar)
        self.status_snap, self.status_loop = self.status_bar.snap, self.status_bar.loop
        self.settings_dialog: SettingsDialog | None = None

    def _wire(self) -> None:
        s, run = self.sup, self.run_wiring
        self.url.returnPressed.connect(self._go)
        self.act_back.triggered.connect(lambda: spawn(s.history(-1)))
        self.act_fwd.triggered.connect(lambda: spawn(s.history(1)))
        self.act_reload.triggered.connect(lambda: spawn(s.history(0)))
        self.act_snapshot.triggered.connect(lambda: spawn(s.refresh(force=True)))
        self.act_overlay.toggled.connect(self.page.set_overlay)
        self.act_overlay.toggled.connect(self._overlay_toggled)
        self.act_mask.toggled.connect(self.page.set_masking)
        self.act_settings.triggered.connect(self._settings)
        self.act_fleet.triggered.connect(lambda: open_fleet_dialog(self, self.sup))
        self.act_new_session.triggered.connect(self._new_session)
        self.sessions.new_session_requested.connect(self._new_session)
        self.sessions.replay_requested.connect(run.replay)
        self.sessions.error.connect(self.show_error)
        self.sessions.status.connect(self._status_line)
        s.session_changed.connect(self.sessions.set_current)
        s.sessions_changed.connect(self.sessions.refresh)
        s.notice.connect(self._notice)
        self.viewport.currentTextChanged.connect(self.set_page_size)
        self.page.viewport_wanted.connect(self._viewport_wanted)
        self.split.splitterMoved.connect(lambda *_: self.save_layout())
        self.run_split.splitterMoved.connect(lambda *_: self.save_layout())
        self.run_btn.clicked.connect(run.start)
        self.task.returnPressed.connect(run.start)
        self.stop_btn.clicked.connect(s.stop_task)
        self.approval.decided.connect(s.decide)
        self.approval.take_over_requested.connect(lambda text: spawn(run.quick(text)))
        self.approval.policy_changed.connect(run.policy_from_bar)
        # Edit: the page's boxes take clicks (a click picks the step's new target instead of clicking the page)
        self.approval.edit_btn.clicked.connect(lambda: self.act_overlay.setChecked(True))
        self.policy.currentTextChanged.connect(s.set_policy)
        self.page.node_clicked.connect(self._select_node)
        # the person's own steps (take over), and the wait for them ("I'll do it in the page")
        self.take_over = TakeOver(s, self.approval, self)
        self.page.input_listener = self.take_over.heard
        # a plain click on a box selects it only while the Edit panel is open (it picks the step's new target)
        self.page.select_on_click = self.approval.editing
        self.act_pick.toggled.connect(self.page.set_picking)
        # a hovered locator stays in the status bar only while picking
        self.act_pick.toggled.connect(lambda on: None if on else self.statusBar().clearMessage())
        self.page.pick_listener = self._picked
        self.nodes.node_selected.connect(self._select_node)
        s.snapshot_changed.connect(self._on_snapshot)
        s.page_ahead.connect(self.page.set_page_ahead)  # the live view: the snapshot shown is older than the page
        s.page_ahead.connect(lambda t: self.status_bar.set_page_ahead(t, s.snapshot_at))
        # a frame of the page at its new size: the one painted during the resize may be of the old size (or
        # withheld by the live view's masking while the page moved), and a still page paints no other
        s.viewport_changed.connect(lambda _w, _h: spawn(self.page.request_frame()))
        s.message.connect(self.chat.add_or_update_message)
        s.plan_changed.connect(self.plan.set_plan)
        s.record.connect(run.on_record)
        s.request.connect(run.on_request)
        s.request_done.connect(run.on_request_done)
        s.status.connect(run.on_status)
        s.error.connect(self.show_error)
        s.busy.connect(lambda t: self.statusBar().showMessage(t) if t else self.statusBar().clearMessage())
        s.page_changed.connect(self._on_page_changed)
        s.step_picture.connect(run.on_step_picture)
        s.tabs_changed.connect(self.tab_strip.set_tabs)
        s.tab_switched.connect(lambda tab: spawn(self._show_tab(tab)))
        self.tab_strip.switch_requested.connect(lambda i: spawn(s.tabs.switch(i)))
        self.tab_strip.close_requested.connect(lambda i: spawn(s.tabs.close(i)))
        focus_url = QAction(self)
        focus_url.setShortcut(QKeySequence("Ctrl+L"))
        focus_url.triggered.connect(self.url.setFocus)

    # -- reactions -----------------------------------------------------------------------------
    def show_error(self, text: str) -> None:
        self.banner.setText(text)
        self.banner.show()

    def _picked(self, node_id: str, code: str, clicked: bool, via: str = "") -> None:
        """Pick mode: the locator of the node under the pointer in the status bar (copied on a click); where
        it came from when it is not the node itself (a label's control); and where nothing can be picked, so."""
        if not node_id:
            self.statusBar().showMessage(NOTHING_TO_PICK + ("; nothing copied" if clicked else ""), 0)
            return
        how = f" ({VIA_WORDS[via]})" if via in VIA_WORDS else ""
        if code:
            self.statusBar().showMessage(("Copied: " if clicked else "") + code + how, 8000 if clicked else 0)
            return
        why = locator_missing(self.sup.snapshot, node_id)
        self.statusBar().showMessage("No locator for this element" + (f": {why}" if why else "") + how, 0)

    def _overlay_toggled(self, on: bool) -> None:
        """The words that say how a node is selected, beside the toggle while the overlay is on."""
        self.overlay_hint_fit.set_on(on)
        if on:
            self.statusBar().showMessage(OVERLAY_ON_WORDS, 8000)

    def _viewport_wanted(self, width: int, height: int) -> None:
        if not self._closing:  # the page panel resizes as the window closes: the engine is stopping
            spawn(self.sup.set_viewport(width, height))

    def _status_line(self, text: str, ms: int) -> None:
        if text:
            self.statusBar().showMessage(text, ms)
        else:
            self.statusBar().clearMessage()

    def _new_session(self) -> None:
        if self.sup.new_session():
            self.statusBar().showMessage("The next task starts a new session in this tab.", 6000)

    def _go(self) -> None:
        self.url.setModified(False)
        spawn(self.sup.navigate(self.url.text().strip()))

    def _on_page_changed(self, url: str) -> None:
        if not (self.url.hasFocus() and self.url.isModified()):  # never overwrite what the person is typing
            self.url.setText(url)

    def _notice(self, text: str) -> None:
        self.chat.add_or_update_message(ChatMessage(role="system", content=text))
        self.statusBar().showMessage(text, 8000)

    def _on_snapshot(self, snap, previous) -> None:
        self.page.set_snapshot(snap)
        self.run_wiring.follow_target(snap)
        self.nodes.set_snapshot(snap, previous)
        self.inspector.show_snapshot_payload(snap)
        exchange = self.sup.last_exchange()
        if exchange is not None:
            self.inspector.show_exchange(exchange)
        st = snap.stats
        tokens = snap.serialize("semantic").tokens
        line = (f"snapshot {st.timings_ms.get('capture', 0):.0f} ms · {st.nodes} nodes (semantic "
                f"{st.tiers['semantic']}, non-semantic {st.tiers['non-semantic']}, structural {st.tiers['structural']})"
                f" · {st.interactive} interactive · payload ~{tokens} tokens · {snap.walk.describe()}")
        cut = status_words(snap)  # a walk stopped at its node budget is said, not hidden
        # a page the server answered with an error (404, 500) is said beside its address, not shown as the site
        http = f"page answered {snap.context.http_error}" if snap.context.http_error else ""
        self.url.setToolTip(f"The {http}" if http else "")
        warn = " · ".join(w for w in (http, cut) if w)
        self.status_snap.set_line(f"{warn} · {line}" if warn else line, walk_cut(snap) or "")
        self.status_snap.setStyleSheet(f"color:{BANNER_FG};font-weight:bold" if warn else "")

    def _select_node(self, node_id: str) -> None:
        self.page.highlight(node_id, kind="selected")
        self.nodes.select_node(node_id)
        if self.approval.retarget(node_id):  # Edit is open: the picked node is the step's new target
            self.page.highlight(node_id, kind="target")
            self.step_overlay.refresh()

    def set_page_size(self, choice: str) -> None:
        """"Fit to panel", or one of the device sizes (scaled to fit the panel)."""
        if choice not in PAGE_SIZES:
            return
        if self.viewport.currentText() != choice:
            self.viewport.setCurrentText(choice)  # comes back here
            return
        size = PAGE_SIZES[choice]
        self.page.set_preset(size)  # fit: asks for the panel's size itself
        if size is not None:
            spawn(self.sup.set_viewport(*size))
        self.save_layout()

    # -- the window's size and what it remembers --------------------------------------------------
    def place_on(self, screen=None) -> QRect:
        """The first geometry: the remembered one (pulled onto a screen if need be), else one from
        the available room of `screen` (default: the primary screen)."""
        saved = to_bytes(self.layout_settings.value("window/geometry"))
        if saved is not None and screen is None and self.restoreGeometry(saved):
            at = screen_at(self.geometry())
            room = at.availableGeometry() if at is not None else None
            if room is not None and not room.contains(self.geometry()):
                self.setGeometry(clamp_to(self.geometry(), room))
            return self.geometry()
        screen = screen or QGuiApplication.primaryScreen()
        if screen is not None:
            self.setScreen(screen)
            room = screen.availableGeometry()
            self.setGeometry(first_geometry(room))
            # a window as big as a small screen is shown maximized, so a window manager keeps its frame on it
            self.start_maximized = self.geometry() == room
        if not self._split_restored:  # the page gets most of the width; the side panel a readable column
            w = self.geometry().width()
            side = min(max(round(w * SIDE_SHARE), self.tabs.minimumWidth()), SIDE_MAX)
            self.split.setSizes([w - side, side])
        return self.geometry()

    def _restore_layout(self) -> None:
        st = self.layout_settings
        self._split_restored = False
        for key, splitter in (("window/split", self.split), ("window/runSplit", self.run_split)):
            state = to_bytes(st.value(key))
            if state is not None and splitter.restoreState(state) and splitter is self.split:
                self._split_restored = True
        choice = st.value("page/size", FIT)
        if isinstance(choice, str) and choice in PAGE_SIZES:
            self.viewport.blockSignals(True)
            self.viewport.setCurrentText(choice)
            self.viewport.blockSignals(False)
            self.page.set_preset(PAGE_SIZES[choice])

    def save_layout(self) -> None:
        """Remember the geometry, the splitter positions and the page size choice."""
        st = self.layout_settings
        st.setValue("window/geometry", self.saveGeometry())
        st.setValue("window/split", self.split.saveState())
        st.setValue("window/runSplit", self.run_split.saveState())
        st.setValue("page/size", self.viewport.currentText())
        st.sync()

    def _settings(self) -> None:
        if self.settings_dialog is None:
            self.settings_dialog = SettingsDialog(self.sup, self)
        self.settings_dialog.refresh()
        self.settings_dialog.show()
        self.settings_dialog.raise_()

    # -- start and stop ------------------------------------------------------------------------
    def page_fitted(self) -> bool:
        """A frame is painted, at the page size the panel asks for, with a snapshot of that layout."""
        want = self.page.wanted_viewport()
        snap = self.sup.snapshot
        return (self.page.frame_count > 0 and snap is not None and self.page.page_size == tuple(map(float, want))
                and (snap.context.viewport.width, snap.context.viewport.height) == want)

    async def wait_painted(self, timeout: float) -> bool:
        """Until the page is painted at the panel's size and its snapshot shown (for --quit-after-load)."""
        loop = asyncio.get_event_loop()
        deadline = loop.time() + timeout
        while loop.time() < deadline and not self.page_fitted():
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)  # let the panels lay out
        return self.page.frame_count > 0

    async def startup(self, url: str | None) -> bool:
        self.sup.open_store()
        self.sessions.attach(self.sup)
        self.sessions.set_current(self.sup.current_session())
        self.act_new_session.setEnabled(self.sup.recording.on)
        await asyncio.sleep(0)  # the window's layout has run: the page panel has its size
        self.sup.viewport = self.page.wanted_viewport()  # the page opens at the size that fills its panel
        ok = await self.sup.start(url)
        if ok and self.sup.tab is not None:
            self.page.attach(self.sup.tab)
            await self.page.start()
        return ok

    async def _show_tab(self, tab) -> None:
        """Another tab became active: the live view (screencast, input, overlay) moves to it."""
        if self._closing:
            return
        try:
            await self.page.stop()
            self.page.attach(tab)
            await self.page.start()
        except Exception as exc:  # the tab may close again at once (a popup): the next switch shows another
            log.debug("could not show the tab: %s", exc)

    async def shutdown(self) -> None:
        """Stop painting and the screencast, then the loop and the browser (in that order)."""
        if self._closing:
            return
        self._closing = True
        self.save_layout()
        self.sessions.close_windows()  # they read the store, which closes with the engine
        for fleet_window in list(self.fleet_windows):  # their runs record in the same store
            await fleet_window.shutdown()
            fleet_window.close()
        try:
            await self.page.stop()
        except Exception:  # the browser may already be gone
            log.debug("screencast stop failed", exc_info=True)
        await self.sup.shutdown()
        if not self.closed.done():
            self.closed.set_result(True)

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt name
        if self.closed.done():
            event.accept()
            return
        event.ignore()  # close once the engine is down
        spawn(self._close_async())

    async def _close_async(self) -> None:
        await self.shutdown()
        self.close()

