"""Secrets, in one place: the values a session knows — text typed into password, one-time-code and
other secret fields — kept in memory only, never written anywhere; the forms in which they reappear;
the mask that stands in for them; and `scrub`, the one way any text output masks them.

Everything that publishes or records text scrubs it here: the loop's events and records, the store
(which also keeps credential-shaped keys and strings out), what a planner sends to a model, the change
words, MCP results. Pictures paint over every place on the page that shows one (`engine.vision.mask`).
"""

from __future__ import annotations

import functools
import json
import re
import urllib.parse
from collections.abc import Iterable
from typing import Any, TypeVar, cast

MASK = "••••••••"   # what every text output carries instead of a secret
SHORT_MASK = "••••"  # the change words' mask (`scrub(…, mask=SHORT_MASK)`): it sits inside a quoted page line
MIN_SECRET_LEN = 4  # shorter secrets are not hunted for elsewhere (they would mask ordinary text)

# credential shapes (`scrub(…, credentials=True)`): dict keys that name one, and strings shaped like API keys
# or bearer tokens; a key naming a token is kept when its value is a count
_CREDENTIAL_KEY = re.compile(r"api[_-]?key|secret|passw(or)?d|cookie|authorization|credential", re.IGNORECASE)
_TOKEN_KEY = re.compile(r"token", re.IGNORECASE)
_CREDENTIAL_VALUE = re.compile(r"\b(?:sk|rk|pk)-[A-Za-z0-9_\-]{16,}|\b[Bb]earer\s+[A-Za-z0-9._~+/\-]{12,}=*")
_CREDENTIAL_BYTES = re.compile(_CREDENTIAL_VALUE.pattern.encode("ascii"))

_T = TypeVar("_T")


def secret_forms(secret: str) -> list[str]:
    """The ways a typed secret shows up again: as typed, URL-encoded (a GET form puts it in the
    address) and JSON-escaped; longest first."""
    forms = {secret, urllib.parse.quote(secret, safe=""), urllib.parse.quote_plus(secret),
             json.dumps(secret, ensure_ascii=False)[1:-1], json.dumps(secret)[1:-1]}
    return sorted(forms, key=len, reverse=True)


class SecretValues:
    """A session's known secret values (a browser holds one for all its tabs)."""

    def __init__(self) -> None:
        self._values: set[str] = set()

    def add(self, value: str | None) -> None:
        if value and len(value) >= MIN_SECRET_LEN:
            self._values.add(value)

    def update(self, values: Iterable[str]) -> None:
        for v in values:
            self.add(v)

    def __bool__(self) -> bool:
        return bool(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, value: object) -> bool:
        return value in self._values

    def raw(self) -> frozenset[str]:
        return frozenset(self._values)

    def forms(self) -> list[str]:
        """Every value in every form it may reappear in; longest first."""
        return sorted({f for v in self._values for f in secret_forms(v)}, key=len, reverse=True)


# -- scrubbing ------------------------------------------------------------------------------------
def scrub(value: _T, secrets: Iterable[str] = (), *, exact: bool = False, any_prefix: bool = False,
          credentials: bool = False, mask: str = MASK) -> _T:
    """`value` with every known secret in it replaced by `mask`; `value` itself when there is nothing to mask.

    `value` may be a str, bytes, a pydantic model (scrubbed through its JSON, and returned as it is
    when that is clean), or a dict, list or tuple of those (a copy, keys kept); anything else is
    returned as it is. Each secret in `secrets` (MIN_SECRET_LEN characters or more) is masked in
    every form it reappears in (`secret_forms`), and so is each of its prefixes of MIN_SECRET_LEN
    characters or more that ends where a word ends (what a page shows when it echoes a field key by
    key: "Hunt", "Hunte", "Hunter2" — but not "Summ" of "Summer24" in "Summary").

    - `exact`: mask only the values given, as given and in the order given, whatever their length (a
      planner's own typed texts; the change words, which are handed every form already);
    - `any_prefix`: also every prefix of MIN_SECRET_LEN characters or more wherever it appears (MCP,
      whose client reads the page between keystrokes);
    - `credentials`: also drop dict keys that name a credential (api_key, *secret*, *password*, cookie,
      authorization, *token* unless its value is a count) and mask strings shaped like API keys or
      bearer tokens (the store, on everything it writes; inside a model only the strings are seen);
    - `mask`: MASK, or SHORT_MASK in the change words."""
    values = (secrets,) if isinstance(secrets, str) else tuple(secrets)  # a lone secret, not its letters
    masker = _Masker.make(values, exact=exact, any_prefix=any_prefix, credentials=credentials, mask=mask)
    if masker is None:
        return value
    return cast(_T, masker.walk(value))


class _Masker:
    """What one `scrub` call replaces, in order: credential-shaped strings, the literal values (or forms),
    the prefixes that end a word, then any prefix."""

    def __init__(self, literals: list[str], known: tuple[str, ...], any_prefixes: list[str], credentials: bool,
                 mask: str):
        self.literals, self.any_prefixes, self.credentials, self.mask = literals, any_prefixes, credentials, mask
        self.word_rx = _prefix_rx(known) if known else None  # the prefixes of these that end a word

    @classmethod
    def make(cls, secrets: tuple[str, ...], *, exact: bool, any_prefix: bool, credentials: bool,
             mask: str) -> _Masker | None:
        """The masker for these options, or None when it would change nothing."""
        if exact:
            return cls([s for s in secrets if s], (), [], credentials, mask) if any(secrets) or credentials else None
        known = tuple(sorted({s for s in secrets if len(s) >= MIN_SECRET_LEN}))
        if not known and not credentials:
            return None
        prefixes = [s[:k] for s in sorted(known, key=len, reverse=True)
                    for k in range(len(s) - 1, MIN_SECRET_LEN - 1, -1)] if any_prefix else []
        return cls([f for s in known for f in secret_forms(s)], known, prefixes, credentials, mask)

    def text(self, s: str) -> str:
        if self.credentials:
            s = _CREDENTIAL_VALUE.sub(self.mask, s)
        for f in self.literals:
            s = s.replace(f, self.mask)
        if self.word_rx is not None:
            s = self.word_rx[0].sub(self.mask, s)
        for p in self.any_prefixes:
            if p in s:
                s = s.replace(p, self.mask)
        return s

    def data(self, b: bytes) -> bytes:
        mask = self.mask.encode("utf-8")
        if self.credentials:
            b = _CREDENTIAL_BYTES.sub(mask, b)
        for f in self.literals:
            b = b.replace(f.encode("utf-8"), mask)
        if self.word_rx is not None:
            b = self.word_rx[1].sub(mask, b)
        for p in self.any_prefixes:
            b = b.replace(p.encode("utf-8"), mask)
        return b

    def walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, bytes):
            return self.data(value)
        if isinstance(value, dict):
            return {k: self.walk(v) for k, v in value.items() if not (self.credentials and _credential_key(k, v))}
        if isinstance(value, list):
            return [self.walk(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self.walk(v) for v in value)
        if hasattr(value, "model_dump_json"):
            text = value.model_dump_json()
            if self.text(text) == text:  # (the common case: nothing in it to mask, the model as it is)
                return value
            # its strings are masked one by one, never its JSON text: a secret's digits inside a number (an
            # epoch-ms time) are not a secret shown, and masking them would break the number
            return type(value).model_validate_json(json.dumps(self._strings(json.loads(text))))
        return value

    def _strings(self, data: Any) -> Any:
        """Parsed JSON with every string value masked (keys are the names the code gives, numbers as they are)."""
        if isinstance(data, str):
            return self.text(data)
        if isinstance(data, list):
            return [self._strings(v) for v in data]
        if isinstance(data, dict):
            return {k: self._strings(v) for k, v in data.items()}
        return data


def _credential_key(key: object, value: object) -> bool:
    """Does this dict entry hold a credential (a token count does not)?"""
    if _CREDENTIAL_KEY.search(str(key)):
        return True
    return bool(_TOKEN_KEY.search(str(key))) and not (isinstance(value, (int, float)) and not isinstance(value, bool))


@functools.lru_cache(maxsize=32)
def _prefix_rx(secrets: tuple[str, ...]) -> tuple[re.Pattern[str], re.Pattern[bytes]] | None:
    """Prefixes (MIN_SECRET_LEN+ characters) of the secrets that end where a word ends."""
    parts = sorted({re.escape(s[:k]) for s in secrets for k in range(MIN_SECRET_LEN, len(s))}, key=len, reverse=True)
    if not parts:
        return None
    body = "(?:" + "|".join(parts) + r")(?![A-Za-z0-9])"
    return re.compile(body), re.compile(body.encode("utf-8"))
