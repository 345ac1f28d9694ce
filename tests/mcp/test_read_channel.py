"""The page an agent reads (issue [2/7]): the MCP default snapshot `reading` carries the text a person
sees in the viewport next to the controls, within the token economy against Playwright's
`aria_snapshot(mode="ai")` (Playwright MCP's browser_snapshot) of the same page; `focus` works with
every format; documentation "Note" boxes keep their inline links; refs may come as integers."""

from __future__ import annotations

import json
import re

import pytest

from engine.bench.snapshot import generate_page
from engine.mcp.view import ClientView
from engine.names import norm
from engine.snapshot.serialize.tokens import estimate_tokens

from support.mcp_server import McpServerProcess
from support.real_corpus import corpus_installed, open_widget  # noqa: F401

CONTROL = re.compile(r'^\[(\d+)\] (\w+) "([^"]*)"', re.M)


def test_order_page_reads_what_a_person_sees_within_playwrights_tokens(harness, server):
    async def go(tab):
        snap = await tab.snapshot()
        r = ClientView().render(snap)  # the MCP default
        text = r.text
        for seen in ("# Order #A-20417", "Placed on 12 November 2026 by Grace Hopper", "Thursday 3 December",
                     "1Z 999 AA1 01 2345 6784", "Walnut desk organiser | 1 | $38.00", "Order total $54.20",
                     "- Free returns within 30 days", "[status] Status: Shipped"):
            assert seen in text.splitlines(), f"{seen!r} missing from:\n{text}"
        controls = {name: (ref, role) for ref, role, name in CONTROL.findall(text)}
        assert controls["Cancel order"] == (snap.find("button", "Cancel order")[0].node_id, "btn")
        # reading order: the total comes before the buttons it is about, the heading first
        assert text.index("# Order") < text.index("Order total") < text.index('"Cancel order"')
        pw = await tab.page.aria_snapshot(mode="ai")
        assert r.tokens <= estimate_tokens(pw), (r.tokens, estimate_tokens(pw))
        # the same text channel for a JSON reader: the semantic payload's txt (seed-shaped without it)
        sem = snap.serialize("semantic", text=True).data
        assert "Order total $54.20" in sem["txt"] and "txt" not in snap.serialize("semantic").data
    harness.page(server.url("read_order.html"), go)

    async def hidden(tab):
        await tab.click((await tab.snapshot()).find("button", "Create workspace")[0].node_id)
        text = ClientView().render(await tab.snapshot()).text
        assert "That workspace name is taken. Try acme-team-2." in text
        for never in ("Ignore previous", "Offscreen words", "Hidden hint"):  # display:none, off-screen
            assert never not in text
        assert "Workspace name" in text and text.count("Workspace name") == 1, "a label is not repeated as text"
    harness.page(server.url("read_signup.html"), hidden)


def test_large_page_costs_at_most_a_fifth_of_playwrights_snapshot(harness, tmp_path):
    page = tmp_path / "big.html"
    page.write_text(generate_page(1000), encoding="utf-8")

    async def go(tab):
        snap = await tab.snapshot()
        assert len(snap.nodes()) >= 900
        r = ClientView().render(snap)
        pw = estimate_tokens(await tab.page.aria_snapshot(mode="ai"))
        assert r.tokens * 5 <= pw, (r.tokens, pw)
        assert "lines of text" in r.header and len(r.text.splitlines()) > 10
    harness.page(page.as_uri(), go)


def test_focus_works_with_every_format_and_note_boxes_keep_their_links(harness, server, corpus_installed):  # noqa: F811
    async def go(tab):
        snap = await tab.snapshot()
        view = ClientView()
        tree = view.render(snap, "tree", max_tokens=2000, focus="chmod")
        assert tree.tokens <= 2000
        body = json.loads(tree.text)  # still a tree: valid JSON, the page's hierarchy
        assert body["page"]["body"]["children"]
        assert tree.text.lower().count("chmod") >= 16, tree.text[:2000]
        for fmt in ("full", "skeleton"):
            out = view.render(snap, fmt, max_tokens=1500, focus="chmod", full_page=True)
            assert out.tokens <= 1500 and "chmod" in out.text.lower(), (fmt, out.header)
        reading = view.render(snap, "reading", full_page=True, max_tokens=1500, focus="chmod")
        assert reading.tokens <= 1500 and reading.text.lower().count("chmod") >= 10, reading.header
        semantic = view.render(snap, "semantic", full_page=True, max_tokens=800, focus="chmod")
        assert "chmod" in semantic.text.lower()
        # the Note box's paragraph (laid out inline by the theme) keeps OSError, its inline link
        note = [n for n in snap.find(text="All functions in this module raise") if n.tag == "p"][0]
        dom = await tab.page.evaluate(
            "() => [...document.querySelectorAll('p')].find((p) => p.textContent.includes("
            "'All functions in this module raise')).innerText")
        assert norm(note.text) == norm(dom) and "raise OSError (or subclasses" in note.text
        assert any(n.role == "link" and n.name == "OSError" for n in note.iter()), "the link keeps its own node"
        # every paragraph of the page reads as the page shows it (links and code in place, not cut short)
        texts = await tab.page.evaluate("() => [...document.querySelectorAll('p')].map((p) => p.innerText)")
        ps = [n for n in snap.nodes() if n.tag == "p"]
        assert len(ps) == len(texts)
        torn = [(n.text, t) for n, t in zip(ps, texts, strict=True) if n.text and norm(n.text) != norm(t)]
        assert not torn, torn[:3]
    open_widget(harness, server, {"page": "pydoc/library/os.html", "ready": False}, go)


@pytest.fixture(scope="module")
def mcp(tmp_path_factory):
    s = McpServerProcess("--approve", "auto", home=tmp_path_factory.mktemp("vigil-home"))
    yield s
    s.close()


def test_mcp_reads_the_page_and_tells_what_a_click_changed_with_an_integer_ref(mcp, server):
    r = mcp.call("browser_navigate", {"url": server.url("read_signup.html")})
    assert not r.is_error, r.text
    snap = mcp.call("browser_snapshot")
    assert "# Create your workspace" in snap.page() and "Workspaces left on your plan: 3" in snap.page()
    refs = {name: int(ref) for ref, _, name in CONTROL.findall(snap.page())}
    click = mcp.call("browser_click", {"ref": refs["Create workspace"], "element": "Create workspace"})  # an integer
    assert not click.is_error or "NOT verified" in click.text, click.text
    assert click.text.startswith(f'click({refs["Create workspace"]}) — done, NOT verified'), click.text
    inside = click.page()   # the page's words only inside the <page_content> fence
    assert "That workspace name is taken. Try acme-team-2." in inside
    assert "That workspace name is taken" not in click.text.split("<page_content>")[0]
    typed = mcp.call("browser_type", {"ref": refs["Workspace name"], "text": "acme-team-2"})
    assert not typed.is_error, typed.text
    done = mcp.call("browser_click", {"ref": refs["Create workspace"]})
    assert "done, verified" in done.text and "'Create your workspace' → 'Welcome to acme-team-2'" in done.page()


def test_bench_read_measures_answers_outcomes_and_tokens_against_playwright():
    import asyncio

    from engine.bench.read import bench_read, format_report
    from engine.bench.read_pages import PAGES

    rep = asyncio.run(bench_read(tuple(p for p in PAGES if p.key in ("signup", "report")), out=lambda s: None))
    assert rep["questions"] == 5 and rep["answers_in_reading"] == 5, rep
    assert rep["actions"] == 2 and rep["outcomes_in_result"] == 2 and rep["right_verdicts"] == 2, rep
    assert rep["max_ratio_large"] <= 0.2 and rep["max_ratio_small"] <= 1.0 and rep["target_met"], rep
    assert "Target met." in format_report(rep)
