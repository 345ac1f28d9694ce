"""Text from pages, models and people, made safe to show a person: bidi control characters neutralised.

A bidi control (the Unicode Bidi_Control set: U+061C ALM, U+200E LRM, U+200F RLM, U+202A–U+202E LRE, RLE,
PDF, LRO, RLO, U+2066–U+2069 LRI, RLI, FSI, PDI) shown as itself reorders what follows it: "Delete" can read
as "eteleD", a file name's extension can move, a quoted name can swallow the words after it (the
"trojan source" attack). `bidi_safe` replaces each with a visible marker, `⟦U+202E⟧`: the control no longer
takes effect, and the reader sees that something was there and which one (the code point is what a search
finds). Not `\\u202e`: the window's and the reports' readers are not all programmers, and the brackets set
the marker apart from the words around it. Letters of right-to-left scripts (Hebrew, Arabic) are not
controls and are left as they are.

Shown text only: what is stored and what is sent to a model keep the page's own characters.

The terminal has one place for every line a command prints for a person — step lines, prompts, listings,
errors, logs, tracebacks: `bidi_safe_streams` wraps `sys.stderr` and `sys.stdout` for as long as a command
runs (`vigil …`, `python -m engine.mcp`). Machine output is left byte-exact: stdout under `--json` (one JSON
document a program reads) and the MCP protocol on a stdio server's stdout. The wrapper changes nothing
else: each `write` goes straight to the stream it wraps (a control is one character, so no write can split
one), and everything but writing is the wrapped stream's own (`fileno`, `isatty`, `buffer`, `encoding`, …).
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterable, Iterator
from typing import TextIO, cast

BIDI_CONTROLS = ("\u061c", "\u200e", "\u200f", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e",
                 "\u2066", "\u2067", "\u2068", "\u2069")


def bidi_marker(ch: str) -> str:
    """What a bidi control shows as: `⟦U+202E⟧`."""
    return f"⟦U+{ord(ch):04X}⟧"


_MARKERS = {c: bidi_marker(c) for c in BIDI_CONTROLS}
# a regex, not str.translate: on long non-ASCII text (a payload in the inspector) it is several times quicker
_CONTROL = re.compile("[" + "".join(BIDI_CONTROLS) + "]")


def has_bidi(text: str) -> bool:
    """Whether `text` holds a bidi control (twelve substring scans: quicker than one regex search)."""
    return not text.isascii() and any(c in text for c in BIDI_CONTROLS)


def bidi_safe(text: str) -> str:
    """`text` with every bidi control shown as its marker (`⟦U+202E⟧`); text without one comes back as
    it is, at the cost of a scan."""
    return _CONTROL.sub(lambda m: _MARKERS[m.group()], text) if has_bidi(text) else text


class BidiSafeStream:
    """A text stream that writes to `inner` with bidi controls shown as markers."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner

    def write(self, s: str) -> int:
        self.inner.write(bidi_safe(s))
        return len(s)  # what the caller gave, as a text stream counts

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self.inner.flush()

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


def _wrapped(stream: TextIO | None) -> TextIO | None:
    if stream is None or isinstance(stream, BidiSafeStream):  # no stream (a detached process), or wrapped already
        return stream
    return cast(TextIO, BidiSafeStream(stream))


@contextlib.contextmanager
def bidi_safe_streams(*, stdout: bool = True) -> Iterator[None]:
    """Within: `sys.stderr` (and `sys.stdout` unless `stdout=False`, for machine output) shows bidi controls
    as markers; the streams are put back after, so a caller in the same process gets its own again."""
    saved = sys.stdout, sys.stderr
    sys.stderr = _wrapped(sys.stderr)  # None only where it was None
    if stdout:
        sys.stdout = _wrapped(sys.stdout)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
