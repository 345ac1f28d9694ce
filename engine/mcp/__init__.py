"""`vigil mcp`: Vigil's browser as a Model Context Protocol server, every step supervised.

Any MCP client drives one tab through Playwright-MCP-style tools with Vigil's node IDs as refs;
each action tool call is one step of the engine's loop (policy, approval gate, act, verify, record),
so the server is one more client of the loop, like the window and the CLI. Importing this package
is cheap; the SDK and the browser load when a server is built.

- `add_parser(subparsers)` / `run(args) -> int` — the `vigil mcp` command (`engine.mcp.cli`);
- `build_server(supervisor)` — the tools on an `MCPServer` (`engine.mcp.server`), for any host;
- `McpSupervisor` — the tab, the loop and the recorder behind it (`engine.mcp.supervisor`; its parts in
  `tabs`, `runs`, `grants` and `known_secrets`).
"""

from engine.mcp.cli import add_parser, run

__all__ = ["add_parser", "run"]
