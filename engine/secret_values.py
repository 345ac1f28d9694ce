"""The secret values a session knows — text typed into password, one-time-code and other secret
fields — kept in memory only, never written anywhere, and the forms in which they reappear.

Text outputs scrub these forms (`engine.loop.redact`); pictures paint over every place on the
page that shows one (`engine.vision.mask`)."""

from __future__ import annotations

import json
import urllib.parse

MIN_SECRET_LEN = 4  # shorter secrets are not hunted for elsewhere (they would mask ordinary text)


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

    def update(self, values) -> None:
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
