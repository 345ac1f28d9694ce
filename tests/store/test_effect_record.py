"""The record names both the step's target and its effect: a real run on a real page, recorded by the
SessionRecorder into a real store, keeps each step's `StepEffect` (what it was approved to do, as the page
computed it before input) and reads it back whole; the HTML report shows the effect's line beside the target,
as text; the JSON trace carries it."""

from __future__ import annotations

import html

import pytest

from engine.models.effect import StepEffect
from engine.store import Store
from engine.store.report import export_html, export_json

from support.recording_helpers import record_scripted

STEPS = [{"action": "select", "target": {"name": "Bulk actions"}, "option": "Delete selected"},
         {"action": "check", "target": {"name": "Remember me"}},
         {"action": "type", "target": {"name": "Search"}, "text": "boots"},
         {"action": "finish", "answer": "done"}]
LINES = ["selects 'Delete selected' in 'Bulk actions'", "checks 'Remember me'", "types 'boots' into 'Search'"]


@pytest.fixture(scope="module")
def recorded(server, harness, tmp_path_factory):
    home = tmp_path_factory.mktemp("vigil-home")
    mp = pytest.MonkeyPatch()
    mp.setenv("VIGIL_HOME", str(home))
    store = Store.open()
    sid = record_scripted(harness, store, server.url("effects.html"), STEPS, "tidy the page")
    yield store, sid
    store.close()
    mp.undo()


def test_the_stored_step_keeps_its_effect(recorded):
    store, sid = recorded
    steps = store.load(sid).steps
    assert [s.effect.line() if s.effect else None for s in steps] == [*LINES, None]  # finish: no input
    select = steps[0].effect
    assert isinstance(select, StepEffect) and select.kind == "select" and select.words == "Delete selected"
    assert select.receiver is not None and select.receiver.name == "Bulk actions"
    assert steps[0].target and steps[0].target.get("name") == "Bulk actions"  # the target beside it
    trace = export_json(store, sid)
    assert [s["effect"]["kind"] if s["effect"] else None for s in trace["steps"]] == ["select", "toggle", "type", None]


def _article(doc: str, n: int) -> str:
    start = doc.index(f'id="step-{n}"')
    return doc[start:doc.index("</article>", start)]


def test_the_report_shows_the_effect_beside_the_target(recorded):
    store, sid = recorded
    doc = export_html(store, sid)
    for n, (line, name) in enumerate(zip(LINES, ("Bulk actions", "Remember me", "Search"), strict=True), 1):
        step = _article(doc, n)
        target = step.index("<dt>Target</dt>")
        assert f'"{name}"' in step[target:step.index("</dd>", target)]
        # the very next row: the effect, as text (its quotes escaped like any page words)
        assert step[step.index("</dd>", target):].startswith(
            f"</dd><dt>Effect</dt><dd>{html.escape(line, quote=True)}</dd>"), step[target:target + 300]
    assert "<dt>Effect</dt>" not in _article(doc, 4), "a step with no computed effect has no Effect row"
