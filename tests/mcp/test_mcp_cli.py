"""`vigil mcp` and `vigil bench mcp` are commands of the `vigil` program itself: their help, a bad option,
and a whole stdio session through the `vigil` command with the MCP SDK's own client (real Chromium)."""

from __future__ import annotations

import asyncio
import os

from engine.mcp.probe import stdio_probe

from support.mcp_server import ROOT, items_of, ref
from support.mcp_server import vigil_script as _vigil


def _vigil_run(capsys, *args: str) -> tuple[int, str, str]:
    """`vigil ARGS` in this process (gui.launcher.main hands every command but the window to the engine)."""
    from gui.app.launcher import main

    try:
        code = main(list(args))
    except SystemExit as exc:  # argparse: --help, or a bad option
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_vigil_mcp_and_vigil_bench_mcp_have_help(capsys):
    code, out, _ = _vigil_run(capsys, "--help")
    assert code == 0 and "serve the browser to MCP clients" in out
    code, out, err = _vigil_run(capsys, "mcp", "--help")
    assert code == 0, err
    assert out.startswith("usage: vigil mcp") and "--approve {ask,auto,auto-safe}" in out and "--http PORT" in out
    assert "grants" in out and "--grant KIND@SITE" in out
    code, out, err = _vigil_run(capsys, "bench", "mcp", "--help")
    assert code == 0 and out.startswith("usage: vigil bench mcp") and "--no-playwright" in out, err


def test_vigil_mcp_bad_option_is_a_clear_error_not_a_traceback(capsys):
    code, _, err = _vigil_run(capsys, "mcp", "--approve", "sometimes")
    assert code == 2 and "invalid choice: 'sometimes'" in err and "Traceback" not in err
    code, _, err = _vigil_run(capsys, "bench", "mcp", "--pages", "nowhere")
    assert code == 2 and "unknown page(s) nowhere" in err, err
    code, _, err = _vigil_run(capsys, "mcp", "--approve", "auto", "--upload-from", "/no/such/folder")
    assert code == 2 and "BAD_ARGUMENT: --upload-from /no/such/folder: no such folder" in err, err


def test_a_stdio_session_through_the_vigil_command(server, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "VIGIL_MCP_TOKEN"}
    env["VIGIL_HOME"] = str(tmp_path)
    cmd = _vigil()

    async def session() -> tuple[list[str], str]:
        with open(tmp_path / "stderr.txt", "w+", encoding="utf-8") as errlog:
            async with stdio_probe(cmd[0], ["mcp", "--approve", "auto"], env=env, cwd=str(ROOT), errlog=errlog,
                                   client_name="cli-test", timeout=120) as probe:
                tools = await probe.tools()
                # the browser starts with the server, not at the first call (issue 41: cold start)
                for _ in range(300):
                    if "browser ready" in (tmp_path / "stderr.txt").read_text(encoding="utf-8"):
                        break
                    await asyncio.sleep(0.1)
                else:
                    raise AssertionError("no 'browser ready' within 30 s of the server's start, before any call")
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


def test_a_browser_that_cannot_start_early_is_said_by_the_first_call(server, tmp_path):
    """The early start fails quietly; the first call that needs the browser starts it again and says why."""
    env = {k: v for k, v in os.environ.items() if k != "VIGIL_MCP_TOKEN"}
    env.update(VIGIL_HOME=str(tmp_path), VIGIL_CHROMIUM=str(tmp_path / "no-chromium-here"))
    cmd = _vigil()

    async def session() -> str:
        with open(tmp_path / "stderr.txt", "w+", encoding="utf-8") as errlog:
            async with stdio_probe(cmd[0], ["mcp", "--approve", "auto", "--no-record"], env=env, cwd=str(ROOT),
                                   errlog=errlog, client_name="cli-test", timeout=60) as probe:
                nav = await probe.call("browser_navigate", {"url": server.url("mcp_shop.html")})
                assert nav.is_error
                return nav.text

    said = asyncio.run(asyncio.wait_for(session(), 90))
    assert "VIGIL_CHROMIUM" in said and "no-chromium-here" in said, said
    err = (tmp_path / "stderr.txt").read_text(encoding="utf-8")
    assert "Traceback" not in err and "browser ready" not in err, err
