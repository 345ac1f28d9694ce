"""SnapshotView: what the serializations read of a snapshot (a `DomSnapshot` is one). Typing the
serializers against it, rather than against DomSnapshot, keeps `engine.snapshot.serialize` below
`dom_snapshot` (which calls it) — no import circle between them."""

from __future__ import annotations

from typing import Any, Protocol

from engine.models import FrameInfo, PageContext, Serialization, SnapshotStats
from engine.snapshot.vnode import VirtualNode


class SnapshotView(Protocol):
    @property
    def root(self) -> VirtualNode | None: ...

    @property
    def context(self) -> PageContext: ...

    @property
    def frames(self) -> tuple[FrameInfo, ...]: ...

    @property
    def stats(self) -> SnapshotStats: ...

    def nodes(self) -> tuple[VirtualNode, ...]: ...

    # the snapshot's own (cached) serialization: the reading takes its controls from `semantic`,
    # and a budget asks again for less
    def serialize(self, fmt: str = "semantic", **options: Any) -> Serialization: ...
