"""The hostile corpus's shared fixtures (tests/acceptance/test_hostile_corpus.py and test_hostile_unguarded.py):
its two recording servers, a work folder, and the one tab the loop side shares, closed with the module."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import hostile_corpus as hc
from support import hostile_loop


@pytest.fixture(scope="module")
def servers():
    log = hc.RequestLog()
    s = {"main": hc.HostileServer(log), "second": hc.HostileServer(log)}
    yield s
    for x in s.values():
        x.close()


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return hc.make_work(tmp_path_factory.mktemp("hostile"))


@pytest.fixture(scope="module")
def hostile_tab_closed():
    """The loop side's one tab lives in the session's browser: closed when the module is done, so the tests
    that count a browser's tabs (tests/browser/test_tabs.py) find only their own."""
    yield
    tab, harness = hostile_loop.SHARED.pop("tab", None), hostile_loop.SHARED.pop("harness", None)
    if tab is not None and harness is not None:
        try:
            harness.run(tab.close(), timeout=30)
        except Exception:  # noqa: BLE001 - a tab the page closed itself, or a browser already gone
            pass
