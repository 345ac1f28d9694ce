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


DownloadStatus = Literal["saving", "saved", "refused", "over_limit", "failed"]


class DownloadInfo(BaseModel):
    """A file the page made the browser download, and what became of it: saved (where), refused (the
    step was not approved for it and the person said no, or no person was there), stopped at the size
    limit, or failed. Only a saved download has a `path`."""

    name: str                         # the file name the site suggested
    path: str = ""                    # where it was saved ('' unless it was saved)
    size: int | None = None           # bytes (saved), or how far it got (stopped at the limit)
    mime: str = ""
    url: str = ""
    tab: int | None = None
    error: str | None = None          # why it was not saved (refused, over the limit, failed)
    status: DownloadStatus = "saving"
    limit: int | None = None          # the size limit it was held to, in bytes

    @property
    def saved(self) -> bool:
        return bool(self.path) and self.status in ("saved", "saving")  # ("saving": records made before `status`)

    def describe(self) -> str:
        if self.status == "over_limit":
            return (f"download of {self.name} stopped at {_size(self.limit or self.size or 0)} (the limit): "
                    "cancelled, nothing kept")
        if self.status == "refused":
            return f"download of {self.name} refused: {self.error or 'not approved'}; nothing kept"
        if self.error or self.status == "failed":
            return f"download of {self.name} failed: {self.error or 'unknown error'}"
        if not self.saved:
            return f"download of {self.name} not finished when the step ended (not saved yet)"
        size = f"{self.size:,} bytes" if self.size is not None else "size unknown"
        return f"downloaded {self.name} ({size}, {self.mime or 'type unknown'}) to {self.path}"


def _size(n: int) -> str:
    """100 MB, 1.5 MB, 12 kB, 300 bytes (decimal units, as the limit is stated)."""
    if n >= 1_000_000:
        mb = n / 1_000_000
        return f"{mb:.0f} MB" if mb == int(mb) or mb >= 10 else f"{mb:.1f} MB"
    if n >= 1000:
        return f"{n // 1000} kB"
    return f"{n} bytes"


class HeldExit(BaseModel):
    """A top-level navigation to another site that the step was not approved for, held at the browser
    (a script, a redirect, a form posting elsewhere, a meta refresh): let through or refused, by whom."""

    url: str                          # where the page tried to go
    from_url: str = ""                # the page it tried to leave
    from_site: str = ""
    to_site: str = ""
    method: str = "GET"
    allowed: bool = False
    by: Literal["person", "policy"] = "policy"
    reason: str = ""                  # why it was refused (the person's words, or "no person is watching")
    during_step: bool = True          # held while a step's action ran (else between steps: after it settled)
    # exit: to another site; submission: a form submission (or a document request with a body) that the step's
    # computed effect did not include, on any site
    kind: Literal["exit", "submission"] = "exit"

    def describe(self) -> str:
        if self.kind == "submission":
            what = (f"the page tried to submit a form ({self.method.upper()} {_short(self.url)}) the step did "
                    "not include")
            if self.allowed:
                return f"{what}: let through {self.reason or 'by the person'}"
            return f"{what}: held at the browser and refused ({self.reason or 'not approved'}); nothing was sent"
        what = f"the page tried to leave {self.from_site or 'the site'} for {self.to_site} ({_short(self.url)})"
        if self.method.upper() != "GET":
            what += f" with a {self.method.upper()}"
        if self.allowed:
            return f"{what}: let through {self.reason or 'by the person'}"
        return f"{what}: held at the browser and refused ({self.reason or 'not approved'}); nothing was sent there"


def _short(url: str) -> str:
    return url if len(url) <= 100 else url[:97] + "…"


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
    exits: list[HeldExit] = Field(default_factory=list)   # navigations to another site held at the browser

    def empty(self) -> bool:
        return not (self.dialog_count or self.tabs_opened or self.popups_blocked or self.tabs_closed
                    or self.switched_to or self.downloads or self.exits)

    def blocked(self) -> list[str]:
        """What the browser held and refused during the step (exits, downloads), in words: the step
        fails with BLOCKED when there is any."""
        return ([x.describe() for x in self.exits if not x.allowed and x.during_step]
                + [d.describe() for d in self.downloads if d.status in ("refused", "over_limit")])

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
            out.append(f"popup flood: {self.popups_blocked} more popup(s) were blocked or closed at once (the page's "
                       "further popups are closed for the rest of the run)")
        for c in self.tabs_closed:
            out.append(f"tab closed: {c}")
        if self.switched_to is not None:
            out.append(f"now in tab {self.switched_to.index}: {self.switched_to.title or '(untitled)'} — "
                       f"{self.switched_to.url}")
        for dl in self.downloads:
            out.append(dl.describe())
        for x in self.exits:
            out.append(x.describe())
        return out
