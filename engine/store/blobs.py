"""How the session store keeps its pictures and snapshots (`engine.store.codecs`), and reads them back.

`Blobs` writes in the transactions the `Store` opens, and remembers between writes each session's last snapshot
and picture (the bases of its next delta and patch) and, between reads, a few decoded ones (a report reads every
step in order: each delta then decodes one frame, not its whole chain). Every read and write holds the store's lock.
"""

from __future__ import annotations

import sqlite3
from collections import OrderedDict
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from engine.errors import ErrorCode
from engine.store.codecs import (
    CHAIN_LENGTH,
    CodecError,
    apply_patch,
    decode,
    named_by_content,
    open_picture,
    picture_patch,
    picture_webp,
    png,
    sha256,
    snapshot_frame,
)
from engine.store.columns import now
from engine.store.schema import StoreError, damaged_record_error

# decoded snapshots kept while a session is read (a report reads every step in order: each delta then decodes
# one frame against the snapshot before it, not its whole chain)
DECODED_CACHE_ITEMS = 8
DECODED_CACHE_BYTES = 64 << 20
DECODED_PICTURES = 4  # decoded pictures kept the same way (a patched picture is drawn on the one before)
_INSERT_BLOB = ("INSERT OR IGNORE INTO blobs(sha256, kind, codec, size, data, base, checksum, created_at) "
                "VALUES (?,?,?,?,?,?,?,?)")


@dataclass(frozen=True)
class _Chain:
    """A session's last stored snapshot: the base of its next one (`depth`: deltas since the last full frame)."""

    sha: str
    raw: bytes
    depth: int


@dataclass(frozen=True)
class _Shot:
    """A session's last stored picture, decoded: the base of its next one's patch."""

    sha: str
    image: Any  # PIL.Image.Image
    depth: int


@dataclass(frozen=True)
class NewPicture:
    """A picture ready to store: named by the sha256 of the bytes given (`original`), kept as `codec` `data`
    (a "webp-patch" on the picture `base`)."""

    sha: str
    original: bytes
    codec: str
    data: bytes
    base: str | None = None

    @classmethod
    def as_given(cls, data: bytes) -> NewPicture:
        """Bytes kept as they are (named by their sha256)."""
        return cls(sha256(data), data, "raw", data)

    def row(self, kind: str) -> tuple:
        checksum = None if self.codec == "raw" else sha256(self.data)
        return (self.sha, kind, self.codec, len(self.original), self.data, self.base, checksum, now())

    def insert(self, c: sqlite3.Connection, kind: str) -> None:
        """INSERT OR IGNORE it (in the open transaction `c`); a patch whose base is gone is kept whole."""
        pic = self
        if pic.base is not None and c.execute("SELECT 1 FROM blobs WHERE sha256=?", (pic.base,)).fetchone() is None:
            webp = picture_webp(pic.original)
            pic = NewPicture(pic.sha, pic.original, "webp" if webp else "raw", webp or pic.original)
        c.execute(_INSERT_BLOB, pic.row(kind))


class Blobs:
    """The blobs of one store connection (see the module docstring)."""

    def __init__(self, conn: sqlite3.Connection, lock: AbstractContextManager[Any], path: Path):
        self._conn, self._lock, self.path = conn, lock, path
        self._chains: dict[str, _Chain] = {}  # session → its last stored snapshot (written under the lock)
        self._decoded: OrderedDict[str, bytes] = OrderedDict()  # sha → decoded snapshot bytes (the lock guards it)
        self._shots: dict[str, _Shot] = {}  # session → its last stored picture
        self._images: OrderedDict[str, Any] = OrderedDict()  # sha → decoded picture (the lock guards it)

    def forget_session(self, session_id: str) -> None:
        """A session's run ended (or it was deleted): its next snapshot and picture start afresh."""
        self._chains.pop(session_id, None)
        self._shots.pop(session_id, None)

    def forget_decoded(self) -> None:
        """Blobs were deleted: nothing decoded is kept (what was deleted no longer reads back)."""
        self._decoded.clear()
        self._images.clear()

    # -- writing -----------------------------------------------------------------------------------
    def _has_blob(self, sha: str) -> bool:
        with self._lock:
            return self._conn.execute("SELECT 1 FROM blobs WHERE sha256=?", (sha,)).fetchone() is not None

    def prepare_picture(self, jpeg: bytes, session_id: str | None = None) -> NewPicture:
        """A picture as it will be stored: a patch on the session's previous picture (the part that changed), or
        WebP; nothing new when the same picture is stored already (INSERT OR IGNORE keeps the stored one); as it
        came when it does not decode."""
        sha = sha256(jpeg)
        prev = self._shots.get(session_id) if session_id is not None else None
        if prev is not None and prev.sha == sha:
            return NewPicture(sha, jpeg, "raw", jpeg)  # the step before's after picture: stored already
        stored = self._has_blob(sha)
        try:
            image = open_picture(jpeg) if session_id is not None else None
        except (OSError, ValueError):
            image = None
        if stored:
            if image is not None and session_id is not None:
                with self._lock:
                    depth = self._depth(self._conn, sha)
                self._shots[session_id] = _Shot(sha, image, depth)
            return NewPicture(sha, jpeg, "raw", jpeg)
        patch = None
        if prev is not None and image is not None and prev.depth + 1 < CHAIN_LENGTH:
            patch = picture_patch(image, prev.image)
        if session_id is not None and image is not None:
            self._shots[session_id] = _Shot(sha, image, prev.depth + 1 if patch is not None and prev else 0)
        if patch is not None and prev is not None:
            return NewPicture(sha, jpeg, "webp-patch", patch, prev.sha)
        webp = picture_webp(jpeg)
        return NewPicture(sha, jpeg, "webp", webp) if webp is not None else NewPicture(sha, jpeg, "raw", jpeg)

    def put_snapshot(self, c: sqlite3.Connection, raw: bytes, session_id: str | None) -> str:
        """Store a snapshot (in the open transaction `c`) as a delta against the session's last one, or a full
        frame (the first of a session, every CHAIN_LENGTH-th, or without a session); returns its sha256."""
        sha = sha256(raw)
        prev = self._chains.get(session_id) if session_id is not None else None
        if prev is not None and prev.sha == sha:
            return sha  # the step before's after snapshot (already stored and chained)
        if c.execute("SELECT 1 FROM blobs WHERE sha256=?", (sha,)).fetchone() is not None:
            if session_id is not None:  # stored before (another session): chained on, at its own depth
                self._chains[session_id] = _Chain(sha, raw, self._depth(c, sha))
            return sha
        base = prev if prev is not None and prev.depth + 1 < CHAIN_LENGTH and \
            c.execute("SELECT 1 FROM blobs WHERE sha256=?", (prev.sha,)).fetchone() is not None else None
        frame = snapshot_frame(raw, base.raw if base is not None else None)
        c.execute(_INSERT_BLOB, (sha, "snapshot", "zstd-delta" if base else "zstd", len(raw), frame,
                                 base.sha if base else None, sha256(frame), now()))
        if session_id is not None:
            self._chains[session_id] = _Chain(sha, raw, base.depth + 1 if base else 0)
        return sha

    @staticmethod
    def _depth(c: sqlite3.Connection, sha: str) -> int:
        """How many deltas lie between a stored blob and its full frame."""
        depth = 0
        while depth < 4 * CHAIN_LENGTH:
            row = c.execute("SELECT base FROM blobs WHERE sha256=?", (sha,)).fetchone()
            if row is None or row[0] is None:
                return depth
            sha, depth = row[0], depth + 1
        return depth

    # -- reading ---------------------------------------------------------------------------------
    def read(self, sha256: str) -> bytes:
        """The bytes stored under `sha256`: a snapshot's original bytes; a picture as kept (the JPEG in a store
        written before schema 7, else WebP, or PNG for one kept as a patch: read it by its content, not as a
        JPEG; `picture` gives it decoded). STORE_CORRUPT when
        they no longer read back as written (SQLite keeps no checksums: a damaged byte inside a picture is seen
        only here)."""
        return self._read_blob(sha256, 0)

    def picture(self, sha256: str) -> Any:
        """A stored picture as a PIL image (RGB; a patched one drawn on the pictures before it); STORE_CORRUPT
        when its bytes no longer read back as written. Do not change it: it may be kept for the next read."""
        return self._image(sha256, 0)

    def _row(self, sha: str, hops: int) -> tuple[str, str, bytes, str | None]:
        """(kind, codec, stored bytes, base) of a blob whose stored bytes match their checksum."""
        with self._lock:
            row = self._conn.execute("SELECT kind, codec, data, base, checksum FROM blobs WHERE sha256=?",
                                     (sha,)).fetchone()
        if row is None:
            if hops:
                raise self._damaged_blob(sha)  # a delta's base is gone: the delta cannot be read
            raise StoreError(f"No blob {sha} in {self.path}.", code=ErrorCode.STORE_NO_BLOB)
        kind, codec, data, base, checksum = row
        if (checksum is not None and _digest(data) != checksum) or hops > 4 * CHAIN_LENGTH:
            raise self._damaged_blob(sha)
        return kind, codec, data, base

    def _cached(self, cache: OrderedDict[str, Any], sha: str) -> Any:
        """`sha`'s entry in one of the decoded caches (now its most recently used), or None."""
        with self._lock:
            cached = cache.get(sha)
            if cached is not None:
                cache.move_to_end(sha)
            return cached

    def _image(self, sha: str, hops: int) -> Any:
        cached = self._cached(self._images, sha)
        if cached is not None:
            return cached
        _, codec, data, base = self._row(sha, hops)
        if codec == "webp-patch":
            return self._patched(sha, data, base, hops)
        try:
            image = open_picture(self._read_blob(sha, hops))
        except (OSError, ValueError):
            raise self._damaged_blob(sha) from None
        self._keep_image(sha, image)
        return image

    def _patched(self, sha: str, data: bytes, base: str | None, hops: int) -> Any:
        if base is None:
            raise self._damaged_blob(sha)
        try:
            image = apply_patch(self._image(base, hops + 1), data)
        except CodecError:
            raise self._damaged_blob(sha) from None
        self._keep_image(sha, image)
        return image

    def _keep_image(self, sha: str, image: Any) -> None:
        with self._lock:
            self._images[sha] = image
            while len(self._images) > DECODED_PICTURES:
                self._images.popitem(last=False)

    def _read_blob(self, sha: str, hops: int) -> bytes:
        cached = self._cached(self._decoded, sha)
        if cached is not None:
            return cast(bytes, cached)
        kind, codec, data, base = self._row(sha, hops)
        if codec == "webp-patch":
            return png(self._patched(sha, data, base, hops))
        try:
            raw = decode(codec, data, self._read_blob(base, hops + 1) if base is not None else None)
        except CodecError:
            raise self._damaged_blob(sha) from None
        if named_by_content(codec) and _digest(raw) != sha:
            raise self._damaged_blob(sha)
        if kind == "snapshot" and codec != "raw":
            with self._lock:
                self._remember(sha, raw)
        return raw

    def _remember(self, sha: str, raw: bytes) -> None:
        """Keep a decoded snapshot (the base of the next step's delta) while the cache has room."""
        self._decoded[sha] = raw
        total = sum(len(v) for v in self._decoded.values())
        while len(self._decoded) > DECODED_CACHE_ITEMS or (total > DECODED_CACHE_BYTES and len(self._decoded) > 1):
            total -= len(self._decoded.popitem(last=False)[1])

    def _damaged_blob(self, sha: str) -> StoreError:
        # the rest of the store may be sound: only this read is refused
        return damaged_record_error(self.path, f"The picture or snapshot {sha[:12]}… (its bytes no longer match "
                                               "their checksum)")


def taken_order(role: str) -> bool:
    """Pictures in the order they were taken (the before picture, then the after one: each patches the last)."""
    return role != "screenshot_before"


def _digest(data: bytes) -> str:
    return sha256(bytes(data))
