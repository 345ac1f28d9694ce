"""`vigil export ID --playwright test_x.py`: a recorded session as a runnable pytest-playwright test.

The test opens where the session started and runs its executed steps in order — each action
through the locator of the element it acted on (computed from the snapshot stored with the step,
see `engine.snapshot.locators`), then an `expect(...)` per step from what verification saw work:
the URL it navigated to, the value typed, the checked state, the option chosen; for any other step
the change it made to the page — the element that changed, by a locator that does not depend on the
change, with its new text, value or state matched exactly (`engine.store.export_expect`).
Rejected, skipped and stopped steps are left out; failed steps are written as comments, marked. Each
step's comment says what ran: the planner's words only when its step ran as proposed (not above a step the
person took over or edited). The test's name is the task's words, cut between words.
A typed secret is never written: the file reads it from an environment variable it names. Page
and model text only ever appears inside string literals or one-line comments.

URLs on the recorded origin are written as `BASE_URL + "/path"`, `BASE_URL` being
`$VIGIL_BASE_URL` or the recorded origin, so the test runs against another server of the same
site. A session that starts on a page of no site (about:blank, as an MCP session does) takes its
origin from the first page it went to. The browser is pytest-playwright's; `$VIGIL_CHROMIUM` (else
Debian's /usr/bin/chromium when present) is used as its executable, as Vigil finds Chromium.
"""

from __future__ import annotations

import datetime as _dt
import re
import urllib.parse
from collections.abc import Callable
from pathlib import Path

from engine.errors import ErrorCode, VigilError
from engine.models import Action, StepRecord
from engine.secret_values import MASK
from engine.snapshot.dom_snapshot import DomSnapshot
from engine.snapshot.locators import Locator, Locators, Step
from engine.snapshot.locators.code import action_lines, one_line, url_expr
from engine.snapshot.locators.model import py_str as _py
from engine.snapshot.stored import load_snapshot
from engine.snapshot.vnode import VirtualNode
from engine.store.export_expect import change_lines
from engine.store.session_data import SessionData
from engine.store.store import Store

SnapshotOf = Callable[[int, str], DomSnapshot | None]


def export_playwright(store: Store, session_id: str, path: str | Path) -> Path:
    """Write the session (id or unique prefix) as a pytest-playwright test file; its path."""
    sid = store.resolve_id(session_id)
    data = store.load(sid)
    source = playwright_test_source(data, stored_snapshots(store, data))
    out = Path(path)
    if out.suffix != ".py":
        raise VigilError(f"{out} is not a .py file: pytest collects test_*.py files; name it e.g. test_checkout.py.",
                         code=ErrorCode.BAD_ARGUMENT)
    try:
        out.write_text(source, encoding="utf-8")
    except OSError as exc:
        raise VigilError(f"Cannot write {out}: {exc.strerror or exc}.", code=ErrorCode.BAD_ARGUMENT) from None
    return out


def stored_snapshots(store: Store, data: SessionData) -> SnapshotOf:
    """(step index, "snapshot_before" | "snapshot_after") → the stored snapshot, or None."""
    cache: dict[str, DomSnapshot | None] = {}

    def get(index: int, role: str) -> DomSnapshot | None:
        sha = data.blobs.get(index, {}).get(role)
        if not sha:
            return None
        if sha not in cache:
            try:
                cache[sha] = load_snapshot(store.get_blob(sha))
            except VigilError:
                cache[sha] = None
        return cache[sha]
    return get


class _Writer:
    def __init__(self, data: SessionData, snapshots: SnapshotOf):
        self.data, self.snapshots = data, snapshots
        start = data.session.metadata.get("initialUrl") or data.session.url or ""
        first = next((s.url_before for s in data.steps if s.url_before), "")
        self.start = start or first
        self.base = site_base(self.start) or site_base(first_navigation(data))
        self.secrets: dict[str, str] = {}   # env var → the field it is for
        self.body: list[str] = []
        self.counts = {"written": 0, "failed": 0, "left_out": 0, "assertions": 0}
        self._locators: dict[int, Locators] = {}

    # -- locators -----------------------------------------------------------------------------
    def _locs(self, snap: DomSnapshot) -> Locators:
        key = id(snap)
        if key not in self._locators:
            self._locators[key] = Locators(snap)
        return self._locators[key]

    def locate(self, rec: StepRecord) -> tuple[Locator | None, VirtualNode | None, str]:
        """The locator of the step's element, the node, and how it was found."""
        t = rec.target or {}
        if isinstance(t.get("locator"), dict):  # kept with the step (the person's own steps)
            try:
                return Locator.from_dict(t["locator"]), None, "snapshot"
            except ValueError:
                pass
        nid = str(t.get("id") or (rec.action.node_id if rec.action else "") or "")
        snap = self.snapshots(rec.index, "snapshot_before")
        if snap is not None and nid and nid in snap:
            node = snap.get(nid)
            if node.in_closed_shadow:  # no locator enters a closed shadow root: nor may a role-and-name guess
                return None, node, "closed shadow root"
            loc = self._locs(snap).for_node(node)
            if loc is not None:
                return loc, node, "snapshot"
        q = t.get("query") or {}
        if q.get("role") or q.get("name"):
            steps = [Step("role", q.get("role") or "generic", q.get("name") or "")]
            if q.get("nth"):
                steps.append(Step("nth", str(int(q["nth"]))))
            return Locator(tuple(steps)), None, "role and name (no stored snapshot)"
        return None, None, "none"

    # -- steps ---------------------------------------------------------------------------------
    def step(self, rec: StepRecord) -> None:
        n = rec.index + 1
        a = rec.action
        who = "the person's step" if rec.actor == "human" else "agent"
        if rec.status in ("rejected", "skipped", "stopped"):  # (stopped: the run ended at its question)
            self.counts["left_out"] += 1
            return
        if a is None:
            self.body += ["", f"# Step {n}: the person acted in the page directly (not recorded as an action)"]
            self.counts["left_out"] += 1
            return
        if a.name in ("finish", "fail"):
            self.body += [""] + [line for line in action_lines(a, None)]
            return
        loc, node, how = self.locate(rec) if a.target is not None else (None, None, "")
        text_expr = None
        if a.name == "type" and (a.text == MASK or (node is not None and node.redacted)):
            text_expr = self.secret_var(node, rec)
        native = node is None or node.tag == "select"
        lines = action_lines(a, loc, text_expr=text_expr, base_url=self.base, native_select=native)
        head = f"# Step {n} ({who}): {one_line(step_words(rec, node))}"
        if how == "closed shadow root" and node is not None:
            lines = ["# Its element is inside a closed shadow root, which Playwright's locators cannot enter:",
                     "# the input goes where it was on the page when recorded (same window size and scroll).",
                     *(at_its_place(a, node, text_expr) or lines)]
        elif how and how != "snapshot":
            head += f" — located by {how}"
        if rec.status == "failed":
            why = rec.result.error_code if rec.result and rec.result.error_code else "not verified"
            msg = one_line(rec.result.message if rec.result else rec.note, 120)
            self.body += ["", head, f"# FAILED in the recording ({why}: {msg}); not run here:"]
            self.body += [f"# {line}" for line in lines]
            self.counts["failed"] += 1
            return
        self.body += ["", head, *lines]
        self.counts["written"] += 1
        checks = self.assertions(rec, loc, node, text_expr)
        self.counts["assertions"] += len(checks)
        self.body += checks

    def secret_var(self, node: VirtualNode | None, rec: StepRecord) -> str:
        field = (node.name if node is not None else "") or str((rec.target or {}).get("name") or "") or "secret"
        var = "VIGIL_SECRET_" + (re.sub(r"[^A-Za-z0-9]+", "_", field).strip("_").upper() or "FIELD")
        self.secrets.setdefault(var, field)
        return f"secret({var!r})"

    # -- what verification saw work --------------------------------------------------------------
    def assertions(self, rec: StepRecord, loc: Locator | None, node: VirtualNode | None,
                   text_expr: str | None) -> list[str]:
        """The step's own outcome: the URL it went to, the value typed, the state checked, the option
        chosen; else the change it made to the page (`engine.store.export_expect`)."""
        v, a = rec.verification, rec.action
        if v is None or not v.success or a is None:
            return []
        el = loc.code() if loc is not None else None
        if v.verified_outcome == "navigation" and rec.url_after:
            return [f"expect(page).to_have_url({url_expr(rec.url_after, self.base)})"]
        if a.name == "type" and el and (node is None or node.tag in ("input", "textarea")) and not a.submit:
            return [f"expect({el}).to_have_value({text_expr or _py(a.text or '')})"]
        if a.name in ("check", "uncheck") and el:
            return [f"expect({el}).to_be_checked(checked={a.name == 'check'})"]
        if a.name == "select" and el and a.option and node is not None and node.tag == "select":
            return [f"expect({el}.locator(\"option:checked\")).to_have_text({_py(a.option)})"]
        before, after = self.snapshots(rec.index, "snapshot_before"), self.snapshots(rec.index, "snapshot_after")
        if before is None or after is None:
            return []
        exp = v.expected
        prefer = exp.text if exp is not None and exp.text and MASK not in exp.text else ""
        return change_lines(before, after, prefer=prefer, skip=node.node_id if node is not None else "",
                            locs_before=self._locs(before), locs_after=self._locs(after))


def step_words(rec: StepRecord, node: VirtualNode | None) -> str:
    """What a step did, in words: the planner's description only when what ran is what it proposed — a step
    the person took over or edited ran an action of their own, which the proposal ("Give up: …") does not
    describe."""
    a = rec.action
    p = rec.proposal
    if a is None:
        return ""
    if p is not None and p.description and p.action.model_dump() == a.model_dump():
        return p.description
    if node is not None and (node.name or node.role):
        return f"{a.to_string()} on {node.role or node.tag} {node.name!r}" if node.name else \
            f"{a.to_string()} on {node.role or node.tag}"
    return a.to_string()


def function_name(task: str, limit: int = 40) -> str:
    """The test function's name from the task: lower-case words joined by _, cut between words."""
    words = re.sub(r"[^a-z0-9]+", "_", task.lower()).strip("_")
    if len(words) > limit:
        cut = words[:limit + 1].rfind("_")
        words = words[:cut] if cut > 0 else words[:limit]
    return words or "session"


def site_base(url: str) -> str | None:
    """scheme://host[:port] of an http(s) URL, else None."""
    parts = urllib.parse.urlsplit(url or "")
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") and parts.netloc else None


def first_navigation(data: SessionData) -> str:
    """The first http(s) page the session went to (a session that starts on about:blank, as an MCP
    session does, takes its site from there)."""
    for rec in data.steps:
        for url in ((rec.action.url if rec.action is not None and rec.action.name == "navigate" else None),
                    rec.url_before, rec.url_after):
            if site_base(url or ""):
                return url or ""
    return ""


def playwright_test_source(data: SessionData, snapshots: SnapshotOf) -> str:
    """The test file's text."""
    w = _Writer(data, snapshots)
    for rec in data.steps:
        w.step(rec)
    s = data.session
    name = function_name(s.task)
    now = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    head = [
        "# Recorded by Vigil and exported as a Playwright test (pytest-playwright, sync API).",
        f"# Session {s.id} — {one_line(s.title)}",
        f"# Task: {one_line(s.task)}",
        f"# Recorded {s.started[:16].replace('T', ' ')} on {one_line(w.start)} ({s.status}); exported {now}.",
        f"# Steps: {w.counts['written']} written, {w.counts['failed']} failed in the recording (marked, not run), "
        f"{w.counts['left_out']} rejected, skipped, stopped or done by hand (left out); "
        f"{w.counts['assertions']} assertions.",
        "# Run: pytest THIS_FILE  (VIGIL_BASE_URL=http://host:port runs it against another server of the site;",
        "# VIGIL_TIMEOUT_MS sets how long each action and check may wait, 10000 by default; inside Vigil's",
        "# own checkout, whose test settings leave pytest-playwright out: pytest -p playwright THIS_FILE)",
    ]
    if w.secrets:
        head.append("# Secrets are never written here: set " + ", ".join(
            f"{var} (the {one_line(field, 60)!r} field)" for var, field in sorted(w.secrets.items())) + ".")
    lines = [*head, "", "import os", "from pathlib import Path", "", "import pytest",
             "from playwright.sync_api import Page, expect", "",
             f"BASE_URL = os.environ.get(\"VIGIL_BASE_URL\", {_py(w.base or '')}).rstrip(\"/\")",
             "TIMEOUT_MS = int(os.environ.get(\"VIGIL_TIMEOUT_MS\", \"10000\"))  # per action and per expect()",
             "expect.set_options(timeout=TIMEOUT_MS)", "", "",
             "@pytest.fixture(scope=\"session\")",
             "def browser_type_launch_args(browser_type_launch_args):",
             "    \"\"\"Chromium as Vigil finds it: $VIGIL_CHROMIUM, else Debian's, else Playwright's own.\"\"\"",
             "    exe = os.environ.get(\"VIGIL_CHROMIUM\") or (\"/usr/bin/chromium\" if Path(\"/usr/bin/chromium\")"
             ".exists() else None)",
             "    return {**browser_type_launch_args, \"executable_path\": exe} if exe else browser_type_launch_args",
             "", ""]
    if w.secrets:
        lines += ["def secret(var: str) -> str:",
                  "    value = os.environ.get(var)",
                  "    if value is None:",
                  "        pytest.fail(f\"Set the environment variable {var}: this test types a secret Vigil never "
                  "recorded.\")",
                  "    return value", "", ""]
    start = url_expr(w.start, w.base) if w.start else '"about:blank"'
    lines += [f"def test_{name}(page: Page) -> None:", "    page.set_default_timeout(TIMEOUT_MS)",
              f"    page.goto({start})"]
    lines += [("    " + line) if line else "" for line in w.body]
    return "\n".join(lines).rstrip() + "\n"


def at_its_place(a: Action, node: VirtualNode, text_expr: str | None) -> list[str] | None:
    """The action as real input at the centre of the node's recorded box (page.mouse, page.keyboard), for an
    element no locator can reach; None for an action that cannot be said so (a select, an upload) or a
    node that had no box."""
    x, y, w, h = node.bounds
    if w <= 0 or h <= 0:
        return None
    at = f"{x + w / 2:.1f}, {y + h / 2:.1f}"
    if a.name in ("click", "check", "uncheck"):
        return [f"page.mouse.click({at})"]
    if a.name == "double_click":
        return [f"page.mouse.dblclick({at})"]
    if a.name == "hover":
        return [f"page.mouse.move({at})"]
    if a.name == "type":
        lines = [f"page.mouse.click({at})"]
        if a.clear:
            lines += ['page.keyboard.press("ControlOrMeta+A")', 'page.keyboard.press("Delete")']
        lines.append(f"page.keyboard.type({text_expr or _py(a.text or '')})")
        if a.submit:
            lines.append('page.keyboard.press("Enter")')
        return lines
    return None
