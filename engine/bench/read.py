"""`vigil bench read`: can an agent read the page, and learn what its action did?

Pages (engine/bench/read_pages.py: generated ones and real ones from the corpus, Python
documentation among them) with questions whose answer is text a person sees in the viewport, and
actions whose outcome is only text. For each page: is every answer in Vigil's default MCP snapshot
(`reading`, engine/mcp/view.py), and in Playwright's `aria_snapshot(mode="ai")` — what Playwright
MCP's browser_snapshot returns — taken of the same tab in the same run; the tokens of each (4 ASCII
characters a token), and of the seed's semantic payload for reference. For each action: is its
outcome in the action's result (the words the loop, the chat, `vigil run` and MCP results carry),
and is a step whose outcome is an error message left unverified.

Targets: every answer and outcome present; reading ≤ 1/5 of Playwright's tokens on pages of 1,000
elements and more, and ≤ 1x on smaller ones.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

from engine.bench.read_pages import PAGES as READ_PAGES
from engine.bench.read_pages import Act, ReadPage
from engine.bench.read_pages_outcomes import OUTCOME_PAGES
from engine.errors import VigilError
from engine.names import norm
from engine.snapshot.serialize.tokens import estimate_tokens

LARGE = 1000  # elements: from here the reading must cost at most a fifth of Playwright's snapshot
PAGES: tuple[ReadPage, ...] = READ_PAGES + tuple(OUTCOME_PAGES)


def _has(text: str, words: str) -> bool:
    return norm(words) in norm(text)


async def _act(tab, act: Act) -> dict:
    snap = await tab.snapshot()
    found = snap.find(act.role, act.name)
    if not found:
        return {"act": f"{act.verb} {act.name}", "error": f"no {act.role} {act.name!r} on the page"}
    nid = found[0].node_id
    if act.verb == "type_submit":
        r = await tab.type(nid, act.text, submit=True)
    else:
        r = await tab.click(nid)
    v = r.verification
    verified = bool(v and v.success)
    said = [*v.page_state.recent_mutations, *v.success_messages] if v is not None and v.page_state else []
    return {"act": f"{act.verb} {act.name}", "outcome": act.outcome, "in_result": _has(r.message, act.outcome),
            "verified": verified, "right_verdict": verified != act.failed, "result": r.message, "events": said}


async def _page(browser, base: str, page: ReadPage) -> dict:
    from engine.bench.real import open_page
    from engine.snapshot.serialize.reading import render_reading

    tab = await open_page(browser, base, {"page": page.path}, "html[data-ready]" if page.ready else None)
    try:
        await asyncio.sleep(0.2)
        snap = await tab.snapshot()
        reading, _ = render_reading(snap)  # what browser_snapshot returns by default (engine/mcp/view.py)
        reading_tokens = estimate_tokens(reading)
        semantic = snap.serialize("semantic").tokens
        aria = await tab.page.aria_snapshot(mode="ai")
        aria_tokens = estimate_tokens(aria)
        questions = [{"question": q, "answer": a, "in_reading": _has(reading, a), "in_playwright": _has(aria, a)}
                     for q, a in page.questions]
        acts = [await _act(tab, a) for a in page.acts]
        absent = page.extra.get("absent_from_events") or ()
        for a in acts:  # words the step's events must never carry (style sheet or script text)
            a["events_clean"] = not any(w in s for s in a.pop("events", []) for w in absent)
        return {"key": page.key, "title": page.title, "elements": len(snap.nodes()), "reading_tokens": reading_tokens,
                "semantic_tokens": semantic, "playwright_tokens": aria_tokens,
                "ratio": round(reading_tokens / max(1, aria_tokens), 3), "questions": questions, "acts": acts}
    finally:
        await tab.close()


async def bench_read(pages: tuple[ReadPage, ...] = PAGES, out=print) -> dict:
    from engine import launch
    from engine.bench.real import CORPUS_DIR, missing_parts
    from engine.local_server import serve_directory

    missing = missing_parts(CORPUS_DIR) if any(p.corpus for p in pages) else []
    skipped = [p.key for p in pages if p.corpus] if missing else []
    rows = []
    with tempfile.TemporaryDirectory(prefix="vigil-bench-read-") as tmp:
        for p in pages:
            if p.html:
                (Path(tmp) / p.path).write_text(p.html, encoding="utf-8")
        with serve_directory(tmp) as gen_base, serve_directory(CORPUS_DIR) as corpus_base:
            async with launch() as browser:
                for p in pages:
                    if p.key in skipped:
                        continue
                    out(f"… {p.title}")
                    base = corpus_base if p.corpus else gen_base
                    rows.append(await _page(browser, base, p))
    return summarize(rows, skipped, missing)


def summarize(rows: list[dict], skipped: list[str] | None = None, missing: list[str] | None = None) -> dict:
    qs = [q for r in rows for q in r["questions"]]
    acts = [a for r in rows for a in r["acts"]]
    large = [r["ratio"] for r in rows if r["elements"] >= LARGE]
    small = [r["ratio"] for r in rows if r["elements"] < LARGE]
    rep = {
        "pages": rows,
        "answers_in_reading": sum(q["in_reading"] for q in qs),
        "answers_in_playwright": sum(q["in_playwright"] for q in qs),
        "questions": len(qs),
        "outcomes_in_result": sum(bool(a.get("in_result")) for a in acts),
        "right_verdicts": sum(bool(a.get("right_verdict")) for a in acts), "actions": len(acts),
        "events_clean": sum(a.get("events_clean", True) for a in acts),
        "max_ratio_large": max(large) if large else None, "max_ratio_small": max(small) if small else None,
        "skipped": skipped or [], "missing": missing or [],
    }
    rep["target_met"] = (rep["answers_in_reading"] == rep["questions"] and rep["outcomes_in_result"] == rep["actions"]
                         and rep["right_verdicts"] == rep["actions"] and rep["events_clean"] == rep["actions"]
                         and (not large or max(large) <= 0.2)
                         and (not small or max(small) <= 1.0) and not skipped)
    return rep


def format_report(rep: dict) -> str:
    lines = ["vigil bench read — the default MCP snapshot (reading) against Playwright's aria_snapshot(mode='ai'), "
             "same tab, same run", "",
             f"{'page':<34} {'elements':>8} {'reading':>8} {'semantic':>8} {'playwright':>10} {'ratio':>6}  "
             f"{'answers':>8}  outcomes"]
    for r in rep["pages"]:
        qs, acts = r["questions"], r["acts"]
        ans = f"{sum(q['in_reading'] for q in qs)}/{len(qs)}" if qs else "-"
        outs = f"{sum(bool(a.get('in_result')) for a in acts)}/{len(acts)}" if acts else "-"
        lines.append(f"{r['title']:<34} {r['elements']:>8} {r['reading_tokens']:>8} {r['semantic_tokens']:>8} "
                     f"{r['playwright_tokens']:>10} {r['ratio']:>6.3f}  {ans:>8}  {outs}")
    lines.append("")
    for r in rep["pages"]:
        for q in r["questions"]:
            if not q["in_reading"]:
                lines.append(f"MISSING in {r['key']}: {q['question']} — {q['answer']!r}")
        for a in r["acts"]:
            mark = "ok" if a.get("in_result") and a.get("right_verdict") and a.get("events_clean", True) else "MISSED"
            lines.append(f"{mark:>6} {r['key']}: {a['act']} → {a.get('result') or a.get('error')}")
    lines += ["",
              f"Answers in the reading: {rep['answers_in_reading']}/{rep['questions']} "
              f"(in Playwright's snapshot: {rep['answers_in_playwright']}/{rep['questions']}); "
              f"outcomes in the action's result: {rep['outcomes_in_result']}/{rep['actions']}, "
              f"right verdict (an error message leaves the step unverified): {rep['right_verdicts']}/{rep['actions']}; "
              f"events free of style and script text: {rep['events_clean']}/{rep['actions']}.",
              f"Token ratio reading/Playwright: at most {rep['max_ratio_large']} on pages of {LARGE:,}+ elements "
              f"(target ≤ 0.2), at most {rep['max_ratio_small']} on smaller ones (target ≤ 1).",
              "Target met." if rep["target_met"] else "Target NOT met."]
    if rep["skipped"]:
        lines.append(f"Not measured (corpus missing: {'; '.join(rep['missing'])}): {', '.join(rep['skipped'])}. "
                     "Run `bash scripts/setup.sh`.")
    return "\n".join(lines)


def add_bench_parser(bsub) -> None:
    b = bsub.add_parser("read", help="can an agent read the page and learn what its action did (vs Playwright)")
    b.add_argument("--pages", default="", help="comma-separated page keys (default: all: "
                                               + ", ".join(p.key for p in PAGES) + ")")
    b.add_argument("--json", action="store_true")


def bench_command(args) -> int:
    import sys

    keys = [k.strip() for k in (args.pages or "").split(",") if k.strip()]
    unknown = [k for k in keys if k not in {p.key for p in PAGES}]
    if unknown:
        print(f"vigil bench read: unknown page(s) {', '.join(unknown)}; choose from "
              f"{', '.join(p.key for p in PAGES)}.", file=sys.stderr)
        return 2
    pages = tuple(p for p in PAGES if not keys or p.key in keys)
    try:
        rep = asyncio.run(bench_read(pages, out=lambda s: print(s, file=sys.stderr)))
    except VigilError as exc:
        print(f"vigil bench read: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(rep, indent=2, ensure_ascii=False) if args.json else format_report(rep))
    return 0 if rep["target_met"] else 1
