"""Every recorded run opens in Playwright's Trace Viewer: a real run (`vigil run --trace`, real Chromium on a local
shop that asks for a password and a one-time code) writes a trace zip built from the store; `vigil export --html
--trace --playwright` writes the three side by side, the report linking the other two. The zip holds a named group
per step with its call, snapshots and screencast frames, every file it names, the page events as console messages
and the navigation; no password or code is in any of its files, as text or readable in its pictures (OCR); and
Playwright's own viewer (`playwright show-trace`, served, opened in Chromium) lists every step."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
import urllib.parse
import zipfile
from pathlib import Path

import pytest

from engine.browser.discovery import find_chromium
from engine.cli import main as vigil
from engine.local_server import serve_directory
from engine.models import Action, ActionResult, Decision, ProposedStep, StepRecord
from engine.store import Store
from engine.store.report import write_export

from support.ocr import leaks, read_text

PASSWORD = "hunter2-Zq9!"
CODE = "845129"
SHOP = """<!doctype html><html><head><meta charset="utf-8"><title>Trace shop</title>
<style>body, input, button { font: 26px sans-serif } input { width: 9em }</style></head><body>
<h1>Trace shop</h1>
<label for="name">Name</label> <input id="name">
<label for="pw">Password</label> <input id="pw" type="password">
<label for="otp">Code</label> <input id="otp" autocomplete="one-time-code" inputmode="numeric">
<button id="add">Add to cart</button>
<p id="total" role="status"></p>
<a href="done.html">Checkout</a>
<script>document.getElementById('add').addEventListener('click', () => {
  document.getElementById('total').textContent = 'Total: 42.00 EUR'; });</script>
</body></html>"""
DONE = """<!doctype html><html><head><meta charset="utf-8"><title>Done</title></head><body>
<h1>Thank you for your order</h1></body></html>"""
STEPS = [
    {"action": "type", "target": {"role": "textbox", "name": "Name"}, "text": "Ada Lovelace"},
    {"action": "type", "target": {"name": "Password"}, "text": PASSWORD},
    {"action": "type", "target": {"name": "Code"}, "text": CODE},
    {"action": "click", "target": {"role": "button", "name": "Add to cart"}},
    {"action": "click", "target": {"role": "link", "name": "Checkout"}, "expect": {"type": "navigation"}},
    {"action": "finish", "answer": "ordered"},
]
SECRETS = [PASSWORD, CODE]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """(session id, the run's trace zip, the export folder with r.html, t.zip and test_shop.py): one real run."""
    root = tmp_path_factory.mktemp("shop")
    (root / "index.html").write_text(SHOP)
    (root / "done.html").write_text(DONE)
    work = tmp_path_factory.mktemp("trace")
    (work / "steps.json").write_text(json.dumps(STEPS))
    mp = pytest.MonkeyPatch()
    mp.setenv("VIGIL_HOME", str(tmp_path_factory.mktemp("vigil-home")))
    with serve_directory(root) as base:
        assert vigil(["run", f"Order with password {PASSWORD}", "--url", base + "index.html", "--script",
                      str(work / "steps.json"), "--approve", "auto", "--trace", str(work / "run.zip")]) == 0
    with Store.open() as store:
        [row] = store.list_sessions()
    out = work / "export"
    out.mkdir()
    assert vigil(["export", row.id[:8], "--html", str(out / "r.html"), "--trace", str(out / "t.zip"),
                  "--playwright", str(out / "test_shop.py")]) == 0
    yield row.id, work / "run.zip", out
    mp.undo()


def _events(z: zipfile.ZipFile, name: str) -> list[dict]:
    return [json.loads(line) for line in z.read(name).decode("utf-8").splitlines() if line.strip()]


def test_the_zip_has_a_group_per_step_with_its_pictures(run):
    _, run_zip, out = run
    assert zipfile.ZipFile(run_zip).read("trace.trace").count(b'"tracingGroup"') == len(STEPS)
    z = zipfile.ZipFile(out / "t.zip")
    names = set(z.namelist())
    events = _events(z, "trace.trace")
    assert events[0]["type"] == "context-options" and events[0]["version"] == 10
    assert events[0]["options"]["viewport"]["width"] > 0
    groups = [e for e in events if e.get("method") == "tracingGroup"]
    titles = [g["title"] for g in groups]
    assert [t.split(":")[0] for t in titles] == [f"Step {i}" for i in range(1, len(STEPS) + 1)], titles
    assert re.fullmatch(r'Step 1: type\(\d+, "Ada Lovelace"\) · auto-approved \(auto\) · verified', titles[0]), titles
    assert titles[-1].startswith('Step 6: finish("ordered")')
    calls = [e for e in events if e["type"] == "before" and e.get("parentId")]
    assert [c["parentId"] for c in calls] == [g["callId"] for g in groups]  # one call inside each group
    ended = {e["callId"] for e in events if e["type"] == "after"}
    assert ended == {e["callId"] for e in events if e["type"] == "before"}
    # each call has its before and after snapshot, each showing a picture; the click marks its target
    snaps = [e["snapshot"] for e in events if e["type"] == "frame-snapshot"]
    for c in calls:
        phases = {s["phase"] for s in snaps if s["callId"] == c["callId"]}
        assert {"before", "after"} <= phases, (c["title"], phases)
    assert any(s["phase"] == "action" and '"__playwright_target__"' in json.dumps(s["html"]) for s in snaps)
    assert all("data:image/jpeg;base64," in json.dumps(s["html"]) for s in snaps)
    logs = [e["message"] for e in events if e["type"] == "log"]
    assert "decision: auto-approved (auto)" in logs and any(m.startswith("verification: success") for m in logs)
    # the screencast: frames in time order, each file in the zip
    frames = [e for e in events if e["type"] == "screencast-frame"]
    assert len(frames) >= len(STEPS) and all(f["file"] in names for f in frames)
    assert [f["timestamp"] for f in frames] == sorted(f["timestamp"] for f in frames)
    assert {n for n in names if n.startswith("resources/")} == {f["file"] for f in frames}
    # page events as console messages; the navigation the run saw in the network log
    console = [e["text"] for e in events if e["type"] == "console"]
    assert any("Thank you for your order" in t for t in console), console
    urls = [e["snapshot"]["request"]["url"] for e in _events(z, "trace.network")]
    assert urls[0].endswith("/index.html") and urls[-1].endswith("/done.html"), urls


def test_the_run_adds_playwrights_own_trace_scrubbed(run):
    """`vigil run --trace`: beside the trace built from the store, Playwright's own (real DOM snapshots and network),
    on the same clock, with every form value blanked."""
    _, run_zip, _ = run
    z = zipfile.ZipFile(run_zip)
    names = set(z.namelist())
    assert {"trace.trace", "trace.network", "live.trace", "live.network"} <= names and "trace.stacks" not in names
    live = _events(z, "live.trace")
    groups = [e["title"] for e in live if e.get("method") == "tracingGroup"]
    assert groups[:2] == ["Step 1 — Playwright's view (type)", "Step 2 — Playwright's view (type)"], groups
    snaps = [e["snapshot"] for e in live if e["type"] == "frame-snapshot"]
    assert len(snaps) >= 2 * len(STEPS) - 2 and any("done.html" in s["frameUrl"] for s in snaps)
    values = re.findall(r'"__playwright_value_": "([^"]*)"', z.read("live.trace").decode("utf-8"))
    assert values and set(values) == {""}  # every form control's value, the typed name too
    assert not any(e["type"] == "screencast-frame" for e in live)  # (it would show the code the pictures paint over)
    done = [e["snapshot"] for e in _events(z, "live.network") if e["snapshot"]["request"]["url"].endswith("/done.html")]
    assert done and done[0]["response"]["status"] == 200
    ours_net = [e["snapshot"]["request"]["url"] for e in _events(z, "trace.network")]
    assert not any(u.endswith("/done.html") for u in ours_net), ours_net  # listed once, with its status
    # one timeline: each step's group of ours starts within the run's span of Playwright's
    ours = [e["startTime"] for e in _events(z, "trace.trace") if e.get("method") == "tracingGroup"]
    theirs = [e["startTime"] for e in live if e.get("method") == "tracingGroup"]
    assert abs(ours[0] - theirs[0]) < 2000 and abs(ours[-1] - theirs[-1]) < 2000, (ours, theirs)


def test_steps_that_did_not_run_or_failed_and_no_pictures(tmp_path):
    """A session written directly (no browser, no pictures): an edited, a rejected, a failed and a person's step."""
    click, edited = Action(name="click", target="12"), Action(name="click", target="13")
    with Store.open(tmp_path / "s.db") as store:
        sid = store.create_session("Pay the bill", "https://bank.test/pay", "openai", "ask", {})
        store.add_step(sid, StepRecord(index=0, proposal=ProposedStep(action=click), action=edited,
                                       decision=Decision(kind="edit", action=edited),
                                       result=ActionResult(success=True, action=edited.to_string())))
        store.add_step(sid, StepRecord(index=1, proposal=ProposedStep(action=click), status="rejected",
                                       decision=Decision(kind="reject", reason="not that one")))
        store.add_step(sid, StepRecord(index=2, proposal=ProposedStep(action=click), decision=Decision.approve(),
                                       action=click, status="failed", note="the page changed",
                                       result=ActionResult(success=False, action="click(12)", error_code="OCCLUDED",
                                                           message="covered by an overlay")))
        store.add_step(sid, StepRecord(index=3, actor="human", status="completed"))
        store.finish(sid, "error", reason="gave up")
        [path] = write_export(store, sid, trace_path=tmp_path / "t.zip")
    z = zipfile.ZipFile(path)
    assert sorted(z.namelist()) == ["trace.network", "trace.trace"]
    events = _events(z, "trace.trace")
    assert [e["title"] for e in events if e.get("method") == "tracingGroup"] == [
        "Step 1: click(13) · edited · done", "Step 2: click(12) (not run) · rejected · rejected",
        "Step 3: click(12) · approved · failed", "Step 4: the person acted in the page · done by the person · done"]
    errors = [e["error"]["message"] for e in events if e["type"] == "after" and "error" in e]
    assert errors == ["OCCLUDED: covered by an overlay"]
    assert "  reason: not that one" in [e["message"] for e in events if e["type"] == "log"]
    assert all("no picture was stored" in json.dumps(e["snapshot"]["html"]) for e in events
               if e["type"] == "frame-snapshot")


def test_the_report_links_the_trace_and_the_test_written_with_it(run):
    _, _, out = run
    page = (out / "r.html").read_text()
    assert '<a href="t.zip">t.zip</a>' in page and "playwright show-trace t.zip" in page
    assert '<a href="test_shop.py">test_shop.py</a>' in page and "pytest test_shop.py" in page
    assert "# Recorded by Vigil" in (out / "test_shop.py").read_text()


def test_no_secret_in_any_file_or_picture_of_the_zip(run):
    _, run_zip, out = run
    for path in (run_zip, out / "t.zip"):
        z = zipfile.ZipFile(path)
        for name in z.namelist():
            data = z.read(name)
            for s in SECRETS:
                assert s.encode() not in data, (path.name, name, s)
        assert "••••••••" in z.read("trace.trace").decode("utf-8")  # the typed secrets, as the store keeps them
    # the pictures: the snapshots' data: images are the resources' own JPEGs, so reading these covers both
    z = zipfile.ZipFile(out / "t.zip")
    pictures = {n: z.read(n) for n in z.namelist() if n.startswith("resources/")}
    inline = set(re.findall(rb"data:image/jpeg;base64,([A-Za-z0-9+/=]+)", z.read("trace.trace")))
    assert {base64.b64decode(x) for x in inline} <= set(pictures.values())
    events = _events(z, "trace.trace")
    typed = [g["startTime"] for g in events if g.get("method") == "tracingGroup"][3]  # after the code was typed
    late = [e["file"] for e in events if e["type"] == "screencast-frame" and e["timestamp"] >= typed]
    text = read_text(pictures[late[0]])  # the page with both secrets typed
    # words ARE read, a typed value too: the picture is not blank, and a secret typed in clear would be read
    assert "Trace shop" in text and "Password" in text and "Ada Lovelace" in text, text
    assert leaks(text, SECRETS) == [], text


def _shown(page) -> list[str]:
    """The viewer's action list: each group's title (the last group is opened, listing its calls; each line ends
    with its duration)."""
    entries = page.locator(".tree-view-entry")
    entries.first.wait_for(timeout=20000)
    return [t.rsplit("\n", 1)[0] for t in entries.all_inner_texts() if t.startswith("Step ")]


def test_playwrights_trace_viewer_lists_every_step(run):
    """`playwright show-trace` serves the zips (Playwright's own Chromium is not needed: Vigil's opens the viewer):
    the exported one lists every step's group; the run's, ours and Playwright's, interleaved on one timeline."""
    from playwright.sync_api import sync_playwright
    _, run_zip, out = run
    exe = Path(sys.executable).with_name("playwright")
    titles = [e["title"] for e in _events(zipfile.ZipFile(out / "t.zip"), "trace.trace")
              if e.get("method") == "tracingGroup"]
    # served from the run's zip: the viewer may then read the files below its folder, the export's too
    viewer = subprocess.Popen([str(exe), "show-trace", "--host", "127.0.0.1", "--port", "0", str(run_zip)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert viewer.stdout is not None
        line = ""
        while "Listening on" not in line:
            line = viewer.stdout.readline()
            assert line, "show-trace ended without serving"
        url = line.split("Listening on", 1)[1].strip()
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=find_chromium(headless=True))
            page = browser.new_page()
            page.goto(url)
            merged = _shown(page)
            assert len(merged) == 2 * len(STEPS), merged
            assert merged.index("Step 2 — Playwright's view (type)") < next(
                i for i, t in enumerate(merged) if t.startswith("Step 3: ")), merged
            assert "Network" in page.locator(".tabbed-pane-tab-label").all_inner_texts()
            page.goto(page.url.split("?trace=")[0] + "?trace=" + urllib.parse.quote(f"file?path={out / 't.zip'}"))
            page.wait_for_function("!document.body.innerText.includes(\"Playwright's view\")")
            assert _shown(page) == titles
            browser.close()
    finally:
        viewer.terminate()
        viewer.wait(10)
