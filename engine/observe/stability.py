"""Settle after an action: wait only as long as the page needs (seed 001 §6.6, issue [13]).

Settled means: no main-frame navigation loading; the page painted two animation frames with no DOM
mutation in them, no finite CSS animation or transition running (a modal fading in; endless spinners
do not count), and no mutation in the last `dom_quiet_ms` (counted from `since` at the earliest — the end of
the action — so the page gets that long to react); and no request that the action started still in
flight or finished within `network_quiet_ms` (its handler gets that long to update the page). Which
requests the action started: those begun at or after the page's last trusted input (the click or key
Vigil dispatched; see snapshot/js/install.js), else in the moment before `since`. Requests already
under way — polling, long-polls, analytics — and websockets never hold a step.

When the caller says what the action was meant to do (`outcome`: an async check of the step's expected
outcome, the sentinel's), the wait ends sooner: as soon as that outcome is seen on a page that has
painted two frames with no mutation in them, with no mutation in the last `outcome_quiet_ms` (no burst
under way), no animation that moves anything, and none of the action's requests in flight or just
finished. A change that comes later than that without a request of its own (a timer's toast) is no
longer waited for — the price of not charging every step the full quiet window.

Capped at `timeout_ms`. A page whose DOM never stops changing (a ticking clock, a JS animation)
costs the cap once: it is then known as restless (until it navigates, or is seen quiet), and later
settles on it wait for painting and for the action's requests only, capped shorter, and say so.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import time
import weakref
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel

from engine.browser.target import PageTarget
from engine.errors import VigilError
from engine.observe.requests import track
from engine.observe.stream import read_stream


class StabilityConfig(BaseModel):
    dom_quiet_ms: int = 100       # no mutation for this long (and two painted frames without one)
    outcome_quiet_ms: int = 20    # once the expected outcome is seen: no mutation for this long suffices
    network_quiet_ms: int = 60    # the action's requests done for this long
    timeout_ms: int = 3000        # the cap
    poll_ms: int = 50
    restless_timeout_ms: int = 400  # the cap on a page known never to settle
    idle_quiet_ms: int = 300      # with no action given (`since=None`): quiet this long from the call
    transient_ms: int = 2500      # a transient state the action brought ("Saving…") is waited out this long at most


class StabilityResult(BaseModel):
    stable: bool
    waited_ms: float
    dom_quiet_ms: float
    network_quiet_ms: float
    inflight: int                 # requests the action started, still in flight
    loading: bool
    background: int = 0           # requests in flight that the action did not start (never waited for)
    restless: bool = False        # the page is known never to settle: its mutations were not waited for
    outcome_seen: bool = False    # ended early: the expected outcome was seen on a painted, quiet page
    outcome_ms: float = 0.0       # time spent checking the outcome (part of waited_ms)
    # page clock (epoch ms) of the last change the settle saw that a DOM version does not count: a request of
    # the action finishing, an animation that moves something (0: none) — a picture begun before it is stale
    changed_at: float = 0.0
    # the words of a transient state the action brought ("Saving…", a live region's "Loading…", aria-busy): waited
    # out (`stable`), or still shown when the wait for it ran out
    transient: str = ""
    reason: str = ""

    def describe(self) -> str:
        if self.stable:
            extra = f"; {self.reason}" if self.reason else ""
            return f"settled after {self.waited_ms:.0f} ms{extra}"
        return f"not settled after {self.waited_ms:.0f} ms ({self.reason or 'still busy'})"


# page target → its navigation count when it was found never to settle
_restless: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()

# Finite animations that can move or show an element are waited for; colour fades, and changes of
# pseudo-elements that move nothing else (a switch's knob sliding: its offsets, transform, opacity) are not.
_PAINT = ("function(KEY, START, SINCE) { const S = window[KEY]; if (!S || S.muts === undefined) return null;"
          " const m0 = S.muts;"
          " const COLOUR = /^(offset|easing|composite|computedOffset|color|backgroundColor|borderColor|border\\w*Color|"
          "outlineColor|textDecorationColor|caretColor|fill|stroke|boxShadow|textShadow|columnRuleColor)$/;"
          " const PAINT = /^(transform|translate|rotate|scale|opacity|filter|clipPath|left|top|right|bottom|"
          "inset\\w*)$/;"
          " const anims = () => { let n = 0; try { for (const a of document.getAnimations()) { if (a.playState !=="
          " 'running') continue; const ef = a.effect, t = ef && ef.getComputedTiming(); if (!t || !isFinite(t.endTime))"
          " continue; let moves = false; for (const f of ef.getKeyframes()) for (const p in f) if (!COLOUR.test(p) &&"
          " !(ef.pseudoElement && PAINT.test(p))) moves = true; if (moves) n++; } } catch (e) {} return n; };"
          " const a0 = START ? anims() : 0;"
          " const busy = () => { try { return SINCE && S.transient ? S.transient(SINCE) : ''; }"
          " catch (e) { return ''; } };"
          " return new Promise((res) => { let done = false; const fin = (p) => { if (!done) { done = true;"
          " res([Date.now(), m0, S.muts, S.lastMut, S.lastInput || 0, p, anims(), S.ver, a0,"
          " busy()]); } };"
          " requestAnimationFrame(() => requestAnimationFrame(() => fin(1))); setTimeout(() => fin(0), 150); }); }")


async def _paint(page: PageTarget, timeout: float, start: bool = False, since: float = 0.0) -> list | None:
    """Two animation frames in the main frame: [now, mutations before, after, last mutation, last input,
    painted, moving animations, DOM version, moving animations at the start (`start`; else 0), the words of a
    transient state changed since the action (`since`, epoch ms; else '')]; None when the page cannot answer (a
    dialog open, a document being replaced)."""
    try:
        sid, ctx = await page.context_for(page.main_frame_id, timeout=min(1.0, timeout))
        r = await page.cdp.send("Runtime.callFunctionOn", {
            "functionDeclaration": _PAINT, "executionContextId": ctx, "returnByValue": True, "awaitPromise": True,
            "arguments": [{"value": page.key}, {"value": start}, {"value": since}]},
            session_id=sid, timeout=max(0.2, min(1.0, timeout)))
    except (VigilError, TimeoutError):
        return None
    v = r.get("result", {}).get("value")
    if not isinstance(v, list):
        return None
    if len(v) > 5 and v[5]:
        page.painted_at = time.monotonic()
    return v


def _action_start(since_epoch: float | None, last_input: float, called: float) -> float:
    """Epoch ms from which requests count as the action's: from the last input that belongs to it, else
    the moment before it ended; with no action given, from the last input of the last 5 s, else from a
    second before the call (a request just started is waited for; one already long under way is not)."""
    if since_epoch is None:
        return last_input - 20 if last_input and called - last_input < 5000 else called - 1000
    if last_input and since_epoch - 5000 <= last_input <= since_epoch + 50:
        return last_input - 20
    return since_epoch - 300  # no input event seen (a programmatic action)


Outcome = Callable[[], Awaitable[bool]]

@dataclass(frozen=True)
class QuietPage:
    """The page when its outcome is about to be checked: the main frame's DOM version (None when the page
    has child frames), the page clock then, and the last change a version does not count (`changed_at`)."""

    version: int | None
    at: float
    changed_at: float


class SettleWatcher(Protocol):
    """Told by the action being settled (within `on_quiet`): the moment its input was dispatched, each
    moment its outcome is about to be checked on a painted, quiet page, and how the settle ended — when a
    step may start its after-picture, and what tells whether that picture still shows the page."""

    def dispatched(self) -> None: ...

    def quiet(self, page: QuietPage) -> None: ...

    def settled(self, result: StabilityResult) -> None: ...


_QUIET_HOOK: contextvars.ContextVar[SettleWatcher | None] = contextvars.ContextVar("vigil_quiet_hook", default=None)


@contextlib.contextmanager
def on_quiet(watcher: SettleWatcher) -> Iterator[None]:
    """Within this block, `watcher` hears of the action's dispatch (`dispatched()`, called by the action
    right after its input went out), of each check of its expected outcome on a painted, quiet page
    (`quiet(page)`), and of the settle's end (`settled(result)`)."""
    token = _QUIET_HOOK.set(watcher)
    try:
        yield
    finally:
        _QUIET_HOOK.reset(token)


def dispatched() -> None:
    """The action's input was just dispatched (see `on_quiet`)."""
    w = _QUIET_HOOK.get()
    if w is not None:
        w.dispatched()


# What a picture is compared by: each frame's DOM version (bumped by every mutation, input, scroll and
# resize: snapshot/js/install.js) and the page clock.
_MARK = "function(KEY) { const S = window[KEY]; return S && S.ver !== undefined ? [S.ver, Date.now()] : null; }"


@dataclass(frozen=True)
class PageMark:
    """The page at one moment, for telling whether anything changed since: navigations, every frame's DOM
    version, and the page clock (epoch ms) when read."""

    nav: int
    versions: tuple[tuple[str, int], ...]
    at: float

    def same_page(self, other: PageMark) -> bool:
        return self.nav == other.nav and self.versions == other.versions


async def page_mark(page: PageTarget) -> PageMark | None:
    """The page's mark now, or None when a frame cannot be read (then nothing is judged unchanged)."""
    nav = getattr(page, "nav_count", 0)
    ids = list(page.frames)

    async def one(fid: str) -> list | None:
        ft = page.frames.get(fid)
        if ft is None or ft.context_id is None:
            return None
        try:
            r = await page.cdp.send("Runtime.callFunctionOn", {
                "functionDeclaration": _MARK, "executionContextId": ft.context_id, "returnByValue": True,
                "arguments": [{"value": page.key}]}, session_id=ft.session_id, timeout=2)
        except (VigilError, TimeoutError):
            return None
        v = r.get("result", {}).get("value")
        return v if isinstance(v, list) else None

    got = await asyncio.gather(*(one(f) for f in ids))
    if not ids or any(g is None for g in got):
        return None
    main = page.main_frame_id if page.main_frame_id in ids else ids[0]
    at = next(float(g[1]) for f, g in zip(ids, got, strict=True) if f == main and g is not None)
    return PageMark(nav, tuple(sorted((f, int(g[0])) for f, g in zip(ids, got, strict=True) if g is not None)), at)


async def wait_stable(page: PageTarget, config: StabilityConfig | None = None, *,
                      since: float | None = None, outcome: Outcome | None = None) -> StabilityResult:
    """Wait until the page settles or the cap passes; `since` is the time.monotonic() the action ended
    (None: no action, the page must stay quiet `idle_quiet_ms` from now; 0: no action, quiet counted from its
    last change). `outcome`: the action's expected outcome, checked once the page is painted and quiet for
    `outcome_quiet_ms` (again only after it changed); seen, the wait ends there."""
    cfg = config or StabilityConfig()
    checked_at: float | None = None  # the page's last mutation when the outcome was last checked
    outcome_ms = 0.0
    start = time.monotonic()
    called = time.time() * 1000
    clock = track(page)
    since_epoch = None if not since else time.time() * 1000 - (start - since) * 1000
    nav = getattr(page, "nav_count", 0)
    restless = _restless.get(page) == nav
    cap = min(cfg.timeout_ms, cfg.restless_timeout_ms) if restless else cfg.timeout_ms
    deadline = start + cap / 1000
    frames_multi = len(getattr(page, "frames", {}) or {}) > 1
    busy_dom = 0
    moving_at = 0.0  # page clock of the last probe that saw an animation moving something
    # a transient state the action brought ("Saving…") holds the settle until it is gone, `transient_ms` at most
    # from the action's end: the words of what changed are then taken of the state it led to
    busy_since = since_epoch - 300 if since_epoch is not None else 0.0
    transient_seen = ""
    # The first look at the page checks the outcome while the two frames are being painted (not after them):
    # the check counts only if the page's DOM version did not change from before the check to after both
    # (the page it read is the page the frames painted) and those frames saw no mutation, no moving animation
    # and none of the action's requests — the page it read is a settled one.
    # (not while any request is in flight or just ended: the check would read a page still to be updated; on a
    # page with child frames their mutations count through the frames' last mutation and their DOM versions)
    overlap = outcome is not None and not list(page.network.inflight) and (
        clock is None or since_epoch is None
        or (clock.last_end_since(since_epoch - 5000) or 0.0) < time.time() * 1000 - cfg.network_quiet_ms)
    while True:
        page.check_alive()
        remaining = max(0.0, deadline - time.monotonic())
        early: asyncio.Future | None = None
        mark0: PageMark | None = None
        if overlap:
            overlap = False
            t_mark0 = time.monotonic()
            mark0 = await page_mark(page)
            t_mark0 = time.monotonic() - t_mark0  # (how long reading it took)
            if mark0 is not None:
                early = asyncio.ensure_future(outcome())  # type: ignore[misc]  # (outcome is not None here)
        try:
            probe = await _paint(page, remaining + 0.2, start=early is not None, since=busy_since)
        except BaseException:
            if early is not None:
                early.cancel()
            raise
        t_painted = time.monotonic()
        now_epoch = time.time() * 1000
        last_mut = 0.0
        painted = False
        last_input = 0.0
        moving = moving0 = 0
        version = None
        transient = ""
        if probe:
            pnow, m0, m1, last_mut, last_input, p, moving, version, moving0, transient = probe
            painted = bool(p) and m0 == m1
            last_mut = float(last_mut)
            now_epoch = float(pnow)
        if frames_multi:  # child frames: their last mutation counts too, and their transient states
            reading = await read_stream(page, now_epoch, busy_since)
            for f in reading.frames:
                last_mut = max(last_mut, f.last_mut)
                transient = transient or f.transient
        # the page gets dom_quiet_ms to react, from the action's end (or from this call when none is
        # given; `since=0` measures quiet from the last change only)
        ref = start if since is None else since
        since_action = (time.monotonic() - ref) * 1000 if ref else float("inf")
        dom_quiet = min(max(0.0, now_epoch - last_mut), since_action) if probe else 0.0
        need_quiet = cfg.idle_quiet_ms if since is None else cfg.dom_quiet_ms
        act_from = _action_start(since_epoch, float(last_input or 0), called)
        ours = background = 0
        for req in list(page.network.inflight):
            if clock is not None and clock.is_actions(req, act_from):
                ours += 1
            else:
                background += 1
        last_end = clock.last_end_since(act_from) if clock else None
        net_quiet = float("inf") if last_end is None else max(0.0, now_epoch - last_end)
        if ours:
            net_quiet = 0.0
        if moving:
            moving_at = now_epoch
        loading = page.loading
        quiet_now = painted and dom_quiet >= need_quiet and not moving
        if restless and quiet_now:  # it did stop changing: wait for its mutations again from now on
            restless = False
            _restless.pop(page, None)
        dom_ok = restless or quiet_now
        hold = bool(transient) and since_action < cfg.transient_ms
        if transient:
            transient_seen = str(transient)
        ok = (probe is not None and not loading and dom_ok and not ours and net_quiet >= cfg.network_quiet_ms
              and not hold)
        seen = False
        if early is not None:
            got = await early  # (a check that raises — the input went elsewhere — ends the settle as it would later)
            # the check's time is what it added to the frames' (and the mark read before it)
            outcome_ms += (time.monotonic() - t_painted + t_mark0) * 1000
            held = (probe is not None and painted and not moving and not moving0 and not loading and not ours
                    and net_quiet >= cfg.network_quiet_ms and dom_quiet >= cfg.outcome_quiet_ms)
            if held and mark0 is not None:
                t_mark = time.monotonic()
                mark = await page_mark(page)
                held = mark is not None and mark.same_page(mark0)
                outcome_ms += (time.monotonic() - t_mark) * 1000
            if held and not hold:
                checked_at = last_mut  # this quiet page was checked: not again unless it changes
                if got:
                    seen = ok = True
        if (not ok and not hold and outcome is not None and probe is not None and painted and not moving
                and not loading and not ours and net_quiet >= cfg.network_quiet_ms
                and dom_quiet >= cfg.outcome_quiet_ms and checked_at != last_mut):
            checked_at = last_mut
            t_check = time.monotonic()
            watcher = _QUIET_HOOK.get()
            if watcher is not None:
                watcher.quiet(QuietPage(version=version if not frames_multi else None, at=now_epoch,
                                        changed_at=max(moving_at, last_end or 0.0)))
            seen = ok = await outcome()
            outcome_ms += (time.monotonic() - t_check) * 1000
        after = time.monotonic()
        if ok or after >= deadline:
            why = []
            if not ok:
                if probe is None:
                    why.append("the page does not answer (a dialog may be open)")
                if loading:
                    why.append("the page is still loading")
                if ours:
                    why.append(f"{ours} request(s) started by the action still in flight")
                elif net_quiet < cfg.network_quiet_ms:
                    why.append("a request of the action just finished")
                if hold:
                    why.append(f"a transient state still shows ({transient!r})")
                if not dom_ok and moving and painted and dom_quiet >= need_quiet:
                    why.append(f"{moving} animation(s) or transition(s) still running")
                elif not dom_ok:
                    why.append("the DOM keeps changing")
                    if busy_dom and not loading and not ours:
                        _restless[page] = nav  # costs the cap once: later settles do not wait for its mutations
            elif transient:
                why.append(f"a transient state still shows after {cfg.transient_ms} ms ({transient!r}): "
                           "not waited for longer")
            elif seen:
                why.append("the expected outcome was seen")
            elif restless:
                why.append("the page never stops changing: its mutations were not waited for")
            elif background:
                why.append(f"{background} earlier request(s) not waited for")
            if ok and transient_seen and not transient:
                why.append(f"waited out a transient state ({transient_seen!r})")
            changed = max(moving_at, last_end or 0.0, now_epoch if ours or loading else 0.0)
            res = StabilityResult(stable=ok, waited_ms=round((after - start) * 1000, 1),
                                  dom_quiet_ms=round(min(dom_quiet, 1e9), 1),
                                  network_quiet_ms=round(min(net_quiet, 1e9), 1), inflight=ours, loading=loading,
                                  background=background, restless=restless, outcome_seen=seen,
                                  outcome_ms=round(outcome_ms, 1), changed_at=changed, transient=transient_seen,
                                  reason="; ".join(why))
            watcher = _QUIET_HOOK.get()
            if watcher is not None:
                watcher.settled(res)
            return res
        if probe is not None and not dom_ok:
            busy_dom += 1
        # the probe itself waits two frames; sleep only for what is left of the quiet windows
        need = 0.0
        if probe is not None and dom_quiet < need_quiet:
            need = (need_quiet - dom_quiet) / 1000
        if not ours and net_quiet < cfg.network_quiet_ms:
            need = max(need, (cfg.network_quiet_ms - net_quiet) / 1000)
        if ours or hold:
            need = cfg.poll_ms / 1000
        await asyncio.sleep(min(max(need, 0.005), cfg.poll_ms / 1000, max(0.0, deadline - after)))

