"""What the GUI tests need beyond pytest-qt.

The tests use pytest-qt's `qtbot` for widget lifetimes (`addWidget`), mouse and key input, and
waiting (`waitUntil`, `waitSignal`). The engine under the window is asyncio code on qasync's loop,
and pytest-qt has no asyncio side, so this module adds only that:

- `aio`: the qasync loop, marked running inside Qt's own event loop (qasync's `already_running`
  mode). Whenever qtbot waits, Qt runs, and so does every engine coroutine: a test waits on the
  window's signals and state exactly as a person's clicks would.
- `run(qtbot, coro)`: run one coroutine (an engine call) to its end while qtbot waits.
- `open_window(qtbot, url)`: the real window on a page in a real Chromium, shut down in the order
  the app uses whatever happens.
- Qt's offscreen platform gets three virtual screens of known sizes (`qt_screens.json`): 1366x768
  (the primary: the offscreen plugin orders screens by name), 1024x640 and 1920x1080, so window
  tests can open the window on each.

Never call qtbot's waits from inside a coroutine: a nested Qt loop would re-enter the asyncio loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
import time
from pathlib import Path

import pytest

SCREENS_FILE = Path(__file__).with_name("qt_screens.json")
if os.environ.get("QT_QPA_PLATFORM", "offscreen") == "offscreen":  # not when a test runs us under a real X server
    os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={SCREENS_FILE}"


@contextlib.contextmanager
def qasync_running(qapp):
    """A qasync event loop, marked running inside Qt's own loop for the duration."""
    import qasync

    qapp.setQuitOnLastWindowClosed(False)  # windows open and close; the application stays
    loop = qasync.QEventLoop(qapp, already_running=True)
    asyncio.set_event_loop(loop)
    try:
        yield loop
    finally:
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for t in pending:
            t.cancel()
        for _ in range(20):  # let the cancellations run
            if all(t.done() for t in pending):
                break
            qapp.processEvents()
        # Not loop.stop(): in this mode it calls QApplication.exit() with no Qt loop to leave, and then
        # every later Qt wait (all of qtbot's) returns at once. Mark it stopped the way stop() does.
        assert hasattr(loop, "_QEventLoop__is_running"), "qasync changed: see tests/support/gui_helpers.py"
        loop._QEventLoop__is_running = False
        asyncio.events._set_running_loop(None)  # qasync set it for already_running mode; undo it for other tests
        loop.close()
        asyncio.set_event_loop(None)
        _delete_qt_parts(loop)


def _delete_qt_parts(loop) -> None:
    """Destroy a closed qasync loop's own Qt objects now, on the GUI thread. Left to the garbage collector,
    they die wherever a collection happens to run — in a later test, often on the harness's browser thread
    (conftest.Harness) — and a QObject whose timers are still registered, destroyed off its thread
    ("QObject::~QObject: Timers cannot be stopped from another thread"), leaves Qt's event dispatcher
    holding freed memory: the next processEvents() (pytest-qt's, after every test) crashed the suite."""
    import shiboken6

    for name in ("_timer", "_QEventLoop__call_soon_signaller"):
        obj = getattr(loop, name, None)
        assert obj is not None, f"qasync changed: no {name} on its loop (see tests/support/gui_helpers.py)"
        if shiboken6.isValid(obj):
            shiboken6.delete(obj)


@pytest.fixture
def aio(qapp):
    """The qasync event loop for one test, running inside Qt's (qtbot's waits drive it)."""
    with qasync_running(qapp) as loop:
        yield loop


@pytest.fixture(scope="module")
def aio_module(qapp):
    """The same for a whole module (for a browser the module's tests share)."""
    with qasync_running(qapp) as loop:
        yield loop


def run(qtbot, coro, timeout: float = 30.0):
    """Run `coro` on the qasync loop while qtbot waits for it; its result, or its exception.
    A coroutine that outlives `timeout` seconds is cancelled and fails the test (never a hang)."""
    task = asyncio.ensure_future(coro)
    try:
        qtbot.waitUntil(task.done, timeout=int(timeout * 1000))
    except Exception:
        task.cancel()
        with contextlib.suppress(Exception):
            qtbot.waitUntil(task.done, timeout=5000)
        raise AssertionError(f"{coro!r} did not finish within {timeout:g} s") from None
    return task.result()


def finish(coro, timeout: float = 60.0):
    """`run` for fixtures wider than one test, which have no qtbot: Qt runs in 10 ms turns until the
    coroutine is done (pytest-qt's own wait works the same way)."""
    import time

    from PySide6.QtCore import QEventLoop, QTimer

    task = asyncio.ensure_future(coro)
    deadline = time.monotonic() + timeout
    while not task.done():
        if time.monotonic() > deadline:
            task.cancel()
            raise AssertionError(f"{coro!r} did not finish within {timeout:g} s")
        turn = QEventLoop()
        QTimer.singleShot(10, turn.quit)
        turn.exec()
    return task.result()


def screen_named(size: str):
    """The virtual screen of this size ("1024x640"), from qt_screens.json."""
    from PySide6.QtGui import QGuiApplication

    for s in QGuiApplication.screens():
        g = s.geometry()
        if f"{g.width()}x{g.height()}" == size:
            return s
    names = [f"{s.geometry().width()}x{s.geometry().height()}" for s in QGuiApplication.screens()]
    raise AssertionError(f"no {size} screen (the platform has {names}; QT_QPA_PLATFORM="
                         f"{os.environ.get('QT_QPA_PLATFORM')!r})")


@contextlib.contextmanager
def open_window(qtbot, url: str, *, screen=None, settings=None, timeout: float = 60.0):
    """The window (its own engine) on `url`, placed on `screen` (default: as the app places it);
    shut down (loop, screencast, browser) and closed afterwards. Without `settings` it keeps its
    layout in a file of its own, so no window opens at the size another test left behind."""
    from PySide6.QtCore import QSettings

    from gui.supervisor.controller import Supervisor
    from gui.window.main_window import MainWindow

    own = None
    if settings is None:
        own = tempfile.TemporaryDirectory(prefix="vigil-window-")
        settings = QSettings(os.path.join(own.name, "window.ini"), QSettings.IniFormat)
    window = MainWindow(Supervisor(), settings=settings)
    qtbot.addWidget(window)
    window.place_on(screen)
    window.show()
    try:
        assert run(qtbot, window.startup(url), timeout), "the window could not start its browser"
        yield window
    finally:
        run(qtbot, window.shutdown(), 40)
        assert window.sup.browser is None and window.sup.sessions is None
        if own is not None:
            own.cleanup()


def wait_fitted(qtbot, window, timeout: float = 15.0) -> None:
    """Until the page is painted at the size its panel asks for, with the snapshot of that layout."""
    try:
        qtbot.waitUntil(window.page_fitted, timeout=int(timeout * 1000))
    except qtbot.TimeoutError:
        snap = window.sup.snapshot
        raise AssertionError(
            f"the page was not fitted to its panel within {timeout:g} s: panel wants {window.page.wanted_viewport()}, "
            f"engine viewport {window.sup.viewport} (wanted {window.sup._wanted_viewport}, resizing "
            f"{window.sup._resizing}, loop {window.sup.loop_state}), frames painted {window.page.frame_count} at "
            f"{window.page.page_size}, snapshot viewport "
            f"{(snap.context.viewport.width, snap.context.viewport.height) if snap else None}") from None


def wait_overlay_fresh(qtbot, view, timeout: float = 10.0) -> None:
    """Until the overlay's boxes sit on the page as painted (not drawn faint as stale); on a timeout, says
    which of the stale conditions still held."""
    try:
        qtbot.waitUntil(lambda: not view.overlay_stale, timeout=int(timeout * 1000))
    except qtbot.TimeoutError:
        snap, meta = view._snapshot, view._meta
        ctx = snap.context if snap is not None else None
        raise AssertionError(
            f"the overlay stayed stale for {timeout:g} s: page ahead since {view.page_ahead_since or 0:.2f} "
            f"(now {time.monotonic():.2f}), inner scrolls {bool(view._inner)}, last frame at "
            f"scroll ({meta.get('scrollOffsetX')}, {meta.get('scrollOffsetY')}) size {view.page_size}, snapshot at "
            f"scroll {(ctx.scroll_x, ctx.scroll_y) if ctx else None} viewport "
            f"{(ctx.viewport.width, ctx.viewport.height) if ctx else None}, frames {view.frame_count}") from None


# the text of every label-like element of a form, as the page lays it out: rects of its own text
# nodes (a label's box can be much wider than its words, and a checkbox's label holds the box too)
FORM_TEXT_JS = """(sel) => {
  const out = [];
  for (const el of document.querySelectorAll(sel + ' *')) {
    const rects = [];
    for (const n of el.childNodes) {
      if (n.nodeType !== 3 || !n.data.trim()) continue;
      const r = document.createRange();
      r.selectNodeContents(n);
      for (const b of r.getClientRects())
        if (b.width > 0 && b.height > 0) rects.push([b.left, b.top, b.right, b.bottom]);
    }
    const own = Array.from(el.childNodes).filter(n => n.nodeType === 3).map(n => n.data).join(' ').trim();
    if (rects.length) out.push({text: own, rects});
  }
  return out;
}"""


def label_texts(snapshot, measured: list[dict], form_selector_nodes) -> list[tuple[object, list[tuple]]]:
    """For each form control in `form_selector_nodes`, its label's text rects (page CSS px): the label
    is the snapshot node whose own text is the control's name; `measured` (FORM_TEXT_JS's answer) gives
    where that text is drawn, checked to lie inside the label's box from the snapshot."""
    out = []
    for ctl in form_selector_nodes:
        label = next((n for n in snapshot.nodes() if n.text and n.text.strip() == ctl.name and n is not ctl), None)
        assert label is not None, f"no label node for {ctl.role} {ctl.name!r}"
        rects = next((m["rects"] for m in measured if m["text"] == ctl.name), None)
        assert rects, f"the page draws no text {ctl.name!r}"
        x, y, w, h = label.bounds
        for r in rects:
            assert x - 1 <= r[0] and r[2] <= x + w + 1 and y - 1 <= r[1] and r[3] <= y + h + 1, \
                f"the text of {ctl.name!r} {r} is not inside its label's box {label.bounds}"
        out.append((ctl, [tuple(r) for r in rects]))
    return out


def overlaps(a, b) -> bool:
    """Two (x0, y0, x1, y1) rects share some area."""
    return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])


def hosted_bar(qtbot, width: int, height: int):
    """An ApprovalBar in a window of its own, laid out as in Vigil's (full width), shown: the host lives as long
    as the bar (`bar.host`), so it stays open while the bar shows and hides."""
    from PySide6.QtWidgets import QVBoxLayout, QWidget

    from gui.approval.approval_bar import ApprovalBar

    host = QWidget()
    qtbot.addWidget(host)
    b = ApprovalBar(host)
    QVBoxLayout(host).addWidget(b)
    b.host = host
    host.resize(width, height)
    host.show()
    return b
