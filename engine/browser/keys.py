"""Key names → CDP `Input.dispatchKeyEvent` parameters, and key chords such as `Control+A`."""

from __future__ import annotations

from dataclasses import dataclass

from engine.errors import ErrorCode, VigilError

MODIFIER_BITS = {"Alt": 1, "Control": 2, "Meta": 4, "Shift": 8}
_MOD_CODES = {"Alt": ("AltLeft", 18), "Control": ("ControlLeft", 17), "Meta": ("MetaLeft", 91),
              "Shift": ("ShiftLeft", 16)}

# key → (code, windowsVirtualKeyCode, text produced)
_SPECIAL: dict[str, tuple[str, int, str]] = {
    "Enter": ("Enter", 13, "\r"), "Tab": ("Tab", 9, ""), "Backspace": ("Backspace", 8, ""),
    "Escape": ("Escape", 27, ""), "Delete": ("Delete", 46, ""), "Insert": ("Insert", 45, ""),
    " ": ("Space", 32, " "), "ArrowLeft": ("ArrowLeft", 37, ""), "ArrowUp": ("ArrowUp", 38, ""),
    "ArrowRight": ("ArrowRight", 39, ""), "ArrowDown": ("ArrowDown", 40, ""), "Home": ("Home", 36, ""),
    "End": ("End", 35, ""), "PageUp": ("PageUp", 33, ""), "PageDown": ("PageDown", 34, ""),
    **{f"F{i}": (f"F{i}", 111 + i, "") for i in range(1, 13)},
}
_ALIASES = {
    "ctrl": "Control", "control": "Control", "cmd": "Meta", "command": "Meta", "meta": "Meta", "super": "Meta",
    "win": "Meta", "alt": "Alt", "option": "Alt", "shift": "Shift", "controlormeta": "Control",
    "return": "Enter", "enter": "Enter", "numpadenter": "NumpadEnter", "esc": "Escape", "escape": "Escape",
    "del": "Delete", "delete": "Delete",
    "space": " ", "spacebar": " ", "tab": "Tab", "backspace": "Backspace", "insert": "Insert",
    "up": "ArrowUp", "down": "ArrowDown", "left": "ArrowLeft", "right": "ArrowRight",
    "arrowup": "ArrowUp", "arrowdown": "ArrowDown", "arrowleft": "ArrowLeft", "arrowright": "ArrowRight",
    "home": "Home", "end": "End", "pageup": "PageUp", "pagedown": "PageDown", "pgup": "PageUp", "pgdn": "PageDown",
}
_SHIFTED = {'!': '1', '@': '2', '#': '3', '$': '4', '%': '5', '^': '6', '&': '7', '*': '8', '(': '9', ')': '0',
            '_': '-', '+': '=', '{': '[', '}': ']', '|': '\\', ':': ';', '"': "'", '<': ',', '>': '.', '?': '/',
            '~': '`'}
_PUNCT_CODES = {'-': ("Minus", 189), '=': ("Equal", 187), '[': ("BracketLeft", 219), ']': ("BracketRight", 221),
                '\\': ("Backslash", 220), ';': ("Semicolon", 186), "'": ("Quote", 222), ',': ("Comma", 188),
                '.': ("Period", 190), '/': ("Slash", 191), '`': ("Backquote", 192)}


@dataclass(frozen=True)
class KeyDef:
    key: str
    code: str
    key_code: int
    text: str


class KeyNameError(VigilError):
    code = ErrorCode.BAD_ARGUMENT


def key_def(key: str) -> KeyDef:
    """The CDP description of one key (a name such as Enter, or a single character)."""
    if len(key) == 1:
        ch = key
        if ch.isalpha() and ch.isascii():
            return KeyDef(ch, f"Key{ch.upper()}", ord(ch.upper()), ch)
        if ch.isdigit():
            return KeyDef(ch, f"Digit{ch}", ord(ch), ch)
        if ch in _SPECIAL:
            c, kc, t = _SPECIAL[ch]
            return KeyDef(ch, c, kc, t)
        base = _SHIFTED.get(ch, ch)
        if base in _PUNCT_CODES:
            c, kc = _PUNCT_CODES[base]
            return KeyDef(ch, c, kc, ch)
        if base.isdigit():
            return KeyDef(ch, f"Digit{base}", ord(base), ch)
        return KeyDef(ch, "", 0, ch)  # any other character: text only
    name = _ALIASES.get(key.lower(), key)
    if name == "NumpadEnter":  # the keypad's Enter: the page reads it as Enter (its code tells them apart)
        return KeyDef("Enter", "NumpadEnter", 13, "\r")
    if name in _SPECIAL:
        c, kc, t = _SPECIAL[name]
        return KeyDef(name, c, kc, t)
    if name in MODIFIER_BITS:
        c, kc = _MOD_CODES[name]
        return KeyDef(name, c, kc, "")
    raise KeyNameError(f"Unknown key {key!r}. Use a single character or one of: Enter, Tab, Escape, Backspace, Delete, "
                    "Space, ArrowUp/Down/Left/Right, Home, End, PageUp, PageDown, F1–F12, with modifiers joined by + "
                    "(Control+A, Shift+Tab).")


def parse_chord(chord: str) -> tuple[list[str], KeyDef]:
    """`Control+Shift+A` → (["Control", "Shift"], KeyDef for A). A lone `+` is the plus key."""
    chord = chord or ""
    if chord == " " or chord.endswith("+ "):  # a lone space is the space key, as a chord's last key too
        chord = chord[:-1] + "Space"
    chord = chord.strip()
    if not chord:
        raise KeyNameError("No key given. Pass a key name such as Enter or a chord such as Control+A.")
    if chord == "+":
        return [], key_def("+")
    parts = chord.split("+")
    if chord.endswith("++"):
        parts = parts[:-2] + ["+"]
    mods: list[str] = []
    for p in parts[:-1]:
        m = _ALIASES.get(p.strip().lower(), p.strip())
        if m not in MODIFIER_BITS:
            raise KeyNameError(f"{p!r} in {chord!r} is not a modifier; use Control, Shift, Alt or Meta.")
        mods.append(m)
    main = parts[-1].strip() if len(parts[-1].strip()) > 0 else parts[-1]
    kd = key_def(main)
    if len(kd.key) == 1 and kd.key.isalpha() and mods:
        # in a chord the letter is the key itself: Control+A sends "a", Shift+A sends "A"
        ch = kd.key.upper() if "Shift" in mods else kd.key.lower()
        kd = KeyDef(ch, kd.code, kd.key_code, ch)
    return mods, kd


def pressed_key(chord: str | None) -> str:
    """The key a press sends, as the key sender reads it ("Return" → "Enter", "space" → " ", "Shift+Enter" →
    "Enter"): the one reading of a key name, so the policy and the sender never disagree; "" when no key."""
    try:
        return parse_chord(chord or "")[1].key
    except KeyNameError:
        return ""


def modifier_mask(mods: list[str]) -> int:
    m = 0
    for x in mods:
        m |= MODIFIER_BITS[x]
    return m
