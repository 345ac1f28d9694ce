"""Where Vigil's runtime files are: the one place that finds them.

The top-level assets/ folder (the demo shop, the planner's prompt, the icon) is installed as the package
`vigil_assets` (pyproject.toml's package-dir), in a wheel as in the checkout's editable install, so that a `vigil`
installed with pip or pipx finds them from any folder — never by a path built from this file's location."""

from __future__ import annotations

import importlib.resources
from pathlib import Path

from engine.errors import ErrorCode, VigilError

PACKAGE = "vigil_assets"


def asset(*parts: str) -> Path:
    """A file or folder under assets/, e.g. `asset("demo")`, `asset("prompts", "planner_system.md")`.

    A real path, not a resource handle: the demo folder is served by an HTTP server and Chromium opens its files.
    Whether it exists is the caller's question (a missing prompt is worded where it is read)."""
    try:
        root = importlib.resources.files(PACKAGE)
    except ModuleNotFoundError:
        raise VigilError(f"Vigil's runtime files (the package {PACKAGE}) are not installed: reinstall Vigil "
                         "(`pip install .`, `pipx install .`, or `make setup` in a checkout).",
                         code=ErrorCode.ERROR) from None
    if not isinstance(root, Path):  # only a zipped install would do this; pip and pipx always unpack wheels
        raise VigilError(f"Vigil's runtime files are inside an archive ({root}); install Vigil unpacked "
                         "(`pip install .` or `pipx install .`).", code=ErrorCode.ERROR)
    return root.joinpath(*parts)
