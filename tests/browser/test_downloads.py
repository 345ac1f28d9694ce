"""Downloads on real Chromium: saved into the session's own folder under the store's directory,
reported in the step (name, size, MIME type, path), listed and linked in the HTML report; a download
link is a sensitive step under auto-safe; an unrecorded run says the temporary folder it used."""

from __future__ import annotations

from pathlib import Path

from engine.loop import AgentLoop, AutoApprove, ScriptedPlanner
from engine.store import Store
from engine.store.recorder import SessionRecorder
from engine.store.report import export_html

from support.page_helpers import FAST
from support.paths import FIXTURES

STEPS = [{"action": "click", "target": {"role": "link", "name": "Download invoice"}}, {"action": "finish"}]
CONTENT = FIXTURES / "downloads_invoice.csv"


def test_a_download_is_saved_in_the_sessions_folder_reported_and_linked_in_the_report(harness, server, tmp_path):
    store = Store.open(tmp_path / "sessions.db")

    async def go(tab):
        tab.stability = FAST
        gate = AutoApprove()
        loop = AgentLoop(tab, ScriptedPlanner(STEPS), gate=gate, policy="auto-safe", screenshots=False)
        rec = SessionRecorder(store)
        sid = rec.start(loop, "download the invoice", tab.url, planner="script", policy="auto-safe")
        res = await loop.run("download the invoice")
        rec.finish(res)
        return sid, res, gate

    sid, res, gate = harness.page(server.url("downloads_page.html"), go)
    try:
        assert res.status == "success", res.reason
        assert len(gate.requests) == 1 and any("downloads a file" in r for r in gate.requests[0].sensitive_reasons)
        step = res.steps[0]
        d = step.incidents.downloads[0]
        folder = tmp_path / "downloads" / sid
        assert d.name == "invoice-2026-11.csv" and d.mime == "text/csv" and d.size == CONTENT.stat().st_size
        assert Path(d.path).parent == folder and Path(d.path).read_bytes() == CONTENT.read_bytes()
        assert "downloaded invoice-2026-11.csv" in step.result.message and step.verification.success
        stored = store.load(sid).steps[0]
        assert stored.incidents.downloads[0].path == d.path      # listed with the session
        html = export_html(store, sid)
        assert 'id="downloads"' in html and "invoice-2026-11.csv" in html and Path(d.path).as_uri() in html
    finally:
        store.close()


def test_an_unrecorded_run_saves_into_a_temporary_folder_it_names(harness, server):
    async def go(tab):
        tab.stability = FAST
        res = await AgentLoop(tab, ScriptedPlanner(STEPS), gate=AutoApprove(), policy="auto",
                              screenshots=False).run("download")
        return res, tab.browser.downloads.folder

    res, folder = harness.page(server.url("downloads_page.html"), go)
    d = res.steps[0].incidents.downloads[0]
    assert folder is None and Path(d.path).exists() and Path(d.path).parent.name.startswith("vigil-downloads-")
    assert d.path in res.steps[0].result.message and "1 file(s) downloaded" in res.incidents


def test_a_download_link_is_known_by_its_attribute_not_only_by_its_address(harness, server):
    """`<a download href="export?id=3">` has no file extension: the snapshot keeps its download
    attribute, so the step asks under auto-safe; the same address without it is an ordinary link."""
    from engine.loop.policy import sensitive_reasons
    from engine.models import Action

    async def go(tab):
        snap = await tab.snapshot()
        out = {}
        for name in ("Export report", "View report"):
            node = snap.find("link", name)[0]
            out[name] = (node.attrs or {}).get("download"), sensitive_reasons(
                Action(name="click", target=node.node_id), node, snap, start_domain="127.0.0.1")
        return out

    out = harness.page(server.url("downloads_attr.html"), go)
    kept, reasons = out["Export report"]
    assert kept == "" and any("downloads a file" in r for r in reasons), out
    assert out["View report"][0] is None and not any("download" in r for r in out["View report"][1]), out
