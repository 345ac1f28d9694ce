"""Where a session's downloads go, and the list of them.

Each recorded session saves the files its pages download into `<store dir>/downloads/<session id>/`
(next to `sessions.db`, never the user's home by surprise). The files are listed from the session's
step records (`StepRecord.incidents.downloads`): name, size, MIME type, where it was saved."""

from __future__ import annotations

from pathlib import Path

from engine.models.browsing import DownloadInfo
from engine.models.loop import StepRecord


def downloads_folder(store_path: str | Path, session_id: str) -> Path:
    """The folder a session's downloads are saved in (not created here)."""
    return Path(store_path).parent / "downloads" / session_id


def session_downloads(steps: list[StepRecord]) -> list[tuple[int, DownloadInfo]]:
    """(step index, download) for every download the session's steps made, in order."""
    out: list[tuple[int, DownloadInfo]] = []
    for rec in steps:
        if rec.incidents is not None:
            out.extend((rec.index, d) for d in rec.incidents.downloads)
    return out
