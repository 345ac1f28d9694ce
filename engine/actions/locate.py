"""From a node ID to a point on the screen: the live element, scrolled into view, checked for
actionability, hit-tested through shadow roots and up every frame boundary to top-level CSS px."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.browser.target import PageTarget
from engine.errors import CDPError, ErrorCode, UnknownNodeError, VigilError
from engine.snapshot.dom_snapshot import DomSnapshot
from engine.snapshot.resolve import NodeRef, element_object
from engine.snapshot.vnode import VirtualNode

_JS = Path(__file__).resolve().parent / "js"
PROBE = (_JS / "probe.js").read_text()
OWNER = (_JS / "owner.js").read_text()
GROUP = "vigil-action"


class ActionFailure(VigilError):
    """An action could not be carried out; `code` is the ActionResult error code."""


@dataclass
class Target:
    node: VirtualNode
    session_id: str
    object_id: str
    facts: dict = field(default_factory=dict)
    point: tuple[float, float] | None = None  # top-level CSS px
    cover: dict | None = None
    context_id: int | None = None  # the execution context the object lives in (its frame's document)


async def call_on(page: PageTarget, sid: str, oid: str, fn: str, *args: Any, timeout: float = 10) -> Any:
    """Run `fn` on the element; a script that raises a dialog (a select's onchange → confirm) waits while
    the dialog is being decided, as input does (`DialogWatcher.send_through`)."""
    r = await page.dialogs.send_through("Runtime.callFunctionOn", {
        "functionDeclaration": fn, "objectId": oid, "arguments": [{"value": a} for a in args],
        "returnByValue": True, "awaitPromise": True}, session_id=sid, timeout=timeout)
    if "exceptionDetails" in r:
        d = r["exceptionDetails"]
        msg = (d.get("exception") or {}).get("description") or d.get("text") or "script error"
        raise ActionFailure(f"The page refused the action script: {msg.splitlines()[0]}", code=ErrorCode.NOT_ACTIONABLE)
    return r.get("result", {}).get("value")


async def release(page: PageTarget, sid: str) -> None:
    try:
        await page.cdp.send("Runtime.releaseObjectGroup", {"objectGroup": GROUP}, session_id=sid, timeout=5)
    except VigilError:
        pass


async def resolve(page: PageTarget, snap: DomSnapshot, node_id: str) -> Target:
    """The live element behind `node_id` in `snap`; UnknownNodeError (NOT_FOUND / STALE) otherwise."""
    node = snap.get(node_id)
    ref = snap.ref(node_id)
    sid, oid = await element_object(page, ref, group=GROUP)
    ft = page.frames.get(ref.frame_id)  # (the context element_object resolved it in, unless it changed since)
    return Target(node, sid, oid, context_id=ft.context_id if ft is not None and ft.session_id == sid else None)


# The input guard (snapshot/js/input_guard.js) is called only from these strict-mode wrappers, so the
# guard's secret never sits in a function the page can inspect while it runs (a sloppy function's
# `arguments` can be read by any page function it calls).
# The probe, then (a point found, `clicks` > 0) arm the guard for the press sequence at that point.
_ARMED_PROBE = ("function(KEY, mode, secret, clicks, opens) { 'use strict';"
                " const f = (" + PROBE + ").call(this, KEY, mode);"
                " const S = window[KEY], p = f && (f.point || f.center);"
                " if (p && S && S.guard) f.armed = S.guard(secret, 'arm', this, p[0], p[1], clicks, opens);"
                " return f; }")
POPUP_ROLES = ("combobox", "listbox")
_GUARD = ("function(KEY, secret, op, a, b) { 'use strict'; const S = window[KEY];"
          " return S && S.guard ? S.guard(secret, op, a, b) : null; }")
# The key watch on the element itself ('keys' arms it, 'keysread' reads and ends it).
_KEYS_GUARD = ("function(KEY, secret, op) { 'use strict'; const S = window[KEY];"
               " return S && S.guard ? S.guard(secret, op, this) : null; }")
# The state probe, with the guard's verdict on the press sequence it watched (read once; it ends the watch).
_READ_PROBE = ("function(KEY, mode, secret) { 'use strict'; const f = (" + PROBE + ").call(this, KEY, mode);"
               " const S = window[KEY]; if (f && S && S.guard) f.guard = S.guard(secret, 'read'); return f; }")


def opens_list(node: VirtualNode) -> bool:
    """A select-like element: it opens a list on the press, so a release over one of its items is expected."""
    return node.role in POPUP_ROLES or "expanded" in (node.states or {})


async def probe(page: PageTarget, t: Target, mode: str, *, arm: int = 0, opens: bool = False,
                read_guard: bool = False) -> dict:
    """The element's facts (probe.js). `arm` (clicks): also watch the press sequence about to be sent at
    the point found (`facts["armed"]`; `opens`: it opens a list, see `opens_list`); `read_guard`: also the
    verdict of the watch (`facts["guard"]`)."""
    secret = page.scripts.guard_secret
    if arm:
        facts = await call_on(page, t.session_id, t.object_id, _ARMED_PROBE, page.key, mode, secret, arm, opens)
    elif read_guard:
        facts = await call_on(page, t.session_id, t.object_id, _READ_PROBE, page.key, mode, secret)
    else:
        facts = await call_on(page, t.session_id, t.object_id, PROBE, page.key, mode)
    if not facts or not facts.get("connected"):
        if read_guard and facts and isinstance(facts.get("guard"), dict):
            return dict(facts)  # gone, but what its click reached is known: the caller decides
        raise UnknownNodeError(f"Element {t.node.node_id} left the page while Vigil was acting on it.",
                               code=ErrorCode.STALE)
    t.facts = facts
    return facts


async def scroll_into_view(page: PageTarget, t: Target) -> None:
    """Scroll the element (and every enclosing scroller and frame) until it is in view."""
    try:
        await page.cdp.send("DOM.scrollIntoViewIfNeeded", {"objectId": t.object_id}, session_id=t.session_id,
                            timeout=10)
    except CDPError as exc:
        if exc.context_gone:
            raise UnknownNodeError(f"Element {t.node.node_id} went away (the page navigated).",
                                   code=ErrorCode.STALE) from None
        # not rendered: the probe reports it as such


async def to_top_level(page: PageTarget, snap: DomSnapshot, t: Target,
                       local: tuple[float, float]) -> tuple[tuple[float, float], dict | None, bool]:
    """Translate a point in the element's frame to top-level CSS px, hit-testing each frame owner
    on the way up; returns (point, cover, in_view): cover names what hides the frame, if anything,
    and in_view is False while the point lies outside some parent's window."""
    frames = {f.frame_id: f for f in snap.frames}
    x, y = local
    fid = t.node.frame_id
    cover = None
    in_view = True
    while fid != page.main_frame_id:
        info = frames.get(fid)
        if info is None or not info.owner_node_id or not info.parent_frame_id:
            raise ActionFailure(f"Cannot place frame {fid} on the page (its <iframe> is not in the snapshot). "
                                "Take a new snapshot.", code=ErrorCode.STALE)
        parent = info.parent_frame_id
        sid, oid = await element_object(page, NodeRef(info.owner_node_id, parent, ""), group=GROUP)
        try:
            r = await call_on(page, sid, oid, OWNER, page.key, x, y)
        finally:
            # this object only: a frame in the same process shares its session (and the object group) with
            # the target, whose object the action still needs (the input guard, the facts after the action)
            with contextlib.suppress(VigilError):
                await page.cdp.send("Runtime.releaseObject", {"objectId": oid}, session_id=sid, timeout=5)
        if cover is None and not r.get("ok", True):
            cover = r.get("cover")
        in_view = in_view and r.get("inView", True)
        x, y = x + r["ox"], y + r["oy"]
        fid = parent
    return (x, y), cover, in_view


def cover_message(node: VirtualNode, cover: dict, snap: DomSnapshot) -> str:
    """'Element 45 (button "Create account") is covered by div#cookie-banner "…" — close it first (its
    buttons: 12 "Accept")'."""
    what = f'{node.role or node.tag} "{node.name}"' if node.name else (node.role or node.tag)
    box = cover.get("boxDesc") or cover.get("desc") or "another element"
    inner = cover.get("desc")
    by = box if not inner or inner == box else f"{box} (at its {inner.split(' ')[0]})"
    if cover.get("boxId"):
        by += f" [ID {cover['boxId']}]"
    msg = f"Element {node.node_id} ({what}) is covered by {by}, so a click would land on the cover."
    btns = cover.get("buttons") or []
    if btns:
        listed = ", ".join(f'{b[0]} "{b[1]}"' for b in btns)
        msg += f" Dismiss it first (its buttons: {listed}), or scroll, or pass force=True."
    else:
        msg += " Dismiss or scroll it away first, or pass force=True to click anyway."
    return msg


def describe(node: VirtualNode) -> str:
    what = node.role or node.tag
    return f'{what} "{node.name}" [{node.node_id}]' if node.name else f"{what} [{node.node_id}]"


async def guard(page: PageTarget, t: Target, op: str, *args: float) -> Any:
    """One call to the input guard in the element's document ('moved', 'disarm')."""
    return await call_on(page, t.session_id, t.object_id, _GUARD, page.key, page.scripts.guard_secret, op, *args)


async def key_guard(page: PageTarget, t: Target, op: str) -> Any:
    """Arm ('keys') or read ('keysread') the watch on the keys sent to the element (input_guard.js)."""
    return await call_on(page, t.session_id, t.object_id, _KEYS_GUARD, page.key, page.scripts.guard_secret, op)


def keys_misdirected(node: VirtualNode, verdict: dict) -> str:
    """'The keys went to button "Delete" (#del), not to textbox "Search" [4]: …'."""
    got = verdict.get("got") or {}
    what = (got.get("role") or "an element") + (f' "{got["name"]}"' if got.get("name") else "")
    if got.get("ref"):
        what += f" ({got['ref']})"
    stopped = int(verdict.get("blocked") or 0)
    return (f"The keys went to {what}, not to {describe(node)}: the page moved the focus while Vigil typed. "
            f"{stopped} key event{'s' if stopped != 1 else ''} stopped there; nothing reached {what} after that. "
            "Take a new snapshot and check the page before trying again.")


def misdirected_message(node: VirtualNode, verdict: dict) -> str:
    """'The click went to button "Delete everything" (#del), not to button "Continue" [4]: …'."""
    meant = describe(node)
    got = verdict.get("got") or {}
    what = got.get("role") or "an element"
    if got.get("name"):
        what += f' "{got["name"]}"'
    if got.get("ref"):
        what += f" ({got['ref']})"
    if got.get("id"):
        what += f" [{got['id']}]"
    phase = verdict.get("phase")
    if phase == "move":
        return (f"The pointer landed on {what}, not on {meant}: the page changed what was under the pointer when "
                "it arrived. Nothing was clicked; take a new snapshot.")
    if phase == "unreached":
        return (f"The click did not reach {meant}: nothing in its frame received it (the page put something from "
                "another frame over it). Take a new snapshot and check the page before trying again.")
    if phase == "released":
        return (f"The click on {meant} was released in another frame: the page put a frame under the pointer when "
                "it was pressed. Take a new snapshot and check the page before trying again.")
    if verdict.get("refused"):
        return (f"The page tampered with Vigil's check of where the click goes, so {meant} was not clicked. "
                "Do not trust this page's controls; take a new snapshot.")
    return (f"The click went to {what}, not to {meant}: the page changed what was under the pointer. Nothing more "
            "was done; take a new snapshot.")
