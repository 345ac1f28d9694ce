"""The main window's "Fleet…": pick a fleet file, then how many runs at once and where their browsers come from
(this machine, or a grid: a Selenium Grid or a DevTools endpoint; the file's `grid:` filled in), then open its
Fleet view (gui.fleet.fleet_window), its runs kept in the window's session store."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

if TYPE_CHECKING:
    from engine.fleet import FleetSpec
    from gui.fleet.fleet_window import FleetWindow
    from gui.supervisor.controller import Supervisor

MAX_AT_ONCE = 16
URL_SCHEMES = ("http://", "https://", "ws://", "wss://")


@dataclass(frozen=True)
class FleetOptions:
    parallel: int
    grid: str | None        # None: a local Chromium
    retry_lost: bool


class FleetOptionsDialog(QDialog):
    """How to run a fleet: runs at once, the grid its browsers come from (empty: this machine) and whether a run
    whose browser is lost starts again. A grid that is not a URL is said under the field; the dialog stays open."""

    def __init__(self, spec: FleetSpec, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Fleet")
        n = len(spec.runs)
        self.at_once = QSpinBox()
        self.at_once.setRange(1, MAX_AT_ONCE)
        self.at_once.setValue(min(2, n))
        self.at_once.setAccessibleName("Runs at once")
        self.grid = QLineEdit(spec.grid or "")
        self.grid.setPlaceholderText("empty: a Chromium on this machine")
        self.grid.setAccessibleName("Browsers from")
        self.grid.setToolTip("A Selenium Grid 4 (http://hub:4444): a browser session per run, kept alive while it "
                             "runs, deleted when it ends. A DevTools endpoint (http://host:9222, ws://…) works too.")
        self.retry = QCheckBox("Start a run again on a new browser when its browser or grid node is lost")
        self.problem = QLabel("")
        self.problem.setObjectName("problem")
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color: #b91c1c;")
        self.problem.hide()
        self.grid.textChanged.connect(lambda _t: self.problem.hide())  # (said of the text as it was)
        form = QFormLayout()
        form.addRow("Runs at once:", self.at_once)
        form.addRow("Browsers from:", self.grid)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        box = QVBoxLayout(self)
        box.addWidget(QLabel(f"{n} runs in {title}."))
        box.addLayout(form)
        box.addWidget(self.retry)
        box.addWidget(self.problem)
        box.addWidget(buttons)
        self.at_once.setFocus(Qt.FocusReason.OtherFocusReason)
        self._chosen: FleetOptions | None = None

    def accept(self) -> None:
        text = self.grid.text().strip()
        if text and (" " in text or "," in text or not text.startswith(URL_SCHEMES)):
            self.problem.setText(f"{text!r} is not one grid's URL: give a Selenium Grid (http://hub:4444) or a "
                                 "DevTools endpoint (http://host:9222, ws://…), or leave it empty for this machine.")
            self.problem.show()
            self.grid.setFocus()
            return
        grid = (text.rstrip("/") if text.startswith("http") else text) or None
        self._chosen = FleetOptions(self.at_once.value(), grid, self.retry.isChecked())
        super().accept()

    def options(self) -> FleetOptions | None:
        """What was chosen (None until OK was accepted)."""
        return self._chosen


class FleetOpener(Protocol):
    """The window that opens Fleet views (gui.window.main_window.MainWindow)."""

    fleet_windows: list[FleetWindow]  # the Fleet views it opened, while they are open

    def window(self) -> QWidget: ...
    def show_error(self, text: str) -> None: ...


def open_fleet_dialog(win: FleetOpener, sup: Supervisor, path: str | None = None, parallel: int | None = None,
                      grid: str | None = None, retry_lost: bool = False) -> FleetWindow | None:
    """Ask for the file (unless `path`) and how to run it (unless `parallel` is given, with `grid` — else the
    file's — and `retry_lost`), then open the Fleet view.
    Problems with the file go to the window's banner. The Fleet view is returned (None when nothing was
    opened) and kept in `win.fleet_windows` while it is open."""
    from PySide6.QtWidgets import QFileDialog

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
        dialog = FleetOptionsDialog(spec, spec.name or path, parent)
        chosen = dialog.options() if dialog.exec() == QDialog.DialogCode.Accepted else None
        if chosen is None:
            return None
    else:
        chosen = FleetOptions(parallel, grid if grid is not None else spec.grid, retry_lost)
    store = sup.recording.store if sup.open_store() else None
    fleet = Fleet(spec, parallel=chosen.parallel, approve="ask", store=store, headless=True, grid=chosen.grid,
                  retry_lost=chosen.retry_lost)
    fleet_window = FleetWindow(fleet)
    kept = win.fleet_windows
    kept.append(fleet_window)
    fleet_window.closed.add_done_callback(lambda _f: kept.remove(fleet_window) if fleet_window in kept else None)
    fleet_window.place_on(anchor=parent)  # on the screen of the window that opened it
    fleet_window.show()
    spawn(fleet_window.start())
    return fleet_window
