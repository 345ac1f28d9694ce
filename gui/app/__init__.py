"""Starting and stopping: the `vigil` command (`launcher`), the supervisor window as an app (`window_app`),
the Fleet view as an app (`fleet_app`), the MCP server hosted in the window (`mcp_host`), whether a display
is there (`display`) and Qt's console messages (`qt_messages`)."""
