"""`vigil mcp` and `vigil bench mcp` are commands of the `vigil` program itself: their help, a bad option,
and a whole stdio session through the `vigil` command with the MCP SDK's own client (real Chromium)."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path

from engine.mcp.probe import stdio_probe

from test_mcp import ROOT, items_of, ref


def _vigil() -> list[str]:
    """The installed `vigil` script next to this interpreter (the one a client's config names)."""
    exe = Path(sys.executable).parent / "vigil"
    found = str(exe) if exe.exists() else shutil.which("vigil")
    assert found, "the vigil command is not installed (pip install -e .)"
    return [found]


def _vigil_run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*_vigil(), *args], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def test_vigil_mcp_and_vigil_bench_mcp_have_help():
    top = _vigil_run("--help")
    assert top.returncode == 0 and "mcp" in top.stdout and "serve the browser to MCP clients" in top.stdout
    out = _vigil_run("mcp", "--help")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage: vigil mcp") and "--approve {ask,auto,auto-safe}" in out.stdout
    assert "--http PORT" in out.stdout
    bench = _vigil_run("bench", "mcp", "--help")
    assert bench.returncode == 0 and bench.stdout.startswith("usage: vigil bench mcp"), bench.stderr
    assert "--no-playwright" in bench.stdout


def test_vigil_mcp_bad_option_is_a_clear_error_not_a_traceback():
    out = _vigil_run("mcp", "--approve", "sometimes")
    assert out.returncode == 2 and "invalid choice: 'sometimes'" in out.stderr and "Traceback" not in out.stderr
    out = _vigil_run("bench", "mcp", "--pages", "nowhere")
    assert out.returncode == 2 and "unknown page(s) nowhere" in out.stderr, out.stderr


def test_a_stdio_session_through_the_vigil_command(server, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "VIGIL_MCP_TOKEN"}
    env["VIGIL_HOME"] = str(tmp_path)
    cmd = _vigil()

    async def session() -> tuple[list[str], str]:
        with open(tmp_path / "stderr.txt", "w+", encoding="utf-8") as errlog:
            async with stdio_probe(cmd[0], ["mcp", "--approve", "auto"], env=env, cwd=str(ROOT), errlog=errlog,
                                   client_name="cli-test", timeout=120) as probe:
                tools = await probe.tools()
                nav = await probe.call("browser_navigate", {"url": server.url("mcp_shop.html")})
                assert not nav.is_error, nav.text
                click = await probe.call("browser_click", {"ref": ref(items_of(nav), "Add to cart"),
                                                           "element": "Add to cart button"})
                return tools, click.text

    tools, clicked = asyncio.run(asyncio.wait_for(session(), 180))
    assert "browser_navigate" in tools and "browser_click" in tools
    assert "done, verified" in clicked, clicked
    said = (tmp_path / "stderr.txt").read_text(encoding="utf-8")
    assert "serving MCP over stdio" in said and "kept as session" in said, said
