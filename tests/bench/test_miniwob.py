"""The MiniWoB++ harness on real task pages: seeded starts, the agent's view without MiniWoB's chrome,
rewards read right (a solved episode, a wrong click, a time-out), unknown tasks and planners, and
the offline planner on a few easy episodes. The full benchmark is `vigil bench miniwob`."""

from __future__ import annotations

import importlib.util
import json

import pytest

import engine.bench.miniwob as bench
from engine.errors import VigilError
from engine.loop import ScriptedPlanner


def scripted(steps):
    """A planner factory: a fresh ScriptedPlanner with `steps` per episode."""
    return lambda: ScriptedPlanner(steps)


def _episode(harness, task, seed, factory, **kw):
    return harness.run(bench.run_episode(harness.browser, task, seed, factory, **kw), timeout=60)


def test_pages_and_unknown_task():
    assert set(bench.TASKS) <= set(bench.available_tasks())
    url = bench.task_url("click-test")
    assert url.startswith("file://") and url.endswith("/miniwob/html/miniwob/click-test.html")
    with pytest.raises(VigilError) as e:
        bench.task_url("click-buton")
    assert e.value.code == "BAD_ARGUMENT" and "click-buton" in e.value.message and "click-button" in e.value.message
    with pytest.raises(VigilError) as e:
        bench.task_url("../miniwob/click-test")
    assert e.value.code == "BAD_ARGUMENT"


def test_missing_pages_say_how_to_install(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "miniwob" else real(name, *a))
    with pytest.raises(VigilError) as e:
        bench.task_url("click-test")
    assert e.value.code == "MINIWOB_MISSING" and "pip install --no-deps miniwob==1.1.0" in e.value.message
    assert "make test" in e.value.message


def test_unknown_planners():
    with pytest.raises(VigilError, match="cannot read a MiniWoB task"):
        bench.make_planner("script")
    with pytest.raises(VigilError, match="Unknown planner 'nope'"):
        bench.make_planner("nope")


def test_seeded_start_and_hidden_chrome(harness):
    async def start(seed):
        tab = await harness.browser.new_tab(bench.task_url("click-link"))
        try:
            utterance = await bench.start_episode(tab, seed)
            snap = await tab.snapshot()
            shown = " ".join(f"{n.name} {n.text}" for n in snap.nodes() if n.visible)
            state = await bench.episode_state(tab)
            space = await tab.page.evaluate("() => document.getElementById('vigil-query-space').offsetHeight")
            return utterance, shown, state, space, [n.name for n in snap.interactive()]
        finally:
            await tab.close()

    u1, shown, state, space, links = harness.run(start(1))
    u1_again, *_ = harness.run(start(1))
    u2, *_ = harness.run(start(2))
    assert u1 == u1_again and u1 != u2 and u1.startswith("Click on the link")
    assert state == {"done": False, "reward": 0, "reason": None}
    for chrome in ("Last reward", "Time left", "Episodes done", "START", u1):
        assert chrome not in shown           # reward display, cover and the instruction itself are hidden
    assert space > 0                         # the instruction's box is kept, so the task area does not move
    assert u1.split('"')[1] in links         # the link to click is there


def test_scripted_click_solves_click_test(harness):
    r = _episode(harness, "click-test", 1, scripted([
        {"action": "click", "target": {"role": "button", "name": "Click Me!"}},
        {"action": "click", "target": {"role": "button", "name": "Click Me!"}},  # never runs: the episode ended
    ]))
    assert (r.success, r.reward, r.steps, r.error, r.utterance) == (True, 1.0, 1, None, "Click the button.")
    assert set(r.to_json()) == {"task", "seed", "success", "reward", "steps", "seconds", "error"}


def test_wrong_click_and_time_out_are_failures(harness):
    two = {"action": "click", "target": {"role": "button", "name": "TWO"}}
    r = _episode(harness, "click-test-2", 1, scripted([two]))
    assert r.utterance == "Click button ONE." and not r.success and r.reward == -1 and r.steps == 1
    assert "scored the episode -1" in r.error

    r = _episode(harness, "enter-text", 1, scripted([{"action": "wait", "ms": 2500}]), time_limit_s=1.5)
    assert not r.success and r.reward == -1 and "timed out" in r.error

    r = _episode(harness, "enter-text", 1, scripted([{"action": "type", "target": {"role": "textbox"}, "text": "x"}]))
    assert not r.success and r.reward == 0 and "did not end" in r.error and "finish" in r.error


def test_unknown_task_raises(harness):
    with pytest.raises(VigilError, match="No MiniWoB task named 'no-such-task'"):
        _episode(harness, "no-such-task", 1, scripted([{"action": "finish"}]))


# use-slider: a jQuery UI slider, whose track the snapshot (rightly) does not count as a click target
HEURISTIC_EPISODES = ["click-test", "click-button", "enter-text", "click-link", "use-slider"]


def test_heuristic_planner_on_easy_episodes(harness):
    if importlib.util.find_spec("engine.planners.heuristic") is None:
        pytest.skip("engine/planners/heuristic.py (the offline planner) is not in this checkout yet")
    results = [_episode(harness, task, 1, lambda: bench.make_planner("heuristic")) for task in HEURISTIC_EPISODES]
    failed = [f"{r.task}: {r.error} (task: {r.utterance})" for r in results if not r.success]
    assert not failed, failed


def test_cli(capsys, monkeypatch):
    from engine.cli import main

    assert main(["bench", "miniwob", "--tasks", "no-such-task", "--json"]) == 2
    out = capsys.readouterr()
    assert "BAD_ARGUMENT" in out.err and "no-such-task" in out.err and not out.out
    assert main(["bench", "miniwob", "--seeds", "one"]) == 2 and "--seeds" in capsys.readouterr().err
    assert main(["bench", "miniwob", "--planner", "script"]) == 2
    assert "cannot read a MiniWoB task" in capsys.readouterr().err
    monkeypatch.delenv("VIGIL_BACKEND_URL", raising=False)
    assert main(["bench", "miniwob", "--planner", "backend"]) == 2 and "VIGIL_BACKEND_URL" in capsys.readouterr().err
    if importlib.util.find_spec("engine.planners.heuristic") is None:
        return
    assert main(["bench", "miniwob", "--tasks", "click-test", "--seeds", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["planner"] == "heuristic" and out["success_rate"] == 1.0
    assert [(r["task"], r["seed"], r["success"]) for r in out["results"]] == [("click-test", 1, True)]
