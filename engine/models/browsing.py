"""Contracts for what a page does besides its own document: JavaScript dialogs, the tabs of the
browser, downloads and uploads. Step results, events, records and the window all carry these."""

from __future__ import annotations

import time
from typing import Literal

from pydantic import BaseModel, Field

DialogKind = Literal["alert", "confirm", "prompt", "beforeunload"]
DialogAnswerer = Literal["person", "policy", "planner", "api", "page"]


class DialogAnswer(BaseModel):
    """How a dialog was answered, by whom, and why."""

    accept: bool
    text: str | None = None          # the text given to a prompt
    by: DialogAnswerer = "policy"
    reason: str = ""

    def describe(self) -> str:
        what = "OK" if self.accept else "Cancel"
        if self.text is not None and self.accept:
            what += f' with "{self.text}"'
        return f"{what} (by {self.by}{': ' + self.reason if self.reason else ''})"


class DialogInfo(BaseModel):
    """One JavaScript dialog the page raised: alert, confirm, prompt or beforeunload."""

    id: int                           # 1, 2, … per tab
    kind: DialogKind
    message: str = ""
    url: str = ""                     # the document that raised it
    default_prompt: str = ""
    tab: int | None = None            # the index of the tab it was raised in, when known
    opened_at: float = Field(default_factory=time.time)
    answer: DialogAnswer | None = None
    flood: bool = False               # answered without asking: too many dialogs in one step

    def call(self) -> str:
        """`confirm("Delete?")` — the dialog as the page called it (message shortened)."""
        msg = self.message if len(self.message) <= 120 else self.message[:117] + "…"
        return f'{self.kind}("{msg}")' if self.kind != "beforeunload" else "beforeunload (leave this page?)"

    def describe(self) -> str:
        s = f"the page raised {self.call()}"
        if self.answer is not None:
            s += f", answered {self.answer.describe()}"
        return s


class TabInfo(BaseModel):
    """One open tab of the browser, as the planner and the window see it."""

    index: int
    title: str = ""
    url: str = ""
    active: bool = False
    opener: int | None = None        # the index of the tab that opened it (a popup's opener)
    target_id: str = ""

    def describe(self) -> str:
        mark = " (active)" if self.active else ""
        return f"[{self.index}] {self.title or '(untitled)'} — {self.url}{mark}"


class DownloadInfo(BaseModel):
    """A file the page made the browser download, where Vigil saved it."""

    name: str                         # the file name the site suggested
    path: str = ""                    # where it was saved ('' while it downloads or when it failed)
    size: int | None = None           # bytes
    mime: str = ""
    url: str = ""
    tab: int | None = None
    error: str | None = None          # why it failed, if it did

    def describe(self) -> str:
        if self.error:
            return f"download of {self.name} failed: {self.error}"
        size = f"{self.size:,} bytes" if self.size is not None else "size unknown"
        return f"downloaded {self.name} ({size}, {self.mime or 'type unknown'}) to {self.path}"


class PageIncidents(BaseModel):
    """What happened besides the page during one step: dialogs, tabs opened or closed, downloads."""

    dialogs: list[DialogInfo] = Field(default_factory=list)
    dialog_count: int = 0             # all dialogs, also those beyond the list's cap
    dialog_flood: bool = False
    tabs_opened: list[TabInfo] = Field(default_factory=list)
    popups_blocked: int = 0           # new tabs closed because too many opened in one step
    tabs_closed: list[str] = Field(default_factory=list)
    switched_to: TabInfo | None = None
    downloads: list[DownloadInfo] = Field(default_factory=list)

    def empty(self) -> bool:
        return not (self.dialog_count or self.tabs_opened or self.popups_blocked or self.tabs_closed
                    or self.switched_to or self.downloads)

    def lines(self) -> list[str]:
        """Each incident in words, for the step's observation and the step line."""
        out: list[str] = []
        shown = self.dialogs[:5]
        for d in shown:
            out.append(d.describe())
        if self.dialog_count > len(shown):
            out.append(f"{self.dialog_count - len(shown)} more dialog(s) ({self.dialog_count} in all)")
        if self.dialog_flood:
            out.append(f"dialog flood: the page raised {self.dialog_count} dialogs in one step; past the limit "
                       "they were dismissed without asking")
        for t in self.tabs_opened[:3]:
            out.append(f"opened a new tab: {t.title or '(untitled)'} — {t.url}")
        if len(self.tabs_opened) > 3:
            out.append(f"and {len(self.tabs_opened) - 3} more new tab(s) ({len(self.tabs_opened)} in all)")
        if self.popups_blocked:
            out.append(f"popup flood: {self.popups_blocked} more new tab(s) were closed at once")
        for c in self.tabs_closed:
            out.append(f"tab closed: {c}")
        if self.switched_to is not None:
            out.append(f"now in tab {self.switched_to.index}: {self.switched_to.title or '(untitled)'} — "
                       f"{self.switched_to.url}")
        for dl in self.downloads:
            out.append(dl.describe())
        return out
