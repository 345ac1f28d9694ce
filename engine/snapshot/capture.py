"""Pass 1: run the in-page walker in every frame and stitch one complete VirtualNode tree.

Why an in-page walk and not the accessibility tree: on a 5k-element page
`Accessibility.getFullAXTree` alone takes ~0.9 s and `DOMSnapshot.captureSnapshot` ~0.35 s
over a direct socket, while one walk that reads role, name, box, style and hit tests takes
~0.1 s (measured with `vigil bench snapshot`). Roles and names are computed in the page from
ARIA attributes and the HTML-AAM implicit roles, following accname precedence.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import json
import time
import weakref
from dataclasses import dataclass
from functools import lru_cache

from engine.browser.target import PageScripts, PageTarget
from engine.errors import CDPError, CDPTimeoutError, ErrorCode, NoContextError, SnapshotError, VigilError
from engine.models import FrameInfo
from engine.snapshot.dom_snapshot import DomSnapshot
from engine.snapshot.incremental import Built, RowMemo, build_reusing, summarize
from engine.snapshot.vnode import VirtualNode, node_from_row

GROUP = "vigil-snapshot"


@contextlib.contextmanager
def _no_gc():
    """Pause the cyclic garbage collector while allocating many short, acyclic objects."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@lru_cache(maxsize=8)
def _call_source(scripts: PageScripts) -> str:
    # Install lazily (documents that existed before Vigil attached) and keep the compiled walker
    # in the page-side state, so later snapshots send a one-line call instead of 30 KB of source.
    return ("function(KEY, opts) {\n" + scripts.install_source + "\nconst S = window[KEY];\n"
            "if (!S.walk) Object.defineProperty(S, 'walk', {value: (" + scripts.walker_source
            + "), writable: false});\n"
            "return S.walk(KEY, opts);\n}")


@dataclass(frozen=True)
class Capture:
    """What one capture learnt: the snapshot, and each frame's document version as the walk saw it
    (`walk_key`), which tells a cache later whether the page is still the one in the snapshot."""

    snapshot: DomSnapshot
    walk_keys: dict[str, tuple]


FAST_CALL = "function(KEY, opts) { const S = window[KEY]; return S && S.walk ? S.walk(KEY, opts) : null; }"


async def _walk(page: PageTarget, frame_id: str, opts: dict, timeout: float, memo: RowMemo | None = None,
                full: bool = True) -> dict:
    data = await _walk_raw(page, frame_id, memo.opts_for(frame_id, opts, full=full) if memo else opts, timeout)
    if memo is not None:
        try:
            memo.take(frame_id, data)
        except ValueError:  # the rows held here are not the ones the page diffed against: ask for all
            memo.forget(frame_id)
            data = await _walk_raw(page, frame_id, memo.opts_for(frame_id, opts, full=full), timeout)
            memo.take(frame_id, data)
    return data


async def _walk_raw(page: PageTarget, frame_id: str, opts: dict, timeout: float) -> dict:
    sid, ctx = await page.context_for(frame_id)
    params = {"executionContextId": ctx, "arguments": [{"value": page.key}, {"value": opts}],
              "returnByValue": True, "awaitPromise": False}
    r = await page.cdp.send("Runtime.callFunctionOn", {"functionDeclaration": FAST_CALL, **params},
                           session_id=sid, timeout=timeout)
    if "exceptionDetails" not in r and r.get("result", {}).get("value") is None:
        r = await page.cdp.send("Runtime.callFunctionOn", {"functionDeclaration": _call_source(page.scripts), **params},
                               session_id=sid, timeout=timeout)
    if "exceptionDetails" in r:
        d = r["exceptionDetails"]
        msg = (d.get("exception") or {}).get("description") or d.get("text") or "unknown error"
        if "context" in msg.lower() and "destroyed" in msg.lower():
            raise CDPError("Runtime.callFunctionOn", "Execution context was destroyed")
        raise SnapshotError(f"The page's snapshot script failed in frame {frame_id}: {msg.splitlines()[0]}")
    raw = r["result"].get("value")
    if not isinstance(raw, str):
        raise SnapshotError("The page returned no snapshot data (the document may be replaced by a navigation).")
    with _no_gc():  # hundreds of thousands of small lists: the cyclic GC only slows this down
        data = json.loads(raw)
    data["_bytes"] = len(raw)
    return data


# Pages holding objects of GROUP (made only by _element_objects and what follows it): a capture that
# made none does not spend a round trip per session on releasing them.
_GROUPED: weakref.WeakSet[PageTarget] = weakref.WeakSet()


async def _element_objects(page: PageTarget, frame_id: str, expr: str) -> list[str]:
    """Object ids of the elements in a page-side array (frames, shadow-host suspects)."""
    sid, ctx = await page.context_for(frame_id)
    _GROUPED.add(page)
    r = await page.cdp.send("Runtime.evaluate", {"expression": expr, "contextId": ctx, "objectGroup": GROUP},
                           session_id=sid)
    oid = r.get("result", {}).get("objectId")
    if not oid:
        return []
    props = await page.cdp.send("Runtime.getProperties", {"objectId": oid, "ownProperties": True}, session_id=sid)
    out = []
    for p in props.get("result", []):
        if p.get("name", "").isdigit() and (p.get("value") or {}).get("objectId"):
            out.append((int(p["name"]), p["value"]["objectId"]))
    return [o for _, o in sorted(out)]


_FRAME_OCC = """function(KEY, idx, pts) {
  const S = window[KEY], f = S && S.lastFrames[idx];
  if (!f) return [];
  const squash = (t) => (t || '').replace(/\\s+/g, ' ').trim();
  return pts.map(([x, y]) => {
    let h = document.elementFromPoint(x, y);
    while (h && (h.shadowRoot || S.closed.get(h))) {
      const d = (h.shadowRoot || S.closed.get(h)).elementFromPoint(x, y);
      if (!d || d === h) break;
      h = d;
    }
    if (!h || h === f) return null;
    let id = null;
    for (let n = h; n; n = n.parentNode || n.host) if (n.nodeType === 1 && S.ids.has(n)) { id = S.ids.get(n); break; }
    const desc = h.localName + (h.id ? '#' + h.id : '') + ' "' + squash(h.textContent).slice(0, 80) + '"';
    return [id, desc.slice(0, 120)];
  });
}"""


async def _occlusion_across_frames(page: PageTarget, parent: str, index: int, child: dict, offset: tuple[float, float],
                                   view: tuple[float, float]) -> None:
    """Mark a child frame's controls occluded when something in the parent document (a cookie
    banner, a modal) covers that part of the <iframe> — the frame's own walk cannot see it."""
    rows = child.get("rows") or []
    idx = [i for i, r in enumerate(rows)
           if r[7] & 8 and r[7] & 1 and not r[7] & 2 and r[13] > 0 and r[11] > 0 and r[12] > 0]
    if not idx:
        return
    todo = [rows[i] for i in idx]
    vw, vh = view
    pts = []
    for r in todo:  # the centre of the part inside the top-level viewport, in the parent's coordinates
        x1, y1 = max(r[9], 0), max(r[10], 0)
        x2, y2 = min(r[9] + r[11], vw), min(r[10] + r[12], vh)
        pts.append([(x1 + max(x1, x2)) / 2 - offset[0], (y1 + max(y1, y2)) / 2 - offset[1]])
    try:
        sid, ctx = await page.context_for(parent, timeout=1.0)
        res = await page.cdp.send("Runtime.callFunctionOn", {
            "functionDeclaration": _FRAME_OCC, "executionContextId": ctx, "returnByValue": True,
            "arguments": [{"value": page.key}, {"value": index}, {"value": pts}]}, session_id=sid, timeout=5)
    except VigilError:
        return  # the frame is still walked; only this refinement is lost
    mod = child.setdefault("_occ_mod", set())  # rows whose node is not made from the row the page sent
    for i, row, cover in zip(idx, todo, res.get("result", {}).get("value") or [], strict=False):
        if cover:  # a new row: the rows as the page sent them are kept for its next diff
            ex = dict(row[14]) if row[14] else {}
            ex["ob"], ex["obd"] = cover
            rows[i] = [*row[:7], row[7] | 2, *row[8:14], ex]
            mod.add(i)


async def _frame_ids_of_owners(page: PageTarget, frame_id: str) -> list[str | None]:
    sid, _ = await page.context_for(frame_id)
    objs = await _element_objects(page, frame_id, f"window[{json.dumps(page.key)}].lastFrames")

    async def one(oid: str) -> str | None:
        try:
            d = await page.cdp.send("DOM.describeNode", {"objectId": oid}, session_id=sid)
            return d["node"].get("frameId")
        except VigilError:
            return None

    return list(await asyncio.gather(*(one(o) for o in objs)))


async def _adopt_closed_roots(page: PageTarget, frame_id: str) -> int:
    """Find closed shadow roots the page-side hook could not see (declarative, or attached before
    Vigil) through CDP, and hand them to the page-side state so the next walk enters them."""
    sid, ctx = await page.context_for(frame_id)
    objs = await _element_objects(page, frame_id, f"window[{json.dumps(page.key)}].suspects")
    found = 0
    for oid in objs:
        try:
            d = await page.cdp.send("DOM.describeNode", {"objectId": oid, "depth": 0, "pierce": True}, session_id=sid)
            roots = d["node"].get("shadowRoots") or []
            if roots:
                rr = await page.cdp.send("DOM.resolveNode", {"backendNodeId": roots[0]["backendNodeId"],
                                                            "executionContextId": ctx, "objectGroup": GROUP},
                                        session_id=sid)
                await page.cdp.send("Runtime.callFunctionOn", {
                    "functionDeclaration": "function(root, KEY){ const S = window[KEY]; S.closed.set(this, root); "
                                          "if (S.hook) S.hook(this); }",
                    "objectId": oid, "arguments": [{"objectId": rr["object"]["objectId"]}, {"value": page.key}]},
                    session_id=sid)
                found += 1
            else:
                await page.cdp.send("Runtime.callFunctionOn", {
                    "functionDeclaration": "function(KEY){ window[KEY].noRoot.add(this); }",
                    "objectId": oid, "arguments": [{"value": page.key}]}, session_id=sid)
        except VigilError:
            continue
    return found


async def _release(page: PageTarget) -> None:
    if page not in _GROUPED:
        return
    _GROUPED.discard(page)
    for sid in list(page.sessions):
        try:
            await page.cdp.send("Runtime.releaseObjectGroup", {"objectGroup": GROUP}, session_id=sid, timeout=5)
        except VigilError:
            pass


async def _walk_frame(page: PageTarget, frame_id: str, opts: dict, timeout: float, timings: dict,
                      memo: RowMemo | None = None, full: bool = True) -> dict:
    t = time.perf_counter()
    if memo is not None:  # the flags of the style sheets this document cannot read, as the browser read them
        xcss = await memo.css.opts(page, frame_id)
        if xcss:
            opts = {**opts, "xcss": xcss}
    data = await _walk(page, frame_id, opts, timeout, memo, full)
    xs = (data.get("inc") or {}).get("xs")
    if xs and memo is not None:
        memo.css.asked(page, frame_id, xs)
    if data.get("suspects"):
        if await _adopt_closed_roots(page, frame_id):
            data = await _walk(page, frame_id, opts, timeout, memo, full)
    timings["walk"] = timings.get("walk", 0.0) + (time.perf_counter() - t) * 1000
    for k, v in (data.get("t") or {}).items():
        if k in ("walk", "ids", "occlusion", "info", "proven"):
            timings["page_" + k] = timings.get("page_" + k, 0.0) + v
    return data


async def capture(page: PageTarget, *, max_nodes: int | None = None, timeout: float = 30.0,
                  memo: RowMemo | None = None, full: bool = True) -> Capture:
    """Take a complete snapshot of the page: every frame, every shadow root, one tree. With a `memo`
    (the rows of the last capture of this page) and `full=False`, each frame's walker may re-walk only
    what changed since; the tree is the same either way (`snapshot.walk` says which way it went)."""
    last_exc: Exception | None = None
    for attempt in range(3):
        try:
            return await asyncio.wait_for(_capture_once(page, max_nodes, timeout, memo, full), timeout + 5)
        except CDPTimeoutError:
            raise SnapshotError(f"The page did not answer the snapshot within {timeout:.0f} s (a script may be "
                                "stuck in a loop). Reload the page or raise the timeout.",
                                code=ErrorCode.SNAPSHOT_TIMEOUT) from None
        except CDPError as exc:
            if exc.context_gone:
                last_exc = exc  # a navigation replaced the document mid-snapshot: try the new one
                await asyncio.sleep(0.15 * (attempt + 1))
                continue
            raise SnapshotError(f"Snapshot failed: {exc}") from None
        except TimeoutError:
            raise SnapshotError(f"The snapshot did not finish within {timeout:.0f} s. The page may be hung; "
                                "reload it or raise the timeout.", code=ErrorCode.SNAPSHOT_TIMEOUT) from None
        except NoContextError as exc:
            if attempt == 2:
                raise
            last_exc = exc  # the document is being replaced: wait for the new one
            await asyncio.sleep(0.2 * (attempt + 1))
            continue
        finally:
            await _release(page)
    raise SnapshotError(f"The page kept navigating while Vigil took a snapshot ({last_exc}). Wait for it to settle "
                        "and try again.", code=ErrorCode.NAVIGATED)


async def _capture_once(page: PageTarget, max_nodes: int | None, timeout: float, memo: RowMemo | None = None,
                        full: bool = True) -> Capture:
    t0 = time.perf_counter()
    timings: dict[str, float] = {}
    gen = page.generation
    main = page.main_frame_id
    opts = {"prefix": "", "maxNodes": max_nodes or 200000}
    docs: list[tuple[str, dict, str | None, str | None]] = []  # (frame_id, data, parent frame, owner row id)
    main_data = await _walk_frame(page, main, opts, timeout, timings, memo, full)
    if main_data.get("empty"):
        main_data["rows"] = []
        main_data["frames"] = []
    docs.append((main, main_data, None, None))
    frame_infos: list[FrameInfo] = []
    # Child frames, breadth first: each level walks in parallel (out-of-process frames run in
    # other renderer processes), with its offset and clip from the owner's box in the parent.
    level = [(main, main_data)]
    depth = 0
    offsets: dict[str, tuple[float, float]] = {main: (0.0, 0.0)}  # each document's offset in top coordinates
    owner_index: dict[tuple[str, str], int] = {}  # (parent frame, owner node id) → index in that walk's frames
    occ_jobs: list[tuple[str, int, dict, tuple[float, float]]] = []
    while level and depth < 8:
        nxt = []
        tasks = []
        for fid, data in level:
            if not data.get("frames"):
                continue
            owners = await _frame_ids_of_owners(page, fid)
            for k, (entry, child_id) in enumerate(zip(data["frames"], owners, strict=False)):
                row_idx, ox, oy, cw, ch, clip, rendered = entry
                owner_index[(fid, data["rows"][row_idx][1])] = k
                if not child_id or child_id not in page.frames:
                    continue
                owner_row = data["rows"][row_idx]
                ordinal = page.frame_ordinal(child_id)
                copts = {"prefix": f"f{ordinal}_", "ox": ox, "oy": oy, "clip": clip, "maxNodes": opts["maxNodes"]}
                tasks.append((child_id, fid, owner_row, copts, ordinal))
        if not tasks:
            break
        results = await asyncio.gather(*(_walk_frame(page, cid, co, timeout, timings, memo, full)
                                         for cid, _, _, co, _ in tasks), return_exceptions=True)
        for (cid, pfid, owner_row, co, ordinal), res in zip(tasks, results, strict=True):
            ft = page.frames.get(cid)
            if isinstance(res, BaseException):
                if isinstance(res, (VigilError,)):
                    # A frame that cannot be read (navigating, blocked) becomes an empty frame node.
                    continue
                raise res
            docs.append((cid, res, pfid, owner_row[1]))
            occ_jobs.append((pfid, owner_index[(pfid, owner_row[1])], res, offsets.get(pfid, (0.0, 0.0))))
            offsets[cid] = (co["ox"], co["oy"])
            frame_infos.append(FrameInfo(frame_id=cid, ordinal=ordinal, url=res.get("url", ""), parent_frame_id=pfid,
                                         owner_node_id=owner_row[1], cross_process=bool(ft and ft.cross_process),
                                         offset=(co["ox"], co["oy"])))
            nxt.append((cid, res))
        level = nxt
        depth += 1
    if occ_jobs:
        view = (main_data.get("vw") or 0, main_data.get("vh") or 0)
        await asyncio.gather(*(_occlusion_across_frames(page, *job, view) for job in occ_jobs))
    # What each document looked like to this walk: lets a cache reuse the snapshot while none of
    # them changed (their mutation counters, scroll, viewport and address are all the same).
    keys = {fid: walk_key(data) for fid, data, _, _ in docs}
    t_walked = time.perf_counter()
    with _no_gc():  # 25k small objects: the cyclic GC would run several times over them for nothing
        built = None
        if memo is not None and not full and memo.last is not None:
            # diffs against the rows of the last tree: new nodes only where rows changed
            built = build_reusing(docs, memo.last)
        if built is None:
            built = _build(docs)
        if memo is not None:
            memo.keep(built)
    t_built = time.perf_counter()
    timings["build"] = (t_built - t_walked) * 1000
    timings["capture"] = (t_built - t0) * 1000
    timings["transfer_bytes"] = float(sum(d.get("_bytes", 0) for _, d, _, _ in docs))
    if memo is not None:
        memo.keep_only({fid for fid, _, _, _ in docs})
    walk = summarize([d["inc"] for _, d, _, _ in docs if d.get("inc")])
    if built.made >= 0:
        walk = dataclasses.replace(walk, nodes_made=built.made)
    nodes = tuple(built.nodes) if len(docs) == 1 else None  # one document: rows are in document order
    snap = DomSnapshot.create(page=page, main=main_data, root=built.root, by_id=built.by_id, counts=built.counts,
                              frames=frame_infos, nodes=nodes,
                              timings=timings, generation=gen, truncated=any(d.get("truncated") for _, d, _, _ in docs),
                              walk=walk)
    return Capture(snap, keys)


def walk_key(data: dict) -> tuple:
    """A document's version as the walker saw it: mutation counter, scroll, viewport, address."""
    return (data.get("ver"), data.get("sx"), data.get("sy"), data.get("vw"), data.get("vh"), data.get("url"))


def _build(docs: list[tuple[str, dict, str | None, str | None]]) -> Built:
    """Every node afresh (a forced walk, several documents, or nothing to reuse)."""
    by_id: dict[str, VirtualNode] = {}
    counts = {"structural": 0, "non-semantic": 0, "semantic": 0, "shadow": 0, "interactive": 0,
              "visible_interactive": 0}
    roots: dict[str, VirtualNode] = {}
    per_doc: dict[str, list[VirtualNode]] = {}
    for frame_id, data, _parent_frame, owner_id in docs:
        rows = data.get("rows") or []
        par = data.get("par")
        if par is None or len(par) != len(rows):
            par = [r[0] for r in rows]
        nodes: list[VirtualNode] = []
        append = nodes.append
        for row, parent in zip(rows, par, strict=True):
            node = node_from_row(row, frame_id)
            flags = node.flags
            counts[node.tier] += 1
            if flags & 4:
                counts["shadow"] += 1
            if flags & 8:
                counts["interactive"] += 1
                if node.visible:
                    counts["visible_interactive"] += 1
            if parent >= 0:
                p = nodes[parent]
                node.parent = p
                node.depth = p.depth + 1
                p.children.append(node)
            append(node)
            by_id[node.node_id] = node
        per_doc[frame_id] = nodes
        if nodes:
            roots[frame_id] = nodes[0]
            if owner_id is not None and owner_id in by_id:
                owner = by_id[owner_id]
                nodes[0].parent = owner
                owner.children.append(nodes[0])
                # depths in the frame are relative to the owner
                base = owner.depth + 1
                if base:
                    for n in nodes:
                        n.depth += base
    main = docs[0][0] if docs else ""
    return Built(main, roots.get(main), per_doc.get(main, []), by_id, counts, -1, per_doc,
                 {fid: set(d.get("_occ_mod") or ()) for fid, d, _, _ in docs},
                 tuple((fid, pf, oid) for fid, _, pf, oid in docs))
