"""Playwright's own trace of a run while it runs (`vigil run --trace`), added to the trace built from the store.

Vigil acts over its own CDP socket, so Playwright's tracing sees none of its actions; what it does see is worth
keeping: every request and response with their status and headers (the Network tab), the page's console, and
DOM snapshots — Playwright takes one before and after each of its calls, so each step gets a group ("Step N —
Playwright's view") holding a no-op `evaluate` at its start and another when its record is written. Those run
beside the loop, not between its moves: a snapshot shows the page at about that moment.

The browser's context is traced without screenshots (Playwright's screencast would show a one-time code the
store's pictures paint over), and before the zip is kept it is scrubbed (`scrub_live`): every input's value in
the DOM snapshots is blanked (Playwright records them, passwords included), request bodies are dropped, call
parameters that carry text are blanked, and every secret the run typed is masked, in every form it can take, in
every text file. What is left goes into the exported zip as a second context (`live.trace`, `live.network`); the
viewer shows the two side by side on one timeline.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from engine.loop.runner import AgentLoop
from engine.models.loop import LoopEvent, StepProposed, StepRecorded
from engine.secret_values import scrub

log = logging.getLogger("vigil.store")

CALL_TIMEOUT_S = 3.0                     # a page that does not answer (a dialog is open) is not waited for
_VALUE = "__playwright_value_"            # where Playwright's DOM snapshots keep a form control's value
_TEXT_PARAMS = ("value", "text", "values", "files", "postData", "headers")  # call parameters that can carry input
_TEXT_FILES = (".html", ".htm", ".json", ".js", ".mjs", ".css", ".txt", ".xml", ".svg", ".csv")


class LiveTrace:
    """Playwright's tracing on the browser context of `loop`'s page for the length of a run."""

    def __init__(self, loop: AgentLoop) -> None:
        self.loop = loop
        self.context: Any = None
        self._queue: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None
        self._unsubscribe: Any = None

    async def start(self) -> bool:
        """Start tracing; False (logged) when the page's context cannot be traced (the run goes on without)."""
        page: Any = getattr(self.loop.page, "page", None)
        try:
            self.context = page.context
            await self.context.tracing.start(snapshots=True, screenshots=False, sources=False,
                                             title="the run as Playwright saw it")
        except Exception as exc:  # noqa: BLE001 - Playwright's errors, or a page that is not Playwright's
            log.warning("Playwright's tracing could not start: %s", exc)
            self.context = None
            return False
        self._unsubscribe = self.loop.bus.subscribe(self._on_event)
        self._worker = asyncio.ensure_future(self._work())
        return True

    def _on_event(self, ev: LoopEvent) -> None:
        if isinstance(ev, StepProposed):  # (its action's name only: its text may be a secret not yet known)
            self._queue.put_nowait(("begin", f"Step {ev.step_index + 1} — Playwright's view "
                                             f"({ev.proposal.action.name})"))
        elif isinstance(ev, StepRecorded):
            self._queue.put_nowait(("end", ""))

    async def _work(self) -> None:
        """One at a time, in the loop's order: open a step's group with a snapshot, close it with another."""
        open_group = False
        while True:
            what, title = await self._queue.get()
            if what == "stop":
                break
            if what == "begin":
                if open_group:
                    await self._call(self.context.tracing.group_end())
                open_group = await self._call(self.context.tracing.group(title))
                await self._snapshot()
            elif open_group:
                await self._snapshot()
                await self._call(self.context.tracing.group_end())
                open_group = False
        if open_group:
            await self._call(self.context.tracing.group_end())

    async def _snapshot(self) -> None:
        page = getattr(self.loop.page, "page", None)  # the loop's page now (it follows new tabs)
        if page is not None:
            await self._call(page.evaluate("0"))

    @staticmethod
    async def _call(aw: Any) -> bool:
        try:
            await asyncio.wait_for(aw, CALL_TIMEOUT_S)
            return True
        except Exception as exc:  # noqa: BLE001 - a closed or busy page: that moment has no snapshot
            log.debug("live trace call failed: %s", exc)
            return False

    async def stop(self, path: Path) -> Path | None:
        """Stop tracing into `path` (the raw zip: scrub it with `scrub_live` before it is kept); None when the
        trace could not be written."""
        if self.context is None:
            return None
        if self._unsubscribe is not None:
            self._unsubscribe()
        if self._worker is not None:
            self._queue.put_nowait(("stop", ""))
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._worker, 2 * CALL_TIMEOUT_S)
        try:
            await self.context.tracing.stop(path=str(path))
        except Exception as exc:  # noqa: BLE001 - the browser went away
            log.warning("Playwright's trace could not be written: %s", exc)
            return None
        return path


# -- scrubbing and merging ---------------------------------------------------------------------------
def scrub_live(raw: bytes, secrets: Iterable[str]) -> dict[str, bytes]:
    """The files of Playwright's trace zip `raw` to add to Vigil's, scrubbed (see the module docstring):
    `live.trace`, `live.network` and the resources they name."""
    known = tuple(secrets)
    out: dict[str, bytes] = {}
    with zipfile.ZipFile(io.BytesIO(raw)) as z:
        for name in z.namelist():
            data = z.read(name)
            if name == "trace.trace":
                out["live.trace"] = _lines(data, _clean_event, known)
            elif name == "trace.network":
                out["live.network"] = _lines(data, _clean_network, known)
            elif name.startswith("resources/"):
                out[name] = scrub(data, known) if name.lower().endswith(_TEXT_FILES) else data
            # trace.stacks (Vigil's own source lines) and anything else are left out
    return out


def _lines(data: bytes, clean: Any, secrets: tuple[str, ...]) -> bytes:
    rows = []
    for line in data.decode("utf-8", errors="replace").splitlines():
        if not line.strip():
            continue
        event = clean(json.loads(line))
        if event is not None:
            rows.append(scrub(json.dumps(event, ensure_ascii=False), secrets))
    return "".join(r + "\n" for r in rows).encode("utf-8")


def _clean_event(e: dict[str, Any]) -> dict[str, Any] | None:
    kind = e.get("type")
    if kind == "screencast-frame":
        return None  # (none is recorded: screenshots are off; a frame would show what the pictures paint over)
    if kind == "frame-snapshot":
        _blank_values(e.get("snapshot", {}).get("html"))
    if kind == "before" and isinstance(e.get("params"), dict):
        e["params"] = {k: ("" if k in _TEXT_PARAMS else v) for k, v in e["params"].items()}
    return e


def _blank_values(node: Any) -> None:
    """Blank every form control's value in a snapshot's node tree (elements are [tag, attrs, *children]; a
    reference to an earlier snapshot's node is [[n, i]], a text node a string)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if not isinstance(n, list) or not n or not isinstance(n[0], str):
            continue
        if len(n) > 1 and isinstance(n[1], dict) and _VALUE in n[1]:
            n[1][_VALUE] = ""
        stack.extend(n[2:] if len(n) > 1 and isinstance(n[1], dict) else n[1:])


def _clean_network(e: dict[str, Any]) -> dict[str, Any]:
    request = e.get("snapshot", {}).get("request")
    if isinstance(request, dict):
        request.pop("postData", None)  # a form's body: a password typed by the person is not a known secret
    return e
