"""Viewport screenshots for the model, with a perceptual hash so an unchanged view is not resent.

The payload sent to a model is a JPEG at most 1024 px wide (quality 70), scaled by the browser
itself (`Page.captureScreenshot` with a scaled clip), so no full-size image is decoded and
resized in Python on the hot path. Each shot carries a 256-bit perceptual hash (pHash, 16×16
DCT) and `ScreenshotTracker` decides from it whether a new shot is worth sending.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import contextvars
import io
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from typing import Any, cast

from PIL import Image
from pydantic import BaseModel, ConfigDict, Field

from engine.browser.target import HasTarget, PageTarget, target_of
from engine.errors import CDPError, CDPTimeoutError, ScreenshotError, VigilError

HASH_SIZE = 16
"""pHash side: 16 gives a 256-bit hash (64 hex digits). The default 8×8 (64 bits) was measured
too coarse: a small "Saved" toast moved it by only 4 bits, the same as a focus ring."""

UNCHANGED_THRESHOLD = 5
"""Two shots whose pHashes differ by at most this many bits (of 256) count as the same picture.

Measured on the demo shop (assets/demo, 1280×800 viewport, JPEG payload 1024×640, q70):
  identical page captured twice ........ 0     page reloaded, same pixels ...... 0
  list re-rendered (innerHTML = itself)  0     search box text typed ........... 2
  link hover (underline) ............... 6     input focused (ring + caret) .... 10
  toast "Saved" shown .................. 22    toast with a sentence shown ..... 30
  cookie banner hidden ................. 46    scrolled by 50 / 200 / 400 px ... 114 / 112 / 82
  big red block over the page .......... 78
Re-renders of the same pixels stay at 0 and the smallest visible toast is at 22, so 5 leaves a
wide margin on both sides; a few typed characters (≤ 2) are treated as unchanged — the DOM
snapshot, not the picture, is what carries field values."""


class Screenshot(BaseModel):
    """One viewport capture: the JPEG payload for a model plus the facts needed to map it."""

    model_config = ConfigDict(frozen=True, ser_json_bytes="base64", val_json_bytes="base64")

    jpeg: bytes = Field(repr=False)
    width: int  # of the JPEG, in image px
    height: int
    css_width: int  # viewport, in CSS px
    css_height: int
    scale: float  # JPEG px per CSS px
    phash: str  # hex pHash of the JPEG (HASH_SIZE² bits)
    taken_at: float
    png: bytes | None = Field(default=None, repr=False)  # full resolution (device px), only with full=True

    def image(self) -> Image.Image:
        """The JPEG payload decoded as a Pillow image."""
        img = Image.open(io.BytesIO(self.jpeg))
        img.load()
        return img

    def data_url(self) -> str:
        """`data:image/jpeg;base64,…` for embedding in HTML or a model message."""
        return "data:image/jpeg;base64," + base64.b64encode(self.jpeg).decode("ascii")


def phash_of(img: Image.Image) -> str:
    """The hex pHash Vigil uses everywhere (HASH_SIZE × HASH_SIZE bits). The picture is first reduced
    (grey, box filter) to about 160 px on its short side: the hash looks at 64×64 px, and shrinking a
    full viewport straight to that with an antialiasing filter costs ~9 ms a picture (~1 ms this way;
    the same pictures hash within 2 bits of the direct way)."""
    import imagehash  # (here: it brings numpy, a sixth of a command's start-up, and most commands never hash)

    g = img if img.mode == "L" else img.convert("L")
    k = min(g.width, g.height) // 160
    if k > 1:
        g = g.reduce(k)
    return str(imagehash.phash(g, hash_size=HASH_SIZE))


_warming: list[threading.Thread] = []


def warm_hashing() -> None:
    """Load what `phash_of` needs on a background thread, once, so that a run's first picture does not pay for it:
    imagehash brings numpy (~100 ms) and its first hash imports scipy's FFT (~230 ms more) — most of a cold first
    capture's 310 ms."""
    if _warming:
        return

    def load() -> None:
        with contextlib.suppress(Exception):  # (a failure is met again, and reported, where a hash is needed)
            phash_of(Image.new("L", (64, 64)))
    # not a daemon: the interpreter waits for it at exit. A daemon thread still inside scipy's C++ as the process
    # ends is unwound by pthread_exit through noexcept frames, and libstdc++ aborts the process ("terminate called
    # without an active exception": a `vigil run` stopped at once exited -6)
    _warming.append(threading.Thread(target=load, name="vigil-warm-hashing", daemon=False))
    _warming[0].start()


def phash_of_jpeg(data: bytes) -> str:
    """`phash_of` a JPEG, decoded straight at a quarter of its size in grey (the decoder scales in the
    DCT domain): no full-size decode on the hot path."""
    img = Image.open(io.BytesIO(data))
    img.draft("L", (img.width // 4, img.height // 4))
    return phash_of(img)


def hash_distance(a: str, b: str) -> int:
    """Hamming distance (differing bits) between two hex pHashes of the same size."""
    if len(a) != len(b):
        raise ValueError(f"Cannot compare pHashes of different sizes ({len(a) * 4} and {len(b) * 4} bits).")
    return (int(a, 16) ^ int(b, 16)).bit_count()


class ScreenshotTracker:
    """Remembers the last screenshot that was sent and says whether a new one is worth sending."""

    def __init__(self, threshold: int = UNCHANGED_THRESHOLD):
        self.threshold = threshold
        self.last_sent: Screenshot | None = None

    @staticmethod
    def distance(a: Screenshot | str, b: Screenshot | str) -> int:
        """Hamming distance between two shots (or their hex pHashes)."""
        return hash_distance(a if isinstance(a, str) else a.phash, b if isinstance(b, str) else b.phash)

    def should_send(self, shot: Screenshot) -> bool:
        """True for the first shot and for any shot that differs visibly from the last one sent."""
        return self.last_sent is None or self.distance(self.last_sent, shot) > self.threshold

    def mark_sent(self, shot: Screenshot) -> None:
        self.last_sent = shot


async def _viewport(page: PageTarget, timeout: float) -> tuple[dict, float]:
    """The visual viewport (CSS px, page coordinates) and the device pixel ratio."""
    metrics: dict | BaseException
    dpr: dict | BaseException
    metrics, dpr = await asyncio.gather(
        page.cdp.send("Page.getLayoutMetrics", session_id=page.session_id, timeout=timeout),
        page.cdp.send("Runtime.evaluate", {"expression": "window.devicePixelRatio", "returnByValue": True},
                     session_id=page.session_id, timeout=timeout),
        return_exceptions=True)
    if isinstance(metrics, BaseException):
        raise metrics
    vv = metrics.get("cssVisualViewport") or metrics["visualViewport"]
    ratio = 1.0
    if isinstance(dpr, dict):
        ratio = float(dpr.get("result", {}).get("value") or 1.0)
    return vv, ratio


_ASKED: contextvars.ContextVar[Callable[[], None] | None] = contextvars.ContextVar("vigil_capture_asked",
                                                                                   default=None)


@contextlib.contextmanager
def on_capture_asked(fn: Callable[[], None]) -> Iterator[None]:
    """Within this block (and the tasks it starts), `fn()` is called when a capture has been asked of the
    browser: the page it shows is the page from then on (the browser paints a new frame for it)."""
    token = _ASKED.set(fn)
    try:
        yield
    finally:
        _ASKED.reset(token)


_LOCKS: weakref.WeakKeyDictionary[Any, asyncio.Lock] = weakref.WeakKeyDictionary()


def _capture_lock(target: Any) -> asyncio.Lock:
    lock = _LOCKS.get(target)
    if lock is None:
        lock = _LOCKS[target] = asyncio.Lock()
    return lock


async def grab_viewport(page: PageTarget | HasTarget, *, fmt: str, css_scale: float | None = None,
                        max_width: int | None = None,
                        quality: int = 70, timeout: float = 10, mask: bool = True,
                        again: bool = True) -> tuple[bytes, dict]:
    """Raw capture of what is on screen: `fmt` "jpeg" or "png", either at `css_scale` image px per
    CSS px, or (with `max_width`) at device resolution shrunk to fit that width. Returns the
    encoded bytes and the viewport dict (pageX/pageY/clientWidth/clientHeight in CSS px).

    Secret fields and any text showing a known secret value are painted over (`engine.vision.mask`)
    unless `mask=False` — which nothing that stores, shows or sends a picture may pass."""
    target = target_of(page)
    target.check_alive()
    values = target.secrets.forms() if mask else []
    try:
        # where the secrets are and the viewport, read at once (both are round trips to the page)
        got = await asyncio.gather(_secret_boxes(target, values) if mask else _no_boxes(),
                                   _viewport(target, timeout), return_exceptions=True)
        for r in got:  # the masking's error first: no picture rather than one that may show a secret
            if isinstance(r, BaseException):
                raise r
        boxes, (vv, dpr) = cast(list, got[0]), cast(tuple[dict, float], got[1])
        css_w, css_h = float(vv["clientWidth"]), float(vv["clientHeight"])
        if css_w < 1 or css_h < 1:
            raise ScreenshotError(f"The viewport is {css_w:.0f}×{css_h:.0f} CSS px: nothing to capture. "
                                  "Give the browser window a size (viewport=(1280, 800)).")
        if css_scale is None:
            css_scale = dpr if max_width is None else min(dpr, max_width / css_w)
        # optimizeForSpeed: the browser's faster encoder settings (measured ~10 ms less a capture here)
        # Captured at the device's own pixels (clip scale 1) and scaled here: for another scale Chromium emulates a
        # scaled view during the capture, and restoring it left frames nested two cross-site deep without mouse
        # input (issue 39, item 7: every click after a reload refused, NOT_ACTIONABLE)
        params: dict = {"format": fmt, "captureBeyondViewport": False, "fromSurface": True, "optimizeForSpeed": True,
                        "clip": {"x": vv["pageX"], "y": vv["pageY"], "width": css_w, "height": css_h, "scale": 1}}
        if fmt == "jpeg":
            params["quality"] = quality
        told = _ASKED.get()
        # one capture at a time per page: Chromium scales a clip by emulating the view's size, and two at once
        # restore each other's emulation — the page's screencast then stayed scaled (frames 1024 px wide of a
        # 1198-px page, for good)
        async with _capture_lock(target):
            res = await _capture(target, params, timeout, told, retry_refused=again)
    except _Navigated:
        if not again:
            raise ScreenshotError("The page went to another document twice while its picture was being taken. "
                                  "Take it again once the page has loaded.") from None
        # the picture of the document the page is on now (its viewport and secret fields measured anew)
        return await grab_viewport(page, fmt=fmt, css_scale=css_scale, max_width=max_width, quality=quality,
                                   timeout=timeout, mask=mask, again=False)
    except CDPTimeoutError:
        target.check_alive()  # a crash or close mid-capture surfaces as its own error
        raise ScreenshotError(f"The page did not paint a screenshot within {timeout:.0f} s (it may be busy "
                              "or hung). Wait for it to settle, or raise the timeout.") from None
    except CDPError as exc:
        target.check_alive()
        raise ScreenshotError(f"Could not capture the page: {exc.detail}. Take a new snapshot and retry; if it "
                              "keeps failing, reload the tab.") from None
    data = base64.b64decode(res["data"])
    if mask:
        boxes += await _secret_boxes(target, values)  # and where they are now: a moving field stays covered
    size = (max(1, round(css_w * css_scale)), max(1, round(css_h * css_scale)))
    if abs(css_scale - dpr) > 1e-3 or boxes:
        # (decoding, scaling and encoding again take ~15-25 ms of CPU: on a worker thread, which Pillow runs without
        # the GIL, the event loop meanwhile goes on with the step's settle, verification and record)
        data = await asyncio.to_thread(_finished, data, fmt, size, boxes, css_scale, quality)
    return data, vv


def _finished(data: bytes, fmt: str, size: tuple[int, int], boxes: list, css_scale: float, quality: int) -> bytes:
    """The device-pixel capture at `size` (css_scale image px per CSS px), secret `boxes` painted over, encoded
    once again as `fmt`."""
    img: Image.Image = Image.open(io.BytesIO(data))
    if img.size != size:
        img = img.convert("RGB").resize(size, Image.Resampling.BILINEAR, reducing_gap=2.0)
    if boxes:
        from engine.vision.mask import paint
        img = paint(img, boxes, css_scale)
    buf = io.BytesIO()
    if fmt == "png":
        img.save(buf, "PNG")
    else:
        img.convert("RGB").save(buf, "JPEG", quality=quality)
    return buf.getvalue()


class _Navigated(Exception):
    """A new document committed while a capture was on its way, and the capture did not come back."""


NAV_GRACE_S = 0.2  # how long a capture asked for before a navigation may still take once the new document is in
NAV_REFUSED_S = 2.0  # how long a refused capture waits to see whether a new document is on its way
LEAVING = ("Not attached to an active page", "Unable to capture screenshot")  # Chromium's refusals as a page leaves


async def _capture(target: PageTarget, params: dict, timeout: float, told: Callable[[], None] | None, *,
                   retry_refused: bool = False) -> dict:
    """Page.captureScreenshot; `told()` once the request is on its way (its frame shows the page from that moment
    on). A capture asked for while the page was leaving its document may never be answered (seen in 11 of 20
    runs of a sign-up whose last click navigates: the run waited out the 10 s timeout for the step's picture):
    once a new document commits, it gets NAV_GRACE_S more, then _Navigated asks for a picture of the new one (as
    when Chromium refuses the capture and a new document commits within NAV_REFUSED_S). A refused capture with no
    commit seen in that time is tried once more when `retry_refused` (a loaded machine may take longer to commit
    the document the click asked for: seen in a CI run); the second refusal is the error."""
    committed = asyncio.Event()
    stop = target.on_navigated(lambda _url: committed.set())
    sent = asyncio.ensure_future(target.cdp.send("Page.captureScreenshot", params, session_id=target.session_id,
                                                 timeout=timeout))
    moved = asyncio.ensure_future(committed.wait())
    try:
        if told is not None:
            await asyncio.sleep(0)
            told()
        await asyncio.wait({sent, moved}, return_when=asyncio.FIRST_COMPLETED)
        if not sent.done():
            await asyncio.wait({sent}, timeout=NAV_GRACE_S)
            if not sent.done():
                raise _Navigated
        exc = sent.exception()
        if isinstance(exc, CDPError) and not isinstance(exc, CDPTimeoutError):
            # refused while the page changed documents ("Not attached to an active page", "Unable to capture
            # screenshot"): when a new document commits now, a picture of that one
            await asyncio.wait({moved}, timeout=NAV_REFUSED_S)
            if committed.is_set() or (retry_refused and exc.detail.startswith(LEAVING)):
                raise _Navigated
        return sent.result()
    finally:
        stop()
        moved.cancel()
        if not sent.done():
            sent.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await sent


async def _no_boxes() -> list:
    return []


async def _secret_boxes(target: PageTarget, values: list[str]) -> list:
    from engine.vision.mask import secret_boxes
    try:
        return await secret_boxes(target, values)
    except VigilError as exc:
        target.check_alive()
        raise ScreenshotError(f"Could not find the secret fields to mask ({exc.message}); no picture is taken "
                              "rather than one that may show a secret.") from None


async def capture_screenshot(page: PageTarget | HasTarget, *, max_width: int = 1024, quality: int = 70,
                             full: bool = False,
                             timeout: float = 10) -> Screenshot:
    """Capture the viewport as a ≤ `max_width` JPEG payload with its pHash.

    With `full=True` one full-resolution PNG (device px) is captured and the JPEG is made from
    that same frame, so both always show the same moment."""
    if full:
        png, vv = await grab_viewport(page, fmt="png", timeout=timeout)
        data = png
    else:
        png = None
        data, vv = await grab_viewport(page, fmt="jpeg", max_width=max_width, quality=quality, timeout=timeout)
    # (the work on the pixels, off the event loop as in grab_viewport)
    return await asyncio.to_thread(_payload, data, png, vv, max_width, quality)


def _payload(data: bytes, png: bytes | None, vv: dict, max_width: int, quality: int) -> Screenshot:
    """The Screenshot of a capture: `data` (the JPEG, or with `png` the full-resolution PNG) made a JPEG at most
    `max_width` wide, with its pHash."""
    full = png is not None
    img: Image.Image = Image.open(io.BytesIO(data))  # (its size is in the header: decoded only when it must be resized)
    if full or img.width > max_width:
        img.load()
    reencode = full or img.width > max_width  # the browser rounds: never send more than asked
    if img.width > max_width:
        img = img.resize((max_width, max(1, round(img.height * max_width / img.width))), Image.Resampling.LANCZOS)
    if reencode:
        buf = io.BytesIO()
        img.convert("RGB").save(buf, "JPEG", quality=quality, optimize=True)
        data = buf.getvalue()
    css_w = float(vv["clientWidth"])
    return Screenshot(jpeg=data, width=img.width, height=img.height, css_width=round(css_w),
                      css_height=round(float(vv["clientHeight"])), scale=img.width / css_w,
                      phash=phash_of_jpeg(data), taken_at=time.time(), png=png)  # the hash of what is sent
