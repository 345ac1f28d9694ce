"""BackendPlanner against a fake `POST /api/agent/interact` backend: a real local HTTP server with
scripted replies that records every request body. Covers the request contract, action and plan
mapping, `needs_context` negotiation, every failure path, and runs of the loop on a real page."""

from __future__ import annotations

import base64
import json
import socket
import time

import pytest

from engine.loop import AgentLoop, AutoApprove, Observation
from engine.models import StepRecord
from engine.observe.stability import StabilityConfig
from engine.planners.backend import BackendPlanner, interact_endpoint, plan_of, requested_artifacts

from support.fake_backend import FakeBackend, Raw, ok
from support.fake_backend import backend_observation as _obs

FAST = StabilityConfig(dom_quiet_ms=120, network_quiet_ms=150, timeout_ms=1500)
PAGE = "backend_form.html"


@pytest.fixture
def backend():
    made: list[FakeBackend] = []

    def make(*replies) -> FakeBackend:
        made.append(FakeBackend(*replies))
        return made[-1]

    yield make
    for b in made:
        b.close()


def _id(tree: list[dict], name: str) -> str:
    return next(item["i"] for item in tree if name.lower() in item.get("n", "").lower())


# -- pure helpers ---------------------------------------------------------------------------------
@pytest.mark.parametrize("given, endpoint", [("http://h:8000", "http://h:8000/api/agent/interact"),
                                             ("https://h/base/", "https://h/base/api/agent/interact"),
                                             ("http://h/api/agent/interact", "http://h/api/agent/interact")])
def test_the_endpoint_is_built_from_the_backend_url(given, endpoint):
    assert interact_endpoint(given) == endpoint


def test_a_backend_url_that_is_not_http_is_refused():
    with pytest.raises(ValueError, match="http"):
        interact_endpoint("ftp://h")


@pytest.mark.parametrize("answer, wanted", [
    ({"thought": "x", "action": "click(1)"}, set()),
    ({"status": "needs_context", "requestedDomMode": "hybrid"}, {"skeleton", "screenshot"}),
    ({"status": "needs_context", "needsScreenshot": True}, {"screenshot"}),
    ({"needs_context": ["skeleton_dom", "full"]}, {"skeleton", "full"}),
    ({"status": "needs_full_dom"}, {"full"}),
    ({"needs_full_dom": True}, {"full"}),
    ({"status": "needs_context"}, {"skeleton"}),                          # names nothing: the lightest
    ({"action": "click(1)", "requestedDomMode": "full"}, set()),          # an answer
    ({"action": "click(1)", "status": "needs_context", "needsScreenshot": True}, {"screenshot"}),
])
def test_what_the_backend_asks_for(answer, wanted):
    assert requested_artifacts(answer) == wanted


@pytest.mark.parametrize("data, plan", [
    ({"plan": {"steps": [{"id": "step_0", "description": "Type"}, {"id": "step_1", "description": "Join"}],
               "currentStepIndex": 1}}, (["Type", "Join"], 1)),
    ({"plan": {"steps": [{"description": "A"}]}, "currentStep": 0}, (["A"], 0)),
    ({"plan": {"steps": []}}, (None, None)),
])
def test_the_backend_plan(data, plan):
    assert plan_of(data) == plan


# -- the request contract -------------------------------------------------------------------------
def test_request_fields_and_answer_mapping(harness, server, backend):
    async def go(tab):
        snap = await tab.snapshot()
        tree = snap.serialize("semantic").data["interactive_tree"]
        email, join = _id(tree, "Email address"), _id(tree, "Join")
        fake = backend(
            ok(thought="Type the address.", action=f'setValue({email}, "ada@example.com")', taskId="task-1",
               sessionId="sess-1", status="executing", currentStep=0, totalSteps=2,
               actionDetails={"name": "setValue", "elementId": int(email), "selectorPath": "input#email"},
               expectedOutcome={"type": "value_changes", "node_id": email},
               plan={"steps": [{"id": "step_0", "index": 0, "description": "Enter the email", "status": "active"},
                               {"id": "step_1", "index": 1, "description": "Join", "status": "pending"}],
                     "currentStepIndex": 0}),
            {"thought": "Join.", "action": f"click({join})", "taskId": "task-1"},   # no `data` wrapper
            ok(action=f"click({join})"), ok(action="finish()"))
        planner = BackendPlanner(fake.url, timeout=5)
        step = await planner.propose(_obs(snap))
        first = fake.requests[0]
        assert fake.paths[0] == "/api/agent/interact"
        assert "taskId" not in first and "sessionId" not in first and "dom" not in first
        assert not {"skeletonDom", "screenshot", "lastActionStatus", "previousUrl"} & set(first)
        assert first["domMode"] == "semantic" and first["interactiveTree"] == tree and first["url"] == snap.url
        assert first["query"] == "Join the newsletter as ada@example.com" and first["pageTitle"] == "Newsletter"
        assert first["viewport"] == {"width": 1280, "height": 800} and first["scrollPosition"] == "0%"
        assert first["recentEvents"] == [] and first["hasErrors"] is False and first["hasSuccess"] is False
        assert first["scrollableContainers"] == []
        a = step.action
        assert (a.name, a.target, a.text) == ("type", email, "ada@example.com") and step.thought == "Type the address."
        assert step.plan == ["Enter the email", "Join"] and step.plan_index == 0
        assert step.expected_outcome.type == "value_changes" and step.expected_outcome.node_id == email
        assert step.details["actionDetails"]["selectorPath"] == "input#email"
        assert step.details["taskId"] == "task-1" and step.details["status"] == "executing"

        typed = await tab.type(email, "ada@example.com")
        assert typed.verified
        rec = StepRecord(index=0, url_before=snap.url, url_after=tab.page.url)
        snap2 = await tab.snapshot()
        step = await planner.propose(_obs(snap2, 1, last_result=typed, history=[rec], last_outcome="completed"))
        second = fake.requests[1]
        assert second["taskId"] == "task-1" and second["sessionId"] == "sess-1" and "dom" not in second
        assert second["lastActionStatus"] == "success" and second["previousUrl"] == snap.url
        assert second["lastActionResult"]["success"] is True and "lastActionError" not in second
        assert second["verification_passed"] is True and second["verification_message"]
        assert second["errors_detected"] == [] and isinstance(second["success_messages"], list)
        assert second["clientObservations"]["didUrlChange"] is False
        assert _id(second["interactiveTree"], "Email address") == email
        assert step.action.name == "click" and step.action.target == join and step.plan is None

        missing = await tab.click("9999")
        assert not missing.success
        await planner.propose(_obs(snap2, 2, last_result=missing, history=[rec], last_outcome="failed",
                                   feedback=missing.message))
        third = fake.requests[2]
        assert third["lastActionStatus"] == "failure" and third["lastActionResult"]["success"] is False
        assert third["lastActionError"]["code"] == "NOT_FOUND" and third["lastActionError"]["elementId"] == 9999
        assert third["lastActionError"]["action"] == "click(9999)" and "9999" in third["lastActionError"]["message"]

        await planner.propose(_obs(snap2, 3, history=[rec], last_outcome="rejected",
                                   feedback="The person rejected this step (nothing ran). Their reason: wrong one"))
        fourth = fake.requests[3]
        assert fourth["lastActionStatus"] == "failure" and "previousUrl" not in fourth
        assert fourth["lastActionError"] == {"message": "The person rejected this step (nothing ran). Their reason: "
                                                        "wrong one", "code": "REJECTED", "action": f"click({join})"}
        await planner.aclose()

    harness.page(server.url(PAGE), go)


def test_action_strings_map_to_actions(harness, server, backend):
    strings = {
        "click(12)": {"name": "click", "target": "12"},
        'setValue(13, "x")': {"name": "type", "target": "13", "text": "x"},
        'type(f1_7, "a, b")': {"name": "type", "target": "f1_7", "text": "a, b"},
        'press("Enter")': {"name": "press", "key": "Enter"},
        'scroll("down")': {"name": "scroll", "direction": "down"},
        'navigate("http://example.test/a?b=1,2")': {"name": "navigate", "url": "http://example.test/a?b=1,2"},
        'finish("done")': {"name": "finish", "answer": "done"},
        'fail("why")': {"name": "fail", "reason": "why"},
        'click("6")': {"name": "click", "target": "6"},
    }

    async def go(tab):
        snap = await tab.snapshot()
        fake = backend(*[ok(thought="t", action=s) for s in strings], ok(thought="Cannot go on.", action="fail()"),
                       ok(status="completed"))
        planner = BackendPlanner(fake.url, timeout=5)
        for s, want in strings.items():
            step = await planner.propose(_obs(snap))
            got = step.action.model_dump()
            assert {k: got.get(k) for k in want} == want, s
        assert (await planner.propose(_obs(snap))).action.reason == "Cannot go on."   # fail() takes the thought
        assert (await planner.propose(_obs(snap))).action.name == "finish"            # status completed, no action

    harness.page(server.url(PAGE), go)


# -- negotiation ---------------------------------------------------------------------------------
def test_needs_context_negotiation(harness, server, backend):
    async def go(tab):
        snap = await tab.snapshot()
        join = _id(snap.serialize("semantic").data["interactive_tree"], "Join")
        ctx = lambda **kw: ok(status="needs_context", reason="need more", **kw)  # noqa: E731
        fake = backend(
            ctx(needs_context=["skeleton"]), ok(action=f"click({join})", taskId="t"),
            ok(status="needs_full_dom"), ok(action=f"click({join})"),
            ctx(requestedDomMode="hybrid", needsScreenshot=True, needsSkeletonDom=True), ok(action=f"click({join})"),
            ctx(needsScreenshot=True), ctx(needsScreenshot=True), ok(action=f"click({join})"),
            ctx(needs_context=["skeleton"]), ctx(needs_context=["skeleton"]), ctx(needs_context=["skeleton"]),
            ctx(needs_context=["colours"]))
        planner = BackendPlanner(fake.url, timeout=5)
        r = fake.requests

        step = await planner.propose(_obs(snap, page=tab))
        assert step.action.name == "click" and step.details["negotiation"] == [["skeleton"]]
        assert set(r[1]) - set(r[0]) == {"skeletonDom"} and all(r[1][k] == v for k, v in r[0].items())
        assert f'id="{join}"' in r[1]["skeletonDom"] and r[1]["domMode"] == "semantic"
        assert planner.last_exchange["rounds"] == 1 and len(planner.last_exchange["calls"]) == 2

        await planner.propose(_obs(snap, 1, page=tab))
        assert set(r[3]) - set(r[2]) == {"dom"} and "<button" in r[3]["dom"] and r[2]["taskId"] == "t"

        await planner.propose(_obs(snap, 2, page=tab))
        assert set(r[5]) - set(r[4]) == {"skeletonDom", "screenshot", "screenshotHash"}
        jpeg = base64.b64decode(r[5]["screenshot"])
        assert jpeg[:3] == b"\xff\xd8\xff" and len(r[5]["screenshotHash"]) == 64
        logged = planner.last_exchange["calls"][1]["request"]["screenshot"]
        assert logged.startswith("<") and "elided" in logged

        # the same picture in a later step goes as null plus its hash, until it is asked for again
        step = await planner.propose(_obs(snap, 3, page=tab))
        assert r[7]["screenshot"] is None and r[7]["screenshotHash"] == r[5]["screenshotHash"]
        assert base64.b64decode(r[8]["screenshot"])[:2] == b"\xff\xd8" and step.action.name == "click"
        assert planner.last_exchange["rounds"] == 2

        step = await planner.propose(_obs(snap, 4, page=tab))
        assert step.action.name == "fail" and "after 2 negotiation rounds" in step.action.reason
        assert fake.url in step.action.reason and len(r) == 12
        step = await planner.propose(_obs(snap, 5, page=tab))
        assert step.action.name == "fail" and "colours" in step.action.reason

    harness.page(server.url(PAGE), go)


# -- failures --------------------------------------------------------------------------------------
def test_backend_failures_become_fail_steps(harness, server, backend):
    async def go(tab):
        snap = await tab.snapshot()
        fake = backend(
            Raw(500, {"success": False, "error": "model overloaded"}),
            Raw(502, b"<html><body>Bad gateway</body></html>"),
            Raw(200, b"{not json"),
            Raw(200, [1, 2]),
            {"success": False, "error": {"message": "quota exceeded", "code": "QUOTA"}},
            ok(thought="hm", action="clickk(12)"),
            ok(action="click(button)"),
            ok(thought="nothing to do", status="executing"),
            ok(status="needs_user_input", userQuestion="Which email?"),
            Raw(200, ok(action="click(1)"), delay=2.0))
        planner = BackendPlanner(fake.url, timeout=0.6)
        want = ["HTTP 500: model overloaded.", "HTTP 502 with a body that is not JSON: '<html><body>Bad gateway",
                "not JSON: '{not json'", "not an object", "quota exceeded (QUOTA)", "Unknown action 'clickk'",
                "needs a node ID", "without an action (status executing)", "needs input from you: Which email?",
                "did not answer within 0.6 s (timeout)"]
        for i, phrase in enumerate(want):
            t = time.monotonic()
            step = await planner.propose(_obs(snap, i))
            assert step.action.name == "fail", phrase
            assert phrase in step.action.reason, (phrase, step.action.reason)
            assert "Traceback" not in step.action.reason and time.monotonic() - t < 3
            if i != 8:  # the question is the backend's own answer, not a transport problem
                assert step.action.reason.startswith(f"Backend {fake.url}/api/agent/interact: ")
        assert planner.last_exchange["calls"][0]["error"] and planner.last_exchange["calls"][0]["request"]["query"]

        with socket.socket() as s:  # a port nobody listens on
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        step = await BackendPlanner(f"http://127.0.0.1:{port}", timeout=2).propose(_obs(snap))
        assert step.action.name == "fail" and "connection refused" in step.action.reason
        assert f"127.0.0.1:{port}/api/agent/interact" in step.action.reason

    harness.page(server.url(PAGE), go)


def test_typed_secret_is_masked_in_the_record(harness, server, backend):
    async def go(tab):
        snap = await tab.snapshot()
        pw = _id(snap.serialize("semantic").data["interactive_tree"], "Password")
        fake = backend(ok(action=f'setValue({pw}, "hunter22")', actionDetails={"args": {"value": "hunter22"}}))
        planner = BackendPlanner(fake.url, timeout=5)
        step = await planner.propose(_obs(snap))
        assert step.action.text == "hunter22"                        # the loop acts with the real text …
        assert "hunter22" not in json.dumps(step.details)            # … what is recorded is masked
        assert "hunter22" not in json.dumps(planner.last_exchange)

    harness.page(server.url(PAGE), go)


# -- the loop end to end ---------------------------------------------------------------------------
def _scripted_backend(fail_second: bool = False):
    """Answers from the request's own interactiveTree: type the email, join, finish."""
    calls: list[dict] = []

    def reply(body: dict):
        tree, n = body["interactiveTree"], len(calls)
        calls.append(body)
        plan = {"steps": [{"id": f"step_{i}", "index": i, "description": d, "status": "pending"}
                          for i, d in enumerate(["Enter the email", "Join", "Done"])], "currentStepIndex": min(n, 2)}
        if n == 0:
            return ok(thought="Type the email.", action=f'setValue({_id(tree, "Email address")}, "ada@example.com")',
                      taskId="task-e2e", plan=plan, status="executing",
                      actionDetails={"name": "setValue", "selectorPath": "input#email"})
        if fail_second:
            return Raw(500, {"success": False, "error": "database unavailable"})
        if n == 1:
            return ok(thought="Join.", action=f"click({_id(tree, 'Join')})", plan=plan,
                      expectedOutcome={"type": "element_appears", "text": "is subscribed"})
        return ok(thought="Subscribed.", action='finish("subscribed")', plan=plan, status="completed")

    return reply


def test_loop_runs_with_backend_planner(harness, server, backend):
    async def go(tab):
        tab.stability = FAST
        fake = backend(*[_scripted_backend()] * 3)
        res = await AgentLoop(tab, BackendPlanner(fake.url, timeout=5), gate=AutoApprove(), policy="auto",
                              screenshots=False).run("Join the newsletter as ada@example.com")
        assert res.status == "success" and res.answer == "subscribed", res.reason
        assert "is subscribed" in await tab.page.inner_text("#status")
        assert [s.action.name for s in res.steps] == ["type", "click", "finish"]
        assert res.steps[0].proposal.details["actionDetails"]["selectorPath"] == "input#email"
        assert [s.description for s in res.plan.steps] == ["Enter the email", "Join", "Done"]
        r = fake.requests
        assert len(r) == 3 and "taskId" not in r[0] and r[1]["taskId"] == r[2]["taskId"] == "task-e2e"
        assert r[1]["lastActionStatus"] == "success" and r[1]["verification_passed"] is True
        assert r[2]["verification_passed"] is True and "dom" not in r[2]

    harness.page(server.url(PAGE), go)


def test_backend_500_mid_run_ends_with_error(harness, server, backend):
    async def go(tab):
        tab.stability = FAST
        fake = backend(*[_scripted_backend(fail_second=True)] * 2)
        res = await AgentLoop(tab, BackendPlanner(fake.url, timeout=5), gate=AutoApprove(), policy="auto",
                              screenshots=False).run("Join the newsletter as ada@example.com")
        assert res.status == "error" and [s.action.name for s in res.steps] == ["type", "fail"]
        assert res.reason == f"Backend {fake.url}/api/agent/interact: answered HTTP 500: database unavailable."

    harness.page(server.url(PAGE), go)


def test_dom_rag_fields_when_the_tree_is_cut(harness, server, backend):
    async def go(tab):
        snap = await tab.snapshot()
        full = snap.serialize("semantic").data["interactive_tree"]
        fake = backend(ok(action="finish()"))
        await BackendPlanner(fake.url, timeout=5, max_tokens=300).propose(
            Observation(task="Archive invoice 4411", step_index=0, snapshot=snap, url=snap.url))
        body = fake.requests[0]
        assert body["dom_filtered"] is True and body["original_node_count"] == len(full) > len(body["interactiveTree"])
        assert isinstance(body["token_reduction"], int) and 0 < body["token_reduction"] < 100
        assert "4411" in body["filter_reason"]
        assert any(i.get("n") == "Archive invoice 4411" for i in body["interactiveTree"])

    harness.page(server.url("backend_list.html"), go)
