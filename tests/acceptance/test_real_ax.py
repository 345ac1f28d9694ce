"""The differential check over the whole real-app corpus: for every control (interactive role or
focusable) in Chromium's own accessibility tree, Vigil's node for the same element has the same
role family and name — or the difference is in tests/fixtures/real/ax_allowlist.json with its
reason. Each corpus page is read in its one load-time open per worker (real_corpus.swept).
`python tests/support/ax_diff.py` prints the agreement per library."""

from __future__ import annotations

import pytest

from support.ax_diff import (
    ALLOWLIST,
    CORPUS_DIR,
    Pair,
    allow_key,
    family,
    load_allowlist,
    names_agree,
    page_pairs,
    report,
)
from support.real_corpus import CORPUS, corpus_installed, page_params, sweep_check, swept  # noqa: F401 - a fixture


def test_pair_rules():
    """The comparison itself: role families, normalised names, a cut name on its prefix."""
    assert family("searchbox") == family("textbox") and family("clickable") == family("generic")
    assert family("doc-noteref") == "link" and family("switch") != family("checkbox")
    assert names_agree("Accept  Terms", "accept terms") and not names_agree("Email", "")
    assert names_agree("x" * 300, "x" * 250 + "…") and not names_agree("y" * 300, "x" * 250 + "…")
    p = Pair("a.html", "checkbox", "Accept terms", "checkbox", "", "button")
    assert not p.agrees() and "Chromium checkbox" in p.text()
    assert not Pair("a.html", "button", "Go", None, "", "div").agrees()


@sweep_check("ax pairs", changes_page=True)  # (it marks the elements with their IDs for one read of the DOM)
async def _ax_pairs_at_load(tab, page, snap):
    return await page_pairs(tab, page)


@pytest.mark.usefixtures("corpus_installed")
@pytest.mark.parametrize("page", page_params())
def test_vigil_names_controls_as_chromium_does(harness, server, page):
    allowlist = load_allowlist()
    allowed = {allow_key(e) for e in allowlist}
    assert len(allowed) == len(allowlist), f"{ALLOWLIST}: an entry is listed twice"
    pairs = swept(harness, server, page, "ax pairs")
    assert pairs, f"{page}: no control found in Chromium's tree: is the corpus set up?"
    differ = [p for p in pairs if not p.agrees() and p.key() not in allowed]
    seen = {p.key() for p in pairs if not p.agrees()}
    stale = [e for e in allowlist if e["page"] == page and allow_key(e) not in seen]
    summary = report({page: pairs}, CORPUS, allowed)
    assert not differ, (f"Vigil's role or name differs from Chromium's accessibility tree (fix it, or add it "
                        f"to {ALLOWLIST.relative_to(CORPUS_DIR.parents[2])} with the reason):\n  "
                        + "\n  ".join(p.text() for p in differ) + "\n" + summary)
    assert not stale, ("allowed differences that no longer occur (remove them from the allow-list):\n  "
                       + "\n  ".join(f"{e['page']}: {e['chromium']} vs {e['vigil']}" for e in stale))


def test_the_allowlist_names_only_corpus_pages():
    pages = {w["page"] for w in CORPUS["widgets"]}
    assert all(e["page"] in pages for e in load_allowlist()), "an allowed difference names a page not in the corpus"
