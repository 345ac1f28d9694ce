"""The window's side of a supervised run: starting it (Run, replay), the step asked (approval bar over the
page, the target outlined — and kept on its element as the page moves), step records in the chat, plan
and status bar, the picture after a step, and the run's state in the buttons. A part of
`gui.window.main_window.MainWindow` (`window.run_wiring`): it works the window's widgets and its controller."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Protocol

import shiboken6
from PySide6.QtCore import QObject, QPoint, QPointF
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QPushButton, QStatusBar, QTabWidget, QWidget

from engine.models import ApprovalRequest, StepRecord
from gui.approval.step_target import target_in
from gui.kit.aio import spawn
from gui.kit.look import BLUE_DARK
from gui.run.picture_window import PictureWindow

if TYPE_CHECKING:
    from gui.approval.approval_bar import ApprovalBar
    from gui.nodes.inspector import PayloadInspector
    from gui.page.page_view import PageView
    from gui.page.step_overlay import StepOverlay
    from gui.run.chat_view import ChatView
    from gui.run.plan_view import PlanView
    from gui.sessions.sessions_panel import SessionsPanel
    from gui.supervisor.controller import Supervisor

# the loop's states as the status bar says them
LOOP_WORDS = {"observing": "observing the page", "planning": "planning", "awaiting_approval": "waiting for approval",
              "acting": "acting", "verifying": "acting"}


class RunWindow(Protocol):
    """What the run's side works of the window (gui.window.main_window.MainWindow)."""

    @property
    def sup(self) -> Supervisor: ...
    @property
    def approval(self) -> ApprovalBar: ...
    @property
    def page(self) -> PageView: ...
    @property
    def page_column(self) -> QWidget: ...
    @property
    def step_overlay(self) -> StepOverlay: ...
    @property
    def chat(self) -> ChatView: ...
    @property
    def plan(self) -> PlanView: ...
    @property
    def inspector(self) -> PayloadInspector: ...
    @property
    def sessions(self) -> SessionsPanel: ...
    @property
    def tabs(self) -> QTabWidget: ...
    @property
    def task(self) -> QLineEdit: ...
    @property
    def planner(self) -> QComboBox: ...
    @property
    def policy(self) -> QComboBox: ...
    @property
    def run_btn(self) -> QPushButton: ...
    @property
    def stop_btn(self) -> QPushButton: ...
    @property
    def act_new_session(self) -> QAction: ...
    @property
    def status_loop(self) -> QLabel: ...
    @property
    def banner(self) -> QLabel: ...
    def statusBar(self) -> QStatusBar: ...  # noqa: N802 - Qt name
    def show_error(self, text: str) -> None: ...


class RunWiring(QObject):
    """`RunWiring(window, parent=window)`: reactions to the controller's run signals, and the Run button's side.
    A QObject child of the window, so the signals wired to it go quiet with the window."""

    def __init__(self, win: RunWindow, parent: QObject) -> None:
        super().__init__(parent)
        self.win = win
        self.pictures: list[PictureWindow] = []  # the step pictures open now (kept alive while shown)

    # -- the step asked -------------------------------------------------------------------------
    def on_request(self, req: ApprovalRequest) -> None:
        self.win.approval.show_request(req)
        self.place_target(self.win.sup.snapshot)

    def place_target(self, snap: Any) -> None:
        """Outline the asked step's target as `snap` has it, and keep the bar off it."""
        win = self.win
        req = win.approval.request
        nid = target_in(snap, req.target) if req is not None and req.target else None
        if req is not None and req.target and nid is None and req.target.get("id") and snap is None:
            nid = req.target["id"]  # no snapshot to look in yet: the ID the step names
        win.page.highlight(nid, kind="target")
        target = None
        if nid is not None and snap is not None and nid in snap:
            r = win.page.page_rect_to_widget(snap.get(nid).bounds)
            target = r.translated(QPointF(win.page.mapTo(win.page_column, QPoint(0, 0))))
        win.step_overlay.place(target)  # over the panel's bottom, or its top when the target is there

    def follow_target(self, snap: Any) -> None:
        """A newer snapshot while a step is asked: the outline follows its element (the page moved)."""
        bar = self.win.approval
        if bar.is_pending() and not bar.is_dialog() and not bar.editing():
            self.place_target(snap)  # (while Edit is open the outline is the element picked for the edit)

    def on_request_done(self) -> None:
        self.win.approval.clear()
        self.win.page.highlight(None, kind="target")

    def policy_from_bar(self, policy: str) -> None:
        self.win.policy.setCurrentText(policy)  # also tells the running loop

    async def quick(self, text: str) -> None:
        d = await self.win.sup.quick_command(text)
        if d is not None:
            self.win.sup.decide(d)
        else:
            self.win.approval.show_take_over_error(f"Could not ground {text!r} on this page; see the banner.")

    # -- what ran -------------------------------------------------------------------------------
    def on_record(self, rec: StepRecord) -> None:
        win = self.win
        win.chat.add_step_record(rec)
        win.plan.add_step_record(rec)  # an unverified step is marked so in the plan (not ✓)
        exchange = win.sup.last_exchange()
        if exchange is not None:  # what the model or backend was sent for this step
            win.inspector.show_exchange(exchange)
        if rec.screenshot_after:  # for whoever compares pictures; nothing a person reads at a glance
            win.status_loop.setToolTip(f"picture after step {rec.index + 1}: perceptual hash {rec.screenshot_after}")
        win.statusBar().showMessage(step_words(rec), 6000)

    def on_step_picture(self, index: int, png: bytes, phash: str) -> None:
        """A button on the step's chat turn opens the screenshot taken after it, with its Set-of-Mark."""
        self.win.status_loop.setToolTip(f"picture after step {index + 1}: perceptual hash {phash}")
        turn = self.win.chat.turn_for_step(index)
        if turn is None:
            return
        btn = QPushButton("Picture after this step")
        btn.setToolTip("The screenshot taken after this step, with its Set-of-Mark")
        btn.setFlat(True)
        btn.setObjectName("stepPicture")
        btn.setStyleSheet(f"#stepPicture {{ text-align:left; color:{BLUE_DARK}; padding:2px 0; }}")
        btn.clicked.connect(lambda: self.show_picture(index, png))
        turn.box.addWidget(btn)

    def show_picture(self, index: int, png: bytes) -> PictureWindow:
        """The picture taken after step `index`, whole (fitted to a window that fits the screen), zoomable."""
        from PySide6.QtGui import QPixmap
        pm = QPixmap()
        pm.loadFromData(png, "PNG")
        view = PictureWindow(pm, f"Vigil — step {index + 1}: the page after it", anchor=self.win.page,
                             caption=f"After step {index + 1} · {pm.width()}×{pm.height()} px, with its Set-of-Mark")
        self.pictures = [w for w in self.pictures if shiboken6.isValid(w) and w.isVisible()] + [view]
        view.show()  # non-modal
        return view

    def on_status(self, status: str, state: str, detail: str) -> None:
        win = self.win
        win.chat.set_task_status(status, detail)
        running = status == "running" and state != "finished"
        win.status_loop.setText(LOOP_WORDS.get(state, "running") if running else "idle")
        win.status_loop.setProperty("state", state if running else "idle")
        win.plan.set_running(running)
        win.run_btn.setEnabled(not running)
        win.stop_btn.setEnabled(running)
        win.act_new_session.setEnabled(not running and win.sup.recording.on)
        win.sessions.set_running(running)

    # -- starting a run -------------------------------------------------------------------------
    def start(self) -> None:
        """Run the task in the task box (Run, or Enter in the box)."""
        win = self.win
        text = win.task.text().strip()
        if not text or win.sup.running():
            return
        self._fresh_run()
        spawn(self._started(win.sup.run_task(text, win.planner.currentText(), win.policy.currentText())))

    def replay(self, session_id: str) -> None:
        """Replay a stored session in this tab with the task row's approval policy."""
        win = self.win
        if win.sup.running():
            return
        self._fresh_run()
        win.tabs.setCurrentIndex(0)  # the Run tab: the plan and the chat of the replay
        spawn(self._started(win.sup.replay(session_id, win.policy.currentText())))

    async def _started(self, starting: Awaitable[object]) -> None:
        """Await the start of a run; a run that never started (a planner that cannot be made, a session
        with nothing to replay) leaves the plan panel idle again."""
        await starting
        if not self.win.sup.running():
            self.win.plan.set_running(False)

    def _fresh_run(self) -> None:
        win = self.win
        win.banner.hide()
        if win.sup.store_error:  # still true for this run
            win.show_error(win.sup.store_error)
        win.chat.clear()
        win.plan.set_plan(None)
        win.plan.set_running(True)


def step_words(rec: StepRecord) -> str:
    """The status bar's line for a finished step: what ran and whether it was verified, at a glance. A step that
    did not run says why: skipped, rejected (with the person's reason), stopped."""
    total = rec.timings_ms.get("total")
    took = f" · {total:.0f} ms" if total else ""
    if rec.status == "skipped":
        return f"Step {rec.index + 1}: skipped{took}"
    if rec.status == "rejected":
        reason = ((rec.decision.reason if rec.decision is not None else None) or "").strip() or "no reason given"
        return f"Step {rec.index + 1}: rejected: {reason}{took}"
    if rec.action is None and rec.status == "stopped":
        return f"Step {rec.index + 1}: stopped before it ran{took}"
    if rec.action is None:
        what = "the person acted in the page"  # (only a take-over in the page completes without an action)
    elif rec.action.name in ("finish", "fail"):
        what = rec.action.name  # its words are the chat's task header already
    else:
        what = rec.action.to_string()
    verdict: str
    if rec.status != "completed":
        verdict = rec.status
    elif rec.verification is None:
        verdict = "done"
    else:
        verdict = "verified" if rec.verification.success else "not verified"
    return f"Step {rec.index + 1}: {what} — {verdict}{took}"
