"""The terminal prompt says what a step will do, as the page computed it before input: `vigil run`'s and
`vigil fleet`'s prompts print "  effect: …" under the step, from real runs on a real page in a real Chromium
(the fixture server's log is the truth that nothing was submitted). The prompt itself, fed by hand-built
requests: page words cannot put a control sequence or a second line on the terminal, an input step whose page
would not say is said to be unknown, and a step that puts no input into the page has no effect line.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys

import pytest

from engine.loop.gates import EFFECT_UNKNOWN as UNKNOWN
from engine.loop.gates import TerminalGate
from engine.models import Action, ApprovalRequest, ProposedStep
from engine.models.effect import Receiver, StepEffect, Submission

from support.paths import ROOT

DELETE_FORM = "  effect: submits 'Go' (form 'Delete workspace') — POST /workspaces/42/delete"


def _vigil(*args: str, stdin: str, home) -> subprocess.CompletedProcess:
    env = {**os.environ, "VIGIL_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "engine.cli", *args], cwd=ROOT, input=stdin, capture_output=True,
                          text=True, timeout=180, env=env)


def _posts(server, mark: int) -> list[str]:
    return [q.path for q in server.log.since(mark) if q.method == "POST"]


def test_vigil_run_prompt_says_the_effect_of_the_step(server, tmp_path):
    mark = server.log.mark()
    r = _vigil("run", "click Go", "--url", server.url("effects.html"), "--approve", "ask", "--no-record",
               stdin="q\n", home=tmp_path)
    assert r.returncode == 1, r.stderr
    lines = r.stdout.splitlines()
    # the button a label names "Show tips" is the "Go" button of the workspace's delete form
    assert DELETE_FORM in lines, r.stdout
    prompt = lines.index(DELETE_FORM)
    assert lines[prompt - 1].startswith("  target: "), "the effect is said right under the target"
    assert _posts(server, mark) == []


def test_vigil_fleet_prompt_says_the_effect_of_the_step(server, tmp_path):
    fleet = tmp_path / "fleet.json"
    fleet.write_text(json.dumps({"runs": [{"name": "bulk", "task": "delete the selected rows",
                                           "url": server.url("effects.html"),
                                           "script": [{"action": "select", "target": {"name": "Bulk actions"},
                                                       "option": "Delete selected"}, {"action": "finish"}]}]}))
    r = _vigil("fleet", str(fleet), "--approve", "ask", stdin="q\n", home=tmp_path)
    assert "── run bulk" in r.stdout, r.stdout + r.stderr
    assert "  effect: selects 'Delete selected' in 'Bulk actions'" in r.stdout.splitlines(), r.stdout


# -- the prompt, fed by hand --------------------------------------------------------------------------
def _request(action: Action, effect: StepEffect | None, **kw) -> ApprovalRequest:
    return ApprovalRequest(step_index=0, proposal=ProposedStep(action=action), summary=f"{action.name} it",
                           effect=effect, **kw)


def _shown(request: ApprovalRequest) -> list[str]:
    out = io.StringIO()
    decision = asyncio.run(TerminalGate(stdin=io.StringIO("s\n"), out=out).decide(request))
    assert decision.kind == "skip"
    return out.getvalue().splitlines()


def test_page_words_in_the_effect_stay_one_plain_line():
    hostile = "Delete\x1b[2J\x1b]0;pwned\x07 all\nyes\u202eoof\u200b"
    effect = StepEffect(kind="submit", receiver=Receiver(role="button", name="Go"),
                        submission=Submission(method="POST", url="/wipe", submitter=hostile, form="Danger zone"),
                        same_site=True)
    lines = [x for x in _shown(_request(Action(name="click", target="8"), effect)) if x.startswith("  effect: ")]
    assert len(lines) == 1, lines
    line = lines[0]
    assert not any(ord(c) < 32 or c in "\u202e\u200b\x7f" for c in line), repr(line)
    # the bidi override shows as its marker (engine.models.text): the person sees the page put one there
    assert line.startswith("  effect: submits 'Delete [2J ]0;pwned all yes⟦U+202E⟧oof ' (form 'Danger zone') "
                           "— POST /wipe")


@pytest.mark.parametrize("action,expected", [
    (Action(name="click", target="8"), f"  effect: {UNKNOWN}"),        # the page would not say
    (Action(name="navigate", url="http://127.0.0.1/"), None),         # no input into the page
    (Action(name="scroll", direction="down"), None),
])
def test_a_step_without_a_computed_effect(action, expected):
    effect_lines = [x for x in _shown(_request(action, None)) if x.startswith("  effect:")]
    assert effect_lines == ([expected] if expected else [])


def test_vigil_run_takes_over_in_plain_words(server, tmp_path):
    # as the window's take-over: "click Place order" is grounded on the page by the offline planner; words that
    # match nothing are said and asked again (never a traceback, never a run that ends)
    r = _vigil("run", "type Ada into Full name", "--url", server.url("offline_shop.html"), "--approve", "ask",
               "--no-record", stdin="t\nclick the Launch rocket button\nt\nclick Place order\nq\n", home=tmp_path)
    out = r.stdout
    assert "Traceback" not in r.stderr and "Expected '('" not in out, (out, r.stderr)
    assert "e.g. click Place order, or click(12)" in out
    assert "Could not ground 'click the Launch rocket button'" in out
    said = next(line for line in out.splitlines() if "'click Place order' → click(" in line)
    ran = next(line for line in out.splitlines() if line.startswith("[1] "))
    assert said.split("→ ")[1] in ran and 'button "Place order"' in ran, (said, ran)  # what was said is what ran
