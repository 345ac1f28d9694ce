"""A run at a glance outside the window: each step's time and where it went, recorded by the loop and
printed by `vigil run`; the terminal prompt's y/n answers. Real Chromium, real local pages."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from engine.loop.timings import step_phases, timing_line

from support.paths import ROOT

STEPS = [{"action": "type", "target": {"name": "Full name"}, "text": "Ada Lovelace"},
         {"action": "click", "target": {"role": "button", "name": "Create account"},
          "expect": {"type": "navigation", "or": {"type": "element_appears", "text": "Thank you"}}},
         {"action": "finish", "answer": "signed up"}]


def _script(tmp_path) -> Path:
    p = tmp_path / "signup.json"
    p.write_text(json.dumps(STEPS))
    return p


def test_steps_record_their_phases_and_the_cli_prints_them(server, tmp_path):
    cmd = [sys.executable, "-m", "engine.cli", "run", "Sign up", "--url", server.url("loop_form.html"),
           "--script", str(_script(tmp_path)), "--no-record"]
    p = subprocess.run(cmd + ["--approve", "auto", "--json"], capture_output=True, text=True, timeout=90, cwd=ROOT)
    assert p.returncode == 0, p.stderr[-2000:]
    steps = json.loads(p.stdout)["steps"]
    acted = steps[0]["timings_ms"]
    for phase in ("observe", "model", "approval", "act", "settle", "verify", "total"):
        assert phase in acted, f"no {phase} in {acted}"
    parts = sum(v for k, v in acted.items() if k != "total")
    assert acted["total"] >= parts - 1, "the total is the step's wall time, not less than its parts"
    # the settle is adaptive (issue [13]): it ends when the page is done — two painted frames once the
    # step's expected outcome shows — well under the 3 s cap on this form (no animation, no request)
    assert 0 < acted["settle"] < 2500, acted

    # the text output: one line per step, its duration and phases at the end
    p = subprocess.run(cmd + ["--approve", "auto"], capture_output=True, text=True, timeout=90, cwd=ROOT)
    assert p.returncode == 0, p.stderr[-2000:]
    lines = p.stdout.strip().splitlines()
    assert len(lines) == 4 and lines[-1] == "finished: signed up"
    for line in lines[:2]:
        m = re.search(r"\[(\d+(\.\d+)? (ms|s)): observe \d+ ms · model \d+ ms · approval \d+ ms · act [\d.]+ (ms|s) · "
                      r"settle [\d.]+ (ms|s) · verify [\d.]+ (ms|s)", line)
        assert m, line


def test_the_prompt_takes_y_and_n(server, tmp_path):
    cmd = [sys.executable, "-m", "engine.cli", "run", "Sign up", "--url", server.url("loop_form.html"),
           "--script", str(_script(tmp_path)), "--no-record", "--approve", "ask", "--json"]
    p = subprocess.run(cmd, input="y\nno\nnot now\nq\n", capture_output=True, text=True, timeout=90, cwd=ROOT)
    out = json.loads(p.stdout)
    assert [s["status"] for s in out["steps"]][:2] == ["completed", "rejected"], out["steps"]
    assert out["steps"][1]["decision"]["reason"] == "not now"
    assert "[a]pprove (y)" in p.stderr and "[r]eject with reason (n)" in p.stderr


def test_timing_text():
    t = {"observe": 120.0, "model": 3.0, "approval": 0.0, "act": 95.4, "settle": 310.0, "verify": 21.0,
         "total": 1620.0}
    assert timing_line(t) == ("1.62 s: observe 120 ms · model 3 ms · approval 0 ms · act 95 ms · settle 310 ms · "
                              "verify 21 ms · other 1.07 s")
    assert step_phases({"act": 5.0})[0] == ("act", 5.0) and timing_line({}) == ""
