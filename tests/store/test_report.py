"""The run report export: a real recorded run on a page whose title and text look like markup, exported
to HTML and JSON; the HTML shows every page and model string as text, holds no script and no
external reference, inlines decodable pictures, and does nothing when a real browser opens it."""

from __future__ import annotations

import base64
import errno
import hashlib
import html
import io
import json
import os
import re

import pytest
from PIL import Image

from engine.errors import VigilError
from engine.models import Action, ActionResult, Decision, Plan, ProposedStep, StepRecord
from engine.store import Store
from engine.store.report import CSP, TRACE_FORMAT, export_html, export_json, write_export

from support.recording_helpers import record_scripted

TITLE = '<b>Sale</b> & "quotes" <script>alert(1)</script>'    # the page's <title>
BUTTON = "<img src=x onerror=alert(2)>"                       # a button's name
PAGE_TEXT = "</div><script>window.pwned=1</script>"           # text the click puts on the page
TYPED = "<img src=y onerror=window.pwned=2>"                  # what the script types
TASK = "Buy the <b>thing</b> & <script>alert(5)</script>"
ANSWER = "Done </div><script>alert(4)</script>"


@pytest.fixture(scope="module")
def recorded(server, harness, tmp_path_factory):
    """(store, session id): a real run recorded by SessionRecorder on report_markup.html."""
    home = tmp_path_factory.mktemp("vigil-home")
    mp = pytest.MonkeyPatch()
    mp.setenv("VIGIL_HOME", str(home))
    store = Store.open()
    steps = [{"action": "type", "target": {"role": "textbox", "name": "Note <u>here</u>"}, "text": TYPED,
              "thought": "Type <b>markup</b> into the note"},
             {"action": "click", "target": {"role": "button", "name": BUTTON},
              "expect": {"type": "element_appears", "text": "Bought"}},
             {"action": "finish", "answer": ANSWER}]
    sid = record_scripted(harness, store, server.url("report_markup.html"), steps, TASK)
    yield store, sid
    store.close()
    mp.undo()


def test_markup_from_page_and_model_is_shown_as_text(recorded):
    store, sid = recorded
    doc = export_html(store, sid)
    for s in (TITLE, BUTTON, PAGE_TEXT, TYPED, TASK, ANSWER, "Note <u>here</u>"):
        assert html.escape(s, quote=True) in doc, s
    assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in doc
    assert "<script" not in doc.lower() and "</script" not in doc.lower()
    assert not re.search(r"<[^>]*\son\w+\s*=", doc, re.I)               # no event-handler attribute anywhere
    assert f'<meta http-equiv="Content-Security-Policy" content="{CSP}">' in doc
    assert CSP == "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
    # the only references are the inline pictures and in-page anchors: nothing to fetch
    refs = re.findall(r'\s(?:src|href|action|srcset|poster)\s*=\s*"([^"]*)"', doc, re.I)
    assert refs and all(r.startswith(("data:image/jpeg;base64,", "#")) for r in refs)
    assert 'src="http' not in doc and 'href="http' not in doc and "url(" not in doc
    # the report has what a colleague needs
    for needle in ("Task:", "Plan", "Conversation", "Step 1", "Step 2", "Step 3", "Auto-approved (policy auto)",
                   "<code>click(", "element appears &quot;Bought&quot;",
                   "Recent page events", "Verification", "Title before", "scripted"):
        assert needle in doc, needle


def test_pictures_are_inline_jpegs_with_marks(recorded):
    store, sid = recorded
    doc = export_html(store, sid)
    images = re.findall(r'<img src="data:image/jpeg;base64,([A-Za-z0-9+/=]+)"', doc)
    assert len(images) == 4  # before and after of the two steps that acted; finish has none
    for b64 in images:
        img = Image.open(io.BytesIO(base64.b64decode(b64)))
        img.load()
        assert img.format == "JPEG" and img.width > 300 and img.height > 200
    assert "ringed: [" in doc and "elements marked" in doc


def test_json_trace(recorded, tmp_path):
    store, sid = recorded
    data = store.load(sid)
    [path] = write_export(store, sid, json_path=tmp_path / "trace.json")
    trace = json.loads(path.read_text(encoding="utf-8"))
    assert trace == json.loads(json.dumps(export_json(store, sid))) | {"exported_at": trace["exported_at"]}
    assert trace["format"] == TRACE_FORMAT and trace["session"]["id"] == sid
    assert trace["session"]["task"] == TASK and trace["session"]["answer"] == ANSWER  # raw text: JSON is data
    assert [m["content"] for m in trace["messages"]][0] == TASK
    assert trace["plans"] and trace["plan"]["steps"][1]["description"].startswith("Click button")
    assert len(trace["steps"]) == 3
    for step, rec in zip(trace["steps"], data.steps, strict=True):
        assert StepRecord.model_validate(step) == rec
        assert step["blobs"] == data.blobs.get(rec.index, {})
        for role, sha in step["blobs"].items():  # references to stored bytes, not the bytes
            if role.startswith("snapshot"):
                assert hashlib.sha256(store.get_blob(sha)).hexdigest() == sha
            else:  # a picture is named by the JPEG taken, and kept as WebP (schema 7)
                assert Image.open(io.BytesIO(store.get_blob(sha))).size[0] > 300
    assert trace["steps"][1]["events"] and "/9j/" not in path.read_text()  # no inline JPEG in the trace
    assert any(PAGE_TEXT in e["text"] for e in trace["steps"][1]["events"])


def test_exported_report_is_inert_in_a_real_browser(recorded, harness, tmp_path):
    store, sid = recorded
    html_path, json_path = write_export(store, sid, html_path=tmp_path / "report.html",
                                        json_path=tmp_path / "trace.json")
    assert html_path.is_file() and json_path.is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html", "trace.json"]  # no temp files left

    async def check(tab):
        requests: list[str] = []
        tab.page.on("request", lambda r: requests.append(r.url))
        await tab.goto(html_path.as_uri())
        state = await tab.page.evaluate("""() => ({
            pwned: typeof window.pwned, scripts: document.getElementsByTagName('script').length,
            text: document.body.innerText, title: document.title,
            images: [...document.images].map(i => [i.complete, i.naturalWidth]),
            bold: document.querySelectorAll('main b, main i, main u, main svg, main img[onerror]').length})""")
        return state, requests

    state, requests = harness.page("about:blank", check)
    assert state["pwned"] == "undefined" and state["scripts"] == 0 and state["bold"] == 0
    for s in (PAGE_TEXT, TITLE, BUTTON, TYPED, TASK, ANSWER):
        assert s in state["text"], s
    assert state["title"] == f"Vigil report — 127.0.0.1: {TASK}"
    assert len(state["images"]) == 4 and all(done and w > 0 for done, w in state["images"])  # data: images render
    assert all(u.startswith(("file:", "data:")) for u in requests), requests


def _unit_session(store: Store) -> str:
    """A session written directly: an edited, a rejected, a failed and a human step, two plan versions."""
    sid = store.create_session("Pay <the> bill", "https://bank.test/pay", "openai", "ask", {"model": "m<1>"})
    store.save_plan(sid, Plan.from_descriptions(["Open bills"]))
    store.save_plan(sid, Plan.from_descriptions(["Open bills", "Pay <now>"], 1))
    click = Action(name="click", target="12")
    edited = Action(name="click", target="13")
    store.add_step(sid, StepRecord(index=0, proposal=ProposedStep(action=click, thought="t", sensitive=True,
                                                                  sensitive_reason="payment <form>"),
                                   decision=Decision(kind="edit", action=edited), action=edited,
                                   result=ActionResult(success=True, action=edited.to_string())))
    store.add_step(sid, StepRecord(index=1, proposal=ProposedStep(action=click), status="rejected",
                                   decision=Decision(kind="reject", reason="not <that> one")))
    store.add_step(sid, StepRecord(index=2, proposal=ProposedStep(action=click), decision=Decision.approve(),
                                   action=click, status="failed", note="the page <changed>",
                                   result=ActionResult(success=False, action="click(12)", error_code="OCCLUDED",
                                                       message="covered by <div id=overlay>")))
    store.add_step(sid, StepRecord(index=3, actor="human", status="completed"))
    store.finish(sid, "error", reason="gave up: <b>no</b>")
    return sid


def test_decisions_plan_versions_and_failures_render(tmp_path):
    with Store.open(tmp_path / "s.db") as store:
        sid = _unit_session(store)
        doc = export_html(store, sid)
    for needle in ("Edited by the person, then run", "<code>click(13)</code>", "Rejected by the person",
                   "not &lt;that&gt; one", "payment &lt;form&gt;", "OCCLUDED", "covered by &lt;div id=overlay&gt;",
                   "the page &lt;changed&gt;", "The person acted in the page directly", "2 versions",
                   "Pay &lt;now&gt;", "gave up: &lt;b&gt;no&lt;/b&gt;", "m&lt;1&gt;", "No screenshots stored.",
                   "4 (2 not completed)", "nothing ran"):
        assert needle in doc, needle
    assert "<b>no" not in doc and "<that>" not in doc and '<div id=overlay' not in doc


def test_unwritable_paths_are_clear_errors_and_write_nothing(recorded, tmp_path):
    store, sid = recorded
    missing = tmp_path / "no-such-folder" / "report.html"
    with pytest.raises(VigilError) as e:
        write_export(store, sid, html_path=missing)
    assert e.value.code == "BAD_ARGUMENT"
    assert str(missing) in e.value.message and "does not exist" in e.value.message
    assert not missing.parent.exists()

    ok = tmp_path / "report.html"  # one bad path: nothing at all is written
    with pytest.raises(VigilError) as e:
        write_export(store, sid, html_path=ok, json_path=tmp_path / "nope" / "t.json")
    assert "t.json" in e.value.message and not ok.exists()

    with pytest.raises(VigilError) as e:
        write_export(store, sid, html_path=tmp_path)
    assert e.value.code == "BAD_ARGUMENT" and "folder" in e.value.message
    afile = tmp_path / "plain"
    afile.write_text("x")
    with pytest.raises(VigilError) as e:
        write_export(store, sid, json_path=afile / "t.json")
    assert e.value.code == "BAD_ARGUMENT" and str(afile / "t.json") in e.value.message
    with pytest.raises(VigilError) as e:
        write_export(store, sid)
    assert e.value.code == "BAD_ARGUMENT"
    with pytest.raises(VigilError):
        write_export(store, sid, html_path=ok, json_path=ok)


def test_a_failed_write_keeps_the_old_file(recorded, tmp_path, monkeypatch):
    store, sid = recorded
    out = tmp_path / "report.html"
    out.write_text("the previous report")

    def disk_full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)  # the disk fills up while the new report is written
    with pytest.raises(VigilError) as e:
        write_export(store, sid, html_path=out)
    assert e.value.code == "BAD_ARGUMENT" and str(out) in e.value.message and "No space" in e.value.message
    assert out.read_text() == "the previous report"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]  # the temp file is gone
    monkeypatch.undo()
    write_export(store, sid, html_path=out)
    assert out.read_text(encoding="utf-8").startswith("<!doctype html>")
