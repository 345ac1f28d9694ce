"""What an exported test expects after a step that did not type, check or navigate: the change the
step made to the page, read from the snapshots stored before and after it.

Every expectation names the element that changed by its locator and says its new text, value or
state with exact matching (`to_have_text("…")` is a whole-text match, `to_have_value`, `to_be_checked`,
`to_be_hidden`). A locator is only used when it does not depend on the change itself:

- an element that was there before and changed: the locator finds that same element in the
  snapshot before the step (so it is not found by its new text), and the expectation is its new text,
  value or checked state;
- an element that appeared: the locator finds nothing in the snapshot before the step;
- an element that went: the locator finds nothing rendered in the snapshot after it.

So on a copy of the page where the step's outcome does not happen the expectation fails. A short
text is never a locator of its own (the page can have other "1"s): an element found only by a text
of fewer than MIN_TEXT_LOCATOR characters, or without a letter, is not asserted.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from engine.secret_values import MASK
from engine.snapshot.dom_snapshot import DomSnapshot
from engine.snapshot.locators import Locator, Locators
from engine.snapshot.locators.match import node_text, whole_text
from engine.snapshot.locators.model import py_str
from engine.snapshot.vnode import VirtualNode

MAX_CHANGES = 2        # expectations written per step
MAX_TEXT = 80          # longer texts are not asserted whole
MIN_TEXT_LOCATOR = 8   # a text this short never locates an element by itself
VALUE_TAGS = ("input", "textarea", "select")


@dataclass(frozen=True)
class Change:
    kind: str            # "text" | "value" | "checked" | "appeared" | "gone"
    node: VirtualNode    # in the snapshot after the step ("gone": before it)
    new: str | bool | None = None


def change_lines(before: DomSnapshot, after: DomSnapshot, *, prefer: str = "", skip: str = "",
                 locs_before: Locators | None = None, locs_after: Locators | None = None) -> list[str]:
    """Up to MAX_CHANGES expectation lines for what changed between the two snapshots; changes whose
    text holds `prefer` (the step's expected text) first; `skip`: a node ID left out (the element the
    step typed into is checked by its value already)."""
    lb, la = locs_before or Locators(before), locs_after or Locators(after)
    found = list(changes(before, after))
    if prefer:
        found.sort(key=lambda c: 0 if isinstance(c.new, str) and prefer in c.new else 1)
    out: list[str] = []
    for c in found:
        if c.node.node_id == skip:
            continue
        line = _line(c, before, after, lb, la)
        if line and line not in out:
            out.append(line)
        if len(out) >= MAX_CHANGES:
            break
    return out


def changes(before: DomSnapshot, after: DomSnapshot) -> Iterator[Change]:
    """Changed elements first (text, value, checked state), then appeared ones, then gone ones (the
    topmost of a gone subtree), each in document order."""
    appeared: list[Change] = []
    for n in after.nodes():
        if not n.rendered or n.in_closed_shadow:
            continue
        if n.node_id not in before:
            t = _text(n)
            if t and n.visible and not _has_new_parent(n, before):
                appeared.append(Change("appeared", n, t))
            continue
        old = before.get(n.node_id)
        t, was = _text(n), _text(old)
        if t and t != was and not n.children:
            yield Change("text", n, t)
        elif n.tag in VALUE_TAGS and not n.redacted and n.value != old.value and n.value is not None \
                and MASK not in n.value and (n.attrs or {}).get("type") not in ("checkbox", "radio"):
            yield Change("value", n, n.value)
        elif _checked(n) is not None and _checked(n) != _checked(old):
            yield Change("checked", n, bool(_checked(n)))
    yield from appeared
    for n in before.nodes():
        if not n.visible or n.in_closed_shadow:
            continue
        gone = n.node_id not in after or not after.get(n.node_id).rendered
        if gone and not (n.parent is not None and _gone(n.parent, after)):
            yield Change("gone", n)


def _line(c: Change, before: DomSnapshot, after: DomSnapshot, lb: Locators, la: Locators) -> str | None:
    if c.kind == "gone":
        loc = _pick(lb.alternatives(c.node), lambda cand: not any(m.rendered for m in la.resolve(cand)),
                    c.node, lb)
        return f"expect({loc.code()}).to_be_hidden()" if loc is not None else None
    if c.kind == "appeared":
        loc = _pick(la.alternatives(c.node), lambda cand: not lb.resolve(cand), c.node, la)
        if loc is None or not isinstance(c.new, str):
            return None
        return f"expect({loc.code()}).to_have_text({py_str(c.new)})"
    old = before.get(c.node.node_id)
    loc = _pick(la.alternatives(c.node), lambda cand: [m.node_id for m in lb.resolve(cand)] == [old.node_id],
                c.node, la)
    if loc is None:
        return None
    if c.kind == "text":
        return f"expect({loc.code()}).to_have_text({py_str(str(c.new))})"
    if c.kind == "value" and c.node.tag == "select":  # a select's value in the snapshot is its option's text
        return f"expect({loc.code()}.locator(\"option:checked\")).to_have_text({py_str(str(c.new))})"
    if c.kind == "value":
        return f"expect({loc.code()}).to_have_value({py_str(str(c.new))})"
    return f"expect({loc.code()}).to_be_checked(checked={bool(c.new)})"


def _pick(candidates: list[Locator], ok, node: VirtualNode, locs: Locators) -> Locator | None:
    """The first candidate that finds just `node` where it is, passes `ok`, and is not a short text alone."""
    for loc in candidates:
        if [m.node_id for m in locs.resolve(loc)] != [node.node_id] or _short_text_alone(loc):
            continue
        if ok(loc):
            return loc
    return None


def _short_text_alone(loc: Locator) -> bool:
    own = [s for s in loc.steps if s.kind not in ("frame", "nth")]
    if not own or own[-1].kind != "text" or len(own) > 1:
        return False
    t = own[-1].value
    return len(t) < MIN_TEXT_LOCATOR or not any(ch.isalpha() for ch in t)


def _text(n: VirtualNode) -> str:
    t = node_text(n)
    if not t or len(t) > MAX_TEXT or MASK in t or not whole_text(n, t):
        return ""
    return t


CHECKABLE_ROLES = ("checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio")


def _checked(n: VirtualNode) -> bool | None:
    """True / False for a checkbox-like element (the walker keeps `checked` only when set), else None."""
    if (n.tag == "input" and (n.attrs or {}).get("type") in ("checkbox", "radio")) or n.role in CHECKABLE_ROLES:
        return (n.states or {}).get("checked") is True
    return None


def _has_new_parent(n: VirtualNode, before: DomSnapshot) -> bool:
    """An ancestor appeared too and says the same text (assert the outermost element that appeared)."""
    p = n.parent
    return p is not None and p.node_id not in before and _text(p) == _text(n)


def _gone(n: VirtualNode, after: DomSnapshot) -> bool:
    return n.visible and (n.node_id not in after or not after.get(n.node_id).rendered)
