"""xvfb-run for tests on several pytest-xdist workers at once.

`xvfb-run -a` picks the first free display from 99 up, and two workers starting at the same moment can pick the same
one (its lock file is not taken yet), one X server then failing. Each worker starts its search at a display of its
own instead. (Not `xdist_group`: pytest-xdist 3.8 under pytest 9 does not keep a group on one worker here.)"""

from __future__ import annotations

import os


def xvfb_run(screen: str) -> list[str]:
    """The xvfb-run command line (before the command) for an X screen `screen` ("1366x768x24")."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    n = int(worker[2:]) if worker[2:].isdigit() else 0
    return ["xvfb-run", "-a", "-n", str(200 + 40 * n), "-s", f"-screen 0 {screen}"]
