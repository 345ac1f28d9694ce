"""The OpenAI-compatible planner against a real local HTTP server that speaks the chat-completions API
(scripted replies, every request recorded), and the payload it sends: semantic-first observations,
delta hashing, DOM RAG, context escalation, malformed replies, server trouble, the API key kept
secret, the JSON-mode fallback, and one supervised run end to end."""

from __future__ import annotations

import json
import logging
import time

import pytest

from engine.errors import VigilError
from engine.loop import AgentLoop, AutoApprove, Observation
from engine.models import Action, PageEvent
from engine.observe.stability import StabilityConfig
from engine.planners.openai_planner import OpenAIPlanner
from engine.planners.payload import DeltaTracker, rag_filter

from support.fake_llm import FakeLLM, call, hang, say, status  # noqa: F401 - the fake server and its reply helpers

KEY = "sk-test-DO-NOT-LEAK-4f9a"
TOOL_NAMES = {"click", "type", "press", "select", "scroll", "navigate", "finish", "fail", "request_context",
              "switch_tab", "close_tab", "new_tab", "dialog", "upload"}  # tabs, dialogs, uploads: issue [9]


@pytest.fixture(scope="module")
def llm():
    s = FakeLLM()
    yield s
    s.close()


@pytest.fixture(autouse=True)
def _fresh(llm):
    llm.reset()


def planner(llm, **kw) -> OpenAIPlanner:
    kw.setdefault("timeout", 10)
    return OpenAIPlanner(base_url=llm.base_url, model="fake-model", api_key=KEY, **kw)


async def observe(tab, task="Subscribe ada@example.com to the newsletter", **kw) -> tuple[Observation, dict]:
    """An observation of the tab now, and HTML id → node ID."""
    snap = await tab.snapshot()
    ids = {n.attrs["id"]: n.node_id for n in snap.nodes() if n.attrs and "id" in n.attrs}
    kw.setdefault("page", tab)
    return Observation(task=task, step_index=0, snapshot=snap, url=snap.url, **kw), ids


def user_text(request: dict) -> str:
    return request["messages"][-1]["content"]


# -- tests --------------------------------------------------------------------------------------------------
def test_tool_call_request_contents_and_delta(harness, server, llm):
    async def go(tab):
        p = planner(llm)
        events = [PageEvent(category="error", kind="added", text="Card declined", age_ms=1200)]
        obs, ids = await observe(tab, recent_events=events)
        expect = {"type": "element_appears", "text": "Thanks", "or": {"type": "any_change"}}
        llm.add(call("click", {"node_id": ids["subscribe"], "thought": "submit the form", "plan_step": 1,
                               "expected_outcome": expect, "plan": ["Type the email", "Subscribe"]}))
        step = await p.propose(obs)
        assert step.action == Action(name="click", target=ids["subscribe"])
        assert step.expected_outcome.type == "element_appears" and step.expected_outcome.or_.type == "any_change"
        assert step.plan == ["Type the email",
                             "Subscribe"] and step.plan_index == 1 and step.thought == "submit the form"
        req = llm.requests[0]
        assert {t["function"]["name"] for t in req["tools"]} == TOOL_NAMES and req["tool_choice"] == "required"
        assert req["model"] == "fake-model" and req["messages"][0]["role"] == "system"
        assert "LEGEND for interactive_tree format" in req["messages"][0]["content"]
        text = user_text(req)
        assert f'"i":"{ids["email"]}"' in text and "Email address" in text and "Card declined" in text
        assert "TASK: Subscribe ada@example.com" in text and p.last_exchange.observation["unchanged"] is False

        # the same page again: the tree is not re-sent; the earlier one stays in the conversation
        llm.add(call("finish", {"answer": "done"}))
        obs2, _ = await observe(tab, last_outcome="completed")
        assert (await p.propose(obs2)).action == Action(name="finish", answer="done")
        req2 = llm.requests[1]
        assert [m["role"] for m in req2["messages"]] == ["system", "user", "assistant", "tool", "user"]
        assert "The page is unchanged since your last step (same" in user_text(req2)
        assert '"i":"' not in user_text(req2) and p.last_exchange.observation["unchanged"] is True

        # a changed value is noticed: a new conversation with the full tree
        await tab.type(ids["email"], "ada@example.com")
        llm.add(call("finish", {}))
        obs3, _ = await observe(tab, last_outcome="completed")
        await p.propose(obs3)
        req3 = llm.requests[2]
        assert [m["role"] for m in req3["messages"]] == ["system", "user"]
        assert '"v":"ada@example.com"' in user_text(req3)
        await p.aclose()

    harness.page(server.url("plan_form.html"), go)


def test_delta_tracker_notices_every_change():
    items = [{"i": "1", "r": "inp", "n": "Email", "xy": [10, 10]}, {"i": "2", "r": "chk", "n": "Agree"}]
    d = DeltaTracker()
    assert d.check(items)[0] is False and d.check([dict(i) for i in items])[0] is True
    for changed in ([{**items[0], "v": "a"}, items[1]], [items[0], {**items[1], "s": "checked"}],
                    items + [{"i": "3", "r": "btn", "n": "Go"}], items[:1]):
        d.check(items)
        assert d.check(changed)[0] is False, changed
    d.check(items)
    assert d.check(items, context=["http://other"])[0] is False  # same tree, other page
    d.reset()
    assert d.check(items)[0] is False


def test_settings_from_the_environment(monkeypatch):
    for k in ("VIGIL_BASE_URL", "OPENAI_BASE_URL", "VIGIL_MODEL", "OPENAI_MODEL", "VIGIL_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(k, raising=False)
    with pytest.raises(VigilError, match="No model named"):
        OpenAIPlanner()
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    monkeypatch.setenv("VIGIL_BASE_URL", "http://127.0.0.1:2/v1")
    monkeypatch.setenv("OPENAI_MODEL", "llama3")
    p = OpenAIPlanner()
    assert (p.base_url, p.model, p._client.api_key) == ("http://127.0.0.1:2/v1", "llama3", "not-needed")
    monkeypatch.setenv("VIGIL_API_KEY", KEY)
    q = OpenAIPlanner(model="qwen", vision=True, tools=False)
    assert q.model == "qwen" and q.mode == "json" and q._client.api_key == KEY and KEY not in repr(q)


def test_dom_rag_on_a_big_page(harness, server, llm):
    async def go(tab):
        snap = await tab.snapshot()
        data = snap.serialize("semantic", full_page=True).data
        task = "Click the Act 1234 button"
        for with_snapshot in (snap, None):
            rag = rag_filter(data, task, 2000, snapshot=with_snapshot)
            names = [i.get("n") for i in rag.items]
            assert rag.dom_filtered and rag.original_node_count == len(data["interactive_tree"]) > 2000
            assert "Act 1234" in names and rag.tokens <= 2000 and rag.token_reduction > 0.9
            order = {i["i"]: k for k, i in enumerate(data["interactive_tree"])}
            assert [order[i["i"]] for i in rag.items] == sorted(order[i["i"]] for i in rag.items)
            assert "Filtered for" in rag.filter_reason and rag.kept_node_count == len(rag.items)
        assert "Open 1234" in [i.get("n") for i in rag_filter(data, task, 2000, snapshot=snap).items]  # its row
        small = rag_filter({"interactive_tree": data["interactive_tree"][:5]}, task, 2000)
        assert not small.dom_filtered and small.token_reduction == 0 and len(small.items) == 5

        target = snap.find(role="button", name="Act 1234", exact=True)[0].node_id
        p = planner(llm, full_page=True)
        llm.add(call("click", {"node_id": target}))
        obs = Observation(task=task, step_index=0, snapshot=snap, url=snap.url)
        assert (await p.propose(obs)).action.target == target
        seen = p.last_exchange.observation
        assert seen["dom_filtered"] and seen["token_reduction"] > 0.5 and seen["tokens"] <= 6000
        assert "(DOM RAG)" in user_text(llm.requests[0]) and '"n":"Act 1234"' in user_text(llm.requests[0])
        await p.aclose()

    harness.page(server.url("big5k.html"), go)


def test_request_context_adds_only_what_was_asked(harness, server, llm):
    async def go(tab):
        p = planner(llm, vision=True)
        obs, ids = await observe(tab)
        llm.add(call("request_context", {"kind": "skeleton", "reason": "need the form HTML"}),
                call("click", {"node_id": ids["subscribe"]}))
        assert (await p.propose(obs)).action.name == "click"
        first, second = llm.requests
        new = second["messages"][len(first["messages"]):]
        assert [m["role"] for m in new] == ["assistant", "tool"]
        assert new[0]["tool_calls"][0]["function"]["name"] == "request_context"
        assert "Context requested (skeleton)" in new[1]["content"] and f'id="{ids["email"]}"' in new[1]["content"]
        assert "<html" not in json.dumps(new) and "image_url" not in json.dumps(new)
        assert [n["kind"] for n in p.last_exchange.negotiation] == ["skeleton"]

        # a screenshot for a vision model: an image part (Set-of-Mark) plus the skeleton
        llm.reset()
        llm.add(call("request_context", {"kind": "screenshot", "reason": "which button is blue"}), call("finish", {}))
        obs2, _ = await observe(tab, last_outcome="completed")
        await p.propose(obs2)
        new = llm.requests[1]["messages"][len(llm.requests[0]["messages"]):]
        assert [m["role"] for m in new] == ["assistant", "tool", "user"]
        assert "labelled with its ID" in new[1]["content"] and f'id="{ids["email"]}"' in new[1]["content"]
        assert new[2]["content"][1]["image_url"]["url"].startswith("data:image/jpeg;base64,")
        shown = json.dumps(p.last_exchange.model_dump())
        assert "KB elided" in shown and "base64," not in shown

        # at most two escalations per step: a third request is answered with a correction
        llm.reset()
        llm.add(call("request_context", {"kind": "full", "reason": "tables"}),
                call("request_context", {"kind": "skeleton", "reason": "more"}),
                call("request_context", {"kind": "screenshot", "reason": "again"}), call("finish", {}))
        obs3, _ = await observe(tab, last_outcome="completed")
        assert (await p.propose(obs3)).action.name == "finish"
        ex = p.last_exchange
        assert [n["kind"] for n in ex.negotiation] == ["full", "skeleton"] and "already got 2" in ex.corrections[0]
        assert "Context requested (full)" in json.dumps(llm.requests[1]["messages"][-1])
        await p.aclose()

    harness.page(server.url("plan_form.html"), go)


def test_malformed_replies_get_one_corrective_retry(harness, server, llm):
    async def go(tab):
        p = planner(llm)
        obs, ids = await observe(tab)
        cases = [
            ((call("click", raw='{"node_id": '), call("click", {"node_id": ids["subscribe"]})), "not valid JSON"),
            ((call("click", {"node_id": "9999"}), call("click", {"node_id": ids["subscribe"]})), "'9999' is not in"),
            ((call("type", {"node_id": ids["email"]}), call("click", {"node_id": ids["subscribe"]})),
             "type needs text"),
            ((say("I would click Subscribe."), call("click", {"node_id": ids["subscribe"]})), "has no tool call"),
        ]
        for replies, said in cases:
            llm.reset()
            llm.add(*replies)
            step = await p.propose(obs)
            assert step.action == Action(name="click", target=ids["subscribe"]), said
            assert said in user_text(llm.requests[1]) and len(p.last_exchange.corrections) == 1
        for replies, said in (((call("click", raw="{oops"), call("tap", {"node_id": ids["subscribe"]})),
                               "Unknown tool 'tap'"), ((say(""), say("")), "The reply was empty")):
            llm.reset()
            llm.add(*replies)
            step = await p.propose(obs)
            assert step.action.name == "fail" and said in step.action.reason
            assert "corrective retry" in step.action.reason
            assert "fake-model" in step.action.reason and llm.base_url in step.action.reason
        await p.aclose()

    harness.page(server.url("plan_form.html"), go)


def test_server_trouble_becomes_a_fail_step_and_the_key_stays_secret(harness, server, llm, caplog):
    caplog.set_level(logging.DEBUG)

    async def go(tab):
        obs, _ = await observe(tab)
        p = planner(llm)
        reasons = []
        llm.add(status(500, "the model crashed"))
        reasons.append((await p.propose(obs)).action.reason)
        assert "HTTP 500" in reasons[-1] and "the model crashed" in reasons[-1] and llm.base_url in reasons[-1]
        llm.add(status(401, f"Incorrect API key provided: {KEY}."))
        reasons.append((await p.propose(obs)).action.reason)
        assert "HTTP 401" in reasons[-1] and "Check the API key" in reasons[-1]
        assert llm.auth and all(a == f"Bearer {KEY}" for a in llm.auth)  # the key was used, nowhere shown
        await p.aclose()

        quick = planner(llm, timeout=0.5)
        llm.add(hang(2.5))
        t = time.monotonic()
        reasons.append((await quick.propose(obs)).action.reason)
        assert "timed out" in reasons[-1] and time.monotonic() - t < 2.0
        await quick.aclose()

        closed = OpenAIPlanner(base_url="http://127.0.0.1:9/v1", model="m", api_key=KEY, timeout=2)
        reasons.append((await closed.propose(obs)).action.reason)
        assert "Could not reach the model server at http://127.0.0.1:9/v1" in reasons[-1]
        for shown in reasons + [repr(p), repr(closed), p.last_exchange.model_dump_json(), caplog.text]:
            assert KEY not in shown
        await closed.aclose()

    harness.page(server.url("plan_form.html"), go)
    assert "planner step failed" in caplog.text and KEY not in caplog.text


def test_json_mode_fallbacks(harness, server, llm):
    async def go(tab):
        obs, ids = await observe(tab)
        p = planner(llm)
        llm.add(status(400, "tool_choice 'required' is not supported"), call("click", {"node_id": ids["subscribe"]}))
        assert (await p.propose(obs)).action.name == "click"
        assert [r.get("tool_choice") for r in llm.requests] == ["required", "auto"]

        llm.reset()  # a server without tools: JSON replies from then on
        reply = json.dumps({"thought": "fill it", "expected_outcome": "value_changes",
                            "action": f'type({ids["email"]}, "ada@example.com", submit=true)'})
        llm.add(status(400, "this model does not support tools"), say(f"<think>hmm</think>```json\n{reply}\n```"))
        step = await p.propose(obs)
        assert step.action == Action(name="type", target=ids["email"], text="ada@example.com", submit=True)
        assert step.expected_outcome.type == "value_changes" and step.thought == "fill it" and p.mode == "json"
        assert "tools" not in llm.requests[1]
        assert "Reply with one JSON object" in llm.requests[1]["messages"][0]["content"]
        await p.aclose()

        llm.reset()
        q = planner(llm, tools=False)
        llm.add(say(json.dumps({"action": {"name": "select", "node_id": ids["topic"], "option": "Music"}})),
                say('{"action": "request_context(\\"skeleton\\", \\"see the options\\")"}'), say("finish()"))
        assert (await q.propose(obs)).action == Action(name="select", target=ids["topic"], option="Music")
        assert (await q.propose(obs)).action.name == "finish"
        assert "tools" not in llm.requests[0] and q.last_exchange.negotiation[0]["kind"] == "skeleton"
        assert "Context requested (skeleton)" in llm.requests[2]["messages"][-1]["content"]
        await q.aclose()

    harness.page(server.url("plan_form.html"), go)


def test_supervised_run_end_to_end(harness, server, llm, tmp_path):
    """…recorded: each step keeps what the model was sent and answered, and neither the typed
    password (which the task itself spells out) nor the API key reaches the store or the report."""
    from engine.store import Store
    from engine.store.recorder import SessionRecorder
    from engine.store.report import export_html
    secret = "hunter2-very-secret"
    store = Store.open(tmp_path / "s.db")
    rec = SessionRecorder(store)

    async def go(tab):
        tab.stability = StabilityConfig(dom_quiet_ms=120, network_quiet_ms=150, timeout_ms=1500)
        _, ids = await observe(tab)
        llm.add(call("type", {"node_id": ids["email"], "text": "ada@example.com",
                              "plan": ["email", "password", "subscribe"]}),
                call("type", {"node_id": ids["pw"], "text": secret, "plan_step": 1}),
                call("click", {"node_id": ids["subscribe"], "plan_step": 2,
                               "expected_outcome": {"type": "element_appears", "text": "subscribed"}}),
                call("finish", {"answer": "Subscribed ada@example.com"}))
        p = planner(llm)
        loop = AgentLoop(tab, p, gate=AutoApprove(), policy="auto", screenshots=False)
        task = f"Subscribe ada@example.com with password {secret}"
        rec.start(loop, task, tab.page.url, planner="openai", policy="auto")
        result = await loop.run(task)
        rec.finish(result)
        await p.aclose()
        return result

    result = harness.page(server.url("plan_form.html"), go)
    assert result.status == "success" and result.answer == "Subscribed ada@example.com", result.reason
    assert [s.action.name for s in result.steps] == ["type", "type", "click", "finish"]
    assert len(llm.requests) == 4
    second, last = user_text(llm.requests[1]), user_text(llm.requests[3])
    assert "LAST ACTION: completed" in second and "verification_passed: true" in second
    assert "Thanks, you are subscribed" in last and "STEPS SO FAR" in last
    # the last action's messages quote the page (its verification's words): inside the untrusted fence only
    from engine.loop.untrusted import OPEN
    trusted, fenced = last.split(OPEN, 1)
    assert "WHAT THE LAST ACTION DID" in fenced and "Verified" in fenced
    assert "Thanks, you are subscribed" not in trusted and "Verified" not in trusted.split("LAST ACTION")[-1]
    for r in llm.requests[2:]:  # after the password was typed, only the task itself names it
        sent = json.dumps(r["messages"], ensure_ascii=False).replace(f"password {secret}", "")
        assert secret not in sent
    data = store.load(rec.session_id)
    assert [st.exchange["model"] for st in data.steps] == ["fake-model"] * 4
    assert all(st.exchange["messages"] and st.exchange["reply"] for st in data.steps)
    assert "Thanks, you are subscribed" in json.dumps(data.steps[3].exchange["messages"])
    report = export_html(store, rec.session_id)
    assert "What fake-model was sent and answered" in report and "STEPS SO FAR" in report
    store.close()
    raw = b"".join(f.read_bytes() for f in tmp_path.glob("s.db*"))
    for leak in (secret.encode(), KEY.encode()):
        assert leak not in raw and leak.decode() not in report
