"""A Debian tool a test needs: the test fails naming the package when it is missing (never skips)."""

from __future__ import annotations

import shutil

import pytest


def need(command: str, package: str) -> str:
    """The path of `command`; else the test fails saying which Debian package gives it."""
    path = shutil.which(command)
    if path is None:
        pytest.fail(f"{command} is not installed: install Debian's `{package}` package (`make setup` does it).")
    return path
