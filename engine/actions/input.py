"""Real input through CDP `Input.*` on the page's top-level session: the browser routes it to
whichever frame (same- or out-of-process) is under the pointer or holds focus, with the event
order a person produces (seed 002, Appendix A).

An input event that makes the page raise a dialog (a click on "Delete all" → `confirm`) gets no answer
until the dialog is answered. So every event goes through the page's dialog watcher
(`DialogWatcher.send_through`): it times out after `INPUT_TIMEOUT` seconds as any command does, but
not while a dialog is being decided — a person may take minutes to answer."""

from __future__ import annotations

from engine.browser.keys import KeyDef, key_def, modifier_mask, parse_chord
from engine.browser.target import PageTarget

PER_KEY_LIMIT = 256  # longer text: the rest goes in one Input.insertText
INPUT_TIMEOUT = 30.0  # seconds an input event may wait for the page (read at each call; the time a dialog
                      # is being decided does not count)


async def send_input(page: PageTarget, method: str, params: dict) -> dict:
    """One `Input.*` command on the page's top-level session (see the module docstring)."""
    return await page.dialogs.send_through(method, params, session_id=page.session_id, timeout=INPUT_TIMEOUT)


async def mouse_click(page: PageTarget, x: float, y: float, *, clicks: int = 1, button: str = "left") -> None:
    """Move, then press and release `clicks` times (clickCount 1, 2 … as a double click does)."""
    await send_input(page, "Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y, "button": "none"})
    await mouse_press(page, x, y, clicks=clicks, button=button)


async def mouse_press(page: PageTarget, x: float, y: float, *, clicks: int = 1, button: str = "left") -> None:
    """Press and release `clicks` times where the pointer already is (after `mouse_move` to x, y)."""
    bit = {"left": 1, "right": 2, "middle": 4}[button]
    for n in range(1, clicks + 1):
        await send_input(page, "Input.dispatchMouseEvent", {"type": "mousePressed", "x": x, "y": y,
                                                            "button": button, "buttons": bit, "clickCount": n})
        await send_input(page, "Input.dispatchMouseEvent", {"type": "mouseReleased", "x": x, "y": y,
                                                            "button": button, "buttons": 0, "clickCount": n})


async def mouse_move(page: PageTarget, x: float, y: float) -> None:
    await send_input(page, "Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y, "button": "none"})


async def _key(page: PageTarget, kind: str, kd: KeyDef, modifiers: int, text: str | None) -> None:
    p = {"type": kind, "key": kd.key, "code": kd.code, "windowsVirtualKeyCode": kd.key_code,
         "nativeVirtualKeyCode": kd.key_code, "modifiers": modifiers}
    if text:
        p["text"] = text
        p["unmodifiedText"] = text
    await send_input(page, "Input.dispatchKeyEvent", p)


async def press_chord(page: PageTarget, chord: str) -> None:
    """`Enter`, `Control+A`, `Shift+Tab` …: modifiers down, key down/up, modifiers up."""
    mods, kd = parse_chord(chord)
    held = 0
    for m in mods:
        held |= modifier_mask([m])
        await _key(page, "rawKeyDown", key_def(m), held, None)
    # Text is produced only without Control/Alt/Meta (Shift alone still types).
    produces = kd.text if not (held & 0b111) else ""
    await _key(page, "keyDown" if produces else "rawKeyDown", kd, held, produces or None)
    await _key(page, "keyUp", kd, held, None)
    for m in reversed(mods):
        held &= ~modifier_mask([m])
        await _key(page, "keyUp", key_def(m), held, None)


async def type_text(page: PageTarget, text: str) -> None:
    """Key events per character (keydown, keypress, input, keyup); newlines press Enter."""
    head, tail = text[:PER_KEY_LIMIT], text[PER_KEY_LIMIT:]
    for ch in head:
        if ch == "\n":
            await press_chord(page, "Enter")
            continue
        kd = key_def(ch) if ch != "\r" else key_def("Enter")
        shift = 8 if (len(ch) == 1 and ch.isalpha() and ch.isupper()) else 0
        await _key(page, "keyDown", kd, shift, ch)
        await _key(page, "keyUp", kd, shift, None)
    if tail:
        await send_input(page, "Input.insertText", {"text": tail})
