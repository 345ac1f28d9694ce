"""Bidi controls from pages and people never take effect where Vigil shows text (issue 38, item 6; the
"trojan source" guidance): U+202E and the other eleven show as markers, `⟦U+202E⟧`.

End to end, as separate `vigil` processes on a real Chromium and a real local HTTP server: a page whose
element names and title hold every control (tests/fixtures/bidi_names.html), run through `vigil run` and
`vigil fleet` with a person at the prompt; `vigil sessions`; the HTML report and the Playwright test
exported from the session. Machine output (`--json`, the JSON trace) keeps the page's own characters,
byte-exact. Letters of right-to-left scripts are no controls: Hebrew and Arabic pass as they are.
"""

from __future__ import annotations

import ast
import io
import json
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from engine.models.text import BIDI_CONTROLS, BidiSafeStream, bidi_safe
from engine.snapshot.locators.model import py_str

from support.cli_inprocess import vigil_in_process
from support.paths import ROOT

HEBREW, ARABIC = "שלום עולם", "مرحبا بالعالم"
# what the fixture page's elements are called, as the page computes their names
PAYEE = "Payee \u2066(\u2067name\u2069)\u2068x\u2069"
AGREE = "Agree \u202aleft\u202c \u202bright\u202c \u202dlro\u202c"
PAY = "Pay \u202e001$ won\u202c"
GREET = "שלום مرحبا"
TASK = "pay the invoice \u202e now"
STEPS = [
    {"action": "type", "target": {"name": PAYEE}, "text": "Ada \u202eevil"},
    {"action": "check", "target": {"name": AGREE}},
    {"action": "click", "target": {"role": "button", "name": GREET}},
    {"action": "click", "target": {"role": "button", "name": PAY}},
    {"action": "finish", "answer": "paid \u202e ok"},
]


def _raw(text: str) -> list[str]:
    """The bidi controls `text` holds, by code point."""
    return [f"U+{ord(c):04X}" for c in BIDI_CONTROLS if c in text]


def _vigil(*args: str, home: Path, stdin: str | None = None, timeout: float = 180) -> subprocess.CompletedProcess:
    env = {**os.environ, "VIGIL_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "engine.cli", *args], cwd=ROOT, input=stdin, capture_output=True,
                          text=True, encoding="utf-8", timeout=timeout, env=env)


def _vigil_here(*args: str, home: Path) -> subprocess.CompletedProcess:
    """A listing or an export, in this process (what it writes is the point, not the process), on the store at
    `home`."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("VIGIL_HOME", str(home))
        return vigil_in_process(*args)


# -- the function -------------------------------------------------------------------------------------------
def test_every_bidi_control_shows_as_its_marker():
    """The twelve are Unicode's whole Bidi_Control set: every explicit embedding, override and isolate
    (found over all of Unicode by bidi class) and the three implicit marks."""
    explicit = {"LRE", "RLE", "PDF", "LRO", "RLO", "LRI", "RLI", "FSI", "PDI"}
    found = {chr(c) for c in range(sys.maxunicode + 1) if unicodedata.bidirectional(chr(c)) in explicit}
    marks = {unicodedata.lookup(n) for n in ("LEFT-TO-RIGHT MARK", "RIGHT-TO-LEFT MARK", "ARABIC LETTER MARK")}
    assert set(BIDI_CONTROLS) == found | marks and len(BIDI_CONTROLS) == 12
    for c in BIDI_CONTROLS:
        assert bidi_safe(f"a{c}b") == f"a⟦U+{ord(c):04X}⟧b"
    everything = bidi_safe("".join(BIDI_CONTROLS) * 3)
    assert not _raw(everything) and everything.count("⟦U+") == 36
    assert bidi_safe(PAY) == "Pay ⟦U+202E⟧001$ won⟦U+202C⟧"


@pytest.mark.parametrize("text", [HEBREW, ARABIC, GREET, "ﺍﻟﺴﻼﻡ", "Price: 100 ₪ (שקל)", "café", "", "plain ascii"])
def test_right_to_left_letters_are_no_alarm(text):
    assert bidi_safe(text) is text  # untouched: not even copied


def test_a_python_literal_escapes_the_controls_and_keeps_the_string():
    """A locator in a generated test or the window: the literal holds `\\u202e`, which is the same string."""
    lit = py_str(PAY)
    assert not _raw(lit) and "\\u202e" in lit
    assert ast.literal_eval(lit) == PAY and json.loads(lit) == PAY
    assert py_str(GREET) == f'"{GREET}"'


def test_the_stream_wrapper_passes_everything_but_the_controls():
    inner = io.StringIO()
    out = BidiSafeStream(inner)
    print(f"[1] ok click {PAY}", file=out)
    out.writelines([HEBREW, "\n"])
    assert inner.getvalue() == f"[1] ok click {bidi_safe(PAY)}\n{HEBREW}\n"
    assert out.getvalue() == inner.getvalue()  # everything but writing is the wrapped stream's


# -- end to end ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def recorded(server, tmp_path_factory):
    """`vigil run` on the page, a person approving each step at the prompt: (its output, the store's home)."""
    home = tmp_path_factory.mktemp("bidi_home")
    steps = home / "steps.json"
    steps.write_text(json.dumps(STEPS))
    r = _vigil("run", TASK, "--url", server.url("bidi_names.html"), "--script", str(steps), "--approve", "ask",
               home=home, stdin="a\n" * 8)
    assert r.returncode == 0, r.stdout + r.stderr
    return r, home


def test_vigil_run_prints_markers_never_controls(recorded):
    r, _ = recorded
    assert not _raw(r.stdout) and not _raw(r.stderr), (_raw(r.stdout), _raw(r.stderr))
    out = r.stdout
    # the prompt (target, the typed text) and the step lines name every element with its markers
    assert f'target: textbox "{bidi_safe(PAYEE)}"' in out
    assert f'Check checkbox "{bidi_safe(AGREE)}"' in out
    assert f'Clicked button "{bidi_safe(PAY)}"' in out and "⟦U+202E⟧001$ won⟦U+202C⟧" in out
    assert 'Type "Ada ⟦U+202E⟧evil"' in out
    assert "finished: paid ⟦U+202E⟧ ok" in out
    assert f'Clicked button "{GREET}"' in out  # right-to-left letters as they are


def test_vigil_sessions_lists_markers_and_its_json_keeps_the_page_text(recorded):
    _, home = recorded
    listing = _vigil_here("sessions", home=home)
    assert listing.returncode == 0, listing.stderr
    assert not _raw(listing.stdout) and bidi_safe(TASK) in listing.stdout, listing.stdout
    data = _vigil_here("sessions", "--json", home=home)
    [row] = json.loads(data.stdout)  # machine output: byte-exact JSON, the task as the person wrote it
    assert TASK in row["title"]


def test_the_report_and_the_exported_test_hold_no_control(recorded, tmp_path):
    _, home = recorded
    [row] = json.loads(_vigil_here("sessions", "--json", home=home).stdout)
    html_path, trace, test_py = tmp_path / "r.html", tmp_path / "t.json", tmp_path / "test_pay.py"
    r = _vigil_here("export", row["id"], "--html", str(html_path), "--json", str(trace), home=home)
    assert r.returncode == 0, r.stderr
    report = html_path.read_text(encoding="utf-8")
    assert not _raw(report), _raw(report)
    for shown in (bidi_safe(PAY), bidi_safe(AGREE), bidi_safe(PAYEE), bidi_safe(TASK), "fdp.exe"):
        assert shown in report, shown
    assert "Invoice ⟦U+202E⟧fdp.exe⟦U+202C⟧ review" in report  # the page's title
    assert GREET in report  # no false alarm on right-to-left letters
    steps = json.loads(trace.read_text(encoding="utf-8"))["steps"]
    assert any(s.get("target", {}).get("name") == PAY for s in steps), "the trace keeps what was recorded"

    r = _vigil_here("export", row["id"], "--playwright", str(test_py), home=home)
    assert r.returncode == 0, r.stderr
    code = test_py.read_text(encoding="utf-8")
    assert not _raw(code), _raw(code)
    literals = {n.value for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    assert PAY in literals, "the locator still names the button exactly"


def test_vigil_fleet_prints_markers_never_controls(server, tmp_path):
    fleet = tmp_path / "fleet.json"
    fleet.write_text(json.dumps({"runs": [{"name": "payer \u202eA", "task": TASK, "url": server.url("bidi_names.html"),
                                           "script": [STEPS[3], STEPS[4]]}]}))
    r = _vigil("fleet", str(fleet), "--approve", "ask", home=tmp_path, stdin="a\n" * 4)
    assert not _raw(r.stdout) and not _raw(r.stderr), (r.stdout, r.stderr)
    assert "payer ⟦U+202E⟧A" in r.stdout and bidi_safe(PAY) in r.stdout, r.stdout + r.stderr


def test_with_json_the_prompt_shows_markers_and_the_json_keeps_the_page_text(server, tmp_path):
    """`vigil run --json`: the person's prompt goes to stderr, with markers; stdout is the program's JSON,
    byte-exact: the names as the page wrote them (a JSON reader gets the page's own characters)."""
    steps = tmp_path / "steps.json"
    steps.write_text(json.dumps([STEPS[3], STEPS[4]]))
    r = _vigil("run", TASK, "--url", server.url("bidi_names.html"), "--script", str(steps), "--approve", "ask",
               "--json", "--no-record", home=tmp_path, stdin="a\n" * 4)
    assert r.returncode == 0, r.stderr
    assert not _raw(r.stderr) and f'target: button "{bidi_safe(PAY)}"' in r.stderr, r.stderr
    result = json.loads(r.stdout)
    assert result["answer"] == "paid \u202e ok" and "\u202e" in r.stdout  # not a marker: the raw character
