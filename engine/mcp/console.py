"""The page's console messages and uncaught errors, kept per tab for `browser_console_messages`.

Playwright reports them on the tab's page (`console` and `pageerror` events); the last 300 are
kept in memory, each with the navigation it came after, so a client can ask for the messages
since the last navigation (the default) or all of them.
"""

from __future__ import annotations

import collections
import time
from dataclasses import dataclass
from typing import Any

LEVELS = ("error", "warning", "info", "debug")
_RANK = {lvl: i for i, lvl in enumerate(LEVELS)}
_TYPE_LEVEL = {"error": "error", "assert": "error", "warning": "warning", "debug": "debug", "trace": "debug",
               "verbose": "debug"}
MAX_KEPT = 300
MAX_TEXT = 500


@dataclass(frozen=True)
class ConsoleMessage:
    level: str      # error, warning, info, debug
    kind: str       # the console call (log, error, warn …) or "pageerror"
    text: str
    where: str      # url:line, when known
    at: float
    navigation: int  # how many main-frame navigations came before it

    def line(self) -> str:
        text = self.text if len(self.text) <= MAX_TEXT else self.text[: MAX_TEXT - 1] + "…"
        return f"[{self.level}] {text}" + (f" ({self.where})" if self.where else "")


class ConsoleLog:
    """Attach to a Playwright page with `attach(page)`; read with `messages(level, all)`."""

    def __init__(self) -> None:
        self._kept: collections.deque[ConsoleMessage] = collections.deque(maxlen=MAX_KEPT)
        self.navigations = 0

    def attach(self, page: Any) -> None:
        page.on("console", self._on_console)
        page.on("pageerror", self._on_error)
        page.on("framenavigated", self._on_navigated)

    def _on_navigated(self, frame: Any) -> None:
        try:
            if frame.parent_frame is None:
                self.navigations += 1
        except Exception:  # noqa: BLE001 - a detached frame; nothing to count
            pass

    def _on_console(self, msg: Any) -> None:
        try:
            kind = msg.type
            loc = msg.location or {}
            where = f"{loc.get('url', '')}:{loc.get('lineNumber', 0) + 1}" if loc.get("url") else ""
            self._add(_TYPE_LEVEL.get(kind, "info"), kind, msg.text, where)
        except Exception:  # noqa: BLE001 - a message from a page that went away
            pass

    def _on_error(self, err: Any) -> None:
        text = getattr(err, "message", None) or str(err)
        self._add("error", "pageerror", f"Uncaught {getattr(err, 'name', '') or 'error'}: {text}".replace(
            "Uncaught Error: Error: ", "Uncaught Error: "), "")

    def _add(self, level: str, kind: str, text: str, where: str) -> None:
        self._kept.append(ConsoleMessage(level, kind, text or "", where, time.time(), self.navigations))

    def messages(self, level: str = "info", all_: bool = False) -> list[ConsoleMessage]:
        """Messages at `level` or more severe; since the last navigation unless `all_`."""
        if level not in _RANK:
            raise ValueError(f"Unknown level {level!r}: use one of {', '.join(LEVELS)}.")
        top = _RANK[level]
        return [m for m in self._kept if _RANK[m.level] <= top and (all_ or m.navigation >= self.navigations)]
