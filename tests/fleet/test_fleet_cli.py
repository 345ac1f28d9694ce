"""`vigil fleet` at the command line: bad input (exit 2, a message naming the problem, no traceback), the --json
shape of a template fleet with CSV rows answered at the terminal, and `--resume` after the fleet's process was
killed mid-run (then `vigil sessions --fleet` and `vigil export --fleet --html`)."""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.bench.fleet_site import DemoSite
from engine.cli import main
from engine.cli.fleet import add_fleet_parser, fleet_command

from support.paths import ROOT

SHORT = [{"action": "type", "target": {"role": "textbox", "name": "Full name"}, "text": "Ada {run}"},
         {"action": "click", "target": {"role": "link", "name": "Continue"}, "expect": "navigation"},
         {"action": "finish", "answer": "entered {run}"}]


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("VIGIL_HOME", str(tmp_path / "home"))
    return tmp_path


def write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("content, extra, words", [
    (None, [], ["does not exist"]),
    ("runs: [{task: x, url: 'http://127.0.0.1:1/'", [], ["not valid YAML"]),
    ("runs: [{task: x, url: 'http://127.0.0.1:1/', script: [{action: clik}]}]", [], ["run 1", "unknown action 'clik'"]),
    ("runs: [{task: x, url: 'http://127.0.0.1:1/', colour: red}]", [], ["run 1", "'colour'"]),
    ("runs: [{url: 'http://127.0.0.1:1/'}]", [], ["run 1", "no `task`"]),
    ("runs: [{name: a, task: x, url: 'http://127.0.0.1:1/'}, {name: a, task: y, url: 'http://127.0.0.1:1/'}]", [],
     ["runs 1 and 2", "'a'"]),
    ("template: {task: 'Enter {compny}', url: 'http://127.0.0.1:1/'}\nrows: rows.csv", [],
     ["rows line 2", "{compny}", "company"]),
    ("runs: [{task: x, url: 'ftp://example.com/'}]", [], ["run 1", "ftp"]),
    ("runs: [{task: x, url: 'http://127.0.0.1:1/'}]", ["--browsers", "127.0.0.1:9222"], ["--browsers", "DevTools"]),
    ("runs: [{task: x, url: 'http://127.0.0.1:1/'}]", ["--parallel", "0"], ["--parallel must be at least 1"]),
])
def test_bad_input_exits_2_naming_the_problem(home, capsys, content, extra, words):
    (home / "rows.csv").write_text("company,city\nAcme,Lyon\n")
    path = str(home / "missing.yaml") if content is None else write(home / "fleet.yaml", content)
    code = main(["fleet", path, "--approve", "auto", *extra])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("vigil fleet: ") and "Traceback" not in err
    for w in words:
        assert w in err, err


def test_resume_of_an_unknown_fleet_exits_2(home, capsys):
    assert main(["fleet", "--resume", "nope1234"]) == 2
    assert "No fleet 'nope1234'" in capsys.readouterr().err


def test_template_with_rows_json_shape_and_terminal_prompts_naming_runs(home, capsys):
    with DemoSite() as site:
        (home / "rows.csv").write_text("run,city\nalpha,Lyon\nbeta,Oslo\n")
        (home / "steps.yaml").write_text(json.dumps(SHORT))
        path = write(home / "fleet.yaml", "name: rows fleet\ntemplate:\n  name: '{run}'\n"
                     "  task: 'Enter {run} from {city}'\n"
                     f"  url: '{site.base}/form?run={{run}}'\n  script: steps.yaml\nrows: rows.csv\n")
        p = argparse.ArgumentParser()
        add_fleet_parser(p.add_subparsers(dest="cmd"))
        args = p.parse_args(["fleet", path, "--parallel", "2", "--json"])
        answers = io.StringIO("a\n" * 6 + "q\n")
        code = asyncio.run(fleet_command(args, stdin=answers))
    out, err = capsys.readouterr()
    data = json.loads(out.strip().splitlines()[-1])
    assert code == 0, err
    assert set(data) == {"fleet", "runs"} and len(data["fleet"]) == 12
    assert [r["name"] for r in data["runs"]] == ["alpha", "beta"]
    assert data["runs"][0]["task"] == "Enter alpha from Lyon"
    for r in data["runs"]:
        assert set(r) == {"name", "task", "status", "session", "browser", "steps", "answer"}, r
        assert r["status"] == "done" and r["browser"] == "local" and r["steps"] == 3 and r["session"]
    assert data["runs"][1]["answer"] == "entered beta"
    assert "── run alpha" in err and "── run beta" in err  # under ask the prompt names the run it asks for
    assert site.cookies_at("/done", "alpha") == [""] and len(site.requests) == 4


def test_resume_after_the_fleet_process_was_killed(home, capsys):
    with DemoSite() as site:
        runs = []
        for n in ("r1", "r2", "r3"):
            steps = json.loads(json.dumps(SHORT).replace("{run}", n))
            if n == "r2":
                steps.insert(1, {"action": "wait", "ms": 1500})  # r2 is under way when the process is killed
            runs.append({"name": n, "task": f"Fill in {n}", "url": site.url(n), "script": steps})
        path = write(home / "fleet.json", json.dumps({"name": "killed", "runs": runs}))
        env = {**os.environ, "VIGIL_HOME": os.environ["VIGIL_HOME"], "PYTHONPATH": str(ROOT)}
        proc = subprocess.Popen([sys.executable, "-m", "engine.cli", "fleet", path, "--approve", "auto"],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env, cwd=str(ROOT),
                                start_new_session=True)
        fleet_id, deadline = None, time.monotonic() + 60
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("fleet "):
                fleet_id = line.split()[1].rstrip(":")
            if line.startswith("[r2] [1] ok"):  # r2 recorded its first step and waits 1.5 s in its second
                break
            assert time.monotonic() < deadline, "the fleet never got to its second run"
        os.killpg(proc.pid, signal.SIGKILL)  # the fleet's process and its browser, mid-run
        proc.wait(10)
        assert fleet_id
        capsys.readouterr()
        assert main(["sessions", "--fleet", fleet_id[:6]]) == 0
        listing = capsys.readouterr().out
        assert "interrupted" in listing and "r1    done" in listing, listing

        assert main(["fleet", "--resume", fleet_id[:8], "--json", "--parallel", "2"]) == 0
        out, err = capsys.readouterr()
        data = json.loads(out.strip().splitlines()[-1])
        assert data["fleet"] == fleet_id and [r["status"] for r in data["runs"]] == ["done"] * 3, data
        assert "2 kept from before" not in err and "1 kept from before" in err, err
        assert site.cookies_at("/form", "r1") == [""]  # r1 finished before the kill: kept, not run again

        assert main(["sessions", "--fleet", fleet_id, "--json"]) == 0
        listed = json.loads(capsys.readouterr().out)
        assert len(listed["sessions"]) == 4  # r1, r2's interrupted attempt, r2 and r3
        assert sorted(s["status"] for s in listed["sessions"]) == ["interrupted", "success", "success", "success"]

        report = home / "report" / "fleet.html"
        report.parent.mkdir()
        assert main(["export", "--fleet", fleet_id, "--html", str(report)]) == 0
        page = report.read_text()
        assert page.count('href="fleet_runs/') == 3 and "Fill in r2" in page and "<script" not in page
        assert all((report.parent / "fleet_runs" / f"000{i}.html").exists() for i in (1, 2, 3))


class SlowAnswers(io.StringIO):
    """A person who reads before answering: the first answer comes `delay` seconds after the first prompt (the
    other runs meanwhile ask, or print their steps)."""

    def __init__(self, text: str, delay: float) -> None:
        super().__init__(text)
        self.delay = delay

    def readline(self, *args) -> str:
        if self.delay:
            time.sleep(self.delay)
            self.delay = 0
        return super().readline(*args)


def test_a_grant_at_the_prompt_answers_the_steps_waiting_and_other_runs_print_under_the_prompt(home, capsys):
    with DemoSite() as site:
        paused = [{"action": "wait", "ms": 150}] * 4 + [{"action": "finish", "answer": "waited"}]
        runs = [{"name": n, "task": f"enter {n}", "url": f"{site.base}/form?run={n}",
                 "script": [{**s, "text": f"Ada {n}"} if "text" in s else s for s in SHORT]} for n in ("alpha", "beta")]
        runs.append({"name": "gamma", "task": "wait", "url": f"{site.base}/form?run=gamma", "approve": "auto",
                     "script": paused})
        path = write(home / "fleet.json", json.dumps({"runs": runs}))
        p = argparse.ArgumentParser()
        add_fleet_parser(p.add_subparsers(dest="cmd"))
        args = p.parse_args(["fleet", path, "--parallel", "3"])
        code = asyncio.run(fleet_command(args, stdin=SlowAnswers("g\n" + "a\n" * 3 + "q\n", delay=2.5)))
    out, err = capsys.readouterr()
    assert code == 1, out + err  # the last question was answered q: that run stopped
    lines = out.splitlines()
    # g on alpha's typing: granted, and beta's typing, waiting meanwhile, approved with it (asked once, not twice)
    [granted] = [line for line in lines if "granted: #" in line]
    first = next(line for line in lines if line.startswith("── run"))[7:12]
    other = "beta" if first == "alpha" else "alpha"
    assert f"approved with it, as they waited: [{other}] step 1: Type" in granted, granted
    assert sum(line.startswith("── run") for line in lines) == 5, out  # the first run 3 questions, the other 2
    assert site.cookies_at("/done", other) == [""]
    # gamma's steps, printed while the prompt waited, each on a line of its own, the prompt written again below
    assert not [line for line in lines if "> [gamma]" in line or "> [" in line], out
    waits = [i for i, line in enumerate(lines) if line.startswith("[gamma] [")]
    assert len(waits) == 5 and any(lines[i + 1].endswith("[q]uit, [g]rant > ") for i in waits[:1]), out
    # the same words as the window and `vigil sessions`: a run the person stopped is "stopped" in both
    assert "[gamma] done: waited" in out and out.count("] stopped: quit at the prompt") == 1, out
    fleet_id = out.split()[1].rstrip(":")
    assert main(["sessions", "--fleet", fleet_id]) == 0
    listing = capsys.readouterr().out
    assert listing.count(" stopped ") == 2 and listing.count(" done ") == 4, listing  # each run, and its session
    assert "interrupted" not in listing and "success" not in listing, listing
