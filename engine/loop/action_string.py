"""Parse action strings such as `click(12)`, `type(5, "ada@example.com", submit=true)`,
`press("Enter")`, `select(7, "Germany")`, `scroll("down")`, `navigate("http://…")`, `finish("done")`.

The grammar is the seed's call syntax (what `Action.to_string()` prints and a backend planner
sends): a name, then arguments in parentheses. Arguments are positional or `key=value`; values are
single- or double-quoted strings (backslash escapes, commas and parentheses inside quotes are
fine), numbers, booleans (`true`/`false`), `null`, or bare words (node IDs such as `12` or `f1_12`,
keys such as `Enter`). `setValue`/`fill` are aliases of `type`, `doubleClick`/`dblclick` of
`double_click`, `goto` of `navigate`, `sleep` of `wait`, `goBack` of `back`. Tabs and dialogs:
`switch_tab(1)`, `close_tab(1)` / `close_tab()` (the active one), `new_tab("http://…")` (also the
seed-style `switchTab`, `closeTab`, `newTab`), `dialog(true)` / `dialog(false)` / `dialog(true, "text
for a prompt")` (also `ok`/`cancel`); `upload(12, "/path/a.pdf", "/path/b.pdf")`.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError

from engine.errors import ActionStringError
from engine.models import Action

_ALIASES = {
    "click": "click", "doubleclick": "double_click", "dblclick": "double_click", "hover": "hover",
    "type": "type", "setvalue": "type", "fill": "type", "press": "press", "presskey": "press",
    "select": "select", "selectoption": "select", "check": "check", "uncheck": "uncheck", "scroll": "scroll",
    "navigate": "navigate", "goto": "navigate", "back": "back", "goback": "back", "wait": "wait", "sleep": "wait",
    "finish": "finish", "fail": "fail",
    "switchtab": "switch_tab", "selecttab": "switch_tab", "closetab": "close_tab", "newtab": "new_tab",
    "opentab": "new_tab", "dialog": "dialog", "handledialog": "dialog", "upload": "upload", "uploadfile": "upload",
    "setinputfiles": "upload",
}
# positional parameters of each action, in order
_POSITIONAL = {
    "click": ("target",), "double_click": ("target",), "hover": ("target",), "check": ("target",),
    "uncheck": ("target",), "type": ("target", "text"), "select": ("target", "option"), "press": ("key", "target"),
    "scroll": ("direction", "target", "amount"), "navigate": ("url",), "back": (), "wait": ("ms",),
    "finish": ("answer",), "fail": ("reason",),
    "switch_tab": ("tab",), "close_tab": ("tab",), "new_tab": ("url",), "dialog": ("accept", "text"),
    "upload": ("target", "paths"),  # upload(12, "a.pdf", "b.pdf"): every argument after the target is a path
}
_KEYWORDS = {
    "click": {"force"}, "double_click": {"force"}, "hover": set(), "check": {"force"}, "uncheck": {"force"},
    "type": {"clear", "submit"}, "select": set(), "press": set(), "scroll": set(), "navigate": set(),
    "back": set(), "wait": set(), "finish": set(), "fail": set(),
    "switch_tab": set(), "close_tab": set(), "new_tab": set(), "dialog": set(), "upload": set(),
}
_BOOL_FIELDS = {"force", "clear", "submit"}
_INT_FIELDS = {"amount", "ms", "tab"}
_ACCEPT = {"true": True, "yes": True, "1": True, "ok": True, "accept": True, "false": False, "no": False, "0": False,
           "cancel": False, "dismiss": False}
_DIRECTIONS = {"up", "down", "left", "right", "top", "bottom"}
NODE_ID = re.compile(r"^(?:f\d+_)?\d+$")
_NAME = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_\-]*)\s*")
_KEY = re.compile(r"([A-Za-z_]\w*)\s*=(?!=)\s*")
_BARE = re.compile(r"[^,()\s\"']+")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "'": "'"}
EXAMPLES = 'click(12), type(5, "ada@example.com"), press("Enter"), select(7, "Germany"), scroll("down"), ' \
           'navigate("https://example.com"), switch_tab(1), dialog(false), upload(9, "/path/file.pdf"), ' \
           'finish("answer")'


class _Value:
    __slots__ = ("raw", "quoted")

    def __init__(self, raw: str, quoted: bool):
        self.raw, self.quoted = raw, quoted


def parse_action_string(s: str) -> Action:
    """`click(12)` → Action(name="click", target="12"). Raises ActionStringError saying what is wrong."""
    if not isinstance(s, str) or not s.strip():
        raise ActionStringError(f"Empty action. Write one like {EXAMPLES}.")
    text = s.strip().rstrip(";").strip()
    m = _NAME.match(text)
    if not m:
        raise ActionStringError(f"{s!r} does not start with an action name. Write one like {EXAMPLES}.")
    name = _ALIASES.get(m.group(1).lower().replace("_", "").replace("-", ""))
    if name is None:
        raise ActionStringError(f"Unknown action {m.group(1)!r} in {s!r}. Known actions: "
                                f"{', '.join(sorted(set(_ALIASES.values())))} (also setValue, goto, sleep).")
    pos = m.end()
    if pos == len(text):
        positional: list[Any] = []  # `back`, `finish` without parentheses
        keywords: dict[str, Any] = {}
    elif text[pos] != "(":
        raise ActionStringError(f"Expected '(' after {m.group(1)!r} in {s!r}.")
    else:
        positional, keywords, end = _arguments(text, pos + 1, s)
        if text[end:].strip():
            raise ActionStringError(f"Unexpected text after ')' in {s!r}: {text[end:].strip()!r}.")
    return _build(name, positional, keywords, s)


def _arguments(text: str, i: int, original: str) -> tuple[list[_Value], dict[str, _Value], int]:
    positional: list[_Value] = []
    keywords: dict[str, _Value] = {}
    n = len(text)
    while True:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            raise ActionStringError(f"Missing closing ')' in {original!r}.")
        if text[i] == ")":
            return positional, keywords, i + 1
        key = None
        km = _KEY.match(text, i)
        if km:
            key = km.group(1)
            i = km.end()
        value, i = _value(text, i, original)
        if key is not None:
            if key in keywords:
                raise ActionStringError(f"{key}= is given twice in {original!r}.")
            keywords[key] = value
        elif keywords:
            raise ActionStringError(f"A positional argument follows a keyword argument in {original!r}.")
        else:
            positional.append(value)
        while i < n and text[i].isspace():
            i += 1
        if i < n and text[i] == ",":
            i += 1
        elif i < n and text[i] != ")":
            raise ActionStringError(f"Expected ',' or ')' at position {i + 1} of {original!r}, found {text[i]!r}.")


def _value(text: str, i: int, original: str) -> tuple[_Value, int]:
    if i >= len(text):
        raise ActionStringError(f"Missing a value at the end of {original!r}.")
    q = text[i]
    if q in "\"'":
        out: list[str] = []
        j = i + 1
        while j < len(text):
            c = text[j]
            if c == "\\" and j + 1 < len(text):
                nxt = text[j + 1]
                if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[j + 2:j + 6] or ""):
                    out.append(chr(int(text[j + 2:j + 6], 16)))
                    j += 6
                    continue
                out.append(_ESCAPES.get(nxt, nxt))
                j += 2
                continue
            if c == q:
                return _Value("".join(out), True), j + 1
            out.append(c)
            j += 1
        raise ActionStringError(f"Unterminated string starting at position {i + 1} of {original!r} "
                                f"(a closing {q} is missing).")
    m = _BARE.match(text, i)
    if not m:
        raise ActionStringError(f"Expected a value at position {i + 1} of {original!r}, found {text[i]!r}.")
    return _Value(m.group(0), False), m.end()


def _convert(field: str, v: _Value, name: str, original: str) -> Any:
    raw = v.raw
    if field == "target":
        if not NODE_ID.match(raw.strip()):
            raise ActionStringError(f"{name} needs a node ID such as 12 or f1_12, not {raw!r} (in {original!r}).")
        return raw.strip()
    if field == "accept":
        if raw.strip().lower() in _ACCEPT:
            return _ACCEPT[raw.strip().lower()]
        raise ActionStringError(f"dialog needs true (OK) or false (Cancel) first, not {raw!r} (in {original!r}).")
    if field in _BOOL_FIELDS:
        low = raw.lower()
        if low in ("true", "yes", "1"):
            return True
        if low in ("false", "no", "0"):
            return False
        raise ActionStringError(f"{field}= must be true or false, not {raw!r} (in {original!r}).")
    if field in _INT_FIELDS:
        try:
            return int(float(raw))
        except ValueError:
            raise ActionStringError(f"{field} must be a number, not {raw!r} (in {original!r}).") from None
    if not v.quoted and raw.lower() in ("null", "none"):
        return None
    return raw


def _build(name: str, positional: list[_Value], keywords: dict[str, _Value], original: str) -> Action:
    params = list(_POSITIONAL[name])
    if name == "press" and len(positional) == 2 and not positional[0].quoted and NODE_ID.match(positional[0].raw):
        positional = [positional[1], positional[0]]  # press(12, "Enter")
    if name == "scroll":
        params = _scroll_params(positional)
    if name == "upload" and len(positional) >= 2:
        paths = [v.raw for v in positional[1:]]
        positional = positional[:1]
        keywords = {**keywords}
        params = ["target"]
    else:
        paths = None
    if len(positional) > len(params):
        want = ", ".join(params) or "no arguments"
        raise ActionStringError(f"{name} takes {len(params)} positional argument(s) ({want}); "
                                f"{len(positional)} given in {original!r}.")
    fields: dict[str, Any] = {"name": name}
    if paths is not None:
        fields["paths"] = paths
    for field, v in zip(params, positional, strict=False):
        fields[field] = _convert(field, v, name, original)
    allowed = set(_POSITIONAL[name]) | _KEYWORDS[name]
    for key, v in keywords.items():
        if key not in allowed:
            raise ActionStringError(f"{name} does not take {key}= (in {original!r}); it takes "
                                    f"{', '.join(sorted(allowed)) or 'no arguments'}.")
        fields[key] = _convert(key, v, name, original)
    if name == "scroll" and fields.get("direction") is not None and str(fields["direction"]).lower() not in _DIRECTIONS:
        raise ActionStringError(f"scroll direction must be one of {', '.join(sorted(_DIRECTIONS))}, "
                                f"not {fields['direction']!r} (in {original!r}).")
    if name == "scroll" and fields.get("direction"):
        fields["direction"] = str(fields["direction"]).lower()
    try:
        return Action(**{k: v for k, v in fields.items() if v is not None})
    except ValidationError as exc:
        msgs = "; ".join(str(e.get("msg", "")).removeprefix("Value error, ") for e in exc.errors())
        raise ActionStringError(f"{original!r}: {msgs}.") from None


def _scroll_params(positional: list[_Value]) -> list[str]:
    """scroll("down"), scroll("down", 12), scroll("down", 12, 300), scroll(12, "down"), scroll(12)."""
    out: list[str] = []
    for v in positional:
        if "direction" not in out and (v.raw.lower() in _DIRECTIONS or (v.quoted and not v.raw.strip().isdigit())):
            out.append("direction")
        elif "target" not in out and not v.quoted and NODE_ID.match(v.raw) and "amount" not in out:
            out.append("target")
        else:
            out.append("amount")
    return out
