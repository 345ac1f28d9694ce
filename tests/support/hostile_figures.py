"""Run the hostile corpus (tests/acceptance/test_hostile_corpus.py) against a checkout and print, per pattern, whether
it held through the loop and through `vigil mcp`, and the totals.

    .venv/bin/python tests/support/hostile_figures.py [CHECKOUT] [-k EXPR] [--json OUT]

CHECKOUT (default: this repository) is the tree whose `engine` is imported: the corpus, its pages and
its server are this repository's, so two checkouts are measured with the same corpus. The script checks
that the engine it measured is the checkout's own."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TESTS))

from support.hostile_corpus import PATTERNS  # noqa: E402


def run(checkout: Path, select: str | None) -> dict[str, dict[str, str]]:
    """{pattern: {"loop"|"mcp": "held" | "NOT held: why" | "error: why"}}"""
    env = {**os.environ, "VIGIL_CHECKOUT": str(checkout), "PYTHONPATH": f"{checkout}{os.pathsep}{TESTS}"}
    probe = subprocess.run([sys.executable, "-c", "import engine; print(engine.__file__)"], cwd=checkout, env=env,
                           capture_output=True, text=True)
    where = Path(probe.stdout.strip()).resolve()
    if not str(where).startswith(str(checkout.resolve())):
        sys.exit(f"hostile_figures: the engine imported is {where}, not the one in {checkout}")
    with tempfile.TemporaryDirectory() as tmp:
        xml = Path(tmp) / "junit.xml"
        corpus = TESTS / "acceptance" / "test_hostile_corpus.py"
        cmd = [sys.executable, "-m", "pytest", str(corpus), "-q", "-p", "no:cacheprovider",
               f"--junitxml={xml}", "-o", "junit_logging=no", f"--rootdir={TESTS.parent}"]
        if select:
            cmd += ["-k", select]
        subprocess.run(cmd, cwd=checkout, env=env)
        out: dict[str, dict[str, str]] = {}
        for case in ET.parse(xml).getroot().iter("testcase"):
            name = case.get("name", "")
            if "[" not in name:
                continue
            mode, pid = name.split("[", 1)[0].removeprefix("test_"), name.split("[", 1)[1].rstrip("]")
            bad = case.find("failure") if case.find("failure") is not None else case.find("error")
            skipped = case.find("skipped")
            if bad is not None:
                msg = (bad.get("message") or "").splitlines()[0]
                msg = msg.split("not held through the loop: ", 1)[-1].split("not held through vigil mcp: ", 1)[-1]
                out.setdefault(pid, {})[mode] = ("NOT held: " if bad.tag == "failure" else "error: ") + msg
            elif skipped is not None:
                out.setdefault(pid, {})[mode] = "skipped"
            else:
                out.setdefault(pid, {})[mode] = "held"
        return out


def table(results: dict[str, dict[str, str]], width: int = 110) -> str:
    lines = [f"{'pattern':44} {'#':2} {'loop':9} {'mcp':9} why not held", "-" * width]
    totals = {"loop": [0, 0], "mcp": [0, 0]}
    for pid, p in PATTERNS.items():
        r = results.get(pid)
        if r is None:
            continue
        cells, why = [], []
        for mode in ("loop", "mcp"):
            v = r.get(mode)
            if v is None:
                cells.append("-")
                continue
            held = v == "held"
            totals[mode][0] += held
            totals[mode][1] += 1
            cells.append("held" if held else "NOT held")
            if not held:
                why.append(f"{mode}: {v.removeprefix('NOT held: ')}")
        lines.append(f"{pid:44} {p.problem:2} {cells[0]:9} {cells[1]:9} {' | '.join(why)[:400]}")
    lines.append("-" * width)
    both = sum(1 for pid in results if all(v == "held" for v in results[pid].values()))
    lines.append(f"loop: {totals['loop'][0]}/{totals['loop'][1]} held; mcp: {totals['mcp'][0]}/{totals['mcp'][1]} "
                 f"held; patterns held everywhere they ran: {both}/{len(results)}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout", nargs="?", default=str(TESTS.parent))
    ap.add_argument("-k", dest="select", help="only the tests matching this pytest -k expression")
    ap.add_argument("--json", help="also write the results as JSON to this file")
    a = ap.parse_args()
    checkout = Path(a.checkout).resolve()
    results = run(checkout, a.select)
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1))
    rev = subprocess.run(["git", "-C", str(checkout), "log", "-1", "--format=%h %s"], capture_output=True,
                         text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(checkout), "status", "--short", "--untracked-files=no", "engine"],
                           capture_output=True, text=True).stdout.strip()
    print(f"\nhostile corpus against {checkout} ({rev[:70]}{', engine/ has uncommitted changes' if dirty else ''})")
    print(table(results))


if __name__ == "__main__":
    main()
