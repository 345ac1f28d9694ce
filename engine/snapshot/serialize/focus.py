"""Cutting a serialization to a token budget, keeping first what matches the reader's focus words.

Every format has its own unit: a line of text (the text channel, skeleton), a node of the tree
(kept with its ancestors, so the cut tree is still the page's hierarchy and valid JSON), an element
of the annotated HTML. The units that match the focus words go in first, best first; what budget
is left is filled in reading order; the kept units are written in reading order, with a marker
where some were left out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

GAP = "…"
_WORD = re.compile(r"[\w.:/#@-]+", re.UNICODE)
_STOP = frozenset({"the", "and", "for", "with", "that", "this", "from", "what", "which", "where", "when", "how",
                   "are", "is", "of", "to", "in", "on", "a", "an", "or", "find", "show", "page"})


def focus_words(focus: str) -> list[str]:
    """The words to look for: lower case, stop words and one-letter words left out."""
    out = []
    for w in _WORD.findall((focus or "").casefold()):
        w = w.strip(".:-")
        if len(w) >= 2 and w not in _STOP and w not in out:
            out.append(w)
    return out


def score(text: str, words: list[str]) -> int:
    if not words or not text:
        return 0
    low = text.casefold()
    return sum(1 for w in words if w in low)


def _pick(costs: list[int], scores: list[int], budget: int,
          needs: Callable[[int], list[int]] | None = None) -> set[int]:
    """Indices to keep: matching ones best first (with what each needs, e.g. its ancestors), then the rest
    in order, while the budget lasts."""
    kept: set[int] = set()
    used = 0
    order = sorted((i for i, s in enumerate(scores) if s > 0), key=lambda i: (-scores[i], i))
    order += [i for i, s in enumerate(scores) if s <= 0]
    for i in order:
        if i in kept:
            continue
        extra = [j for j in (needs(i) if needs else []) if j not in kept]
        cost = costs[i] + sum(costs[j] for j in extra)
        if used + cost > budget:
            if scores[i] > 0:
                continue  # a smaller match further down may still fit
            break
        kept.add(i)
        kept.update(extra)
        used += cost
    return kept


def cut_lines(lines: list[str], focus: str, budget_chars: int) -> tuple[list[str], int]:
    """Lines within `budget_chars`, focus matches first; (kept lines in order with GAP markers, how many left out)."""
    words = focus_words(focus)
    scores = [score(ln, words) for ln in lines]
    kept = _pick([len(ln) + 1 for ln in lines], scores, budget_chars)
    out: list[str] = []
    for i, ln in enumerate(lines):
        if i in kept:
            out.append(ln)
        elif not out or out[-1] != GAP:
            out.append(GAP)
    return out, len(lines) - len(kept)


# -- tree ---------------------------------------------------------------------------------------------
def _node_text(d: dict) -> str:
    return " ".join(str(d[k]) for k in ("name", "text", "value") if k in d and d[k])


def cut_tree(data: dict, focus: str, budget_chars: int) -> tuple[dict, int, int]:
    """The tree payload (serialize/tree.py) with only the nodes that fit, focus matches and their ancestors
    first; (the cut payload, nodes kept, nodes left out)."""
    page = data.get("page", {})
    body = page.get("body")
    if not isinstance(body, dict):
        return data, 0, 0
    flat: list[dict] = []
    parent: list[int] = []
    stack: list[tuple[dict, int]] = [(body, -1)]
    while stack:
        d, p = stack.pop()
        i = len(flat)
        flat.append(d)
        parent.append(p)
        kids = d.get("children")
        if isinstance(kids, list):
            stack.extend((c, i) for c in reversed(kids) if isinstance(c, dict))
    words = focus_words(focus)
    costs = [len(json.dumps({k: v for k, v in d.items() if k != "children"}, ensure_ascii=False)) + 16 for d in flat]
    scores = [score(_node_text(d), words) for d in flat]

    def ancestors(i: int) -> list[int]:
        out = []
        p = parent[i]
        while p >= 0:
            out.append(p)
            p = parent[p]
        return out

    head = len(json.dumps({k: v for k, v in data.items() if k != "page"}, ensure_ascii=False))
    head += len(json.dumps(page.get("context", {}), ensure_ascii=False))
    kept = _pick(costs, scores, max(0, budget_chars - head), ancestors)
    kept.add(0)

    def rebuild(i: int) -> dict:
        d = flat[i]
        out: dict[str, Any] = {k: v for k, v in d.items() if k != "children"}
        kids = d.get("children")
        if isinstance(kids, list):
            mine = []
            dropped = 0
            for c in kids:
                j = index[id(c)] if isinstance(c, dict) else -1
                if j in kept:
                    mine.append(rebuild(j))
                else:
                    dropped += 1
            if dropped:
                mine.append({"cut": dropped})
            if mine:
                out["children"] = mine
        return out

    index = {id(d): i for i, d in enumerate(flat)}
    new_page = {**page, "body": rebuild(0)}
    return {**data, "page": new_page}, len(kept), len(flat) - len(kept)


# -- annotated HTML -----------------------------------------------------------------------------------
_ELEMENT = re.compile(r"(?=<[a-zA-Z])")
_TAGS = re.compile(r"<[^>]*>")


def cut_html(text: str, focus: str, budget_chars: int) -> tuple[str, int]:
    """The annotated HTML cut into its elements (each opening tag with its own text and the closing tags
    after it); those that fit, focus matches first, in order with GAP markers; (text, elements left out).
    The result is a reading of the page, not a balanced document."""
    pieces = [p for p in _ELEMENT.split(text) if p]
    words = focus_words(focus)
    scores = [score(_TAGS.sub(" ", p) + " " + _attr_words(p), words) for p in pieces]
    kept = _pick([len(p) for p in pieces], scores, budget_chars)
    out: list[str] = []
    for i, p in enumerate(pieces):
        if i in kept:
            out.append(p)
        elif not out or out[-1] != GAP:
            out.append(GAP)
    return "".join(out), len(pieces) - len(kept)


_ATTR_TEXT = re.compile(r'\s(?:value|title|aria-label|placeholder|alt|href)="([^"]*)"')


def _attr_words(piece: str) -> str:
    m = piece.split(">", 1)[0]
    return " ".join(_ATTR_TEXT.findall(m))
