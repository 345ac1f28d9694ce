"""False alarms of `auto-safe`: how many ordinary steps ask a person, on a given checkout.

    .venv/bin/python tests/support/false_asks.py [CHECKOUT] [--json OUT]

Every step of the real-library corpus (tests/fixtures/real/corpus.json, the steps `vigil bench real` runs)
and a handful of ordinary steps on the demo shop (accept cookies, add to cart, open a section, type a search,
fill the sign-up form, choose a country) run through the real loop of CHECKOUT's engine — `AgentLoop` with a
`ScriptedPlanner`, policy `auto-safe`, a gate that records each question and approves it — on real Chromium.
It prints each step that asked, with its reasons, and the totals. Two checkouts are compared with the same
corpus and the same steps (this repository's), run one after the other."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
ROOT = TESTS.parent
QUICK = {"type": "any_change", "timeout_ms": 1500}
DEMO_STEPS = [  # ordinary steps a person would not expect to be asked about
    {"action": "click", "target": {"role": "button", "name": "Accept"}},
    {"action": "click", "target": {"role": "button", "name": "Add to cart"}},
    {"action": "click", "target": {"role": "link", "name": "Deals"}},
    {"action": "type", "target": {"role": "searchbox", "name": "Search products"}, "text": "lamp"},
    {"action": "type", "target": {"role": "textbox", "name": "Full name"}, "text": "Ada Lovelace"},
    {"action": "select", "target": {"role": "combobox", "name": "Country"}, "option": "France"},
    {"action": "check", "target": {"role": "checkbox", "name": "Gift wrap"}},
]


def _loop_step(step: dict) -> dict | None:
    """A corpus step as a step of the loop's script; None for a step that only looks ("see")."""
    do = step["do"]
    if do == "see":
        return None
    target = {k: step[k] for k in ("role", "name") if step.get(k)}
    if isinstance(target.get("role"), list):
        target["role"] = target["role"][0]
    out: dict = {"action": do, "target": target, "expect": QUICK, "optional": True}
    for k in ("text", "option", "key", "submit"):
        if k in step:
            out[k] = step[k]
    return out


async def _run(script: list[dict], tab) -> list[dict]:
    """The script through the loop under auto-safe: the questions asked, each with its reasons."""
    from engine.loop import AgentLoop, CallbackGate, ScriptedPlanner
    from engine.models import Decision

    asked: list[dict] = []

    def gate(req):
        if req.proposal.action.name not in ("finish", "fail"):
            asked.append({"step": req.proposal.action.to_string(), "summary": req.summary,
                          "reasons": list(req.sensitive_reasons)})
        return Decision.approve()

    loop = AgentLoop(tab, ScriptedPlanner(script + [{"action": "finish"}]), gate=CallbackGate(gate),
                     policy="auto-safe", screenshots=False, max_steps=len(script) + 2, target_timeout_ms=3000)
    await loop.run("do the ordinary steps")
    return asked


async def measure() -> dict:
    """Run inside the checkout being measured (its `engine` is the one imported)."""
    from engine import launch
    from engine.bench.real import CORPUS_DIR, load_corpus, open_page
    from engine.local_server import serve_directory

    corpus = load_corpus(CORPUS_DIR)
    out: dict = {"engine": str(Path(__import__("engine").__file__).resolve().parent), "widgets": []}
    async with launch() as browser:
        with serve_directory(CORPUS_DIR) as base:
            for w in corpus["widgets"]:
                script = [s for s in (_loop_step(x) for x in w["steps"]) if s is not None]
                if not script:
                    continue
                tab = await open_page(browser, base, w, corpus.get("ready"))
                try:
                    asked = await _run(script, tab)
                finally:
                    await tab.close()
                out["widgets"].append({"id": w["id"], "steps": len(script), "asked": asked})
        with serve_directory(ROOT / "assets" / "demo") as base:
            tab = await browser.new_tab(base + "index.html")
            try:
                script = [{**s, "expect": QUICK, "optional": True} for s in DEMO_STEPS]
                out["demo"] = {"steps": len(script), "asked": await _run(script, tab)}
            finally:
                await tab.close()
    steps = sum(w["steps"] for w in out["widgets"])
    out["totals"] = {"corpus_steps": steps, "corpus_asked": sum(len(w["asked"]) for w in out["widgets"]),
                     "demo_steps": out["demo"]["steps"], "demo_asked": len(out["demo"]["asked"])}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout", nargs="?", default=str(ROOT))
    ap.add_argument("--json", dest="json_out")
    ap.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.inner:
        print(json.dumps(asyncio.run(measure())))
        return 0
    checkout = Path(args.checkout).resolve()
    env = {**os.environ, "PYTHONPATH": f"{checkout}{os.pathsep}{TESTS}"}
    r = subprocess.run([sys.executable, __file__, "--inner"], cwd=checkout, env=env, capture_output=True, text=True,
                       timeout=1800)
    if r.returncode != 0:
        sys.exit(f"false_asks: the run on {checkout} failed:\n{r.stderr[-3000:]}")
    data = json.loads(r.stdout.strip().splitlines()[-1])
    if not data["engine"].startswith(str(checkout)):
        sys.exit(f"false_asks: the engine measured is {data['engine']}, not the one in {checkout}")
    for w in data["widgets"] + [{"id": "demo shop", **data["demo"]}]:
        for a in w["asked"]:
            print(f"{w['id']}: {a['step']} asked: {'; '.join(a['reasons']) or '(no reason)'}")
    t = data["totals"]
    print(f"{checkout}: corpus {t['corpus_asked']} of {t['corpus_steps']} steps asked; "
          f"demo shop {t['demo_asked']} of {t['demo_steps']} asked")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(data, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
