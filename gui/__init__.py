"""The supervisor window (PySide6 + qasync), in folders by concern, each importing only those below it
(pyproject's import contracts): `app` (the `vigil` command, starting and stopping the window, the Fleet view
on its own, the MCP server in the window) above `window` (the main window: toolbar, status bar, layout, the
run's side) above the features — `fleet` and `sessions` over `page`, `approval` and `run`, over `nodes` —
above `supervisor` (the window's only way to the engine and its store) above `kit` (small shared widgets,
the look, the asyncio bridge)."""
