"""Downloads: `DownloadKeeper` saves every file a page downloads into one folder Vigil chose.

The folder is `folder` when set (the loop sets a per-session folder under the session store's
directory); until then a temporary folder is made and said (`DownloadInfo.path`), never the
user's home. Each download is reported with the file name the site suggested, its size, its MIME
type (by name, as the browser does not say) and where it was saved; two files of the same name are
kept side by side (`report (1).pdf`).

- **A size limit** holds for every download: `limit` bytes, 100 MB (100,000,000 bytes) unless
  `DownloadKeeper(limit_mb=…)` or the environment variable `VIGIL_DOWNLOAD_LIMIT_MB` says otherwise
  (0 = no limit). It is enforced while the file downloads, from the browser's progress events
  (`Page.downloadProgress`, fed to `progress()`): the moment the bytes received — or the size the
  server announced — pass the limit, the download is cancelled and nothing of it is kept.
- **A question first**: with `decide` set (the loop sets it for a run that holds downloads), each
  download is put to it before it is saved; a reason back means refused (cancelled, nothing kept).
- **One copy**: the browser's temporary copy (Playwright's) is deleted once the file is saved.

Only a saved download has a path; the others say why they were not saved (`DownloadInfo.status`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import mimetypes
import os
import re
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from engine.models.browsing import DownloadInfo

log = logging.getLogger("vigil.downloads")
_UNSAFE = re.compile(r"[\x00-\x1f/\\:*?\"<>|]+")
DEFAULT_LIMIT_MB = 100
LIMIT_ENV = "VIGIL_DOWNLOAD_LIMIT_MB"
# a download about to be saved → None to keep it, or why it is refused
DownloadDecider = Callable[[DownloadInfo], Awaitable[str | None]]


def limit_from_env(default_mb: float = DEFAULT_LIMIT_MB) -> int | None:
    """The size limit in bytes: VIGIL_DOWNLOAD_LIMIT_MB (decimal MB; 0 = none) or the default."""
    raw = os.environ.get(LIMIT_ENV, "").strip()
    try:
        mb = float(raw) if raw else default_mb
    except ValueError:
        log.warning("%s=%r is not a number of MB; using %s MB", LIMIT_ENV, raw, default_mb)
        mb = default_mb
    return int(mb * 1_000_000) if mb > 0 else None


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

    def __init__(self, index_of_page: Callable[[Any], int | None] | None = None, *,
                 limit_mb: float | None = None) -> None:
        self.folder: Path | None = None
        self.items: list[DownloadInfo] = []
        self._index_of_page = index_of_page or (lambda page: None)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._temp: Path | None = None
        # bytes; None = no limit. `limit_mb` wins over the environment
        self.limit: int | None = limit_from_env() if limit_mb is None else (
            int(limit_mb * 1_000_000) if limit_mb > 0 else None)
        self.decide: DownloadDecider | None = None
        self.asking = 0                                    # downloads waiting for `decide` now
        self._live: dict[str, Any] = {}                    # url → Playwright Download under way
        self._over: dict[str, int] = {}                    # url → bytes when it was stopped at the limit
        self._seen: dict[str, str] = {}                    # browser guid → url
        self._begun: dict[str, str] = {}                   # guid → url: begun, not yet handed over by Playwright
        # who was to decide a download when the browser began it: a run's hold decides it even when Playwright
        # hands the download over after that run ended
        self._deciders: dict[str, DownloadDecider | None] = {}
        # a run's hold that just ended, and until when (time.monotonic()) it still decides what the browser begins
        self._late: tuple[DownloadDecider, float] | None = None

    def hold_late(self, decide: DownloadDecider, seconds: float) -> None:
        """A run's hold ends: a download the browser begins within `seconds` (its last action may still be
        starting one: a click's script, a timer) is decided by that hold too, never saved unasked."""
        self._late = (decide, time.monotonic() + seconds)

    def clear_late(self) -> None:
        """A new run starts: an earlier run's hold no longer decides anything."""
        self._late = None

    def _decider(self) -> DownloadDecider | None:
        """Who decides a download begun now: the run's hold, else one that ended a moment ago."""
        if self.decide is not None:
            return self.decide
        if self._late is not None and time.monotonic() < self._late[1]:
            return self._late[0]
        return None

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
        for guid, url in list(self._begun.items()):
            if url == info.url:
                del self._begun[guid]
                break
        self._live[info.url] = download
        if info.url in self._over:  # the browser's progress passed the limit before this event came
            self._cancel(download)
        task = asyncio.ensure_future(self._save(download, info))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _save(self, download: Any, info: DownloadInfo) -> None:
        info.limit = self.limit
        decide = self._deciders.pop(info.url, None) or self._decider()
        try:
            if decide is not None:
                self.asking += 1
                try:
                    refused = await decide(info)
                finally:
                    self.asking -= 1
                if refused:
                    info.status, info.error = "refused", refused
                    with contextlib.suppress(Exception):
                        await download.cancel()
                    return
            failure = await download.failure()
            if info.url in self._over:
                info.status, info.size = "over_limit", self._over.pop(info.url)
                info.error = f"larger than the limit of {self.limit:,} bytes" if self.limit else "over the limit"
                return
            if failure:
                info.status, info.error = "failed", str(failure)
                return
            dest = unique_path(self.target_folder(), info.name)
            await download.save_as(str(dest))
            info.path = str(dest)
            info.size = dest.stat().st_size
            info.mime = mimetypes.guess_type(info.name)[0] or "application/octet-stream"
            info.status = "saved"
        except Exception as exc:  # Playwright's own errors: the browser went away, a canceled download
            info.status = "failed"
            info.error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            log.debug("download failed: %s", exc)
        finally:
            if self._live.get(info.url) is download:
                self._live.pop(info.url, None)
            with contextlib.suppress(Exception):
                await download.delete()  # the browser's own copy: only the saved one is kept

    def progress(self, p: dict) -> None:
        """The browser's download events (`Page.downloadWillBegin`, `Page.downloadProgress`): stop a
        download at once when it passes the limit (bytes received, or the size the server announced)."""
        guid = str(p.get("guid") or "")
        if "url" in p:
            self._seen[guid] = str(p["url"])
            self._begun[guid] = str(p["url"])
            self._deciders[str(p["url"])] = self._decider()
            return
        url = self._seen.get(guid)
        if url is None:
            return
        if p.get("state") != "inProgress":
            self._seen.pop(guid, None)
            return
        got, total = int(p.get("receivedBytes") or 0), int(p.get("totalBytes") or 0)
        if self.limit is None or max(got, total) <= self.limit or url in self._over:
            return
        self._over[url] = self.limit
        download = self._live.get(url)
        if download is not None:
            self._cancel(download)

    def _cancel(self, download: Any) -> None:
        task = asyncio.ensure_future(download.cancel())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def settle(self, timeout: float = 10.0) -> None:
        """Wait (at most `timeout` s) until the downloads under way are saved."""
        tasks = set(self._tasks)
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)

    @property
    def busy(self) -> bool:
        return bool(self._tasks)

    @property
    def unannounced(self) -> bool:
        """The browser began a download (`Page.downloadWillBegin`) that Playwright has not handed over yet:
        it is still to be decided and saved (a step waits for it, so it is decided within its run)."""
        return bool(self._begun)

    async def announced(self, timeout: float = 2.0) -> None:
        """Wait (at most `timeout` s) until every download the browser began has reached `started`."""
        deadline = asyncio.get_running_loop().time() + timeout
        while self.unannounced and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.05)
        if self._begun:  # never handed over (another address, another context): not waited for again
            for url in self._begun.values():
                self._deciders.pop(url, None)
            self._begun.clear()
