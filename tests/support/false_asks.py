"""False alarms of `auto-safe`: how many ordinary steps ask a person, on a given checkout.

    .venv/bin/python tests/support/false_asks.py [CHECKOUT] [--json OUT]

Every acting step of the real-library corpus (tests/fixtures/real/corpus.json, the steps `vigil bench real`
runs) and ordinary steps on the demo shop (accept cookies, open a section, add to cart, type and submit a
search, fill the sign-up form) run through the real loop of CHECKOUT's engine — `AgentLoop` with a
`ScriptedPlanner`, policy `auto-safe`, a gate that records each question and approves it, screenshots off —
on real Chromium. A corpus step the loop's script cannot say (a target found by its row, `near`) is skipped
and counted; "see" steps only look and are not steps. It prints each step that asked, with its reasons, and
the totals. The corpus and the demo steps are this repository's, so two checkouts are measured alike; run
them one after the other."""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
ROOT = TESTS.parent
QUICK = {"type": "any_change", "timeout_ms": 1500}  # the task's own checks are bench real's; here only asks count
TARGET_TIMEOUT_MS = 3000  # as long as bench real waits for a target to appear
ORDINARY, OTHER = "ordinary", "not ordinary"
DEMO_STEPS: list[tuple[str, dict]] = [  # (ordinary or not, step): the ordinary ones must not ask
    (ORDINARY, {"action": "click", "target": {"role": "button", "name": "Accept"}}),
    (ORDINARY, {"action": "click", "target": {"name": "Show more offers"}}),  # opens a list (a listener-only div)
    (ORDINARY, {"action": "click", "target": {"role": "link", "name": "Deals"}}),
    (ORDINARY, {"action": "click", "target": {"role": "button", "name": "Add to cart", "nth": 0}}),
    (ORDINARY, {"action": "type", "target": {"role": "searchbox", "name": "Search products"}, "text": "lamp"}),
    (ORDINARY, {"action": "click", "target": {"role": "button", "name": "Search"}}),
    (ORDINARY, {"action": "type", "target": {"role": "searchbox", "name": "Search products"}, "text": "mug",
           "submit": True}),
    (ORDINARY, {"action": "type", "target": {"role": "textbox", "name": "Full name"}, "text": "Ada Lovelace"}),
    (ORDINARY, {"action": "type", "target": {"role": "textbox", "name": "Email Address"}, "text": "ada@example.com"}),
    (ORDINARY, {"action": "select", "target": {"role": "combobox", "name": "Country"}, "option": "France"}),
    (ORDINARY, {"action": "check", "target": {"role": "checkbox", "name": "Gift wrap"}}),
    # shown beside them, not counted as false alarms: a secret, a subscription and an account created
    (OTHER, {"action": "type", "target": {"name": "Password"}, "text": "correct horse"}),
    (OTHER, {"action": "click", "target": {"name": "Subscribe to newsletter"}}),
    (OTHER, {"action": "click", "target": {"role": "button", "name": "Create account"}}),
]


# ------------------------------------------------------------------ corpus steps as the loop's script
def corpus_label(step: dict) -> str:
    """A corpus step in words, as bench real's `target_text` says it (without importing the checkout)."""
    role = step.get("role")
    bits = [step["do"], "/".join(role) if isinstance(role, list) else (role or "any role")]
    if step.get("name"):
        bits.append(f'"{step["name"]}"')
    if step.get("near"):
        bits.append(f'on the row of "{step["near"]}"')
    for k in ("text", "option", "key"):
        if k in step:
            bits.append(f"{k}={step[k]!r}")
    return " ".join(bits)


def loop_step(step: dict) -> dict | str | None:
    """A corpus step as a step of the loop's script; None for a step that only looks ("see"); a string
    saying why for a step the script cannot say."""
    if step["do"] == "see":
        return None
    if step.get("near"):
        return "found by its row (near), which a script target cannot say"
    target: dict = {}
    role = step.get("role")
    if isinstance(role, list):  # any of several roles: the name alone, exactly
        target["exact"] = True
    elif role:
        target["role"] = role
    if step.get("name"):
        target["name"] = step["name"]
    if not target.get("name") and not target.get("role"):
        return "no role or name"
    out: dict = {"action": step["do"], "target": target, "expect": QUICK, "optional": True}
    for k in ("text", "option", "key", "submit"):
        if k in step:
            out[k] = step[k]
    return out


def corpus_scripts(widgets: list[dict]) -> list[dict]:
    """Per widget: its script, the corpus label of each script step, and the steps skipped with why."""
    out = []
    for w in widgets:
        script, labels, skipped = [], [], []
        for s in w["steps"]:
            ls = loop_step(s)
            if isinstance(ls, dict):
                script.append(ls)
                labels.append(corpus_label(s))
            elif isinstance(ls, str):
                skipped.append({"step": corpus_label(s), "why": ls})
        out.append({"widget": w, "script": script, "labels": labels, "skipped": skipped})
    return out


# ------------------------------------------------------------------------------- one run of the loop
def _question(req) -> dict:
    """One question the gate was asked, in words: which script step, what kind, why, and the effect when the
    engine computes one."""
    held = (req.proposal.details or {}).get("held")
    kind = "dialog" if req.dialog is not None else f"held {held}" if held else "step"
    effect = getattr(req, "effect", None)  # engines before issue 37 have no effect
    return {"plan_index": req.proposal.plan_index, "kind": kind, "step": req.proposal.action.to_string(),
            "summary": req.summary, "reasons": list(req.sensitive_reasons),
            "effect": effect.line() if effect is not None else None}


async def run_script(script: list[dict], tab) -> tuple[list[dict], list[str]]:
    """The script through the loop under auto-safe: (the questions asked, what became of each script step:
    "ran", "failed: why" or "not reached")."""
    from engine.loop import AgentLoop, CallbackGate, ScriptedPlanner
    from engine.models import Decision

    asked: list[dict] = []

    def gate(req):
        if req.proposal.action.name not in ("finish", "fail"):
            asked.append(_question(req))
        return Decision.approve()

    loop = AgentLoop(tab, ScriptedPlanner(script + [{"action": "finish"}]), gate=CallbackGate(gate),
                     policy="auto-safe", screenshots=False, max_steps=2 * len(script) + 5,
                     target_timeout_ms=TARGET_TIMEOUT_MS)
    result = await loop.run("do the ordinary steps")
    fate = ["not reached"] * len(script)
    for rec in result.steps:
        i = rec.proposal.plan_index if rec.proposal is not None else None
        if i is None or i >= len(script) or rec.proposal.action.name in ("finish", "fail"):
            continue
        r = rec.result
        fate[i] = "ran" if r is not None and r.success else f"failed: {(r.message if r else rec.note)[:160]}"
    return asked, fate


def _steps_report(labels: list[str], asked: list[dict], fate: list[str]) -> list[dict]:
    """Per script step: its words, what became of it, the questions it raised."""
    return [{"step": label, "fate": fate[i], "asked": [q for q in asked if q["plan_index"] == i]}
            for i, label in enumerate(labels)]


# --------------------------------------------------------------------------- inside the checkout
async def measure() -> dict:
    """Run inside the checkout being measured (its `engine` is the one imported)."""
    import engine
    from engine import launch
    from engine.bench.real import load_corpus, open_page, require_installed
    from engine.local_server import serve_directory

    corpus_dir = TESTS / "fixtures" / "real"  # this repository's corpus, whichever engine runs it
    require_installed(corpus_dir)
    corpus = load_corpus(corpus_dir)
    out: dict = {"engine": str(Path(engine.__file__).resolve().parent), "widgets": []}
    async with launch() as browser:
        with serve_directory(corpus_dir) as base:
            for c in corpus_scripts(corpus["widgets"]):
                w, steps = c["widget"], []
                if c["script"]:
                    tab = await open_page(browser, base, w, corpus.get("ready"))
                    try:
                        steps = _steps_report(c["labels"], *await run_script(c["script"], tab))
                    finally:
                        await tab.close()
                out["widgets"].append({"id": w["id"], "steps": steps, "skipped": c["skipped"]})
        with serve_directory(ROOT / "assets" / "demo") as base:
            tab = await browser.new_tab(base + "index.html")
            try:
                script = [{**s, "expect": QUICK, "optional": True} for _, s in DEMO_STEPS]
                labels = [f"[{kind}] {_demo_label(s)}" for kind, s in DEMO_STEPS]
                out["demo"] = {"steps": _steps_report(labels, *await run_script(script, tab))}
            finally:
                await tab.close()
    return out


def _demo_label(s: dict) -> str:
    t = s["target"]
    bits = [s["action"], t.get("role", "any role"), f'"{t["name"]}"']
    return " ".join(bits + [f"{k}={s[k]!r}" for k in ("text", "option", "submit") if k in s])


# ------------------------------------------------------------------------------------ the figures
def totals(data: dict) -> dict:
    steps = [s for w in data["widgets"] for s in w["steps"]]
    demo = data["demo"]["steps"]
    ordinary = [s for s in demo if s["step"].startswith(f"[{ORDINARY}]")]

    def asked(ss: list[dict]) -> int:
        return sum(1 for s in ss if any(q["kind"] == "step" for q in s["asked"]))

    return {"corpus_steps": len(steps), "corpus_ran": sum(s["fate"] == "ran" for s in steps),
            "corpus_skipped": sum(len(w["skipped"]) for w in data["widgets"]),
            "corpus_asked": asked(steps),
            "corpus_other_questions": sum(1 for s in steps for q in s["asked"] if q["kind"] != "step"),
            "demo_ordinary_steps": len(ordinary), "demo_ordinary_ran": sum(s["fate"] == "ran" for s in ordinary),
            "demo_ordinary_asked": asked(ordinary), "demo_other_steps": len(demo) - len(ordinary),
            "demo_other_asked": asked(demo) - asked(ordinary)}


def engine_digest(checkout: Path) -> str:
    """A short hash of the checkout's engine/*.py, to tell which engine a figure came from."""
    h = hashlib.sha256()
    for p in sorted((checkout / "engine").rglob("*.py")):
        h.update(str(p.relative_to(checkout)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:12]


def report(data: dict, checkout: Path) -> str:
    lines = []
    for w in data["widgets"] + [{"id": "demo shop", "skipped": [], **data["demo"]}]:
        for s in w["steps"]:
            for q in s["asked"]:
                why = "; ".join(q["reasons"]) or "(no reason)"
                eff = f" [effect: {q['effect']}]" if q["effect"] else ""
                lines.append(f"{w['id']}: {s['step']} -> {q['kind']} asked: {why}{eff}")
            if s["fate"] != "ran":
                lines.append(f"{w['id']}: {s['step']} -> {s['fate']}")
        for sk in w["skipped"]:
            lines.append(f"{w['id']}: {sk['step']} -> skipped: {sk['why']}")
    t = data["totals"]
    lines.append(f"{checkout} (engine {data['engine_digest']}): corpus {t['corpus_asked']} of {t['corpus_steps']} "
                 f"steps asked ({t['corpus_ran']} ran, {t['corpus_skipped']} skipped, "
                 f"{t['corpus_other_questions']} other questions); demo shop ordinary steps "
                 f"{t['demo_ordinary_asked']} of {t['demo_ordinary_steps']} asked ({t['demo_ordinary_ran']} ran), "
                 f"other demo steps {t['demo_other_asked']} of {t['demo_other_steps']} asked")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout", nargs="?", default=str(ROOT))
    ap.add_argument("--json", dest="json_out", help="also write the figures as JSON to this file")
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
    if not data["engine"].startswith(str(checkout) + os.sep):
        sys.exit(f"false_asks: the engine measured is {data['engine']}, not the one in {checkout}")
    data["checkout"], data["engine_digest"] = str(checkout), engine_digest(checkout)
    data["totals"] = totals(data)
    print(report(data, checkout))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(data, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
