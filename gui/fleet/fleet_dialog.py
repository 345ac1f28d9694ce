"""The main window's "Fleet…": pick a fleet file and how many runs at once, then open its Fleet view
(gui.fleet.fleet_window), its runs kept in the window's session store."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from PySide6.QtWidgets import QWidget

if TYPE_CHECKING:
    from gui.fleet.fleet_window import FleetWindow
    from gui.supervisor.controller import Supervisor


class FleetOpener(Protocol):
    """The window that opens Fleet views (gui.window.main_window.MainWindow)."""

    fleet_windows: list[FleetWindow]  # the Fleet views it opened, while they are open

    def window(self) -> QWidget: ...
    def show_error(self, text: str) -> None: ...


def open_fleet_dialog(win: FleetOpener, sup: Supervisor, path: str | None = None,
                      parallel: int | None = None) -> FleetWindow | None:
    """Ask for the file (unless `path`) and the runs at once (unless `parallel`), then open the Fleet view.
    Problems with the file go to the window's banner. The Fleet view is returned (None when nothing was
    opened) and kept in `win.fleet_windows` while it is open."""
    from PySide6.QtWidgets import QFileDialog, QInputDialog

    from engine.errors import VigilError
    from engine.fleet import Fleet, load_fleet
    from gui.fleet.fleet_window import FleetWindow
    from gui.kit.aio import spawn

    parent = win.window()
    if path is None:
        path, _ = QFileDialog.getOpenFileName(parent, "Open a fleet file", "", "Fleet files (*.yaml *.yml *.json)")
        if not path:
            return None
    try:
        spec = load_fleet(path)
    except VigilError as exc:
        win.show_error(exc.message)
        return None
    if parallel is None:
        parallel, ok = QInputDialog.getInt(parent, "Fleet", f"{len(spec.runs)} runs in {spec.name or path}.\n"
                                           "How many at once?", min(2, len(spec.runs)), 1, 16)
        if not ok:
            return None
    store = sup.recording.store if sup.open_store() else None
    fleet = Fleet(spec, parallel=parallel, approve="ask", store=store, headless=True)
    fleet_window = FleetWindow(fleet)
    kept = win.fleet_windows
    kept.append(fleet_window)
    fleet_window.closed.add_done_callback(lambda _f: kept.remove(fleet_window) if fleet_window in kept else None)
    fleet_window.place_on(anchor=parent)  # on the screen of the window that opened it
    fleet_window.show()
    spawn(fleet_window.start())
    return fleet_window
