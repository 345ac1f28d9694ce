"""Shared fixtures: a real local HTTP server for fixture pages and one real Chromium per session.

The browser lives on an asyncio loop in a background thread; each test submits its coroutine
with a hard timeout, so a regression shows as a failure, never as a hung suite.
"""

from __future__ import annotations

import os

import pytest

from support.servers import FixtureServer, Harness

# Tesseract (the OCR checks, tests/support/ocr.py) runs OpenMP threads that spin on a 2-core machine already busy with
# Chromium: one thread reads the same words in about half the time there (and leaves the other core to the
# other test worker).
os.environ.setdefault("OMP_THREAD_LIMIT", "1")


@pytest.fixture(scope="session")
def server():
    s = FixtureServer()
    yield s
    s.close()


@pytest.fixture(scope="session")
def harness():
    h = Harness()
    h.start()
    yield h
    h.stop()


@pytest.fixture(scope="session", autouse=True)
def _private_vigil_home(tmp_path_factory):
    """Every run the suite records goes to a throwaway store, never the user's own (tests that look
    at the store set their own VIGIL_HOME on top of this)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("VIGIL_HOME", str(tmp_path_factory.mktemp("vigil_home")))
    yield
    mp.undo()


@pytest.fixture
def make(qtbot):
    """(GUI tests) Build a widget that qtbot owns (closed and deleted through Qt after the test)."""
    def go(cls, *a, **kw):
        w = cls(*a, **kw)
        qtbot.addWidget(w)
        return w
    return go


def _reads_the_mcp_side(item: pytest.Item) -> bool:
    return getattr(item, "originalname", "") == "test_mcp" and item.module.__name__.endswith("test_hostile_corpus")


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """The hostile corpus's test_mcp tests run last: each only reads the result the MCP side (below) wrote in the
    background. Collected first (tests/acceptance/), the first of them kept its worker idle until the side got
    that far (75 s in one suite run); at the end of the session the side has long finished."""
    last = [i for i in items if _reads_the_mcp_side(i)]
    if last:
        items[:] = [i for i in items if not _reads_the_mcp_side(i)] + last


@pytest.fixture(scope="session", autouse=True)
def _hostile_mcp_side(request, tmp_path_factory, _private_vigil_home):
    """The hostile corpus's MCP side starts with the session (on the first worker), when any of its tests is
    selected, and runs in the background while the worker goes on (tests/support/hostile_mcp.py)."""
    from support import hostile_mcp
    thread = hostile_mcp.start(request.session, tmp_path_factory)
    yield
    if thread is not None:
        thread.join(hostile_mcp.WAIT_S)
