"""The qasync loop the window tests run the engine on leaves nothing behind for another thread to destroy.

A closed qasync loop still owns Qt objects (its timer object, with the timers of callbacks that never
ran, and its call-soon signaller). Left to the garbage collector they were destroyed wherever a later
collection ran — often the harness's browser thread in some later, allocation-heavy test — and Qt's
event dispatcher kept the freed timers: pytest-qt's processEvents() after that test crashed the suite
(a segmentation fault in a non-GUI test, never in a subset). tests/support/gui_helpers.py now destroys them on
the GUI thread when the loop closes."""

from __future__ import annotations

import asyncio
import gc

import pytest

from support import gui_helpers

pytest.importorskip("PySide6.QtWidgets")


def test_a_closed_loop_leaves_no_qt_timer_for_another_thread(qapp, qtlog, harness):
    with gui_helpers.qasync_running(qapp) as loop:
        pending = loop.call_later(60, print, "never")          # a timer still registered when the loop closes
        ran = loop.create_future()
        loop.call_soon(ran.set_result, True)
        while not ran.done():
            qapp.processEvents()
        assert not pending.cancelled()
    del loop, pending, ran

    async def collect() -> int:                                  # garbage collected on the harness's thread
        return gc.collect()

    harness.run(collect())
    for _ in range(3):
        qapp.processEvents()                                     # what crashed, with the timer freed elsewhere
    assert not [r.message for r in qtlog.records if "another thread" in r.message]
    asyncio.set_event_loop(None)
