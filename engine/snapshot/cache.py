"""SnapshotCache: a page's current snapshot, captured again only when something changed.

A snapshot is trusted while the page target's generation is the one it was taken at (no
navigation, no context or frame change, no action since) and every frame's document still has the
version the walk saw (its mutation counter, scroll, viewport and address — `capture.walk_key`).
The last few snapshots are kept for ghost-match recovery of IDs that vanished."""

from __future__ import annotations

import asyncio
import collections
import json

from engine.browser.target import PageTarget
from engine.errors import VigilError
from engine.snapshot.capture import capture
from engine.snapshot.dom_snapshot import DomSnapshot
from engine.snapshot.incremental import RowMemo

RECENT = 4  # snapshots kept for ghost-match recovery


class SnapshotCache:
    def __init__(self, page: PageTarget) -> None:
        self.page = page
        self._lock = asyncio.Lock()
        self._snapshot: DomSnapshot | None = None
        self._generation = -1  # the page's generation when the cached snapshot was taken
        self._keys: dict[str, tuple] | None = None  # per frame: the document versions the snapshot saw
        self.recent: collections.deque[DomSnapshot] = collections.deque(maxlen=RECENT)
        self._rows = RowMemo()  # what each frame's walker last sent: the base of its next diff
        self.incremental = True  # re-walk only what changed (force=True always walks everything)

    @property
    def latest(self) -> DomSnapshot | None:
        """The last snapshot taken (it may be out of date; `snapshot()` checks)."""
        return self._snapshot

    async def snapshot(self, *, force: bool = False, max_nodes: int | None = None,
                       timeout: float = 30.0) -> DomSnapshot:
        """The current snapshot: reused while nothing changed in the page, else captured afresh."""
        async with self._lock:
            self.page.check_alive()
            if not force and self._snapshot is not None and self._generation == self.page.generation:
                keys = await self._page_versions()
                if keys is not None and keys == self._keys:
                    return self._snapshot
            gen = self.page.generation
            taken = await capture(self.page, max_nodes=max_nodes, timeout=timeout, memo=self._rows,
                                  full=force or not self.incremental)
            self._snapshot, self._keys, self._generation = taken.snapshot, taken.walk_keys, gen
            self.recent.append(taken.snapshot)
            return taken.snapshot

    async def _frame_version(self, frame_id: str) -> tuple | None:
        """What `capture.walk_key` would say of this frame's document now, or None when it cannot be
        read (then the cache is not trusted)."""
        page = self.page
        try:
            if frame_id == page.main_frame_id:
                sid, ctx = await page.context_for(frame_id, timeout=1.0)
            else:  # a child frame without a live document is a reason to walk again, not to wait
                ft = page.frames.get(frame_id)
                if ft is None or ft.context_id is None:
                    return None
                sid, ctx = ft.session_id, ft.context_id
            # Scroll and resize events arrive with the next frame: let one pass (50 ms at most)
            # so a programmatic scroll of an inner container is seen before the cache is trusted.
            expr = ("new Promise(res => { const k = " + json.dumps(page.key) + "; const v = () => { const s = "
                    "window[k]; return s ? [s.ver, scrollX, scrollY, innerWidth, innerHeight, location.href] : null; "
                    "}; let done = false; const fin = () => { if (!done) { done = true; res(v()); } }; "
                    "requestAnimationFrame(() => setTimeout(fin, 0)); setTimeout(fin, 50); })")
            r = await page.cdp.send("Runtime.evaluate", {"expression": expr, "contextId": ctx, "returnByValue": True,
                                                         "awaitPromise": True}, session_id=sid, timeout=5)
            v = r.get("result", {}).get("value")
            return tuple(v) if v else None
        except VigilError:
            return None

    async def _page_versions(self) -> dict[str, tuple] | None:
        """Every frame's document version (all frames at once), or None when one cannot be read."""
        ids = list(self.page.frames)
        found = await asyncio.gather(*(self._frame_version(fid) for fid in ids))
        if any(v is None for v in found):
            return None
        return {fid: v for fid, v in zip(ids, found, strict=True) if v is not None}
