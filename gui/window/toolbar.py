"""The window's toolbar: back / forward / reload, the address, the page size, and the view's actions
(Set-of-Mark — with the words that say how a node is selected while it is on —, Mask secrets, Snapshot,
New session, Settings, Pick locator, Fleet…). `NavigationBar(window)` holds them as attributes (`act_back`,
`url`, `viewport`, `act_overlay`, `overlay_hint`, …); the window wires them."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QMainWindow, QToolBar, QWidget

from gui.kit.look import MUTED
from gui.page.page_input import SELECT_WORDS

FIT = "Fit to panel"
# the page size choices: the page follows the panel, or a device size scaled to fit it
PAGE_SIZES: dict[str, tuple[int, int] | None] = {
    FIT: None, "1280×800 desktop": (1280, 800), "1440×900 desktop": (1440, 900), "1920×1080 desktop": (1920, 1080),
    "1024×768 tablet": (1024, 768), "390×844 phone": (390, 844)}
# said beside the Set-of-Mark toggle while it is on, and once in the status bar when it is turned on
OVERLAY_HINT = f"{SELECT_WORDS} a box selects its node"
URL_MIN_WIDTH = 220     # px the address keeps however narrow the window: enough to read a page's path
HINT_MIN_WINDOW = 1200  # px of window below which the Set-of-Mark hint is not shown beside the toggle
OVERLAY_ON_WORDS = (f"Set-of-Mark on: clicks still go to the page; {SELECT_WORDS} a box or badge to select its node "
                    "(or pick it in the Nodes tab).")


class NavigationBar(QToolBar):
    """`NavigationBar(window)`: the toolbar, added to `window`; its actions and fields are its attributes."""

    def __init__(self, win: QMainWindow) -> None:
        super().__init__("Navigation")
        self.setMovable(False)
        win.addToolBar(self)
        self.act_back = QAction("◀", win, toolTip="Back")
        self.act_fwd = QAction("▶", win, toolTip="Forward")
        self.act_reload = QAction("⟳", win, toolTip="Reload")
        for a in (self.act_back, self.act_fwd, self.act_reload):
            self.addAction(a)
        self.url = QLineEdit()
        self.url.setPlaceholderText("http(s) URL or a local HTML file")
        self.url.setMinimumWidth(URL_MIN_WIDTH)
        self.addWidget(self.url)
        self.viewport = QComboBox()
        self.viewport.addItems(list(PAGE_SIZES))
        self.viewport.setToolTip("Page size: follow the panel (the page re-lays out as you resize it), or a "
                                 "device size scaled to fit")
        self.addWidget(self.viewport)
        self.act_overlay = QAction("Set-of-Mark", win, checkable=True,
                                   toolTip=f"Draw every interactive node's box and ID. Clicks still go to the page; "
                                           f"{SELECT_WORDS} a box or badge selects its node")
        self.act_snapshot = QAction("Snapshot", win, toolTip="Take a fresh snapshot")
        # on at every start: turning it off lasts until Vigil closes (never saved)
        self.act_mask = QAction("Mask secrets", win, checkable=True, checked=True,
                                toolTip="Paint over password, one-time-code, PIN and card fields (and any secret a "
                                        "run typed) in the live page. Off: only until Vigil closes; pictures that "
                                        "are stored, exported or sent to a model are always masked")
        self.act_settings = QAction("Settings", win)
        self.act_new_session = QAction("New session", win, toolTip="The next task starts a new recorded session "
                                                                   "in this tab instead of adding to this one")
        # pick mode: hover a node on the live page to see its Playwright locator, click to copy it
        self.act_pick = QAction("Pick locator", win, checkable=True,
                                toolTip="Hover an element of the page to see its Playwright locator (over a label: "
                                        "its control); click copies it")
        self.act_fleet = QAction("Fleet…", win, toolTip="Open a fleet file: many runs, supervised through one "
                                                         "approval queue in a window of their own")
        self.addAction(self.act_overlay)
        self.overlay_hint = QLabel(OVERLAY_HINT)
        self.overlay_hint.setObjectName("overlayHint")
        self.overlay_hint.setStyleSheet(f"color:{MUTED}; font-size:11px; padding:0 6px 0 0;")
        self.overlay_hint_action = self.addWidget(self.overlay_hint)
        self.overlay_hint_action.setVisible(False)  # shown while Set-of-Mark is on, in a window wide enough
        self.overlay_hint_fit = OverlayHintFit(win, self.overlay_hint_action)
        for a in (self.act_mask, self.act_snapshot, self.act_new_session, self.act_settings, self.act_pick,
                  self.act_fleet):
            self.addAction(a)


class OverlayHintFit(QObject):
    """Shows the Set-of-Mark hint beside the toggle while the overlay is on and the window is at least
    HINT_MIN_WINDOW wide; a narrower window gives its room to the address (the status bar says the same
    words when the overlay is turned on). `set_on(on)` when the overlay is toggled."""

    def __init__(self, win: QWidget, hint: QAction) -> None:
        super().__init__(win)
        self.win, self.hint = win, hint
        self.on = False
        win.installEventFilter(self)

    def set_on(self, on: bool) -> None:
        self.on = on
        self.refresh()

    def refresh(self) -> None:
        self.hint.setVisible(self.on and self.win.width() >= HINT_MIN_WINDOW)

    def eventFilter(self, obj: Any, event: Any) -> bool:  # noqa: N802 - Qt name
        if obj is self.win and event.type() == QEvent.Type.Resize:
            self.refresh()
        return super().eventFilter(obj, event)
