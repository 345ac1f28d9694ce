"""From a snapshot node ID to the live element: its remote object and CDP backend node id."""

from __future__ import annotations

import json

from engine.browser.target import PageTarget
from engine.errors import ErrorCode, UnknownNodeError, VigilError


class NodeRef:
    """Where a node lives: its frame, the CDP session that reaches the frame, and the node ID the
    page-side registry resolves to the live element (and from there to a backend node id)."""

    __slots__ = ("node_id", "frame_id", "session_id")

    def __init__(self, node_id: str, frame_id: str, session_id: str):
        self.node_id, self.frame_id, self.session_id = node_id, frame_id, session_id

    def __repr__(self) -> str:
        return f"NodeRef({self.node_id!r}, frame={self.frame_id!r})"


async def element_object(page: PageTarget, ref: NodeRef, group: str = "vigil-action") -> tuple[str, str]:
    """(session id, remote object id) of the live element behind a node ID.

    Raises UnknownNodeError with code STALE when the element is gone from the page."""
    sid, ctx = await page.context_for(ref.frame_id)
    expr = (f"(()=>{{const s=window[{json.dumps(page.key)}];const r=s&&s.byId.get({json.dumps(ref.node_id)});"
            "const e=r&&r.deref();return e&&e.isConnected?e:null})()")
    r = await page.cdp.send("Runtime.evaluate", {"expression": expr, "contextId": ctx, "objectGroup": group},
                           session_id=sid)
    if "exceptionDetails" in r:
        raise UnknownNodeError(f"Could not look up element {ref.node_id}: the page's document changed. "
                               "Take a new snapshot.", code=ErrorCode.STALE)
    oid = r.get("result", {}).get("objectId")
    if not oid:
        raise UnknownNodeError(f"Element {ref.node_id} is no longer in the page (it was removed or re-rendered). "
                               "Take a new snapshot.", code=ErrorCode.STALE)
    return sid, oid


async def backend_node_id(page: PageTarget, ref: NodeRef) -> int:
    sid, oid = await element_object(page, ref)
    try:
        d = await page.cdp.send("DOM.describeNode", {"objectId": oid}, session_id=sid)
        return int(d["node"]["backendNodeId"])
    finally:
        try:
            await page.cdp.send("Runtime.releaseObject", {"objectId": oid}, session_id=sid)
        except VigilError:
            pass
