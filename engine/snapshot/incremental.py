"""Incremental snapshots, Python side: the rows each frame's walker last sent, and how a walk went.

The walker (js/walker.js) keeps its previous walk in the page and re-walks only what can have
changed; it then sends only the rows that differ from the ones the caller says it holds (`base`:
the page-side token and sequence number of those rows) plus every row's parent. `RowMemo` holds
those rows per frame and rebuilds the complete list from a diff. `WalkInfo` is what a snapshot says
of its walk: `full` or `incremental`, why, and how many rows were walked again.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class WalkInfo:
    """How a snapshot was taken: `mode` is `full` or `incremental` (or `stored` for a loaded one);
    `reason` says why a walk was full or what an incremental one re-walked; `dirty` is the number of
    rows computed again (every row in a full walk), `copied` the rows carried over unchanged."""

    mode: str = "full"
    reason: str = ""
    dirty: int = 0
    copied: int = 0

    def describe(self) -> str:
        if self.mode == "incremental":
            return f"incremental ({self.dirty} re-walked, {self.copied} kept)"
        return f"{self.mode} ({self.reason})" if self.reason else self.mode


class RowMemo:
    """Per frame: (page token, sequence number, rows) of the last rows received from its walker."""

    def __init__(self) -> None:
        self._rows: dict[str, tuple[str, int, list]] = {}

    def opts_for(self, frame_id: str, opts: dict, *, full: bool) -> dict:
        held = self._rows.get(frame_id)
        out = dict(opts)
        if full:
            out["full"] = True
        if held is not None:
            out["base"] = [held[0], held[1]]
        return out

    def take(self, frame_id: str, data: dict) -> None:
        """Complete `data["rows"]` from a diff against the held rows, and hold the result."""
        diff = data.get("diff")
        if diff is not None:
            held = self._rows.get(frame_id)
            if held is None or held[1] != diff.get("base"):
                raise ValueError("the page sent a diff against rows that are not held")
            data["rows"] = patch(held[2], diff, data.get("rows") or [])
        if data.get("tok") is not None and data.get("seq") is not None:
            # a list of its own: later passes replace rows in data["rows"] (never change them in place)
            self._rows[frame_id] = (data["tok"], data["seq"], list(data.get("rows") or []))

    def forget(self, frame_id: str | None = None) -> None:
        if frame_id is None:
            self._rows.clear()
        else:
            self._rows.pop(frame_id, None)

    def keep_only(self, frame_ids) -> None:
        for fid in [f for f in self._rows if f not in frame_ids]:
            del self._rows[fid]


def patch(held: list, diff: dict, changed: list) -> list:
    """The new row list: runs of unchanged rows taken from `held` (with their new parent index),
    changed rows as sent."""
    n = diff["n"]
    par = diff["par"]
    out: list = [None] * n
    same = diff["same"]
    for a in range(0, len(same), 3):
        i, j, ln = same[a], same[a + 1], same[a + 2]
        for k in range(ln):
            r = held[j + k]
            p = par[i + k]
            out[i + k] = r if r[0] == p else [p, *r[1:]]
    for i, r in zip(diff["ch"], changed, strict=True):
        out[i] = r
    if any(r is None for r in out):
        raise ValueError("the page's diff left rows undefined")
    return out


def summarize(infos: list[dict]) -> WalkInfo:
    """One WalkInfo for a capture from each walked document's `inc` report (main frame first)."""
    if not infos:
        return WalkInfo("full", "empty page", 0, 0)
    dirty = sum(int(i.get("walked", 0)) for i in infos)
    copied = sum(int(i.get("copied", 0)) for i in infos)
    full = [i for i in infos if i.get("mode") != "incremental"]
    if full:
        return WalkInfo("full", str(full[0].get("why") or ""), dirty, copied)
    return WalkInfo("incremental", str(infos[0].get("why") or ""), dirty, copied)
