"""The window's side of a supervised run: starting it (Run, replay), the step asked (approval bar over the
page, the target outlined — and kept on its element as the page moves), step records in the chat, plan
and status bar, the picture after a step, and the run's state in the buttons. A mixin of
`gui.main_window.MainWindow` (it uses the window's widgets and its controller, `self.sup`)."""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import QPoint, QPointF
from PySide6.QtWidgets import QPushButton

from gui.aio import spawn
from gui.take_over import target_in
from gui.widgets.picture_window import PictureWindow

# the loop's states as the status bar says them
LOOP_WORDS = {"observing": "observing the page", "planning": "planning", "awaiting_approval": "waiting for approval",
              "acting": "acting", "verifying": "acting"}


class RunWiring:
    """Reactions to the controller's run signals, and the Run button's side."""

    # -- the step asked -------------------------------------------------------------------------
    def _on_request(self, req) -> None:
        self.approval.show_request(req)
        self._place_target(self.sup.snapshot)

    def _place_target(self, snap) -> None:
        """Outline the asked step's target as `snap` has it, and keep the bar off it."""
        req = self.approval.request
        nid = target_in(snap, req.target) if req is not None and req.target else None
        if req is not None and req.target and nid is None and req.target.get("id") and snap is None:
            nid = req.target["id"]  # no snapshot to look in yet: the ID the step names
        self.page.highlight(nid, kind="target")
        target = None
        if nid is not None and snap is not None and nid in snap:
            r = self.page.page_rect_to_widget(snap.get(nid).bounds)
            target = r.translated(QPointF(self.page.mapTo(self.page_column, QPoint(0, 0))))
        self.step_overlay.place(target)  # over the panel's bottom, or its top when the target is there

    def _follow_target(self, snap) -> None:
        """A newer snapshot while a step is asked: the outline follows its element (the page moved)."""
        if self.approval.is_pending() and not self.approval.is_dialog() and not self.approval.editing():
            self._place_target(snap)  # (while Edit is open the outline is the element picked for the edit)

    def _on_request_done(self) -> None:
        self.approval.clear()
        self.page.highlight(None, kind="target")

    def _policy_from_bar(self, policy: str) -> None:
        self.policy.setCurrentText(policy)  # also tells the running loop

    async def _quick(self, text: str) -> None:
        d = await self.sup.quick_command(text)
        if d is not None:
            self.sup.decide(d)
        else:
            self.approval.show_take_over_error(f"Could not ground {text!r} on this page; see the banner.")

    # -- what ran -------------------------------------------------------------------------------
    def _on_record(self, rec) -> None:
        self.chat.add_step_record(rec)
        self.plan.add_step_record(rec)  # an unverified step is marked so in the plan (not ✓)
        exchange = self.sup.last_exchange()
        if exchange is not None:  # what the model or backend was sent for this step
            self.inspector.show_exchange(exchange)
        if rec.screenshot_after:  # for whoever compares pictures; nothing a person reads at a glance
            self.status_loop.setToolTip(f"picture after step {rec.index + 1}: perceptual hash {rec.screenshot_after}")
        self.statusBar().showMessage(step_words(rec), 6000)

    def _on_step_picture(self, index: int, png: bytes, phash: str) -> None:
        """A button on the step's chat turn opens the screenshot taken after it, with its Set-of-Mark."""
        self.status_loop.setToolTip(f"picture after step {index + 1}: perceptual hash {phash}")
        turn = self.chat.turn_for_step(index)
        if turn is None:
            return
        btn = QPushButton("Picture after this step")
        btn.setToolTip("The screenshot taken after this step, with its Set-of-Mark")
        btn.setFlat(True)
        btn.setObjectName("stepPicture")
        btn.setStyleSheet("#stepPicture { text-align:left; color:#1d4ed8; padding:2px 0; }")
        btn.clicked.connect(lambda: self._show_picture(index, png))
        turn.box.addWidget(btn)

    def _show_picture(self, index: int, png: bytes) -> PictureWindow:
        """The picture taken after step `index`, whole (fitted to a window that fits the screen), zoomable."""
        from PySide6.QtGui import QPixmap
        pm = QPixmap()
        pm.loadFromData(png, "PNG")
        view = PictureWindow(pm, f"Vigil — step {index + 1}: the page after it", anchor=self,
                             caption=f"After step {index + 1} · {pm.width()}×{pm.height()} px, with its Set-of-Mark")
        self._pictures = [w for w in getattr(self, "_pictures", []) if shiboken6.isValid(w) and w.isVisible()] + [view]
        view.show()  # non-modal
        return view

    def _on_status(self, status: str, state: str, detail: str) -> None:
        self.chat.set_task_status(status, detail)
        running = self._run_active = status == "running" and state != "finished"
        self.status_loop.setText(LOOP_WORDS.get(state, "running") if running else "idle")
        self.status_loop.setProperty("state", state if running else "idle")
        self.plan.set_running(running)
        self.run_btn.setEnabled(not running)
        self.stop_btn.setEnabled(running)
        self.act_new_session.setEnabled(not running and self.sup.recording)
        self.sessions.set_running(running)

    # -- starting a run -------------------------------------------------------------------------
    def _run(self) -> None:
        text = self.task.text().strip()
        if not text or self.sup.running():
            return
        self._fresh_run()
        spawn(self._started(self.sup.run_task(text, self.planner.currentText(), self.policy.currentText())))

    def replay(self, session_id: str) -> None:
        """Replay a stored session in this tab with the task row's approval policy."""
        if self.sup.running():
            return
        self._fresh_run()
        self.tabs.setCurrentIndex(0)  # the Run tab: the plan and the chat of the replay
        spawn(self._started(self.sup.replay(session_id, self.policy.currentText())))

    async def _started(self, starting) -> None:
        """Await the start of a run; a run that never started (a planner that cannot be made, a session
        with nothing to replay) leaves the plan panel idle again."""
        await starting
        if not self.sup.running():
            self.plan.set_running(False)

    def _fresh_run(self) -> None:
        self.banner.hide()
        if self.sup.store_error:  # still true for this run
            self.show_error(self.sup.store_error)
        self.chat.clear()
        self.plan.set_plan(None)
        self.plan.set_running(True)


def step_words(rec) -> str:
    """The status bar's line for a finished step: what ran and whether it was verified, at a glance."""
    if rec.action is None:
        what = "the person acted in the page"
    elif rec.action.name in ("finish", "fail"):
        what = rec.action.name  # its words are the chat's task header already
    else:
        what = rec.action.to_string()
    if rec.status != "completed":
        verdict = rec.status
    elif rec.verification is None:
        verdict = "done"
    else:
        verdict = "verified" if rec.verification.success else "not verified"
    total = rec.timings_ms.get("total")
    took = f" · {total:.0f} ms" if total else ""
    return f"Step {rec.index + 1}: {what} — {verdict}{took}"
