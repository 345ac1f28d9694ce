"""A stored step's pictures: the before/after screenshots with the Set-of-Mark of the snapshot taken
with each, drawn when asked for (the store keeps the plain picture and the snapshot, once each). The
pictures given out are JPEGs, whatever the store keeps (the JPEG as taken in older stores, WebP since
schema 7: `engine.store.codecs`)."""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass

from PIL import Image

from engine.errors import VigilError
from engine.store.session_data import SessionData
from engine.store.store import Store

log = logging.getLogger("vigil.store")

SIDES = ("before", "after")


@dataclass(frozen=True)
class StepPicture:
    """One side of a step: JPEG bytes (with marks when the snapshot was stored), and what it shows."""

    side: str
    jpeg: bytes
    marks: int          # how many elements are marked (0: the plain screenshot)
    highlight: str | None = None  # the node ID acted on, outlined in the picture


def step_picture(store: Store, data: SessionData, index: int, side: str, *, legend: bool = True,
                 quality: int = 80) -> StepPicture | None:
    """Step `index`'s `side` ("before"/"after") screenshot with its Set-of-Mark, or None when the step
    has no such screenshot. A snapshot that cannot be read leaves the plain screenshot."""
    if side not in SIDES:
        raise ValueError(f"side must be one of {SIDES}, not {side!r}")
    refs = data.blobs.get(index, {})
    shot_sha = refs.get(f"screenshot_{side}")
    if shot_sha is None:
        return None
    snap_sha = refs.get(f"snapshot_{side}")
    if snap_sha is None:
        return StepPicture(side, as_jpeg(store.get_blob(shot_sha), quality), 0)
    img = store.picture(shot_sha).copy()  # (the store may keep its own for the next picture)
    try:
        from engine.snapshot.stored import load_snapshot
        from engine.vision.som import draw_som
        snap = load_snapshot(store.get_blob(snap_sha))
        res = draw_som(img, snap, legend=legend)
    except (VigilError, OSError, ValueError) as exc:
        log.warning("step %s %s: marks not drawn: %s", index, side, exc)
        return StepPicture(side, _jpeg(img, quality), 0)
    rec = next((s for s in data.steps if s.index == index), None)
    target = rec.target.get("id") if rec is not None and rec.target else None
    out = res.image
    mark = res.mark(target) if target and side == "before" else None
    if mark is not None:  # the element the step acted on: a thick ring around its box
        from PIL import ImageDraw
        d = ImageDraw.Draw(out)
        x0, y0, x1, y1 = mark.box
        w = max(3, round(3 * res.scale))
        d.rectangle((x0 - 2 * w, y0 - 2 * w, x1 + 2 * w - 1, y1 + 2 * w - 1), outline=(250, 204, 21), width=w)
        d.rectangle((x0 - 3 * w, y0 - 3 * w, x1 + 3 * w - 1, y1 + 3 * w - 1), outline=(0, 0, 0), width=1)
    return StepPicture(side, _jpeg(out, quality), len(res.marks), target if mark is not None else None)


def as_jpeg(data: bytes, quality: int = 80) -> bytes:
    """Stored picture bytes as a JPEG: as they are when they are one, else decoded and encoded again (a WebP);
    bytes Pillow cannot read are given back as they are (the reader says it cannot show them)."""
    if data[:3] == b"\xff\xd8\xff":
        return data
    try:
        with Image.open(io.BytesIO(data)) as img:
            return _jpeg(img.convert("RGB"), quality)
    except (OSError, ValueError) as exc:
        log.warning("a stored picture could not be read: %s", exc)
        return data


def _jpeg(img: Image.Image, quality: int) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=quality)
    return buf.getvalue()
