"""JavaScript dialogs of one page: `DialogWatcher`.

While `alert`, `confirm`, `prompt` or `beforeunload` is open the page's main thread is stopped:
every script call into it and every input event waits. So dialogs are watched on the page's own
DevTools sessions (`Page.javascriptDialogOpening`), before anything else talks to the page, and
each one is answered by exactly one owner:

- an `alert` is acknowledged (OK) at once and kept in the log: it asks nothing;
- past `flood_limit` dialogs in one window (the loop opens one per step) every dialog is dismissed
  at once and the window is marked as a flood;
- an answer armed in advance (`arm()`: a planner's `dialog(accept)` step) answers the next one;
- else the `handler` decides (the loop: its approval policy and gate) — it may return None to leave
  the dialog open;
- else the dialog stays open (`pending`) until `answer()` is called (the Python API, the MCP
  server). While it is open, `blocked` is set so that snapshots fail fast instead of hanging.

A command that acts on the page (input events, a script that clicks) does not return while the page
is in a dialog. `send_through()` sends one such command and, while a dialog it raised is being
decided — a person may take minutes — waits for the decision instead of timing out; its timeout
runs afresh once the dialog is answered. When nobody decides, it times out as any command does.
`patient()` gives any wait the same clock (navigations: a beforeunload the person ponders).

Playwright would dismiss dialogs silently when nobody listens on the page: the browser registers a
listener that does nothing, so this watcher is the only one that answers.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

from engine.errors import CDPTimeoutError, VigilError
from engine.models.browsing import DialogAnswer, DialogInfo, DialogKind

T = TypeVar("T")

log = logging.getLogger("vigil.dialogs")

DialogHandler = Callable[[DialogInfo], Awaitable[DialogAnswer | None]]
FLOOD_LIMIT = 20      # dialogs in one window (one step of the loop) before the rest are dismissed unasked
HISTORY = 200         # dialogs kept in the log


class DialogWatcher:
    """The dialogs of one page (see the module docstring). `send(method, params, session_id)` is the
    page's CDP connection's send."""

    def __init__(self, send: Callable[..., Awaitable[dict]], *, flood_limit: int = FLOOD_LIMIT) -> None:
        self._send = send
        self.flood_limit = flood_limit
        self.handler: DialogHandler | None = None
        self.pending: DialogInfo | None = None
        self.log: collections.deque[DialogInfo] = collections.deque(maxlen=HISTORY)
        self.total = 0
        self.tab_index: Callable[[], int | None] = lambda: None
        self._pending_sid: str | None = None
        self._armed: DialogAnswer | None = None
        self._deciding = False
        self.blocked = asyncio.Event()          # a dialog is open and nobody is deciding it
        self._quiet = asyncio.Event()           # no dialog is open
        self._quiet.set()
        self._window_start = 0                  # `total` when the current window began
        self._window_flood = False
        self._window_first: list[DialogInfo] = []  # the first dialogs of the window (the log keeps the last)
        self._listeners: list[Callable[[DialogInfo], None]] = []
        self._tasks: set[asyncio.Task[Any]] = set()

    # -- windows (the loop's steps) ----------------------------------------------------------------
    def begin_window(self) -> None:
        """Start counting afresh (the loop calls this as each step begins)."""
        self._window_start = self.total
        self._window_flood = False
        self._window_first = []

    def window(self) -> tuple[list[DialogInfo], int, bool]:
        """(the first dialogs of the current window, how many there were in all, flood?)"""
        count = self.total - self._window_start
        return list(self._window_first), count, self._window_flood

    def arm(self, answer: DialogAnswer | None) -> None:
        """Answer the next confirm/prompt/beforeunload this way (None disarms)."""
        self._armed = answer

    @property
    def armed(self) -> DialogAnswer | None:
        return self._armed

    def on_dialog(self, fn: Callable[[DialogInfo], None]) -> Callable[[], None]:
        """Call `fn(dialog)` when a dialog opens and again when it is answered; returns a stop function."""
        self._listeners.append(fn)
        return lambda: self._listeners.remove(fn) if fn in self._listeners else None

    # -- CDP events --------------------------------------------------------------------------------
    def opened(self, p: dict, sid: str) -> None:
        kind = str(p.get("type") or "alert")
        if kind not in ("alert", "confirm", "prompt", "beforeunload"):
            kind = "alert"
        self.total += 1
        d = DialogInfo(id=self.total, kind=cast(DialogKind, kind), message=str(p.get("message") or ""),
                       url=str(p.get("url") or ""), default_prompt=str(p.get("defaultPrompt") or ""),
                       tab=self.tab_index())
        self.log.append(d)
        if len(self._window_first) < 10:
            self._window_first.append(d)
        self.pending, self._pending_sid = d, sid
        self._quiet.clear()
        self._notify(d)
        if self.total - self._window_start > self.flood_limit:
            self._window_flood = True
            d.flood = True
            self._spawn(self.answer(False, by="policy", reason=f"more than {self.flood_limit} dialogs in one step",
                                    dialog=d))
        elif kind == "alert":
            self._spawn(self.answer(True, by="policy", reason="an alert only informs", dialog=d))
        elif self._armed is not None:
            a, self._armed = self._armed, None
            self._spawn(self.answer(a.accept, a.text, by=a.by, reason=a.reason or "answered in advance", dialog=d))
        elif self.handler is not None:
            self._deciding = True
            self._spawn(self._ask_handler(d))
        else:
            self.blocked.set()

    def closed(self, p: dict, sid: str) -> None:
        d = self.pending
        if d is None or sid != self._pending_sid:
            return
        if d.answer is None:  # answered by someone else (the person in a headed window)
            d.answer = DialogAnswer(accept=bool(p.get("result")), text=p.get("userInput") or None, by="page",
                                    reason="closed outside Vigil")
        self._clear(d)

    # -- answering -----------------------------------------------------------------------------------
    async def answer(self, accept: bool, text: str | None = None, *, by: str = "api", reason: str = "",
                     dialog: DialogInfo | None = None) -> DialogInfo:
        """Answer the open dialog (OK/Cancel, with `text` for a prompt). VigilError when none is open."""
        d = self.pending if dialog is None else dialog
        if d is None or d is not self.pending:
            raise VigilError("No dialog is open on this page to answer.")
        sid = self._pending_sid
        params: dict[str, Any] = {"accept": bool(accept)}
        if text is not None and d.kind == "prompt":
            params["promptText"] = text
        d.answer = DialogAnswer(accept=bool(accept), text=text if d.kind == "prompt" and accept else None,
                                by=cast(Any, by), reason=reason)
        try:
            await self._send("Page.handleJavaScriptDialog", params, session_id=sid, timeout=10)
        except VigilError as exc:
            if "No dialog is showing" not in str(exc):
                log.debug("could not answer the dialog: %s", exc)
        self._clear(d)
        return d

    async def _ask_handler(self, d: DialogInfo) -> None:
        handler = self.handler
        try:
            a = await handler(d) if handler is not None else None
        except Exception:  # a handler's bug must not leave the page stopped
            log.exception("dialog handler failed")
            a = DialogAnswer(accept=False, by="policy", reason="the dialog handler failed")
        finally:
            self._deciding = False
        if d is not self.pending:
            return  # closed meanwhile
        if a is None:
            self.blocked.set()
            return
        await self.answer(a.accept, a.text, by=a.by, reason=a.reason, dialog=d)

    def _clear(self, d: DialogInfo) -> None:
        if self.pending is d:
            self.pending, self._pending_sid = None, None
            self.blocked.clear()
            self._quiet.set()
        self._notify(d)

    def _notify(self, d: DialogInfo) -> None:
        for fn in list(self._listeners):
            try:
                fn(d)
            except Exception:
                log.exception("dialog listener failed")

    def _spawn(self, aw: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(aw)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def wait_blocked(self) -> DialogInfo:
        """Return when a dialog is open that nobody is deciding (for racing page calls against it)."""
        while True:
            await self.blocked.wait()
            if self.pending is not None:
                return self.pending
            self.blocked.clear()

    @property
    def deciding(self) -> bool:
        """A dialog is open and someone is deciding it (the loop's handler, an answer on its way)."""
        return self.pending is not None and not self.blocked.is_set()

    async def wait_decided(self) -> None:
        """Return when no dialog is being decided: none is open, or the open one waits for nobody."""
        while self.deciding:
            quiet = asyncio.ensure_future(self._quiet.wait())
            blocked = asyncio.ensure_future(self.blocked.wait())
            try:
                await asyncio.wait({quiet, blocked}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                quiet.cancel()
                blocked.cancel()

    async def send_through(self, method: str, params: dict | None = None, *, session_id: str | None,
                           timeout: float) -> dict:
        """Send a command that may raise a dialog; CDPTimeoutError after `timeout` s without an answer —
        except that while a dialog is being decided the wait goes on until it is answered, and then
        `timeout` starts again (the page runs on from the dialog and answers the command)."""
        try:
            return await self.patient(self._send(method, params, session_id=session_id, timeout=None), timeout)
        except TimeoutError:
            raise CDPTimeoutError(method, f"no answer within {timeout:.0f} s (the page may be busy or hung)") from None

    async def patient(self, aw: Awaitable[T], timeout: float) -> T:
        """Await `aw` for up to `timeout` s of the page's own time: while a dialog it raised is being
        decided (a person may take minutes), the clock stops, and starts again once it is answered.
        asyncio.TimeoutError when the time runs out; `aw` is cancelled then."""
        fut = asyncio.ensure_future(aw)
        try:
            while True:
                done, _ = await asyncio.wait({fut}, timeout=timeout)
                if done:
                    return fut.result()
                if not self.deciding:
                    raise TimeoutError
                await self.wait_decided()
        finally:
            if not fut.done():
                fut.cancel()
                await asyncio.gather(fut, return_exceptions=True)

    def close(self) -> None:
        for t in list(self._tasks):
            t.cancel()
        with contextlib.suppress(Exception):
            self.blocked.clear()


def describe_open(d: DialogInfo) -> str:
    """What a caller is told while a dialog blocks the page."""
    age = time.time() - d.opened_at
    return (f"A dialog is open on the page: {d.call()} (for {age:.0f} s). The page is stopped until it is "
            "answered: answer it with dialog(accept) — OK — or dialog(false) — Cancel.")
