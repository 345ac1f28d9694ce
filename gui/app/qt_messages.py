"""Qt's own console messages, minus the ones that say nothing to a person: the offscreen platform reports
each window's size hints it cannot pass on ("This plugin does not support propagateSizeHints()"), which
is how that platform works, not a problem. Every other message goes out as Qt would print it."""

from __future__ import annotations

import sys

from PySide6.QtCore import QMessageLogContext, QtMsgType, qInstallMessageHandler

QUIET = ("This plugin does not support propagateSizeHints()",)


def _handler(kind: QtMsgType, context: QMessageLogContext, message: str) -> None:
    if any(message.startswith(q) for q in QUIET):
        return
    print(message, file=sys.stderr, flush=True)


def install() -> None:
    """Route Qt's messages through the filter above (once per process; later calls change nothing)."""
    qInstallMessageHandler(_handler)
