"""Limits said out loud, through the real `vigil snapshot` command (issue [10]): every format stops at
a size budget and says so in its output — what was cut, how many nodes, how to get more — and
`--max-bytes` / `--max-nodes` raise the budgets. Pages come from engine.bench.generate_page, served
by a real local HTTP server. The 200k-element page goes through `python -m engine.cli` processes; the
other cases run the same command in this process (engine.cli.main), sparing each its Python start-up."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from engine.bench import generate_page
from engine.local_server import serve_directory

from support.cli_inprocess import vigil_in_process
from support.paths import ROOT

REPO = ROOT
BIG = 200_000  # the walk's own node budget (elements): the big page has more
MID = 4_000  # enough for every format to reach its cut, and for a tree budget of 2,500 nodes


def big_page() -> str:
    """More elements than the walk's node budget: a realistic shop page of 20,000 elements (cards, tables,
    forms: what the formats write at length) followed by 181,000 bare, empty <i> elements, where the walk stops.
    (A realistic page of 200,000 elements made the browser lay out and walk a grid of 14,000 cards: about
    1.4× the time, for the same cuts; <i> elements with a number in each, about 1.25× the walk.) No smaller
    page proves the same: the walk's budget is 200,000 elements, and --max-nodes only raises it."""
    page = generate_page(20_000)
    filler = "<div>" + "<i></i>" * 181_000 + "</div>"
    assert "</footer>" in page
    return page.replace("</footer>", "</footer>" + filler, 1)


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    root = tmp_path_factory.mktemp("limits")
    (root / "big.html").write_text(big_page(), encoding="utf-8")
    (root / "mid.html").write_text(generate_page(MID), encoding="utf-8")
    with serve_directory(root) as base:
        yield base


def _start(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "engine.cli", "snapshot", *args, "--timeout", "200"], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _done(p: subprocess.Popen) -> tuple[bytes, str]:
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err.decode(errors="replace")
    assert b"Traceback" not in err
    return out, err.decode()


def _vigil(*args: str) -> tuple[bytes, str]:
    """`vigil snapshot ARGS` in this process: stdout as the bytes a process would write (UTF-8), and stderr."""
    r = vigil_in_process("snapshot", *args, "--timeout", "200")
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    return r.stdout.encode(), r.stderr


def test_a_200k_element_page_stays_in_budget_and_says_what_was_cut(pages):
    # both at once: each is mostly the browser's walk of the page
    full_p, json_p = _start(pages + "big.html", "--format", "full"), _start(pages + "big.html", "--json")
    full, full_err = _done(full_p)
    doc_bytes, _ = _done(json_p)

    # --format full printed 12.5 MB before; now its default budget of 2 MB, with a marker where it stops
    assert len(full) <= 2_000_000 + 1
    text = full.decode()
    assert "CUT: this output stops at its size budget of 2,000,000 bytes, before node" in text
    assert "more nodes are not written" in text and "--max-bytes" in text
    assert "cut after 200,000 nodes at node" in text and "--max-nodes" in text  # the walk's own cut
    assert "TRUNCATED" in full_err

    # --json printed 76.6 MB before; now 10 MB, with every cut named in words at the top
    assert len(doc_bytes) <= 10_000_000 + 1
    doc = json.loads(doc_bytes)
    assert list(doc)[:2] == ["format", "truncated"]
    cuts = " ".join(doc["truncated"])
    assert "cut after 200,000 nodes" in cuts
    listed = len(doc["nodes"])
    assert 1000 < listed < 200_000
    assert f"{listed:,} of 200,000 nodes are listed" in cuts and "--max-bytes" in cuts
    assert doc["nodes"][-1]["node_id"] and "interactive_tree" in doc["payload"]  # whole nodes, a whole payload
    assert doc["stats"]["truncated"] is True


@pytest.mark.parametrize("fmt,args,budget,marker", [
    ("semantic", ["--full-page"], 30_000, "CUT: this payload stops at its size budget of 30,000 bytes"),
    ("tree", ["--max-nodes", "5000"], 60_000, "CUT: this output stops at its size budget of 60,000 bytes"),
    ("skeleton", ["--max-nodes", "5000"], 20_000, "CUT: this output stops at its size budget of 20,000 bytes"),
    ("full", [], 100_000, "CUT: this output stops at its size budget of 100,000 bytes"),
    ("json", [], 200_000, "CUT: the nodes list stops at the size budget of 200,000 bytes"),
])
def test_every_format_honours_max_bytes_and_says_so(pages, fmt, args, budget, marker):
    fmt_args = ["--json"] if fmt == "json" else ["--format", fmt]
    out, err = _vigil(pages + "mid.html", *fmt_args, *args, "--max-bytes", f"{budget // 1000}k")
    assert len(out) <= budget + 1, f"{fmt}: {len(out)} bytes for a budget of {budget}"
    text = out.decode()
    assert marker in text and "--max-bytes" in text, text[-600:]
    if fmt in ("semantic", "tree", "json"):
        data = json.loads(text)  # cut where a whole entry ends: still one valid JSON document
        if fmt == "semantic":
            kept = len(data["interactive_tree"])
            assert f"{kept:,} of " in data["cut"] and "listed elements are written" in data["cut"]
        if fmt == "tree":
            assert data["page"]["meta"]["truncated"] is True and data["page"]["meta"]["size_budget"] == budget
    if fmt != "json":
        assert "TRUNCATED" in err


def test_raising_the_budgets_gives_more(pages):
    tree = json.loads(_vigil(pages + "mid.html", "--format", "tree")[0])
    more = json.loads(_vigil(pages + "mid.html", "--format", "tree", "--max-nodes", "2500")[0])
    # the tree's own node budget says how to raise it, and raising it works
    note = " ".join(c.get("text", "") for c in tree["page"]["body"]["children"] if c.get("role") == "truncated")
    assert "exceed the budget of 1500" in note and "--max-nodes N" in note
    assert tree["page"]["meta"]["kept_nodes"] == 1500 and more["page"]["meta"]["kept_nodes"] == 2500

    full, _ = _vigil(pages + "mid.html", "--format", "full", "--max-bytes", "0")
    assert len(full) > 100_000 and b"CUT:" not in full and b"TRUNCATED" not in full
    assert full.rstrip().endswith(b"</body>") or full.rstrip().endswith(b"</html>")


@pytest.mark.parametrize("flag,value,words", [
    ("--max-bytes", "lots", "is not a size"), ("--max-bytes", "-5", "is not a size"),
    ("--max-nodes", "0", "is not a node count"), ("--max-nodes", "many", "is not a node count"),
])
def test_bad_budgets_are_clear_errors(flag, value, words):
    r = vigil_in_process("snapshot", "http://127.0.0.1:9/", flag, value)  # argparse's exit(2), caught
    assert r.returncode == 2 and words in r.stderr and flag in r.stderr and "Traceback" not in r.stderr
