"""`upload(id, path…)`: set files on a file input through CDP (`DOM.setFileInputFiles`).

The element given may be the file input itself or what a person clicks instead — a styled button,
a label, a drop zone: the input it stands for is found (the element's own control, an input inside
it, the label's control, `for`/`aria-controls`, or the only file input of its nearest container).
Paths are checked before anything touches the page (each must exist, be a file and be readable);
nothing but the paths named is read, and Chromium reads them itself. The result is verified by
reading the names of the files the input now holds.

An expected outcome (`expect=`, as for every action) is checked on top of that: the page showing
"Attached: invoice.pdf" (`element_appears`), a form sent on choosing (`navigation`) … . The input now
holding the files is itself the change that `any_change` and `value_changes` ask for (a `value` must
be one of the file names), unless an error showed on the page."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from pathlib import Path

from engine.actions.locate import GROUP, release, resolve
from engine.browser.target import PageTarget
from engine.errors import ErrorCode, UnknownNodeError, VigilError
from engine.models import ActionResult, ExpectedOutcome, OutcomeLike, PageState, VerificationResult
from engine.observe.sentinel import PreState, evaluate, observe_post, verify
from engine.observe.stability import StabilityConfig, wait_stable
from engine.observe.stream import read_stream
from engine.snapshot.cache import SnapshotCache

_FIND_INPUT = """function () {
  const isFile = e => !!e && e.tagName === 'INPUT' && String(e.type).toLowerCase() === 'file';
  const el = this;
  if (isFile(el)) return el;
  if (el.control && isFile(el.control)) return el.control;
  const inner = el.querySelector ? el.querySelector('input[type=file]') : null;
  if (inner) return inner;
  const lab = el.closest ? el.closest('label') : null;
  if (lab && isFile(lab.control)) return lab.control;
  const root = el.getRootNode ? el.getRootNode() : document;
  for (const a of ['for', 'aria-controls', 'data-for']) {
    const id = el.getAttribute && el.getAttribute(a);
    const t = id && (root.getElementById ? root.getElementById(id) : document.getElementById(id));
    if (isFile(t)) return t;
  }
  // a file input right beside it (<input hidden><button>), or beside its wrapper (<span><button></span><input>)
  for (const [node, reach] of [[el, 2], [el.parentElement, 1]]) {
    let before = node && node.previousElementSibling, after = node && node.nextElementSibling;
    for (let k = 0; k < reach && (before || after); k++) {
      if (isFile(before)) return before;
      if (isFile(after)) return after;
      before = before && before.previousElementSibling;
      after = after && after.nextElementSibling;
    }
  }
  let p = el.parentElement;
  for (let i = 0; p && i < 4; i++, p = p.parentElement) {
    const found = p.querySelectorAll('input[type=file]');
    if (found.length === 1) return found[0];
    if (found.length > 1) break;
  }
  return null;
}"""
_FILES = "function () { return [Array.from(this.files || []).map(f => f.name), !!this.multiple, this.disabled, " \
         "this.getAttribute('accept') || '']; }"


def check_paths(paths: list[str]) -> list[Path]:
    """The paths as absolute files; VigilError (BAD_FILE) naming the first that cannot be uploaded."""
    if not paths:
        raise VigilError("upload needs at least one file path.", code=ErrorCode.BAD_FILE)
    out = []
    for raw in paths:
        p = Path(str(raw)).expanduser()
        if not p.is_absolute():
            p = Path.cwd() / p
        if not p.exists():
            raise VigilError(f"Cannot upload {raw}: no such file. Give the full path of an existing file.",
                             code=ErrorCode.BAD_FILE)
        if not p.is_file():
            raise VigilError(f"Cannot upload {raw}: it is not a file (a folder?). Give the path of a file.",
                             code=ErrorCode.BAD_FILE)
        if not os.access(p, os.R_OK):
            raise VigilError(f"Cannot upload {raw}: it is not readable by this user. Check its permissions.",
                             code=ErrorCode.BAD_FILE)
        out.append(p.resolve())
    return out


async def upload(page: PageTarget, snapshots: SnapshotCache, node_id: str, paths: list[str],
                 stability: StabilityConfig | None = None, *, expect: OutcomeLike = None) -> ActionResult:
    """Set `paths` on the file input `node_id` stands for, and verify the input holds them (and that
    `expect` came true, when given)."""
    t0 = time.monotonic()
    names = ", ".join(Path(str(p)).name for p in paths)
    label = f"upload({node_id}, {names})"

    def failed(code: ErrorCode, message: str) -> ActionResult:
        return ActionResult(success=False, action=label, node_id=node_id, error_code=code, message=message,
                            timings_ms={"total": round((time.monotonic() - t0) * 1000, 1)})

    try:
        files = check_paths(paths)
    except VigilError as exc:
        return failed(exc.code, exc.message)
    try:
        exp = ExpectedOutcome.model_validate(expect) if isinstance(expect, dict) else expect
    except ValueError as exc:
        return failed(ErrorCode.BAD_ARGUMENT, f"The expected outcome is not valid: {str(exc).splitlines()[0]}")
    sid = ""
    expected: VerificationResult | None = None
    try:
        page.check_alive()
        snap = snapshots.latest if snapshots.latest is not None and node_id in snapshots.latest \
            else await snapshots.snapshot()
        target = await resolve(page, snap, node_id)
        sid = target.session_id
        r = await page.cdp.send("Runtime.callFunctionOn", {"functionDeclaration": _FIND_INPUT,
                                                           "objectId": target.object_id, "objectGroup": GROUP},
                                session_id=sid, timeout=10)
        obj = r.get("result", {})
        oid = obj.get("objectId") if obj.get("subtype") != "null" else None
        if not oid:  # a button whose script opens the chooser: press it and catch the chooser it opens
            oid = await _chooser_input(page, sid, target.object_id)
        if not oid:
            return failed(ErrorCode.NO_FILE_INPUT, f"Element {node_id} ({target.node.label()}) is not a file input "
                          "and no file input belongs to it (inside it, labelled by it, beside it, or opened by "
                          "pressing it). Choose the file input or the button that opens the file chooser.")
        before = await _files(page, sid, oid)
        if before[2]:
            return failed(ErrorCode.DISABLED, f"The file input of element {node_id} is disabled.")
        if len(files) > 1 and not before[1]:
            return failed(ErrorCode.BAD_ARGUMENT, f"The file input of element {node_id} takes one file "
                          f"(no `multiple`); {len(files)} were given.")
        pre = await _pre_state(page, snapshots, node_id) if exp is not None else None
        await page.cdp.send("DOM.setFileInputFiles", {"files": [str(f) for f in files], "objectId": oid},
                            session_id=sid, timeout=15)
        page.invalidate()
        acted = time.monotonic()
        settle = await wait_stable(page, stability or StabilityConfig(), since=acted)
        held = (await _files(page, sid, oid))[0]
        if exp is not None and pre is not None:
            expected = await _expected(page, snapshots, exp, pre, node_id, held, acted)
    except UnknownNodeError as exc:
        page.invalidate()
        return failed(exc.code, exc.message)
    except VigilError as exc:
        page.invalidate()
        return failed(ErrorCode.NOT_ACTIONABLE if exc.code is ErrorCode.CDP_ERROR else exc.code, exc.message)
    finally:
        if sid:
            await release(page, sid)
    wanted = [f.name for f in files]
    ok = held == wanted
    feedback = (f"Verified: the file input holds {', '.join(held)}." if ok else
                f"Not verified: the file input holds {', '.join(held) or 'no file'}, not {', '.join(wanted)}.")
    v = VerificationResult(success=ok, verified_outcome="value_changes" if ok else None, actual_outcome=feedback,
                           page_state=PageState(url=page.url, url_changed=False, dom_changed=True),
                           confidence=1.0 if ok else 0.0, feedback=feedback)
    if expected is not None:
        both = ok and expected.success
        if ok and not both:
            feedback = (f"Not verified: the file input holds {', '.join(held)}, "
                        "but the page did not do what was expected.")
        feedback = f"{feedback} {expected.feedback}" if ok else feedback
        v = expected.model_copy(update={"success": both, "feedback": feedback,
                                        "verified_outcome": expected.verified_outcome if both else None,
                                        "confidence": expected.confidence if both else 0.0})
    what = "file" if len(files) == 1 else "files"
    accept = f" (it accepts {before[3]})" if before[3] else ""
    return ActionResult(success=True, action=label, node_id=node_id,
                        message=f"Set {len(files)} {what} on the file input of element {node_id}{accept}: "
                                f"{', '.join(wanted)}. {feedback}",
                        verification=v, data={"files": [str(f) for f in files], "settled": settle.stable},
                        timings_ms={"total": round((time.monotonic() - t0) * 1000, 1), "settle": settle.waited_ms})


async def _pre_state(page: PageTarget, snapshots: SnapshotCache, node_id: str) -> PreState:
    """The page before the files are set, for checking an expected outcome afterwards."""
    snap = await snapshots.snapshot()
    reading = await read_stream(page, time.time() * 1000)
    return PreState(url=snap.url, nav_count=page.nav_count, mutations=reading.mutations, t_ms=time.time() * 1000,
                    snapshot=snap, node_id=node_id, scroll=(snap.context.scroll_x, snap.context.scroll_y))


async def _expected(page: PageTarget, snapshots: SnapshotCache, exp: ExpectedOutcome, pre: PreState, node_id: str,
                    held: list[str], acted: float) -> VerificationResult:
    """Whether `exp` came true. The input holding files is the change `any_change` and `value_changes` ask
    for (a `value` must name a held file); an error on the page still spoils it."""
    if exp.type in ("any_change", "value_changes") and exp.or_ is None:
        r = evaluate(exp, pre, await observe_post(page, snapshots, pre), node_id)
        value_ok = exp.value is None or any(exp.value in (n, f"C:\\fakepath\\{n}") for n in held)
        if held and value_ok and not r.errors_detected:
            said = f"the file input's value changed to {', '.join(held)}"
            return r.model_copy(update={"success": True, "verified_outcome": exp.type, "actual_outcome": said,
                                        "feedback": "That is the change expected.", "confidence": 1.0})
        if held and not value_ok:
            said = f"the file input holds {', '.join(held)}, not {exp.value}"
            return r.model_copy(update={"success": False, "verified_outcome": None, "actual_outcome": said,
                                        "feedback": f"Expected {exp.describe()}, but {said}.", "confidence": 0.0})
        return r
    return await verify(page, snapshots, exp, pre, node_id, None, started=acted)


async def _chooser_input(page: PageTarget, sid: str, oid: str, wait: float = 1.5) -> str | None:
    """Press the element (a script click with a user gesture) with file choosers intercepted: the object
    id of the file input whose chooser it opened, or None when it opened none."""
    loop = asyncio.get_running_loop()
    opened: asyncio.Future[int] = loop.create_future()

    def on_open(p: dict, s: str | None) -> None:
        if s == sid and not opened.done() and p.get("backendNodeId"):
            opened.set_result(int(p["backendNodeId"]))

    page.cdp.on("Page.fileChooserOpened", on_open)
    try:
        await page.cdp.send("Page.setInterceptFileChooserDialog", {"enabled": True}, session_id=sid, timeout=5)
        await page.cdp.send("Runtime.callFunctionOn", {"functionDeclaration": "function () { this.click(); }",
                                                       "objectId": oid, "userGesture": True}, session_id=sid,
                            timeout=10)
        backend = await asyncio.wait_for(opened, wait)
        r = await page.cdp.send("DOM.resolveNode", {"backendNodeId": backend, "objectGroup": GROUP},
                                session_id=sid, timeout=5)
        return str(r.get("object", {}).get("objectId") or "") or None
    except (TimeoutError, VigilError):
        return None
    finally:
        page.cdp.off("Page.fileChooserOpened", on_open)
        with contextlib.suppress(VigilError):
            await page.cdp.send("Page.setInterceptFileChooserDialog", {"enabled": False}, session_id=sid, timeout=5)


async def _files(page: PageTarget, sid: str, oid: str) -> tuple[list[str], bool, bool, str]:
    r = await page.cdp.send("Runtime.callFunctionOn", {"functionDeclaration": _FILES, "objectId": oid,
                                                       "returnByValue": True}, session_id=sid, timeout=10)
    v = r.get("result", {}).get("value") or [[], False, False, ""]
    return list(v[0]), bool(v[1]), bool(v[2]), str(v[3])
