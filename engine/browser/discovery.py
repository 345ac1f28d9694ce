"""Finding a Chromium to drive, and the flags it needs on a closed network."""

from __future__ import annotations

import glob
import os
import shlex
import shutil
import sys
from pathlib import Path

from engine.errors import BrowserNotFoundError

DEBIAN_CHROMIUM = "/usr/bin/chromium"
# Chromium's headless shell (Debian's `chromium-headless-shell`, the same engine without the browser's UI layer):
# on these machines it opens, loads and snapshots a page for under half the CPU of the full browser running
# headless (20 tabs: 2.8 s of CPU vs 6.4 s; a launch 0.6 s vs 1.1 s). Playwright drives its own copy of it
# for headless runs for the same reason. Used for headless launches when it is installed.
DEBIAN_HEADLESS_SHELL = "/usr/bin/chromium-headless-shell"

# names this interpreter's own playwright, so the command works as printed for a pip, pipx or checkout install
FIX = ("Install Debian's Chromium with `sudo apt-get install chromium` (in a checkout `make run` does it), or "
       f"Playwright's with `{shlex.quote(sys.executable)} -m playwright install chromium`, or point VIGIL_CHROMIUM "
       "at a Chromium/Chrome executable.")

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
    # every site in its own renderer, as desktop Chrome does: the headless shell leaves it off, and then a
    # cross-site iframe would live in its parent's process (not the out-of-process frame real pages meet)
    "--site-per-process",
]


def running_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _playwright_managed(headless: bool = False) -> str | None:
    base = os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or str(Path.home() / ".cache" / "ms-playwright")
    patterns = ["chromium_headless_shell-*/chrome-linux*/headless_shell"] if headless else []
    patterns += ["chromium-*/chrome-linux*/chrome", "chromium-*/chrome-mac*/Chromium.app/Contents/MacOS/Chromium",
                 "chromium-*/chrome-win*/chrome.exe"]
    for pattern in patterns:
        found = sorted(glob.glob(os.path.join(base, pattern)))
        if found:
            return found[-1]
    return None


def _executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def find_chromium(headless: bool = False) -> str:
    """VIGIL_CHROMIUM, then (headless) Debian's headless shell, then Debian's /usr/bin/chromium, then a
    Playwright-managed Chromium (its headless shell first, headless)."""
    env = os.environ.get("VIGIL_CHROMIUM")
    if env:
        path = shutil.which(env) or env
        if _executable(path):
            return path
        raise BrowserNotFoundError(f"VIGIL_CHROMIUM is set to {env!r}, which is not an executable file. "
                                   f"Fix the path or unset it. {FIX}")
    if headless and _executable(DEBIAN_HEADLESS_SHELL):
        return DEBIAN_HEADLESS_SHELL
    if _executable(DEBIAN_CHROMIUM):
        return DEBIAN_CHROMIUM
    managed = _playwright_managed(headless)
    if managed:
        return managed
    raise BrowserNotFoundError(f"No Chromium found (looked at VIGIL_CHROMIUM, {DEBIAN_CHROMIUM} and "
                               f"Playwright's browser cache). {FIX}")
