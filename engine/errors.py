"""Typed errors and the one list of error codes. Every message says what went wrong and what to do.

`ErrorCode` is every code Vigil raises or reports: error classes default to one, raise sites pass
one where the remedy differs from the class's default, and `ActionResult.error_code` holds one. The
values are the strings stored sessions, JSON traces and the backend contract carry (a `StrEnum`
member is that string: it compares, prints and serializes as it), so data written before the enum
still loads."""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    """What went wrong, machine-readably (the message says it for people and models)."""

    ERROR = "ERROR"                          # no more precise code applies
    BAD_ARGUMENT = "BAD_ARGUMENT"            # a caller passed something unusable (an option, a path, a size)
    # the browser
    BROWSER_NOT_FOUND = "BROWSER_NOT_FOUND"  # no Chromium to launch
    LAUNCH_FAILED = "LAUNCH_FAILED"          # Chromium would not start, or no DevTools endpoint to attach to
    BROWSER_CLOSED = "BROWSER_CLOSED"        # the tab or the browser went away: launch again
    TAB_CRASHED = "TAB_CRASHED"              # the renderer died: reload or open a new tab
    CDP_ERROR = "CDP_ERROR"                  # a DevTools command failed
    CDP_TIMEOUT = "CDP_TIMEOUT"              # a DevTools command got no answer in time: the page is busy or hung
    # navigation
    BAD_URL = "BAD_URL"                      # not a URL Vigil opens (scheme, missing file)
    NAVIGATION_FAILED = "NAVIGATION_FAILED"  # the page could not be opened (DNS, refused, aborted …)
    NAVIGATION_TIMEOUT = "NAVIGATION_TIMEOUT"  # the page did not finish loading in time: wait, or raise the timeout
    NO_CONTEXT = "NO_CONTEXT"                # a frame has no live document (loading, detached): snapshot again
    # snapshots
    SNAPSHOT_FAILED = "SNAPSHOT_FAILED"      # the page's snapshot script failed
    SNAPSHOT_TIMEOUT = "SNAPSHOT_TIMEOUT"    # the page did not answer the snapshot in time: a script may be stuck
    NAVIGATED = "NAVIGATED"                  # the page kept navigating during the snapshot: wait for it to settle
    BAD_STORED_SNAPSHOT = "BAD_STORED_SNAPSHOT"  # stored snapshot bytes that cannot be read
    # acting on a node (ActionResult.error_code)
    NOT_FOUND = "NOT_FOUND"                  # no such node ID (or option) on the page
    STALE = "STALE"                          # the element went away and nothing like it replaced it
    OCCLUDED = "OCCLUDED"                    # something covers the element
    NOT_ACTIONABLE = "NOT_ACTIONABLE"        # the element cannot take this action (hidden, not a field …)
    DISABLED = "DISABLED"                    # the element is disabled
    VALUE_MISMATCH = "VALUE_MISMATCH"        # the field or widget does not hold what was typed or chosen
    NO_EFFECT = "NO_EFFECT"                  # the action ran and changed nothing it should have
    REFUSED = "REFUSED"                      # the loop would not run the step (an invalid edit)
    TARGET_CHANGED = "TARGET_CHANGED"        # the approved target changed before the step ran: nothing ran, ask again
    MISDIRECTED = "MISDIRECTED"              # the step's input reached another element than the approved one
    BLOCKED = "BLOCKED"                      # the browser held what the step was not approved for (leaving the
                                             # site, a download) and it was refused
    TIMEOUT = "TIMEOUT"                      # stored before navigation and snapshot timeouts were told apart
    # what a page does besides its document (issue [9]): dialogs, tabs, uploads
    DIALOG_OPEN = "DIALOG_OPEN"              # a JavaScript dialog stops the page: answer it with dialog(accept)
    NO_DIALOG = "NO_DIALOG"                  # dialog(...) with no dialog open to answer
    NO_TAB = "NO_TAB"                        # switch_tab/close_tab to an index with no tab
    BAD_FILE = "BAD_FILE"                    # an upload path that does not exist, is not a file or not readable
    NO_FILE_INPUT = "NO_FILE_INPUT"          # upload on an element that is not (and names no) file input
    # pictures
    SCREENSHOT_FAILED = "SCREENSHOT_FAILED"
    # plans, planners and the approval gate
    BAD_SCRIPT = "BAD_SCRIPT"                # a scripted plan that cannot be read
    BAD_ACTION = "BAD_ACTION"                # an action string such as click(12) that cannot be parsed
    PLANNER_CONFIG = "PLANNER_CONFIG"        # a model planner is missing its model or prompt
    PLANNER_FAILED = "PLANNER_FAILED"        # the planner raised or returned something that is not a step
    GATE_FAILED = "GATE_FAILED"              # the approval gate raised or returned something that is not a decision
    # the backend request's error for the last step (seed 001): it ran and failed, its check failed, or the
    # person declined it (STALE: the page changed while it waited for approval)
    ACTION_FAILED = "ACTION_FAILED"
    VERIFICATION_FAILED = "VERIFICATION_FAILED"
    REJECTED = "REJECTED"
    SKIPPED = "SKIPPED"
    TAKEN_OVER = "TAKEN_OVER"
    FAILED = "FAILED"
    # the session store
    STORE_UNAVAILABLE = "STORE_UNAVAILABLE"
    STORE_CORRUPT = "STORE_CORRUPT"
    STORE_TOO_NEW = "STORE_TOO_NEW"
    STORE_NO_SESSION = "STORE_NO_SESSION"
    STORE_AMBIGUOUS = "STORE_AMBIGUOUS"
    STORE_BUSY = "STORE_BUSY"
    STORE_BAD_STATUS = "STORE_BAD_STATUS"
    STORE_NO_BLOB = "STORE_NO_BLOB"
    STORE_ERROR = "STORE_ERROR"
    NOTHING_TO_REPLAY = "NOTHING_TO_REPLAY"
    # the MCP server
    PORT_UNAVAILABLE = "PORT_UNAVAILABLE"    # its HTTP port is taken
    # benchmarks
    CORPUS_MISSING = "CORPUS_MISSING"
    MINIWOB_MISSING = "MINIWOB_MISSING"


class VigilError(Exception):
    """Base class: `code` is stable and machine-readable, the message is for humans and models."""

    code: ErrorCode = ErrorCode.ERROR

    def __init__(self, message: str, *, code: ErrorCode | None = None):
        super().__init__(message)
        if code is not None:
            self.code = ErrorCode(code)  # a string that is not a code fails here, not silently downstream

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else self.code.value


class BrowserNotFoundError(VigilError):
    code = ErrorCode.BROWSER_NOT_FOUND


class BrowserLaunchError(VigilError):
    code = ErrorCode.LAUNCH_FAILED


class BrowserClosedError(VigilError):
    code = ErrorCode.BROWSER_CLOSED


class TabCrashedError(VigilError):
    code = ErrorCode.TAB_CRASHED


class NavigationError(VigilError):
    """BAD_URL, NAVIGATION_FAILED (the default), NAVIGATION_TIMEOUT or NO_CONTEXT."""

    code = ErrorCode.NAVIGATION_FAILED


class NoContextError(NavigationError):
    """A frame has no live document to run in (it is loading, detached or blocked)."""

    code = ErrorCode.NO_CONTEXT


class SnapshotError(VigilError):
    """SNAPSHOT_FAILED (the default), SNAPSHOT_TIMEOUT, NAVIGATED or BAD_STORED_SNAPSHOT."""

    code = ErrorCode.SNAPSHOT_FAILED


class DialogOpenError(SnapshotError):
    """A JavaScript dialog stops the page (DIALOG_OPEN): answer it, then look again."""

    code = ErrorCode.DIALOG_OPEN


class UnknownNodeError(VigilError):
    """NOT_FOUND (the default) or STALE."""

    code = ErrorCode.NOT_FOUND


class CDPError(VigilError):
    """A DevTools protocol command failed (CDP_ERROR), or got no answer in time (CDPTimeoutError)."""

    code = ErrorCode.CDP_ERROR

    def __init__(self, method: str, message: str, *, data: str | None = None):
        self.method = method
        self.detail = message
        self.data = data
        super().__init__(f"{method} failed: {message}" + (f" ({data})" if data else ""))

    @property
    def context_gone(self) -> bool:
        """The document (or its execution context) went away mid-command: a navigation."""
        text = f"{self.detail} {self.data or ''}".lower()
        return any(s in text for s in ("context was destroyed", "cannot find context", "no frame",
                                        "target closed", "session with given id not found",
                                        "inspected target navigated", "cannot find default execution context"))


class CDPTimeoutError(CDPError):
    """A DevTools command got no answer within its timeout: the page is busy or hung."""

    code = ErrorCode.CDP_TIMEOUT


class ScreenshotError(VigilError):
    """A screenshot could not be taken (the page did not paint, or the capture command failed)."""

    code = ErrorCode.SCREENSHOT_FAILED


class ScriptError(VigilError):
    """A scripted plan could not be read; the message names the step and the problem."""

    code = ErrorCode.BAD_SCRIPT


class ActionStringError(VigilError):
    """An action string such as `click(12)` could not be parsed."""

    code = ErrorCode.BAD_ACTION
