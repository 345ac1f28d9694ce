"""Whether a window can be opened here: the words to say when there is no display (Linux without X11,
Wayland or a Qt platform given). Its own module so that every way of opening a window (gui.app.window_app,
gui.app.fleet_app) asks the same question without importing one another."""

from __future__ import annotations

import os
import sys


def display_problem() -> str | None:
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
                                                 or os.environ.get("QT_QPA_PLATFORM")):
        return ("No display to open the window on. Run Vigil in a desktop session, under `xvfb-run vigil gui …`, "
                "or take a picture without a display: QT_QPA_PLATFORM=offscreen vigil gui URL --screenshot out.png "
                "--quit-after-load.")
    return None
