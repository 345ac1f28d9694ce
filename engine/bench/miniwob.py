"""`vigil bench miniwob`: MiniWoB++ tasks as the yardstick for planners.

The task pages come from the `miniwob` package (MIT; `pip install --no-deps miniwob==1.1.0`) and are
opened from `file://`. Only its HTML is used: its Python side needs gymnasium and Selenium, so the
package is located with `importlib.util.find_spec`, never imported.

An episode, as MiniWoB's own `html/core/core.js` runs it:
- On load every task calls `core.startEpisode()`: it builds the reward display (`#reward-display`,
  "Last reward / Last 10 average / Time left / Episodes done") with the click tracker
  `#click-canvas`, and the black "START" cover `#sync-task-cover` whose click calls
  `core.startEpisodeReal()`.
- The harness seeds `Math.random` (`Math.seedrandom(seed)`: the same seed gives the same problem),
  sets `core.EPISODE_MAX_TIME` (ms; MiniWoB's 10 s default is too short for supervised steps with
  stability waits, so `time_limit_s` is used) and calls `core.startEpisodeReal()` itself, as the
  cover would: `genProblem()` builds the problem and its instruction in `#query`, the `WOB_*`
  globals are reset, the cover is hidden, and a timer ends the episode with
  `core.endEpisode(-1, false, "timed out")` after EPISODE_MAX_TIME.
- The task handed to the planner is `core.getUtterance()`: the text of `#query`, spaces collapsed.
- The page calls `core.endEpisode(reward)` when the agent completes (or botches) the task: it sets
  `WOB_RAW_REWARD_GLOBAL` (the reward without the time penalty: 1 right, -1 wrong; some tasks give
  partial credit, e.g. click-checkboxes scores the share of boxes right minus wrong, so > 0 means
  more right than wrong), `WOB_DONE_GLOBAL = true`, and shows the cover again. Later calls are no-ops (the
  episode timer is gone), so the first verdict is final. Success is `WOB_RAW_REWARD_GLOBAL > 0`.

The episode can end in the middle of a step (a click whose handler scores it): after each action
the harness reads `WOB_DONE_GLOBAL` and stops the loop, and a guard around the planner makes sure
nothing is proposed after the verdict even when that read comes late. A watchdog stops the loop at
the time limit.

What the agent does not see: MiniWoB's harness chrome, i.e. the elements MiniWoB's own DOM
observation (`core.getDOMInfo`) leaves out — `#reward-display`, `#click-canvas`, `#sync-task-cover`
and `#query` — are `display: none`. The display and tracker are scoreboard, not task. The cover is
the RL harness's start button (the harness starts the episode itself); hidden, it also cannot be
clicked after the verdict to start a second episode that would reset the score. `#query` is the
instruction, already handed over as the task; left in the page it would be read as the label of
unlabelled fields (enter-text's box would be named "Enter "Jerald" into the text field…") and
compete with the real targets in grounding. An empty spacer of its height keeps the task area
where it was. The hidden display's once-a-second countdown (`core.CD_TIMER`) is stopped so it does
not count as page activity in stability waits, and the tracker's click listener on `<body>` is
removed so the whole body is not offered as a clickable; the episode timer is untouched.
"""

from __future__ import annotations

import asyncio
import difflib
import importlib
import importlib.util
import json
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from engine.errors import ErrorCode, VigilError
from engine.loop import AgentLoop, AutoApprove, Observation, Planner, close_planner
from engine.models import TERMINAL_ACTIONS, Action, ActionDone, ProposedStep

if TYPE_CHECKING:
    import argparse

    from engine.browser.browser import Browser
    from engine.tab import Tab

TASKS = ("click-test", "click-test-2", "click-button", "click-button-sequence", "click-link", "click-dialog",
         "click-option", "click-checkboxes", "click-tab", "click-collapsible", "enter-text", "enter-text-2",
         "enter-password", "login-user", "focus-text-2", "choose-list", "use-slider", "scroll-text-2",
         "navigate-tree", "search-engine")
"""The issue's yardstick: the offline planner should solve at least 85% of these over seeds 1–3."""
SEEDS = (1, 2, 3)

INSTALL_HINT = ("Run `make test` (or `bash scripts/setup.sh`), or install them into the venv with "
                "`.venv/bin/pip install --no-deps miniwob==1.1.0`.")

CHROME_CSS = "#reward-display, #click-canvas, #sync-task-cover, #query { display: none !important; }"

# Seed, start (what clicking the START cover does), stop the hidden countdown text and the click
# tracker, then hide the chrome; #query's box is kept by an empty spacer of the same height.
_START_JS = """([seed, ms, css]) => {
  Math.seedrandom(seed);
  core.EPISODE_MAX_TIME = ms;
  core.startEpisodeReal();
  clearInterval(core.CD_TIMER);
  document.body.removeEventListener('click', core.canvasDrawClick);
  const q = document.getElementById('query');
  if (q) {
    const space = document.createElement('div');
    space.id = 'vigil-query-space';
    space.style.height = q.offsetHeight + 'px';
    q.after(space);
  }
  const style = document.createElement('style');
  style.textContent = css;
  document.head.appendChild(style);
}"""

_STATE_JS = ("() => typeof WOB_DONE_GLOBAL === 'undefined' ? null : "
             "{done: WOB_DONE_GLOBAL, reward: WOB_RAW_REWARD_GLOBAL, reason: WOB_REWARD_REASON}")


# -- pages ---------------------------------------------------------------------------------------
def pages_dir() -> Path:
    """The directory of MiniWoB task pages (`…/miniwob/html/miniwob`); VigilError when not installed."""
    spec = importlib.util.find_spec("miniwob")
    for base in (spec.submodule_search_locations or []) if spec else []:
        d = Path(base) / "html" / "miniwob"
        if (d / "click-test.html").is_file():
            return d
    raise VigilError("The MiniWoB++ task pages are not installed (Python package `miniwob`). " + INSTALL_HINT,
                     code=ErrorCode.MINIWOB_MISSING)


def available_tasks() -> list[str]:
    """Names of every task page, sorted."""
    return sorted(p.stem for p in pages_dir().glob("*.html"))


def task_url(task: str) -> str:
    """The file:// URL of a task page; VigilError (BAD_ARGUMENT) naming close matches when there is none."""
    page = pages_dir() / f"{task}.html"
    if task and "/" not in task and page.is_file():
        return page.as_uri()
    close = difflib.get_close_matches(task, available_tasks(), n=3)
    hint = f" Did you mean {', '.join(close)}?" if close else ""
    raise VigilError(f"No MiniWoB task named {task!r} (no {page.name} in {page.parent}).{hint} "
                     f"Task names are the page names, e.g. {', '.join(TASKS[:3])}.", code=ErrorCode.BAD_ARGUMENT)


# -- planners ------------------------------------------------------------------------------------
PLANNERS = ("heuristic", "openai", "backend")
"""Planners that read the task; model-backed ones take their settings from the environment
(VIGIL_MODEL, VIGIL_BASE_URL, VIGIL_API_KEY or OPENAI_*; VIGIL_BACKEND_URL)."""


def make_planner(name: str) -> Planner:
    """A new planner by name (one per episode: planners keep per-task state)."""
    if name == "script":
        raise VigilError("The scripted planner replays a fixed script and cannot read a MiniWoB task; "
                         f"benchmark a planner that reads the task: {', '.join(PLANNERS)}.",
                         code=ErrorCode.BAD_ARGUMENT)
    if name not in PLANNERS:
        raise VigilError(f"Unknown planner {name!r} for the benchmark; use one of: {', '.join(PLANNERS)}.",
                         code=ErrorCode.BAD_ARGUMENT)
    from engine.planners.registry import make_planner as build
    return build(name)


# -- one episode ---------------------------------------------------------------------------------
@dataclass
class EpisodeResult:
    """One episode: `success` is MiniWoB's verdict (raw reward > 0), `reward` the raw reward (0 when
    the episode never ended), `steps` the actions tried (finish/fail not counted), `error` why not."""

    task: str
    seed: int
    success: bool
    reward: float
    steps: int
    seconds: float
    error: str | None = None
    utterance: str = ""

    def to_json(self) -> dict:
        """The benchmark's result row (the utterance left out)."""
        d = asdict(self)
        d.pop("utterance")
        return d


async def episode_state(tab: Tab) -> dict | None:
    """`{done, reward, reason}` from the page's WOB_* globals; None when the task page is gone."""
    return await tab.page.evaluate(_STATE_JS)


async def start_episode(tab: Tab, seed: int, time_limit_s: float = 30.0) -> str:
    """Start a seeded episode on a loaded task page, hide MiniWoB's chrome, return the utterance."""
    page = tab.page
    await page.wait_for_function("() => window.core && core.cover_div", timeout=10_000)
    await page.evaluate(_START_JS, [seed, int(time_limit_s * 1000), CHROME_CSS])
    await page.wait_for_function("() => WOB_TASK_READY", timeout=10_000)
    tab.invalidate()
    return await page.evaluate("() => core.getUtterance()")


class _EpisodeGuard:
    """Wraps the planner so that nothing is proposed once the page has ended the episode: the loop
    is stopped instead (a `finish` is returned in case the stop does not win; it acts on nothing)."""

    def __init__(self, planner: Planner, tab: Tab, stop: Callable[[], None]):
        self.planner, self.tab, self.stop = planner, tab, stop

    async def propose(self, obs: Observation) -> ProposedStep:
        state = await episode_state(self.tab)
        if state is None or state["done"]:
            self.stop()
            return ProposedStep(thought="The page ended the episode.", action=Action(name="finish"))
        return await self.planner.propose(obs)


async def run_episode(browser: Browser, task: str, seed: int, planner_factory: Callable[[], Planner], *,
                      max_steps: int = 12, time_limit_s: float = 30.0) -> EpisodeResult:
    """Run one seeded episode of `task` with a fresh planner and automatic approval.

    The run is stopped as soon as the page ends the episode: right after the action that ended it
    (an ActionDone subscriber reads WOB_DONE_GLOBAL), and at the latest before the next proposal (a
    guard around the planner), so no step ever runs after the verdict. An unknown task or a failing
    planner constructor raises; whatever goes wrong in the page or the run is in `error`."""
    url = task_url(task)
    planner = planner_factory()
    t0 = time.monotonic()
    utterance, steps, state, why = "", 0, None, None
    ended: list[str] = []  # who stopped the run: "page" (the episode ended) or "time"
    tab = None
    try:
        tab = await browser.new_tab(url)
        utterance = await start_episode(tab, seed, time_limit_s)
        loop: AgentLoop

        def stop(by: str) -> None:
            ended.append(by)
            loop.stop()

        async def stop_when_done(event) -> None:
            if isinstance(event, ActionDone):
                try:
                    now = await episode_state(tab)
                except Exception:  # the page is navigating or closing: the guard and the final read decide
                    return
                if now is None or now["done"]:
                    stop("page")

        loop = AgentLoop(tab, _EpisodeGuard(planner, tab, lambda: stop("page")), gate=AutoApprove(), policy="auto",
                         max_steps=max_steps, screenshots=False)
        unsubscribe = loop.bus.subscribe(stop_when_done)
        watchdog = asyncio.get_running_loop().call_later(time_limit_s, stop, "time")
        try:
            run = await loop.run(utterance)
        finally:
            watchdog.cancel()
            unsubscribe()
        steps = sum(1 for r in run.steps if r.action is not None and r.action.name not in TERMINAL_ACTIONS)
        if "time" in ended:
            why = f"time limit of {time_limit_s:g} s reached"
        elif run.status == "success" and not ended:
            why = "the planner called finish() but the page had not scored the episode"
        elif not ended:
            why = run.reason
        state = await episode_state(tab)
    except VigilError as exc:
        why = exc.message
    except Exception as exc:  # Playwright errors from a page that died or left: one bad episode, not the bench
        why = f"{type(exc).__name__}: {exc}"
    finally:
        await close_planner(planner)
        if tab is not None:
            await tab.close()
    return _verdict(task, seed, utterance, steps, time.monotonic() - t0, state, why)


def _verdict(task: str, seed: int, utterance: str, steps: int, seconds: float, state: dict | None,
             why: str | None) -> EpisodeResult:
    """The result from the page's final WOB_* state and `why` the run ended when not by the page."""
    done = state is not None and bool(state["done"])
    reward = float(state["reward"] or 0) if state is not None and done else 0.0
    success = done and reward > 0
    if success:
        error = None
    elif done:
        reason = state["reason"] if state is not None else None
        error = f"MiniWoB scored the episode {reward:g}" + (f" ({reason})" if reason else "")
        if why:
            error += f"; the run ended: {why}"
    elif state is None and not why:
        error = "The agent left the task page."
    else:
        error = "The episode did not end" + (f": {why}" if why else ".")
    return EpisodeResult(task=task, seed=seed, success=success, reward=reward, steps=steps,
                         seconds=round(seconds, 2), error=error, utterance=utterance)


# -- the benchmark -------------------------------------------------------------------------------
async def run_bench(tasks=TASKS, seeds=SEEDS, planner: str = "heuristic", *, json_out: bool = False,
                    max_steps: int = 12, time_limit_s: float = 30.0, headless: bool = True) -> dict:
    """Every task × seed in sequence in one browser; prints a table (or one JSON object with
    `json_out`) and returns `{"planner", "results", "success_rate"}`."""
    from engine import launch

    tasks = list(tasks)
    for t in tasks:
        task_url(t)
    await close_planner(make_planner(planner))  # an unknown or unavailable planner fails before the browser starts
    results: list[EpisodeResult] = []
    t0 = time.monotonic()
    async with launch(headless=headless) as browser:
        for task in tasks:
            for seed in seeds:
                r = await run_episode(browser, task, seed, lambda: make_planner(planner),
                                      max_steps=max_steps, time_limit_s=time_limit_s)
                results.append(r)
                if not json_out:
                    verdict = "ok" if r.success else f"FAIL: {r.error}"
                    print(f"{task} seed {seed}: {verdict} ({r.steps} steps, {r.seconds:.1f} s) — {r.utterance}",
                          file=sys.stderr, flush=True)
    ok = sum(r.success for r in results)
    report = {"planner": planner, "results": [r.to_json() for r in results],
              "success_rate": round(ok / len(results), 4) if results else 0.0}
    if json_out:
        print(json.dumps(report, ensure_ascii=False))
    else:
        print(format_table(results, time.monotonic() - t0, planner))
    return report


def format_table(results: list[EpisodeResult], total_s: float, planner: str) -> str:
    """Per task: seeds solved, mean steps, mean seconds; then the overall success rate."""
    width = max([len(r.task) for r in results] + [4])
    lines = [f"{'task':<{width}}  {'ok':>5}  {'steps':>5}  {'s':>5}"]
    for task in dict.fromkeys(r.task for r in results):
        rows = [r for r in results if r.task == task]
        ok = sum(r.success for r in rows)
        lines.append(f"{task:<{width}}  {f'{ok}/{len(rows)}':>5}  {statistics.mean(r.steps for r in rows):>5.1f}  "
                     f"{statistics.mean(r.seconds for r in rows):>5.1f}")
    ok = sum(r.success for r in results)
    rate = 100 * ok / len(results) if results else 0.0
    lines.append(f"planner {planner}: {ok}/{len(results)} episodes solved ({rate:.1f}%) in {total_s:.0f} s")
    return "\n".join(lines)


# -- CLI -----------------------------------------------------------------------------------------
def add_bench_parser(bench_sub) -> None:
    """`vigil bench miniwob …` under `vigil bench`."""
    m = bench_sub.add_parser("miniwob", help="MiniWoB++ tasks solved by a planner (needs the miniwob pages)")
    m.add_argument("--tasks", default=",".join(TASKS), help="comma-separated task names (default: the 20 of issue 4)")
    m.add_argument("--seeds", default=",".join(map(str, SEEDS)), help="comma-separated integer seeds (default 1,2,3)")
    m.add_argument("--planner", default="heuristic", help="planner name (default heuristic)")
    m.add_argument("--max-steps", type=int, default=12, help="step limit per episode (default 12)")
    m.add_argument("--time-limit", type=float, default=30.0, help="seconds per episode (default 30)")
    m.add_argument("--json", action="store_true", help="print one JSON object")


def bench_command(args: argparse.Namespace) -> int:
    """Run `vigil bench miniwob` from parsed arguments."""
    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
    try:
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    except ValueError:
        raise VigilError(f"--seeds must be comma-separated integers, not {args.seeds!r}.",
                         code=ErrorCode.BAD_ARGUMENT) from None
    if not tasks or not seeds:
        raise VigilError("Give at least one task (--tasks) and one seed (--seeds).", code=ErrorCode.BAD_ARGUMENT)
    if args.max_steps < 1 or args.time_limit <= 0:
        raise VigilError("--max-steps and --time-limit must be positive.", code=ErrorCode.BAD_ARGUMENT)
    asyncio.run(run_bench(tasks, seeds, args.planner, json_out=args.json, max_steps=args.max_steps,
                          time_limit_s=args.time_limit))
    return 0
