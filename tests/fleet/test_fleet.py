"""Fleets on real Chromium (engine.fleet): one approval queue answered in another order than asked, per-run
overrides, fleet-wide grants, stop, cookies apart between runs' browser contexts; and runs spread over remote
endpoints the test starts (`chromium --remote-debugging-port=0`), one unreachable and one killed halfway."""

from __future__ import annotations

import asyncio
import signal
import time

import pytest

from engine.bench.fleet import start_remote_chromium, stop_process
from engine.bench.fleet_site import DemoSite
from engine.fleet import Fleet, QueueError, load_fleet
from engine.store import Store


def script(name: str, *, pause_ms: int = 0, city: bool = True) -> list[dict]:
    steps: list[dict] = [
        {"action": "type", "target": {"role": "textbox", "name": "Full name"}, "text": f"Ada {name}"},
        *([{"action": "type", "target": {"role": "textbox", "name": "City"}, "text": "Lyon"}] if city else []),
        {"action": "click", "target": {"role": "button", "name": "Save entry"},
         "expect": {"type": "element_appears", "text": f"Saved {name}"}},
    ]
    if pause_ms:
        steps.append({"action": "wait", "ms": pause_ms})
    return steps + [{"action": "click", "target": {"role": "link", "name": "Continue"}, "expect": "navigation"},
                    {"action": "finish", "answer": f"entered {name}"}]


def fleet_data(site: DemoSite, names: list[str], **per_run: dict) -> dict:
    return {"name": "test fleet", "runs": [{"name": n, "task": f"Fill in {n}", "url": site.url(n), "script": script(n),
                                            **per_run.get(n, {})} for n in names]}


def test_one_queue_answered_out_of_order_with_grants_stop_and_cookies_apart(tmp_path, harness):
    with DemoSite() as site:
        spec = load_fleet(fleet_data(site, ["r1", "r2", "r3", "r4"], r4={"approve": "auto"}))
        store = Store.open(tmp_path / "vigil.db")
        # the runs' contexts open in the suite's Chromium (as the window passes its own); it stays open
        fleet = Fleet(spec, parallel=4, approve="ask", store=store, browser=harness.browser)
        heard: list[tuple[str, int, bool]] = []   # (kind, entry id, waiting when heard)
        states: dict[str, set[str]] = {r.name: set() for r in fleet.runs}
        answered: list[int] = []
        fleet.queue.subscribe(lambda ch: heard.append((ch.kind, ch.entry.id, ch.entry.waiting)))
        fleet.subscribe(lambda ch: states[ch.run.name].add(ch.run.state) if ch.kind == "run" and ch.run else None)

        async def person() -> None:
            q = fleet.queue
            while len(q.waiting) < 3:  # every asking run's first step (r4 runs under auto: never asks)
                await q.next_waiting(after=max((e.id for e in q.waiting), default=0))
            first = q.waiting
            assert [e.id for e in first] == sorted(e.id for e in first)  # in the order asked
            assert {e.run for e in first} == {"r1", "r2", "r3"} and all(e.request.step_index == 0 for e in first)
            for e in reversed(first):          # answered newest first: not the order asked
                assert q.mark_shown(e.id) is not None
                q.approve(e.id)
                answered.append(e.id)
            with pytest.raises(QueueError):
                q.approve(first[0].id)         # an answered question cannot be answered again
            g = fleet.grants.add("type", site.base)   # typing on this site, for every run of the fleet
            assert g.kind == "type"
            while True:
                e = await q.next_waiting()
                q.mark_shown(e.id)
                action = e.request.proposal.action
                assert action.name != "type", f"a granted step was asked: {e.describe()}"
                if e.run == "r3":
                    fleet.stop("r3", "not needed today")
                elif e.run == "r2" and action.name == "click":
                    q.reject(e.id, "this one is wrong")
                elif e.run == "r2":
                    q.approve(e.id)            # its fail() proposal: approving ends the run
                else:
                    if action.name == "click" and fleet.run_named("r4").state != "done":
                        await asyncio.sleep(0.05)   # r4 (auto) saves its cookie first, in another context
                        while fleet.run_named("r4").state != "done":
                            await asyncio.sleep(0.05)
                    q.approve(e.id)
                answered.append(e.id)

        async def go():
            answering = asyncio.ensure_future(person())
            try:
                return await asyncio.wait_for(fleet.run(), 60)
            finally:
                answering.cancel()
                if answering.done() and not answering.cancelled() and answering.exception():
                    raise answering.exception()

        result = harness.run(go(), timeout=90)

        async def contexts() -> int:
            return len(harness.browser.pw_browser.contexts)
        assert harness.run(contexts()) == 1  # the runs' contexts are closed; the suite's own stays
        runs = {r.name: r for r in result.runs}
        assert runs["r1"].state == "done" and runs["r1"].answer == "entered r1", runs["r1"]
        assert runs["r4"].state == "done", runs["r4"]
        assert runs["r2"].state == "failed" and "this one is wrong" in runs["r2"].reason, runs["r2"]
        assert runs["r3"].state == "stopped" and runs["r3"].reason == "not needed today", runs["r3"]
        assert not result.ok and result.exit_code == 1
        assert "waiting" in states["r1"] and "running" in states["r1"] and "waiting" not in states["r4"]
        # the queue told each question as it was asked, while it waited; answered in another order than asked
        asked = [i for kind, i, waiting in heard if kind == "asked" and waiting]
        assert asked == sorted(asked) and answered[:3] == sorted(answered[:3], reverse=True)
        hist = fleet.queue.history
        assert all(e.asked_at <= (e.answered_at or e.asked_at) for e in hist)
        assert all(e.shown_after_ms is not None and e.shown_after_ms >= 0 for e in hist if e.shown_at)
        # the grant approved r1's second typing step without asking, and says so in its record
        rec = store.load(runs["r1"].session_id)
        assert rec.session.metadata.get("fleet") == fleet.id
        typed_city = [s for s in rec.steps if s.action is not None and s.action.name == "type" and s.index == 1]
        assert typed_city and "grant" in (typed_city[0].decision.reason or ""), typed_city
        # cookies apart: r4 saved before r1 in the same Chromium, yet r1's pages carry only its own cookie
        assert site.cookies_at("/done", "r4") == ["saved=r4"]
        assert site.cookies_at("/done", "r1") == ["saved=r1"]
        assert all(c == "" for r in ("r1", "r2", "r3", "r4") for c in site.cookies_at("/form", r))
        from engine.store.fleets import FleetBook
        stored = {r.name: r for r in FleetBook(store).load(fleet.id).runs}
        assert {n: r.status for n, r in stored.items()} == {"r1": "done", "r2": "failed", "r3": "stopped", "r4": "done"}
        store.close()


def test_runs_over_remote_endpoints_one_unreachable_one_killed_halfway(tmp_path):
    a, url_a = start_remote_chromium(tmp_path / "a")
    b, url_b = start_remote_chromium(tmp_path / "b")
    dead = "http://127.0.0.1:9"  # nothing listens there
    try:
        with DemoSite() as site:
            names = ["r1", "r2", "r3", "r4"]
            data = fleet_data(site, names)
            for r in data["runs"]:
                r["script"] = script(r["name"], pause_ms=400, city=False)
            fleet = Fleet(load_fleet(data), parallel=2, approve="auto", browsers=[dead, url_a, url_b])
            killed: dict[str, float] = {}

            def watch(ch) -> None:
                r = ch.run
                # halfway: after a run elsewhere is done, and while this one has its wait, Continue and finish
                # still to do (killed at its last step, it would end done: the kill must find work under way)
                if (ch.kind == "run" and r is not None and r.browser == url_b and r.state == "running"
                        and 1 <= r.steps <= 2 and not killed and any(x.state == "done" for x in fleet.runs)):
                    killed["at"] = time.monotonic()
                    stop_process(b, signal.SIGKILL)

            fleet.subscribe(watch)
            result = asyncio.run(asyncio.wait_for(fleet.run(), 90))
            runs = result.runs
            assert killed, [(r.name, r.state, r.browser) for r in runs]
            assert all(r.finished for r in runs), [(r.name, r.state) for r in runs]   # every run accounted for
            failed = [r for r in runs if r.state == "failed"]
            assert failed and all(url_b in (r.reason or "") for r in failed), [(r.name, r.reason) for r in failed]
            assert len(failed) <= 2  # only what was under way on the killed browser (at most --parallel)
            assert all(r.browser in (url_a, url_b) for r in runs)   # nothing ran on the unreachable one
            assert sum(r.state == "done" for r in runs) == len(runs) - len(failed)
            assert any(r.browser == url_a and r.state == "done" and (r.started_at or 0) > 0 for r in runs)
            ends = {e.label: e.dead for e in fleet.pool.endpoints}
            assert ends[dead] and ends[url_b] and ends[url_a] is None, ends
            # contexts apart on a shared remote browser: each run's last page carried only its own cookie
            for r in runs:
                if r.state == "done":
                    assert site.cookies_at("/done", r.name) == [f"saved={r.name}"], r.name
    finally:
        stop_process(a)
        stop_process(b, signal.SIGKILL)
