"""The bundled demo shop (assets/demo) tells the truth about its own search: the products it says it shows are
the products on screen (issue 40, item 13: "Showing 1 product" over all 40, `.product{display:grid}` beating
`[hidden]`). Real Chromium on the shop served over HTTP, the search typed and submitted with real keys."""

from __future__ import annotations

from engine.local_server import serve_directory

from support.paths import ROOT

SHOWN = "[...document.querySelectorAll('.product')].filter(li => li.getClientRects().length > 0).length"


def test_the_search_shows_what_it_says(harness):
    async def search(tab) -> list[tuple[str, int]]:
        seen = []
        for words in ("desk lamp", "towel", "zeppelin", ""):
            await tab.page.fill("#search-input", words)
            await tab.page.press("#search-input", "Enter")
            said = await tab.page.text_content("#product-count")
            seen.append((said, await tab.page.evaluate(SHOWN)))
        return seen

    with serve_directory(ROOT / "assets" / "demo") as base:
        seen = harness.page(base + "index.html", search)
    assert seen == [("Showing 1 product", 1), ("Showing 2 products", 2), ("Showing 0 products", 0),
                    ("Showing 40 products", 40)]
