"""Live page frames and input for a viewer that is not a browser window (the GUI's page view).

`Screencast` streams JPEG frames of a tab through CDP `Page.startScreencast` on the tab's
top-level session and acknowledges each one (Chromium sends the next frame only after the
ack). `InputForwarder` sends mouse, wheel and keyboard input through CDP `Input.*`, in CSS px
of the page viewport — the same channel Vigil's own actions use (`engine.actions.input`).

Pure asyncio: the engine never imports Qt. Both classes tolerate a tab or browser that has
gone away (closed, crashed): the call logs one line and returns, so a viewer never crashes.
"""

from __future__ import annotations

import asyncio
import base64
import collections
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from engine.browser.keys import KeyNameError, key_def
from engine.browser.target import HasTarget, PageTarget, target_of

log = logging.getLogger("vigil.screencast")

FrameCallback = Callable[[bytes, dict], Any]
FrameFilter = Callable[[bytes, dict], Awaitable[bytes | None]]
META_KEYS = ("deviceWidth", "deviceHeight", "offsetTop", "pageScaleFactor", "scrollOffsetX", "scrollOffsetY",
             "timestamp")
FPS_WINDOW_S = 2.0


def _gone(tab: PageTarget) -> bool:
    return bool(tab.closed or tab.crashed or tab.cdp.closed or not tab.session_id)


class Screencast:
    """Frames of one tab's viewport, as JPEG bytes plus metadata, until `stop()`."""

    def __init__(self, page: PageTarget | HasTarget):
        self.tab = target_of(page)
        self.frames = 0  # frames delivered since start()
        self.running = False
        self._on_frame: FrameCallback | None = None
        self._session_id = ""
        self._times: collections.deque[float] = collections.deque(maxlen=600)
        self._started_at = 0.0
        self._acks: set[asyncio.Task] = set()
        self._params: dict[str, Any] = {}
        self.last_meta: dict = {}
        # frames pass through this first when set (the page view's secret masking, engine.vision.mask):
        # one frame filtered at a time, in order; a frame that arrives meanwhile waits, a newer one
        # replaces it; a frame the filter returns None for (or fails on) is never delivered
        self.frame_filter: FrameFilter | None = None
        self._filtering: asyncio.Task | None = None
        self._waiting: tuple[bytes, dict] | None = None
        self.frames_dropped = 0

    # -- public ------------------------------------------------------------------------------
    async def start(self, on_frame: FrameCallback, *, max_width: int = 1600, quality: int = 70,
                    every_nth: int = 1, max_height: int | None = None) -> None:
        """Start streaming; `on_frame(jpeg_bytes, meta)` is called on the event loop for each frame."""
        if self.running:
            await self.stop()
        tab = self.tab
        if _gone(tab):
            log.info("screencast not started: the tab is closed")
            return
        self._on_frame = on_frame
        self._session_id = tab.session_id
        self.frames = 0
        self._times.clear()
        self._started_at = time.monotonic()
        tab.cdp.on("Page.screencastFrame", self._handle_frame)
        self.running = True
        params: dict[str, Any] = {"format": "jpeg", "quality": int(quality), "maxWidth": int(max_width),
                                  "everyNthFrame": max(1, int(every_nth))}
        if max_height:  # Chromium fits the frame inside maxWidth x maxHeight, keeping the aspect ratio
            params["maxHeight"] = int(max_height)
        self._params = params
        try:
            await tab.cdp.send("Page.startScreencast", params, session_id=self._session_id, timeout=10)
        except Exception as exc:
            log.warning("screencast could not start: %s", exc)
            self._unsubscribe()
            self.running = False
            return
        # A still page paints nothing, so no frame would come: ask for one repaint.
        await self._nudge()

    async def set_size(self, max_width: int, max_height: int | None = None) -> None:
        """Ask for frames of at most `max_width` x `max_height` px from now on (the viewer was resized),
        without stopping the stream. A no-op when not running or when nothing changed."""
        if not self.running or _gone(self.tab):
            return
        params = {**self._params, "maxWidth": max(1, int(max_width))}
        if max_height:
            params["maxHeight"] = max(1, int(max_height))
        else:
            params.pop("maxHeight", None)
        if params == self._params:
            return
        self._params = params
        try:  # starting again on a running screencast only changes its settings
            await self.tab.cdp.send("Page.startScreencast", params, session_id=self._session_id, timeout=10)
        except Exception as exc:
            log.info("screencast size not changed: %s", exc)
            return
        await self._nudge()

    async def request_frame(self) -> None:
        """Ask for a frame now (a still page paints none by itself), e.g. after changing `frame_filter`."""
        if self.running and not _gone(self.tab):
            await self._nudge()

    async def stop(self) -> None:
        """Stop streaming and unsubscribe. Idempotent; safe when the tab or browser is gone."""
        was_running = self.running
        self.running = False
        self._on_frame = None
        self._unsubscribe()
        self._waiting = None
        if self._filtering is not None and not self._filtering.done():
            self._filtering.cancel()
            await asyncio.gather(self._filtering, return_exceptions=True)
        self._filtering = None
        for t in list(self._acks):
            t.cancel()
        if self._acks:
            await asyncio.gather(*self._acks, return_exceptions=True)
        self._acks.clear()
        if was_running and not _gone(self.tab):
            try:
                await self.tab.cdp.send("Page.stopScreencast", session_id=self._session_id, timeout=3)
            except Exception as exc:
                log.info("screencast stop: %s", exc)

    @property
    def fps(self) -> float:
        """Frames per second over the last two seconds (0 when idle)."""
        now = time.monotonic()
        recent = [t for t in self._times if now - t <= FPS_WINDOW_S]
        if len(recent) < 2:
            return 0.0
        span = max(now - recent[0], 1e-6)
        return (len(recent) - 1) / span

    @property
    def average_fps(self) -> float:
        """Frames per second since start()."""
        if not self._started_at:
            return 0.0
        return self.frames / max(time.monotonic() - self._started_at, 1e-6)

    # -- internals ---------------------------------------------------------------------------
    def _unsubscribe(self) -> None:
        cdp = getattr(self.tab, "cdp", None)
        if cdp is not None:
            cdp.off("Page.screencastFrame", self._handle_frame)

    async def _nudge(self) -> None:
        try:
            await self.tab.cdp.send("Runtime.evaluate", {
                # an opacity a hair below 1 for two animation frames repaints the whole page (a 0px
                # outline did not: a still page sent no frame)
                "expression": "(()=>{const e=document.documentElement; if(!e) return;"
                              "const o=e.style.opacity; e.style.opacity='0.999';"
                              "requestAnimationFrame(()=>requestAnimationFrame(()=>{e.style.opacity=o;}));})()",
                "returnByValue": True}, session_id=self._session_id, timeout=3)
        except Exception as exc:
            log.debug("screencast nudge: %s", exc)

    def _handle_frame(self, params: dict, session_id: str | None) -> None:
        if not self.running or session_id != self._session_id:
            return
        ack = asyncio.get_running_loop().create_task(self._ack(params.get("sessionId")))
        self._acks.add(ack)
        ack.add_done_callback(self._acks.discard)
        try:
            data = base64.b64decode(params.get("data", ""))
        except Exception:
            return
        md = params.get("metadata") or {}
        meta = {k: md.get(k) for k in META_KEYS if k in md}
        self.last_meta = meta
        self.frames += 1
        self._times.append(time.monotonic())
        if self._on_frame is None:
            return
        if self.frame_filter is not None:
            self._waiting = (data, meta)
            if self._filtering is None or self._filtering.done():
                self._filtering = asyncio.get_running_loop().create_task(self._filter_frames())
            return
        self._deliver(data, meta)

    def _deliver(self, data: bytes, meta: dict) -> None:
        cb = self._on_frame
        if cb is None:
            return
        try:
            r = cb(data, meta)
            if asyncio.iscoroutine(r):
                asyncio.get_running_loop().create_task(r)
        except Exception:
            log.exception("screencast frame callback failed")

    async def _filter_frames(self) -> None:
        while self._waiting is not None and self.running:
            (data, meta), self._waiting = self._waiting, None
            flt = self.frame_filter
            try:
                out = await flt(data, meta) if flt is not None else data
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.info("screencast frame withheld: its filter failed (%s)", exc)
                out = None
            if out is None:
                self.frames_dropped += 1
            elif self.running:
                self._deliver(out, meta)

    async def _ack(self, screencast_session: Any) -> None:
        if _gone(self.tab) or not self.running:
            return
        try:
            await self.tab.cdp.send("Page.screencastFrameAck", {"sessionId": screencast_session},
                                    session_id=self._session_id, timeout=5)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.debug("screencast ack: %s", exc)


_MOUSE_TYPES = {"move": "mouseMoved", "down": "mousePressed", "up": "mouseReleased",
                "mouseMoved": "mouseMoved", "mousePressed": "mousePressed", "mouseReleased": "mouseReleased"}
_KEY_TYPES = {"down": "keyDown", "up": "keyUp", "raw": "rawKeyDown", "rawDown": "rawKeyDown", "char": "char",
              "keyDown": "keyDown", "keyUp": "keyUp", "rawKeyDown": "rawKeyDown"}
_BUTTON_BITS = {"left": 1, "right": 2, "middle": 4, "back": 8, "forward": 16, "none": 0}


_PRESSES = frozenset({"mousePressed", "keyDown", "rawKeyDown"})


class InputForwarder:
    """Mouse, wheel and key input for one tab, in CSS px of the page viewport.

    Errors from a closed or crashed tab are logged and swallowed: the viewer keeps running.
    """

    def __init__(self, page: PageTarget | HasTarget):
        self.tab = target_of(page)
        self.sent = 0
        self.errors = 0

    async def _send(self, method: str, params: dict) -> bool:
        tab = self.tab
        if _gone(tab):
            return False
        try:
            await tab.cdp.send(method, params, session_id=tab.session_id, timeout=10)
            self.sent += 1
            if params.get("type") in _PRESSES or method == "Input.insertText":
                tab.person_input_at = time.monotonic()  # the person acts in the page (not a mere move or wheel)
            return True
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.errors += 1
            log.info("input not delivered (%s): %s", method, exc)
            return False

    async def mouse(self, kind: str, x: float, y: float, button: str = "left", click_count: int = 1,
                    modifiers: int = 0, buttons: int | None = None) -> bool:
        """kind: move / down / up. `buttons` is the held-buttons mask (derived when omitted)."""
        typ = _MOUSE_TYPES[kind]
        if typ == "mouseMoved":
            btn = button if buttons else "none"
            mask = buttons or 0
        else:
            btn = button
            mask = buttons if buttons is not None else (_BUTTON_BITS.get(button, 0) if typ == "mousePressed" else 0)
        p = {"type": typ, "x": float(x), "y": float(y), "button": btn, "buttons": int(mask),
             "modifiers": int(modifiers)}
        if typ != "mouseMoved":
            p["clickCount"] = int(click_count)
        return await self._send("Input.dispatchMouseEvent", p)

    async def wheel(self, x: float, y: float, dx: float, dy: float, modifiers: int = 0) -> bool:
        """Scroll by (dx, dy) CSS px at (x, y); positive dy scrolls down."""
        return await self._send("Input.dispatchMouseEvent", {
            "type": "mouseWheel", "x": float(x), "y": float(y), "deltaX": float(dx), "deltaY": float(dy),
            "button": "none", "buttons": 0, "modifiers": int(modifiers)})

    async def key(self, kind: str, key: str, code: str = "", text: str = "", modifiers: int = 0,
                  key_code: int | None = None, auto_repeat: bool = False) -> bool:
        """kind: down / up (or raw CDP types). A "down" without text is sent as rawKeyDown."""
        typ = _KEY_TYPES[kind]
        if typ == "keyDown" and not text:
            typ = "rawKeyDown"
        if key_code is None or not code:
            try:
                kd = key_def(key) if key else None
            except KeyNameError:
                kd = None
            if kd is not None:
                code = code or kd.code
                key_code = kd.key_code if key_code is None else key_code
        p: dict[str, Any] = {"type": typ, "key": key, "code": code or "", "modifiers": int(modifiers)}
        if key_code:
            p["windowsVirtualKeyCode"] = int(key_code)
            p["nativeVirtualKeyCode"] = int(key_code)
        if text and typ in ("keyDown", "char"):
            p["text"] = text
            p["unmodifiedText"] = text
        if auto_repeat:
            p["autoRepeat"] = True
        return await self._send("Input.dispatchKeyEvent", p)

    async def insert_text(self, text: str) -> bool:
        """Commit text as an input method would (no key events)."""
        return await self._send("Input.insertText", {"text": text})
