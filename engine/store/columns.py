"""How values go into the store's columns: timestamps, text and JSON with secrets kept out, a URL's site.

Secrets: the loop already masks typed passwords and one-time codes; the store also drops dict keys
that name credentials and masks strings shaped like API keys or bearer tokens, wherever they appear
(`engine.secret_values.scrub` with `credentials=True`).
"""

from __future__ import annotations

import functools
import json
import urllib.parse
from datetime import UTC, datetime
from typing import Any

from engine import secret_values
from engine.loop.policy import site_of

# what the store keeps of anything it writes (exported as `engine.store.scrub`)
scrub = functools.partial(secret_values.scrub, credentials=True)


def now() -> str:
    """This moment as the store writes it: UTC, milliseconds, a Z."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def stored_text(value: str | None) -> str | None:
    return None if value is None else scrub(value)


def stored_json(value: Any) -> str:
    return json.dumps(scrub(value), ensure_ascii=False, separators=(",", ":"))


def domain_of(url: str) -> str:
    """The site a URL belongs to (`https://shop.example.co.uk/x` → `example.co.uk`); a file URL gives ""."""
    return site_of(urllib.parse.urlsplit(url).hostname or "")
