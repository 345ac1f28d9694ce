"""ToolFailure: a tool call that cannot go ahead, told to the client as a clear message with a stable code."""

from __future__ import annotations


class ToolFailure(Exception):
    """A tool call that cannot go ahead: a clear message for the client, with a stable code."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message
