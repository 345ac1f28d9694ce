"""Issue [2/8]: what a step will do, computed in the page before its input goes out, judged, and any form
submission more held at the browser. Real Chromium, real pages served by a local server that records
what really arrived."""

from __future__ import annotations

import pytest

from engine.loop import AgentLoop, AutoApprove, CallbackGate, ScriptedPlanner
from engine.models import Action, Decision

from support.page_helpers import FAST
from support.paths import FIXTURES
from support.recording_server import RecordingServer, Reply

QUICK = {"type": "any_change", "timeout_ms": 400}


class Recorder(RecordingServer):
    """Serves the effect pages and answers anything else with a small page; records every request."""

    def __init__(self) -> None:
        super().__init__({"GET /page/*": lambda r: Reply((FIXTURES / r.path.rsplit("/", 1)[-1]).read_bytes(),
                                                         content_type="text/html; charset=utf-8"),
                          "GET POST /*": lambda r: Reply(f"<!doctype html><title>Done</title><p>{r.path}</p>")})
        self.hits = self.view(lambda r: (r.method, r.path))

    def page(self, name: str) -> str:
        return self.url(f"page/{name}")


@pytest.fixture
def rec():
    with Recorder() as r:
        yield r


def _by_id(snap, i: str) -> str:
    return next(n.node_id for n in snap.nodes() if (n.attrs or {}).get("id") == i)


def test_the_effect_names_what_the_browser_will_do(harness, rec):
    """Each action kind on tests/fixtures/effects.html: the element the input reaches and its default action."""

    async def go(tab):
        snap = await tab.snapshot()
        labels = [n for n in snap.nodes() if n.tag == "label" and "Show tips" in (n.text or n.name or "")]
        cases = {
            "label": Action(name="click", target=labels[0].node_id),
            "dialog-post": Action(name="click", target=_by_id(snap, "dlg")),
            "enter-in-checkbox": Action(name="press", key="Enter", target=_by_id(snap, "rem")),
            "palette": Action(name="press", key="Return", target=_by_id(snap, "palette")),
            "select": Action(name="select", option="Delete selected", target=_by_id(snap, "bulk")),
            "check": Action(name="check", target=_by_id(snap, "wipe")),
            "bdo": Action(name="click", target=_by_id(snap, "bdo")),
            "flex": Action(name="click", target=_by_id(snap, "flex")),
            "new-window": Action(name="click", target=_by_id(snap, "out")),
            "download": Action(name="click", target=_by_id(snap, "dl")),
            "get-search": Action(name="press", key="Enter", target=snap.find("textbox", "Search")[0].node_id),
            "typed-search": Action(name="type", text="red boots", submit=True,
                                   target=snap.find("textbox", "Search")[0].node_id),
            "code": Action(name="type", text="123456", target=_by_id(snap, "otp")),
            "tab-key": Action(name="press", key="Tab", target=_by_id(snap, "bdo")),
        }
        return {k: await tab.effect(a, snap) for k, a in cases.items()}

    e = harness.page(rec.page("effects.html"), go)
    assert e["label"].kind == "submit" and e["label"].receiver.via == "label"
    assert e["label"].submission.url.endswith("/workspaces/42/delete") and e["label"].submission.method == "POST"
    assert "Delete workspace" in e["label"].submission.form, "the form owner by form=, with its name"
    assert e["dialog-post"].submission.method == "POST" and e["dialog-post"].submission.url.endswith("/x/dialog-post")
    assert e["enter-in-checkbox"].kind == "submit" and e["enter-in-checkbox"].submission.implicit
    assert e["enter-in-checkbox"].submission.submitter == "Save preferences"
    assert e["palette"].receiver.via == "active option" and e["palette"].words == "Delete repository"
    assert e["select"].line() == "selects 'Delete selected' in 'Bulk actions'"
    assert e["check"].kind == "toggle" and e["check"].state == "checked" and e["check"].words == "Delete all my data"
    assert e["bdo"].receiver.name.startswith("Delete account"), "a bidi override read as a person reads it"
    assert e["flex"].receiver.name == "Delete", "flex order applied, letters over spans joined"
    assert e["new-window"].kind == "new_window" and e["download"].kind == "download"
    assert e["get-search"].submission.method == "GET" and "q=shoes" in e["get-search"].submission.url
    assert "q=red%20boots" in e["typed-search"].submission.url, "a typing's submission carries what it types"
    code = e["code"]
    assert code.kind == "type" and code.submission.on_fill and code.state == "a hidden value"
    assert "123456" not in code.model_dump_json(), "a code is never in the effect"
    assert e["tab-key"].kind == "none"


def _run(harness, url, steps, gate, policy="auto-safe"):
    async def go(tab):
        tab.stability = FAST
        loop = AgentLoop(tab, ScriptedPlanner(steps + [{"action": "finish"}]), gate=gate, policy=policy,
                         screenshots=False, max_steps=len(steps) + 2)
        res = await loop.run("look at the orders")
        await __import__("asyncio").sleep(0.5)  # a request the last step started reaches the server
        return res
    return harness.page(url, go)


def test_a_submission_the_step_did_not_include_is_held_where_no_person_is_present(harness, rec):
    """A button that requestSubmit()s a hidden form, a form re-aimed on click, a timer's form.submit(): none
    reaches the server under auto-safe with no person; the ordinary search and note forms do."""
    steps = [
        {"action": "type", "target": {"role": "textbox", "name": "Search orders"}, "text": "shoes", "submit": True,
         "expect": QUICK},
        {"action": "back"},
        {"action": "click", "target": {"role": "button", "name": "Show details"}, "expect": QUICK},
        {"action": "click", "target": {"role": "button", "name": "Save note"}, "expect": QUICK},
        {"action": "click", "target": {"role": "button", "name": "Refresh"}, "expect": QUICK},
        {"action": "wait", "ms": 800},
    ]
    res = _run(harness, rec.page("effect_commit.html"), steps, AutoApprove())
    assert ("GET", "/search") in rec.hits, "the search the step said it submits went through"
    assert ("POST", "/orders/all/delete") not in rec.hits, rec.hits
    details = res.steps[2]
    assert details.result.error_code == "BLOCKED" and "did not include" in details.result.message
    assert details.effect is not None and details.effect.kind == "activate"
    assert any(x.kind == "submission" and not x.allowed for x in details.incidents.exits)


def test_the_submission_a_person_approved_goes_and_another_is_asked(harness, rec):
    """Under ask: the person approves "Add note" (its effect says POST /notes) and it arrives; the re-aimed
    form's submission is not what was approved, so the person is asked about it, says no, and it never leaves."""
    asked = []

    def gate(req):
        asked.append(req)
        if req.proposal.details and req.proposal.details.get("held"):
            return Decision(kind="reject", reason="not what I approved")
        return Decision.approve()

    steps = [{"action": "click", "target": {"role": "button", "name": "Add note"}, "expect": QUICK},
             {"action": "back"},
             {"action": "click", "target": {"role": "button", "name": "Save note"}, "expect": QUICK}]
    res = _run(harness, rec.page("effect_commit.html"), steps, CallbackGate(gate), policy="ask")
    assert ("POST", "/notes") in rec.hits
    assert ("POST", "/orders/all/delete") not in rec.hits
    first = next(r for r in asked if r.proposal.action.name == "click")
    assert first.effect is not None and first.effect.line().startswith("submits 'Add note'")
    assert "POST /notes" in first.effect.line(), first.effect.line()
    held = [r for r in asked if r.proposal.details and r.proposal.details.get("held")]
    assert held and "/orders/all/delete" in held[0].sensitive_reasons[0], [r.sensitive_reasons for r in asked]
    assert res.steps[2].result.error_code == "BLOCKED"


def test_keys_follow_focus_and_what_lands_elsewhere_is_stopped(harness, rec):
    """The page moves the focus on the first keydown (to a Delete button a space would press) or on input (to
    another field): the keys it receives elsewhere are stopped, the step fails MISDIRECTED naming where they
    went, and nothing arrives. A plain field and a listbox moving its own focus on arrows raise no alarm."""

    async def go(tab):
        tab.stability = FAST
        snap = await tab.snapshot()
        out = {}
        for name, text in (("Search files", "a b c"), ("Transfer amount", "900")):
            node = snap.find("textbox", name)[0].node_id
            out[name] = await tab.type(node, text)
            snap = await tab.snapshot()
        out["plain"] = await tab.type(snap.find("textbox", "Plain field")[0].node_id, "hello world")
        out["plain_value"] = await tab.page.evaluate("document.getElementById('plain').value")
        out["amount_value"] = await tab.page.evaluate("document.getElementById('amount').value")
        snap = await tab.snapshot()
        out["arrows"] = await tab.press("ArrowDown", snap.find("listbox", "Files")[0].node_id, repeat=3)
        return out

    out = harness.page(rec.page("effect_focus.html"), go)
    r = out["Search files"]
    assert not r.success and r.error_code == "MISDIRECTED", r.message
    assert 'button "Delete all files"' in r.message and "Search files" in r.message
    r = out["Transfer amount"]
    assert not r.success and r.error_code == "MISDIRECTED", r.message
    assert "Plain field" in r.message
    assert ("POST", "/x/focus-delete") not in rec.hits, rec.hits
    assert out["plain"].success, out["plain"].message
    assert out["plain_value"] == "hello world" and out["amount_value"] == "9", out
    assert out["arrows"].success, out["arrows"].message


def test_a_page_that_lies_to_scripts_does_not_change_the_effect(harness, rec):
    """The page replaces the getters of a form's action and method, a button's form and formAction, a label's
    control, elementFromPoint and getComputedStyle: the effect is computed in a world of its own and still
    says what the browser will do."""

    async def go(tab):
        snap = await tab.snapshot()
        button = _by_id(snap, "go")
        label = next(n.node_id for n in snap.nodes() if n.tag == "label")
        return [await tab.effect(Action(name="click", target=t), snap) for t in (button, label)]

    for e in harness.page(rec.page("effect_liar.html"), go):
        assert e is not None and e.kind == "submit", e
        assert e.submission.method == "POST" and e.submission.url.endswith("/account/delete"), e.submission
