"""Typing that cannot be turned against the person (issue [1/7]): a line break in the text for a one-line
field would press Enter and post its form before any check, so it is refused and nothing is typed; a
secret goes into its field as one insertion, so a page that echoes every keystroke never shows a part
of it (only the whole value, which every record scrubs). A local server records what really arrived."""

from __future__ import annotations

import pytest

from engine.loop import AgentLoop, AutoApprove
from engine.loop.scripted import ScriptedPlanner

from support.paths import FIXTURES
from support.recording_server import RecordingServer, Reply

PAGE = (FIXTURES / "hostile_type.html").read_bytes()
SECRET = "Hunter2pwX"


class Recorder(RecordingServer):
    """Answers every GET with the page and every POST with a small page; `posts`: (path, body) of each POST."""

    def __init__(self) -> None:
        super().__init__({"GET /*": Reply(PAGE, content_type="text/html; charset=utf-8", length=False),
                          "POST /*": Reply(b"<p>posted</p>", length=False)})
        self.posts = self.view(lambda r: (r.target, r.text()), where=lambda r: r.method == "POST")


@pytest.fixture
def recorder():
    with Recorder() as r:
        yield r


def test_a_line_break_in_a_one_line_field_is_refused_before_anything_is_typed(harness, recorder):
    url = recorder.url("signin")

    async def go(tab):
        snap = await tab.snapshot()
        user = snap.find("textbox", "Username")[0].node_id
        notes = snap.find("textbox", "Notes")[0].node_id
        out = {}
        for text in ("ada\n", "ada\r\nx", "\n"):
            r = await tab.type(user, text)
            out[text] = (r.success, r.error_code, r.message)
        out["value"] = await tab.page.evaluate("document.getElementById('user').value")
        r = await tab.type(notes, "line one\nline two")  # a text area takes line breaks: no form is posted
        out["notes"] = (r.success, await tab.page.evaluate("document.getElementById('notes').value"))
        out["url"] = tab.url
        return out

    out = harness.page(url, go)
    for text in ("ada\n", "ada\r\nx", "\n"):
        ok, code, message = out[text]
        assert not ok and code == "BAD_ARGUMENT", (text, out[text])
        assert "line break" in message and "submit=True" in message and "Nothing was typed" in message
    assert out["value"] == "", "nothing may be typed when the text is refused"
    assert out["notes"] == (True, "line one\nline two")
    assert recorder.posts == [], f"the form must not be posted: {recorder.posts}"
    assert out["url"].endswith("/signin")


def test_a_secret_is_one_insertion_so_no_part_of_it_is_ever_shown(harness, recorder):
    url = recorder.url("signin")

    async def go(tab):
        planner = ScriptedPlanner([
            {"action": "type", "target": {"name": "Username"}, "text": "ada"},
            {"action": "type", "target": {"name": "Password"}, "text": SECRET},
            {"action": "finish", "answer": "typed"}])
        res = await AgentLoop(tab, planner, gate=AutoApprove(), policy="auto", max_steps=4).run("sign in")
        seen = await tab.page.evaluate("window.seen")
        keys = await tab.page.evaluate("window.keys")
        status = await tab.page.evaluate("document.getElementById('status').textContent")
        return res, seen, keys, status

    res, seen, keys, status = harness.page(url, go)
    assert res.status == "success", res.reason
    # the page saw the whole value at once, never a prefix of it
    assert seen == [SECRET], seen
    assert keys == 0, "no key event carries a character of the secret"
    assert status == f"You typed: {SECRET}"
    dumped = res.model_dump_json()
    for n in range(2, len(SECRET) + 1):
        prefix = SECRET[:n]
        assert f"You typed: {prefix}\"" not in dumped and f"Sign in: {prefix}\"" not in dumped, prefix
    assert SECRET not in dumped, "the whole secret is scrubbed from everything the run returns"
