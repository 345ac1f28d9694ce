"""Finding a Chromium to drive, and the flags it needs on a closed network."""

from __future__ import annotations

import glob
import os
import shutil
from pathlib import Path

from engine.errors import BrowserNotFoundError

DEBIAN_CHROMIUM = "/usr/bin/chromium"

FIX = ("Install Debian's Chromium with `sudo apt-get install chromium` (or run `make run`, which "
       "does it), or point VIGIL_CHROMIUM at a Chromium/Chrome executable.")

# Flags measured to work on these machines: no background traffic on a closed network,
# no GPU, and no first-run UI.
BASE_FLAGS = [
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
]


def running_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _playwright_managed() -> str | None:
    base = os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or str(Path.home() / ".cache" / "ms-playwright")
    for pattern in ("chromium-*/chrome-linux*/chrome", "chromium-*/chrome-mac*/Chromium.app/Contents/MacOS/Chromium",
                    "chromium-*/chrome-win*/chrome.exe"):
        found = sorted(glob.glob(os.path.join(base, pattern)))
        if found:
            return found[-1]
    return None


def find_chromium() -> str:
    """VIGIL_CHROMIUM, then Debian's /usr/bin/chromium, then a Playwright-managed Chromium."""
    env = os.environ.get("VIGIL_CHROMIUM")
    if env:
        path = shutil.which(env) or env
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
        raise BrowserNotFoundError(f"VIGIL_CHROMIUM is set to {env!r}, which is not an executable file. "
                                   f"Fix the path or unset it. {FIX}")
    if os.path.isfile(DEBIAN_CHROMIUM) and os.access(DEBIAN_CHROMIUM, os.X_OK):
        return DEBIAN_CHROMIUM
    managed = _playwright_managed()
    if managed:
        return managed
    raise BrowserNotFoundError(f"No Chromium found (looked at VIGIL_CHROMIUM, {DEBIAN_CHROMIUM} and "
                               f"Playwright's browser cache). {FIX}")
