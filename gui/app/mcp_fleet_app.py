"""`vigil gui --mcp [PORT]`, and `vigil mcp --http PORT` under `ask` where a window can open: the MCP server over
streamable HTTP, where several clients come, with the Fleet view of its clients (gui.fleet.mcp_clients_window):
each client a run in a browser context, tab and recorded session of its own, every client's questions in one
approval queue. The terminal says the endpoint and the bearer token; closing the window (or Ctrl+C) stops the
server, ends and records every client's run. (Over stdio there is one client: the main window hosts the server
on its own tab, gui.app.mcp_host.)"""

from __future__ import annotations

import signal
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gui.app.mcp_launch import McpLaunch


POLICY_WORDS = {"ask": "each client's steps wait in the window's queue",
                "auto-safe": "only sensitive steps wait in the window's queue (--approve auto-safe)",
                "auto": "steps run without asking, each still verified and recorded (--approve auto)"}


def run_mcp_clients_gui(url: str | None, mcp: McpLaunch, *, headless: bool = True, policy: str = "ask",
                        prog: str = "vigil gui") -> int:
    """Serve MCP over HTTP on `mcp.port` with the clients' window; the process exit code (2: the port, the token
    or a start grant could not be used — said before any window opens)."""
    from engine.errors import VigilError
    from engine.mcp.clients import McpClients, duration
    from engine.mcp.clients_view import McpClientsFleet
    from engine.mcp.planner import NoPersonGate
    from gui.app.display import display_problem

    def say(text: str) -> None:
        print(f"{prog}: {text}", file=sys.stderr, flush=True)

    problem = display_problem()
    if problem:
        say(f"NO_DISPLAY: {problem}")
        return 2
    # each client's gate is the window's queue (McpClientsFleet sets `gate_for`): this one is never asked
    clients = McpClients(policy=policy, gate=NoPersonGate(), url=url, headless=headless, record=mcp.record,
                         allow_files=mcp.allow_files, upload_roots=mcp.upload_from, transport="http",
                         max_clients=mcp.max_clients, idle_s=mcp.idle_s)
    try:
        for g in clients.grants.start(list(mcp.grants)):
            say(f"granted #{g.id} for this session: {g.describe()} (never sensitive steps)")
        view, token, from_env = McpClientsFleet.over_http(clients, mcp.port if mcp.port is not None else 0)
    except VigilError as exc:
        say(f"{exc.code}: {exc.message}")
        clients.grants.end()
        return 2
    from gui.app.qt_loop import qt_event_loop
    from gui.fleet.mcp_clients_window import McpClientsWindow

    loop = qt_event_loop()

    async def main() -> int:
        window = McpClientsWindow(view, token=token, token_from_env=from_env)
        window.place_on()
        window.show()
        for sig in (signal.SIGINT, signal.SIGTERM):  # Ctrl+C or a kill closes the window in its own order
            signal.signal(sig, lambda *_: loop.call_soon_threadsafe(window.close))
        await window.start()
        clients.chromium.warm()  # the browser starts now, not at the first client's first call
        say(f"serving MCP (streamable HTTP) at {view.endpoint}; {POLICY_WORDS.get(policy, policy)}")
        say("bearer token from VIGIL_MCP_TOKEN" if from_env else f"bearer token: {token}")
        say(f"each client gets a tab and a recorded session of its own; {clients.max_clients} at once, idle ones "
            f"let go after {duration(clients.idle_s)}")
        await window.closed
        for sid in clients.session_ids:
            say(f"kept as session {sid[:8]} (vigil export {sid[:8]} --html report.html)")
        if clients.store_error:
            say(clients.store_error)
        return 0 if window.result is not None else 1

    try:
        with loop:
            return loop.run_until_complete(main())
    except KeyboardInterrupt:
        return 130
