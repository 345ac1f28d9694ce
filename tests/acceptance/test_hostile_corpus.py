"""Issue [1/7]: the hostile corpus (tests/support/hostile_corpus.py, pages in tests/fixtures/hostile/) through the
real loop under auto-safe and through `vigil mcp` with no person. The recording server is the ground
truth: no forbidden request arrives unless the gate was asked and approved (it rejects), the record names
the element that really received the input, no partial secret is kept, floods stay ended, unapproved
downloads are not kept. One browser and one server process per policy are shared by every pattern (the loop side's
machinery: tests/support/hostile_loop.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import hostile_corpus as hc
from support import hostile_loop, hostile_mcp
from support.hostile_corpus import PATTERNS

LOOP = [p.id for p in PATTERNS.values() if p.loop]
MCP = [p.id for p in PATTERNS.values() if p.mcp]


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


@pytest.mark.parametrize("pid", LOOP)
def test_loop(pid, harness, servers, work):
    p = PATTERNS[pid]
    hostile_loop.SHARED["harness"] = harness  # (the tab it opens is closed with the module: _shared_tab_closed)
    problems = harness.run(hostile_loop.run_loop(harness.browser, p, servers, work), timeout=100)
    assert not problems, f"{pid} (problem {p.problem}) not held through the loop: " + "; ".join(problems)


@pytest.fixture(scope="module", autouse=True)
def _shared_tab_closed():
    """The loop side's one tab lives in the session's browser: closed when this module is done, so the tests
    that count a browser's tabs (tests/browser/test_tabs.py) find only their own."""
    yield
    tab, harness = hostile_loop.SHARED.pop("tab", None), hostile_loop.SHARED.pop("harness", None)
    if tab is not None and harness is not None:
        try:
            harness.run(tab.close(), timeout=30)
        except Exception:  # noqa: BLE001 - a tab the page closed itself, or a browser already gone
            pass


@pytest.mark.parametrize("pid", MCP)
def test_mcp(pid, tmp_path_factory):
    """The pattern through `vigil mcp`: its result comes from the MCP side, which runs from the start of the
    session in the background (tests/support/hostile_mcp.py, started by conftest.py) while the worker runs
    other tests."""
    p = PATTERNS[pid]
    problems = hostile_mcp.result(tmp_path_factory, pid)
    assert not problems, f"{pid} (problem {p.problem}) not held through vigil mcp: " + "; ".join(problems)


def test_the_corpus_is_big_enough():
    assert len(PATTERNS) >= 30
    # issue [1/7]'s problems 1–9, and issue [2/8]'s items of "What to build" with pages (support.hostile_effects)
    assert {p.problem for p in PATTERNS.values()} == set("123456789") | {"e1", "e3", "e4", "e5", "e6", "e7"}
