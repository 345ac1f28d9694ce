"""A stored session as a Playwright trace: the zip `playwright show-trace` (and trace.playwright.dev) opens.
`engine.store.report.write_export(…, trace_path=…)` writes it (`vigil export ID --trace`, `vigil run --trace`, the
window's Export trace…).

Every stored session exports, also one recorded without any tracing: the trace is built from what the store
holds, in the trace format Playwright writes (version 10, the one of the Playwright Vigil ships with; the
viewer upgrades older versions but refuses newer ones):

- `trace.trace`, one JSON event a line: the context's options (the viewport of the session's first snapshot,
  the session's title), then per step a group (`Tracing.tracingGroup`, as `tracing.group()` records it) titled
  "Step N: action · decision · verdict" holding one call — its parameters the step's target, effect and
  expected outcome, its log the proposal, the decision, the result and the verification, its error the failure
  — with `before` / `action` / `after` frame snapshots whose document is the stored picture (the element acted
  on is marked as the viewer marks a target), the pointer's point, the picture pair as screencast frames
  (the filmstrip), and the step's page events as console messages (errors as errors);
- `trace.network`: the documents the run is known to have loaded (where it started, each navigation a step
  saw, with the method of a form submission that took it there) and the files it downloaded, as HAR entries
  (Vigil keeps no status or headers: a status of 0 says so);
- `resources/`: the pictures, as JPEG, each named by its SHA-1 as Playwright names resources.

Secrets: nothing here is read from the page: the store never holds a typed password or one-time code (they are
`••••••••` in every record) and its pictures have them painted over (trust.md), so the trace holds none either.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from engine.errors import VigilError
from engine.models import StepRecord
from engine.store.session_data import SessionData
from engine.store.store import Store

TRACE_VERSION = 10
PAGE_ID = "page@vigil"
FRAME_ID = "frame@vigil"
_DECIDED = {"approve": "approved", "edit": "edited", "skip": "skipped", "reject": "rejected",
            "take_over": "taken over", "stop": "stopped"}
_CONSOLE = {"error": "error", "warning": "warning"}  # a page event's category → console message type (else info)


@dataclass(frozen=True)
class _Pic:
    file: str          # its name in the zip
    jpeg: bytes
    width: int
    height: int


@dataclass
class _Trace:
    """The trace being written: its events, network entries and resources, and the session's time origin."""

    origin: float                    # epoch seconds that monotonic time `base` stands for
    base: float                      # ms: 0, or Playwright's clock when its own trace of the run goes beside
    viewport: dict[str, int]
    url: str = ""
    events: list[dict[str, Any]] = field(default_factory=list)
    network: list[dict[str, Any]] = field(default_factory=list)
    resources: dict[str, bytes] = field(default_factory=dict)
    pictures: dict[str, _Pic] = field(default_factory=dict)  # stored sha256 → its JPEG in the zip
    last_picture: _Pic | None = None

    def ms(self, epoch: float) -> float:
        return round(max(0.0, self.base + (epoch - self.origin) * 1000), 3)

    def wall(self, at: float) -> float:
        """Epoch ms of monotonic time `at`."""
        return self.origin * 1000 + at - self.base

    def resource(self, data: bytes, ext: str) -> str:
        name = f"resources/{hashlib.sha1(data).hexdigest()}.{ext}"  # noqa: S324 - Playwright names resources so
        self.resources[name] = data
        return name


def trace_zip(store: Store, data: SessionData, extra: dict[str, bytes] | None = None) -> bytes:
    """The trace zip of a loaded session, as bytes; `extra` files go in beside (Playwright's own trace of the run,
    scrubbed: `engine.store.live_trace`)."""
    tr = _start(store, data, _clock(extra or {}))
    for i, rec in enumerate(data.steps):
        nxt = data.steps[i + 1].started_at if i + 1 < len(data.steps) else None
        _step(store, data, tr, rec, nxt)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("trace.trace", "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in tr.events))
        seen = _requested(extra or {})  # what Playwright's own trace has with its status is not said twice
        z.writestr("trace.network", "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in tr.network
                                            if e["snapshot"]["request"]["url"] not in seen))
        for name, blob in tr.resources.items():
            z.writestr(name, blob, compress_type=zipfile.ZIP_STORED)  # JPEG does not shrink
        for name, blob in (extra or {}).items():
            if name not in tr.resources and name not in ("trace.trace", "trace.network"):
                z.writestr(name, blob)
    return buf.getvalue()


# -- the context ---------------------------------------------------------------------------------
def _epoch(iso: str) -> float:
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00")).astimezone(UTC).timestamp()
    except (ValueError, TypeError):
        return 0.0


def _requested(extra: dict[str, bytes]) -> set[str]:
    """The URLs requested in Playwright's own trace of the run, when it goes beside."""
    urls = set()
    for line in extra.get("live.network", b"").splitlines():
        try:
            urls.add(str(json.loads(line)["snapshot"]["request"]["url"]))
        except (ValueError, KeyError, TypeError):
            continue
    return urls


def _clock(extra: dict[str, bytes]) -> tuple[float, float] | None:
    """(epoch s, monotonic ms) of the same moment in Playwright's own trace of the run, when it goes beside: the
    viewer puts every context on one timeline by their monotonic times, so this one takes Playwright's clock."""
    live = extra.get("live.trace")
    if not live:
        return None
    try:
        first = json.loads(live.split(b"\n", 1)[0])
        return float(first["wallTime"]) / 1000, float(first["monotonicTime"])
    except (ValueError, KeyError, TypeError):
        return None


def _start(store: Store, data: SessionData, clock: tuple[float, float] | None = None) -> _Trace:
    s = data.session
    first = data.steps[0].started_at if data.steps else _epoch(s.started)
    origin = min(x for x in (_epoch(s.started), first) if x) if (first or _epoch(s.started)) else 0.0
    base = 0.0
    if clock is not None:  # Playwright's clock: its monotonic ms at an epoch second, carried back to `origin`
        base = max(0.0, clock[1] - (clock[0] - origin) * 1000)
        origin = clock[0] - (clock[1] - base) / 1000
    tr = _Trace(origin=origin, base=base, viewport=_viewport(store, data),
                url=str(s.metadata.get("initialUrl") or s.url))
    tr.events.append({
        "version": TRACE_VERSION, "type": "context-options", "origin": "library", "browserName": "chromium",
        "platform": "linux", "wallTime": round(origin * 1000), "monotonicTime": base, "sdkLanguage": "python",
        "testIdAttributeName": "data-testid", "title": s.title, "contextId": f"vigil-session@{s.id}",
        "options": {"viewport": tr.viewport}})
    tr.events.append({"type": "event", "time": base, "class": "BrowserContext", "method": "page",
                      "params": {"pageId": PAGE_ID}})
    if tr.url.startswith(("http://", "https://")):
        _document(tr, tr.url, "GET", base)
    return tr


def _viewport(store: Store, data: SessionData) -> dict[str, int]:
    """The viewport of the session's first readable snapshot (CSS px), else 1280×800."""
    for refs in data.blobs.values():
        sha = refs.get("snapshot_before") or refs.get("snapshot_after")
        if not sha:
            continue
        try:
            vp = json.loads(store.get_blob(sha))["context"]["viewport"]
            return {"width": int(vp["width"]), "height": int(vp["height"])}
        except (VigilError, ValueError, KeyError, TypeError):
            continue
    return {"width": 1280, "height": 800}


# -- one step --------------------------------------------------------------------------------------
def _step(store: Store, data: SessionData, tr: _Trace, rec: StepRecord, next_start: float | None) -> None:
    n = rec.index + 1
    group, call = f"step@{n}", f"call@{n}"
    start = tr.ms(rec.started_at)
    end = round(start + max(1.0, float(rec.timings_ms.get("total") or 1.0)), 3)
    if next_start is not None:  # (a step's total counts its observation, which can come before its record's time)
        end = max(start + 1.0, min(end, tr.ms(next_start) - 0.01))
    tr.events.append({"type": "before", "callId": group, "startTime": start, "title": _group_title(rec, data),
                      "class": "Tracing", "method": "tracingGroup", "params": {}})
    tr.events.append({"type": "before", "callId": call, "parentId": group, "startTime": start + 0.001,
                      "pageId": PAGE_ID, "class": "Frame", "method": _method(rec), "title": _call_title(rec),
                      "params": _params(rec)})
    pictures = {side: _picture(store, data, rec.index, side, tr) for side in ("before", "after")}
    shown_before = pictures["before"] or tr.last_picture  # a step without pictures (finish) shows the page as it was
    shown_after = pictures["after"] or shown_before
    tr.last_picture = shown_after
    url_before, url_after = rec.url_before or tr.url, rec.url_after or rec.url_before or tr.url
    _frame(tr, call, "before", start + 0.002, url_before, shown_before, None)
    _screencast(tr, pictures["before"], start + 0.002)
    for i, line in enumerate(_log(rec, data.session.policy)):
        tr.events.append({"type": "log", "callId": call, "time": start + 0.003 + i / 1000, "message": line})
    box = _box(rec)
    if box is not None:
        point = rec.result.point if rec.result is not None and rec.result.point else None
        x, y = point if point else (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        tr.events.append({"type": "input", "callId": call, "point": {"x": x, "y": y}, "box": box})
        _frame(tr, call, "action", start + 0.5, url_before, shown_before, box)
    for e in rec.events:
        at = tr.ms(e.at / 1000) if e.at else end
        tr.events.append({"type": "console", "messageType": _CONSOLE.get(e.category, "info"),
                          "text": f"{e.category}: {e.kind} '{e.text}'", "args": [], "time": min(max(at, start), end),
                          "location": {"url": url_after, "lineNumber": 0, "columnNumber": 0}, "pageId": PAGE_ID})
    _network(tr, rec, url_before, url_after, end)
    after: dict[str, Any] = {"type": "after", "callId": call, "endTime": end - 0.002}
    failure = _failure(rec)
    if failure:
        after["error"] = {"name": "Error", "message": failure}
    tr.events.append(after)
    _frame(tr, call, "after", end - 0.001, url_after, shown_after, None)
    _screencast(tr, pictures["after"], end - 0.001)
    tr.events.append({"type": "after", "callId": group, "endTime": end})


def _decision_word(rec: StepRecord, policy: str) -> str:
    if rec.actor == "human" and rec.action is None:
        return "done by the person"
    if rec.auto_approved:
        return f"auto-approved ({policy})"
    return _DECIDED.get(rec.decision.kind, rec.decision.kind) if rec.decision else "no decision"


def _verdict(rec: StepRecord) -> str:
    ver = rec.verification or (rec.result.verification if rec.result else None)
    if rec.status != "completed":
        return rec.status
    if rec.result is not None and not rec.result.success:
        return f"failed {rec.result.error_code or ''}".strip()
    if ver is not None:
        return "verified" if ver.success else "NOT verified"
    return "done"


def _action_words(rec: StepRecord) -> str:
    if rec.action is not None:
        return rec.action.to_string()
    if rec.proposal is not None:
        return f"{rec.proposal.action.to_string()} (not run)"
    return "the person acted in the page"


def _group_title(rec: StepRecord, data: SessionData) -> str:
    return (f"Step {rec.index + 1}: {_action_words(rec)} · {_decision_word(rec, data.session.policy)} · "
            f"{_verdict(rec)}")


def _method(rec: StepRecord) -> str:
    act = rec.action or (rec.proposal.action if rec.proposal else None)
    return act.name if act is not None else "takeOver"


def _call_title(rec: StepRecord) -> str:
    if rec.proposal is not None and rec.proposal.description:
        return rec.proposal.description
    return _action_words(rec)


def _params(rec: StepRecord) -> dict[str, Any]:
    """The call's parameters as the viewer lists them: what ran, on what, what it was to do."""
    tgt = rec.target or {}
    out: dict[str, Any] = {"action": _action_words(rec)}
    if tgt.get("id"):
        out["target"] = " ".join(x for x in (str(tgt.get("role") or ""), f'"{tgt["name"]}"' if tgt.get("name") else "",
                                             f"[{tgt['id']}]") if x)
    if rec.effect is not None:
        out["effect"] = rec.effect.line()
    if rec.proposal is not None and rec.proposal.expected_outcome is not None:
        out["expecting"] = rec.proposal.expected_outcome.describe()
    return out


def _log(rec: StepRecord, policy: str) -> list[str]:
    """The step's story in the call's log: proposal, decision, result, verification, what else happened."""
    p, res = rec.proposal, rec.result
    ver = rec.verification or (res.verification if res else None)
    lines = []
    if p is not None:
        lines += [f"proposed: {p.action.to_string()}" + (f" — {p.thought}" if p.thought else "")]
        if p.sensitive:
            lines.append(f"sensitive: {p.sensitive_reason or 'yes'}")
    if rec.effect is not None:
        lines.append(f"effect: {rec.effect.line()}")
    lines.append(f"decision: {_decision_word(rec, policy)}")
    d = rec.decision
    if d is not None and d.reason:
        lines.append(f"  reason: {d.reason}")
    if d is not None and d.action is not None:
        lines.append(f"  instead: {d.action.to_string()}")
    if res is not None:
        lines.append(f"result: {'ok' if res.success else 'failed'}" + (f" {res.error_code}" if res.error_code else "")
                     + (f" — {res.message}" if res.message else ""))
    if ver is not None:
        lines.append(f"verification: {'success' if ver.success else 'failed'} (confidence {ver.confidence:.2f}) — "
                     f"{ver.actual_outcome}")
        lines += [f"  page error: {x}" for x in ver.errors_detected]
    if rec.incidents is not None:
        lines += [f"incident: {x}" for x in rec.incidents.lines()]
    if rec.note:
        lines.append(f"note: {rec.note}")
    return lines


def _failure(rec: StepRecord) -> str:
    res = rec.result
    if rec.status == "failed" or (res is not None and not res.success):
        return (f"{res.error_code}: " if res is not None and res.error_code else "") + (
            (res.message if res is not None and res.message else "") or rec.note or "the step failed")
    return ""


def _box(rec: StepRecord) -> dict[str, float] | None:
    b = (rec.target or {}).get("bounds")
    if not isinstance(b, (list, tuple)) or len(b) != 4:
        return None
    try:
        x, y, w, h = (float(v) for v in b)
    except (TypeError, ValueError):
        return None
    return {"x": x, "y": y, "width": w, "height": h}


# -- pictures ----------------------------------------------------------------------------------------
def _picture(store: Store, data: SessionData, index: int, side: str, tr: _Trace) -> _Pic | None:
    """The step's plain stored picture on `side` as a JPEG resource, or None (not stored, or unreadable)."""
    sha = data.blobs.get(index, {}).get(f"screenshot_{side}")
    if not sha:
        return None
    if sha in tr.pictures:  # a step's after picture is often the next one's before
        return tr.pictures[sha]
    try:
        img = store.picture(sha)  # decoded: a stored patch is drawn on the pictures before it
        buf = io.BytesIO()
        img.convert("RGB").save(buf, format="JPEG", quality=80)
    except (VigilError, OSError, ValueError):
        return None
    jpeg = buf.getvalue()
    pic = tr.pictures[sha] = _Pic(tr.resource(jpeg, "jpeg"), jpeg, img.width, img.height)
    return pic


def _screencast(tr: _Trace, pic: _Pic | None, at: float) -> None:
    if pic is None:
        return
    tr.events.append({"type": "screencast-frame", "pageId": PAGE_ID, "file": pic.file, "width": pic.width,
                      "height": pic.height, "timestamp": at, "frameSwapWallTime": round(tr.wall(at), 3)})


def _frame(tr: _Trace, call: str, phase: str, at: float, url: str, pic: _Pic | None,
           target: dict[str, float] | None) -> None:
    """A frame snapshot of the call's `phase`: a document showing the stored picture, scaled to the viewport,
    and over it, for the action phase, a box where the target was, marked as the viewer marks targets."""
    body: list[Any] = ["BODY", {"style": "margin:0;position:relative"}]
    if pic is not None:
        src = "data:image/jpeg;base64," + base64.b64encode(pic.jpeg).decode("ascii")
        body.append(["IMG", {"src": src, "alt": f"the page {phase} the step",
                             "style": f"display:block;width:{tr.viewport['width']}px"}])
    else:
        body.append(["P", {}, "(no picture was stored for this moment)"])
    if target is not None:
        body.append(["DIV", {"__playwright_target__": call, "style": (
            f"position:absolute;left:{target['x']}px;top:{target['y']}px;width:{target['width']}px;"
            f"height:{target['height']}px")}])
    tr.events.append({"type": "frame-snapshot", "snapshot": {
        "callId": call, "snapshotName": f"{phase}@{call}", "phase": phase, "pageId": PAGE_ID, "frameId": FRAME_ID,
        "frameUrl": url, "doctype": "html", "html": ["HTML", {}, ["HEAD", {}, ["BASE", {"href": url}]], body],
        "viewport": tr.viewport, "timestamp": at, "wallTime": round(tr.wall(at)),
        "collectionTime": 0, "resourceOverrides": [], "isMainFrame": True}})


# -- network -----------------------------------------------------------------------------------------
def _network(tr: _Trace, rec: StepRecord, url_before: str, url_after: str, at: float) -> None:
    if url_after != url_before and url_after.startswith(("http://", "https://")):
        sub = rec.effect.submission if rec.effect is not None else None
        method = sub.method if sub is not None and sub.method in ("GET", "POST") else "GET"
        _document(tr, url_after, method, at)
    for d in rec.incidents.downloads if rec.incidents is not None else []:
        if d.url.startswith(("http://", "https://")):
            _entry(tr, d.url, "GET", at, "other", d.mime or "application/octet-stream", d.size or 0)


def _document(tr: _Trace, url: str, method: str, at: float) -> None:
    _entry(tr, url, method, at, "document", "text/html", 0)


def _entry(tr: _Trace, url: str, method: str, at: float, kind: str, mime: str, size: int) -> None:
    """A HAR entry for a request the run is known to have made. Vigil keeps no status, headers or body: the
    status is 0, "not recorded"."""
    started = datetime.fromtimestamp(tr.wall(at) / 1000, UTC).isoformat(timespec="milliseconds")
    tr.network.append({"type": "resource-snapshot", "snapshot": {
        "pageref": PAGE_ID, "startedDateTime": started.replace("+00:00", "Z"), "time": 0,
        "request": {"method": method, "url": url, "httpVersion": "HTTP/1.1", "cookies": [], "headers": [],
                    "queryString": [], "headersSize": -1, "bodySize": -1},
        "response": {"status": 0, "statusText": "not recorded by Vigil", "httpVersion": "HTTP/1.1", "cookies": [],
                     "headers": [], "content": {"size": size, "mimeType": mime}, "headersSize": -1, "bodySize": -1,
                     "redirectURL": ""},
        "cache": {}, "timings": {"send": 0, "wait": 0, "receive": 0}, "_frameref": FRAME_ID,
        "_monotonicTime": at, "_resourceType": kind}})
