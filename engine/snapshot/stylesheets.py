"""What a page's style sheets can do across elements, for the sheets the page cannot read itself.

An incremental walk needs to know whether the page's CSS styles an element by what happens elsewhere:
`:has()` (a change styles its ancestors), sibling combinators (`+`, `~`, `:nth-child(… of S)`: the
following siblings), `:focus-within` (focus styles the ancestors), `@container` (a box's size restyles
what is inside). The walker reads this from the sheets' rules (js/walker/plan.js `cssFlags`), except
where `cssRules` throws: a sheet from another origin — a CDN, another host, every sheet of a `file://`
page. Such a sheet's address comes back in the walk's `inc.xs`; the browser reads its text for us
(engine.browser.stylesheets, CDP's CSS domain, enabled then), `css_flags` scans it (and the sheets it
imports), and the next walk of that frame gets them as `opts.xcss`: {address: [has, sib, fw, cq, how
many sheets at that address were read, what the compounds left of sibling combinators read and the
selectors that give a ::before or ::after words (`g`)]} (null: the browser could not read it either).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urljoin

from engine.browser.stylesheets import UNREAD, Sheet, StyleSheets
from engine.browser.target import PageTarget
from engine.errors import VigilError

_COMMENT = re.compile(r"/\*.*?(?:\*/|\Z)", re.S)
_STRING = re.compile(r'"(?:\\.|[^"\\\n])*"?|\'(?:\\.|[^\'\\\n])*\'?')
_URL = re.compile(r"url\([^)]*\)", re.I)
_ATTR = re.compile(r"\[\s*([^\]\s=~|^$*]+)[^\]]*\]")
_NTH = re.compile(r":nth-(?:last-)?(?:child|of-type)\(([^()]*)\)", re.I)
_NTH_OF = re.compile(r":nth-(?:last-)?(?:child|of-type)\([^)]*\sof\s", re.I)
_OF = re.compile(r"\sof\s", re.I)
_IMPORT = re.compile(r"@import\s+(?:url\(\s*)?([\"']?)([^\"')\s;]+)\1", re.I)
_PUNCT = re.compile(r"[{};]")
_CLASS = re.compile(r"\.((?:[^\s.#:\[\]()>+~,*|\\]|\\.)+)")
_ESC = re.compile(r"\\(.)")
_HEX_ESC = re.compile(r"\\[0-9a-f]", re.I)
_ATTR_NAME = re.compile(r"\[\s*([\w-]+)")
_PSEUDO = re.compile(r":([\w-]+)")
_GEN = re.compile(r"::?(?:before|after)\b", re.I)
_CONTENT = re.compile(r"^\s*content\s*:(.*)$", re.I | re.S)
_HOLE = re.compile(r'"(\d+)"')
WHAT = "walker-css-flags"
# What of an element a pseudo-class left of a sibling combinator reads (attributes; "!": its children);
# one not listed could read anything. (Kept in step with SIB_PSEUDO in js/walker/plan.js.)
SIB_PSEUDO = {
    "hover": "", "focus": "", "focus-visible": "", "active": "", "first-child": "", "last-child": "", "only-child": "",
    "first-of-type": "", "last-of-type": "", "only-of-type": "", "nth-child": "", "nth-last-child": "",
    "nth-of-type": "", "nth-last-of-type": "", "not": "", "is": "", "where": "", "root": "", "scope": "",
    "checked": "checked", "disabled": "disabled", "enabled": "disabled", "required": "required",
    "optional": "required", "read-only": "readonly disabled contenteditable",
    "read-write": "readonly disabled contenteditable", "placeholder-shown": "placeholder", "link": "href",
    "any-link": "href", "visited": "href", "open": "open", "lang": "lang", "dir": "dir", "empty": "!", "blank": "!",
}


@dataclass
class CssFacts:
    """What a sheet's rules can do across elements (see the module's doc); for sibling combinators, what
    of an element the compounds left of them read: classes `cls`, attributes `att`, children `em`, or
    anything (`any`)."""

    has: bool = False
    sib: bool = False
    fw: bool = False
    cq: bool = False
    em: bool = False
    any: bool = False
    cls: set = field(default_factory=set)
    att: set = field(default_factory=set)
    gen: set = field(default_factory=set)   # selectors (pseudo-element left out) whose ::before/::after has words

    def merge(self, o: CssFacts) -> None:
        self.has, self.sib, self.fw, self.cq = self.has or o.has, self.sib or o.sib, self.fw or o.fw, self.cq or o.cq
        self.em, self.any = self.em or o.em, self.any or o.any
        self.cls |= o.cls
        self.att |= o.att
        self.gen |= o.gen

    def for_walker(self, sheets: int) -> list:
        """The walker's form (opts.xcss[address]): [has, sib, fw, cq, sheets read, {e, a, c, t}]."""
        return [self.has, self.sib, self.fw, self.cq, sheets,
                {"e": self.em, "a": self.any, "c": sorted(self.cls), "t": sorted(self.att), "g": sorted(self.gen)}]


def selector_flags(sel: str, f: CssFacts) -> None:
    """One selector list's flags, as the walker's `selFlags` reads them: a `+` or `~` is a sibling
    combinator unless it is inside an attribute selector or the step of `:nth-child(2n+1)` (which only
    insertions and removals change, and their parent is walked again whole); `of S` reads siblings."""
    low = sel.lower()
    if ":has(" in low:
        f.has = True
    if ":focus-within" in low:
        f.fw = True
    if _NTH_OF.search(sel):
        f.sib = f.any = True
    if "+" in sel or "~" in sel:
        t = _NTH.sub(lambda m: m.group(0) if _OF.search(m.group(1)) else "", _ATTR.sub(r"[\1]", sel))
        if "+" in t or "~" in t:
            _sib_scan(t, f)


def _sib_scan(s: str, f: CssFacts) -> None:
    """The compound just left of each sibling combinator (the walker's `sibScan`)."""
    depth, start, last = 0, 0, ""
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif depth > 0:
            if c in "+~":
                f.sib = f.any = True
        elif c == ",":
            last, start = "", i + 1
        elif c in " >\n\t\r\f":
            part = s[start:i].strip()
            last = part or last
            start = i + 1
        elif c in "+~":
            part = s[start:i].strip()
            last = part or last
            f.sib = True
            if last:
                _left_of(last, f)
            else:
                f.any = True  # a relative selector: its left is the nesting parent
            last, start = "", i + 1
        i += 1


def _left_of(c: str, f: CssFacts) -> None:
    if "&" in c or _HEX_ESC.search(c):
        f.any = True
        return

    def cls(m: re.Match) -> str:
        f.cls.add(_ESC.sub(r"\1", m.group(1)))
        return " "

    rest = _CLASS.sub(cls, c)
    if "#" in rest:
        f.att.add("id")
    for m in _ATTR_NAME.finditer(rest):
        f.att.add(m.group(1).lower())
    for m in _PSEUDO.finditer(rest):
        v = SIB_PSEUDO.get(m.group(1).lower())
        if v is None:
            f.any = True
        elif v == "!":
            f.em = True
        elif v:
            f.att.update(v.split())


def css_flags(text: str) -> CssFacts:
    """What a style sheet's rules can do across elements (its @imports are not followed: see `imports`).
    Every rule's prelude is read — the text before each `{`, nested rules and rules inside @media,
    @supports and @layer included —; declarations never count."""
    strings: list[str] = []

    def hole(m: re.Match) -> str:   # (each string a numbered hole: selectors and `content` get it back)
        strings.append(m.group())
        return f'"{len(strings) - 1}"'

    t = _URL.sub("url()", _STRING.sub(hole, _COMMENT.sub(" ", text)))
    f = CssFacts()
    start = 0
    gen_pre = ""   # the prelude of the rule being read, when it styles a ::before or ::after
    for m in _PUNCT.finditer(t):
        p = m.group()
        if p == "{":
            pre = t[start:m.start()].strip()
            gen_pre = ""
            if pre.startswith("@"):
                low = pre.lower()
                if low.startswith("@container"):
                    f.cq = True
                elif low.startswith("@scope"):
                    selector_flags(pre[6:].replace(") to (", "), ("), f)
            elif pre:
                selector_flags(pre, f)
                if _GEN.search(pre):
                    gen_pre = pre
        elif gen_pre:
            c = _CONTENT.match(t[start:m.start()])
            if c and _has_words(_HOLE.sub(lambda h: strings[int(h.group(1))], c.group(1))):
                _add_gen(_HOLE.sub(lambda h: strings[int(h.group(1))], gen_pre), f)
            if p == "}":
                gen_pre = ""
        start = m.end()
    return f


def _has_words(value: str) -> bool:
    """Whether a `content` value may show words: attr() or var(), or a string with more than blanks,
    punctuation, icon-font glyphs (as the walker's `genRule`)."""
    if "attr(" in value or "var(" in value:
        return True
    inner = "".join(_STRING.findall(value))
    inner = re.sub(r"\\([0-9a-fA-F]{1,6}) ?", lambda m: chr(min(int(m.group(1), 16), 0x10FFFF)), inner)
    return any(not ch.isspace() and ch not in "\"'" and not 0xE000 <= ord(ch) <= 0xF8FF
               and unicodedata.category(ch)[0] != "P" and unicodedata.category(ch) != "Sm" for ch in inner)


def _add_gen(pre: str, f: CssFacts) -> None:
    """The selectors of a prelude that style a ::before or ::after, without the pseudo-element."""
    depth, start, parts = 0, 0, []
    for i, ch in enumerate(pre):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(pre[start:i])
            start = i + 1
    parts.append(pre[start:])
    for part in parts:
        if _GEN.search(part):
            f.gen.add(_GEN.sub("", part).strip() or "*")


def imports(text: str) -> list[str]:
    """The addresses a sheet @imports, as written (relative to the sheet)."""
    return [m.group(2) for m in _IMPORT.finditer(_COMMENT.sub(" ", text))]


def _analyse(text: str) -> tuple[CssFacts, list[str]]:
    return css_flags(text), imports(text)


class _NotYet(Exception):
    """A sheet's text has not been read yet (or the browser did not answer in time)."""


async def _union(sheets: StyleSheets, frame_id: str, at: list[Sheet], seen: set[str], fetch: bool,
                 depth: int = 0) -> CssFacts | None:
    """The facts of these sheets and of what they import; None when one cannot be read (or an import
    is not one the browser reported). _NotYet when a text is not at hand (`fetch`: read it now)."""
    acc = CssFacts()
    for sh in at:
        if sh.sheet_id in seen:
            continue
        seen.add(sh.sheet_id)
        got = await sheets.derive(sh, WHAT, _analyse) if fetch else sheets.known(sh, WHAT)
        if got is None:
            raise _NotYet
        if got is UNREAD:
            return None
        facts, imps = got
        acc.merge(facts)
        for imp in imps:
            sub = sheets.at(frame_id, urljoin(sh.url, imp))
            if not sub or depth >= 8:
                return None
            f = await _union(sheets, frame_id, sub, seen, fetch, depth + 1)
            if f is None:
                return None
            acc.merge(f)
    return acc


async def cross_origin_flags(sheets: StyleSheets, frame_id: str, hrefs: Iterable[str],
                             fetch: bool = True) -> dict[str, list | None]:
    """opts.xcss for one frame's walker: per address the browser reported in that frame, its facts and
    how many sheets it read there (an address it has not reported, or whose text is not at hand without
    `fetch`, is left out: the walker asks again)."""
    out: dict[str, list | None] = {}
    for href in sorted(hrefs):
        at = sheets.at(frame_id, href)
        if not at:
            continue
        try:
            f = await _union(sheets, frame_id, at, set(), fetch)
        except _NotYet:
            continue
        out[href] = None if f is None else f.for_walker(len(at))
    return out


class CrossOriginCss:
    """Per page (held by the snapshot cache's RowMemo): the addresses each frame's walker could not
    read, and the reading of them under way (started when a walk reports them, so the capture that
    learnt of them does not wait for the browser; the next one does, briefly)."""

    def __init__(self) -> None:
        self.wanted: dict[str, set[str]] = {}
        self._tasks: dict[str, asyncio.Task] = {}

    async def opts(self, page: PageTarget, frame_id: str) -> dict | None:
        """The `xcss` option for this frame's next walk (None: nothing to hand in)."""
        want = self.wanted.get(frame_id)
        if not want:
            return None
        task = self._tasks.pop(frame_id, None)
        if task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(task), 1.5)
        ft = page.frames.get(frame_id)
        if ft is None or not page.stylesheets.enabled(ft.session_id):
            return None
        # (what is at hand: the texts are read by the task `asked` starts, never on a capture's path)
        return await cross_origin_flags(page.stylesheets, frame_id, want, fetch=False) or None

    def asked(self, page: PageTarget, frame_id: str, hrefs: list) -> None:
        """A walk of this frame could not read the sheets at these addresses: have the browser read them."""
        want = self.wanted.setdefault(frame_id, set())
        new = {h for h in hrefs if isinstance(h, str) and h} - want
        if not new and frame_id in self._tasks:
            return
        want |= new
        if frame_id not in self._tasks:
            self._tasks[frame_id] = asyncio.get_running_loop().create_task(self._learn(page, frame_id, set(want)))

    async def _learn(self, page: PageTarget, frame_id: str, hrefs: set[str]) -> None:
        ft = page.frames.get(frame_id)
        if ft is None or not await page.stylesheets.enable(ft.session_id):
            return
        with contextlib.suppress(VigilError):
            await cross_origin_flags(page.stylesheets, frame_id, hrefs)

    def keep_only(self, frame_ids) -> None:
        for fid in [f for f in self.wanted if f not in frame_ids]:
            del self.wanted[fid]
            t = self._tasks.pop(fid, None)
            if t is not None:
                t.cancel()
