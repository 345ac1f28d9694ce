"""One run of the supervised loop for an MCP client: the `AgentLoop` in the client's tab, the
`ToolCallPlanner` each action tool call hands its step to, and the task running it. A run ends with
a `finish` step (recorded) when the client closes the browser, and is stopped when the client goes away."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from engine.mcp.planner import StepOutcome, ToolCallPlanner
from engine.models import Action, ProposedStep

if TYPE_CHECKING:
    from engine.loop.gates import ApprovalGate
    from engine.loop.runner import AgentLoop
    from engine.mcp.tabs import TabHost
    from engine.models import RunResult
    from engine.store.recorder import SessionRecorder
    from engine.tab import Tab

log = logging.getLogger("vigil.mcp")

MAX_STEPS = 1_000_000          # a client's session has no step limit of its own; each call is one cycle
TARGET_TIMEOUT_MS = 2000       # how long a step waits for its (already checked) ref to be there
END_TIMEOUT_S = 10.0           # how long closing waits for the run to end before cancelling it


def new_loop(tab: Tab, *, gate: ApprovalGate, policy: str, grants: Callable[[Action, str], str | None],
             hosted: bool) -> tuple[AgentLoop, ToolCallPlanner]:
    """A loop for the client's steps in `tab` (with the host's artifacts when a host shows it), and its planner."""
    from engine.loop.runner import AgentLoop

    planner = ToolCallPlanner()
    loop = AgentLoop(tab, planner, gate=gate, policy=policy, max_steps=MAX_STEPS, target_timeout_ms=TARGET_TIMEOUT_MS,
                     artifacts=hosted)
    loop.grants = grants
    return loop, planner


class ClientRun:
    """A started run: `loop` and `planner` running `task` (recorded by `recorder`, told to `host` when it ends;
    a store problem while recording goes to `store_failed`)."""

    def __init__(self, loop: AgentLoop, planner: ToolCallPlanner, recorder: SessionRecorder | None, task: str, *,
                 host: TabHost | None, store_failed: Callable[[str], None],
                 ended: Callable[[RunResult], None] | None = None):
        self.loop, self.planner = loop, planner
        self.result: RunResult | None = None
        self._ended = ended
        self.task = asyncio.create_task(self._run(recorder, task, host, store_failed), name="vigil-mcp-run")

    @property
    def live(self) -> bool:
        return not self.task.done()

    async def _run(self, recorder: SessionRecorder | None, task: str, host: TabHost | None,
                   store_failed: Callable[[str], None]) -> None:
        from engine.models import RunResult

        result = RunResult(task=task, status="interrupted", reason="The run was cancelled.")
        try:
            result = await self.loop.run(task)
        finally:  # the store first, then the client: an answered step is always a stored one
            if recorder is not None:
                recorder.finish(result)
                if recorder.error:
                    store_failed(recorder.error)
            self.result = result
            self.planner.run_ended(result)
            if host is not None:
                host.mcp_run_ended(result)
            if self._ended is not None:
                self._ended(result)

    async def steps_done(self) -> None:
        """Wait for a step whose tool call was cancelled (it still runs to its end)."""
        if self.live:
            await self.planner.wait_idle()

    async def end(self, reason: str, *, finish: bool) -> StepOutcome | None:
        """End the run: a `finish` step saying `reason` first (when `finish`, and no step waits for a person),
        then the loop is stopped (cancelled when it does not end in END_TIMEOUT_S). None when it had ended."""
        if not self.live:
            return None
        out = None
        if finish and not self.planner.pending:
            step = ProposedStep(thought=reason, description="End the MCP session",
                                action=Action(name="finish", answer=reason))
            try:
                out = await asyncio.wait_for(self.planner.submit(step), END_TIMEOUT_S)
            except TimeoutError:
                log.warning("the run did not end within %.0f s; stopping it", END_TIMEOUT_S)
        if not self.task.done():
            self.loop.stop()
            try:
                await asyncio.wait_for(asyncio.shield(self.task), END_TIMEOUT_S)
            except TimeoutError:
                self.task.cancel()
                await asyncio.gather(self.task, return_exceptions=True)
        return out

    async def stop(self) -> None:
        """Stop the loop and wait for the run to end (the tab is going away)."""
        self.loop.stop()
        await asyncio.gather(self.task, return_exceptions=True)
