"""`python -m engine.mcp.bench`: bad options are refused before anything starts, and one real run of
the flow through `vigil mcp` (Playwright MCP left out: it needs npm) reports tokens and time per step."""

from __future__ import annotations

import json
import subprocess
import sys

from support.mcp_server import ROOT


def _bench(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "engine.mcp.bench", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def test_bad_options_are_refused_before_anything_starts():
    out = _bench("--pages", "demo,nope", timeout=60)
    assert out.returncode == 2 and "unknown page(s) nope" in out.stderr and "demo, large" in out.stderr
    out = _bench("--reps", "0", timeout=60)
    assert out.returncode == 2 and "--reps must be at least 1" in out.stderr


def test_one_run_of_the_flow_through_vigil_mcp():
    out = _bench("--no-playwright", "--reps", "1", "--pages", "demo", "--json")
    assert out.returncode == 0, out.stderr
    rep = json.loads(out.stdout)
    assert rep["playwright_mcp"].startswith("not measured")
    page = rep["pages"]["demo"]
    assert page["steps"] == ["navigate", "snapshot", "click Accept", "type Full name", "select Country"]
    steps = page["vigil"]["steps"]
    assert all(s["ms"] > 0 and s["tokens"] > 0 for s in steps)
    # the snapshot is the whole payload; an action's result is its change, far smaller
    assert steps[1]["tokens"] > 3 * max(s["tokens"] for s in steps[2:])
    assert page["vigil"]["tool_list_tokens"] > 0
