"""Where the DOM can lie, the network cannot (issue [1/7] items 7-8), on real Chromium through the real
loop: a page that leaves the site by a script (a link's onclick, a div role=button, a timer, a meta
refresh), by a same-site link redirected elsewhere or by a form posting elsewhere is held at the
browser and refused where no person is present, asked where one is; a download the step was not
approved for is refused; a download past the size limit is stopped; a popup flood ends at the limit
and the run never moves into it. A local server records every request that arrived: the other site
(`evil.localhost`, loopback too, but another registrable domain than `127.0.0.1`) must receive nothing
that was refused."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.browser.downloads import LIMIT_ENV, DownloadKeeper, limit_from_env
from engine.errors import ErrorCode
from engine.loop import AgentLoop, AutoApprove, CallbackGate, ScriptedPlanner
from engine.models import Decision
from engine.models.browsing import DownloadInfo

from support.page_helpers import FAST
from support.paths import FIXTURES
from support.recording_server import RecordingServer, Reply, Request

OTHER = "evil.localhost"
BIG = 20_000_000         # what /big.bin would send in all, over 4 s (it is stopped long before)
LIMIT = 1_000_000        # the size limit these tests set


class Recorder(RecordingServer):
    """Serves tests/fixtures/hostile_exit_<name>.html at /page/<name> (with {OTHER} filled in), a
    redirect to the other site, files to download; records (host, method, path) of every request."""

    def __init__(self) -> None:
        self.big_sent = 0
        super().__init__({
            "GET POST /page/*": self._page,
            "GET POST /go-away": lambda r: Reply(status=302, content_type=None, length=False,
                                                 headers={"Location": self.other_url("/redirected")}),
            "GET POST /file.bin": _attachment(b"0123456789" * 100, "totals.bin"),
            "GET POST /big.bin": lambda r: _attachment(self._big(), "big.bin"),
            "GET POST /*": lambda r: Reply(f"<!doctype html><title>Other site</title><h1>{r.target}</h1>")})
        self.hits = self.view(lambda r: (r.host, r.method, r.target))

    def url(self, name: str = "", host: str = "127.0.0.1") -> str:
        """The address of the page hostile_exit_<name>.html."""
        return super().url(f"page/{name}", host)

    def other_url(self, path: str) -> str:
        return f"http://{OTHER}:{self.port}{path}"

    def other(self) -> list[str]:
        """What reached the other site: "METHOD /path"."""
        return [f"{m} {p}" for h, m, p in self.hits if h.split(":")[0] == OTHER and p != "/favicon.ico"]

    def _page(self, request: Request) -> Reply:
        page = FIXTURES / f"hostile_exit_{request.path.removeprefix('/page/')}.html"
        return Reply(page.read_text().replace("{OTHER}", self.other_url("")))

    def _big(self) -> Iterator[bytes]:
        """Streamed, no length: only the bytes received tell its size (stopped when the browser hangs up)."""
        while self.big_sent < BIG:
            yield b"x" * 100_000
            self.big_sent += 100_000
            time.sleep(0.02)


def _attachment(body: bytes | Iterator[bytes], name: str) -> Reply:
    return Reply(body, content_type="application/octet-stream",
                 headers={"Content-Disposition": f"attachment; filename={name}"})


@pytest.fixture
def rec():
    with Recorder() as r:
        yield r


QUICK = {"type": "any_change", "timeout_ms": 300}  # a held exit changes nothing on the page: no need to wait 3 s


def _click(name: str, role: str = "button", **kw) -> dict:
    return {"action": "click", "target": {"role": role, "name": name}, "optional": True, "expect": QUICK, **kw}


async def _close_others(tab) -> None:
    b = tab.browser
    for t in list(b.tabs):
        if t is not tab:
            await t.close()
    if tab in b.tabs:
        await b.switch_to(b.index_of(tab))


# -- leaving the site -----------------------------------------------------------------------------------
def test_script_and_redirect_exits_are_refused_where_no_person_is_present(harness, rec):
    """auto-safe, AutoApprove (no person): each way out fails the step with BLOCKED, in one line, the page
    stays, and the other site receives nothing — except the link the step itself was approved for."""
    steps = [_click("Read more", "link"), _click("Continue"), _click("Account settings", "link"),
             _click("Save card"), _click("Show details"), {"action": "wait", "ms": 600},
             _click("Show summary"), _click("Open receipt"), _click("Same site page", "link"),
             _click("Partner site", "link"), {"action": "finish"}]

    async def go(tab):
        tab.stability = FAST
        gate = AutoApprove()
        loop = AgentLoop(tab, ScriptedPlanner(steps), gate=gate, policy="auto-safe", screenshots=False)
        res = await loop.run("look at the account")
        return res, gate, loop.page.url, len(tab.browser.tabs)

    res, gate, url_after, tabs = harness.page(rec.url("script"), go)
    s = res.steps
    assert res.status == "success", res.reason
    for i, path in ((0, "/via-link"), (1, "/via-div"), (2, "/redirected"), (3, "/collect"), (7, "/popup")):
        r = s[i].result
        assert s[i].status == "failed" and r.error_code == ErrorCode.BLOCKED, (i, r.message)
        assert r.message.startswith(f"BLOCKED: the page tried to leave 127.0.0.1 for {OTHER}"), r.message
        assert path in r.message and "no person is watching to approve it" in r.message and "\n" not in r.message
        assert s[i].url_after.startswith(f"http://127.0.0.1:{rec.port}/page/script"), s[i].url_after
        assert s[i].incidents.exits[0].to_site == OTHER and not s[i].incidents.exits[0].allowed
        # the refusal ended the step: its verification did not wait out its window for an outcome
        assert "Not waited for any longer: the browser refused" in r.verification.feedback, r.verification
    assert "with a POST" in s[3].result.message
    # the timer fires after the click: held wherever it lands (in the click's step or the wait after it)
    late = [x for st in s[4:6] if st.incidents for x in st.incidents.exits]
    assert [x.url.endswith("/later") and not x.allowed for x in late] == [True], late
    # ordinary steps on the site are not held, and the approved link leaves (asked as sensitive: not again)
    assert s[6].status == "completed" and s[8].status == "completed", (s[6].result.message, s[8].result.message)
    # the popup whose page was refused is closed, never followed
    assert not s[7].incidents.switched_to and s[7].tab.index == 0 and tabs == 1
    assert s[9].status == "completed" and not (s[9].incidents and s[9].incidents.exits)
    assert any("leaves 127.0.0.1 for evil.localhost" in r for r in gate.requests[-1].sensitive_reasons)
    assert rec.other() == ["GET /approved"], rec.other()
    assert (f"127.0.0.1:{rec.port}", "GET", "/go-away") in rec.hits    # the same-site hop did go
    assert url_after == f"http://{OTHER}:{rec.port}/approved"
    assert any("tried 6 time(s) to leave the site" in x for x in res.incidents), res.incidents


def test_a_person_is_asked_about_a_script_exit_and_decides(harness, rec):
    """A person present: the exit is put to them (its reason says the page is leaving, not the step);
    refused, nothing arrives, the step fails BLOCKED with their words, and the page's next try for that
    site in the same run is refused without asking again; let through (another run), it arrives. Under
    `ask` too: the person approved the click, not the script's destination."""
    asked = []

    def person(answer):
        def decide(request):
            if any("the page is leaving" in r for r in request.sensitive_reasons):
                asked.append(request)
                return answer
            return Decision.approve()
        return CallbackGate(decide)

    async def go(tab):
        tab.stability = FAST
        no = await AgentLoop(tab, ScriptedPlanner([_click("Read more", "link"), _click("Continue"),
                                                   {"action": "finish"}]),
                             gate=person(Decision(kind="reject", reason="stay here")), policy="ask",
                             screenshots=False).run("look")
        before = list(rec.other())
        yes = await AgentLoop(tab, ScriptedPlanner([_click("Continue"), {"action": "finish"}]),
                              gate=person(Decision.approve()), policy="ask", screenshots=False).run("look")
        return no, before, yes

    no, before, yes = harness.page(rec.url("script"), go)
    assert no.status == "success" and yes.status == "success", (no.reason, yes.reason)
    assert [r.sensitive_reasons for r in asked] == [
        [f"the page is leaving 127.0.0.1 for {OTHER} (a script or redirect, not the approved step)"]] * 2
    assert asked[0].proposal.action.url.endswith("/via-link") and asked[0].summary.startswith("The page is going to")
    first, again = no.steps[0], no.steps[1]
    assert first.result.error_code == ErrorCode.BLOCKED and "the person said no: stay here" in first.result.message
    assert again.result.error_code == ErrorCode.BLOCKED and "refused earlier in this run" in again.result.message
    assert before == [], before
    assert yes.steps[0].status == "completed" and yes.steps[0].incidents.exits[0].allowed
    assert "let through by the person" in yes.steps[0].result.message
    assert rec.other() == ["GET /via-div"], rec.other()


def test_under_auto_nothing_is_held_and_a_meta_refresh_under_auto_safe_is(harness, rec):
    async def free(tab):
        tab.stability = FAST
        return await AgentLoop(tab, ScriptedPlanner([_click("Continue"), {"action": "finish"}]), gate=AutoApprove(),
                               policy="auto", screenshots=False).run("go")

    res = harness.page(rec.url("script"), free)
    assert res.steps[0].status == "completed" and rec.other() == ["GET /via-div"], rec.other()

    async def refresh(tab):
        tab.stability = FAST
        res = await AgentLoop(tab, ScriptedPlanner([{"action": "wait", "ms": 1800}, {"action": "finish"}]),
                              gate=AutoApprove(), policy="auto-safe", screenshots=False).run("wait")
        return res, tab.url

    res, url = harness.page(rec.url("refresh"), refresh)
    exits = [x for st in res.steps if st.incidents for x in st.incidents.exits]
    assert exits and exits[0].url.endswith("/refresh") and not exits[0].allowed, exits
    assert rec.other() == ["GET /via-div"] and url.endswith("/page/refresh"), (rec.other(), url)


def test_a_step_on_a_standing_grant_is_held_and_back_returns_where_the_run_was(harness, rec):
    """A click run on a person's standing grant was seen by no one: its script exit is asked (the only
    question). `back` to a site the run already went to is not held (no person needed)."""
    def person(request):
        return Decision(kind="reject", reason="not there")

    async def granted(tab):
        tab.stability = FAST
        gate = CallbackGate(person)
        loop = AgentLoop(tab, ScriptedPlanner([_click("Continue"), {"action": "finish"}]), gate=gate, policy="ask",
                         screenshots=False)
        loop.grants = lambda action, url: "clicks on 127.0.0.1" if action.name == "click" else None
        return await loop.run("go"), gate

    res, gate = harness.page(rec.url("script"), granted)
    assert [r.sensitive_reasons[0].startswith("the page is leaving") for r in gate.requests[:1]] == [True]
    assert res.steps[0].result.error_code == ErrorCode.BLOCKED and rec.other() == []
    assert res.steps[0].decision.reason == "a standing grant of the person: clicks on 127.0.0.1"

    third = f"http://third.localhost:{rec.port}/third"
    steps = [{"action": "navigate", "url": f"http://{OTHER}:{rec.port}/first"}, {"action": "navigate", "url": third},
             {"action": "back"}, {"action": "finish"}]

    async def back(tab):
        tab.stability = FAST
        res = await AgentLoop(tab, ScriptedPlanner(steps), gate=AutoApprove(), policy="auto-safe",
                              screenshots=False).run("go")
        return res, tab.url

    res, url = harness.page(rec.url("script"), back)
    assert res.status == "success" and [s.status for s in res.steps] == ["completed"] * 4, res.reason
    assert url.endswith("/first") and rec.other()[:1] == ["GET /first"], (url, rec.other())  # (back: maybe cached)


def test_while_a_person_decides_a_step_only_their_own_input_lets_the_page_leave(harness, rec):
    """The loop waits at the gate for the person. The page leaving on its own then (a meta refresh while they
    read the question) is held and asked like any exit — refused here, so the other site gets nothing; but
    when the person has just pressed something in the page themselves (through the window: they may be
    taking over to sign in elsewhere), the page is theirs and the exit is let through and reported."""
    from engine.browser.screencast import InputForwarder

    def run(press: bool):
        async def go(tab):
            tab.stability = FAST
            asked = []

            async def slow_person(request):
                asked.append(request)
                if (request.proposal.details or {}).get("held"):
                    return Decision(kind="reject", reason="stay on this site")
                if press and len(asked) == 1:  # the person clicks into the page while the step is asked
                    fwd = InputForwarder(tab)
                    await fwd.mouse("down", 30, 300)
                    await fwd.mouse("up", 30, 300)
                # the page's meta refresh (1 s) fires while the step waits here: until it was held and refused,
                # or let through and arrived at the other site (at most 4 s)
                await _until(lambda: rec.other() if press else any(
                    (r.proposal.details or {}).get("held") for r in asked), 4.0)
                return Decision.approve()

            res = await AgentLoop(tab, ScriptedPlanner([{"action": "wait", "ms": 10}, {"action": "finish"}]),
                                  gate=CallbackGate(slow_person), policy="ask", screenshots=False).run("wait")
            return res, asked
        return harness.page(rec.url("refresh"), go)

    res, asked = run(press=False)
    held = [r for r in asked if (r.proposal.details or {}).get("held")]
    assert held and "is leaving" in held[0].sensitive_reasons[0], [r.summary for r in asked]
    exits = [x for st in res.steps if st.incidents for x in st.incidents.exits]
    assert exits and not exits[0].allowed and "stay on this site" in (exits[0].reason or ""), exits
    assert rec.other() == [], "a page leaving on its own while the person reads the question is held"

    res, asked = run(press=True)
    assert res.status == "success" and len(asked) == 2, [r.summary for r in asked]   # the two steps, nothing else
    exits = res.steps[0].incidents.exits
    assert exits and exits[0].allowed and "while a step waited for the person" in exits[0].reason, exits
    assert rec.other() == ["GET /refresh"], rec.other()


async def _until(done, timeout: float) -> None:
    end = time.monotonic() + timeout
    while not done() and time.monotonic() < end:
        await asyncio.sleep(0.05)


# -- downloads --------------------------------------------------------------------------------------------
def test_downloads_are_held_limited_and_only_saved_ones_reported(harness, rec, tmp_path):
    """auto-safe, no person: a button that downloads (not a download link) is refused and nothing kept; a
    download link (approved as sensitive) past the size limit is stopped while it streams; a small one is
    saved and the browser's own temporary copy removed."""
    steps = [_click("Show totals"), _click("Full export", "link"), _click("Small export", "link"),
             {"action": "finish"}]
    copies = []

    async def go(tab):
        tab.stability = FAST
        b = tab.browser
        keeper_limit, b.downloads.limit, b.downloads.folder = b.downloads.limit, LIMIT, tmp_path / "dl"
        tab.target.page.on("download", lambda d: copies.append(d))
        try:
            res = await AgentLoop(tab, ScriptedPlanner(steps), gate=AutoApprove(), policy="auto-safe",
                                  screenshots=False).run("export")
            temp = []
            for d in copies:  # where the browser kept its own copy (an error once it is deleted or cancelled)
                try:
                    temp.append(Path(await d.path()))
                except Exception as exc:
                    temp.append(str(exc).splitlines()[0])
            return res, temp
        finally:
            b.downloads.limit, b.downloads.folder = keeper_limit, None

    res, temp = harness.page(rec.url("downloads"), go)
    refused, big, small = (st.incidents.downloads[0] for st in res.steps[:3])
    assert refused.status == "refused" and refused.path == "" and "no person is watching" in refused.error
    said = res.steps[0].result
    assert said.error_code == ErrorCode.BLOCKED and said.message.startswith("BLOCKED: download of totals.bin refused")
    assert big.status == "over_limit" and big.path == "" and rec.big_sent < BIG, (big, rec.big_sent)
    assert "download of big.bin stopped at 1 MB (the limit)" in res.steps[1].result.message
    assert small.saved and Path(small.path).read_bytes() == b"0123456789" * 100
    assert sorted(p.name for p in (tmp_path / "dl").iterdir()) == ["totals.bin"]   # only the saved one
    assert "downloaded totals.bin" in res.steps[2].result.message
    assert not any("downloaded big.bin" in st.result.message or "to ;" in st.result.message for st in res.steps[:3])
    # the browser's own copies (Playwright's) are gone, the saved one's too
    assert len(temp) == 3 and not any(isinstance(t, Path) and t.exists() for t in temp), temp


def test_a_download_that_begins_after_the_run_ended_is_refused_not_saved(harness, rec, tmp_path):
    """auto-safe, no person: the click's page says "Preparing" at once and downloads a second later, when the
    run has already finished. Nobody approved that download: the run's hold still decides it, and refuses it
    (before, it began with no hold in place and was saved unasked)."""
    steps = [_click("Prepare totals", expect={"type": "element_appears", "text": "Preparing"}), {"action": "finish"}]

    async def go(tab):
        tab.stability = FAST
        b = tab.browser
        b.downloads.folder = tmp_path / "dl"
        start = len(b.downloads.items)
        try:
            res = await AgentLoop(tab, ScriptedPlanner(steps), gate=AutoApprove(), policy="auto-safe",
                                  screenshots=False).run("prepare the totals")
            deadline = time.monotonic() + 8  # the page downloads a second after the click
            while time.monotonic() < deadline and not any(
                    x.status != "saving" for x in b.downloads.items[start:]):
                await asyncio.sleep(0.1)
            await b.downloads.settle(5)
            return res, [x.model_copy() for x in b.downloads.items[start:]]
        finally:
            b.downloads.folder = None

    res, items = harness.page(rec.url("late_download"), go)
    assert res.status == "success" and res.steps[0].status == "completed", res.reason
    assert not any(st.incidents and st.incidents.downloads for st in res.steps), "it began after the run"
    assert [x.status for x in items] == ["refused"], items
    assert "the run had ended before the download reached Vigil" in items[0].error
    assert not (tmp_path / "dl").exists() or not list((tmp_path / "dl").iterdir())
    assert any(p == "/file.bin" for _h, _m, p in rec.hits), "the page did start the download"


def test_the_download_limit_is_stated_and_configurable(monkeypatch):
    monkeypatch.delenv(LIMIT_ENV, raising=False)
    assert limit_from_env() == 100_000_000 and DownloadKeeper().limit == 100_000_000
    monkeypatch.setenv(LIMIT_ENV, "2.5")
    assert DownloadKeeper().limit == 2_500_000 and DownloadKeeper(limit_mb=7).limit == 7_000_000
    monkeypatch.setenv(LIMIT_ENV, "0")
    assert DownloadKeeper().limit is None
    # a download that never got saved is never said as downloaded
    assert DownloadInfo(name="same.bin").describe() == "download of same.bin not finished when the step ended " \
                                                       "(not saved yet)"


# -- popup floods -----------------------------------------------------------------------------------------
def test_a_popup_flood_ends_at_the_limit_stays_ended_and_is_never_followed(harness, server):
    async def go(tab):
        tab.stability = FAST
        loop = AgentLoop(tab, ScriptedPlanner([_click("Claim prize"), _click("Claim again"),
                                               {"action": "finish"}]),
                         gate=AutoApprove(), policy="auto", screenshots=False)
        try:
            res = await loop.run("claim")
            await tab.browser.settle_new_tabs()
            return res, loop.page is tab, len(tab.browser.tabs)
        finally:
            await _close_others(tab)

    res, stayed, tabs = harness.page(server.url("hostile_exit_flood.html"), go)
    first, second = res.steps[0], res.steps[1]
    assert first.status == "failed" and "popup flood" in first.note and first.result.error_code is None
    assert len(first.incidents.tabs_opened) == 10 and first.incidents.popups_blocked == 190
    assert first.incidents.switched_to is None and stayed and second.tab.index == 0
    # the same page's next popups are closed at once: no new tab is left open
    assert second.incidents.popups_blocked == 5 and not second.incidents.tabs_opened, (second.incidents, res.incidents)
    assert tabs == 11


# -- through `vigil mcp` ------------------------------------------------------------------------------------
def test_vigil_mcp_with_no_person_refuses_a_script_exit_and_a_download_in_one_line(rec, tmp_path):
    """`vigil mcp --approve auto-safe` with nobody watching: the click runs (nothing in the DOM says it
    leaves), the page's exit is held and refused, and the tool result says so in one line."""
    from support.mcp_server import McpServerProcess, items_of, ref

    mcp = McpServerProcess("--approve", "auto-safe", home=tmp_path / "home")
    try:
        items = items_of(mcp.call("browser_navigate", {"url": rec.url("script")}))
        out = mcp.call("browser_click", {"ref": ref(items, "Continue")})
        assert out.is_error and re.match(r"click\(\d+\) — FAILED \(BLOCKED\)", out.text), out.text
        line = next(x for x in out.text.splitlines() if x.startswith("result: BLOCKED: "))  # fenced: quotes the page
        assert f"the page tried to leave 127.0.0.1 for {OTHER}" in line, out.text
        assert "no person is watching to approve it" in line and "navigate there as a step of its own" in line
        items = items_of(mcp.call("browser_navigate", {"url": rec.url("downloads")}))
        got = mcp.call("browser_click", {"ref": ref(items, "Show totals")})
        assert got.is_error and "download of totals.bin refused" in got.text, got.text
    finally:
        mcp.close()
    assert rec.other() == [], rec.other()
