"""The hostile corpus through `vigil mcp` (the MCP side of tests/acceptance/test_hostile_corpus.py).

Its patterns run one after another in a background thread — their own recording servers, one `vigil mcp
--http` process (and its browser) per approval policy — from the start of the test session, on one process
only (the first pytest-xdist worker, or the only process): conftest.py calls `start(...)`. Most of a
pattern's time is waiting (for a redirect that must not be followed, a download that must not be kept), so
the worker goes on running other tests meanwhile; a test_mcp, on whichever worker, waits for its pattern's
result file (`result(...)`). Before, the patterns ran one test at a time on one worker, which sat idle
through each wait: about a third of a worker's time in the suite."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

from support import hostile_corpus as hc
from support.hostile_corpus import PATTERNS, Pattern
from support.mcp_client import ThreadedProbe

MCP = [p.id for p in PATTERNS.values() if p.mcp]
WAIT_S = 600  # how long a test_mcp waits for its pattern's result (the whole side takes 1–4 min)


class McpHttp:
    """`python -m engine.mcp --http 0 --approve POLICY …` of the checkout under test, and a client."""

    def __init__(self, policy: str, home: Path, *options: str):
        env = {k: v for k, v in os.environ.items() if k != "VIGIL_MCP_TOKEN"}
        env.update(VIGIL_HOME=str(home), PYTHONPATH=str(hc.CHECKOUT),
                   VIGIL_DOWNLOAD_LIMIT_MB=str(hc.DOWNLOAD_LIMIT / 1_000_000))
        self.home = home
        self.proc = subprocess.Popen([sys.executable, "-m", "engine.mcp", "--http", "0", "--approve", policy,
                                      *options], cwd=hc.CHECKOUT, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        said = ""
        deadline = time.monotonic() + 60
        while "approval:" not in said and time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            said += line
        threading.Thread(target=lambda: [None for _ in self.proc.stderr], daemon=True).start()
        self.url = re.search(r"at (http://\S+)", said).group(1)
        self.token = re.search(r"bearer token: (\S+)", said).group(1)
        self.port = int(re.search(r":(\d+)/", self.url).group(1))
        self.client = ThreadedProbe()
        self.client.connect(self.url, self.token, "hostile-corpus")

    def call(self, name: str, args: dict | None = None, timeout: float = 90):
        return self.client.call(name, args, timeout)

    def close(self) -> None:
        self.client.close(quiet=True)  # (the server may already be gone)
        self.proc.terminate()
        try:
            self.proc.wait(30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


def _ref(mcp: McpHttp, target: dict) -> str | None:
    args = {k: v for k, v in (("role", target.get("role")), ("name", target.get("name"))) if v}
    r = mcp.call("browser_find", args)
    found = re.findall(r'"i":\s*"?([A-Za-z0-9_]+)', r.text)
    want = target.get("name")
    if want is None:  # a target by role and position (the nth element of that role, in page order)
        nth = target.get("nth", 0)
        return found[nth] if len(found) > nth else None
    for line in r.page().splitlines():  # the exact name first ("Continue" before "Continue reading")
        if f'"n":"{want}"' in line.replace(": ", ":"):
            m = re.search(r'"i":\s*"?([A-Za-z0-9_]+)', line)
            if m:
                return m.group(1)
    return found[0] if found else None


def _tool(step: dict, ref: str | None, work: Path) -> tuple[str, dict]:
    a = step["action"]
    if a in ("click", "double_click"):
        return "browser_click", {"ref": ref, **({"doubleClick": True} if a == "double_click" else {})}
    if a in ("check", "uncheck"):
        return "browser_check", {"ref": ref, "checked": a == "check"}
    if a == "select":
        return "browser_select_option", {"ref": ref, "values": [step["option"]]}
    if a == "press":
        return "browser_press_key", {"key": step["key"], **({"ref": ref} if ref else {})}
    if a == "type":
        return "browser_type", {"ref": ref, "text": step["text"]}
    if a == "navigate":
        return "browser_navigate", {"url": step["url"]}
    if a == "back":
        return "browser_navigate_back", {}
    if a == "wait":
        return "browser_wait_for", {"time": step["ms"] / 1000}
    if a == "upload":
        return "browser_file_upload", {"ref": ref, "paths": [str(work / "up" / "report.txt")]}
    raise AssertionError(f"no tool for {a}")


def _http_pattern(p: Pattern, mcp: McpHttp, servers) -> list[str]:
    import httpx2
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "x", "version": "1"}}}
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
               "Authorization": f"Bearer {mcp.token}"}
    if p.mcp == "http-host":
        headers["Host"] = f"127.0.0.1:{mcp.port}.evil.example"
    elif p.mcp == "http-origin-suffix":
        headers["Origin"] = f"http://127.0.0.1:{mcp.port}.evil.example"
    else:
        headers["Origin"] = f"http://127.0.0.1:{servers['main'].port}"
    r = httpx2.post(mcp.url, json=init, headers=headers, timeout=30)
    if r.status_code < 400:
        return [f"accepted with {r.status_code}: " + ", ".join(f"{k}: {v}" for k, v in headers.items()
                                                              if k in ("Host", "Origin"))]
    return []


def _run_mcp(p: Pattern, mcp: McpHttp, servers, work: Path) -> list[str]:
    if p.mcp.startswith("http-"):
        return _http_pattern(p, mcp, servers)
    problems: list[str] = []
    log = servers["main"].log
    if getattr(mcp, "host", None) != p.host:
        mcp.call("browser_close")  # a new session (a relaunched browser): it starts on this pattern's site
        mcp.host = p.host
    mark = log.mark()
    r = mcp.call("browser_navigate", {"url": hc.page_url(p, servers)})
    if r.is_error:  # a page of an earlier pattern holds the session: start a new one
        mcp.call("browser_close")
        mark = log.mark()
        r = mcp.call("browser_navigate", {"url": hc.page_url(p, servers)})
    replies = [r]
    if r.is_error:
        return [f"the page did not open: {r.text[:200]}"]
    for step in p.script(servers):
        ref = None
        if step.get("target"):
            ref = _ref(mcp, step["target"])
            if ref is None:
                problems.append(f"no element {step['target']} to act on")
                break
        name, args = _tool(step, ref, work)
        replies.append(mcp.call(name, args))
    time.sleep(0.25)
    hits = log.since(mark)
    if p.extra == "upload":
        p = Pattern(p.id, p.problem, p.page, p.steps, ["/upload/"])
    hc.ground_truth(p, hits, problems)
    if p.mcp_refused and not any(x.is_error and hc.one_line_reason(x.text) for x in replies[1:]):
        problems.append("no tool result said in one line why the step did not run: "
                        + " | ".join(x.text.splitlines()[0][:120] for x in replies[1:] if x.text))
    if p.misdirected and not any("MISDIRECTED" in x.text and p.misdirected in x.text for x in replies[1:]):
        problems.append(f"no tool result says the input reached {p.misdirected!r} (MISDIRECTED): "
                        + " | ".join(x.text.splitlines()[0][:160] for x in replies[1:] if x.text))
    if p.id.startswith("navigate-away"):
        for x in replies[1:]:
            if x.is_error:
                problems.append(f"refused: {x.text.splitlines()[0][:200]}")
    if p.extra == "secret":
        secret = hc.SECRET if "password" in json.dumps(p.steps).lower() else hc.CODE
        texts = [x.text for x in replies] + [mcp.call("browser_console_messages", {"all": True}).text]
        for t in texts:
            found = hc.partial_secret_in(t, secret, not secret.isdigit())
            if found:
                problems.append(f"an MCP result keeps {found!r}, a part of the secret the page echoed")
                break
    if p.extra == "big_download" and not any("limit" in x.text for x in replies[1:]):
        problems.append("no tool result says the download passed the size limit: "
                        + " | ".join(x.text.splitlines()[0][:120] for x in replies[1:] if x.text))
    if p.extra in ("download", "big_download"):
        kept = [f for f in hc.files_under(mcp.home) if "downloads" in f.relative_to(mcp.home).parts]
        if kept:
            problems.append("kept: " + ", ".join(f.name for f in kept))
            for f in kept:
                f.unlink()
    return problems


def _results_dir(tmp_path_factory) -> Path:
    """A folder every worker of this session sees: the workers' common base under pytest-xdist (one per run),
    the session's own base in one process."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    d = shared / "hostile-mcp-results"
    d.mkdir(exist_ok=True)
    return d


def _write(folder: Path, pid: str, problems: list[str]) -> None:
    tmp = folder / f"{pid}.tmp"
    tmp.write_text(json.dumps(problems), encoding="utf-8")
    tmp.replace(folder / f"{pid}.json")  # whole or not at all: a reader never sees half a result


def _run_side(pids: list[str], tmp_path_factory, out: Path) -> None:
    log = hc.RequestLog()
    servers = {"main": hc.HostileServer(log), "second": hc.HostileServer(log)}
    work = hc.make_work(tmp_path_factory.mktemp("hostile-mcp"))
    made: dict[str, McpHttp] = {}
    try:
        for pid in pids:
            p = PATTERNS[pid]
            policy = "auto-safe" if str(p.mcp).startswith("http-") else str(p.mcp)
            try:
                if policy not in made:
                    opts = ("--upload-from", str(work / "up")) if policy == "auto" else ()
                    made[policy] = McpHttp(policy, tmp_path_factory.mktemp(f"mcp-{policy}"), *opts)
                problems = _run_mcp(p, made[policy], servers, work)
            except Exception as exc:  # noqa: BLE001 - said in the pattern's test
                problems = [f"error: {type(exc).__name__}: {str(exc)[:300]}"]
            _write(out, pid, problems)
    finally:
        for pid in pids:
            if not (out / f"{pid}.json").exists():
                _write(out, pid, ["never ran (an earlier pattern stopped the MCP side)"])
        for m in made.values():
            m.close()
        for x in servers.values():
            x.close()


def start(session, tmp_path_factory) -> threading.Thread | None:
    """The MCP side of the selected test_mcp tests, started in a background thread — in the first xdist
    worker only (or the only process); None when no test_mcp is selected or another worker runs it."""
    if os.environ.get("PYTEST_XDIST_WORKER", "gw0") != "gw0":
        return None
    pids = [item.callspec.params["pid"] for item in session.items
            if getattr(item, "originalname", "") == "test_mcp" and item.module.__name__.endswith("test_hostile_corpus")]
    if not pids:
        return None
    out = _results_dir(tmp_path_factory)
    thread = threading.Thread(target=_run_side, args=(pids, tmp_path_factory, out), daemon=True,
                              name="hostile-mcp")
    thread.start()
    return thread


def result(tmp_path_factory, pid: str) -> list[str]:
    """The pattern's problems (none: held), once the MCP side has run it."""
    path = _results_dir(tmp_path_factory) / f"{pid}.json"
    deadline = time.monotonic() + WAIT_S
    while not path.exists():
        if time.monotonic() > deadline:
            return [f"the MCP side gave no result within {WAIT_S} s (is the first test worker still running?)"]
        time.sleep(0.2)
    return json.loads(path.read_text(encoding="utf-8"))
