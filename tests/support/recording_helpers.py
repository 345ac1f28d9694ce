"""A real recorded run for the tests of what is made from stored sessions (reports, exported tests)."""

from __future__ import annotations

from engine.loop import AgentLoop, AutoApprove, ScriptedPlanner
from engine.store.recorder import SessionRecorder


def record_scripted(harness, store, url: str, steps: list[dict], task: str, check=None, timeout: float = 90.0) -> str:
    """A real auto-approved run of the scripted steps on `url`, recorded into `store`; its session id.
    `check(tab)`, when given, looks at the page once the run is done; `timeout` bounds it all (s)."""
    async def run(tab):
        loop = AgentLoop(tab, ScriptedPlanner(steps), gate=AutoApprove(), policy="auto")
        rec = SessionRecorder(store)
        rec.start(loop, task, tab.page.url, planner="scripted", policy="auto")
        result = await loop.run(task)
        rec.finish(result)
        assert rec.error is None and result.status == "success", (rec.error, result.reason)
        if check is not None:
            await check(tab)
        return rec.session_id

    return harness.page(url, run, timeout)
