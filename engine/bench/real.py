"""`vigil bench real`: Vigil on the real-app corpus (tests/fixtures/real), next to Playwright.

Per widget of `corpus.json`: is the control a person would use in the semantic payload, with its
role and name; does the user task pass through the public API (find by role and name in the
payload, act by ID, the page's real state checked afterwards); and what Playwright's
`aria_snapshot(mode="ai")` says the same control is. The corpus is served by a local server
started here, so the bench runs from a checkout after `bash scripts/setup.sh`.

The same helpers drive the acceptance tests (tests/test_real_*.py).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import math
import re
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.errors import ErrorCode, VigilError
from engine.names import norm

CORPUS_DIR = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "real"
FIND_TIMEOUT_S = 3.0   # a popup that opens with an animation gets this long to show up in the payload
CHECK_TIMEOUT_S = 3.0  # some libraries render a frame after the event; the page state gets this long
ROW_TOLERANCE_PX = 12  # `near`: centres this close vertically are on one row


# ----------------------------------------------------------------------------- the corpus
def load_corpus(corpus_dir: Path = CORPUS_DIR) -> dict:
    """corpus.json with every `"@name"` step list resolved. Raises VigilError naming what is missing."""
    path = Path(corpus_dir) / "corpus.json"
    if not path.is_file():
        raise VigilError(f"No corpus at {path}. `vigil bench real` runs from a Vigil checkout "
                         "(tests/fixtures/real is not installed with the package).", code=ErrorCode.CORPUS_MISSING)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        lists = data.get("step_lists", {})
        for w in data["widgets"]:
            if isinstance(w["steps"], str):
                w["steps"] = lists[w["steps"].lstrip("@")]
            for key in ("id", "page", "control"):
                w[key]  # noqa: B018 - presence check
    except KeyError as exc:
        raise VigilError(f"{path} is malformed: an entry lacks {exc}.", code=ErrorCode.CORPUS_MISSING) from None
    except (ValueError, TypeError) as exc:
        raise VigilError(f"{path} is malformed ({type(exc).__name__}: {exc}).", code=ErrorCode.CORPUS_MISSING) from None
    return data


def missing_parts(corpus_dir: Path = CORPUS_DIR) -> list[str]:
    """What `bash scripts/setup.sh` installs and is not there (empty when the corpus can run)."""
    corpus_dir = Path(corpus_dir)
    out = []
    if not (corpus_dir / "node_modules" / ".vigil-npm-ci").is_file():
        out.append(f"the widget libraries ({corpus_dir / 'node_modules'}, from npm ci)")
    if not (corpus_dir / "pydoc" / "library" / "json.html").is_file():
        out.append(f"Debian's Python documentation ({corpus_dir / 'pydoc'}, from python3-doc)")
    return out


def require_installed(corpus_dir: Path = CORPUS_DIR) -> None:
    missing = missing_parts(corpus_dir)
    if missing:
        raise VigilError("The real-app corpus is not set up: missing " + "; ".join(missing)
                         + ". Run `bash scripts/setup.sh` (or `make setup`) first.", code=ErrorCode.CORPUS_MISSING)


# ------------------------------------------------------------------- reading the payload
def payload_entries(snap) -> list[dict]:
    """The entries of exactly what the model is sent: the semantic serialization's JSON."""
    return json.loads(snap.serialize("semantic").text)["interactive_tree"]


def short_role(role: str) -> str:
    from engine.snapshot.serialize.semantic import ROLE_MIN
    return ROLE_MIN.get(role, role)


def name_matches(got: str | None, want: str) -> bool:
    """Case- and space-insensitive equality; a payload name cut at 50 characters matches on its prefix."""
    g, w = norm(got), norm(want)
    if g == w:
        return True
    return got is not None and got.endswith("…") and len(g) > 1 and w.startswith(g[:-1].rstrip())


def value_matches(got: str | None, want: str) -> bool:
    if norm(got) == norm(want):
        return True
    try:
        return math.isclose(float(got or "x"), float(want))
    except ValueError:
        return False


def find_entries(entries: list[dict], role: str | list[str] | None = None, name: str | None = None,
                 near: str | None = None, value: str | None = None) -> list[dict]:
    """Payload entries with this role (any of a list; compared in the payload's short form) and name.
    `near`: only entries on the same row as an entry named so (closest first)."""
    roles = None if role is None else {short_role(r) for r in ([role] if isinstance(role, str) else role)}
    hits = [e for e in entries
            if (roles is None or e.get("r") in roles)
            and (name is None or name_matches(e.get("n"), name))
            and (value is None or value_matches(e.get("v"), value))]
    if near is not None:
        anchors = [a for a in entries if name_matches(a.get("n"), near)]
        scored = []
        for h in hits:
            dys = [abs(h["xy"][1] - a["xy"][1]) for a in anchors if a["i"] != h["i"]]
            if dys and min(dys) <= ROW_TOLERANCE_PX:
                scored.append((min(dys), h))
        hits = [h for _, h in sorted(scored, key=lambda t: t[0])]
    return hits


def describe_entry(e: dict | None) -> str:
    if e is None:
        return "-"
    bits = [f'{e.get("r")} "{e.get("n", "")}"']
    if e.get("v"):
        bits.append(f'v="{e["v"]}"')
    if e.get("s"):
        bits.append(e["s"])
    if e.get("occ"):
        bits.append("occ")
    return " ".join(bits)


def target_text(step: dict) -> str:
    role = step.get("role")
    bits = ["/".join(role) if isinstance(role, list) else (role or "any role")]
    if step.get("name"):
        bits.append(f'"{step["name"]}"')
    if step.get("near"):
        bits.append(f'on the row of "{step["near"]}"')
    if step.get("value"):
        bits.append(f'with value "{step["value"]}"')
    return " ".join(bits)


# ------------------------------------------------------------------------ doing the task
@dataclass
class StepOutcome:
    step: dict
    ok: bool
    entry: dict | None = None
    message: str = ""
    result: Any = None  # the ActionResult, when the step acted

    def line(self) -> str:
        return f'{self.step["do"]} {target_text(self.step)}: {"ok" if self.ok else self.message}'


_SECOND_ORIGIN: dict[str, str] = {}
_SECOND_LOCK = threading.Lock()
_SECOND_SERVERS = contextlib.ExitStack()  # open for the life of the process (a daemon thread serves it)
atexit.register(_SECOND_SERVERS.close)  # while its thread still runs: a shutdown at finalization would wait forever


def second_origin() -> str:
    """The corpus folder served again on another port and reached as `localhost`: another site to the
    pages on 127.0.0.1, so Chromium runs frames from it out of process. Started once per process."""
    from engine.local_server import serve_directory

    with _SECOND_LOCK:
        if "base" not in _SECOND_ORIGIN:
            base = _SECOND_SERVERS.enter_context(serve_directory(CORPUS_DIR))
            _SECOND_ORIGIN["base"] = base.replace("//127.0.0.1:", "//localhost:", 1)
        return _SECOND_ORIGIN["base"]


def page_url(base_url: str, widget: dict) -> str:
    """The widget's page; with `cross_site_frame`, the URL of that page on the second origin is passed
    to it as `?frame=`."""
    url = base_url + widget["page"]
    if widget.get("cross_site_frame"):
        url += "?" + urllib.parse.urlencode({"frame": second_origin() + widget["cross_site_frame"]})
    return url


async def open_page(browser, base_url: str, widget: dict, ready: str | None):
    """A new tab on the widget's page, once the library has set up."""
    tab = await browser.new_tab(page_url(base_url, widget))
    if ready and widget.get("ready", True) is not False:
        try:
            await tab.page.wait_for_selector(ready, state="attached", timeout=20_000)
        except Exception:  # noqa: BLE001 - Playwright's timeout, said in our words
            await tab.close()
            raise VigilError(f"{widget['page']} did not finish setting up its library within 20 s (no {ready}). "
                             "Are the corpus libraries installed? Run `bash scripts/setup.sh`.",
                             code=ErrorCode.CORPUS_MISSING) from None
    return tab


async def find_target(tab, step: dict, timeout: float = FIND_TIMEOUT_S) -> tuple[dict | None, list[dict]]:
    """The step's target in the payload, waiting up to `timeout` for it to appear."""
    deadline = time.monotonic() + timeout
    while True:
        entries = payload_entries(await tab.snapshot())
        hits = find_entries(entries, step.get("role"), step.get("name"), step.get("near"), step.get("value"))
        if hits or time.monotonic() >= deadline:
            return (hits[0] if hits else None), entries
        await asyncio.sleep(0.25)


async def check_state(page, check: dict, timeout: float = CHECK_TIMEOUT_S) -> tuple[bool, Any]:
    """Evaluate `check["js"]` until it returns `check["equals"]` (or time runs out); returns (ok, last value)."""
    deadline = time.monotonic() + timeout
    while True:
        got = await page.evaluate(check["js"])
        if got == check["equals"] or time.monotonic() >= deadline:
            return got == check["equals"], got
        await asyncio.sleep(0.2)


async def _act(tab, step: dict, node_id: str):
    do = step["do"]
    if do == "click":
        return await tab.click(node_id)
    if do == "hover":
        return await tab.hover(node_id)
    if do == "check":
        return await tab.check(node_id)
    if do == "uncheck":
        return await tab.uncheck(node_id)
    if do == "type":
        return await tab.type(node_id, step["text"], submit=bool(step.get("submit", False)))
    if do == "select":
        return await tab.select(node_id, step["option"])
    if do == "press":
        return await tab.press(step["key"], node_id)
    raise VigilError(f"corpus step {step!r}: unknown action {do!r}.", code=ErrorCode.CORPUS_MISSING)


def _result_text(r) -> str:
    parts = [f"{r.action}: {r.error_code or ('ok' if r.success else 'failed')}"]
    if r.message:
        parts.append(r.message)
    if r.verification is not None and not r.verification.success:
        parts.append(f"verification failed: {r.verification.feedback}")
    return " — ".join(parts)


async def run_step(tab, step: dict) -> StepOutcome:
    """Find the step's target in the payload, act on its ID, then check the page's real state.
    A step with `"now": true` looks at the payload once: its target must be there right after the
    step before (the suggestions a typing step waited for), with no time to appear."""
    entry, entries = await find_target(tab, step, 0.0 if step.get("now") else FIND_TIMEOUT_S)
    if entry is None:
        seen = ", ".join(describe_entry(e) for e in entries[:40]) or "nothing"
        return StepOutcome(step, False, None, f"not in the semantic payload: {target_text(step)}. It has: {seen}")
    if step["do"] == "see" and entry.get("occ"):
        return StepOutcome(step, False, entry, f"in the payload but marked occluded: {describe_entry(entry)}")
    result = None
    if step["do"] != "see":
        result = await _act(tab, step, entry["i"])
        if not result.verified:
            return StepOutcome(step, False, entry, _result_text(result), result)
    if "check" in step:
        ok, got = await check_state(tab.page, step["check"])
        if not ok:
            return StepOutcome(step, False, entry, f"page state after the step: {got!r}, expected "
                               f"{step['check']['equals']!r} (action: {_result_text(result) if result else 'none'})",
                               result)
    return StepOutcome(step, True, entry, "ok", result)


async def run_steps(tab, steps: list[dict]) -> list[StepOutcome]:
    """Every step in order, stopping at the first that fails (later steps depend on it)."""
    out = []
    for step in steps:
        o = await run_step(tab, step)
        out.append(o)
        if not o.ok:
            break
    return out


# ------------------------------------------------------------------------- Playwright's view
_ARIA_LINE = re.compile(r"""^\s*-\s+['"]?(?P<role>[a-zA-Z][\w-]*)(?:\s+"(?P<name>(?:[^"\\]|\\.)*)")?""")
_SKIP_ROLES = {"generic", "none", "presentation", "text"}


def parse_aria_line(snapshot: str) -> tuple[str, str]:
    """Role and name of the first meaningful node of a Playwright aria snapshot (unnamed wrappers skipped)."""
    first = None
    for line in snapshot.splitlines():
        m = _ARIA_LINE.match(line)
        if not m or line.lstrip().startswith("- /"):
            continue
        role, name = m.group("role"), (m.group("name") or "").replace('\\"', '"')
        if first is None:
            first = (role, name)
        if role not in _SKIP_ROLES or name:
            return role, name
    return first or ("", "")


async def playwright_view(page, selector: str) -> dict:
    try:
        text = await page.locator(selector).first.aria_snapshot(mode="ai", timeout=5_000)
    except Exception as exc:  # noqa: BLE001 - Playwright's own errors are reported, not raised
        return {"role": "", "name": "", "error": f"{type(exc).__name__}: {str(exc).splitlines()[0]}"}
    role, name = parse_aria_line(text)
    return {"role": role, "name": name}


# ----------------------------------------------------------------------------- one widget
@dataclass
class WidgetReport:
    widget: dict
    in_payload: bool = False
    vigil_entry: dict | None = None
    at_spot: list[dict] = field(default_factory=list)
    steps: list[StepOutcome] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)  # words of the widget's `reading` missing from Vigil's reading
    playwright: dict = field(default_factory=dict)
    error: str = ""
    seconds: float = 0.0

    @property
    def task_ok(self) -> bool:
        return (not self.error and not self.unread and len(self.steps) == len(self.widget["steps"])
                and all(s.ok for s in self.steps))

    @property
    def playwright_named(self) -> bool:
        c = self.widget["control"]
        return (short_role(self.playwright.get("role", "")) == short_role(c["role"])
                and name_matches(self.playwright.get("name"), c["name"]))

    def to_dict(self) -> dict:
        c = self.widget["control"]
        failed = next((s for s in self.steps if not s.ok), None)
        return {
            "id": self.widget["id"], "library": self.widget.get("library", ""), "page": self.widget["page"],
            "control": {"selector": c["selector"], "role": c["role"], "name": c["name"]},
            "vigil": {"in_payload": self.in_payload, "entry": self.vigil_entry, "at_control": self.at_spot},
            "task": {"ok": self.task_ok, "steps_total": len(self.widget["steps"]),
                     "steps_ok": sum(1 for s in self.steps if s.ok),
                     "failed_step": failed.line() if failed else None, "error": self.error or None,
                     "unread": self.unread},
            "playwright": self.playwright, "playwright_named": self.playwright_named,
            "seconds": round(self.seconds, 2),
        }


def unread_words(snap, widget: dict) -> list[str]:
    """The words of the widget's `reading` list (what a person reads on it: a chart's labels and values) that the
    `reading` format — MCP's default snapshot — does not hold."""
    words = widget.get("reading") or []
    if not words:
        return []
    from engine.snapshot.serialize.reading import render_reading

    text = norm(render_reading(snap, full_page=True)[0])
    return [w for w in words if norm(w) not in text]


async def control_box(page, selector: str) -> dict | None:
    try:
        return await page.locator(selector).first.bounding_box(timeout=5_000)
    except Exception:  # noqa: BLE001 - no box: nothing to compare at its place
        return None


async def run_widget(browser, base_url: str, widget: dict, ready: str | None) -> WidgetReport:
    rep = WidgetReport(widget)
    t0 = time.perf_counter()
    tab = None
    try:
        tab = await open_page(browser, base_url, widget, ready)
        c = widget["control"]
        snap = await tab.snapshot()
        rep.unread = unread_words(snap, widget)
        entries = payload_entries(snap)
        hits = find_entries(entries, c["role"], c["name"])
        rep.in_payload = bool(hits)
        rep.vigil_entry = hits[0] if hits else None
        box = await control_box(tab.page, c["selector"])
        if box:
            rep.at_spot = [e for e in entries if box["x"] <= e["xy"][0] <= box["x"] + box["width"]
                           and box["y"] <= e["xy"][1] <= box["y"] + box["height"]]
        rep.playwright = await playwright_view(tab.page, c["selector"])
        rep.steps = await run_steps(tab, widget["steps"])
    except Exception as exc:  # noqa: BLE001 - one widget's trouble is its line, not the bench's end
        rep.error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    finally:
        if tab is not None:
            try:
                await tab.close()
            except Exception:  # noqa: BLE001
                pass
        rep.seconds = time.perf_counter() - t0
    return rep


# ------------------------------------------------------------------------------ the bench
def select_widgets(corpus: dict, only: list[str] | None) -> list[dict]:
    widgets = corpus["widgets"]
    if not only:
        return widgets
    unknown = sorted(set(only) - {w["id"] for w in widgets})
    if unknown:
        raise VigilError(f"Unknown widget id(s): {', '.join(unknown)}. Known: "
                         f"{', '.join(w['id'] for w in widgets)}.", code=ErrorCode.BAD_ARGUMENT)
    return [w for w in widgets if w["id"] in only]


async def bench_real(only: list[str] | None = None, corpus_dir: Path = CORPUS_DIR, out=None) -> dict:
    """Every widget (or those whose id is in `only`) on a fresh tab; one report. `out` gets each
    widget's line as soon as it is done."""
    from engine import launch
    from engine.local_server import serve_directory

    require_installed(corpus_dir)
    corpus = load_corpus(corpus_dir)
    widgets = select_widgets(corpus, only)
    reports = []
    t0 = time.perf_counter()
    with serve_directory(corpus_dir) as base:
        async with launch() as browser:
            for w in widgets:
                rep = await run_widget(browser, base, w, corpus.get("ready"))
                reports.append(rep)
                if out is not None:
                    out(format_line(rep))
    n = len(reports)
    summary = {
        "widgets": n,
        "in_payload": sum(r.in_payload for r in reports),
        "tasks_ok": sum(r.task_ok for r in reports),
        "playwright_named": sum(r.playwright_named for r in reports),
        "seconds": round(time.perf_counter() - t0, 1),
    }
    return {"widgets": [r.to_dict() for r in reports], "summary": summary}


def _mark(ok: bool) -> str:
    return "✔" if ok else "✘"


def format_line(rep: WidgetReport) -> str:
    d = rep.to_dict()
    if rep.in_payload:
        vig = f"payload {_mark(True)} {describe_entry(rep.vigil_entry)}"
    else:
        spot = "; ".join(describe_entry(e) for e in rep.at_spot[:3]) or "nothing"
        vig = f"payload {_mark(False)} (at its place: {spot})"
    t = d["task"]
    task = f"task {_mark(rep.task_ok)} {t['steps_ok']}/{t['steps_total']}"
    pw = rep.playwright
    pw_text = pw.get("error") or f'{pw.get("role", "")} "{pw.get("name", "")}"'
    line = f"{rep.widget['id']:<22} {vig:<52} {task:<10} playwright: {pw_text}"
    if not rep.task_ok:
        why = (rep.error or t["failed_step"] or (f"not in the reading: {', '.join(rep.unread)}" if rep.unread else "")
               or "not all steps ran")
        line += f"\n{'':<22} └ {why[:300]}"
    return line


def format_summary(rep: dict) -> str:
    s = rep["summary"]
    n = s["widgets"]
    return (f"{n} widgets: control in Vigil's semantic payload with its role and name {s['in_payload']}/{n}, "
            f"task passed through the public API {s['tasks_ok']}/{n}; Playwright's aria snapshot (mode=ai) "
            f"gives the expected role and name {s['playwright_named']}/{n}. ({s['seconds']} s)")


def add_bench_parser(bsub) -> None:
    br = bsub.add_parser("real", help="the real-app corpus: Vigil's payload and tasks vs Playwright's aria snapshot")
    br.add_argument("--only", default="", help="comma-separated widget ids (default: all)")
    br.add_argument("--json", action="store_true", help="print one JSON object")


def bench_command(args) -> int:
    only = [x.strip() for x in args.only.split(",") if x.strip()] or None
    require_installed()
    select_widgets(load_corpus(), only)  # bad ids are refused before anything starts
    if args.json:
        rep = asyncio.run(bench_real(only))
        print(json.dumps(rep, ensure_ascii=False, indent=2))
    else:
        print("vigil bench real — per widget: in the semantic payload (Vigil's role and name), the task "
              "through the public API, Playwright's aria snapshot of the same control", flush=True)
        rep = asyncio.run(bench_real(only, out=lambda s: print(s, flush=True)))
        print(format_summary(rep))
    return 0
