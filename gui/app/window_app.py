"""Starting and stopping the window: Qt with an asyncio loop inside (qasync), the engine on that
loop, and a shutdown in the order that does not crash: screencast, loop, browser, then Qt."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys

from gui.app.display import display_problem as _display_problem  # gui.app.launcher asks it here too
from gui.app.mcp_launch import McpLaunch  # gui.app.launcher takes it from here

DEMO_TASK = ("click Accept, type Ada Lovelace into Full name, type ada@example.com into Email Address, "
             "check Gift wrap and click Create account")


async def _host_mcp(window, sup, mcp: McpLaunch, ok: bool, prog: str) -> int:
    """Serve MCP from the window until it closes (HTTP) or the client disconnects (stdio)."""
    from engine.errors import VigilError
    from gui.app.mcp_host import WindowMcpHost

    def say(text: str) -> None:
        print(f"{prog}: {text}", file=sys.stderr, flush=True)

    if window.closed.done():  # closed (Ctrl+C) while it started
        return 0
    if not ok:
        say("LAUNCH_FAILED: the window could not start its browser, so there is nothing to serve; see its banner.")
        await window.shutdown()
        window.close()
        return 1
    host = WindowMcpHost(window, url=mcp.url, allow_files=mcp.allow_files, record=mcp.record,
                         grants=list(mcp.grants), upload_from=mcp.upload_from)
    client_gone = None
    try:
        if mcp.port is not None:
            endpoint, token, from_env = await host.start_http(mcp.port)
            say(f"serving MCP (streamable HTTP) at {endpoint}, approved in the Vigil window")
            say("bearer token from VIGIL_MCP_TOKEN" if from_env else f"bearer token: {token}")
        else:
            client_gone = asyncio.ensure_future(host.serve_stdio())
            say("serving MCP over stdio; each step is approved in the Vigil window")
    except VigilError as exc:
        say(f"{exc.code}: {exc.message}")
        await host.stop()
        await window.shutdown()
        window.close()
        return 2
    if client_gone is not None:
        await asyncio.wait({client_gone, window.closed}, return_when=asyncio.FIRST_COMPLETED)
        if not window.closed.done():  # the client went away: so does the window it was bound to
            await window.shutdown()
            window.close()
    else:
        await window.closed
    await host.stop()
    for sid in host.clients.session_ids:
        say(f"kept as session {sid[:8]} (vigil export {sid[:8]} --html report.html)")
    return 0


def _serve_clients(url: str | None, mcp: McpLaunch, *, headless: bool, demo: bool, prog: str) -> int:
    """The MCP server over HTTP with its clients' window; with `demo`, each client starts on the demo shop."""
    from gui.app.mcp_fleet_app import run_mcp_clients_gui

    if not demo:
        return run_mcp_clients_gui(url or mcp.url, mcp, headless=headless, policy=mcp.policy, prog=prog)
    from engine.assets import asset
    from engine.local_server import serve_directory
    with serve_directory(asset("demo")) as base:  # the bundled demo shop
        return run_mcp_clients_gui(base + "index.html", mcp, headless=headless, policy=mcp.policy, prog=prog)


def run_gui(url: str | None = None, *, screenshot: str | None = None, quit_after_load: bool = False,
            headless: bool = True, task: str = "", demo: bool = False, mcp: McpLaunch | None = None,
            prog: str = "vigil gui") -> int:
    """Open the supervisor window; returns the process exit code. With `mcp` over HTTP, the Fleet view of the
    MCP server's clients instead (gui.app.mcp_fleet_app), until it is closed; over stdio, the window hosts the
    server (gui.app.mcp_host) until it is closed or the client goes away."""
    problem = _display_problem()
    if problem:
        print(f"{prog}: NO_DISPLAY: {problem}", file=sys.stderr)
        return 2
    if mcp is not None and mcp.port is not None:
        return _serve_clients(url, mcp, headless=headless, demo=demo, prog=prog)
    from gui.app.qt_loop import qt_event_loop
    from gui.supervisor.controller import Supervisor
    from gui.window.main_window import MainWindow

    loop = qt_event_loop()  # the window's close runs the engine shutdown first, then ends the loop
    code = 0
    server_cm = None
    if demo:
        from engine.assets import asset
        from engine.local_server import serve_directory
        server_cm = serve_directory(asset("demo"))  # the bundled demo shop
        url = server_cm.__enter__() + "index.html"
        task = task or DEMO_TASK

    async def main() -> int:
        sup = Supervisor(headless=headless)
        window = MainWindow(sup, suggested_task=task)
        window.place_on()
        window.showMaximized() if window.start_maximized else window.show()
        if mcp is not None:  # a server in a terminal: Ctrl+C or a kill closes the window in its own order
            for sig in (signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, lambda *_: loop.call_soon_threadsafe(window.close))
        ok = await window.startup(url)
        if mcp is not None:
            return await _host_mcp(window, sup, mcp, ok, prog)
        if quit_after_load:
            rc = 0 if ok else 1
            if ok and sup.load_error:  # the browser runs, the page did not open: say so, and fail
                print(f"vigil gui: NAVIGATION_FAILED: {sup.load_error}", file=sys.stderr)
                rc = 1
            if ok:
                await window.wait_painted(10.0)
            if screenshot:
                if not window.grab().save(screenshot):
                    print(f"vigil gui: could not write {screenshot}", file=sys.stderr)
                    rc = 2
            await window.shutdown()
            window.close()
            return rc
        await window.closed
        return 0

    try:
        with loop:
            code = loop.run_until_complete(main())
    except KeyboardInterrupt:
        code = 130
    finally:
        if server_cm is not None:
            with contextlib.suppress(Exception):
                server_cm.__exit__(None, None, None)
    return code
