"""The Fleet view: many runs, one approval queue (`fleet_window`, its lists in `fleet_lists`), opened from
the main window's "Fleet…" (`fleet_dialog`)."""
