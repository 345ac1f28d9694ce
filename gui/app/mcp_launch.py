"""How a window serves MCP (`vigil gui --mcp [PORT]`, `vigil mcp` under ask with a display): its own module, so
that the main window's app (gui.app.window_app) and the clients' view (gui.app.mcp_fleet_app) share it without
importing one another."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class McpLaunch:
    """How the window serves MCP: over HTTP on `port` (0: any free port), where several clients come, with the
    Fleet view of the clients (gui.app.mcp_fleet_app); or over this process's stdio (`port` None: the client
    spawned `vigil mcp`), in the main window on its own tab (gui.app.mcp_host)."""

    port: int | None = 0
    policy: str = "ask"             # over HTTP: every client's (over stdio the window's policy box says)
    max_clients: int = 8            # over HTTP: `vigil mcp --max-clients`
    idle_s: float = 600.0           # over HTTP: `vigil mcp --idle-timeout`
    url: str | None = None          # the page the server opens first
    allow_files: bool = False
    record: bool = True
    grants: tuple[str, ...] = ()    # `vigil mcp --grant KIND@SITE`: given when serving starts
    upload_from: tuple[str, ...] = ()  # `vigil mcp --upload-from DIR`: the folders uploads may come from
