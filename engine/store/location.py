"""Where the session store lives: `VIGIL_HOME`, else the user data dir for "vigil"."""

from __future__ import annotations

import os
from pathlib import Path

DB_NAME = "sessions.db"


def store_dir() -> Path:
    """`VIGIL_HOME` if set, else the user data dir for "vigil"."""
    home = os.environ.get("VIGIL_HOME")
    if home:
        return Path(home).expanduser()
    import platformdirs
    return Path(platformdirs.user_data_dir("vigil", appauthor=False))


def default_path() -> Path:
    return store_dir() / DB_NAME
