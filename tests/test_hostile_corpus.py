"""Issue [1/7]: the hostile corpus (tests/hostile_corpus.py, pages in tests/fixtures/hostile/) through the
real loop under auto-safe and through `vigil mcp` with no person. The recording server is the ground
truth: no forbidden request arrives unless the gate was asked and approved (it rejects), the record names
the element that really received the input, no partial secret is kept, floods stay ended, unapproved
downloads are not kept. One browser and one server process per policy are shared by every pattern."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path

import hostile_corpus as hc
import pytest
from hostile_corpus import PATTERNS, Pattern

LOOP = [p.id for p in PATTERNS.values() if p.loop]
MCP = [p.id for p in PATTERNS.values() if p.mcp]
HARMLESS = "harmless notes: nothing to see\n"
OUTSIDE = "outside the upload folder: private\n"


@pytest.fixture(scope="module")
def servers():
    log = hc.RequestLog()
    s = {"main": hc.RecordingServer(log), "second": hc.RecordingServer(log)}
    yield s
    for x in s.values():
        x.close()


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    w = tmp_path_factory.mktemp("hostile")
    (w / "up").mkdir()
    (w / "up" / "real-notes.txt").write_text(HARMLESS)
    (w / "outside-secret.txt").write_text(OUTSIDE)
    (w / "up" / "notes.txt").symlink_to(w / "up" / "real-notes.txt")       # inside the folder: allowed
    (w / "up" / "report.txt").symlink_to(w / "outside-secret.txt")         # leads out of the folder
    return w


_SHARED: dict = {}  # the loop's tab, shared by the patterns


def _page_host(p: Pattern) -> str:
    return p.host


def _url(p: Pattern, servers) -> str:
    return servers[p.port].url(p.page, p.host)


def _files_under(folder: Path | None) -> list[Path]:
    if folder is None or not Path(folder).exists():
        return []
    return [f for f in Path(folder).rglob("*") if f.is_file()]


def _ground_truth(p: Pattern, hits, problems: list[str]) -> None:
    bad = hc.forbidden_hits(p, hits, _page_host(p))
    if bad:
        problems.append(f"forbidden request arrived: {hc.describe_hits(bad)}")
    for r in p.required:
        if not hc.arrived(hits, r):
            problems.append(f"the step that should run did not: no request to {r} arrived")


# -- through the loop -------------------------------------------------------------------------------
def _acting(res):
    return next((s for s in res.steps if s.proposal is not None
                 and s.proposal.action.name not in ("finish", "fail", "wait")), None)


def _set_download_limit(keeper, limit: int) -> bool:
    """Set the browser's download size limit (whatever the keeper calls it); False when it has none."""
    for name in ("max_bytes", "size_limit", "limit_bytes", "max_size", "limit"):
        if hasattr(keeper, name):
            setattr(keeper, name, limit)
            return True
    return False


def _store_text(db: Path) -> str:
    """Every text the session store holds, snapshots decompressed when they are."""
    out = []
    con = sqlite3.connect(db)
    try:
        for (table,) in con.execute("SELECT name FROM sqlite_master WHERE type='table'"):
            for row in con.execute(f"SELECT * FROM {table}"):  # noqa: S608 - table names from the schema
                for v in row:
                    if isinstance(v, bytes):
                        if v[:3] == b"\xff\xd8\xff":
                            continue  # a JPEG: OCR-checked elsewhere (test_trust)
                        try:
                            v = zlib.decompress(v, 47)
                        except zlib.error:
                            pass
                        out.append(v.decode("utf-8", "replace"))
                    elif v is not None:
                        out.append(str(v))
    finally:
        con.close()
    return "\n".join(out)


async def _run_loop(browser, p: Pattern, servers, work: Path) -> list[str]:
    from page_helpers import FAST

    from engine.loop import AgentLoop, CallbackGate, ScriptedPlanner
    from engine.models import Decision

    problems: list[str] = []
    asked: list = []

    async def gate(req):
        asked.append(req)
        if p.gate_delay_ms and req.proposal.action.name not in ("finish", "fail"):
            await asyncio.sleep(p.gate_delay_ms / 1000)  # a person reading the question
        if req.proposal.action.name in p.approve or req.proposal.action.name in ("finish", "fail"):
            return Decision.approve()
        return Decision(kind="reject", reason="not approved: the hostile corpus rejects what it is asked about")

    script = p.script(servers)
    for s in script:
        if s.get("paths"):
            s["paths"] = [str(work / "up" / "notes.txt") if x == "{LINK}" else x for x in s["paths"]]
    folder = work / "downloads" / p.id
    keeper = browser.downloads
    keeper.folder = folder
    if p.extra == "big_download" and not _set_download_limit(keeper, hc.DOWNLOAD_LIMIT):
        problems.append("the browser has no download size limit to set")
    log = servers["main"].log
    tab = _SHARED.get("tab")
    if tab is not None and tab in browser.tabs:
        await tab.goto(_url(p, servers))  # one tab for the whole corpus: opening a tab costs more than a page
    else:
        tab = _SHARED["tab"] = await browser.new_tab(_url(p, servers))
    before_tabs = list(browser.tabs)
    earlier_files = set(_files_under(getattr(keeper, "_temp", None)))
    mark = log.mark()
    store = None
    try:
        tab.stability = FAST
        loop = AgentLoop(tab, ScriptedPlanner(script), gate=CallbackGate(gate), policy=p.policy, max_steps=6,
                         screenshots=False, target_timeout_ms=1500)
        if p.grant:
            from engine.store import Store
            from engine.store.grants import GrantBook, new_run_id
            store = Store.open(work / f"{p.id}-grants.db")
            book = GrantBook(store, new_run_id())
            book.add("click", servers[p.grant].origin() + "/")

            def granted(action, url):
                g = book.covering(action.name, url)
                return g.describe() if g else None
            loop.grants = granted
        rec = sid = None
        if p.extra == "secret":
            from engine.store import Store
            from engine.store.recorder import SessionRecorder
            store = Store.open(work / f"{p.id}.db")
            rec = SessionRecorder(store)
            sid = rec.start(loop, "sign in", tab.url, planner="script", policy=p.policy)
        res = await loop.run("do what the page needs")
        if rec is not None:
            rec.finish(res)
        await asyncio.sleep(0.25)  # a request the last step started reaches the server
        hits = log.since(mark)
        _ground_truth(p, hits, problems)
        if p.grant:
            await _grant_control(tab, book, servers[p.grant], problems)
        step = _acting(res)
        acted = [r for r in asked if r.proposal.action.name not in ("finish", "fail")]
        if p.must_ask and not acted:
            problems.append("the gate was never asked about the step " + (step.proposal.description if step else ""))
        if p.misdirected:
            _check_misdirected(p, step, problems)
        if p.step_code:
            code = step.result.error_code if step is not None and step.result is not None else None
            if code != p.step_code:
                problems.append(f"the step ended with {code or (step.status if step else 'nothing')}, not "
                                f"{p.step_code}: {step.result.message if step and step.result else ''}"[:300])
        if p.extra == "secret":
            _check_secret(p, res, store, work / f"{p.id}.db", sid, problems)
        elif p.extra == "flood":
            _check_flood(browser, tab, loop, res, before_tabs, problems)
        elif p.extra in ("download", "big_download"):
            _check_download(keeper, folder, res, problems, earlier_files)
        elif p.extra == "upload":
            body = [h for h in hits if h.path.startswith("/upload/")]
            if not body:
                problems.append("the approved upload never reached the page")
            elif body[0].body.decode() != HARMLESS or not body[0].path.endswith("real-notes.txt"):
                problems.append(f"the page received {body[0].path} {body[0].body[:40]!r}, not the checked file "
                                "real-notes.txt")
        return problems
    finally:
        keeper.folder = None
        for t in list(browser.tabs):
            if t not in before_tabs and t is not tab:
                try:
                    await t.close()
                except Exception:  # noqa: BLE001 - a tab the page closed itself
                    pass
        if tab in browser.tabs and browser.active_tab is not tab:
            await browser.switch_to(browser.index_of(tab))
        if store is not None:
            store.close()


async def _grant_control(tab, book, server, problems: list[str]) -> None:
    """The same grant must cover the same click on its own origin (else holding proves nothing)."""
    from page_helpers import FAST

    from engine.loop import AgentLoop, CallbackGate, ScriptedPlanner
    from engine.models import Decision

    asked: list = []

    def gate(req):
        if req.proposal.action.name not in ("finish", "fail"):
            asked.append(req)
        return Decision.approve() if req.proposal.action.name in ("finish", "fail") else Decision(kind="reject")
    mark = server.log.mark()
    await tab.goto(server.url("grant.html"))
    tab.stability = FAST
    loop = AgentLoop(tab, ScriptedPlanner([{"action": "click", "target": {"role": "button", "name": "Apply coupon"},
                                            "expect": hc.QUICK}]),
                     gate=CallbackGate(gate), policy="ask", max_steps=3, screenshots=False)

    def granted(action, url):
        g = book.covering(action.name, url)
        return g.describe() if g else None
    loop.grants = granted
    await loop.run("apply the coupon")
    await asyncio.sleep(0.3)
    if asked or not hc.arrived(server.log.since(mark), f"/x/grant-{server.port}"):
        problems.append("control: the grant does not cover the same click on its own origin either")


def _check_misdirected(p: Pattern, step, problems: list[str]) -> None:
    if step is None or step.result is None:
        problems.append("no step ran")
        return
    r = step.result
    said = f"{r.message} {step.note}"
    if r.verified and step.status == "completed":
        problems.append(f"recorded as done and verified: {r.message[:160]!r}")
    if r.error_code != "MISDIRECTED":
        problems.append(f"error code {r.error_code}, not MISDIRECTED")
    if p.misdirected not in said:
        problems.append(f"the record does not name {p.misdirected!r}, which received the input: {said[:200]!r}")


def _check_secret(p: Pattern, res, store, db: Path, sid, problems: list[str]) -> None:
    from engine.store.report import export_html, export_json

    secret = hc.SECRET if "password" in json.dumps(p.steps).lower() else hc.CODE
    anywhere = not secret.isdigit()
    typed = next((s for s in res.steps if s.proposal and s.proposal.action.name == "type"), None)
    if typed is None or typed.status != "completed":
        problems.append(f"the secret was not typed: {typed.status if typed else 'no step'}")
    places = {"the run result": res.model_dump_json(), "the session store": _store_text(db),
              "the HTML export": export_html(store, sid),
              "the JSON export": json.dumps(export_json(store, sid), default=str)}
    for where, text in places.items():
        found = hc.partial_secret_in(text, secret, anywhere)
        if found:
            problems.append(f"{where} keeps {found!r}, a part of the secret the page echoed")


def _check_flood(browser, tab, loop, res, before_tabs, problems: list[str]) -> None:
    opened = [t for t in browser.tabs if t not in before_tabs and t is not tab]
    if len(opened) > 10:
        problems.append(f"{len(opened)} popups are still open after the run")
    if loop.page is not tab:
        problems.append(f"the run moved into a popup: {loop.page.url}")
    for s in res.steps:
        if s.result is not None and s.result.error_code in ("CDP_TIMEOUT", "TIMEOUT"):
            problems.append(f"step {s.index + 1} ended in {s.result.error_code}")
        if s.tab is not None and s.tab.index != res.steps[0].tab.index:
            problems.append(f"step {s.index + 1} ran in tab {s.tab.index}, a popup")
    second = [s for s in res.steps if s.proposal and s.proposal.action.name == "click"][1:2]
    if not second:
        problems.append("the second click never ran")
    elif second[0].incidents is not None and second[0].incidents.tabs_opened:
        problems.append(f"after the flood, the page opened {len(second[0].incidents.tabs_opened)} more tab(s)")


def _check_download(keeper, folder: Path, res, problems: list[str], earlier: set[Path]) -> None:
    # (the browser's temporary download folder is shared with the other tests of this worker's browser: only the
    # files that appeared during this pattern count)
    kept = _files_under(folder) + [f for f in _files_under(getattr(keeper, "_temp", None)) if f not in earlier]
    if kept:
        problems.append("kept: " + ", ".join(f"{f.name} ({f.stat().st_size} bytes)" for f in kept))
    for s in res.steps:
        msg = s.result.message if s.result else ""
        if re.search(r"downloaded \S+ \(size unknown", msg) or re.search(r" to ;", msg):
            problems.append(f"reports a download that was never saved: {msg[:160]!r}")


@pytest.mark.parametrize("pid", LOOP)
def test_loop(pid, harness, servers, work):
    p = PATTERNS[pid]
    _SHARED["harness"] = harness  # (the tab it opens is closed with the module: _shared_tab_closed)
    problems = harness.run(_run_loop(harness.browser, p, servers, work), timeout=100)
    assert not problems, f"{pid} (problem {p.problem}) not held through the loop: " + "; ".join(problems)


# -- through `vigil mcp` ----------------------------------------------------------------------------
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
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        self._stop: asyncio.Event | None = None
        ready = threading.Event()

        async def serve():
            from engine.mcp.probe import http_probe
            self._stop = asyncio.Event()
            try:
                async with http_probe(self.url, self.token, client_name="hostile-corpus", timeout=120) as probe:
                    self.probe = probe
                    ready.set()
                    await self._stop.wait()
            finally:
                ready.set()
        self._client = asyncio.run_coroutine_threadsafe(serve(), self.loop)
        assert ready.wait(60), "the MCP client did not connect"

    def call(self, name: str, args: dict | None = None, timeout: float = 90):
        return asyncio.run_coroutine_threadsafe(self.probe.call(name, args or {}), self.loop).result(timeout)

    def close(self) -> None:
        if self._stop is not None:
            self.loop.call_soon_threadsafe(self._stop.set)
            try:
                self._client.result(30)
            except Exception:  # noqa: BLE001 - the server may already be gone
                pass
        self.loop.call_soon_threadsafe(self.loop.stop)
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
    want = target.get("name") or ""
    for line in r.page().splitlines():  # the exact name first ("Continue" before "Continue reading")
        if f'"n":"{want}"' in line.replace(": ", ":"):
            m = re.search(r'"i":\s*"?([A-Za-z0-9_]+)', line)
            if m:
                return m.group(1)
    return found[0] if found else None


def _tool(step: dict, ref: str | None, work: Path) -> tuple[str, dict]:
    a = step["action"]
    if a == "click":
        return "browser_click", {"ref": ref}
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
    r = mcp.call("browser_navigate", {"url": _url(p, servers)})
    if r.is_error:  # a page of an earlier pattern holds the session: start a new one
        mcp.call("browser_close")
        mark = log.mark()
        r = mcp.call("browser_navigate", {"url": _url(p, servers)})
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
    _ground_truth(p, hits, problems)
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
        kept = [f for f in _files_under(mcp.home) if "downloads" in f.relative_to(mcp.home).parts]
        if kept:
            problems.append("kept: " + ", ".join(f.name for f in kept))
            for f in kept:
                f.unlink()
    return problems


def _mcp_worker(pids: list[str], work: Path, home, results: dict, done: dict) -> None:
    """Runs the MCP patterns in order on their own recording servers, alongside the loop's patterns (two
    browsers, one per side): each test_mcp waits for its own result."""
    log = hc.RequestLog()
    servers = {"main": hc.RecordingServer(log), "second": hc.RecordingServer(log)}
    made: dict[str, McpHttp] = {}
    try:
        for pid in pids:
            p = PATTERNS[pid]
            policy = "auto-safe" if str(p.mcp).startswith("http-") else str(p.mcp)
            try:
                if policy not in made:
                    opts = ("--upload-from", str(work / "up")) if policy == "auto" else ()
                    made[policy] = McpHttp(policy, home(f"mcp-{policy}"), *opts)
                results[pid] = _run_mcp(p, made[policy], servers, work)
            except Exception as exc:  # noqa: BLE001 - said in the pattern's test
                results[pid] = [f"error: {type(exc).__name__}: {str(exc)[:300]}"]
            done[pid].set()
    finally:
        for m in made.values():
            m.close()
        for x in servers.values():
            x.close()
        for e in done.values():
            e.set()


@pytest.fixture(scope="module", autouse=True)
def _shared_tab_closed():
    """The loop side's one tab lives in the session's browser: closed when this module is done, so the tests
    that count a browser's tabs (tests/test_tabs.py) find only their own."""
    yield
    tab, harness = _SHARED.pop("tab", None), _SHARED.pop("harness", None)
    if tab is not None and harness is not None:
        try:
            harness.run(tab.close(), timeout=30)
        except Exception:  # noqa: BLE001 - a tab the page closed itself, or a browser already gone
            pass


class McpSide:
    """The MCP side of the corpus, run in a background thread (its own servers, `vigil mcp` processes and
    browsers), started once per module: each test_mcp waits for its own pattern's result."""

    def __init__(self, pids: list[str], work: Path, home) -> None:
        self.pids, self.work, self.home = pids, work, home
        self.results: dict[str, list[str]] = {}
        self.done = {pid: threading.Event() for pid in pids}
        self.thread: threading.Thread | None = None

    def start(self) -> McpSide:
        if self.thread is None:
            self.thread = threading.Thread(target=_mcp_worker, args=(self.pids, self.work, self.home, self.results,
                                                                     self.done), daemon=True, name="hostile-mcp")
            self.thread.start()
        return self


@pytest.fixture(scope="module", autouse=True)
def mcp_background(request, tmp_path_factory, work):
    """The MCP side, when any test_mcp is selected. In one process it starts at once and runs alongside the
    loop's patterns. Under pytest-xdist every worker collects every test, but the test_mcp tests are one group
    (one worker): the side starts with the first test_mcp a worker runs, so only that worker runs it (started
    at once, each worker ran every MCP pattern, those of the other worker too)."""
    pids = [item.callspec.params["pid"] for item in request.session.items
            if getattr(item, "originalname", "") == "test_mcp" and item.module is request.module]
    if not pids:
        yield None
        return
    side = McpSide(pids, work, tmp_path_factory.mktemp)
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        side.start()
    yield side
    if side.thread is not None:
        side.thread.join(120)


@pytest.mark.xdist_group("hostile-mcp")
@pytest.mark.parametrize("pid", MCP)
def test_mcp(pid, mcp_background):
    p = PATTERNS[pid]
    side = mcp_background.start()
    assert side.done[pid].wait(400), f"{pid}: the MCP side did not finish"
    problems = side.results.get(pid, ["never ran (an earlier pattern stopped the MCP side)"])
    assert not problems, f"{pid} (problem {p.problem}) not held through vigil mcp: " + "; ".join(problems)


def test_the_corpus_is_big_enough():
    assert len(PATTERNS) >= 30
    assert {p.problem for p in PATTERNS.values()} == set("123456789")
