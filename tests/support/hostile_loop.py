"""The loop side of the hostile corpus: a pattern run through the real loop (AgentLoop + ScriptedPlanner, a
CallbackGate that rejects what it is asked about unless the pattern approves it) on one tab shared by the
patterns, and the checks of what it left behind. Used by tests/acceptance/test_hostile_corpus.py (held under its
policy) and tests/acceptance/test_hostile_unguarded.py (the damage done under `auto`)."""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import zlib
from pathlib import Path

from engine.observe.stability import StabilityConfig

from support import hostile_corpus as hc
from support.hostile_corpus import Pattern

SHARED: dict = {}  # the loop's tab, shared by the patterns (and by the modules that run them)


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


QUICKER = StabilityConfig(dom_quiet_ms=100, network_quiet_ms=120, timeout_ms=600)


class Unanswered:
    """The requests the browser sent (any tab of its context) that have no answer yet: the recording server records a
    request before it answers, so with none left, every request sent so far is in the server's log."""

    def __init__(self, context) -> None:
        self.context, self.open = context, set()
        self._events = {"request": lambda r: self.open.add(r), "response": lambda r: self.open.discard(r.request),
                        "requestfailed": lambda r: self.open.discard(r)}
        for name, fn in self._events.items():
            context.on(name, fn)

    async def settle(self, least: float = 0.05, most: float = 1.0) -> None:
        """Wait `least` seconds (a request the page is starting is reported by then), then until none is left
        unanswered, `most` seconds at most."""
        t0 = asyncio.get_running_loop().time()
        await asyncio.sleep(least)
        while self.open and asyncio.get_running_loop().time() - t0 < most:
            await asyncio.sleep(0.02)

    def close(self) -> None:
        for name, fn in self._events.items():
            self.context.remove_listener(name, fn)


async def run_loop(browser, p: Pattern, servers, work: Path, seen: list | None = None, *,
                   only_script: bool = False) -> list[str]:
    """The pattern through AgentLoop + ScriptedPlanner under its policy; its problems (none: held). `seen`, when
    given, receives every request the server recorded during the run; `only_script`: the run ends after the
    script's own steps, each page given a shorter settle (what arrived is all that is looked at)."""
    from engine.loop import AgentLoop, CallbackGate, ScriptedPlanner
    from engine.models import Decision

    from support.page_helpers import FAST

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
    tab = SHARED.get("tab")
    if tab is not None and tab in browser.tabs:
        await tab.goto(hc.page_url(p, servers))  # one tab for the whole corpus: opening a tab costs more than a page
    else:
        tab = SHARED["tab"] = await browser.new_tab(hc.page_url(p, servers))
    before_tabs = list(browser.tabs)
    earlier_files = set(hc.files_under(getattr(keeper, "_temp", None)))
    mark = log.mark()
    store = None
    sent = Unanswered(browser.context)
    try:
        tab.stability = QUICKER if only_script else FAST
        loop = AgentLoop(tab, ScriptedPlanner(script), gate=CallbackGate(gate), policy=p.policy,
                         max_steps=len(script) if only_script else 6,
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
        await sent.settle()  # a request the last step started reaches the server
        hits = log.since(mark)
        if seen is not None:
            seen.extend(hits)
        hc.ground_truth(p, hits, problems)
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
            elif body[0].body.decode() != hc.HARMLESS or not body[0].path.endswith("real-notes.txt"):
                problems.append(f"the page received {body[0].path} {body[0].body[:40]!r}, not the checked file "
                                "real-notes.txt")
        return problems
    finally:
        sent.close()
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
    from engine.loop import AgentLoop, CallbackGate, ScriptedPlanner
    from engine.models import Decision

    from support.page_helpers import FAST

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
    kept = hc.files_under(folder) + [f for f in hc.files_under(getattr(keeper, "_temp", None)) if f not in earlier]
    if kept:
        problems.append("kept: " + ", ".join(f"{f.name} ({f.stat().st_size} bytes)" for f in kept))
    for s in res.steps:
        msg = s.result.message if s.result else ""
        if re.search(r"downloaded \S+ \(size unknown", msg) or re.search(r" to ;", msg):
            problems.append(f"reports a download that was never saved: {msg[:160]!r}")
