"""Token estimates without a tokenizer download (tiktoken fetches its tables at run time, which a
closed network cannot). Rule: four ASCII characters a token, every other character a token —
the same convention as the brief's figures (237k characters ≈ 60k tokens)."""

from __future__ import annotations

import re

_SURROGATE = re.compile("[\ud800-\udfff]")


def estimate_tokens(text: str) -> int:
    if not text:
        return 0
    ascii_len = len(text.encode("ascii", "ignore"))
    return (ascii_len + 3) // 4 + (len(text) - ascii_len)


def clean_text(s: str) -> str:
    """Valid text only: lone surrogates (which cannot be encoded) become U+FFFD."""
    if s and _SURROGATE.search(s):
        return _SURROGATE.sub("\ufffd", s)
    return s


def cut(s: str, n: int) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"
