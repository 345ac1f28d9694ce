"""Write the stored snapshots in tests/fixtures/snapshots/ from real pages in a real Chromium.

The browser-free tests (the loop's decisions on `fake_page.FakePage`, the node-tree models) read
these files instead of starting a browser. They are ordinary snapshots as the session store keeps
them (`engine.snapshot.stored`); run this again when the snapshot format changes:

    .venv/bin/python tests/support/make_snapshots.py
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(TESTS.parent), str(TESTS)]

from engine import launch  # noqa: E402
from engine.snapshot.stored import snapshot_bytes  # noqa: E402

from support.servers import FixtureServer  # noqa: E402

OUT = TESTS / "fixtures" / "snapshots"

# name → (fixture page, [script to run before each further snapshot]); one tab per page, so the IDs of
# elements that stay are the same in every snapshot of it
PAGES: dict[str, tuple[str, list[tuple[str, str | None]]]] = {
    "loop_form": ("loop_form.html", [("loop_form", None), ("loop_form_late", "addLater(0, 'Late button')"),
                                     ("loop_form_help", "document.getElementById('helpbtn').click()")]),
    "loop_done": ("loop_done.html?email=ada%40example.com&country=de&terms=on", [("loop_done", None)]),
    "labels": ("labels.html", [("labels", None)]),
    "rerender": ("rerender.html", [("rerender", None), ("rerender_inserted", "insertOnTop(2)")]),
}


async def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    server = FixtureServer()
    try:
        async with launch() as browser:
            for page, shots in PAGES.values():
                tab = await browser.new_tab(server.url(page))
                for name, script in shots:
                    if script:
                        await tab.page.evaluate(script)
                        await asyncio.sleep(0.3)
                        tab.invalidate()
                    await tab.wait_stable()
                    snap = await tab.snapshot()
                    (OUT / f"{name}.json").write_bytes(snapshot_bytes(snap))
                    print(f"{name}: {len(snap)} nodes, {snap.stats.interactive} interactive")
                await tab.close()
    finally:
        server.close()


if __name__ == "__main__":
    asyncio.run(main())
