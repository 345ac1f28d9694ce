"""Long real documentation pages: the Python docs as Debian ships them (python3-doc), read the way a
model reads them — prose with inline links and code, highlighted code blocks, a page-body wrapper."""

from __future__ import annotations

import json

import pytest

from engine.names import norm

from support.real_corpus import corpus_installed, entries_text, find_entries, one, open_widget, payload  # noqa: F401

pytestmark = pytest.mark.usefixtures("corpus_installed")

JSON_PAGE = "pydoc/library/json.html"
URLLIB_PAGE = "pydoc/library/urllib.request.html"
# (page, words of the paragraph's plain text, inline links inside it that must stay addressable)
PARAGRAPHS = [
    (JSON_PAGE, "lightweight data interchange format", ["RFC 7159", "RFC 4627", "ECMA-404"]),
    (URLLIB_PAGE, "help in opening URLs", ["urllib.request"]),
]


def _tree_entries(tree_text: str) -> dict[str, dict]:
    """Every entry of the `tree` serialization by id."""
    out, stack = {}, [json.loads(tree_text)]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            if "id" in x:
                out[str(x["id"])] = x
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return out


def _paragraph(snap, words: str):
    ps = [n for n in snap.find(text=words) if n.tag == "p"]
    assert ps, f"no <p> node holds {words!r}"
    return ps[0]


JS_PARAGRAPH = r"""(words) => {
  const p = [...document.querySelectorAll('p')].find((p) => p.textContent.replace(/\s+/g, ' ').includes(words));
  return p ? p.innerText : null;
}"""


@pytest.mark.parametrize("page,words,links", PARAGRAPHS, ids=["json", "urllib.request"])
def test_paragraph_keeps_its_inline_links_words_in_reading_order(harness, server, page, words, links):
    """Defect 12: the paragraph's text is what a reader reads, links and code included, in order;
    the links are still their own addressable nodes."""
    async def body(tab):
        snap = await tab.snapshot()
        p = _paragraph(snap, words)
        dom_text = await tab.page.evaluate(JS_PARAGRAPH, words)
        assert norm(p.text) == norm(dom_text), \
            f"paragraph text differs from what the page shows:\n vigil: {p.text!r}\n page:  {dom_text!r}"
        entry = _tree_entries(snap.serialize("tree").text).get(p.node_id)
        assert entry is not None, f"the paragraph [{p.node_id}] is missing from the tree serialization"
        tree_text = entry.get("text") or entry.get("name") or ""
        shown = norm(tree_text).rstrip("…").rstrip()
        assert len(shown) >= min(len(norm(dom_text)), 150) and norm(dom_text).startswith(shown), (
            f"the tree serialization tears the paragraph apart: {tree_text!r}\n expected it to read: {dom_text!r}")
        inside = {n.node_id for n in p.iter()}
        entries = await payload(tab)
        for name in links:
            hits = [n for n in snap.find(role="link", name=name) if n.node_id in inside]
            assert hits, f"inline link {name!r} is not its own link node inside the paragraph"
            assert find_entries(entries, "link",
                                name), f"link {name!r} is not in the semantic payload: {entries_text(entries)}"

    open_widget(harness, server, page, body)


def test_code_block_is_one_atomic_leaf_with_its_text(harness, server):
    """Defect 13: a highlighted <pre> is one leaf carrying its code, not a node per token summarised
    as 'N more span items'."""
    async def body(tab):
        snap = await tab.snapshot()
        pres = [n for n in snap.nodes() if n.tag == "pre" and ">>> import json" in (n.text or "")]
        assert pres, "no <pre> with the first example was found"
        pre = pres[0]
        dom = await tab.page.evaluate("() => document.querySelector('div.highlight pre').textContent")
        assert norm(pre.text).startswith(norm(dom)[:200]), \
            f"the code block's text differs:\n {pre.text[:200]!r}\n {dom[:200]!r}"
        tree = snap.serialize("tree").text
        entry = _tree_entries(tree).get(pre.node_id)
        assert entry is not None, "the code block is missing from the tree serialization"
        assert not entry.get("children"), f"the code block is split into {len(entry['children'])} children in the tree"
        code = entry.get("text") or entry.get("name") or ""
        assert ">>> import json" in code and "json.dumps(['foo', {'bar': ('baz', None, 1.0, 2)}])" in code, code[:300]
        assert "more span" not in tree, "token spans of a code block are summarised as repeated siblings"

    open_widget(harness, server, JSON_PAGE, body)


@pytest.mark.parametrize("page", [JSON_PAGE, URLLIB_PAGE], ids=["json", "urllib.request"])
def test_page_body_wrapper_is_not_a_clickable(harness, server, page):
    """Defect 11 on docs: the wrappers around the page body (Sphinx's div.body role=main and its
    parents) are not click targets with run-on names."""
    async def body(tab):
        snap = await tab.snapshot()
        mains = snap.find(role="main")
        assert mains, "the docs' role=main body is not in the snapshot"
        wrappers = []
        q = mains[0]
        while q is not None:
            wrappers.append(q)
            q = q.parent
        clickable = [w.label() for w in wrappers if w.interactive]
        assert not clickable, f"page-body wrappers sent as clickables: {clickable}"
        h1 = snap.find(role="heading")[0].name if snap.find(role="heading") else ""
        run_on = [e for e in await payload(tab)
                  if e.get("r") == "clk" and len(e.get("n") or "") >= 45 and h1[:20] and h1[:20] in (e.get("n") or "")]
        assert not run_on, f"run-on clickables: {run_on}"

    open_widget(harness, server, page, body)
