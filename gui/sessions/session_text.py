"""How a stored session's status and times read in the sessions panel and the read-only view."""

from __future__ import annotations

from datetime import datetime

from engine.fleet.words import status_word
from gui.kit.look import AMBER, BLUE_DARK, GREEN_DARK, RED, TEXT, TEXT_SOFT

# session status → colour; the words are engine.fleet.words' (the Fleet view's, `vigil sessions`', `vigil fleet`'s)
STATUS_COLOUR = {"success": GREEN_DARK, "error": RED, "interrupted": AMBER, "running": BLUE_DARK, "idle": TEXT_SOFT}


def status_text(status: str, unverified: int = 0, reason: str | None = None) -> tuple[str, str]:
    """The word and colour a session's status shows with (`reason`: why it ended, which tells a person's stop
    from a process that died): a run that ended done but has steps that were not seen to work reads 'done,
    N unverified' in amber, not as a plain success."""
    word, colour = status_word(status, reason), STATUS_COLOUR.get(status, TEXT)
    if unverified:
        return f"{word}, {unverified} unverified", AMBER if status == "success" else colour
    return word, colour


def local_time(iso: str) -> str:
    """'2024-05-01T12:03:44.120Z' → '2024-05-01 14:03' in local time (the text itself if unparseable)."""
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00")).astimezone().strftime("%Y-%m-%d %H:%M")
    except (ValueError, AttributeError):
        return iso or ""


def short_time(iso: str) -> str:
    """Compact local time for the list: '14:03' today, 'May 1 14:03' this year, else '2023-05-01'."""
    try:
        t = datetime.fromisoformat(iso.replace("Z", "+00:00")).astimezone()
    except (ValueError, AttributeError):
        return iso or ""
    now = datetime.now().astimezone()
    if t.date() == now.date():
        return t.strftime("%H:%M")
    return f"{t.strftime('%b')} {t.day} {t.strftime('%H:%M')}" if t.year == now.year else t.strftime("%Y-%m-%d")
