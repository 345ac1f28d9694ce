"""Downloads: `DownloadKeeper` saves every file a page downloads into one folder Vigil chose.

The folder is `folder` when set (the loop sets a per-session folder under the session store's
directory); until then a temporary folder is made and said (`DownloadInfo.path`), never the
user's home. Each download is reported with the file name the site suggested, its size, its MIME
type (by name, as the browser does not say) and where it was saved; two files of the same name are
kept side by side (`report (1).pdf`)."""

from __future__ import annotations

import asyncio
import logging
import mimetypes
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.models.browsing import DownloadInfo

log = logging.getLogger("vigil.downloads")
_UNSAFE = re.compile(r"[\x00-\x1f/\\:*?\"<>|]+")


def safe_name(name: str) -> str:
    """A file name that stays inside its folder (no separators, no leading dots, not empty)."""
    clean = _UNSAFE.sub("_", name or "").strip().lstrip(".")
    return clean[:180] or "download"


def unique_path(folder: Path, name: str) -> Path:
    p = folder / name
    stem, suffix = Path(name).stem, Path(name).suffix
    n = 1
    while p.exists():
        p = folder / f"{stem} ({n}){suffix}"
        n += 1
    return p


class DownloadKeeper:
    """Saves downloads into `folder` and keeps what became of each (`items`, in the order they began)."""

    def __init__(self, index_of_page: Callable[[Any], int | None] | None = None) -> None:
        self.folder: Path | None = None
        self.items: list[DownloadInfo] = []
        self._index_of_page = index_of_page or (lambda page: None)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._temp: Path | None = None

    def target_folder(self) -> Path:
        """Where the next download goes (a temporary folder is made when none was set)."""
        if self.folder is not None:
            self.folder.mkdir(parents=True, exist_ok=True)
            return self.folder
        if self._temp is None:
            self._temp = Path(tempfile.mkdtemp(prefix="vigil-downloads-"))
        return self._temp

    def started(self, download: Any, page: Any) -> None:
        """Playwright's `download` event: save it in the background."""
        info = DownloadInfo(name=safe_name(str(getattr(download, "suggested_filename", "") or "download")),
                            url=str(getattr(download, "url", "") or ""), tab=self._index_of_page(page))
        self.items.append(info)
        task = asyncio.ensure_future(self._save(download, info))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _save(self, download: Any, info: DownloadInfo) -> None:
        try:
            failure = await download.failure()
            if failure:
                info.error = str(failure)
                return
            dest = unique_path(self.target_folder(), info.name)
            await download.save_as(str(dest))
            info.path = str(dest)
            info.size = dest.stat().st_size
            info.mime = mimetypes.guess_type(info.name)[0] or "application/octet-stream"
        except Exception as exc:  # Playwright's own errors: the browser went away, a canceled download
            info.error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            log.debug("download failed: %s", exc)

    async def settle(self, timeout: float = 10.0) -> None:
        """Wait (at most `timeout` s) until the downloads under way are saved."""
        tasks = set(self._tasks)
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)

    @property
    def busy(self) -> bool:
        return bool(self._tasks)
