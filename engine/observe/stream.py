"""Reading the page-side mutation stream (see snapshot/js/install.js) from every frame."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from engine.browser.target import PageTarget
from engine.errors import VigilError
from engine.models import PageEvent

_READ = ("function(KEY, since, busySince) { const S = window[KEY]; if (!S || S.muts === undefined) return null;"
         " let busy = ''; try { busy = busySince && S.transient ? S.transient(busySince) : ''; } catch (e) {}"
         " return [Date.now(), S.muts, S.lastMut, S.events.filter((e) => e[0] > since), location.href, busy]; }")


@dataclass
class FrameReading:
    frame_id: str
    now: float        # page clock, ms since the epoch
    muts: int         # DOM mutations observed since the document started
    last_mut: float   # page clock of the last mutation
    events: list      # [[t, category, kind, text], ...] newer than asked
    url: str
    transient: str = ""  # the words of a transient state changed since asked ("Processing…"; see install.js)


@dataclass
class StreamReading:
    frames: list[FrameReading] = field(default_factory=list)
    read_at: float = 0.0  # time.time() * 1000

    @property
    def mutations(self) -> int:
        return sum(f.muts for f in self.frames)

    def quiet_ms(self) -> float:
        """Milliseconds since the last DOM mutation in any frame."""
        if not self.frames:
            return 0.0
        return min(f.now - f.last_mut for f in self.frames)

    def events(self) -> list[PageEvent]:
        out = []
        for f in self.frames:
            for t, cat, kind, text in f.events:
                out.append(PageEvent(category=cat, kind=kind, text=text, age_ms=max(0, int(f.now - t)),
                                     frame_id=f.frame_id, at=t))
        out.sort(key=lambda e: e.at)
        return out


async def _read_frame(page: PageTarget, frame_id: str, since: float, busy_since: float) -> FrameReading | None:
    ft = page.frames.get(frame_id)
    if ft is None or ft.context_id is None:
        return None
    try:
        r = await page.cdp.send("Runtime.callFunctionOn", {
            "functionDeclaration": _READ, "executionContextId": ft.context_id,
            "arguments": [{"value": page.key}, {"value": since}, {"value": busy_since}], "returnByValue": True},
            session_id=ft.session_id, timeout=5)
    except VigilError:
        return None
    v = r.get("result", {}).get("value")
    if not v:
        return None
    now, muts, last, events, url, busy = v
    return FrameReading(frame_id, now, muts, last, events, url, str(busy or ""))


async def read_stream(page: PageTarget, since_ms: float = 0.0, transient_since: float = 0.0) -> StreamReading:
    """Mutation counters of every frame, and the events newer than `since_ms` (epoch ms); with `transient_since`
    (epoch ms), each frame's transient state changed since then."""
    page.check_alive()
    ids = list(page.frames)
    got = await asyncio.gather(*(_read_frame(page, f, since_ms, transient_since) for f in ids))
    return StreamReading([g for g in got if g is not None], time.time() * 1000)


async def recent_events(page: PageTarget, max_age_ms: int = 10_000) -> list[PageEvent]:
    """Meaningful page changes of the last `max_age_ms`, oldest first, from every frame."""
    reading = await read_stream(page, time.time() * 1000 - max_age_ms)
    return reading.events()


def summarize(events: list[PageEvent], limit: int = 10) -> list[str]:
    """Human-and-model lines such as "[0.8s ago] error: Added 'Please enter a valid email'"."""
    return [e.describe() for e in events[-limit:]]
