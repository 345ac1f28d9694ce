"""The Fleet view: one person supervises every run of a fleet through one approval queue.

Left: every run with its state (queued, running, waiting for you, done, failed, stopped), then the
questions waiting for the person in the order they were asked, each naming its run. Right: the selected
run's live page (its own Chromium tab, screencast like the main window's, input goes to the page) with
the asked step's target outlined, the same approval bar as a single run floating over the page (approve,
edit, skip, reject with a reason, take over, stop this run: the page keeps its size), "Stop this run" and
"Stop all". Grants for every run sit apart from the bar, under the queue (gui.fleet.fleet_grants): "Allow
for every run…" asks first, then approves the step shown and the steps waiting like it in every run; the
grants in force are listed there, each revocable. A take-over typed in plain words is grounded on its own
run's page, and whatever goes wrong with it is said in the bar.

The window drives nothing itself: it answers the fleet's queue (`engine.fleet.ApprovalQueue.answer`) and
asks the fleet to stop runs; the runs' loops do the rest. It stamps each question's `shown_at` when the
list has painted it, which is the "proposed → shown in the queue" time."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from PySide6.QtCore import QPoint, QPointF, QSize, Qt, QTimer
from PySide6.QtWidgets import QHBoxLayout, QLabel, QMainWindow, QPushButton, QSplitter, QVBoxLayout, QWidget

from engine.errors import VigilError
from engine.models.loop import Decision
from engine.models.text import bidi_safe
from gui.approval.approval_bar import ApprovalBar
from gui.approval.step_target import target_in
from gui.fleet.fleet_grants import FleetGrantsBox
from gui.fleet.fleet_lists import QueueList, RunTable, count_words, state_words
from gui.kit.aio import spawn
from gui.kit.labels import PlainLabel
from gui.kit.look import BANNER_BG, BANNER_FG
from gui.kit.window_fit import fit_window
from gui.page.page_view import PageView
from gui.page.step_overlay import StepOverlay

WANTED = QSize(1280, 760)   # the Fleet view's size where the screen has room; else the screen's room
LEFT_SHARE, LEFT_MIN, LEFT_MAX = 0.3, 300, 460   # the runs and the queue: a share of the width, within these


def steps_words(n: int) -> str:
    """The run's recorded steps in words. Not "done": a stopped run's last step counts, though refused."""
    return "no step yet" if n == 0 else ("1 step" if n == 1 else f"{n} steps")

log = logging.getLogger("vigil.gui.fleet")


class FleetWindow(QMainWindow):
    """`FleetWindow(fleet)`; `await window.start()` runs the fleet; `await window.finished` is its result."""

    FAILED_WORDS = "The fleet stopped with an error"   # what `run()` raising means (a subclass says its own)

    def __init__(self, fleet: Any, parent: QWidget | None = None):
        super().__init__(parent)
        self.fleet = fleet
        self.setWindowTitle(bidi_safe(f"Vigil — {self._fleet_words()} ({len(fleet.runs)} runs)"))
        self.closed = asyncio.get_event_loop().create_future()
        self.result: Any = None
        self._task: asyncio.Future | None = None
        self._run: str | None = None          # the run on the right
        self._entry: int | None = None        # the question in the approval bar
        self._closing = False
        self._switching = asyncio.Lock()      # one page switch at a time (_show_page)
        self._in_page_since = 0.0
        self._unsubscribe = None

        # the fleet's, its runs' and their pages' words: plain text, bidi controls as markers (gui.kit.labels)
        self.header = PlainLabel()
        self.header.setTextFormat(Qt.TextFormat.PlainText)
        self.header.setObjectName("fleetHeader")
        self.header.setWordWrap(True)  # a long line wraps: it never widens the left panel (and moves the page)
        self.banner = PlainLabel()
        self.banner.setTextFormat(Qt.TextFormat.PlainText)
        self.banner.setWordWrap(True)
        self.banner.setStyleSheet(f"background:{BANNER_BG};color:{BANNER_FG};padding:6px")
        self.banner.hide()
        self.runs = RunTable()
        self.runs.set_runs(fleet.runs)
        self.runs.show_browser(len(getattr(fleet, "browsers", []) or []) > 1)  # one browser: nothing to tell apart
        self.runs.run_picked.connect(self.show_run)
        self.queue_label = QLabel("Waiting for you (oldest first)")
        self.queue_list = QueueList()
        self.queue_list.entry_picked.connect(self.show_entry)
        self.queue_list.on_shown = self._shown
        self.stop_all_btn = QPushButton("Stop all")
        self.stop_all_btn.setToolTip("Stop every run of the fleet: waiting steps are refused, queued runs never start")
        self.stop_all_btn.clicked.connect(self.stop_all)
        # grants for every run: apart from the bar, so its buttons stay put from one question to the next
        self.grants_box = FleetGrantsBox()
        self.grants_box.confirmed.connect(self._grant)
        self.grants_box.revoke_requested.connect(self.revoke_grant)
        self.grants_box.covered = self._covered_by_offer
        left = QWidget()
        self.left_layout = lv = QVBoxLayout(left)
        lv.setContentsMargins(6, 6, 6, 6)
        lv.addWidget(self.header)
        lv.addWidget(self.runs, 3)
        lv.addWidget(self.queue_label)
        lv.addWidget(self.queue_list, 2)
        lv.addWidget(self.grants_box)
        lv.addWidget(self.stop_all_btn)

        self.run_label = PlainLabel("Select a run to see its page.")
        self.run_label.setTextFormat(Qt.TextFormat.PlainText)
        self.run_label.setWordWrap(True)
        self.page = PageView()
        self.approval = ApprovalBar()
        self.approval.hide()
        self.approval.policy.hide()  # each run keeps its own policy (the fleet file's, or --approve)
        for label in self.approval.findChildren(QLabel):
            if label.text() == "Policy:":
                label.hide()
        self.approval.decided.connect(self._answer)
        self.approval.take_over_requested.connect(lambda text: spawn(self._quick(text)))
        self.approval.in_page_waits = lambda: True
        for b in (self.approval.edit_btn, self.approval.skip_btn, self.approval.reject_btn, self.approval.stop_btn):
            # as narrow as their word where room is short: the bar's row fits the page's side of a 1024-px screen
            b.setMinimumWidth(b.fontMetrics().horizontalAdvance(b.text()) + 24)
        self.approval.waiting_changed.connect(self._waiting_in_page)
        self.stop_run_btn = QPushButton("Stop this run")
        self.stop_run_btn.clicked.connect(self.stop_run)
        self.stop_run_btn.setEnabled(False)
        right = QWidget()
        self.right_layout = rv = QVBoxLayout(right)
        rv.setContentsMargins(6, 6, 6, 6)
        top = QHBoxLayout()
        top.addWidget(self.run_label, 1)
        top.addWidget(self.stop_run_btn)
        rv.addLayout(top)
        # the page in a panel of its own, the bar floating over it (as in a single run's window): the page keeps
        # its size when a question comes and goes
        self.page_panel = QWidget()
        pv = QVBoxLayout(self.page_panel)
        pv.setContentsMargins(0, 0, 0, 0)
        pv.addWidget(self.page)
        rv.addWidget(self.page_panel, 1)
        self.step_overlay = StepOverlay(self.page_panel, self.approval)

        self.split = split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left)
        split.addWidget(right)
        split.setCollapsible(0, False)
        split.setCollapsible(1, False)
        split.setStretchFactor(0, 0)   # a wider window gives its room to the page
        split.setStretchFactor(1, 1)
        central = QWidget()
        cv = QVBoxLayout(central)
        cv.setContentsMargins(0, 0, 0, 0)
        cv.addWidget(self.banner)
        cv.addWidget(split, 1)
        self.setCentralWidget(central)
        self.resize(WANTED)
        self._split_sizes(WANTED.width())
        self._progress = QTimer(self, interval=150)
        self._progress.timeout.connect(self._in_page_progress)
        self._say_counts()

    # -- where it opens --------------------------------------------------------------------------
    def place_on(self, screen: Any = None, anchor: QWidget | None = None) -> Any:
        """Size and place the window (not yet shown) inside `screen`, or the screen of `anchor` (the window
        that opened it), or the primary screen: never larger than its room, frame included."""
        geo = fit_window(self, WANTED, anchor=anchor, screen=screen)
        self._split_sizes(geo.width())
        return geo

    def _split_sizes(self, width: int) -> None:
        left = int(min(max(width * LEFT_SHARE, LEFT_MIN), LEFT_MAX))
        self.split.setSizes([left, max(width - left, 1)])

    # -- running -------------------------------------------------------------------------------
    async def start(self) -> None:
        """Start the fleet (its runs begin at once, up to its `parallel`)."""
        self._unsubscribe = self.fleet.subscribe(self._on_change)
        self._task = asyncio.ensure_future(self.fleet.run())
        self._task.add_done_callback(self._ended)

    async def finished(self) -> Any:
        """Wait for the fleet to end; its `FleetResult` (None when it failed to run)."""
        if self._task is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(self._task)
        return self.result

    def _ended(self, task: asyncio.Future) -> None:
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            self._say(f"{self.FAILED_WORDS}: {exc}")
        else:
            self.result = task.result()
        self._say_counts()

    # -- what changed --------------------------------------------------------------------------
    def _on_change(self, change: Any) -> None:
        if change.kind == "run" and change.run is not None:
            self.runs.update_run(change.run)
            if change.run.name == self._run:
                self._say_run(change.run)
                if change.run.tab is not None and change.run.tab is not self.page.tab:
                    spawn(self._show_page(change.run))
        elif change.kind == "queue" and change.queue is not None:
            q = change.queue
            if q.kind == "asked":
                self.queue_list.add_entry(q.entry)
                if self._entry is None:
                    self.queue_list.select_entry(q.entry.id)
            elif q.kind in ("answered", "withdrawn"):
                self.queue_list.remove_entry(q.entry.id)
                if q.entry.id == self._entry:
                    self._clear_question()
                    nxt = self.fleet.queue.waiting
                    if nxt:
                        self.queue_list.select_entry(nxt[0].id)
        self._say_counts()

    def _say_counts(self) -> None:
        counts: dict[str, int] = {}
        for r in self.fleet.runs:
            counts[r.state] = counts.get(r.state, 0) + 1
        self.header.setText(f"{self._fleet_words().capitalize()}: {len(self.fleet.runs)} runs — {count_words(counts)}")
        self.queue_label.setText(f"Waiting for you (oldest first): {len(self.fleet.queue.waiting)}")

    def _fleet_words(self) -> str:
        """"fleet vendor portals (ID)" — the title the fleet file gives (else its file's name), and the ID
        `vigil fleet --resume` and `vigil export --fleet` take."""
        spec = getattr(self.fleet, "spec", None)
        name = str(getattr(spec, "name", "") or "")
        return f"fleet {name} ({self.fleet.id})" if name and name != "fleet" else f"fleet {self.fleet.id}"

    def _say_run(self, run: Any) -> None:
        extra = f" — {run.reason}" if run.reason and run.finished and run.state != "done" else ""
        self.run_label.setText(f"{run.name} · {state_words(run.state, plain=True)} · {steps_words(run.steps)} · "
                               f"{run.task}{extra}")
        self.stop_run_btn.setEnabled(not run.finished)

    def _say(self, text: str) -> None:
        self.banner.setText(text)
        self.banner.show()

    def _shown(self, entry_id: int) -> None:
        with contextlib.suppress(VigilError):
            self.fleet.queue.mark_shown(entry_id)

    # -- showing a run and a question ------------------------------------------------------------
    def show_run(self, name: str) -> None:
        run = self.fleet.run_named(name)
        if name != self._run:
            self._run = name
            if self._entry is not None and self.fleet.queue.get(self._entry).run != name:
                self._clear_question()
                self.queue_list.clearSelection()
            waiting = self.fleet.queue.waiting_for(name)
            if waiting and self._entry is None:
                self.queue_list.select_entry(waiting[0].id)
        self._say_run(run)
        if run.tab is not None and run.tab is not self.page.tab:
            spawn(self._show_page(run))

    async def _show_page(self, run: Any) -> None:
        """Show the selected run's page. One switch at a time, and always to the run selected when it gets its
        turn: two switches at once (a click on a question while a run's state changed) could leave another
        run's page on show."""
        async with self._switching:
            if self._closing or self._run is None:
                return
            run = self.fleet.run_named(self._run)
            tab = run.tab
            if tab is None or tab is self.page.tab:
                self._outline()
                return
            try:
                await self.page.stop()
                self.page.attach(tab)
                self.page.set_snapshot(tab.latest_snapshot)
                await self.page.start()
            except Exception as exc:  # the run may end (and its tab close) while it is being shown
                log.debug("could not show run %s: %s", run.name, exc)
            self._outline()

    def show_entry(self, entry_id: int) -> None:
        try:
            entry = self.fleet.queue.get(entry_id)
        except VigilError:
            return
        if not entry.waiting:
            return
        self._entry = entry_id
        self.runs.select_run(entry.run)  # shows its page (run_picked)
        if self._run != entry.run:
            self.show_run(entry.run)
        self.approval.show_request(entry.request)
        self.approval.show()
        self._offer_grant(entry)
        self._outline()

    def _outline(self) -> None:
        """Outline the shown question's target on its run's page, as the newest snapshot has it."""
        entry = self._current()
        tab = self.page.tab
        if entry is None or tab is None or self._run != entry.run:
            self.page.highlight(None, kind="target")
            self.step_overlay.place(None)
            return
        snap = tab.latest_snapshot
        if snap is not None:
            self.page.set_snapshot(snap)
        nid = target_in(snap, entry.request.target)
        self.page.highlight(nid, kind="target")
        target = None
        if nid is not None and snap is not None and nid in snap:  # the bar moves up when it would hide the target
            r = self.page.page_rect_to_widget(snap.get(nid).bounds)
            target = r.translated(QPointF(self.page.mapTo(self.page_panel, QPoint(0, 0))))
        self.step_overlay.place(target)

    def _current(self) -> Any:
        if self._entry is None:
            return None
        try:
            e = self.fleet.queue.get(self._entry)
        except VigilError:
            return None
        return e if e.waiting else None

    def _clear_question(self) -> None:
        self._entry = None
        self._progress.stop()
        self.approval.clear()
        self.approval.hide()
        self.grants_box.show_offer(None)
        self.page.highlight(None, kind="target")

    # -- answering -------------------------------------------------------------------------------
    def _answer(self, decision: Decision) -> None:
        """The bar decided: for the question it showed then (`answered`), whatever it shows now."""
        req = self.approval.answered
        entry = next((e for e in self.fleet.queue.history if e.request is req), None) if req is not None else None
        if entry is not None:
            self._answer_entry(entry, decision)

    def _answer_entry(self, entry: Any, decision: Decision) -> None:
        if not entry.waiting:  # answered or withdrawn meanwhile (its run stopped): nothing else takes its answer
            self._say(f"Run {entry.run}'s step {entry.request.step_index + 1} no longer waits: nothing was answered.")
            return
        try:
            self.fleet.queue.answer(entry.id, decision)
        except VigilError as exc:
            self._say(exc.message)

    def answer(self, entry_id: int, decision: Decision) -> None:
        """Show a question and answer it as the bar would (for scripts and tests)."""
        self.queue_list.select_entry(entry_id)
        self.show_entry(entry_id)
        self._answer_entry(self.fleet.queue.get(entry_id), decision)

    async def _quick(self, text: str) -> None:
        """"Take over" with a typed command: grounded on its run's page by the offline planner, and the answer
        to the question the command was typed for (the bar may show another by the time it is grounded). Whatever
        goes wrong is said in the bar: it never stays at "Grounding the command…"."""
        entry = self._current()
        try:
            if entry is None:
                raise VigilError("This question no longer waits: nothing was run.")
            action = await self._ground(text, entry)
        except Exception as exc:  # noqa: BLE001 - any failure is the person's to read, in the bar that asked
            log.warning("take-over %r could not be grounded", text, exc_info=not isinstance(exc, VigilError))
            words = exc.message if isinstance(exc, VigilError) else f"{type(exc).__name__}: {exc}"
            if entry is None or self.approval.request is entry.request:
                self.approval.show_take_over_error(f"Could not ground {text!r}: {words}")
            else:
                self._say(f"Run {entry.run}'s take-over {text!r} was not run: {words}")
            return
        self._answer_entry(entry, Decision(kind="take_over", action=action))
        if self.approval.request is entry.request:
            self.approval.clear()

    async def _ground(self, text: str, entry: Any) -> Any:
        """The action `text` means on the page of the entry's run (its own tab, whichever page is on show)."""
        from engine.loop.planner import Observation
        from engine.planners.heuristic import HeuristicPlanner

        tab = self.fleet.tab_of(entry.run)
        if tab is None:
            raise VigilError(f"Run {entry.run} has no page open.")
        snap = await tab.snapshot()
        step = await HeuristicPlanner().propose(Observation(task=text, step_index=0, snapshot=snap, url=snap.url))
        if step.action.name == "fail":
            raise VigilError(step.action.reason or f"nothing on run {entry.run}'s page matches it.")
        return step.action

    def _waiting_in_page(self, waiting: bool) -> None:
        """"I'll do it in the page": Done is offered once this run's page had the person's own input."""
        if waiting:
            self._in_page_since = time.monotonic()
            self._progress.start()
        else:
            self._progress.stop()

    def _in_page_progress(self) -> None:
        tab = self.page.tab
        acted = tab is not None and float(getattr(tab.target, "person_input_at", 0.0) or 0.0) > self._in_page_since
        self.approval.set_in_page_progress(["you acted in the page"] if acted else [], acted)

    # -- grants for every run -----------------------------------------------------------------------
    def _offer_grant(self, entry: Any) -> None:
        """The grants box offers one for the question shown (never a sensitive step, a re-asked one or a page's
        dialog), with how many other waiting steps it would approve."""
        req = entry.request
        offer = None
        if not (req.sensitive_reasons or req.error or req.dialog is not None):
            with contextlib.suppress(VigilError):
                offer = self.fleet.grant_offer(req, entry.run)
        self.grants_box.show_offer(offer)

    def _covered_by_offer(self) -> int:
        """The other waiting steps the grant would approve with the one shown."""
        entry, like = self._current(), getattr(self.fleet, "waiting_like", None)
        return len(like(entry.request, entry.run)) if like is not None and entry is not None else 0

    def _grant(self) -> None:
        """The person said yes: the grant, the shown step approved, and the waiting steps it covers with it."""
        entry = self._current()
        self.grants_box.cancel()
        if entry is None:
            self._say("The question no longer waits: nothing was granted.")
            return
        try:
            words = self.fleet.grant_for_request(entry.request, entry.run)
        except VigilError as exc:
            self._say(f"Nothing was granted: {exc.message}")
            return
        self._answer_entry(entry, Decision.approve())
        self.grants_box.say(f"Granted {words}.")
        self.show_grants()

    def grant_book(self) -> Any:
        """The grants of every run (engine.fleet.grants.FleetGrants), None when the fleet keeps none."""
        return getattr(self.fleet, "grants", None)

    def show_grants(self) -> None:
        """The grants box lists the grants in force, each revocable."""
        book = self.grant_book()
        grants = book.active() if book is not None else []
        self.grants_box.set_grants([(g.id, g.describe()) for g in grants])

    def revoke_grant(self, grant_id: int) -> None:
        book = self.grant_book()
        if book is None:
            return
        try:
            g = book.revoke(grant_id)
        except VigilError as exc:
            self._say(f"The grant was not revoked: {exc.message}")
            return
        self.grants_box.say(f"Revoked #{g.id}: {g.describe()}; such steps are asked again.")
        self.show_grants()

    def stop_run(self) -> None:
        if self._run is not None:
            self.fleet.stop(self._run, "stopped by the person in the Fleet view")

    def stop_all(self) -> None:
        self.fleet.stop_all("the person stopped the whole fleet")

    # -- closing ---------------------------------------------------------------------------------
    def _stop_for_close(self) -> None:
        """The window closes while the fleet runs: stop it (`run()` then ends)."""
        self.fleet.stop_all("the Fleet view was closed")

    async def shutdown(self) -> None:
        """Stop the fleet (nothing left waiting), the screencast, then wait for the runs to end."""
        if self._closing:
            return
        self._closing = True
        self._progress.stop()
        if self._task is not None and not self._task.done():
            self._stop_for_close()
        with contextlib.suppress(Exception):
            await self.page.stop()
        await self.finished()
        if self._unsubscribe is not None:
            self._unsubscribe()
        if not self.closed.done():
            self.closed.set_result(True)

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt name
        if self.closed.done():
            event.accept()
            return
        event.ignore()
        spawn(self._close_async())

    async def _close_async(self) -> None:
        await self.shutdown()
        self.close()
