"""The live view follows the page between steps (issue 29, items 1 and 2): the window on real library pages
of the corpus (offscreen 1366x768, real Chromium), with input sent the way a person's reaches the page
(through the live view's PageInput → CDP). Nobody presses Snapshot here: every snapshot is the live view's.

- a select's menu opened in the live view gets its option boxes, and loses them when it closes; the tree
  and the status bar's counts follow;
- a wheel scroll of the documentation page moves the boxes with the page at once (the frames carry the
  scroll), then the links that came into view get boxes;
- a page that changes every frame is snapshotted no more often than the throttle allows;
- no live snapshot is taken while a step runs.
"""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication

from support.gui_helpers import open_window, run, screen_named, wait_fitted

CENTER_JS = """(sel) => { const e = document.querySelector(sel); const r = e.getBoundingClientRect();
  return [r.x + r.width / 2, r.y + r.height / 2]; }"""
OPTIONS_JS = """(sel) => Array.from(document.querySelectorAll(sel)).map((e) => [e, e.getBoundingClientRect()])
  .filter(([e, r]) => r.width > 2 && r.height > 2 && r.bottom > 0 && r.top < innerHeight)
  .map(([e, r]) => [e, r.x + r.width / 2, r.y + r.height / 2])
  .filter(([e, x, y]) => { const h = document.elementFromPoint(x, y); return h && (h === e || e.contains(h)); })
  .map(([e, x, y]) => [x, y])"""
POPUP_BOUND_S = 2.0   # the bench's target is 0.5 s; a shared, loaded machine gets room


def _boxed(page, points) -> bool:
    """Every point lies in a box the overlay draws now."""
    boxes = [b.page_rect for b in page.drawn_boxes()]
    return bool(points) and all(any(x0 <= x <= x0 + w and y0 <= y <= y0 + h for x0, y0, w, h in boxes)
                                for x, y in points)


def _click_page(qtbot, w, x: float, y: float) -> None:
    """A person's click at page CSS px (x, y) in the live view."""
    pos = w.page.to_widget(x, y).toPoint()
    qtbot.mouseClick(w.page, Qt.LeftButton, pos=pos)


def _interactive_count(w) -> int:
    line = w.status_snap.full_text()
    return int(line.split(" interactive")[0].rsplit("· ", 1)[1].replace(",", ""))


@pytest.mark.parametrize("page,opener,options", [
    ("real/tom-select.html", ".ts-control", ".ts-dropdown .option"),
    ("real/datepicker.html", "#departure",
     ".flatpickr-calendar.open .flatpickr-day:not(.prevMonthDay):not(.nextMonthDay)"),
])
def test_a_menu_opened_in_the_live_view_gets_its_boxes_and_loses_them_when_closed(qtbot, aio, server, page,  # noqa: F811
                                                                                    opener, options):
    with open_window(qtbot, server.url(page), screen=screen_named("1366x768")) as w:
        wait_fitted(qtbot, w)
        w.act_overlay.setChecked(False)   # the click goes to the page (with the overlay on, a box would take it)
        x, y = run(qtbot, w.sup.tab.page.evaluate(CENTER_JS, opener))
        n_snapshots = w.sup.live.follower.stats.snapshots
        # the GUI's part of the path: a live snapshot handed to the controller → boxes, tree and status bar
        # set (synchronously) → the next paint of the page view
        gui: list[float] = []
        painted: list[float] = []
        show = w.sup.live.follower.on_snapshot

        def timed(snap, cost):
            t = time.perf_counter()
            show(snap, cost)
            gui.append(time.perf_counter())
            gui.append(gui.pop() - t)
            painted.append(-time.perf_counter())   # negative: waiting for its paint
        w.sup.live.follower.on_snapshot = timed

        def on_paint():
            if painted and painted[-1] < 0:
                painted[-1] = time.perf_counter() + painted[-1]
        w.page.frame_painted.connect(on_paint)
        t0 = time.monotonic()
        _click_page(qtbot, w, x, y)
        qtbot.waitUntil(lambda: bool(run(qtbot, w.sup.tab.page.evaluate(OPTIONS_JS, options))), timeout=5000)
        # the options' centres are asked again each time: a calendar that fades in slides 20 px down while it
        # opens, so centres taken at its start lie above where the options (and their boxes) come to rest
        points: list = []

        def boxed() -> bool:
            points[:] = run(qtbot, w.sup.tab.page.evaluate(OPTIONS_JS, options))
            return _boxed(w.page, points)
        try:
            qtbot.waitUntil(boxed, timeout=int(POPUP_BOUND_S * 1000) + 3000)
        except qtbot.TimeoutError:
            raise AssertionError(f"the options have no boxes: live {w.sup.live.follower.stats}, "
                                 f"gap {w.sup.live.follower.gap():.2f} s, "
                                 f"may run {w.sup.live.may_run()}, {len(w.page.drawn_boxes())} boxes") from None
        took = time.monotonic() - t0
        assert took < POPUP_BOUND_S + 1.0, f"the options got their boxes after {took:.2f} s"
        assert w.sup.live.follower.stats.snapshots > n_snapshots, "no live snapshot was taken"
        qtbot.waitUntil(lambda: bool(painted) and painted[-1] >= 0, timeout=3000)
        print(f"\n{page}: options boxed {took * 1000:.0f} ms after the click; controller → boxes, tree, status "
              f"bar {max(gui) * 1000:.0f} ms at most, → painted {max(painted) * 1000:.0f} ms at most")
        assert max(gui) < 0.5 and max(painted) < 1.0, (gui, painted)
        # the tree and the status bar follow: the options are nodes of the tree
        opts = [b.node_id for b in w.page.drawn_boxes() if b.node_id in w.sup.snapshot
                and any(b.page_rect[0] <= px <= b.page_rect[0] + b.page_rect[2]
                        and b.page_rect[1] <= py <= b.page_rect[1] + b.page_rect[3] for px, py in points)]
        assert opts and w.nodes.view_index(opts[-1]).isValid()
        qtbot.waitUntil(lambda: not w.page.overlay_stale, timeout=5000)
        opened = _interactive_count(w)
        assert opened == w.sup.snapshot.stats.interactive, "the status bar does not count the snapshot shown"
        # close it as a person would (Escape in the live view): the boxes go
        w.page.setFocus()
        qtbot.keyClick(w.page, Qt.Key_Escape)
        qtbot.waitUntil(lambda: not run(qtbot, w.sup.tab.page.evaluate(OPTIONS_JS, options)), timeout=5000)
        qtbot.waitUntil(lambda: not any(b.node_id in opts for b in w.page.drawn_boxes()), timeout=5000)
        closed = w.sup.snapshot
        assert _interactive_count(w) == closed.stats.interactive and closed.stats.interactive <= opened


def _wheel(view, pos: QPointF, dy: int) -> None:
    ev = QWheelEvent(pos, view.mapToGlobal(pos), QPoint(0, 0), QPoint(0, dy), Qt.NoButton, Qt.NoModifier,
                     Qt.NoScrollPhase, False)
    QApplication.sendEvent(view, ev)


# The page's panel is under 1024 px wide, so the documentation shows its narrow layout: a top bar 40 px high,
# position: fixed (Menu, the logo, Quick search, Go). Once a snapshot at the new scroll has seen those boxes
# where they were, the overlay keeps them put, also on a frame painted at the old scroll after it landed
# (CI: "4 of 8 boxes moved by 300.0", the 4 were the bar's).
FIXED_BAR_PX = 40


def _in_fixed_bar(rect) -> bool:
    return rect[1] >= -0.5 and rect[1] + rect[3] <= FIXED_BAR_PX + 0.5


def test_a_scroll_moves_the_boxes_at_once_then_new_links_get_boxes(qtbot, aio, server):  # noqa: F811
    with open_window(qtbot, server.url("real/pydoc/library/json.html"), screen=screen_named("1366x768")) as w:
        wait_fitted(qtbot, w)
        assert w.sup.snapshot.context.viewport.width < 1024, "the page is not in its narrow layout (fixed top bar)"
        w.act_overlay.setChecked(True)
        qtbot.waitUntil(lambda: not w.page.overlay_stale, timeout=5000)
        seen = {b.node_id: b.page_rect for b in w.page.drawn_boxes()}
        shifted: list = []   # every painted frame whose scroll differs from the snapshot drawn

        def painted():
            dx, dy = w.page.scroll_shift()
            if dy:
                at_snapshot = {b.node_id: b.page_rect for b in w.page.overlay_boxes()}
                drawn = {b.node_id: b.page_rect for b in w.page.drawn_boxes()}
                right = [n for n in drawn if abs(drawn[n][1] - (at_snapshot[n][1] + dy)) < 0.6
                         or (abs(drawn[n][1] - at_snapshot[n][1]) < 0.6 and _in_fixed_bar(at_snapshot[n]))]
                shifted.append((dy, len(right), len(drawn)))
        w.page.frame_painted.connect(painted)
        # A snapshot can land before the frames of the new scroll have come through their masking and been painted
        # (seen on a loaded machine: 120 ms from frame to paint); then nothing was drawn in between to check, and
        # the wheel is turned again (at most three times) until a frame shows the page ahead of its snapshot.
        for _ in range(3):
            before = w.sup.snapshot
            _wheel(w.page, QPointF(w.page.width() / 2, w.page.height() / 2), -360)   # three notches down
            try:
                qtbot.waitUntil(lambda: w.sup.snapshot is not before  # noqa: B023 - waited on here
                                and w.sup.snapshot.context.scroll_y > before.context.scroll_y + 100  # noqa: B023
                                and not w.page.overlay_stale, timeout=8000)
            except qtbot.TimeoutError:
                raise AssertionError(
                    f"no snapshot after the scroll: page scrollY {w.page._meta.get('scrollOffsetY')}, live "
                    f"{w.sup.live.follower.stats}, may run {w.sup.live.may_run()}, snapshot y "
                    f"{w.sup.snapshot.context.scroll_y}") from None
            if shifted:
                break
        w.page.frame_painted.disconnect(painted)
        assert shifted, "in three wheel turns, no frame was painted with the new scroll before its snapshot landed"
        for dy, right, drawn in shifted:   # the boxes moved with the page at once (the fixed top bar's stay)
            assert right >= 0.9 * drawn, f"{right} of {drawn} boxes moved by {dy} or stayed in the fixed top bar"
        snap = w.sup.snapshot
        fresh = [b for b in w.page.drawn_boxes() if b.node_id not in seen]
        assert fresh, (f"the links that came into view have no boxes ({len(seen)} before, "
                       f"{len(w.page.drawn_boxes())} now: {[b.role for b in w.page.drawn_boxes()][:10]})")
        qtbot.waitUntil(lambda: not w.page.overlay_stale, timeout=5000)
        qtbot.waitUntil(lambda: f"{snap.stats.interactive} interactive" in w.status_snap.full_text(), timeout=3000)
        w.page.grab().save("/tmp/vigil-live-docs-scrolled.png")


TICKER_JS = """(() => { const el = document.createElement('div'); el.id = 'ticker'; document.body.prepend(el);
  const tick = (t) => { el.textContent = String(t); el.style.width = (t % 300) + 'px'; requestAnimationFrame(tick); };
  requestAnimationFrame(tick); return 1; })()"""


def test_a_page_changing_every_frame_is_snapshotted_within_the_throttle(qtbot, aio, server):  # noqa: F811
    with open_window(qtbot, server.url("real/tom-select.html"), screen=screen_named("1366x768")) as w:
        wait_fitted(qtbot, w)
        live = w.sup.live.follower
        run(qtbot, w.sup.tab.page.evaluate(TICKER_JS))
        qtbot.wait(1500)
        n0, r0, t0 = live.stats.snapshots, live.stats.reports, time.monotonic()
        qtbot.wait(3000)
        n, secs = live.stats.snapshots - n0, time.monotonic() - t0
        assert n >= 1, f"a page changing all the time was not followed: {live.stats}, gap {live.gap():.2f} s"
        assert n <= secs / live.config.min_gap_s + 1, f"{n} snapshots in {secs:.1f} s"
        # each snapshot is followed by a pause of at least 4x its cost (so at most 20% of the time goes to
        # snapshotting), at least min_gap_s, at most max_gap_s
        c = live.config
        spans, costs = live.stats.spans[-n - 1:], live.stats.costs_ms[-n - 1:]
        for (_s0, e0), (s1, _e1), cost in zip(spans, spans[1:], costs, strict=False):
            want = min(c.max_gap_s, max(c.min_gap_s, cost / 1000 * (1 / c.max_share - 1)))
            assert s1 - e0 >= want - 0.02, f"a snapshot {cost:.0f} ms long was followed after {s1 - e0:.2f} s"
        assert live.stats.reports - r0 <= n + 2, "the page reported more often than once per snapshot"
        # the lag shown is that of the last snapshot (since its walk began), not since the page first changed
        # (the ticker started 1.5 s before t0; one snapshot may have been under way at t0)
        since = w.page.page_ahead_since
        assert since == 0 or since >= t0 - 1.0, f"shown {time.monotonic() - since:.1f} s behind"


# Changes the page every 400 ms: the live view always has a change to follow, while the window's refresh after the
# run still finds the 300 ms of quiet it settles on (on a page changing every frame it waits out its 3 s cap).
STEADY_TICKER_JS = """(() => { const el = document.createElement('div'); el.id = 'ticker'; document.body.prepend(el);
  let t = 0; setInterval(() => { t += 1; el.textContent = String(t); el.style.width = (t * 7 % 300) + 'px'; }, 400);
  return 1; })()"""


def test_no_live_snapshot_while_a_step_runs(qtbot, aio, server):  # noqa: F811
    with open_window(qtbot, server.url("offline_shop.html"), screen=screen_named("1366x768")) as w:
        wait_fitted(qtbot, w)
        run(qtbot, w.sup.tab.page.evaluate(STEADY_TICKER_JS))
        states: list[str] = []
        take = w.sup.live.follower.take

        async def watched():
            states.append(w.sup.loop_state if w.sup.running() else "idle")
            return await take()
        w.sup.live.follower.take = watched   # every live snapshot notes the loop's state when it is taken
        qtbot.waitUntil(lambda: bool(states), timeout=6000)   # the live view follows the changing page
        w.policy.setCurrentText("auto")
        w.task.setText("type Ada into Full name and click Place order")
        qtbot.mouseClick(w.run_btn, Qt.LeftButton)
        qtbot.waitUntil(w.sup.running, timeout=10000)
        during = len(states)
        qtbot.waitUntil(lambda: not w.sup.running(), timeout=40000)
        in_steps = [s for s in states[during:] if s in ("observing", "planning", "acting", "verifying")]
        assert not in_steps, f"live snapshots were taken while a step ran: {in_steps}"
        after = len(states)
        qtbot.waitUntil(lambda: len(states) > after, timeout=6000)   # it follows the page again after the run


def test_a_wheel_over_a_menu_moves_its_option_boxes_at_once(qtbot, aio, server):  # noqa: F811
    """The element under the wheel scrolls (tom-select's menu of 18 countries, 7 in sight): its option
    boxes move by the wheel's delta as the wheel turns, cut to the menu, then the snapshot puts them where
    the options are."""
    opts = ".ts-dropdown .option"
    with open_window(qtbot, server.url("real/tom-select.html"), screen=screen_named("1366x768")) as w:
        wait_fitted(qtbot, w)
        w.act_overlay.setChecked(False)
        x, y = run(qtbot, w.sup.tab.page.evaluate(CENTER_JS, ".ts-control"))
        _click_page(qtbot, w, x, y)
        qtbot.waitUntil(lambda: _boxed(w.page, run(qtbot, w.sup.tab.page.evaluate(OPTIONS_JS, opts))), timeout=6000)
        qtbot.waitUntil(lambda: not w.page.overlay_stale, timeout=5000)
        menu = run(qtbot, w.sup.tab.page.evaluate(
            "(() => { const r = document.querySelector('.ts-dropdown-content').getBoundingClientRect();"
            " return [r.x, r.y, r.width, r.height]; })()"))
        before = {b.node_id: b.page_rect for b in w.page.drawn_boxes()}
        in_menu = [n for n, r in before.items() if menu[1] <= r[1] + r[3] / 2 <= menu[1] + menu[3]
                   and r[3] < menu[3] - 2]
        assert len(in_menu) >= 5
        snap = w.sup.snapshot
        _wheel(w.page, w.page.to_widget(menu[0] + menu[2] / 2, menu[1] + menu[3] / 2), -120)  # one notch down
        now = {b.node_id: b.page_rect for b in w.page.drawn_boxes()}   # right away: no frame, no snapshot yet
        assert w.sup.snapshot is snap and w.page.overlay_stale
        moved = [n for n in in_menu if n in now and abs(now[n][1] - (before[n][1] - 100)) < 0.6]
        cut = [n for n in in_menu if n in now and now[n][1] >= menu[1] - 0.6 and n not in moved]
        gone = [n for n in in_menu if n not in now]
        assert moved and gone, (moved, cut, gone)
        assert all(now[n][1] >= menu[1] - 0.6 and now[n][1] + now[n][3] <= menu[1] + menu[3] + 0.6 for n in now
                   if n in in_menu), "a box was drawn outside the menu it scrolled in"
        qtbot.waitUntil(lambda: w.sup.snapshot is not snap and not w.page.overlay_stale, timeout=6000)
        points = run(qtbot, w.sup.tab.page.evaluate(OPTIONS_JS, opts))
        assert run(qtbot, w.sup.tab.page.evaluate("document.querySelector('.ts-dropdown-content').scrollTop")) > 0
        qtbot.waitUntil(lambda: _boxed(w.page, points), timeout=4000)
