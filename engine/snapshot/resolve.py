"""From a snapshot node ID to the live element: its remote object and CDP backend node id."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from engine.errors import ErrorCode, UnknownNodeError, VigilError

if TYPE_CHECKING:
    from engine.browser.session import Tab
    from engine.snapshot.dom_snapshot import NodeRef


async def element_object(tab: "Tab", ref: "NodeRef", group: str = "vigil-action") -> tuple[str, str]:
    """(session id, remote object id) of the live element behind a node ID.

    Raises UnknownNodeError with code STALE when the element is gone from the page."""
    sid, ctx = await tab.context_for(ref.frame_id)
    expr = (f"(()=>{{const s=window[{json.dumps(tab.key)}];const r=s&&s.byId.get({json.dumps(ref.node_id)});"
            "const e=r&&r.deref();return e&&e.isConnected?e:null})()")
    r = await tab.cdp.send("Runtime.evaluate", {"expression": expr, "contextId": ctx, "objectGroup": group},
                           session_id=sid)
    if "exceptionDetails" in r:
        raise UnknownNodeError(f"Could not look up element {ref.node_id}: the page's document changed. "
                               "Take a new snapshot.", code=ErrorCode.STALE)
    oid = r.get("result", {}).get("objectId")
    if not oid:
        raise UnknownNodeError(f"Element {ref.node_id} is no longer in the page (it was removed or re-rendered). "
                               "Take a new snapshot.", code=ErrorCode.STALE)
    return sid, oid


async def backend_node_id(tab: "Tab", ref: "NodeRef") -> int:
    sid, oid = await element_object(tab, ref)
    try:
        d = await tab.cdp.send("DOM.describeNode", {"objectId": oid}, session_id=sid)
        return int(d["node"]["backendNodeId"])
    finally:
        try:
            await tab.cdp.send("Runtime.releaseObject", {"objectId": oid}, session_id=sid)
        except VigilError:
            pass
