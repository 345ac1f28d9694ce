"""`vigil bench fleet`: what a fleet costs and holds, measured on this machine in one run.

- The same N runs (FORM_SCRIPT: eight steps each on the local demo site, --approve auto, recorded in a
  throwaway store) as `vigil fleet --parallel P` for each P given, and as N sequential `vigil run`
  processes: wall time, steps per second, and the Vigil process's peak memory (its own RSS, the Chromium
  processes it starts not counted; sampled from /proc) with the memory per concurrent run
  ((peak at P - peak at 1) / (P - 1)).
- `--remote`: the same runs spread over two Chromium processes this bench starts with
  `--remote-debugging-port=0` (the port read from DevToolsActivePort), one of them killed once half the
  runs are done: every run must be accounted for (done, or failed naming the endpoint that went away).
- `--grid URL`: instead, the same runs as `vigil fleet --grid URL` (a browser session asked of the grid per run)
  and as `vigil fleet` on a local Chromium, alternating, each `--rounds` times at each --parallel: wall time,
  steps per second and time to first step (from the fleet's start to a run's first step: median and slowest run,
  read from the sessions it recorded).

Every figure comes from `vigil` as a person runs it (a child process per measurement)."""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from engine.bench.fleet_site import DemoSite, fleet_file_data

VIGIL = [sys.executable, "-m", "engine.cli"]
ROOT = Path(__file__).resolve().parents[2]


def add_bench_parser(sub: Any) -> None:
    b = sub.add_parser("fleet", help="a fleet's wall time, steps per second and memory per run, against "
                                     "sequential `vigil run` processes; and runs over two remote endpoints, one "
                                     "killed halfway")
    b.add_argument("--runs", type=int, default=20, help="runs in the fleet (default 20)")
    b.add_argument("--parallel", default="1,2,4", help="the --parallel values to measure (default 1,2,4)")
    b.add_argument("--no-sequential", action="store_true", help="skip the N sequential `vigil run` processes")
    b.add_argument("--no-remote", action="store_true", help="skip the two-endpoint run")
    b.add_argument("--grid", metavar="URL", help="measure the runs on this grid (a Selenium Grid, http://hub:4444, "
                                                 "or a browserless ws:// URL) against a local Chromium instead")
    b.add_argument("--rounds", type=int, default=1, help="with --grid: grid and local runs, alternating, this many "
                                                         "times each (default 1)")
    b.add_argument("--json", action="store_true", help="print the figures as one JSON object")


# -- remote endpoints -----------------------------------------------------------------------------
def start_remote_chromium(user_data_dir: str | Path, timeout: float = 20.0) -> tuple[subprocess.Popen, str]:
    """A headless Chromium with `--remote-debugging-port=0` (its own profile in `user_data_dir`); returns the
    process and its DevTools endpoint, http://127.0.0.1:PORT (the port read from DevToolsActivePort)."""
    from engine.browser.discovery import BASE_FLAGS, find_chromium, running_as_root

    d = Path(user_data_dir)
    d.mkdir(parents=True, exist_ok=True)
    port_file = d / "DevToolsActivePort"
    port_file.unlink(missing_ok=True)
    args = [find_chromium(headless=True), "--headless", "--remote-debugging-port=0",
            "--remote-debugging-address=127.0.0.1", f"--user-data-dir={d}", *BASE_FLAGS,
            *(["--no-sandbox"] if running_as_root() else []), "about:blank"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if port_file.exists():
            lines = port_file.read_text().split("\n")
            if lines and lines[0].strip().isdigit():
                return proc, f"http://127.0.0.1:{int(lines[0])}"
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    stop_process(proc)
    raise RuntimeError(f"Chromium with --remote-debugging-port=0 did not write {port_file} within {timeout:.0f} s.")


def stop_process(proc: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    """End a process this module started, with its whole process group (Chromium's helpers)."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        proc.send_signal(sig)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)


# -- measuring a child process ----------------------------------------------------------------------
def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


class Child:
    """A `vigil` child process with its peak RSS sampled every 50 ms; `lines` are its stderr lines as they
    come (`on_line` is called with each)."""

    def __init__(self, argv: list[str], env: dict[str, str], on_line: Any = None) -> None:
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                     cwd=str(ROOT))
        self.peak_kb = 0
        self.lines: list[str] = []
        self._on_line = on_line
        self._t0 = time.monotonic()
        self.seconds = 0.0
        threading.Thread(target=self._sample, daemon=True).start()
        self._err = threading.Thread(target=self._read_err, daemon=True)
        self._err.start()

    def _sample(self) -> None:
        while self.proc.poll() is None:
            self.peak_kb = max(self.peak_kb, _rss_kb(self.proc.pid))
            time.sleep(0.05)

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))
            if self._on_line is not None:
                self._on_line(line)

    def wait(self, timeout: float = 900) -> tuple[int, str]:
        out, _ = self.proc.communicate(timeout=timeout)
        self.seconds = time.monotonic() - self._t0
        self._err.join(5)
        return self.proc.returncode, out


def _env(home: str) -> dict[str, str]:
    return {**os.environ, "VIGIL_HOME": home, "PYTHONPATH": str(ROOT)}


def _fleet(path: str, home: str, parallel: int, extra: list[str] | None = None,
           on_line: Any = None) -> tuple[dict[str, Any], Child]:
    child = Child([*VIGIL, "fleet", path, "--parallel", str(parallel), "--approve", "auto", "--json", *(extra or [])],
                  _env(home), on_line)
    code, out = child.wait()
    try:
        data = json.loads(out.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        raise RuntimeError(f"vigil fleet (exit {code}) printed no JSON: {out[-500:]!r} "
                           f"{' / '.join(child.lines[-5:])}") from None
    return data, child


def _figures(label: str, runs: list[dict[str, Any]], seconds: float, peak_kb: int) -> dict[str, Any]:
    steps = sum(int(r.get("steps") or 0) for r in runs)
    return {"mode": label, "runs": len(runs), "done": sum(r.get("status") == "done" for r in runs), "steps": steps,
            "wall_s": round(seconds, 2), "steps_per_s": round(steps / seconds, 2) if seconds else None,
            "vigil_peak_rss_mb": round(peak_kb / 1024, 1)}


def bench_command(args: argparse.Namespace) -> int:
    try:
        pars = [int(x) for x in str(args.parallel).split(",") if x.strip()]
    except ValueError:
        print("vigil bench fleet: --parallel takes numbers such as 1,2,4", file=sys.stderr)
        return 2
    if args.runs < 1 or not pars or min(pars) < 1:
        print("vigil bench fleet: --runs and every --parallel value must be at least 1", file=sys.stderr)
        return 2
    if getattr(args, "grid", None):
        return _grid_command(args, pars)
    report: dict[str, Any] = {"runs": args.runs, "steps_per_run": 8, "cpus": os.cpu_count(), "rows": []}
    say = (lambda *a: print(*a, file=sys.stderr, flush=True)) if args.json else \
        (lambda *a: print(*a, flush=True))
    with tempfile.TemporaryDirectory(prefix="vigil-bench-fleet-") as tmp, DemoSite() as site:
        path = os.path.join(tmp, "fleet.json")
        Path(path).write_text(json.dumps(fleet_file_data(site, args.runs)))
        for p in pars:
            data, child = _fleet(path, os.path.join(tmp, f"home-p{p}"), p)
            row = _figures(f"vigil fleet --parallel {p}", data["runs"], child.seconds, child.peak_kb)
            row["parallel"] = p
            report["rows"].append(row)
            say(_line(row))
        base = next((r for r in report["rows"] if r.get("parallel") == 1), None)
        for r in report["rows"]:
            if base is not None and r.get("parallel", 1) > 1:
                r["mb_per_extra_concurrent_run"] = round((r["vigil_peak_rss_mb"] - base["vigil_peak_rss_mb"])
                                                         / (r["parallel"] - 1), 1)
        if not args.no_sequential:
            report["rows"].append(_sequential(site, args.runs, tmp, say))
        if not args.no_remote:
            report["remote"] = _remote(path, tmp, args.runs, say)
    for r in report["rows"]:
        if base is not None:
            r["speed_vs_parallel_1"] = round(base["wall_s"] / r["wall_s"], 2) if r["wall_s"] else None
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(table(report))
    ok = all(r["done"] == r["runs"] for r in report["rows"])
    rem = report.get("remote")
    return 0 if ok and (rem is None or rem["accounted_for"] == rem["runs"]) else 1


def _line(row: dict[str, Any]) -> str:
    return (f"{row['mode']}: {row['done']}/{row['runs']} done, {row['steps']} steps in {row['wall_s']} s "
            f"({row['steps_per_s']} steps/s), Vigil peak RSS {row['vigil_peak_rss_mb']} MB")


def _sequential(site: DemoSite, n: int, tmp: str, say: Any) -> dict[str, Any]:
    from engine.bench.fleet_site import FORM_SCRIPT
    runs, peak, t0 = [], 0, time.monotonic()
    home = os.path.join(tmp, "home-seq")
    for i in range(1, n + 1):
        name = f"r{i}"
        script = os.path.join(tmp, f"s{i}.json")
        Path(script).write_text(json.dumps(FORM_SCRIPT).replace("{run}", name))
        child = Child([*VIGIL, "run", f"Fill in the entry of {name}", "--url", site.url(name), "--script", script,
                       "--approve", "auto", "--json"], _env(home))
        code, out = child.wait()
        peak = max(peak, child.peak_kb)
        try:
            res = json.loads(out.strip().splitlines()[-1])
            runs.append({"status": "done" if res.get("status") == "success" else "failed",
                         "steps": len(res.get("steps") or [])})
        except (json.JSONDecodeError, IndexError):
            runs.append({"status": "failed", "steps": 0})
    row = _figures(f"{n} sequential `vigil run` processes", runs, time.monotonic() - t0, peak)
    say(_line(row))
    return row


def _remote(path: str, tmp: str, n: int, say: Any) -> dict[str, Any]:
    a, url_a = start_remote_chromium(os.path.join(tmp, "chromium-a"))
    b, url_b = start_remote_chromium(os.path.join(tmp, "chromium-b"))
    done: dict[str, Any] = {"n": 0, "killed_at": None}
    t0 = time.monotonic()

    def on_line(line: str) -> None:
        if "] done" in line:
            done["n"] += 1
            if done["n"] >= n // 2 and done["killed_at"] is None:
                done["killed_at"] = round(time.monotonic() - t0, 2)
                stop_process(b, signal.SIGKILL)

    try:
        data, child = _fleet(path, os.path.join(tmp, "home-remote"), 4, ["--browsers", f"{url_a},{url_b}"], on_line)
    finally:
        stop_process(a)
        stop_process(b, signal.SIGKILL)
    runs = data["runs"]
    by = {s: sum(r["status"] == s for r in runs) for s in ("done", "failed", "stopped", "queued", "running")}
    named = sum(r["status"] == "failed" and url_b in (r.get("reason") or "") for r in runs)
    out = {"endpoints": [url_a, url_b], "killed": url_b, "killed_after_s": done["killed_at"], "runs": len(runs),
           "accounted_for": by["done"] + by["failed"] + by["stopped"], "by_status": by,
           "failed_naming_the_killed_endpoint": named, "wall_s": round(child.seconds, 2),
           "per_endpoint_done": {u: sum(r["status"] == "done" and r.get("browser") == u for r in runs)
                                 for u in (url_a, url_b)}}
    say(f"two remote endpoints, {url_b} killed after {done['killed_at']} s: {out['accounted_for']}/{len(runs)} runs "
        f"accounted for ({by['done']} done, {by['failed']} failed, {named} of them naming {url_b}), "
        f"{out['wall_s']} s")
    return out


def _first_steps(home: str, t0: float) -> list[float]:
    """Seconds from `t0` (time.time()) to each recorded session's first step, from the store in `home`."""
    from engine.store import Store

    found = list(Path(home).rglob("*.db"))
    if not found:
        return []
    out = []
    with Store.open(found[0]) as store:
        for row in store.list_sessions():
            steps = store.load(row.id).steps
            if steps:
                out.append(round(min(st.started_at for st in steps) - t0, 2))
    return sorted(out)


def _grid_row(label: str, path: str, home: str, parallel: int, extra: list[str]) -> dict[str, Any]:
    t0 = time.time()
    data, child = _fleet(path, home, parallel, extra)
    row = _figures(label, data["runs"], child.seconds, child.peak_kb)
    firsts = _first_steps(home, t0)
    row.update(parallel=parallel, first_step_median_s=round(statistics.median(firsts), 2) if firsts else None,
               first_step_slowest_s=firsts[-1] if firsts else None,
               failed=[f"{r['name']}: {r.get('reason')}" for r in data["runs"] if r.get("status") != "done"][:3])
    return row


def _grid_command(args: argparse.Namespace, pars: list[int]) -> int:
    """`--grid URL`: the same fleet on the grid and on a local Chromium, alternating (see the module's doc)."""
    if args.rounds < 1:
        print("vigil bench fleet: --rounds must be at least 1", file=sys.stderr)
        return 2
    report: dict[str, Any] = {"runs": args.runs, "steps_per_run": 8, "cpus": os.cpu_count(),
                              "grid": args.grid.split("?", 1)[0], "rows": []}  # (a browserless token not printed)
    say = (lambda *a: print(*a, file=sys.stderr, flush=True)) if args.json else (lambda *a: print(*a, flush=True))
    with tempfile.TemporaryDirectory(prefix="vigil-bench-fleet-") as tmp, DemoSite() as site:
        path = os.path.join(tmp, "fleet.json")
        Path(path).write_text(json.dumps(fleet_file_data(site, args.runs)))
        for p in pars:
            for i in range(args.rounds):
                for label, extra in ((f"grid, --parallel {p}", ["--grid", args.grid]),
                                     (f"local Chromium, --parallel {p}", [])):
                    row = _grid_row(label, path, os.path.join(tmp, f"home-{len(report['rows'])}"), p, extra)
                    row["round"] = i + 1
                    report["rows"].append(row)
                    say(_line(row) + f", first step after {row['first_step_median_s']} s (median), "
                                     f"{row['first_step_slowest_s']} s (slowest run)")
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(grid_table(report))
    return 0 if all(r["done"] == r["runs"] for r in report["rows"]) else 1


def grid_table(report: dict[str, Any]) -> str:
    lines = [f"{report['runs']} runs x {report['steps_per_run']} steps, --approve auto, {report['cpus']} CPUs; "
             f"grid {report['grid']}; time to first step from the fleet's start",
             f"{'mode':<34} {'round':>5} {'done':>6} {'wall s':>8} {'steps/s':>8} {'1st step med':>12} "
             f"{'slowest':>8}"]
    for r in report["rows"]:
        lines.append(f"{r['mode']:<34} {r['round']:>5} {r['done']:>3}/{r['runs']:<2} {r['wall_s']:>8} "
                     f"{r['steps_per_s']:>8} {r['first_step_median_s']!s:>12} {r['first_step_slowest_s']!s:>8}")
        lines += [f"    {f}" for f in r["failed"]]
    return "\n".join(lines)


def table(report: dict[str, Any]) -> str:
    lines = [f"{report['runs']} runs x {report['steps_per_run']} steps, --approve auto, {report['cpus']} CPUs",
             f"{'mode':<42} {'done':>6} {'wall s':>8} {'steps/s':>8} {'x p=1':>6} {'Vigil MB':>9} {'MB/extra run':>12}"]
    for r in report["rows"]:
        lines.append(f"{r['mode']:<42} {r['done']:>3}/{r['runs']:<2} {r['wall_s']:>8} {r['steps_per_s']:>8} "
                     f"{r.get('speed_vs_parallel_1') or '':>6} {r['vigil_peak_rss_mb']:>9} "
                     f"{r.get('mb_per_extra_concurrent_run', ''):>12}")
    rem = report.get("remote")
    if rem:
        lines.append(f"remote: {rem['accounted_for']}/{rem['runs']} accounted for, {rem['by_status']}, "
                     f"{rem['failed_naming_the_killed_endpoint']} failed naming {rem['killed']}, "
                     f"done per endpoint {rem['per_endpoint_done']}, {rem['wall_s']} s")
    return "\n".join(lines)
