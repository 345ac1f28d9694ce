"""DomSnapshot: an immutable view of one page at one moment, and its serializations."""

from __future__ import annotations

import time
import urllib.parse
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from engine.browser.target import PageTarget
from engine.errors import SnapshotError, UnknownNodeError
from engine.models import FORMATS, FrameInfo, PageContext, Serialization, SnapshotStats, Viewport
from engine.names import norm
from engine.snapshot.incremental import WalkInfo
from engine.snapshot.resolve import NodeRef, backend_node_id
from engine.snapshot.vnode import VirtualNode


def _http_status(page: PageTarget, url: str) -> int | None:
    """The HTTP status the page's document was answered with, as the tab's network monitor saw it."""
    network = getattr(page, "network", None)
    return network.status_of(url) if network is not None and hasattr(network, "status_of") else None


class DomSnapshot:
    """The complete VirtualNode tree of a page plus lookups; never changes after creation. A newer
    incremental snapshot of the same page shares the nodes whose element did not change (their facts,
    children and depth stay as they are); the one link it may move is such a node's `parent`, to the
    newest node of the same parent element (same ID)."""

    __slots__ = ("_root", "_by_id", "_nodes", "context", "frames", "stats", "taken_at", "generation",
                 "_page", "_cache", "_sessions", "_frozen", "walk")
    # set once, in create() (or engine.snapshot.stored.load_snapshot), through object.__setattr__
    _root: VirtualNode | None
    _by_id: Mapping[str, VirtualNode]
    _nodes: tuple[VirtualNode, ...]
    context: PageContext
    frames: tuple[FrameInfo, ...]
    stats: SnapshotStats
    taken_at: float
    generation: int
    _page: PageTarget | None
    _cache: dict[tuple[str, tuple[tuple[str, Any], ...]], Serialization]
    _sessions: Mapping[str, str]
    _frozen: bool
    walk: WalkInfo  # full or incremental, why, and how many rows were walked again

    @classmethod
    def create(cls, *, page: PageTarget, main: dict, root: VirtualNode | None, by_id: dict[str, VirtualNode],
               counts: dict, frames: list[FrameInfo], timings: dict, generation: int, truncated: bool,
               walk: WalkInfo | None = None, nodes: tuple[VirtualNode, ...] | None = None) -> DomSnapshot:
        """`nodes`: every node in document order when the caller has them (else the tree is walked);
        `counts` per tier and of shadow nodes, and of interactive and visible interactive ones if known."""
        self = object.__new__(cls)
        set_ = object.__setattr__
        url = main.get("url", "")
        host = urllib.parse.urlsplit(url).hostname or ""
        ctx = PageContext(url=url, title=main.get("title", ""), domain=host,
                          viewport=Viewport(width=int(main.get("vw", 0)), height=int(main.get("vh", 0))),
                          scroll_x=main.get("sx", 0), scroll_y=main.get("sy", 0),
                          page_width=main.get("sw", 0), page_height=main.get("sh", 0),
                          device_pixel_ratio=main.get("dpr", 1) or 1, http_status=_http_status(page, url))
        if nodes is None:
            nodes = tuple(root.iter()) if root is not None else ()
        if "interactive" in counts and "visible_interactive" in counts:
            n_inter, n_vis = counts["interactive"], counts["visible_interactive"]
        else:
            interactive = [n for n in nodes if n.interactive]
            n_inter, n_vis = len(interactive), sum(1 for n in interactive if n.visible)
        stats = SnapshotStats(
            nodes=len(nodes),
            tiers={"semantic": counts["semantic"], "non-semantic": counts["non-semantic"],
                   "structural": counts["structural"]},
            interactive=n_inter,
            visible_interactive=n_vis,
            frames=1 + len(frames), shadow_nodes=counts["shadow"], truncated=truncated,
            timings_ms={k: round(v, 2) for k, v in timings.items()},
        )
        sessions = {fid: ft.session_id for fid, ft in page.frames.items()}
        set_(self, "_root", root)
        set_(self, "_by_id", MappingProxyType(by_id))
        set_(self, "_nodes", nodes)
        set_(self, "context", ctx)
        set_(self, "frames", tuple(frames))
        set_(self, "stats", stats)
        set_(self, "taken_at", time.time())
        set_(self, "generation", generation)
        set_(self, "_page", page)
        set_(self, "_cache", {})
        set_(self, "_sessions", MappingProxyType(sessions))
        set_(self, "walk", walk or WalkInfo())
        set_(self, "_frozen", True)
        return self

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError("DomSnapshot is immutable; take a new snapshot instead")

    # -- lookups ---------------------------------------------------------------------------
    @property
    def root(self) -> VirtualNode | None:
        return self._root

    @property
    def url(self) -> str:
        return self.context.url

    @property
    def title(self) -> str:
        return self.context.title

    def nodes(self) -> tuple[VirtualNode, ...]:
        """Every node, in document order (frames and shadow content in place)."""
        return self._nodes

    def interactive(self, *, visible_only: bool = False) -> list[VirtualNode]:
        return [n for n in self._nodes if n.interactive and (n.visible or not visible_only)]

    def __contains__(self, node_id: str) -> bool:
        return node_id in self._by_id

    def __len__(self) -> int:
        return len(self._nodes)

    def get(self, node_id: str) -> VirtualNode:
        """The node with this ID, or UnknownNodeError saying so."""
        n = self._by_id.get(str(node_id))
        if n is None:
            raise UnknownNodeError(f"No node with ID {node_id!r} in this snapshot of {self.url}. Use an ID from the "
                                   "latest snapshot.")
        return n

    @property
    def node_map(self) -> Mapping[str, VirtualNode]:
        return self._by_id

    def ref(self, node_id: str) -> NodeRef:
        """ID → (frame, session): the page-side registry maps the ID to the live element."""
        n = self.get(node_id)
        return NodeRef(n.node_id, n.frame_id, self._sessions.get(n.frame_id, ""))

    async def backend_node_id(self, node_id: str) -> int:
        """The CDP backendNodeId of a node (resolved on demand; stable for the element's life)."""
        if self._page is None:
            raise SnapshotError("This snapshot was loaded from the session store: it has no live page to resolve "
                                f"node {node_id} in.")
        return await backend_node_id(self._page, self.ref(node_id))

    def find(self, role: str | None = None, name: str | None = None, *, exact: bool = False,
             interactive: bool | None = None, visible: bool | None = None, tier: str | None = None,
             text: str | None = None) -> list[VirtualNode]:
        """Nodes matching every given filter. Names match case-insensitively, exact matches first
        (substring matches follow unless exact=True)."""
        # names in a snapshot are already clean (the walker normalises them); the query may not be
        want_name = norm(name) if name is not None else None
        want_text = text.casefold() if text is not None else None
        hits: list[tuple[int, int, VirtualNode]] = []
        for i, n in enumerate(self._nodes):
            if role is not None and n.role != role:
                continue
            if interactive is not None and n.interactive != interactive:
                continue
            if visible is not None and n.visible != visible:
                continue
            if tier is not None and n.tier != tier:
                continue
            if want_text is not None and want_text not in (n.text or "").casefold():
                continue
            rank = 0
            if want_name is not None:
                nm = (n.name or "").casefold()
                if nm == want_name:
                    rank = 0
                elif not exact and want_name and want_name in nm:
                    rank = 1
                else:
                    continue
            hits.append((rank, i, n))
        hits.sort(key=lambda t: (t[0], t[1]))
        return [n for _, _, n in hits]

    def new_ids_since(self, previous: DomSnapshot | None) -> set[str]:
        """IDs present here and not in `previous` (ID drift made visible)."""
        if previous is None:
            return set()
        return set(self._by_id) - set(previous._by_id)

    # -- serializations ----------------------------------------------------------------------
    def serialize(self, fmt: str = "semantic", **options: Any) -> Serialization:
        """`tree`, `semantic`, `skeleton` or `full` — each with a token estimate. Cached per options."""
        if fmt not in FORMATS:
            raise ValueError(f"Unknown format {fmt!r}; choose one of {', '.join(FORMATS)}.")
        key = (fmt, tuple(sorted(options.items())))
        if key in self._cache:
            return self._cache[key]
        from engine.snapshot.serialize import render
        t = time.perf_counter()
        out = render(self, fmt, **options)
        self._cache[key] = out
        label = fmt if not options else f"{fmt}:{','.join(f'{k}={v}' for k, v in sorted(options.items()))}"
        self.stats.tokens[label] = out.tokens
        self.stats.timings_ms[f"serialize_{fmt}"] = round((time.perf_counter() - t) * 1000, 2)
        return out

    def to_json_dict(self, fmt: str = "semantic", **options: Any) -> dict:
        """What `vigil snapshot --json` prints: payload, stats and a flat list of every node."""
        s = self.serialize(fmt, **options)
        payload: Any = s.data if s.data is not None else s.text
        return {"format": fmt, "context": self.context.model_dump(), "payload": payload,
                "tokens": s.tokens, "stats": self.stats.model_dump(),
                "frames": [f.model_dump() for f in self.frames],
                "nodes": [n.to_dict() for n in self._nodes]}

    def __repr__(self) -> str:
        return f"<DomSnapshot {self.url} nodes={len(self._nodes)} interactive={self.stats.interactive}>"
