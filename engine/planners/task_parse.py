"""Turning an analyst's imperative task text into a list of intents, without a model.

"type 'a@b.com' into Work email and click Create account" → [type("a@b.com" → Work email),
click(Create account)]. Quoted values are protected before the text is split into clauses
(on ';', sentence ends, ', then', 'then', 'and', commas, and before a second click-like verb);
a clause without a verb of its own inherits the previous one ("Select A, B and C").
Each clause is read by the verb it starts with; what it acts on becomes a `TargetSpec`
(a name, a role hint from words such as "button" or "field", an ordinal, "both"/"all",
an anchor for "next to X"). Nothing is grounded here: that happens on each fresh snapshot.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

ROLE_WORDS: dict[str, tuple[str, ...]] = {
    "button": ("button",), "buttons": ("button",), "link": ("link",), "links": ("link",), "hyperlink": ("link",),
    "tab": ("tab",), "tabs": ("tab",), "checkbox": ("checkbox", "switch"), "checkboxes": ("checkbox", "switch"),
    "radio": ("radio",), "toggle": ("switch", "checkbox"), "switch": ("switch", "checkbox"),
    "field": ("textbox", "searchbox", "combobox", "spinbutton"), "fields": ("textbox", "searchbox", "spinbutton"),
    "textbox": ("textbox", "searchbox"), "textboxes": ("textbox", "searchbox"),
    "input": ("textbox", "searchbox", "spinbutton"),
    "inputs": ("textbox", "searchbox", "spinbutton"), "textarea": ("textbox",), "box": ("textbox", "searchbox"),
    "searchbox": ("searchbox", "textbox"), "dropdown": ("combobox", "listbox"), "list": ("combobox", "listbox"),
    "menu": ("combobox", "listbox", "menu", "menuitem"), "select": ("combobox", "listbox"), "combobox": ("combobox",),
    "slider": ("slider",), "heading": ("heading",), "section": ("heading", "button", "tab"), "result": ("link",),
    "results": ("link",), "option": ("option", "radio"), "item": (), "entry": (),
    "sections": ("heading", "button", "tab"),
}
FILLER = {"the", "a", "an", "on", "in", "into", "to", "of", "at", "for", "with", "that", "this", "named", "called",
          "labelled", "labeled", "titled", "says", "saying", "text", "please", "then", "and", "from", "below", "above",
          "page", "again", "me", "it", "its", "is", "which", "all", "both", "every", "each"}
ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
            "ninth": 9, "tenth": 10, "last": -1}
KEYS = {"enter", "return", "tab", "escape", "esc", "backspace", "delete", "space", "up", "down", "left", "right",
        "home", "end", "pageup", "pagedown", "arrowup", "arrowdown", "arrowleft", "arrowright"}

_VERBS = {
    "type": "type", "enter": "type", "input": "type", "fill": "type", "write": "type", "put": "type", "insert": "type",
    "click": "click", "press": "click", "hit": "click", "tap": "click", "push": "click", "follow": "click",
    "activate": "click", "close": "click", "dismiss": "click", "accept": "click",
    "select": "select", "choose": "select", "pick": "select",
    "check": "check", "tick": "check", "mark": "check", "uncheck": "uncheck", "untick": "uncheck",
    "deselect": "uncheck", "unselect": "uncheck",
    "expand": "expand", "open": "open", "show": "expand", "switch": "open",
    "scroll": "scroll", "focus": "focus", "go": "navigate", "navigate": "navigate", "visit": "navigate",
    "browse": "navigate", "search": "search", "find": "find", "locate": "find", "look": "find",
    "submit": "submit", "use": "use", "set": "set", "copy": "type",
    "read": "read", "confirm": "confirm", "answer": "answer",
}
_DIALOG_WORDS = re.compile(r"^(?:(?:it|that|this|the|page'?s?|browser'?s?)\s+)*"
                           r"(?:dialog|prompt|popup|alert|confirmation|warning|question|box)?\s*$", re.I)
_NEW_TAB = re.compile(r"\s+in\s+(?:a\s+)?new\s+(?:tab|window)\b", re.I)
_SPLIT_VERB = re.compile(r"\s+(?=(?:then\s+)?(?:click|press|hit|tap|push)\b)", re.I)
_URL = re.compile(r"^(https?://|file://|www\.)\S+$|^[\w-]+(\.[\w-]+)+(/\S*)?$", re.I)


@dataclass
class TargetSpec:
    """What a clause acts on, before grounding."""

    name: str = ""               # words that should match the element's name
    quoted: bool = False         # the name was quoted: match it closely
    roles: tuple[str, ...] = ()  # role family from words like "button", "field"
    ordinal: int | None = None   # 1-based; -1 = last
    every: bool = False          # "both", "all"
    anchor: str = ""             # "next to Invoice 4411", "for Invoice 4411"
    result: bool = False         # "the 3rd result": an ordinal over (possibly paginated) results
    raw: str = ""

    def describe(self) -> str:
        if self.raw:
            return self.raw
        return self.name or (self.roles[0] if self.roles else "the element")


@dataclass
class Intent:
    kind: str  # type, click, select, check, uncheck, expand, scroll, focus, navigate, search, press, slider
    target: TargetSpec = field(default_factory=TargetSpec)
    value: str | None = None     # text to type, option to choose, key to press, URL, slider value
    value_from: str = ""         # "the value shown for X": read X from the page
    transform: str = ""          # lower / upper
    direction: str = ""          # scroll: up/down/top/bottom
    submit: bool = False
    new_tab: bool = False        # open/click: "in a new tab" (a link's address opens in a tab of its own)
    text: str = ""               # the clause as written

    def describe(self) -> str:
        t = self.target.describe()
        v = f'"{self.value}"' if self.value is not None else (
            f"the value of {self.value_from}" if self.value_from else "")
        return {
            "type": f"Type {v} into {t}", "click": f"Click {t}",
            "select": f"Select {v}" + (f" in {t}" if t != "the element" else ""),
            "check": f"Check {t}", "uncheck": f"Uncheck {t}", "expand": f"Expand {t}", "open": f"Open {t}",
            "scroll": f"Scroll {self.direction or 'down'}" + (
                f" to {t}" if self.target.name or self.target.roles else ""),
            "focus": f"Focus {t}", "navigate": f"Go to {self.value}", "search": f"Search for {v}",
            "press": f"Press {self.value}", "slider": f"Set {t} to {v}",
            "read": f"Read {self.value_from}", "switch_tab": f"Switch to tab {self.value}",
            "dialog": ("Answer the page's dialog " + ("OK" if self.value == "accept" else "Cancel")
                       + (f' with "{self.value_from}"' if self.value_from else "")),
            "close_tab": "Close this tab",
        }.get(self.kind, self.text) + (" in a new tab" if self.new_tab else "")


class TaskParseError(ValueError):
    pass


def _protect(text: str) -> tuple[str, list[str]]:
    quotes: list[str] = []

    def sub(m: re.Match) -> str:
        quotes.append(m.group(2))
        return f" «{len(quotes) - 1}» "
    # 'single' quotes only when they do not look like apostrophes (it's, don't)
    text = re.sub(r"(\")(.*?)\"", sub, text)
    text = re.sub(r"(?<![\w])(')(.+?)'(?![\w])", sub, text)
    return re.sub(r"\s+", " ", text).strip(), quotes


def _unprotect(s: str, quotes: list[str]) -> str:
    return re.sub(r"«(\d+)»", lambda m: quotes[int(m.group(1))], s).strip()


def split_clauses(text: str) -> tuple[list[str], list[str]]:
    text = text.replace("“", '"').replace("”", '"').replace("‘", "'").replace("’", "'")
    prot, quotes = _protect(text)
    parts = re.split(r";|\.(?:\s+|$)|,\s*(?:and\s+)?then\s+|\s+then\s+|,\s*and\s+|\s+and\s+|,\s*", prot)
    out: list[str] = []
    for p in parts:
        for q in _SPLIT_VERB.split(p):
            q = q.strip(" .,!")
            if q:
                out.append(q)
    return out, quotes


def parse_task(text: str) -> list[Intent]:
    """The intents of a task, in order. Raises TaskParseError when nothing actionable is found."""
    clauses, quotes = split_clauses(text or "")
    intents: list[Intent] = []
    last_verb = ""
    context = ""  # "For the user @leo, …": where the following targets are
    for c in clauses:
        words = c.split()
        while words and words[0].lower() in ("and", "then", "please", "now", "also", "finally", "next", "first"):
            words = words[1:]
        if not words or (words[0].lower() == "to" and len(words) > 1 and words[1].lower() in ("find", "locate", "see")):
            continue
        verb = _VERBS.get(words[0].lower())
        rest = " ".join(words[1:])
        if verb is None and words[0].lower() in ("for", "under", "within", "inside") and len(words) > 1:
            context = _unprotect(" ".join(w for w in words[1:] if w.lower() not in FILLER and w.lower() not in
                                          ("user", "row", "item", "entry", "post", "card", "section")), quotes)
            continue
        if verb is None:
            if not last_verb:
                continue
            verb, rest = last_verb, " ".join(words)
        else:
            last_verb = verb
        got = _read(verb, rest, quotes, c)
        for it in got:
            it.text = _unprotect(c, quotes)
            if context and not it.target.anchor:
                it.target.anchor = context
            intents.append(it)
    for i in range(1, len(intents)):
        if intents[i].kind == "dialog" and intents[i - 1].kind != "dialog":
            intents[i - 1], intents[i] = intents[i], intents[i - 1]  # armed before the step that raises it
    if not intents:
        raise TaskParseError(f"Could not find an instruction in {text!r}. Start with a verb such as click, type, "
                             "select, check, scroll or open, e.g. \"click Create account\".")
    return intents


def _q(s: str, quotes: list[str]) -> tuple[str, bool]:
    """Unquote: ("Create account", True) for «0», else the plain words."""
    m = re.fullmatch(r"\s*«(\d+)»\s*", s)
    if m:
        return quotes[int(m.group(1))], True
    return _unprotect(s, quotes), False


def target_spec(phrase: str, quotes: list[str]) -> TargetSpec:
    """Read a target phrase such as 'the 3rd result', 'the Archive button next to Invoice 4411'."""
    raw = _unprotect(phrase, quotes).strip()
    spec = TargetSpec(raw=raw)
    p = phrase
    m = re.search(r"\b(?:next to|beside|near|alongside|for|of|in the row (?:of|for)|in the same row as)\s+(.+)$", p,
                  re.I)
    if m and not re.search(r"\b(?:value|top|bottom)\s+of\b", p, re.I):
        spec.anchor = _q(m.group(1), quotes)[0].strip()
        p = p[:m.start()]
    words = p.split()
    kept: list[str] = []
    for w in words:
        lw = w.lower().strip(",.")
        if re.fullmatch(r"«\d+»", w):
            kept.append(w)
            continue
        om = re.fullmatch(r"(\d+)(st|nd|rd|th)", lw)
        if om:
            spec.ordinal = int(om.group(1))
        elif lw in ORDINALS:
            spec.ordinal = ORDINALS[lw]
        elif lw.startswith("#") and lw[1:].isdigit():
            kept.append(w)
        elif lw in ("both", "all", "every", "each"):
            spec.every = True
        elif lw in ROLE_WORDS:
            if not spec.roles:
                spec.roles = ROLE_WORDS[lw]
            if lw in ("list", "menu", "section", "sections", "item", "option", "result", "results", "entry"):
                continue
        elif lw in FILLER:
            continue
        else:
            kept.append(w)
    if any(w.lower().strip(",.") in ("result", "results") for w in words):
        spec.result = True
        kept = [w for w in kept if re.fullmatch(r"«\d+»", w)]  # "the 7th search result": an ordinal, not a name
    if kept and all(re.fullmatch(r"#?\d+", w) for w in kept) and spec.roles:
        role_word = next((w for w in words if w.lower() in ROLE_WORDS), "")
        kept = [role_word] + kept  # "Tab #1" is the tab's name
    quoted = [w for w in kept if re.fullmatch(r"«\d+»", w)]
    kind_words = {"widget", "element", "control", "component"}
    if quoted and any(w.lower().strip(",.") in kind_words for w in words):
        kind = quotes[int(quoted[0][1:-1])].lower()  # 'a "checkbox" widget' names a kind, not a label
        roles = ROLE_WORDS.get(kind) or {"text": ROLE_WORDS["textbox"], "radio": ("radio",)}.get(kind)
        if roles:
            spec.roles, spec.name = roles, ""
            return spec
    if quoted:
        spec.name, spec.quoted = quotes[int(quoted[0][1:-1])], True
    else:
        spec.name = _unprotect(" ".join(kept), quotes)
    return spec


def _read(verb: str, rest: str, quotes: list[str], clause: str) -> list[Intent]:
    r = re.sub(r"\s+(?:in order\s+)?to\s+(?:find|locate|see|reveal|show)\b.*$", "", rest.strip(), flags=re.I)
    if verb in ("open", "expand") and re.match(r"between\b", r, re.I):
        return []  # "switch between the tabs": exploring is part of grounding the next target
    low = r.lower()
    transform = "lower" if re.search(r"lower ?case|small letters", low) else "upper" if re.search(
        r"upper ?case|capital letters|all caps", low) else ""
    r = re.sub(r"\bin (all )?(lower|upper) ?case( letters)?|\bin capital letters|\bin all caps", "", r,
               flags=re.I).strip()
    if verb == "use":  # "use the textbox to enter X" → enter X into the textbox
        m = re.match(r"(.+?)\s+to\s+(\w+)\s*(.*)$", r)
        if m and _VERBS.get(m.group(2).lower()):
            inner = _read(_VERBS[m.group(2).lower()], m.group(3), quotes, clause)
            for it in inner:
                if not it.target.name and not it.target.roles:
                    it.target = target_spec(m.group(1), quotes)
            return inner
        return []
    if verb == "find":
        return []  # "find X" alone: the following click grounds (and explores) for it
    if verb == "confirm" and _DIALOG_WORDS.match(_unprotect(r, quotes).strip()):
        return [Intent("dialog", value="accept")]  # "click Delete all and confirm": OK to the page's dialog
    if verb == "confirm":  # "confirm the order": the control that confirms it
        return [Intent("click", target_spec("confirm " + r, quotes))]
    if verb == "click" and re.fullmatch(r"(?:cancel|dismiss)\s+(?:the\s+)?(?:dialog|prompt|confirmation)",
                                        clause.strip(), re.I):
        return [Intent("dialog", value="dismiss")]
    if verb == "answer":  # "answer the prompt with Ada"
        m = re.match(r"(?:the\s+)?(?:prompt|dialog|question)\s+with\s+(.+)$", r, re.I)
        return [Intent("dialog", value="accept", value_from=_q(m.group(1), quotes)[0])] if m else []
    if verb == "read":  # "read its total": the value shown for "total" becomes the answer
        name = " ".join(w for w in _unprotect(r, quotes).split() if w.lower() not in FILLER)
        return [Intent("read", TargetSpec(name=name), value_from=name)] if name else []
    m = re.fullmatch(r"(?:to\s+)?(?:the\s+)?tab\s+(?:number\s+)?(\d+)", r.strip(), re.I)
    if verb in ("open", "expand") and m:  # "switch to tab 1"
        return [Intent("switch_tab", value=m.group(1))]
    if verb == "click" and re.fullmatch(r"(?:this|the|that)\s+(?:tab|popup|window)", r.strip(), re.I):
        return [Intent("close_tab")]
    if verb in ("open", "click") and _NEW_TAB.search(r):
        got = _read(verb, _NEW_TAB.sub("", r), quotes, clause)
        for it in got:
            it.new_tab = True
        return got
    if verb in ("type", "set"):
        m = re.match(r"(?:in\s+)?(.+?)\s+with\s+(.+)$", r) if re.match(r"(in\s+)?\S", r) and " with " in r and \
            not r.lstrip().startswith("«") else None
        if m:  # fill (in) Name with "Ada"
            val, _ = _q(m.group(2), quotes)
            return [Intent("type", target_spec(m.group(1), quotes), value=val, transform=transform)]
        m = re.match(r"(?:the\s+)?value\s+(?:(?:shown|displayed|given|written|listed)\s+)?(?:for|next to|of|beside)"
                     r"\s+(.+?)\s+(?:into|in|to)\s+(.+)$", r, re.I)
        if m:
            return [Intent("type", target_spec(m.group(2), quotes), value_from=_q(m.group(1), quotes)[0],
                           transform=transform)]
        m = re.match(r"(.+?)\s+to\s+(«\d+»|\S+)$", r) if verb == "set" else None
        if m:
            return [Intent("type", target_spec(m.group(1), quotes), value=_q(m.group(2), quotes)[0])]
        m = re.match(r"(.*?)(«\d+»)\s*(?:(?:into|in|on|to|inside)\s+(.+))?$", r)
        if m:  # [the username] «v» [into target]: a field named before the value wins
            val = quotes[int(m.group(2)[1:-1])]
            before = target_spec(m.group(1), quotes) if m.group(1).strip() else None
            after = target_spec(m.group(3), quotes) if m.group(3) else None
            if after is not None and (after.every or after.ordinal or after.name):
                spec = after  # "the password «x» into both text fields": the fields are named after "into"
            else:
                spec = before if before is not None and before.name else (
                    after or before or TargetSpec(roles=ROLE_WORDS["field"]))
            if spec is before and after is not None and not spec.roles:
                spec.roles = after.roles
            return [Intent("type", spec, value=val, transform=transform)]
        m = re.match(r"(.+?)\s+(?:into|in|on|inside|as)\s+(.+)$", r)
        if m:  # unquoted: type ada@example.com into Email; enter 10/11/2011 as the date
            return [Intent("type", target_spec(m.group(2), quotes), value=_unprotect(m.group(1), quotes),
                           transform=transform)]
        if r:
            return [Intent("type", TargetSpec(roles=ROLE_WORDS["field"]), value=_unprotect(r, quotes),
                           transform=transform)]
        return []
    if verb == "click":
        if not r:
            return [Intent("click", TargetSpec(roles=("button",), raw="the button"))]
        m = re.search(r"\bby clicking (?:on )?(.+)$", r, re.I)
        if m:
            return [Intent("click", target_spec(m.group(1), quotes))]
        one = r.split()
        if len(one) == 1 and one[0].lower() in KEYS and not re.fullmatch(r"«\d+»", one[0]):
            return [Intent("press", value=one[0])]
        if re.fullmatch(r"(?:the\s+)?(?:enter|return)\s+key", r, re.I):
            return [Intent("press", value="Enter")]
        m = re.fullmatch(r"(?:the\s+)?(\w+(?:\+\w+)+)", r)
        if m and "+" in m.group(1):
            return [Intent("press", value=m.group(1))]
        return [Intent("click", target_spec(r, quotes))]
    if verb == "submit":
        return [Intent("submit", target_spec(r, quotes) if r else TargetSpec())]
    if verb in ("check", "uncheck"):
        return [Intent(verb, target_spec(r, quotes))]
    if verb == "select":
        m = re.match(r"(.+?)\s+(?:with|using|on|in)\s+(?:the\s+)?(slider|spinner|stepper)$", r, re.I)
        if m:
            return [Intent("slider", TargetSpec(roles=("slider", "spinbutton"), raw=f"the {m.group(2).lower()}"),
                           value=_q(m.group(1), quotes)[0])]
        if ">" in r and not r.lstrip().startswith("«"):  # a menu path: Select File>Export>PDF
            return [Intent("click", target_spec(part, quotes)) for part in r.split(">") if part.strip()]
        m = re.match(r"(.+?)\s+(?:in|from|for|as|under)\s+(.+)$", r)
        if m:
            val, _ = _q(m.group(1), quotes)
            return [Intent("select", target_spec(m.group(2), quotes), value=val)]
        val, quoted = _q(r, quotes)
        if val.lower() in ("nothing", "none", "no items", "no options"):
            return []
        return [Intent("select", TargetSpec(), value=val)]
    if verb in ("expand", "open"):
        if verb == "open" and _URL.match(_q(r, quotes)[0]):
            return [Intent("navigate", value=_q(r, quotes)[0])]
        spec = target_spec(r, quotes)
        return [Intent(verb, spec)]
    if verb == "scroll":
        m = re.match(r"(?:(up|down|left|right)\s+)?(?:to\s+(?:the\s+)?)?(top|bottom|end|start)?\s*(.*)$", r, re.I)
        direction = (m.group(1) or "").lower() if m else ""
        edge = (m.group(2) or "").lower() if m else ""
        rest2 = m.group(3) if m else r
        m2 = re.match(r"(.+?)\s+to\s+(?:the\s+)?(top|bottom|end|start)\b", rest2, re.I)
        if m2:  # scroll the textarea to the bottom
            edge = m2.group(2).lower()
            return [Intent("scroll", target_spec(m2.group(1), quotes),
                           direction="top" if edge in ("top", "start") else "bottom")]
        if edge:
            return [Intent("scroll", TargetSpec(), direction="top" if edge in ("top", "start") else "bottom")]
        spec = target_spec(re.sub(r"^(?:down|up)?\s*(?:to|until)\s+", "", rest2, flags=re.I),
                           quotes) if rest2.strip() else TargetSpec()
        return [Intent("scroll", spec, direction=direction or "down")]
    if verb == "focus":
        return [Intent("focus", target_spec(re.sub(r"^(?:into|on|in)\s+", "", r), quotes))]
    if verb == "navigate":
        m = re.match(r"(?:to\s+)?(.+)$", r)
        url = _q(m.group(1), quotes)[0] if m else ""
        if _URL.match(url):
            return [Intent("navigate", value=url)]
        if re.match(r"back\b", url, re.I):
            return [Intent("press", value="__back__")]
        return []  # "navigate through the file tree": no URL, nothing to do by itself
    if verb == "search":
        m = re.match(r"(?:for\s+)?(.+?)(?:\s+(?:in|on|using)\s+(.+))?$", r)
        if m:
            return [Intent("search", target_spec(m.group(2), quotes) if m.group(2) else TargetSpec(),
                           value=_q(m.group(1), quotes)[0])]
    return []
