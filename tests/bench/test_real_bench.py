"""`vigil bench real`: its pieces (Playwright's aria line, payload search) and one real run."""

from __future__ import annotations

import asyncio
import json

import pytest

from engine.bench.real import bench_real, find_entries, format_line, format_summary, name_matches, parse_aria_line

from support.cli_inprocess import vigil_in_process
from support.real_corpus import corpus_installed  # noqa: F401


@pytest.mark.parametrize("aria, role_name", [
    ('- generic [ref=e3] [cursor=pointer]:\n  - checkbox "Email me" [checked]\n', ("checkbox", "Email me")),
    ('- generic "Message" [ref=e1]:\n  - paragraph [ref=e2]', ("generic", "Message")),
    ("- 'button \"list: ordered\" [ref=e28] [cursor=pointer]'", ("button", "list: ordered")),
    ('- textbox "Date" [ref=e1]:\n  - /placeholder: Pick one', ("textbox", "Date")),
    ('- button "Say \\"hi\\"" [ref=e2]', ("button", 'Say "hi"')),
    ("", ("", "")),
])
def test_parse_aria_line_skips_unnamed_wrappers(aria, role_name):
    assert parse_aria_line(aria) == role_name


def test_payload_search_by_role_name_and_row():
    entries = [
        {"i": "1", "r": "chk", "n": "Select Row", "xy": [40, 130]},
        {"i": "2", "r": "chk", "n": "Select Row", "xy": [48, 310]},
        {"i": "3", "r": "cell", "n": "Rider 742", "xy": [188, 312]},
        {"i": "4", "r": "clk", "n": "A very long name that the payload cut at fifty ch…", "xy": [5, 5]},
        {"i": "5", "r": "slider", "n": "Volume", "v": "40.0", "xy": [1, 1]},
    ]
    assert [e["i"] for e in find_entries(entries, "checkbox", "select row")] == ["1", "2"]
    assert [e["i"] for e in find_entries(entries, "checkbox", "Select Row", near="Rider 742")] == ["2"]
    assert find_entries(entries, "button", "Select Row") == []
    assert [e["i"] for e in find_entries(entries, ["option", "clickable"],
                                         "A very long name that the payload cut at fifty characters")] == ["4"]
    assert [e["i"] for e in find_entries(entries, "slider", "Volume", value="40")] == ["5"]
    assert not find_entries(entries, "slider", "Volume", value="41")
    assert not name_matches("Select", "Select Row")


def test_bench_real_reports_one_widget_next_to_playwright(corpus_installed):
    lines: list[str] = []
    rep = asyncio.run(asyncio.wait_for(bench_real(["nouislider"], out=lines.append), 120))
    assert rep["summary"]["widgets"] == 1 and len(rep["widgets"]) == 1
    w = rep["widgets"][0]
    assert w["id"] == "nouislider" and w["control"] == {"selector": ".noUi-handle", "role": "slider", "name": "Volume"}
    assert w["playwright"] == {"role": "slider", "name": "Volume"} and w["playwright_named"] is True
    assert w["vigil"]["in_payload"] is True and w["vigil"]["entry"]["r"] == "slider"
    assert w["task"]["steps_total"] == 3 and isinstance(w["task"]["ok"], bool)
    assert lines and lines[0].startswith("nouislider") and 'playwright: slider "Volume"' in lines[0]
    assert "1 widgets:" in format_summary(rep)
    json.dumps(rep)  # the --json object is plain JSON


def test_cli_bench_real_refuses_unknown_widget_ids():
    p = vigil_in_process("bench", "real", "--only", "no-such-widget")  # (what it says is the point, not the process)
    assert p.returncode == 2, p
    assert "BAD_ARGUMENT" in p.stderr and "no-such-widget" in p.stderr and "todomvc-react" in p.stderr
    assert "Traceback" not in p.stderr


@pytest.mark.parametrize("ok", [True, False])
def test_format_line_says_why_a_task_failed(ok):
    from engine.bench.real import StepOutcome, WidgetReport

    w = {"id": "demo", "page": "x.html", "control": {"selector": "#a", "role": "button", "name": "Go"},
         "steps": [{"do": "click", "role": "button", "name": "Go"}]}
    rep = WidgetReport(w, in_payload=ok, vigil_entry={"i": "3", "r": "btn", "n": "Go"} if ok else None,
                       at_spot=[] if ok else [{"i": "4", "r": "clk", "n": "", "xy": [1, 1], "occ": True}],
                       steps=[StepOutcome(w["steps"][0], ok, None, "ok" if ok else "OCCLUDED — covered by div#x")],
                       playwright={"role": "button", "name": "Go"})
    line = format_line(rep)
    assert line.startswith("demo") and 'playwright: button "Go"' in line
    if ok:
        assert "payload ✔" in line and "task ✔ 1/1" in line and "└" not in line
    else:
        assert "payload ✘ (at its place: clk \"\" occ)" in line and "task ✘ 0/1" in line and "OCCLUDED" in line
