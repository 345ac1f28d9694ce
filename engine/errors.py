"""Typed errors. Every message says what went wrong and what to do about it."""

from __future__ import annotations


class VigilError(Exception):
    """Base class: `code` is stable and machine-readable, the message is for humans and models."""

    code = "ERROR"

    def __init__(self, message: str, *, code: str | None = None):
        super().__init__(message)
        if code:
            self.code = code

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else self.code


class BrowserNotFoundError(VigilError):
    code = "BROWSER_NOT_FOUND"


class BrowserLaunchError(VigilError):
    code = "LAUNCH_FAILED"


class BrowserClosedError(VigilError):
    code = "BROWSER_CLOSED"


class TabCrashedError(VigilError):
    code = "TAB_CRASHED"


class NavigationError(VigilError):
    code = "NAVIGATION_FAILED"


class SnapshotError(VigilError):
    code = "SNAPSHOT_FAILED"


class UnknownNodeError(VigilError):
    code = "NOT_FOUND"


class CDPError(VigilError):
    """A DevTools protocol command failed."""

    code = "CDP_ERROR"

    def __init__(self, method: str, message: str, *, data: str | None = None, code: str | None = None):
        self.method = method
        self.detail = message
        self.data = data
        super().__init__(f"{method} failed: {message}" + (f" ({data})" if data else ""), code=code)

    @property
    def context_gone(self) -> bool:
        """The document (or its execution context) went away mid-command: a navigation."""
        text = f"{self.detail} {self.data or ''}".lower()
        return any(s in text for s in ("context was destroyed", "cannot find context", "no frame",
                                        "target closed", "session with given id not found",
                                        "inspected target navigated", "cannot find default execution context"))


class ScreenshotError(VigilError):
    """A screenshot could not be taken (the page did not paint, or the capture command failed)."""

    code = "SCREENSHOT_FAILED"


class ScriptError(VigilError):
    """A scripted plan could not be read; the message names the step and the problem."""

    code = "BAD_SCRIPT"


class ActionStringError(VigilError):
    """An action string such as `click(12)` could not be parsed."""

    code = "BAD_ACTION"
