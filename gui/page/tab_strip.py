"""TabStrip: the browser's open tabs, above the live page.

One tab per page of the controlled browser (title, its URL in the tooltip, a popup marked with
its opener); the active one is selected and follows the browser — a link that opened a new tab, a
popup that closed itself, a run's switch_tab. Clicking a tab asks to switch (`switch_requested(int)`),
its close button asks to close it (`close_requested(int)`); the window decides whether it may (not
while a run acts; the page's beforeunload may ask first) and the strip changes only when the browser's
tabs do. Hidden while only one tab is open.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QTabBar, QVBoxLayout, QWidget

from engine.models.browsing import TabInfo
from engine.models.text import bidi_safe

MAX_TITLE = 28


class TabStrip(QTabBar):
    switch_requested = Signal(int)   # the index of the tab the person clicked
    close_requested = Signal(int)    # the index of the tab whose close button the person clicked

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("tabStrip")
        self.setDocumentMode(True)
        self.setExpanding(False)
        self.setElideMode(Qt.TextElideMode.ElideRight)
        self.setUsesScrollButtons(True)
        self.setTabsClosable(True)
        self.tabs: list[TabInfo] = []
        self._updating = False
        self.currentChanged.connect(self._clicked)
        self.tabCloseRequested.connect(self._close_clicked)
        self.hide()

    def set_tabs(self, tabs: list[TabInfo], active: int | None) -> None:
        """Show `tabs` with `active` selected (no switch_requested is emitted for it)."""
        self._updating = True
        try:
            self.tabs = list(tabs)
            while self.count() > len(tabs):
                self.removeTab(self.count() - 1)
            for i, t in enumerate(tabs):
                title = bidi_safe(t.title or t.url or "(untitled)")  # the page's own title: controls as markers
                text = title if len(title) <= MAX_TITLE else title[:MAX_TITLE - 1] + "…"
                if t.opener is not None:
                    text = f"↳ {text}"
                if i < self.count():
                    self.setTabText(i, text)
                else:
                    self.addTab(text)
                tip = f"{title}\n{bidi_safe(t.url)}" + (f"\nopened by tab {t.opener}" if t.opener is not None else "")
                self.setTabToolTip(i, tip)
                close = self.tabButton(i, QTabBar.ButtonPosition.RightSide)
                if close is not None:
                    close.setToolTip(f"Close {text}")
                    close.setAccessibleName(f"Close tab {i + 1}")
            if active is not None and 0 <= active < self.count():
                self.setCurrentIndex(active)
        finally:
            self._updating = False
        self.setVisible(len(tabs) > 1)

    def active(self) -> int:
        return self.currentIndex()

    def texts(self) -> list[str]:
        return [self.tabText(i) for i in range(self.count())]

    def close_button(self, index: int) -> QWidget | None:
        """The close button of tab `index` (for tests and accessibility)."""
        return self.tabButton(index, QTabBar.ButtonPosition.RightSide)

    def _clicked(self, index: int) -> None:
        if not self._updating and index >= 0:
            self.switch_requested.emit(index)

    def _close_clicked(self, index: int) -> None:
        if not self._updating and 0 <= index < len(self.tabs):
            self.close_requested.emit(index)


def with_tab_strip(page: QWidget, strip: TabStrip) -> QWidget:
    """The live page with the tab strip above it, as one widget for the window's splitter."""
    box = QWidget()
    box.setObjectName("pageColumn")
    lay = QVBoxLayout(box)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.setSpacing(0)
    lay.addWidget(strip)
    lay.addWidget(page, 1)
    return box
