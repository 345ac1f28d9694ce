"""The window's link to the engine (`controller.Supervisor`) and the parts it holds: the session store and
the tab's session (`recording`, read through `session_library`), the loop's events (`loop_events`), the
person's own steps (`person_input`), the live view (`live_view`) and the browser's tabs (`browser_tabs`).
The only part of the window that reaches the engine's store."""
