"""The window's widgets: each shows engine data it is handed and emits what the analyst did."""
