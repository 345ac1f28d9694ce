"""Judging what a step will do (`StepEffect`, computed in the page before dispatch) beside what it names.

The policy's checks on the target (engine.loop.policy) judge the element the step names; the page may act
on something else: the option the select chooses, the control a label activates, the form a key submits,
the command a palette runs. `effect_reasons` adds a sensitive reason for each thing the effect does that
the target's own checks did not already say: a form submission (its method, URL and words), destructive
words in what it activates or chooses, a navigation to another site, a download, a new window elsewhere.
`changed` tells whether the effect computed right before input differs from the one approved."""

from __future__ import annotations

import urllib.parse

from engine.loop.policy import leaves_site
from engine.loop.risk import destructive_phrase
from engine.models.effect import StepEffect

_ACTIVATING = frozenset({"activate", "submit", "toggle", "select", "navigate", "new_window", "download"})


def placed(effect: StepEffect | None, start_domain: str) -> StepEffect | None:
    """The effect with `same_site` said against the run's start site (for its URL or its submission's)."""
    if effect is None:
        return None
    url = effect.submission.url if effect.submission is not None else effect.url
    if url and start_domain:
        effect.same_site = not leaves_site(url, start_domain)
    return effect


def _has(reasons: list[str], start: str) -> bool:
    return any(r.startswith(start) for r in reasons)


def effect_reasons(effect: StepEffect | None, reasons: list[str], start_domain: str) -> list[str]:
    """The sensitive reasons the effect adds to `reasons` (the target's own): empty when it adds nothing."""
    if effect is None:
        return []
    out: list[str] = []
    line = effect.line()
    s = effect.submission
    if s is not None and s.method != "DIALOG":
        if s.on_fill:
            out.append(f"types into a field whose page submits its form once it is filled ({s.method} "
                       f"{_short_url(s.url)})")
        elif not _has(reasons, "submits a form"):
            out.append(f"submits a form ({line})")
    # the words of what it activates or chooses (a key that does nothing, or typing, names nothing it runs)
    acts = effect.kind in _ACTIVATING
    words = [("what it activates", effect.receiver.name if acts and effect.receiver is not None else ""),
             ("what it does", effect.words if acts else "")]
    if s is not None:
        words += [("the button that submits", s.submitter), ("the form it submits", s.form)]
    if not any(("destructive" in r or "DELETE" in r or "confirms a" in r) for r in reasons):
        for where, text in words:
            phrase = destructive_phrase(text, toggle=effect.kind == "toggle")
            if phrase:
                out.append(f'is destructive or irreversible ("{phrase}" in {where}): {line}')
                break
    url = effect.url
    if effect.kind in ("navigate", "new_window") and url and leaves_site(url, start_domain):
        if not _has(reasons, "leaves "):
            host = urllib.parse.urlsplit(url).hostname or url
            out.append(f"leaves {start_domain} for {host} ({line})")
    elif s is not None and s.method != "DIALOG" and start_domain and leaves_site(s.url, start_domain) \
            and not _has(reasons, "leaves "):
        out.append(f"leaves {start_domain} for {urllib.parse.urlsplit(s.url).hostname} (the form posts there)")
    if effect.kind == "download" and not any("download" in r for r in reasons):
        out.append(f"downloads a file ({line}) to this machine")
    return out


def _short_url(url: str) -> str:
    return url if len(url) <= 80 else url[:79] + "…"


def _key(effect: StepEffect | None) -> tuple[object, ...]:
    """What makes two effects the same effect: what it is, whom it reaches, where it sends what."""
    if effect is None:
        return ()
    r, s = effect.receiver, effect.submission
    return (effect.kind, effect.words, effect.url, r.role if r else "", r.name if r else "", r.via if r else "",
            (s.method, s.url.split("?", 1)[0] if s.method == "GET" else s.url, s.target) if s else None)


def changed(approved: StepEffect | None, now: StepEffect | None) -> str | None:
    """How the effect computed right before input differs from the approved one, or None when it does not (an
    effect that could not be computed either time is no change)."""
    if approved is None or now is None or _key(approved) == _key(now):
        return None
    return f"it would now {now.line()} (approved: {approved.line()})"


def submits_to(effect: StepEffect | None, method: str, url: str) -> bool:
    """Whether a document request (`method`, `url`) is the submission the effect names (a GET compared without
    its query, which is the form's fields as they are when it goes)."""
    s = effect.submission if effect is not None else None
    if s is None or s.method == "DIALOG" or s.method != (method or "GET").upper():
        return False
    a, b = urllib.parse.urlsplit(s.url), urllib.parse.urlsplit(url)
    return (a.scheme, a.netloc.lower(), a.path) == (b.scheme, b.netloc.lower(), b.path) and (
        s.method == "GET" or a.query == b.query)
