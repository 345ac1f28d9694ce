"""The differential check over the whole real-app corpus: for every control (interactive role or
focusable) in Chromium's own accessibility tree, Vigil's node for the same element has the same
role family and name — or the difference is in tests/fixtures/real/ax_allowlist.json with its
reason. One browser, each corpus page opened once. `python tests/ax_diff.py` prints the
agreement per library."""

from __future__ import annotations

import pytest
from ax_diff import ALLOWLIST, CORPUS_DIR, Pair, allow_key, corpus_pairs, family, load_allowlist, names_agree, report

from real_corpus import CORPUS, corpus_installed  # noqa: F401 - a fixture


def test_pair_rules():
    """The comparison itself: role families, normalised names, a cut name on its prefix."""
    assert family("searchbox") == family("textbox") and family("clickable") == family("generic")
    assert family("doc-noteref") == "link" and family("switch") != family("checkbox")
    assert names_agree("Accept  Terms", "accept terms") and not names_agree("Email", "")
    assert names_agree("x" * 300, "x" * 250 + "…") and not names_agree("y" * 300, "x" * 250 + "…")
    p = Pair("a.html", "checkbox", "Accept terms", "checkbox", "", "button")
    assert not p.agrees() and "Chromium checkbox" in p.text()
    assert not Pair("a.html", "button", "Go", None, "", "div").agrees()


@pytest.mark.usefixtures("corpus_installed")
def test_vigil_names_controls_as_chromium_does(harness, server):
    allowlist = load_allowlist()
    allowed = {allow_key(e) for e in allowlist}
    assert len(allowed) == len(allowlist), f"{ALLOWLIST}: an entry is listed twice"

    async def go():
        return await corpus_pairs(harness.browser, server.url("real/"), CORPUS)

    by_page = harness.run(go(), 300)
    assert set(by_page) == {w["page"] for w in CORPUS["widgets"]}
    pairs = [p for ps in by_page.values() for p in ps]
    assert len(pairs) > 100, f"only {len(pairs)} controls found in Chromium's tree: is the corpus set up?"
    differ = [p for p in pairs if not p.agrees() and p.key() not in allowed]
    seen = {p.key() for p in pairs if not p.agrees()}
    stale = [e for e in allowlist if allow_key(e) not in seen]
    summary = report(by_page, CORPUS, allowed)
    assert not differ, (f"Vigil's role or name differs from Chromium's accessibility tree (fix it, or add it "
                        f"to {ALLOWLIST.relative_to(CORPUS_DIR.parents[2])} with the reason):\n  "
                        + "\n  ".join(p.text() for p in differ) + "\n" + summary)
    assert not stale, ("allowed differences that no longer occur (remove them from the allow-list):\n  "
                       + "\n  ".join(f"{e['page']}: {e['chromium']} vs {e['vigil']}" for e in stale))
