"""SnapshotCache: a page's current snapshot, captured again only when something changed.

A snapshot is trusted while the page target's generation is the one it was taken at (no
navigation, no context or frame change, no action since) and every frame's document still has the
version the walk saw (its mutation counter, scroll, viewport and address — `capture.walk_key`).
A walk that saw an animation or transition under way is never reused: the boxes it read were moving
and no mutation marks when they stop (the next walk re-reads the animated subtrees, incrementally).
A walk again that changed nothing the snapshot holds (every node reused, the same page around them)
gives back the same snapshot object: the loop then knows the page as the last step left it.
The last few snapshots are kept for ghost-match recovery of IDs that vanished."""

from __future__ import annotations

import asyncio
import collections
import json
import time

from engine.browser.target import PageTarget
from engine.errors import VigilError
from engine.snapshot.capture import capture
from engine.snapshot.dom_snapshot import DomSnapshot
from engine.snapshot.incremental import RowMemo

RECENT = 4  # snapshots kept for ghost-match recovery
RECHECK_AT_ONCE_S = 0.03
"""A snapshot taken or checked less than this long ago (about two frames) is checked again without
waiting for the next frame (a step asks two or three times in a row): mutations, the page's scroll, size
and address, and the offsets of the scroll containers the last walk found are read as they are."""


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
        self._checked_at = -1e9  # time.monotonic() when the snapshot was last taken or checked after a frame

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
                # checked (or taken) a moment ago: the frame that delivers scroll events has already
                # been waited for, so the versions are read at once (a step asks two or three times in a row)
                at_once = time.monotonic() - self._last_frame() < RECHECK_AT_ONCE_S
                keys = await self._page_versions(wait_frame=not at_once)
                if keys is not None and keys == self._keys:
                    if not at_once:
                        self._checked_at = time.monotonic()
                    return self._snapshot
            gen = self.page.generation
            prev = self._snapshot
            taken = await capture(self.page, max_nodes=max_nodes, timeout=timeout, memo=self._rows,
                                  full=force or not self.incremental)
            snap = taken.snapshot
            if not force and prev is not None and _same(prev, snap):
                snap = prev  # walked again, and nothing it holds changed: still the same snapshot (and picture)
            else:
                self.recent.append(snap)
            self._snapshot, self._keys, self._generation = snap, taken.walk_keys, gen
            self._checked_at = time.monotonic()
            return snap

    def _last_frame(self) -> float:
        """When a frame was last waited for: by this cache's own check, or by a settle's two painted frames.
        Those are the main frame's, but every frame of a page is given its frames by the same begin-frame
        source, so the child frames had theirs too (a throttled one gets none either way: the wait below
        gives up after 50 ms and reads it as it is)."""
        return max(self._checked_at, self.page.painted_at)

    async def _frame_version(self, frame_id: str, wait_frame: bool = True) -> tuple | None:
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
            # (read at once, the scroll containers of the last walk are looked at directly: a scroll the
            # page's script made a moment ago has not fired its event yet)
            now = ("(() => { const s = window[" + json.dumps(page.key) + "]; if (!s) return null; "
                   "const p = s.inc && s.inc.prev; if (p && p.anims && p.anims.length) return null; "
                   "if (p) for (const [el, l, t] of p.scrollers) "
                   "if (el.isConnected && (el.scrollLeft !== l || el.scrollTop !== t)) return null; "
                   "return [s.ver, scrollX, scrollY, innerWidth, innerHeight, location.href]; })")
            expr = (f"new Promise(res => {{ let done = false; const fin = () => {{ if (!done) {{ done = true; "
                    f"res({now}()); }} }}; requestAnimationFrame(() => setTimeout(fin, 0)); setTimeout(fin, 50); }})"
                    if wait_frame else now + "()")
            r = await page.cdp.send("Runtime.evaluate", {"expression": expr, "contextId": ctx, "returnByValue": True,
                                                         "awaitPromise": wait_frame}, session_id=sid, timeout=5)
            v = r.get("result", {}).get("value")
            return tuple(v) if v else None
        except VigilError:
            return None

    async def _page_versions(self, wait_frame: bool = True) -> dict[str, tuple] | None:
        """Every frame's document version (all frames at once), or None when one cannot be read."""
        ids = list(self.page.frames)
        found = await asyncio.gather(*(self._frame_version(fid, wait_frame) for fid in ids))
        if any(v is None for v in found):
            return None
        return {fid: v for fid, v in zip(ids, found, strict=True) if v is not None}


def _same(prev: DomSnapshot, new: DomSnapshot) -> bool:
    """Does an incremental walk's `new` snapshot hold exactly what `prev` holds? It does when it reused every node
    of the last tree (its root is the same object: no row changed its facts, parent or depth — an animation that
    only changed colours, a mutation that changed nothing the walk reads) and the page around it is the same."""
    return (new.root is not None and new.root is prev.root and len(new) == len(prev)
            and new.generation == prev.generation and new.context == prev.context and new.frames == prev.frames
            and new.stats.truncated == prev.stats.truncated)
