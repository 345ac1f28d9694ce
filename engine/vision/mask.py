"""No secret in any picture: the boxes of secret fields, and of any text on the page that contains a
secret value the session knows, are painted over before a screenshot leaves the engine.

Text outputs were already clean (values of password and one-time-code fields are never read);
pixels are not: a one-time-code field is often `type=text`, and a next page may echo the query
string a GET form put the password into. So every capture (`screenshot.grab_viewport`, which the
model's screenshots, the loop's step pictures, the store, the report, Set-of-Mark and the window's
step pictures all go through) asks every frame of the tab for:

- secret fields: password, one-time code, and fields whose type, autocomplete, name, id, label or
  placeholder says PIN, CVV, card number, secret, token …;
- text nodes and field values containing a known secret value (`engine.secret_values`: what the
  loop typed into secret fields, in every form it may reappear in — raw, URL-encoded, JSON-escaped);

and paints those boxes solid. Child frames (same- and cross-origin) are searched in their own
context and placed with their `<iframe>` owner's content box, frame by frame up to the top.
The boxes are read just before and just after the capture and both sets are painted, so an
element that moves while the picture is taken is still covered.
"""

from __future__ import annotations

import asyncio
import io
import logging
from collections.abc import Callable, Iterable
from pathlib import Path

from PIL import Image, ImageDraw

from engine.browser.target import PageTarget
from engine.errors import ErrorCode, VigilError

log = logging.getLogger("vigil.vision")

SECRET_BOXES = (Path(__file__).resolve().parent / "js" / "secret_boxes.js").read_text()
FILL = (40, 40, 46)
_OWNER_BOX = """function() {
  const r = this.getBoundingClientRect(), cs = getComputedStyle(this);
  return [r.left + parseFloat(cs.borderLeftWidth) + parseFloat(cs.paddingLeft),
          r.top + parseFloat(cs.borderTopWidth) + parseFloat(cs.paddingTop)];
}"""

Box = tuple[float, float, float, float]


async def _frame_boxes(page: PageTarget, frame_id: str, values: list[str]) -> list[Box]:
    ft = page.frames.get(frame_id)
    if ft is None or ft.context_id is None:
        return []
    r = await page.cdp.send("Runtime.callFunctionOn", {
        "functionDeclaration": SECRET_BOXES, "executionContextId": ft.context_id, "returnByValue": True,
        "arguments": [{"value": page.key}, {"value": values}]}, session_id=ft.session_id, timeout=5)
    if "exceptionDetails" in r:
        raise VigilError("the secret-masking script failed in a frame", code=ErrorCode.SCREENSHOT_FAILED)
    return [tuple(b) for b in (r.get("result", {}).get("value") or [])]


async def _owner_offset(page: PageTarget, frame_id: str) -> tuple[float, float] | None:
    """Where the frame's viewport starts inside its parent's viewport (the <iframe> content box)."""
    ft = page.frames.get(frame_id)
    parent = page.frames.get(ft.parent_id) if ft is not None and ft.parent_id else None
    if parent is None:
        return None
    sid = parent.session_id
    owner = await page.cdp.send("DOM.getFrameOwner", {"frameId": frame_id}, session_id=sid, timeout=5)
    obj = await page.cdp.send("DOM.resolveNode", {"backendNodeId": owner["backendNodeId"], "objectGroup": "vigil-mask"},
                             session_id=sid, timeout=5)
    try:
        r = await page.cdp.send("Runtime.callFunctionOn", {
            "functionDeclaration": _OWNER_BOX, "objectId": obj["object"]["objectId"], "returnByValue": True},
            session_id=sid, timeout=5)
    finally:
        try:
            await page.cdp.send("Runtime.releaseObjectGroup", {"objectGroup": "vigil-mask"}, session_id=sid, timeout=5)
        except VigilError:
            pass
    ox, oy = r.get("result", {}).get("value") or (0, 0)
    return float(ox), float(oy)


async def secret_boxes(page: PageTarget, values: Iterable[str] = ()) -> list[Box]:
    """Boxes to paint over, in top-level CSS px of the viewport, from every frame of the page.

    A frame that cannot be searched (navigating, detached) is skipped; a frame that can be searched
    but not placed is covered whole (better a grey frame than a leak)."""
    vals = list(values)
    fids = list(page.frames)
    found = await asyncio.gather(*(_frame_boxes(page, f, vals) for f in fids), return_exceptions=True)
    per_frame = {f: b for f, b in zip(fids, found, strict=True) if not isinstance(b, BaseException) and b}
    if not per_frame:
        return []
    out: list[Box] = []
    offsets: dict[str, tuple[float, float] | None] = {page.main_frame_id: (0.0, 0.0)}

    async def offset(fid: str) -> tuple[float, float] | None:
        if fid in offsets:
            return offsets[fid]
        offsets[fid] = None  # guard against cycles
        ft = page.frames.get(fid)
        try:
            own = await _owner_offset(page, fid)
            up = await offset(ft.parent_id) if ft is not None and ft.parent_id else None
        except VigilError as exc:
            log.debug("cannot place frame %s for masking: %s", fid, exc)
            own = up = None
        offsets[fid] = (own[0] + up[0], own[1] + up[1]) if own is not None and up is not None else None
        return offsets[fid]

    for fid, boxes in per_frame.items():
        off = await offset(fid)
        if off is None:
            out.append((0.0, 0.0, 1e5, 1e5))  # cannot place it: cover the whole picture
            continue
        out.extend((x + off[0], y + off[1], w, h) for x, y, w, h in boxes)
    return out


def paint(img: Image.Image, boxes: Iterable[Box], scale: float) -> Image.Image:
    """`img` with every box (CSS px; `scale` image px per CSS px) filled solid."""
    img = img.convert("RGB")
    draw = ImageDraw.Draw(img)
    for box in boxes:
        r = device_rect(box, scale, img.width, img.height)
        if r is not None:
            draw.rectangle([r[0], r[1], r[2] - 1, r[3] - 1], fill=FILL)
    return img


SAME_PX = 1.0  # boxes this close are one


def _same(a: Box, b: Box) -> bool:
    return all(abs(p - q) <= SAME_PX for p, q in zip(a, b, strict=True))


def _moved(boxes: list[Box], dx: float, dy: float) -> list[Box]:
    return [(x + dx, y + dy, w, h) for x, y, w, h in boxes]


class LiveMasker:
    """A screencast's frame filter (`Screencast.frame_filter`): every live frame of the tab gets the same boxes as
    every screenshot (`secret_boxes`), asked for as the frame arrives. The boxes go with the frame as
    `meta["secret_boxes"]` (CSS px); with `paint=True` they are also painted into the JPEG here (what a consumer
    that stores or sends frames needs). The window's page view paints them itself as it decodes the frame
    (`paint=False`: a JPEG decode and re-encode per frame costs more than the rest of the frame's path; measured
    39 ms against 5 ms for finding the boxes). A frame with nothing secret on it passes untouched; a frame whose
    boxes cannot be found is withheld (None), never shown unmasked.

    The boxes follow the page's scroll: they are kept in document px (the viewport box plus the scroll it was
    read at) and placed in each frame by the scroll that frame was painted at (its metadata), so a field that
    only scrolled has one box, where the frame shows it. (Kept in viewport px, the last frame's box stayed where
    the field had been before a wheel turn, over what scrolled into its place, and a still page sends no frame
    that would clear it.) A box read at another scroll than the frame's is also kept where it was read (a fixed
    field does not scroll). The last frame's boxes that match no field's place now are kept too (a field that
    moved between two frames stays covered), and `again()` is called: the caller asks for one more frame, whose
    boxes are all current."""

    def __init__(self, page: PageTarget, *, paint: bool = True, quality: int = 70,
                 again: Callable[[], None] | None = None):
        self.page = page
        self.paint = paint
        self.quality = quality
        self.again = again
        self._last_doc: list[Box] = []  # the last frame's boxes, in document px
        self.masked = 0  # frames that had something to cover

    async def _scroll(self) -> tuple[float, float]:
        page = self.page
        r = await page.cdp.send("Runtime.evaluate", {"expression": "[scrollX, scrollY]", "returnByValue": True},
                                session_id=page.session_id, timeout=5)
        x, y = r["result"]["value"]
        return float(x), float(y)

    async def __call__(self, jpeg: bytes, meta: dict) -> bytes | None:
        try:
            # one after the other on the page's session: the scroll is the one the boxes were read at
            boxes, (sx, sy) = await asyncio.gather(secret_boxes(self.page, self.page.secrets.forms()), self._scroll())
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a frame that cannot be masked is never shown
            log.info("live frame withheld: %s", exc)
            return None
        fx = float(meta.get("scrollOffsetX", sx) or 0)
        fy = float(meta.get("scrollOffsetY", sy) or 0)
        now = _moved(boxes, sx - fx, sy - fy)   # where the frame shows the fields
        if (sx, sy) != (fx, fy):
            now += boxes                         # and where they were read, for a field that does not scroll
        kept = [b for b in _moved(self._last_doc, -fx, -fy) if not any(_same(b, n) for n in now)]
        self._last_doc = _moved(boxes, sx, sy)
        covered = now + kept
        meta["secret_boxes"] = covered
        if kept and self.again is not None:
            self.again()  # a field moved other than by the scroll: the next frame's boxes are all current
        if not covered:
            return jpeg
        self.masked += 1
        if not self.paint:
            return jpeg
        css_width = float(meta.get("deviceWidth") or 0)
        return await asyncio.get_running_loop().run_in_executor(None, _paint_frame, jpeg, covered, css_width,
                                                                self.quality)


def _paint_frame(jpeg: bytes, boxes: list[Box], css_width: float, quality: int) -> bytes:
    img = Image.open(io.BytesIO(jpeg))
    buf = io.BytesIO()
    paint(img, boxes, img.width / css_width if css_width > 0 else 1.0).save(buf, "JPEG", quality=quality)
    return buf.getvalue()


def device_rect(box: Box, scale: float, width: int, height: int) -> tuple[int, int, int, int] | None:
    """A box (CSS px) as the (x1, y1, x2, y2) image px rectangle `paint` fills (exclusive ends), or None
    when nothing of it is inside a `width` x `height` picture."""
    x, y, w, h = box
    x1, y1 = max(0, int(x * scale)), max(0, int(y * scale))
    x2, y2 = min(width, int((x + w) * scale + 1)), min(height, int((y + h) * scale + 1))
    return (x1, y1, x2, y2) if x2 > x1 and y2 > y1 else None
