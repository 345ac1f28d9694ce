"""A step's page events are what happened since its action began — not the page's own load a moment
before it (a screenshot review saw a click's chat turn list "Added 'Delete all'", the page's buttons
appearing as it loaded)."""

from __future__ import annotations

from engine.loop import AgentLoop, AutoApprove, ScriptedPlanner

from support.page_helpers import FAST


def test_a_steps_events_start_at_its_action(harness, server):
    async def go(tab):
        tab.stability = FAST
        loaded = [e.text for e in await tab.recent_events(60_000)]  # the load's, however long opening the tab took
        steps = [{"action": "click", "target": {"role": "button", "name": "Edit"}}, {"action": "finish"}]
        res = await AgentLoop(tab, ScriptedPlanner(steps), gate=AutoApprove(), policy="auto",
                              screenshots=False).run("click Edit")
        return loaded, res

    loaded, res = harness.page(server.url("dialogs_page.html"), go)
    assert any("Delete all" in t for t in loaded), "the load's events are there to be left out"
    texts = [e.text for e in res.steps[0].events]
    assert any("unsaved" in t for t in texts), texts        # what the click did
    assert not any("Delete all" in t for t in texts), texts  # not what the load did
