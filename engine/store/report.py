"""Exporting a stored session: one self-contained HTML report for a person, and a JSON trace for tools.

The report is a single file a colleague can open anywhere, offline: the CSS is inline and every
picture is a `data:image/jpeg;base64,…` URL (the before/after screenshots with their Set-of-Mark,
the element acted on ringed — `pictures.step_picture`). Clicking a picture enlarges it through a
hidden checkbox and a CSS rule, so no script is needed for that either.

Safety. Everything shown came from a web page, a model or the store, and is treated as data:
- every value goes through `_t` (`str` → `html.escape(…, quote=True)`) on its way into the
  document; the only markup is this module's own literals, and store values never pick a tag, an
  attribute or a CSS class (status colours come from fixed lookups);
- the document holds no `<script>` and no external reference: page URLs are shown as text, never as
  links, and the only `src` values are the data: images;
- a `Content-Security-Policy` meta (`default-src 'none'; img-src data:; style-src 'unsafe-inline'`)
  makes the browser itself refuse scripts, frames, fonts and any network request, so even a
  mistake in this module could not run or load anything.
Lone UTF-16 surrogates (which pages do produce) become U+FFFD, so writing never fails on them. Bidi
controls (U+202E and friends) in the report's text show as markers, `⟦U+202E⟧` (`engine.models.text`), so no
name can turn the words around it; the JSON trace keeps every value as it was recorded.

Written together (`write_export`, `vigil export ID --html … --trace … --playwright …`), the report links the
Playwright trace zip (`engine.store.export_trace`) and the Playwright test (`engine.store.export_playwright`) by
their paths relative to the report's folder: keep them beside it.

The JSON trace (`"format": "vigil-trace/1"`) holds the session row, messages, every plan version
and every step as the models dump themselves (`model_dump(mode="json")`), each step with a `blobs`
map of its stored screenshots/snapshots by sha256 — references, not bytes (`vigil` keeps them).
A trace step still validates as a `StepRecord`.

Files are written atomically (a temp file in the same folder, fsynced, then `os.replace`): an
interrupted export leaves the old file or none, never half a report. A path that cannot be
written is a `VigilError` with code BAD_ARGUMENT naming the path, raised before any work is done
when the folder is missing.
"""

from __future__ import annotations

import base64
import contextlib
import html
import json
import os
import re
import tempfile
import urllib.parse
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engine.errors import ErrorCode, VigilError
from engine.models import StepRecord
from engine.models.text import bidi_safe
from engine.store.downloads import session_downloads
from engine.store.export_trace import trace_zip
from engine.store.pictures import step_picture
from engine.store.session_data import SessionData
from engine.store.store import Store

TRACE_FORMAT = "vigil-trace/1"
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
_SURROGATE = re.compile("[\ud800-\udfff]")
# fixed colour classes: a store value only ever selects one of these, never names a class itself
_TONE = {"success": "ok", "completed": "ok", "error": "bad", "failed": "bad", "stopped": "bad",
         "interrupted": "warn", "skipped": "warn", "rejected": "warn", "running": "info", "active": "info"}
_DECISIONS = {"approve": "Approved by the person", "edit": "Edited by the person, then run",
              "skip": "Skipped by the person", "reject": "Rejected by the person",
              "take_over": "Taken over by the person", "stop": "Stopped by the person"}

CSS = """
*{box-sizing:border-box}body{margin:0;background:#f1f5f9;color:#0f172a;font:14px/1.5 system-ui,-apple-system,
"Segoe UI",Roboto,sans-serif}main{max-width:1240px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:4px 0 6px;overflow-wrap:anywhere}h2{font-size:17px;margin:28px 0 10px}
h3{font-size:16px;margin:0}h4{font-size:12px;text-transform:uppercase;letter-spacing:.05em;color:#64748b;
margin:14px 0 4px}code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
code{background:#eef2ff;color:#3730a3;padding:1px 5px;border-radius:4px;overflow-wrap:anywhere;white-space:pre-wrap}
.card{background:#fff;border:1px solid #e2e8f0;border-radius:10px;padding:16px 20px;margin-bottom:14px;
box-shadow:0 1px 2px rgba(15,23,42,.05)}.brand{font-weight:600;color:#6366f1;font-size:12px;
letter-spacing:.08em;text-transform:uppercase}.task{font-size:15px;margin:0 0 10px;white-space:pre-wrap;
overflow-wrap:anywhere}.muted{color:#64748b}.badge{display:inline-block;padding:1px 9px;border-radius:999px;
font-size:12px;font-weight:600;background:#e2e8f0;color:#334155;vertical-align:middle}
.ok .badge,.badge.ok{background:#dcfce7;color:#166534}.bad .badge,.badge.bad{background:#fee2e2;color:#991b1b}
.warn .badge,.badge.warn{background:#fef3c7;color:#92400e}.info .badge,.badge.info{background:#dbeafe;color:#1e40af}
.outcome{border-left:4px solid #94a3b8;background:#f8fafc;padding:8px 12px;border-radius:6px;margin:8px 0 12px;
white-space:pre-wrap;overflow-wrap:anywhere}.outcome.ok{border-color:#16a34a}.outcome.bad{border-color:#dc2626}
.outcome.warn{border-color:#d97706}dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:3px 14px;margin:0}
dl.kv dt{color:#64748b}dl.kv dd{margin:0;overflow-wrap:anywhere;white-space:pre-wrap}
ol.plan{margin:0;padding-left:22px}ol.plan li{margin:3px 0}ol.chat{list-style:none;margin:0;padding:0}
.msg{border-radius:8px;padding:8px 12px;margin:6px 0;background:#f8fafc;border:1px solid #e2e8f0}
.msg.user{background:#eef2ff;border-color:#c7d2fe}.msg.system{background:#f1f5f9;font-style:italic}
.msg .meta{font-size:12px;color:#64748b}.msg .body{white-space:pre-wrap;overflow-wrap:anywhere}
.err{color:#b91c1c;white-space:pre-wrap;overflow-wrap:anywhere}.step{border-left:5px solid #94a3b8}
.step.ok{border-left-color:#16a34a}.step.bad{border-left-color:#dc2626}.step.warn{border-left-color:#d97706}
.step>header{display:flex;gap:10px;align-items:center;flex-wrap:wrap}.desc{font-size:15px;margin:6px 0 0;
overflow-wrap:anywhere}.cols{display:grid;grid-template-columns:1fr 1fr;gap:0 28px}
ul.events{margin:0;padding-left:18px}.shots{display:grid;grid-template-columns:1fr 1fr;gap:14px;margin-top:12px}
figure{margin:0}figcaption{font-size:12px;color:#64748b;margin-bottom:4px}
figure img{width:100%;border:1px solid #cbd5e1;border-radius:6px;display:block}
.zoom{position:absolute;opacity:0;pointer-events:none}.zoom+label{cursor:zoom-in;display:block}
.zoom:checked+label{position:fixed;inset:0;z-index:9;background:rgba(15,23,42,.92);display:flex;
align-items:center;justify-content:center;cursor:zoom-out;padding:1vh}
.zoom:checked+label img{width:auto;max-width:98vw;max-height:98vh;border:0}
.timings{font-size:12px;color:#64748b;margin:10px 0 0}footer{color:#64748b;font-size:12px;margin:24px 0}
nav a{color:#4f46e5;text-decoration:none;margin-right:10px}
details.exchange{margin-top:10px}details.exchange summary{cursor:pointer;color:#4f46e5;font-size:13px}
details.exchange pre{max-height:480px;overflow:auto;background:#f8fafc;border:1px solid #e2e8f0;border-radius:6px;
padding:8px 10px;font:12px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;white-space:pre-wrap;
overflow-wrap:anywhere}
@media (max-width:800px){.cols,.shots{grid-template-columns:1fr}}
"""


def _clean(s: str) -> str:
    return _SURROGATE.sub("\ufffd", s)


def _t(value: Any) -> str:
    """Any value as HTML text (None → ""): it can only ever render as characters, never as markup, and a bidi
    control shows as its marker (`⟦U+202E⟧`) instead of turning the text around it."""
    return "" if value is None else html.escape(bidi_safe(_clean(str(value))), quote=True)


def _badge(status: Any) -> str:
    return f'<span class="badge {_TONE.get(str(status), "")}">{_t(status)}</span>'


def _when(value: Any) -> str:
    """An ISO timestamp or epoch seconds as "2025-01-31 14:05:09 UTC"; anything else as it is."""
    try:
        dt = (datetime.fromtimestamp(value, UTC) if isinstance(value, (int, float))
              else datetime.fromisoformat(str(value).replace("Z", "+00:00")))
        return dt.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (ValueError, TypeError, OverflowError, OSError):
        return str(value)


def _kv(rows: list[tuple[str, str]]) -> str:
    """A key/value list; the values are HTML already built with `_t`. Empty values are left out."""
    items = "".join(f"<dt>{_t(k)}</dt><dd>{v}</dd>" for k, v in rows if v)
    return f'<dl class="kv">{items}</dl>' if items else '<p class="muted">—</p>'


def _code(s: Any) -> str:
    return f"<code>{_t(s)}</code>" if s else ""


# -- the JSON trace ------------------------------------------------------------------------------
def _trace(data: SessionData) -> dict[str, Any]:
    return {"format": TRACE_FORMAT, "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "session": data.session.model_dump(mode="json"),
            "messages": [m.model_dump(mode="json") for m in data.messages],
            "plan": data.plan.model_dump(mode="json") if data.plan else None,
            "plans": [p.model_dump(mode="json") for p in data.plans],
            "steps": [{**s.model_dump(mode="json"), "blobs": dict(data.blobs.get(s.index, {}))} for s in data.steps]}


def export_json(store: Store, session_id: str) -> dict[str, Any]:
    """The session as a JSON-ready trace (see the module docstring)."""
    return _trace(store.load(session_id))


# -- the HTML report -----------------------------------------------------------------------------
def export_html(store: Store, session_id: str) -> str:
    """The whole self-contained HTML document for one session."""
    return _document(store, store.load(session_id))


def _document(store: Store, data: SessionData, files: dict[str, str] | None = None) -> str:
    s = data.session
    failed = sum(1 for r in data.steps if r.status != "completed")
    outcome = s.answer or s.reason
    extra = {k: v for k, v in s.metadata.items() if k not in ("initialUrl", "initialDomain")}
    facts = _kv([
        ("Status", _badge(s.status)), ("Domain", _t(s.domain)), ("Current URL", _t(s.url)),
        ("Initial URL", _t(s.metadata.get("initialUrl"))), ("Planner", _t(s.planner)),
        ("Approval policy", _t(s.policy)), ("Started", _t(_when(s.started))), ("Updated", _t(_when(s.updated))),
        ("Steps", _t(f"{len(data.steps)}" + (f" ({failed} not completed)" if failed else ""))),
        ("Session", f'<span class="mono">{_t(s.id)}</span>'),
        ("Metadata", _code(json.dumps(extra, ensure_ascii=False, sort_keys=True)) if extra else "")])
    head = (f'<header class="card"><div class="brand">Vigil run report</div><h1>{_t(s.title)}</h1>'
            f'<p class="task"><strong>Task:</strong> {_t(s.task)}</p>'
            + (f'<div class="outcome {_TONE.get(s.status, "")}"><strong>{"Answer" if s.answer else "Reason"}:'
               f'</strong> {_t(outcome)}</div>' if outcome else "") + facts + "</header>")
    nav = ('<nav class="card"><a href="#plan">Plan</a><a href="#chat">Conversation</a>'
           + "".join(f'<a href="#step-{r.index + 1}">Step {r.index + 1}</a>' for r in data.steps) + "</nav>")
    titles: dict[str, str | None] = {}  # snapshot sha256 → page title; consecutive steps share snapshots
    steps = "".join(_step(store, data, r, titles) for r in data.steps) or '<p class="muted">No steps were recorded.</p>'
    body = (head + _files(files or {}) + nav + _plan(data) + _chat(data) + _downloads(data)
            + f'<section id="steps"><h2>Steps</h2>{steps}</section>'
            f'<footer>Exported {_t(_when(datetime.now(UTC).isoformat()))} by Vigil. This file is '
            'self-contained: no scripts, no network; page and model text is shown as text.</footer>')
    return ('<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            '<meta name="referrer" content="no-referrer">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<title>Vigil report — {_t(s.title)}</title><style>{CSS}</style></head>'
            f'<body><main>{body}</main></body></html>\n')


_FILES = {"Playwright trace": ("the run in Playwright's Trace Viewer", "playwright show-trace {}"),
          "Playwright test": ("the run as a pytest-playwright test", "pytest {}"),
          "JSON trace": ("every recorded fact as JSON", "")}


def _files(files: dict[str, str]) -> str:
    """Links to the files exported with this report (relative hrefs: keep them beside it)."""
    if not files:
        return ""
    rows = []
    for what, href in files.items():
        words, command = _FILES[what]
        name = urllib.parse.unquote(href)
        rows.append(f'<li><a href="{_t(href)}">{_t(name)}</a> — {_t(what)}: {_t(words)}'
                    + (f" ({_code(command.format(name))})" if command else "") + "</li>")
    return (f'<section id="files" class="card"><h2>Exported with this report</h2><ul>{"".join(rows)}</ul>'
            '</section>')


def _downloads(data: SessionData) -> str:
    """The files the session's pages downloaded, each linked where it was saved (a file: link, not loaded)."""
    items = session_downloads(data.steps)
    if not items:
        return ""
    rows = []
    for index, d in items:
        where = (f'<a href="{_t(Path(d.path).as_uri())}">{_t(d.path)}</a>' if d.path else
                 f'<span class="err">{_t(d.error or "not saved")}</span>')
        size = f"{d.size:,} bytes" if d.size is not None else ""
        rows.append(f'<li><a href="#step-{index + 1}">Step {index + 1}</a>: <strong>{_t(d.name)}</strong> '
                    f'{_t(size)} {_t(d.mime)} — {where}</li>')
    return f'<section id="downloads" class="card"><h2>Downloads</h2><ul>{"".join(rows)}</ul></section>'


def _plan(data: SessionData) -> str:
    if data.plan is None or not data.plan.steps:
        return '<section id="plan"><h2>Plan</h2><p class="muted">No plan was recorded.</p></section>'
    items = "".join(f'<li class="{_TONE.get(p.status, "")}">{_badge(p.status)} {_t(p.description)}</li>'
                    for p in data.plan.steps)
    versions = (f'<p class="muted">The plan changed during the run: {len(data.plans)} versions; '
                'the last one is shown.</p>' if len(data.plans) > 1 else "")
    return f'<section id="plan"><h2>Plan</h2><div class="card"><ol class="plan">{items}</ol>{versions}</div></section>'


def _chat(data: SessionData) -> str:
    if not data.messages:
        return '<section id="chat"><h2>Conversation</h2><p class="muted">No messages.</p></section>'
    out = []
    for m in data.messages:
        role = m.role if m.role in ("user", "assistant", "system") else ""
        meta = " · ".join(x for x in (_t(m.role), _t(_when(m.timestamp)), _badge(m.status) if m.status else "") if x)
        out.append(f'<li class="msg {role}"><div class="meta">{meta}</div><div class="body">{_t(m.content)}</div>'
                   + (f"<div>{_code(m.actionString)}</div>" if m.actionString else "")
                   + (f'<div class="err">{_t(m.error)}</div>' if m.error else "") + "</li>")
    return (f'<section id="chat"><h2>Conversation</h2><div class="card"><ol class="chat">{"".join(out)}</ol>'
            '</div></section>')


def _decision(rec: StepRecord, policy: str) -> str:
    d = rec.decision
    if rec.actor == "human" and rec.action is None:
        return "The person acted in the page directly"
    if rec.auto_approved:
        return _t(f"Auto-approved (policy {policy})")
    if d is None:
        return '<span class="muted">No decision recorded</span>'
    bits = [_t(_DECISIONS.get(d.kind, d.kind))]
    if d.reason:
        bits.append(f"Reason: {_t(d.reason)}")
    if d.action is not None:
        bits.append(f"Action instead: {_code(d.action.to_string())}")
    if d.expected_outcome is not None:
        bits.append(f"Expecting: {_t(d.expected_outcome.describe())}")
    return "<br>".join(bits)


def _titles(store: Store, refs: dict[str, str], cache: dict[str, str | None]) -> list[str | None]:
    """The page titles the before/after snapshots were taken of (None when not stored)."""
    out = []
    for side in ("before", "after"):
        sha = refs.get(f"snapshot_{side}")
        if sha and sha not in cache:
            try:
                cache[sha] = str(json.loads(store.get_blob(sha))["context"]["title"])
            except (VigilError, ValueError, KeyError, TypeError):
                cache[sha] = None
        out.append(cache.get(sha) if sha else None)
    return out


def _pictures(store: Store, data: SessionData, rec: StepRecord) -> str:
    figs = []
    for side in ("before", "after"):
        try:
            pic = step_picture(store, data, rec.index, side)
        except VigilError as exc:
            figs.append(f'<figure><figcaption>{side.capitalize()}</figcaption><p class="err">The picture could '
                        f'not be read: {_t(exc.message)}</p></figure>')
            continue
        if pic is None:
            continue
        what = f"{pic.marks} elements marked" if pic.marks else "no marks"
        if pic.highlight:
            what += f"; ringed: [{pic.highlight}], the element acted on"
        zid = f"zoom-{rec.index + 1}-{side}"
        src = "data:image/jpeg;base64," + base64.b64encode(pic.jpeg).decode("ascii")
        figs.append(f'<figure><figcaption><strong>{side.capitalize()}</strong> · {_t(what)} · click to enlarge'
                    f'</figcaption><input type="checkbox" class="zoom" id="{zid}">'
                    f'<label for="{zid}"><img src="{_t(src)}" alt="{_t(f"Step {rec.index + 1}, {side}")}">'
                    f'</label></figure>')
    return f'<div class="shots">{"".join(figs)}</div>' if figs else '<p class="muted">No screenshots stored.</p>'


def _step(store: Store, data: SessionData, rec: StepRecord, cache: dict[str, str | None]) -> str:
    n, p, res = rec.index + 1, rec.proposal, rec.result
    ver = rec.verification or (res.verification if res else None)
    tgt = rec.target or {}
    before, after = _titles(store, data.blobs.get(rec.index, {}), cache)
    proposal = _kv([] if p is None else [
        ("Thought", _t(p.thought)), ("Action", _code(p.action.to_string())),
        ("Expecting", _t(p.expected_outcome.describe()) if p.expected_outcome else ""),
        ("Sensitive", _t(p.sensitive_reason or "yes") if p.sensitive else "")])
    target = " ".join(x for x in (_t(tgt.get("role")), f'"{_t(tgt.get("name"))}"' if tgt.get("name") else "",
                                  f'[{_t(tgt.get("id"))}]' if tgt.get("id") else "") if x)
    result = _kv([
        ("Ran", _code(rec.action.to_string()) if rec.action else '<span class="muted">nothing ran</span>'),
        ("Target", target),
        # what the step was approved to do, as the page computed it before input (its words quote the page)
        ("Effect", _t(rec.effect.line()) if rec.effect is not None else ""),
        ("Result", "" if res is None else (_badge("success" if res.success else "failed")
                                           + (f" {_code(res.error_code)}" if res.error_code else ""))),
        ("Message", _t(res.message) if res else ""), ("Recovered from", _t(res.recovered_from) if res else "")])
    verification = "" if ver is None else _kv([
        ("Verified", _badge("success" if ver.success else "failed") + f" confidence {ver.confidence:.2f}"),
        ("Expected", _t(ver.expected.describe()) if ver.expected else ""), ("Saw", _t(ver.actual_outcome)),
        ("Feedback", _t(ver.feedback)), ("Errors on page", "<br>".join(_t(x) for x in ver.errors_detected)),
        ("Success messages", "<br>".join(_t(x) for x in ver.success_messages))])
    page = _kv([("Tab", _t(rec.tab.describe()) if rec.tab is not None else ""), ("URL before", _t(rec.url_before)),
                ("URL after", "" if not rec.url_after else "(unchanged)" if rec.url_after == rec.url_before
                 else _t(rec.url_after)),
                ("Title before", _t(before)),
                ("Title after", (_t(after) if after != before else "(unchanged)") if after is not None else "")])
    events = ("<ul class=\"events\">" + "".join(f"<li><span class=\"mono\">{_t(e.describe())}</span></li>"
                                                for e in rec.events) + "</ul>"
              if rec.events else '<p class="muted">No page events were seen.</p>')
    timings = " · ".join(f"{_t(k)} {v:,.0f} ms" for k, v in rec.timings_ms.items())
    return (f'<article class="card step {_TONE.get(rec.status, "")}" id="step-{n}"><header><h3>Step {n}</h3>'
            f'{_badge(rec.status)}<span class="muted">{_t(rec.actor)} · {_t(_when(rec.started_at))}</span></header>'
            + (f'<p class="desc">{_t(p.description)}</p>' if p and p.description else "")
            + (f'<p class="err">{_t(rec.note)}</p>' if rec.note else "")
            + f'<div class="cols"><div><h4>Proposal</h4>{proposal}<h4>Decision</h4>'
            f'<div>{_decision(rec, data.session.policy)}</div><h4>Page</h4>{page}</div><div><h4>Action</h4>{result}'
            + (f"<h4>Verification</h4>{verification}" if verification else "")
            + f"<h4>Recent page events</h4>{events}</div></div>{_pictures(store, data, rec)}"
            + (f'<p class="timings">{timings}</p>' if timings else "") + _exchange(rec) + "</article>")


def _exchange(rec: StepRecord) -> str:
    """What a model or backend planner was sent and answered for the step, folded (no script needed)."""
    ex = rec.exchange
    if not ex:
        return ""
    who = ex.get("model") or ex.get("endpoint") or "the planner"
    size = f" · ~{int(ex['tokens']):,} tokens" if isinstance(ex.get("tokens"), (int, float)) and ex["tokens"] else ""
    body = json.dumps(ex, ensure_ascii=False, indent=2)
    return (f'<details class="exchange"><summary>What {_t(who)} was sent and answered{_t(size)}</summary>'
            f'<pre>{_t(body)}</pre></details>')


# -- writing -------------------------------------------------------------------------------------
def _bad(path: Path, what: str, problem: str) -> VigilError:
    return VigilError(f"Cannot write the {what} to {str(path)!r}: {problem}.", code=ErrorCode.BAD_ARGUMENT)


def _check(path: Path, what: str) -> None:
    if path.is_dir():
        raise _bad(path, what, "that is a folder; give a file name such as report.html")
    if not path.parent.is_dir():
        raise _bad(path, what, f"the folder {str(path.parent)!r} does not exist")


def _umask() -> int:
    with contextlib.suppress(OSError, ValueError, StopIteration):
        lines = Path("/proc/self/status").read_text().splitlines()
        return int(next(x for x in lines if x.startswith("Umask:")).split()[1], 8)
    return 0o022


def _write_atomic(path: Path, payload: bytes, what: str) -> None:
    """Write through a temp file in the same folder and `os.replace`, so the file is whole or untouched."""
    try:
        mode = path.stat().st_mode & 0o777 if path.exists() else 0o666 & ~_umask()
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(payload)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, mode)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except PermissionError:
        raise _bad(path, what, "permission denied") from None
    except OSError as exc:
        raise _bad(path, what, exc.strerror or str(exc)) from None


def write_export(store: Store, session_id: str, html_path: str | Path | None = None,
                 json_path: str | Path | None = None, *, trace_path: str | Path | None = None,
                 test_path: str | Path | None = None, trace_extra: dict[str, bytes] | None = None) -> list[Path]:
    """Write the HTML report, the JSON trace, the Playwright trace zip and/or the Playwright test of a session;
    returns the paths written. The report is written last and links the trace zip and the test written with it
    (by a path relative to the report's folder). Raises VigilError BAD_ARGUMENT (naming the path) when a path
    cannot be written, before anything is written. `trace_extra`: files to add to the trace zip (Playwright's own
    trace of the run, already scrubbed: `engine.store.live_trace`)."""
    given = ((html_path, "HTML report"), (json_path, "JSON trace"), (trace_path, "Playwright trace"),
             (test_path, "Playwright test"))
    targets = [(Path(p).expanduser(), what) for p, what in given if p is not None]
    if not targets:
        raise VigilError("Nothing to export: give a path for the HTML report (--html), the JSON trace (--json), "
                         "the Playwright trace (--trace) and/or the Playwright test (--playwright).",
                         code=ErrorCode.BAD_ARGUMENT)
    seen: dict[Path, str] = {}
    for path, what in targets:
        _check(path, what)
        if path.resolve() in seen:
            raise VigilError(f"The {seen[path.resolve()]} and the {what} cannot both be written to {str(path)!r}.",
                             code=ErrorCode.BAD_ARGUMENT)
        seen[path.resolve()] = what
    data = store.load(session_id)
    written = {what: path for path, what in targets}
    if test_path is not None:
        from engine.store.export_playwright import export_playwright
        export_playwright(store, session_id, written["Playwright test"])
    if trace_path is not None:
        _write_atomic(written["Playwright trace"], trace_zip(store, data, trace_extra), "Playwright trace")
    if json_path is not None:
        text = json.dumps(_trace(data), ensure_ascii=False, indent=2) + "\n"
        _write_atomic(written["JSON trace"], _clean(text).encode("utf-8"), "JSON trace")
    if html_path is not None:
        report = written["HTML report"]
        files = {what: _relative(path, report.parent) for what, path in written.items() if what != "HTML report"}
        _write_atomic(report, _clean(_document(store, data, files)).encode("utf-8"), "HTML report")
    return [path for path, _ in targets]


def _relative(path: Path, folder: Path) -> str:
    """`path` as a link from a page in `folder`: relative when it can be, else a file: URL."""
    try:
        return urllib.parse.quote(Path(os.path.relpath(path.resolve(), folder.resolve())).as_posix())
    except ValueError:  # another drive (Windows)
        return path.resolve().as_uri()
