"""What a step will do, as the page computes it before the input goes out (`StepEffect`).

The policy judges it beside the target the step names, the person reads it in one line (`line`), the
record keeps it, and the browser lets through the form submission it names and holds any other."""

from __future__ import annotations

import urllib.parse
from typing import Literal

from pydantic import BaseModel, Field

EffectKind = Literal["submit", "navigate", "new_window", "download", "toggle", "select", "type", "upload",
                     "activate", "none"]


class Receiver(BaseModel):
    """The element the input will really reach (after labels, overlays, focus and active descendants)."""

    role: str = ""
    name: str = ""                 # its words as rendered (bidi, visual order, letters over spans joined)
    tag: str = ""
    id: str = ""                   # its HTML id, when it has one
    ref: str | None = None         # its snapshot ID, when the snapshot has it
    via: str | None = None         # how the input reaches it: label, inner element, overlay, focus, active option


class Submission(BaseModel):
    """A form submission as the browser would make it."""

    method: str = "GET"            # GET, POST or DIALOG (closes its dialog, nothing is sent)
    url: str = ""                  # the resolved action URL (a GET's query is the form's fields)
    target: str = ""               # the browsing context it goes to ("" or _self: this one)
    submitter: str = ""            # the words of the button that submits it ("" for an implicit submission)
    form: str = ""                 # the words a person reads for the form: its name, legend or heading, buttons
    implicit: bool = False         # Enter in a field submits it (no button pressed)
    on_fill: bool = False          # a code or card field whose page may submit it once filled


class StepEffect(BaseModel):
    """What one step will do: who receives the input, and what the browser's default action does with it."""

    kind: EffectKind = "none"
    receiver: Receiver | None = None
    words: str = ""                # what the effect is called: the option chosen, the box's label, the link text …
    url: str = ""                  # navigate / new_window / download: where to
    same_site: bool | None = None  # whether `url` (or the submission's) stays on the run's site
    state: str = ""                # toggle: "checked" / "unchecked"; type: the value the field will hold (masked)
    submission: Submission | None = None
    notes: list[str] = Field(default_factory=list)  # what else the page says about it (a covered target …)

    def line(self) -> str:
        """The effect in one line for a person: "submits 'Delete workspace' — POST /workspaces/42/delete"."""
        s = self.submission
        w = _q(self.words)
        via = self.receiver.via if self.receiver is not None and self.receiver.via else ""
        if s is not None and s.method != "DIALOG":
            what = _q(s.submitter or s.form) or "a form"
            if s.submitter and s.form:
                what += f" (form {_q(s.form.split(';')[0])})"
            how = " (Enter in a field)" if s.implicit else " (when filled)" if s.on_fill else ""
            out = f"submits {what}{how} — {s.method} {self._where(s.url)}"
            if self.kind == "type":
                out = f"types {self.state or 'into the field'}, then " + out
        elif self.kind == "navigate":
            out = f"opens {self._where(self.url)}" + (f" ({w})" if w else "")
        elif self.kind == "new_window":
            out = f"opens {self._where(self.url)} in a new window" + (f" ({w})" if w else "")
        elif self.kind == "download":
            out = f"downloads {self._where(self.url)}"
        elif self.kind == "toggle":
            out = f"{'checks' if self.state == 'checked' else 'unchecks'} {w or 'a box'}"
        elif self.kind == "select":
            out = f"selects {w}" + (f" in {_q(self.receiver.name)}" if self.receiver and self.receiver.name else "")
        elif self.kind == "type":
            out = f"types {self.state} into {_q(self.receiver.name) if self.receiver else 'the field'}"
        elif self.kind == "upload":
            out = f"uploads to {w or 'the file field'}"
        elif self.kind == "activate" and self.receiver is not None:
            out = f"activates {self.receiver.role or self.receiver.tag} {_q(self.receiver.name)}".rstrip()
        else:
            out = "changes nothing the browser does by itself (the page's own scripts may act)"
        if via and self.receiver is not None:
            out += f" [reaches {self.receiver.role or self.receiver.tag} {_q(self.receiver.name)} via {via}]"
        if self.same_site is False:
            out += " — another site"
        return out

    def _where(self, url: str) -> str:
        """A URL as a person scans it: the path and query on the run's own site, the whole address elsewhere."""
        if self.same_site:
            parts = urllib.parse.urlsplit(url)
            url = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return url if len(url) <= 100 else url[:99] + "…"


def _q(text: str | None, n: int = 60) -> str:
    t = " ".join((text or "").split())
    if not t:
        return ""
    return "'" + (t if len(t) <= n else t[:n - 1] + "…") + "'"

