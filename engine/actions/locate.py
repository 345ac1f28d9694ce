"""From a node ID to a point on the screen: the live element, scrolled into view, checked for
actionability, hit-tested through shadow roots and up every frame boundary to top-level CSS px."""

from __future__ import annotations

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
    sid, oid = await element_object(page, snap.ref(node_id), group=GROUP)
    return Target(node, sid, oid)


async def probe(page: PageTarget, t: Target, mode: str) -> dict:
    facts = await call_on(page, t.session_id, t.object_id, PROBE, page.key, mode)
    if not facts or not facts.get("connected"):
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
            await release(page, sid)
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
