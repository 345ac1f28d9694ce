"""How the session store keeps a blob's bytes (the `codec` column of `blobs`), and how it reads them back.

Written since schema 7:
- "zstd": a snapshot as one zstd frame;
- "zstd-delta": a snapshot as a zstd frame compressed with an earlier snapshot of its session (the blob named
  in `base`, as raw bytes) for dictionary: consecutive snapshots of a page differ in a few nodes, so a step's
  snapshot is a few hundred bytes. At most CHAIN_LENGTH frames are decoded to read one back;
- "webp": a picture transcoded from the step's JPEG (about half its bytes). The blob is still named by the
  sha256 of the JPEG (the same picture taken twice is kept once), and reads back as the WebP bytes;
- "webp-patch": a picture kept as the part that changed since the session's previous picture (`base`): the
  box around every changed 16×16 tile, as WebP, with where it goes (a step changes a field or two: a few KB
  against 25). It reads back as a PNG of the whole picture, at most CHAIN_LENGTH pictures decoded.
Every one of them carries `checksum`, the sha256 of the stored bytes, so a damaged byte is seen on reading the
row alone (a WebP is not the JPEG its name was computed from; a delta needs its base to be checked otherwise).

Read as before: "zlib" (a snapshot, zlib level 3) and "raw" (the bytes as given: a JPEG picture).
"""

from __future__ import annotations

import hashlib
import io
import json
import zlib
from typing import TYPE_CHECKING

import zstandard

if TYPE_CHECKING:
    from PIL import Image

# a full frame every CHAIN_LENGTH snapshots of a session: reading one decodes at most that many frames
CHAIN_LENGTH = 16
ZSTD_LEVEL = 3
# WebP quality 70, method 4: measured on the demo shop's 1024×640 viewport, 25 KB against the JPEG's 55 KB
# (q70 method 2: 27 KB in half the time); text reads the same. Encoded on the store's writer thread (Pillow
# releases the GIL while it encodes), never while a step waits for its record to be committed
WEBP_QUALITY = 70
WEBP_METHOD = 4
OLD_CODECS = ("raw", "zlib")
CODECS = (*OLD_CODECS, "zstd", "zstd-delta", "webp", "webp-patch")
TILE = 16
PATCH_AT_MOST = 0.5  # of the picture's area: a bigger change is kept whole (a new page, a scroll)


class CodecError(ValueError):
    """Stored bytes that do not decode with their codec (damaged, or a codec this Vigil does not know)."""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def snapshot_frame(raw: bytes, base: bytes | None = None) -> bytes:
    """`raw` as one zstd frame; with `base` (an earlier snapshot's raw bytes), a frame that needs it to decode."""
    if base is None:
        return zstandard.ZstdCompressor(level=ZSTD_LEVEL).compress(raw)
    dictionary = zstandard.ZstdCompressionDict(base, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
    return zstandard.ZstdCompressor(level=ZSTD_LEVEL, dict_data=dictionary).compress(raw)


def picture_webp(jpeg: bytes) -> bytes | None:
    """The picture as WebP, or None when it is not a picture Pillow reads, or WebP would not be smaller."""
    from PIL import Image  # (Pillow loads its plugins on first use: not at import of the store)

    try:
        with Image.open(io.BytesIO(jpeg)) as img:
            img.load()
            out = io.BytesIO()
            img.save(out, "WEBP", quality=WEBP_QUALITY, method=WEBP_METHOD)
    except (OSError, ValueError, SyntaxError):  # not an image (or one WebP cannot hold): kept as it came
        return None
    data = out.getvalue()
    return data if len(data) < len(jpeg) else None


def open_picture(data: bytes) -> Image.Image:
    """Picture bytes (JPEG, WebP, PNG) as a loaded RGB image; OSError when they are not a picture."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as img:
        return img.convert("RGB")


def changed_box(new: Image.Image, old: Image.Image) -> tuple[int, int, int, int] | None:
    """The box around every TILE×TILE tile where `new` differs from `old` (same size), or None when nothing
    changed. Pixels compared exactly: two captures of an unchanged part decode the same."""
    from PIL import ImageChops

    box = ImageChops.difference(new, old).getbbox()
    if box is None:
        return None
    x0, y0, x1, y1 = box
    return (x0 // TILE * TILE, y0 // TILE * TILE, min(new.width, -(-x1 // TILE) * TILE),
            min(new.height, -(-y1 // TILE) * TILE))


def picture_patch(new: Image.Image, old: Image.Image) -> bytes | None:
    """`new` as a patch on `old` (the part that changed, as WebP, after a small header saying where it goes),
    or None when they differ in size or in more than PATCH_AT_MOST of the picture."""
    if new.size != old.size:
        return None
    box = changed_box(new, old) or (0, 0, min(TILE, new.width), min(TILE, new.height))
    if (box[2] - box[0]) * (box[3] - box[1]) > PATCH_AT_MOST * new.width * new.height:
        return None
    out = io.BytesIO()
    new.crop(box).save(out, "WEBP", quality=WEBP_QUALITY, method=WEBP_METHOD)
    head = json.dumps({"box": box, "size": new.size}, separators=(",", ":")).encode()
    return len(head).to_bytes(2, "big") + head + out.getvalue()


def apply_patch(base: Image.Image, patch: bytes) -> Image.Image:
    """The picture a "webp-patch" blob holds, drawn on its base picture; CodecError when it does not fit."""
    try:
        n = int.from_bytes(patch[:2], "big")
        head = json.loads(patch[2:2 + n])
        box, size = tuple(head["box"]), tuple(head["size"])
        part = open_picture(patch[2 + n:])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CodecError(f"not a picture patch ({exc})") from None
    if base.size != size or part.size != (box[2] - box[0], box[3] - box[1]):
        raise CodecError("the patch does not fit its base picture")
    out = base.copy()
    out.paste(part, box[:2])
    return out


def png(img: Image.Image) -> bytes:
    """A picture as PNG bytes, made fast (what a patched picture reads back as)."""
    out = io.BytesIO()
    img.save(out, "PNG", compress_level=1)
    return out.getvalue()


def decode(codec: str, data: bytes, base: bytes | None = None) -> bytes:
    """The bytes a blob reads back as: a snapshot's original bytes, a picture as kept (JPEG or WebP).
    `base`: the raw bytes of the blob a "zstd-delta" frame was compressed against. CodecError when they
    do not decode."""
    try:
        if codec in ("raw", "webp"):
            return bytes(data)
        if codec == "zlib":
            return zlib.decompress(data)
        if codec == "zstd":
            return zstandard.ZstdDecompressor().decompress(data)
        if codec == "zstd-delta":
            if base is None:
                raise CodecError("its base snapshot is missing")
            dictionary = zstandard.ZstdCompressionDict(base, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
            return zstandard.ZstdDecompressor(dict_data=dictionary).decompress(data)
    except (zlib.error, zstandard.ZstdError) as exc:
        raise CodecError(str(exc)) from None
    raise CodecError(f"unknown codec {codec!r}")


def named_by_content(codec: str) -> bool:
    """Whether a blob's decoded bytes hash to its name (not a transcoded picture: it is named by the JPEG it
    came from)."""
    return codec not in ("webp", "webp-patch")
