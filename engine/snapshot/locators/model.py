"""A Playwright locator as data: a chain of steps (frames, a scope, the element itself, an index).

A `Locator` is what Vigil keeps for a node next to its ID: it can be written as a line of Python
(`page.get_by_role("button", name="Save", exact=True)`), stored as JSON, turned back into a live
Playwright locator (`build_on(page)`, sync or async API alike), and matched against a snapshot
(`engine.snapshot.locators.match`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from engine.models.text import BIDI_CONTROLS

# a bidi control inside a literal (where json.dumps leaves it raw) → its escape, which stands for the same character
_BIDI_ESCAPES = str.maketrans({c: f"\\u{ord(c):04x}" for c in BIDI_CONTROLS})

# the kinds of step, in Playwright's order of preference for the element itself
STRATEGIES = ("testid", "role", "label", "placeholder", "text", "css")
KINDS = ("frame", *STRATEGIES, "nth")


@dataclass(frozen=True)
class Step:
    """One link of the chain. `value` is the test id, role, label, placeholder, text or CSS
    selector (for `frame`: the CSS selector of the <iframe>; for `nth`: the 0-based index);
    `name` is the accessible name of a role step ("" for none)."""

    kind: str
    value: str
    name: str = ""

    def code(self) -> str:
        v = py_str(self.value)
        if self.kind == "frame":
            return f".frame_locator({v})"
        if self.kind == "testid":
            return f".get_by_test_id({v})"
        if self.kind == "role":
            return f".get_by_role({v}, name={py_str(self.name)}, exact=True)" if self.name else f".get_by_role({v})"
        if self.kind == "label":
            return f".get_by_label({v}, exact=True)"
        if self.kind == "placeholder":
            return f".get_by_placeholder({v}, exact=True)"
        if self.kind == "text":
            return f".get_by_text({v}, exact=True)"
        if self.kind == "css":
            return f".locator({v})"
        if self.kind == "nth":
            return f".nth({int(self.value)})"
        raise ValueError(f"unknown locator step {self.kind!r}")


@dataclass(frozen=True)
class Locator:
    """A chain of steps from the page to one element."""

    steps: tuple[Step, ...]

    @property
    def strategy(self) -> str:
        """How the element itself is found: testid, role, label, placeholder, text or css (+ nth)."""
        own = [s.kind for s in self.steps if s.kind in STRATEGIES]
        kind = own[-1] if own else "css"
        return kind + "+nth" if self.steps and self.steps[-1].kind == "nth" else kind

    @property
    def uses_nth(self) -> bool:
        return any(s.kind == "nth" for s in self.steps)

    def code(self, root: str = "page") -> str:
        """The Python expression, e.g. `page.frame_locator("#pay").get_by_role("button", name="Pay", exact=True)`."""
        return root + "".join(s.code() for s in self.steps)

    def __str__(self) -> str:
        return self.code()

    def to_dict(self) -> dict[str, Any]:
        return {"steps": [[s.kind, s.value, s.name] if s.name else [s.kind, s.value] for s in self.steps],
                "code": self.code()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Locator:
        """The inverse of to_dict; ValueError on anything else."""
        raw = d.get("steps") if isinstance(d, dict) else None
        if not isinstance(raw, list) or not raw:
            raise ValueError("a stored locator needs a non-empty list of steps")
        steps = []
        for s in raw:
            if not isinstance(s, list | tuple) or not 2 <= len(s) <= 3 or s[0] not in KINDS:
                raise ValueError(f"not a locator step: {s!r}")
            steps.append(Step(str(s[0]), str(s[1]), str(s[2]) if len(s) == 3 else ""))
        return cls(tuple(steps))

    def build_on(self, page: Any) -> Any:
        """The live Playwright locator (works with a sync or an async Page or Frame)."""
        loc = page
        for s in self.steps:
            if s.kind == "frame":
                loc = loc.frame_locator(s.value)
            elif s.kind == "testid":
                loc = loc.get_by_test_id(s.value)
            elif s.kind == "role":
                loc = loc.get_by_role(s.value, name=s.name, exact=True) if s.name else loc.get_by_role(s.value)
            elif s.kind == "label":
                loc = loc.get_by_label(s.value, exact=True)
            elif s.kind == "placeholder":
                loc = loc.get_by_placeholder(s.value, exact=True)
            elif s.kind == "text":
                loc = loc.get_by_text(s.value, exact=True)
            elif s.kind == "css":
                loc = loc.locator(s.value)
            elif s.kind == "nth":
                loc = loc.nth(int(s.value))
        return loc


def py_str(s: str) -> str:
    """A double-quoted Python string literal (JSON's escapes are Python's too). A bidi control (U+202E and
    friends) is written as its escape, `\\u202e`: the same string, and the line reads in the order it runs
    (a raw one could make the code look other than it is: "trojan source")."""
    return json.dumps(s, ensure_ascii=False).translate(_BIDI_ESCAPES)


def css_str(s: str) -> str:
    """A double-quoted CSS string (attribute values)."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\a ") + '"'
