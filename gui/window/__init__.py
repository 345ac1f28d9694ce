"""The main window (`main_window`) and what is its own: the toolbar, the status bar, its size and what it
remembers (`layout`), the settings dialog, the run's side (`run_wiring`) and taking over a step in the
page (`take_over`)."""
