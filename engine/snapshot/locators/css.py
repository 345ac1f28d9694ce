"""The CSS selectors a snapshot can answer: compounds of a tag, `#id` and `[attr=value]` (value
double-, single- or un-quoted; only the attributes the snapshot keeps), joined by descendant
(` `) or child (`>`) combinators — the selectors Vigil writes, and the `selectorPath`s a backend
sends (seed 001 §4: `textarea[name='q']`, `button[data-testid='search-btn']`). Anything else
is refused with ValueError, never guessed at."""

from __future__ import annotations

import re
from collections.abc import Callable

from engine.snapshot.vnode import VirtualNode

Pred = Callable[[VirtualNode], bool]

_VALUE = r"""(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[\w-]+)"""
_COMPOUND = re.compile(r"(?P<tag>[a-zA-Z][\w-]*|\*)?(?:\#(?P<id>[A-Za-z_][\w-]*))?"
                       r"(?P<attrs>(?:\[\s*[\w-]+\s*=\s*" + _VALUE + r"\s*\])*)")
_ATTR = re.compile(r"""\[\s*([\w-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|([\w-]+))\s*\]""")
_UNESCAPE = re.compile(r"\\(a |.)")


def _unescape(v: str) -> str:
    return _UNESCAPE.sub(lambda x: "\n" if x.group(1) == "a " else x.group(1), v)


def _compound(text: str, whole: str) -> Pred:
    m = _COMPOUND.fullmatch(text)
    if not m or not text:
        raise ValueError(f"not a selector Vigil can match on a snapshot: {whole!r} (it matches tag, #id and "
                         "[attr=value] joined by spaces or >)")
    tag, ident = m.group("tag"), m.group("id")
    tag = None if tag == "*" else tag
    attrs = [(k, _unescape(a or b or c)) for k, a, b, c in _ATTR.findall(m.group("attrs") or "")]

    def pred(n: VirtualNode) -> bool:
        a = n.attrs or {}
        if tag and n.tag != tag.lower():
            return False
        if ident and a.get("id") != ident:
            return False
        return all(a.get(k) == v for k, v in attrs)
    return pred


def _split(selector: str) -> list[str]:
    """Compounds and combinators, outside quotes."""
    out: list[str] = []
    cur, quote, depth = "", "", 0
    for ch in selector.strip():
        if quote:
            cur += ch
            if ch == quote and not cur.endswith("\\" + ch):
                quote = ""
            continue
        if ch in "\"'":
            quote = ch
        elif ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if depth == 0 and ch in " >":
            if cur:
                out.append(cur)
                cur = ""
            if ch == ">":
                out.append(">")
            continue
        cur += ch
    if cur:
        out.append(cur)
    return out


def css_predicate(selector: str) -> Pred:
    parts = _split(selector)
    if not parts or parts[0] == ">" or parts[-1] == ">":
        raise ValueError(f"not a selector Vigil can match on a snapshot: {selector!r}")
    chain: list[tuple[str, Pred]] = []  # (combinator to the next compound on the right, compound)
    comb = " "
    for p in parts:
        if p == ">":
            comb = ">"
            continue
        chain.append((comb, _compound(p, selector)))
        comb = " "
    last = chain[-1][1]
    ancestors = chain[:-1]

    def pred(n: VirtualNode) -> bool:
        if not last(n):
            return False
        node: VirtualNode | None = n
        # right to left: each compound must match an ancestor (the parent, for >)
        for i in range(len(ancestors) - 1, -1, -1):
            comb_right = chain[i + 1][0]
            want = ancestors[i][1]
            assert node is not None
            p = node.parent
            if comb_right == ">":
                if p is None or not want(p):
                    return False
                node = p
                continue
            while p is not None and not want(p):
                p = p.parent
            if p is None:
                return False
            node = p
        return True
    return pred
