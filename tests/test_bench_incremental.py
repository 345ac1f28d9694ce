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
