"""`vigil COMMAND …` run in the test's own process through engine.cli.main, for tests whose point is what a
command prints and keeps, not the process boundary: it spares each call the second of Python start-up and
imports a `python -m engine.cli` process pays (the browser a command launches is launched all the same)."""

from __future__ import annotations

import contextlib
import io
import subprocess

from engine.cli import main


def vigil_in_process(*args: str) -> subprocess.CompletedProcess:
    """Run one command; its exit status and what it wrote to stdout and stderr, as `subprocess.run` gives them."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse's errors: the status `python -m engine.cli` would exit with
            code = exc.code if isinstance(exc.code, int) else 1
    return subprocess.CompletedProcess(["vigil", *args], code, out.getvalue(), err.getvalue())
