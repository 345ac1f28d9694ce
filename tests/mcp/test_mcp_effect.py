"""An MCP client is told what each step was judged to do: the result of an acting tool carries one line
`effect: …` (the step's effect as the page computed it before input), inside the page-content fence since
it quotes the page — for a step that ran and for one refused because it needs a person. A step that puts no
input into the page has none. Real server subprocess, real Chromium, the SDK's client; the fixture server's
log is the truth about what reached it.
"""

from __future__ import annotations

import pytest

from support.mcp_server import McpServerProcess, items_of, ref


@pytest.fixture(scope="module")
def auto_safe(tmp_path_factory):
    s = McpServerProcess("--approve", "auto-safe", home=tmp_path_factory.mktemp("vigil-home"))
    yield s
    s.close()


def _fenced_lines(reply) -> list[str]:
    return reply.page().splitlines()


def test_a_refused_step_says_its_effect_beside_why_it_needs_a_person(auto_safe, server):
    items = items_of(auto_safe.call("browser_navigate", {"url": server.url("effects.html")}))
    mark = server.log.mark()
    # named "Show tips" by its label, it is the "Go" button of the workspace's delete form
    r = auto_safe.call("browser_click", {"ref": ref(items, "Show tips")})
    assert r.is_error and "NOT RUN" in r.text, r.text
    lines = _fenced_lines(r)
    assert "effect: submits 'Go' (form 'Delete workspace') — POST /workspaces/42/delete" in lines, r.text
    assert any(line.startswith("needs a person because it: ") for line in lines), r.text
    assert "effect:" not in r.text.split("<page_content>")[0], "the effect quotes the page: inside the fence"
    r = auto_safe.call("browser_select_option", {"ref": ref(items, "Bulk actions"), "values": ["Delete selected"]})
    assert r.is_error and "effect: selects 'Delete selected' in 'Bulk actions'" in _fenced_lines(r), r.text
    assert [q.path for q in server.log.since(mark) if q.method == "POST"] == [], "nothing was submitted"


def test_a_step_that_ran_says_its_effect_once(auto_safe, server):
    items = items_of(auto_safe.call("browser_navigate", {"url": server.url("effects.html")}))
    r = auto_safe.call("browser_check", {"ref": ref(items, "Remember me")})
    assert not r.is_error and "done, verified" in r.text, r.text
    lines = _fenced_lines(r)
    assert lines[0] == "effect: checks 'Remember me'", r.text
    assert sum(line.startswith("effect: ") for line in lines) == 1
    r = auto_safe.call("browser_type", {"ref": ref(items, "Search"), "text": "boots"})
    assert not r.is_error and _fenced_lines(r)[0] == "effect: types 'boots' into 'Search'", r.text


def test_a_step_that_puts_no_input_into_the_page_has_no_effect_line(auto_safe, server):
    r = auto_safe.call("browser_navigate", {"url": server.url("effects.html")})
    assert not r.is_error and "effect:" not in r.text, r.text
    r = auto_safe.call("browser_scroll", {"direction": "down"})  # the page is short: it ran, and did not move
    assert "result: The page did not move" in r.page() and "effect:" not in r.text, r.text
