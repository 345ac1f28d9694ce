"""The command line as a new user meets it (issue [4/7], items 8 and 9): `vigil --help` lists every command,
the window's `gui` too; a reader that closes the pipe early (`vigil sessions | head -1`) gets no traceback;
`vigil mcp` says it is starting before its libraries load."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from support.mcp_server import vigil_script as _vigil
from support.paths import ROOT


def test_help_lists_the_window_command():
    out = subprocess.run([*_vigil(), "--help"], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    listed = out.stdout.split("positional arguments:")[1].split("options:")[0]
    for cmd in ("gui", "run", "snapshot", "sessions", "export", "replay", "mcp", "bench"):
        assert f"\n    {cmd} " in listed, (cmd, listed)
    assert "open the supervisor window" in listed


def test_a_closed_pipe_ends_quietly(tmp_path):
    """The reader is gone before the first line is written: the write fails with EPIPE, every time."""
    env = {**os.environ, "VIGIL_HOME": str(tmp_path)}
    for args in (["sessions"], ["sessions", "--json"], ["--help"]):
        r, w = os.pipe()
        os.close(r)  # nobody will ever read
        proc = subprocess.Popen([*_vigil(), *args], stdout=w, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)
        os.close(w)
        _, err = proc.communicate(timeout=60)
        assert "Traceback" not in err and "BrokenPipe" not in err, (args, err)
        assert proc.returncode == 0, (args, proc.returncode, err)


def test_mcp_says_it_is_starting_at_once(tmp_path):
    env = {**os.environ, "VIGIL_HOME": str(tmp_path)}
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "engine.mcp", "--http", "0", "--approve", "auto-safe"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            cwd=ROOT, env=env)
    try:
        first = proc.stderr.readline()
        assert first.startswith("vigil mcp: starting"), first
        lines = [first]
        while "serving MCP" not in lines[-1] and time.monotonic() - t0 < 60:
            lines.append(proc.stderr.readline())
        assert "serving MCP" in lines[-1], lines
        assert lines.index(first) == 0, "the starting line comes before the address and the token"
    finally:
        proc.terminate()
        proc.wait(30)
