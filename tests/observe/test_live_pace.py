"""The live view's pace: the gap after a snapshot is four times its cost (at most a fifth of the time spent
snapshotting) — except after the first walk of a document, a full walk the next (incremental) ones will
not repeat: a cold walk after a page load does not hold the view back (it was marked stale for 3 s on a
page that had settled)."""

from __future__ import annotations

from engine.bench import generate_page
from engine.observe.live import LiveFollower


def test_a_documents_first_walk_does_not_set_the_pace_but_a_later_full_walk_does(harness, tmp_path):
    page = tmp_path / "big.html"
    page.write_text(generate_page(5000, seed=3), encoding="utf-8")

    async def go(tab):
        forced = {"on": False}

        async def take():
            return await tab.snapshot(force=forced["on"])

        f = LiveFollower(tab.target, take)
        await f.watch.start()
        tab.invalidate()
        await f._snapshot()  # the first walk of this document
        first = (f._last.walk.mode, f._last.walk.reason, f.stats.costs_ms[-1], f.gap())
        forced["on"] = True
        await f._snapshot()  # a full walk for another reason: it sets the pace
        second = (f._last.walk.mode, f.stats.costs_ms[-1], f.gap())
        await f.watch.stop()
        return first, second, f.config.min_gap_s

    (mode1, why1, cost1, gap1), (mode2, cost2, gap2), min_gap = harness.page(page.as_uri(), go)
    assert mode1 == "full" and why1.startswith("first walk"), why1
    assert cost1 > 60 and abs(gap1 - min_gap) < 1e-9, (cost1, gap1)  # walked in full, yet the shortest gap
    assert mode2 == "full" and cost2 > 60
    assert gap2 > min_gap and gap2 >= min(3.0, 2 * cost2 / 1000), (cost2, gap2)  # smoothed: half of 4x at least
