"""The benches' new parts on small real pages: the re-snapshot row of `vigil bench snapshot` (its walks are
incremental, and only the changed subtree is walked again), the renderer memory it reports, and the
row diff the walker sends (engine.snapshot.incremental.patch)."""

from __future__ import annotations

import pytest

from engine.bench import generate_page
from engine.bench.snapshot import _renderer_peaks_mb, _resnapshot
from engine.snapshot.incremental import patch


@pytest.fixture(scope="module")
def small_page(tmp_path_factory):
    from engine.local_server import serve_directory

    d = tmp_path_factory.mktemp("bench")
    (d / "page.html").write_text(generate_page(600, seed=5), encoding="utf-8")
    with serve_directory(str(d)) as base:
        yield base + "page.html"


def test_resnapshot_row_is_incremental_and_walks_little(harness, small_page):
    async def body(tab):
        snap = await tab.snapshot(force=True)
        return len(snap.nodes()), await _resnapshot(tab, 3)

    nodes, row = harness.page(small_page, body)
    assert row["modes"] == {"incremental": 6}, row  # 3 rounds, each painted and at once
    assert 0 < row["dirty_p50"] < nodes / 5, f"a one-node change re-walked {row['dirty_p50']} of {nodes} rows"
    for k in ("incremental_p50_ms", "full_p50_ms", "playwright_aria_p50_ms"):
        assert row[k] > 0 and row["at_once"][k] > 0, row


def test_renderer_peak_rss_is_read(harness, small_page):
    async def body(tab):
        await tab.snapshot()
        return _renderer_peaks_mb()

    peaks = harness.page(small_page, body)
    assert peaks and peaks[0] > 10, f"no renderer of this process found in /proc: {peaks}"


def test_patch_rebuilds_rows_from_runs_and_changes():
    held = [[-1, "1", "html"], [0, "2", "body"], [1, "3", "p"], [1, "4", "div"]]
    # row "3" removed, a new row at the end; "4" keeps its body but its parent index is now sent anew
    diff = {"base": 7, "n": 4, "par": [-1, 0, 1, 1], "same": [0, 0, 2, 2, 3, 1], "ch": [3]}
    rows = patch(held, diff, [[1, "5", "span"]])
    assert rows == [[-1, "1", "html"], [0, "2", "body"], [1, "4", "div"], [1, "5", "span"]]
    assert rows[0] is held[0], "unchanged rows are reused, not copied"
    with pytest.raises(ValueError):
        patch(held, {"n": 3, "par": [-1, 0, 1], "same": [0, 0, 2], "ch": []}, [])


@pytest.fixture(scope="module")
def like_sites(tmp_path_factory):
    """The bench's pages built like real sites, small: a style sheet from another origin, a form, file://."""
    from engine.bench.snapshot import shop_css
    from engine.bench.snapshot_pages import (
        BUTTON_ATTR_CHANGE,
        PARAGRAPH_CHANGE,
        PRICE_CHANGE,
        SHOP_SIBLING_CSS,
        docs_page,
        generate_form_page,
    )
    from engine.local_server import serve_directory

    pages = tmp_path_factory.mktemp("bench-pages")
    sheets = tmp_path_factory.mktemp("bench-sheets")
    (sheets / "shop.css").write_text(shop_css() + SHOP_SIBLING_CSS, encoding="utf-8")
    (pages / "form.html").write_text(generate_form_page(300), encoding="utf-8")
    docs = docs_page("library/json.html")
    with serve_directory(str(sheets)) as other, serve_directory(str(pages)) as base:
        (pages / "xo.html").write_text(generate_page(800, seed=5, css_href=f"{other}shop.css"), encoding="utf-8")
        yield {"xorigin": (base + "xo.html", PRICE_CHANGE), "form": (base + "form.html", BUTTON_ATTR_CHANGE),
               "docs": (docs.as_uri() if docs else None, PARAGRAPH_CHANGE)}


@pytest.mark.parametrize("page", ["xorigin", "form", "docs"])
def test_bench_change_on_pages_built_like_sites_is_incremental(harness, like_sites, page):
    """A style sheet from another origin, a form of 300 rows, a file:// documentation page: after the bench's
    one-node change a re-snapshot is incremental, walks a few rows (not the page, nor every form control) and
    equals a forced full walk."""
    from engine.bench.snapshot import _PAINTED
    from engine.snapshot.stored import _row

    url, change = like_sites[page]
    assert url, "Debian's python3-doc is not installed (bash scripts/setup.sh installs it)"

    async def body(tab):
        snap = await tab.snapshot(force=True)
        walks = []
        for k in range(3):
            await tab.page.evaluate(change, k)
            await tab.page.evaluate(_PAINTED)
            tab.invalidate()
            walks.append((await tab.snapshot()).walk)
        same = [_row(n) for n in (await tab.snapshot()).nodes()] == [_row(n) for n in
                                                                      (await tab.snapshot(force=True)).nodes()]
        return len(snap.nodes()), walks, same

    nodes, walks, same = harness.page(url, body, timeout=60)
    assert same, "the last incremental snapshot ≠ a forced full walk"
    for w in walks[1:]:  # (the first may wait for the browser to read the cross-origin sheets)
        assert w.mode == "incremental", w.describe()
        assert 0 < w.dirty < max(12, nodes / 20), f"a one-node change re-walked {w.dirty} of {nodes} rows"
