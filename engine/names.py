"""How Vigil compares the names and texts of elements, everywhere one is matched against another:
ghost-match healing, grounding scripted `{role, name}` targets, and the planners' free-text targets."""

from __future__ import annotations

import re

from rapidfuzz import fuzz

_WS = re.compile(r"\s+")
# zero-width characters and soft hyphens: invisible, so never part of what a person reads or types
_INVISIBLE = re.compile("[\u00ad\u200b-\u200d\u2060-\u2064\ufeff]")


def clean(s: str | None) -> str:
    """A name as a person reads it: invisible characters dropped, whitespace collapsed (case kept)."""
    return _WS.sub(" ", _INVISIBLE.sub("", s or "")).strip()


def norm(s: str | None) -> str:
    """Case-, whitespace- and invisible-character-insensitive form (no-break spaces count as spaces)."""
    return clean(s).casefold()


def similarity(a: str | None, b: str | None) -> float:
    """0..1: how alike two names are once normalized (rapidfuzz's Indel ratio; 1.0 = equal)."""
    a, b = norm(a), norm(b)
    if not a or not b:
        return 1.0 if a == b and a else 0.0
    return fuzz.ratio(a, b) / 100.0
