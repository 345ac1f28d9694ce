"""A direct Chrome DevTools Protocol websocket: the fast path for bulk replies.

Playwright's CDPSession relays every message through its Node driver, which is 3-5x slower
for large replies (measured, see the brief). Vigil keeps Playwright for lifecycle, navigation
and screenshots, and talks to page targets over this connection with flattened sessions.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import urllib.parse
from collections import defaultdict
from collections.abc import Awaitable, Callable
from typing import Any

import websockets

from engine.errors import BrowserClosedError, CDPError, CDPTimeoutError

log = logging.getLogger("vigil.cdp")

Handler = Callable[[dict, str | None], Awaitable[None] | None]


class CDPConnection:
    """One websocket to the browser endpoint; commands are addressed by session id."""

    def __init__(self, ws: Any, url: str):
        self._ws = ws
        self.url = url
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[asyncio.Future, str, str]] = {}
        self._handlers: dict[str, list[Handler]] = defaultdict(list)
        self._reader = asyncio.get_running_loop().create_task(self._read())
        self.closed = False
        self.close_reason = ""

    @classmethod
    async def connect(cls, ws_url: str) -> CDPConnection:
        # no per-message deflate to a browser on this machine: both ends spent CPU compressing every message
        # (measured ~7 ms of the event loop's time a step on the demo shop) to save nothing on a loopback socket
        host = urllib.parse.urlsplit(ws_url).hostname or ""
        local = host in ("localhost", "::1") or host.startswith("127.")
        ws = await websockets.connect(ws_url, max_size=None, ping_interval=None, open_timeout=10,
                                      compression=None if local else "deflate")
        return cls(ws, ws_url)

    def on(self, method: str, handler: Handler) -> None:
        self._handlers[method].append(handler)

    def off(self, method: str, handler: Handler) -> None:
        if handler in self._handlers.get(method, []):
            self._handlers[method].remove(handler)

    async def send(self, method: str, params: dict | None = None, session_id: str | None = None,
                   timeout: float | None = 30.0) -> dict:
        if self.closed:
            raise BrowserClosedError(f"The browser connection is closed ({self.close_reason or 'browser exited'}).")
        msg_id = next(self._ids)
        fut: asyncio.Future = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = (fut, method, session_id or "")
        msg: dict[str, Any] = {"id": msg_id, "method": method, "params": params or {}}
        if session_id:
            msg["sessionId"] = session_id
        try:
            await self._ws.send(json.dumps(msg))
            if timeout is None:
                return await fut
            return await asyncio.wait_for(fut, timeout)
        except TimeoutError:
            raise CDPTimeoutError(method, f"no answer within {timeout:.0f} s (the page may be busy or hung)") from None
        except websockets.ConnectionClosed as exc:
            self._fail_all(f"connection closed: {exc}")
            raise BrowserClosedError("The browser connection closed while waiting for "
                                     f"{method}. The browser may have crashed or been closed.") from None
        finally:
            self._pending.pop(msg_id, None)

    async def _read(self) -> None:
        try:
            async for raw in self._ws:
                msg = json.loads(raw)
                if "id" in msg:
                    entry = self._pending.get(msg["id"])
                    if entry is None:
                        continue
                    fut, method, _sid = entry
                    if fut.done():
                        continue
                    if "error" in msg:
                        err = msg["error"]
                        fut.set_exception(CDPError(method, err.get("message", str(err)), data=err.get("data")))
                    else:
                        fut.set_result(msg.get("result", {}))
                else:
                    method = msg.get("method", "")
                    for h in list(self._handlers.get(method, ())):
                        try:
                            r = h(msg.get("params", {}), msg.get("sessionId"))
                            if asyncio.iscoroutine(r):
                                asyncio.get_running_loop().create_task(_guard(r, method))
                        except Exception:  # a broken handler must not kill the reader
                            log.exception("CDP event handler for %s failed", method)
        except websockets.ConnectionClosed as exc:
            self.close_reason = str(exc) or "closed"
        except asyncio.CancelledError:
            self.close_reason = "closed by Vigil"
            raise
        finally:
            self.closed = True
            self._fail_all(self.close_reason or "closed")

    def fail_session(self, session_id: str, exc_factory: Callable[[str], Exception]) -> None:
        """Fail every command waiting on one session at once (its renderer died: no answer will come)."""
        for fut, method, sid in list(self._pending.values()):
            if sid == session_id and not fut.done():
                fut.set_exception(exc_factory(method))

    def _fail_all(self, reason: str) -> None:
        for fut, method, _sid in list(self._pending.values()):
            if not fut.done():
                fut.set_exception(BrowserClosedError(
                    f"The browser connection closed while waiting for {method} ({reason})."))
        self._pending.clear()

    async def close(self) -> None:
        self.closed = True
        self._reader.cancel()
        try:
            await self._ws.close()
        except Exception:
            pass
        try:
            await self._reader
        except BaseException:
            pass


async def _guard(coro: Awaitable[None], method: str) -> None:
    try:
        await coro
    except Exception as exc:  # keep going; log what broke
        log.debug("async CDP handler for %s failed: %s", method, exc)
