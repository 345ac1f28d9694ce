"""Stability wait: observe only once the page has settled (seed 001 §6.6).

Settled means no DOM mutation in any frame for `dom_quiet_ms` — counted from `since` at the
earliest (the end of the action), so the page gets that long to react —, no network request in
flight or finished within `network_quiet_ms`, and no main-frame navigation loading. Capped at
`timeout_ms`: a page that never settles (a ticking clock, an endless spinner) costs the cap
once per step, and the result says it did not settle.
"""

from __future__ import annotations

import asyncio
import time

from pydantic import BaseModel

from engine.browser.target import PageTarget
from engine.observe.stream import read_stream


class StabilityConfig(BaseModel):
    dom_quiet_ms: int = 300
    network_quiet_ms: int = 500
    timeout_ms: int = 3000
    poll_ms: int = 50


class StabilityResult(BaseModel):
    stable: bool
    waited_ms: float
    dom_quiet_ms: float
    network_quiet_ms: float
    inflight: int
    loading: bool

    def describe(self) -> str:
        if self.stable:
            return f"settled after {self.waited_ms:.0f} ms"
        why = []
        if self.loading:
            why.append("the page is still loading")
        if self.inflight:
            why.append(f"{self.inflight} request(s) still in flight")
        if self.dom_quiet_ms < 300:
            why.append("the DOM keeps changing")
        return f"not settled after {self.waited_ms:.0f} ms ({', '.join(why) or 'still busy'})"


async def wait_stable(page: PageTarget, config: StabilityConfig | None = None, *,
                      since: float | None = None) -> StabilityResult:
    """Wait until the page settles or the cap passes; `since` is a time.monotonic() reference."""
    cfg = config or StabilityConfig()
    start = time.monotonic()
    since = start if since is None else since
    deadline = start + cfg.timeout_ms / 1000
    while True:
        page.check_alive()
        reading = await read_stream(page, time.time() * 1000)  # counters only: no old events
        after = time.monotonic()
        since_action = (after - since) * 1000
        dom_quiet = min(reading.quiet_ms(), since_action) if reading.frames else 0.0
        # idle before the action counts: the DOM window gives the page time to react
        net_quiet = page.network.quiet_for() * 1000
        loading = page.loading
        ok = (bool(reading.frames) and not loading and dom_quiet >= cfg.dom_quiet_ms
              and net_quiet >= cfg.network_quiet_ms)
        if ok or after >= deadline:
            return StabilityResult(stable=ok, waited_ms=round((after - start) * 1000, 1),
                                   dom_quiet_ms=round(dom_quiet, 1),
                                   network_quiet_ms=round(net_quiet, 1), inflight=len(page.network.inflight),
                                   loading=loading)
        # sleep just long enough for the quieter of the two windows to close, within the poll step
        need = max(cfg.dom_quiet_ms - dom_quiet, cfg.network_quiet_ms - net_quiet, 0) / 1000
        await asyncio.sleep(min(max(need, 0.01), cfg.poll_ms / 1000, max(0.0, deadline - after)))
