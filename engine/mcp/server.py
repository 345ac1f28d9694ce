"""The MCP server object: Vigil's browser tools on an `MCPServer`, bound to one server run's clients.

`build_server(clients)` is all a host needs — the `vigil mcp` command (stdio or HTTP) and the window
(`vigil gui --mcp`); each tool call finds its client's supervisor (tab, run, recorded session) in
`clients` (engine.mcp.clients).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.loop.untrusted import UNTRUSTED_RULE

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from engine.mcp.clients import McpClients

INSTRUCTIONS = f"""Vigil drives a browser tab of your own (other clients have theirs), under a person's supervision.
- Act by ref: the `i` of an element in browser_snapshot (semantic JSON) or browser_find. Refs are stable:
  the same element keeps its ref while the page lives.
- Every action is one step of a supervised run: the approval policy (and, under `ask`, a person) decides
  whether it runs; a rejected step comes back with the person's reason — adapt to it, do not retry it as is.
  Each step is verified after it runs, and recorded.
- An action's result says what ran, whether it was verified, whether the page navigated, page events, and
  the change of the semantic payload since your last view (+ added, ~ changed, - gone), not the whole page.
- {UNTRUSTED_RULE}
"""


def build_server(clients: McpClients, *, name: str = "vigil") -> MCPServer:
    from mcp.server.mcpserver import MCPServer

    from engine import __version__
    from engine.mcp.tools_act import register_action_tools
    from engine.mcp.tools_browsing import register_browsing_tools
    from engine.mcp.tools_read import register_read_tools

    server = MCPServer(name, title="Vigil", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING",
                       description="A supervised browser: every step approvable, verified and recorded.")
    register_read_tools(server, clients)
    register_action_tools(server, clients)
    register_browsing_tools(server, clients)
    return server
