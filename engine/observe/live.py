"""Following a page between steps: `PageWatch` (the page says it changed) and `LiveFollower` (snapshots
taken when it did, throttled).

The signal comes from the page itself, cheaply. Every frame of the tab gets a small script in an isolated
world of Vigil's own (`Page.addScriptToEvaluateOnNewDocument` with a world name; the page's scripts cannot
see it, remove it or call it): a MutationObserver on the document, and capture listeners for scroll,
resize, input, focus, and the end of CSS transitions and animations (a menu that slides open changes no
DOM when its slide ends). A change only sets a bit; once per animation frame, and only while armed, the
world reports the bits through a CDP binding exposed to that world alone (`Runtime.addBinding` with
`executionContextName`) and disarms itself. Python arms it again right before it takes the next snapshot.
So a page that changes sixty times a second costs one binding call per snapshot, not sixty, and a still
page costs nothing at all: no polling from Python, no timer in the page.

Why not the alternatives: polling the page-side version counter costs a round trip every poll and is as
late as the poll interval; CDP's DOM domain (`DOM.childNodeInserted`…) needs `DOM.getDocument` and then
streams every node of every mutation through the relay (thousands of events a second on an animated page)
and says nothing of scrolls or transitions; LayerTree events fire for every composited frame.

`LiveFollower` turns those signals into snapshots: at most one every `min_gap_s`, and never more than
`max_share` of the time spent snapshotting (the gap after a snapshot grows with its recent cost — the walk
and showing it, not time spent waiting for another caller's snapshot — up to `max_gap_s`, so a 16k-node
page is snapshotted less often than a form), never while `may_run()` says no (a step is running: the loop
owns the page). The snapshot itself is the caller's (`take`: the tab's own, incremental, cached one)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from engine.browser.target import PageTarget
from engine.errors import VigilError

log = logging.getLogger("vigil.observe.live")

# what changed, as bits the page reports (several may come in one report)
MUTATION, SCROLL, RESIZE, MOTION, INPUT, NEW_DOCUMENT, MOVING = 1, 2, 4, 8, 16, 32, 64
REASONS = {MUTATION: "mutation", SCROLL: "scroll", RESIZE: "resize", MOTION: "motion", INPUT: "input",
           NEW_DOCUMENT: "new document", MOVING: "moving"}

# The isolated world's script. `%(binding)s` is the binding's name (it exists only in this world).
# A new document starts armed with NEW_DOCUMENT set: a page the person navigated to reports itself.
_WORLD_SOURCE = """(() => {
  if (globalThis.__vigilLive) return;
  const ping = globalThis[%(binding)s];
  if (typeof ping !== 'function') return;
  let armed = true, queued = false, why = %(new_doc)d, obs = null;
  // a finite CSS animation or transition under way (a menu sliding open): its end is reported too
  const moving = () => {
    try {
      for (const a of document.getAnimations()) {
        if (a.playState !== 'running' || !a.effect) continue;
        const end = a.effect.getComputedTiming().endTime;
        if (isFinite(end) && end < %(motion_cap_ms)d) return %(moving)d;
      }
    } catch (e) {}
    return 0;
  };
  const fire = () => {
    queued = false;
    if (!armed || !why) return;
    armed = false;
    const w = why | moving(); why = 0;
    try { ping(String(w)); } catch (e) {}
  };
  const note = (bit) => {
    why |= bit;
    if (!armed || queued) return;
    queued = true;
    requestAnimationFrame(fire);
    setTimeout(fire, 100);  // a page that paints no frames (hidden, throttled) still reports
  };
  const on = (target, types, bit) => {
    for (const t of types) target.addEventListener(t, () => note(bit), { capture: true, passive: true });
  };
  obs = new MutationObserver(() => note(%(mutation)d));
  try {
    obs.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  } catch (e) {}
  on(document, ['scroll'], %(scroll)d);
  on(window, ['resize'], %(resize)d);
  on(document, ['transitionend', 'transitioncancel', 'animationend', 'animationcancel', 'load', 'toggle'], %(motion)d);
  on(document, ['input', 'change', 'focusin', 'focusout'], %(input)d);
  globalThis.__vigilLive = {
    arm() { armed = true; why = 0; },
    stop() { armed = false; why = 0; obs.disconnect(); },
  };
  if (why) note(why);
})();"""


MOTION_CAP_MS = 2000  # an animation that ends sooner than this is waited for (an endless spinner is not)


def _world_source(binding: str) -> str:
    return _WORLD_SOURCE % {"binding": json.dumps(binding), "new_doc": NEW_DOCUMENT, "mutation": MUTATION,
                            "scroll": SCROLL, "resize": RESIZE, "motion": MOTION, "input": INPUT, "moving": MOVING,
                            "motion_cap_ms": MOTION_CAP_MS}


def describe(bits: int) -> list[str]:
    """The reasons a report gives, in words ("mutation", "scroll", …)."""
    return [word for bit, word in REASONS.items() if bits & bit]


class PageWatch:
    """Reports that a page changed, from every frame of it (see the module's docstring).

    `await start()`, then `await wait()` returns the reasons of the next report (it arms the page first
    when `arm()` was not called since the last one); `await stop()` takes the world's script away."""

    def __init__(self, target: PageTarget) -> None:
        self.target = target
        token = secrets.token_hex(6)
        self.world = f"vigil-live-{token}"
        self.binding = f"__vigilLive_{token}"
        self._source = _world_source(self.binding)
        self._installed: dict[str, str] = {}   # session id → the script's identifier in it
        self._contexts: dict[int, str] = {}     # the world's execution context id → its session id
        self._event = asyncio.Event()
        self._bits = 0
        self.reports = 0                        # reports received since start()
        self.started = False

    async def start(self) -> None:
        if self.started:
            return
        c = self.target.cdp
        c.on("Runtime.bindingCalled", self._called)
        c.on("Runtime.executionContextCreated", self._ctx_created)
        c.on("Runtime.executionContextDestroyed", self._ctx_destroyed)
        c.on("Runtime.executionContextsCleared", self._ctx_cleared)
        self.started = True
        await self._install_new_sessions()

    async def stop(self) -> None:
        if not self.started:
            return
        self.started = False
        c = self.target.cdp
        for ev, fn in (("Runtime.bindingCalled", self._called), ("Runtime.executionContextCreated", self._ctx_created),
                       ("Runtime.executionContextDestroyed", self._ctx_destroyed),
                       ("Runtime.executionContextsCleared", self._ctx_cleared)):
            c.off(ev, fn)
        if self.target.closed:
            return
        calls = [self._eval(ctx, sid, "globalThis.__vigilLive && globalThis.__vigilLive.stop()")
                 for ctx, sid in list(self._contexts.items())]
        for sid, ident in list(self._installed.items()):
            calls.append(self._send("Page.removeScriptToEvaluateOnNewDocument", {"identifier": ident}, sid))
            calls.append(self._send("Runtime.removeBinding", {"name": self.binding}, sid))
        await asyncio.gather(*calls)
        self._installed.clear()
        self._contexts.clear()

    async def _send(self, method: str, params: dict, sid: str) -> Any:
        try:
            return await self.target.cdp.send(method, params, session_id=sid, timeout=5)
        except VigilError as exc:
            log.debug("%s: %s", method, exc)
            return None

    async def _install_new_sessions(self) -> None:
        """The world in every session of the page not yet given it (the main one, out-of-process frames)."""
        for sid in [s for s in list(self.target.sessions) if s not in self._installed]:
            self._installed[sid] = ""
            await self._send("Runtime.addBinding", {"name": self.binding, "executionContextName": self.world}, sid)
            r = await self._send("Page.addScriptToEvaluateOnNewDocument",
                                 {"source": self._source, "worldName": self.world, "runImmediately": True}, sid)
            self._installed[sid] = (r or {}).get("identifier", "")
            # the documents there now: their world is made here, once (a second run of the script does nothing)
            tree = await self._send("Page.getFrameTree", {}, sid)
            for fid in _frame_ids((tree or {}).get("frameTree")):
                made = await self._send("Page.createIsolatedWorld", {"frameId": fid, "worldName": self.world}, sid)
                ctx = (made or {}).get("executionContextId")
                if ctx is not None:
                    self._contexts[int(ctx)] = sid
                    await self._eval(int(ctx), sid, self._source)

    def _ctx_created(self, p: dict, sid: str | None) -> None:
        ctx = p.get("context") or {}
        if sid is None or sid not in self._installed or ctx.get("name") != self.world:
            return
        self._contexts[int(ctx["id"])] = sid

    def _ctx_destroyed(self, p: dict, sid: str | None) -> None:
        self._contexts.pop(int(p.get("executionContextId") or -1), None)

    def _ctx_cleared(self, p: dict, sid: str | None) -> None:
        for ctx in [c for c, s in self._contexts.items() if s == sid]:
            del self._contexts[ctx]

    def _called(self, p: dict, sid: str | None) -> None:
        if p.get("name") != self.binding or sid not in self._installed:
            return
        try:
            bits = int(p.get("payload") or 0) & 0xFF
        except ValueError:
            return
        self._bits |= bits or MUTATION
        self.reports += 1
        self._event.set()

    async def _eval(self, ctx: int, sid: str, expr: str) -> None:
        await self._send("Runtime.evaluate", {"expression": expr, "contextId": ctx, "returnByValue": True}, sid)

    async def arm(self) -> None:
        """Report the next change (from now on: what changed before is forgotten)."""
        self._event.clear()
        self._bits = 0
        await self._install_new_sessions()
        await asyncio.gather(*(self._eval(ctx, sid, "globalThis.__vigilLive && globalThis.__vigilLive.arm()")
                               for ctx, sid in list(self._contexts.items())))

    def pending(self) -> bool:
        """A report came that `wait()` has not returned yet."""
        return self._event.is_set()

    async def wait(self, timeout: float | None = None) -> int:
        """The bits of the next report (0 when `timeout` passed first)."""
        try:
            await asyncio.wait_for(self._event.wait(), timeout)
        except TimeoutError:
            return 0
        self._event.clear()
        bits, self._bits = self._bits, 0
        return bits


def _frame_ids(node: dict | None) -> list[str]:
    if not node:
        return []
    out = [node["frame"]["id"]]
    for ch in node.get("childFrames") or []:
        out.extend(_frame_ids(ch))
    return out


@dataclass
class LiveConfig:
    min_gap_s: float = 0.2     # at most five snapshots a second
    max_share: float = 0.2     # of the time, at most, spent snapshotting: the gap after a snapshot ≥ 4 × its cost
    max_gap_s: float = 3.0     # but never longer than this (a walk slowed by a loaded machine does not stall the view)
    settle_s: float = 0.03     # after a report, this long for the rest of a burst (one click: focus, class, popup)
    motion_s: float = 0.5      # a report made while a finite animation runs: its end is awaited this long at most
    paused_poll_s: float = 0.1


@dataclass
class LiveStats:
    reports: int = 0                  # change reports from the page
    snapshots: int = 0                # snapshots taken (cache hits included)
    new: int = 0                      # snapshots that differed from the one before
    costs_ms: list[float] = field(default_factory=list)
    spans: list[tuple[float, float]] = field(default_factory=list)   # (start, end) of each, time.monotonic()
    last_cost_s: float = 0.0
    cost_s: float = 0.0               # the snapshots' recent cost (smoothed: one slow walk does not stall the view)


Take = Callable[[], Awaitable[Any]]


class LiveFollower:
    """Takes a snapshot (`take()`) whenever the page reports a change, throttled; `on_change(bits, t)` when a
    change is first reported after a snapshot (t: time.monotonic()), `on_snapshot(snap, cost_s)` after each
    snapshot. `run()` until `stop()`; `may_run()` false holds the next snapshot back (the report is kept)."""

    def __init__(self, target: PageTarget, take: Take, *, may_run: Callable[[], bool] = lambda: True,
                 on_change: Callable[[int, float], None] | None = None,
                 on_snapshot: Callable[[Any, float], None] | None = None, config: LiveConfig | None = None) -> None:
        self.target = target
        self.watch = PageWatch(target)
        self.take = take
        self.may_run = may_run
        self.on_change = on_change
        self.on_snapshot = on_snapshot
        self.config = config or LiveConfig()
        self.stats = LiveStats()
        self._task: asyncio.Task | None = None
        self._last_end = 0.0
        self._last: Any = None
        self.snapshot_at = 0.0           # time.monotonic() when the last snapshot was taken (its start)
        self.changed_at: float | None = None  # the page changed at (monotonic) and no snapshot has caught up

    def gap(self) -> float:
        """The least time between the end of one snapshot and the start of the next."""
        c = self.config
        cost = max(self.stats.last_cost_s, self.stats.cost_s)   # the last one's, or more while they were slower
        return min(c.max_gap_s, max(c.min_gap_s, cost * (1.0 / c.max_share - 1.0)))

    def start(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self.run())

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        with contextlib.suppress(VigilError):
            await self.watch.stop()

    async def run(self) -> None:
        try:
            await self.watch.start()
            await self.watch.arm()
            while not self.target.closed:
                bits = await self.watch.wait()
                self.stats.reports += 1
                if self.changed_at is None:
                    self.changed_at = time.monotonic()
                    if self.on_change is not None:
                        self.on_change(bits, self.changed_at)
                if bits & MOVING:  # a popup sliding open: a snapshot now would box it where it will not stay
                    await self.watch.arm()
                    await self.watch.wait(self.config.motion_s)   # its end (or any change) is reported
                else:
                    await asyncio.sleep(self.config.settle_s)
                wait = self._last_end + self.gap() - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                while not self.may_run():
                    await asyncio.sleep(self.config.paused_poll_s)
                if self.target.closed:
                    break
                await self._snapshot()
        except asyncio.CancelledError:
            raise
        except VigilError as exc:  # the tab closed or crashed: nothing left to follow
            log.debug("live view ended: %s", exc)

    async def _snapshot(self) -> None:
        await self.watch.arm()  # a change from now on is reported: it may come after this snapshot's walk
        t = time.monotonic()
        self.snapshot_at = t
        try:
            snap = await self.take()
        except VigilError as exc:  # navigating, a dialog: the next report tries again
            log.debug("live snapshot failed: %s", exc)
            snap = None
        wall = time.monotonic() - t
        new = snap is not None and snap is not self._last
        # the work this snapshot cost: its walk (a new one), or a version check (the cached one) — not the
        # time it waited for another caller's snapshot of the same page (the window's, a step's)
        walk = _walk_s(snap) if new else None
        work = min(wall, walk) if walk is not None else wall if new else min(wall, CHECK_COST_S)
        if snap is not None:
            if new:
                self.stats.new += 1
            self._last = snap
            # caught up, or (a page that changed again while it was walked) behind since the walk began
            self.changed_at = t if self.watch.pending() else None
            if self.on_snapshot is not None:
                p0 = time.monotonic()
                self.on_snapshot(snap, work)
                work += time.monotonic() - p0   # showing it (the window's tree, overlay, status bar) counts
        self._last_end = time.monotonic()
        st = self.stats
        st.snapshots += 1
        # the first walk of a document is a full one, and the next are incremental: it does not set the pace
        # (a cold 1-s walk after a load held the view back 3 s, marked stale, on a page that had settled)
        paced = min(work, self.config.min_gap_s * self.config.max_share) if new and _first_walk(snap) else work
        st.last_cost_s = paced
        st.cost_s = paced if st.snapshots == 1 else 0.5 * (st.cost_s + paced)
        st.costs_ms.append(work * 1000)
        del st.costs_ms[:-200]
        st.spans.append((t, self._last_end))
        del st.spans[:-200]


CHECK_COST_S = 0.05  # a cached snapshot's version check: one round trip after the next frame


FIRST_WALK = ("first walk of this document", "the document was replaced")


def _first_walk(snap: Any) -> bool:
    """The snapshot's walk was the first of its document (a new page, a replaced document)."""
    walk = getattr(snap, "walk", None)
    return getattr(walk, "mode", "") == "full" and str(getattr(walk, "reason", "") or "").startswith(FIRST_WALK)


def _walk_s(snap: Any) -> float | None:
    """How long the snapshot's own capture took (seconds), when it says."""
    ms = getattr(getattr(snap, "stats", None), "timings_ms", {}).get("capture")
    return float(ms) / 1000 if ms else None
