"""How the window looks, in one place: the colours more than one widget paints with, the green of a button
that says yes, and the glyphs it marks things with (an emoji where an installed font draws it, a plain mark
where none does). Colours a single widget alone uses stay beside it."""

from __future__ import annotations

from functools import cache

from PySide6.QtGui import QFont, QFontDatabase, QFontMetrics

# text and lines (greys)
INK = "#111827"          # the strongest text: a summary, an outcome
TEXT = "#374151"         # body text
TEXT_SOFT = "#4b5563"    # secondary text, a stopped or idle state
MUTED = "#6b7280"        # hints, placeholders, what is past
LINE = "#e5e7eb"         # borders; an idle header's ground
PANEL = "#f9fafb"        # a header panel's ground
# red: errors, failures, refusals
RED = "#b91c1c"
RED_DARK = "#991b1b"
RED_BG = "#fee2e2"
BANNER_FG, BANNER_BG = "#8a1c13", "#fdecea"   # the window's error banner
# green: success
GREEN_DARK = "#166534"
# amber: unverified, waiting, lagging
AMBER = "#b45309"
AMBER_FG, AMBER_BG = "#92400e", "#fef3c7"     # amber words on an amber ground (an unverified run's header)
AMBER_PANEL = "#fffbeb"                       # the approval bar's ground
# blue: running, current, links
BLUE = "#2563eb"
BLUE_DARK = "#1d4ed8"
BLUE_BG = "#dbeafe"
NAVY = "#1e3a8a"

# the button that says yes (Approve, a dialog's OK)
GREEN_BUTTON = ("QPushButton { background:#16a34a; color:white; font-weight:bold; padding:4px 14px; "
                "border-radius:4px; }")


@cache
def glyph(preferred: str, fallback: str) -> str:
    """`preferred` (e.g. an emoji) when an installed font can draw it, else `fallback`: a machine
    without an emoji font would show an empty box instead of ✅."""
    cp = ord(preferred[0])
    for family in QFontDatabase.families():
        if QFontMetrics(QFont(family)).inFontUcs4(cp):
            return preferred
    return fallback


def ok_mark(ok: bool) -> str:
    return glyph("✅", "✔") if ok else glyph("❌", "✘")


def warn_mark() -> str:
    return glyph("⚠️", "!")
