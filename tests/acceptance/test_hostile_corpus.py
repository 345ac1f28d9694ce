"""Issue [1/7]: the hostile corpus (tests/support/hostile_corpus.py, pages in tests/fixtures/hostile/) through the
real loop under auto-safe and through `vigil mcp` with no person. The recording server is the ground
truth: no forbidden request arrives unless the gate was asked and approved (it rejects), the record names
the element that really received the input, no partial secret is kept, floods stay ended, unapproved
downloads are not kept. One browser and one server process per policy are shared by every pattern (the loop side's
machinery: tests/support/hostile_loop.py)."""

from __future__ import annotations

import pytest

from support import hostile_loop, hostile_mcp
from support.hostile_corpus import PATTERNS

pytestmark = pytest.mark.usefixtures("hostile_tab_closed")
LOOP = [p.id for p in PATTERNS.values() if p.loop]
MCP = [p.id for p in PATTERNS.values() if p.mcp]


@pytest.mark.parametrize("pid", LOOP)
def test_loop(pid, harness, servers, work):
    p = PATTERNS[pid]
    hostile_loop.SHARED["harness"] = harness  # (the tab it opens is closed with the module: hostile_tab_closed)
    problems = harness.run(hostile_loop.run_loop(harness.browser, p, servers, work), timeout=100)
    assert not problems, f"{pid} (problem {p.problem}) not held through the loop: " + "; ".join(problems)


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
