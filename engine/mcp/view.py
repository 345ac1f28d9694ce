"""What the MCP client has seen of the page, and what changed since.

`browser_snapshot` renders a whole payload and remembers the semantic items it showed (the
client's view). An action's result then carries only the change of the semantic payload since
that view — IDs added, changed and gone — instead of the page again; the view moves on with it.
A new document (another URL), or a change that would cost as much as the page itself, is sent
whole. Everything rendered here is page content and is fenced as untrusted by the caller.
"""

from __future__ import annotations

import json
import urllib.parse
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from engine.snapshot.serialize.semantic import ROLE_MIN
from engine.snapshot.serialize.tokens import estimate_tokens

if TYPE_CHECKING:
    from engine.snapshot.dom_snapshot import DomSnapshot
    from engine.snapshot.vnode import VirtualNode

FORMATS = ("semantic", "tree", "skeleton", "full")
_POSITION_KEYS = ("xy", "box")  # where an item is; a scroll moves every one of them
_ROLE_FULL = {short: full for full, short in ROLE_MIN.items() if short not in ("inp", "sel", "menu")}
_ROLE_FULL.update({"inp": "textbox", "sel": "combobox", "menu": "menuitem"})
_CONTEXT_ROLES = frozenset({"form", "dialog", "alertdialog", "row", "listitem", "navigation", "region", "tabpanel",
                            "menu", "listbox", "grid", "table", "article", "search", "group"})
_CONTEXT_TAGS = frozenset({"form", "dialog", "li", "tr", "nav", "fieldset", "article", "section"})


def _line(item: dict) -> str:
    return json.dumps(item, ensure_ascii=False, separators=(",", ":"))


def _document(url: str) -> str:
    """The URL without its fragment: a hash change keeps the document (and its IDs)."""
    return urllib.parse.urldefrag(url or "")[0]


@dataclass
class Rendered:
    """A payload for the client: its text (page content, to be fenced), a header in our own words,
    and the token estimate of the text."""

    text: str
    header: str
    tokens: int
    items: list[dict] | None = None  # the semantic items shown, when it is the semantic payload


@dataclass
class Change:
    """The change of the semantic payload since the client's view."""

    whole: bool                      # the payload is sent whole (no view yet, or a new document)
    text: str                        # page content: the lines to show
    summary: str                     # our words: "2 added, 1 changed, 0 gone"
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.whole or self.added or self.changed or self.gone)


class ClientView:
    """The semantic items the client was last shown, and the page they came from."""

    def __init__(self) -> None:
        self.items: dict[str, dict] | None = None
        self.url = ""
        self.full_page = False
        self.scroll = ""

    def forget(self) -> None:
        self.items = None
        self.url = ""

    # -- whole payloads ---------------------------------------------------------------------------
    def render(self, snap: DomSnapshot, fmt: str = "semantic", *, full_page: bool = False,
               max_tokens: int | None = None, focus: str = "") -> Rendered:
        """The page in `fmt`, within `max_tokens` when given; the view becomes what was shown."""
        if fmt not in FORMATS:
            raise ValueError(f"Unknown format {fmt!r}: use semantic, tree, skeleton or full.")
        data = self._semantic(snap, full_page)
        items = list(data["interactive_tree"])
        if fmt == "semantic":
            note = ""
            if max_tokens is not None:
                from engine.planners.payload import rag_filter
                kept = rag_filter(data, focus, max_tokens, snap)
                if kept.dom_filtered:
                    items = kept.items
                    note = (f" Cut to {len(items)} of {kept.original_node_count} elements to fit {max_tokens} tokens"
                            + (f", keeping those matching {focus!r} first" if focus else "")
                            + "; use browser_find for the rest.")
            payload = {**data, "interactive_tree": items}
            text = _line(payload)
            header = (f"Semantic payload of the {'whole page' if full_page else 'viewport'}: {len(items)} elements, "
                      f"~{estimate_tokens(text)} tokens.{note}")
        else:
            options = {"full_page": full_page} if fmt == "skeleton" else {}
            out = snap.serialize(fmt, **options)
            text = out.text
            header = f"{fmt.capitalize()} of the page: {out.node_count} elements, ~{out.tokens} tokens."
            if max_tokens is not None and out.tokens > max_tokens:
                text = _cut_to_tokens(text, max_tokens)
                header += (f" Cut to ~{max_tokens} tokens (of {out.tokens}); use browser_find, or format "
                           "semantic, for the rest.")
        self._remember(snap, items, full_page, data)
        return Rendered(text=text, header=header, tokens=estimate_tokens(text), items=items)

    # -- changes ----------------------------------------------------------------------------------
    def change(self, snap: DomSnapshot, *, new_document: bool = False) -> Change:
        """The change since the view — the whole payload when there is no view, or the page is a new
        document (another URL, or a load the caller saw); the view becomes the current payload."""
        data = self._semantic(snap, self.full_page)
        items = data["interactive_tree"]
        whole_text = _line(data)
        if self.items is None or new_document or _document(snap.url) != _document(self.url):
            self._remember(snap, items, self.full_page, data)
            return Change(True, whole_text, f"a new page: its whole semantic payload ({len(items)} elements) follows")
        old = self.items
        new = {str(i["i"]): i for i in items}
        added = [k for k in new if k not in old]
        gone = [k for k in old if k not in new]
        changed = [k for k in new if k in old and _content(new[k]) != _content(old[k])]
        lines = [f"+{_line(new[k])}" for k in added] + [f"~{_line(new[k])}" for k in changed]
        if gone:
            lines.append("-" + ",".join(gone))
        scroll = data.get("scroll_position", "")
        moved = scroll != self.scroll
        if moved:
            lines.append(f"scrolled to {scroll}" + (" (more below)" if data.get("more_below") else ""))
        text = "\n".join(lines)
        self._remember(snap, items, self.full_page, data)
        if estimate_tokens(text) >= estimate_tokens(whole_text):
            return Change(True, whole_text, f"{len(added)} added, {len(changed)} changed, {len(gone)} gone: "
                                            "the whole semantic payload follows (it is shorter)")
        summary = f"{len(added)} added, {len(changed)} changed, {len(gone)} gone" + (", scrolled" if moved else "")
        return Change(False, text, summary, added, changed, gone)

    # -- helpers ----------------------------------------------------------------------------------
    @staticmethod
    def _semantic(snap: DomSnapshot, full_page: bool) -> dict:
        return snap.serialize("semantic", **({"full_page": True} if full_page else {})).data

    def _remember(self, snap: DomSnapshot, items: list[dict], full_page: bool, data: dict) -> None:
        self.items = {str(i["i"]): i for i in items}
        self.url = snap.url
        self.full_page = full_page
        self.scroll = data.get("scroll_position", "")


def _content(item: dict) -> dict:
    return {k: v for k, v in item.items() if k not in _POSITION_KEYS}


def _cut_to_tokens(text: str, max_tokens: int) -> str:
    budget = max(0, max_tokens * 4)
    if estimate_tokens(text) <= max_tokens:
        return text
    cut = text[:budget]
    nl = cut.rfind("\n")
    if nl > budget // 2:
        cut = cut[:nl]
    while cut and estimate_tokens(cut) > max_tokens:
        cut = cut[: int(len(cut) * 0.9)]
    return cut + "\n… (cut)"


# -- find ---------------------------------------------------------------------------------------------
def role_name(role: str | None) -> str | None:
    """A role as given by the client: a full ARIA role, or the payload's short form (btn, inp …)."""
    if not role:
        return None
    r = role.strip().lower()
    return _ROLE_FULL.get(r, r)


def find_nodes(snap: DomSnapshot, *, role: str | None = None, name: str | None = None, text: str | None = None,
               limit: int = 20) -> tuple[list[VirtualNode], int]:
    """Nodes of the whole page (not only the viewport) matching every given filter, interactive and
    visible ones first: `role` exactly (full or short form), `name` as a case-insensitive part of the
    accessible name, `text` anywhere in the name, value or text. Returns (the first `limit`, total)."""
    from engine.names import norm

    want_role = role_name(role)
    want_name = norm(name) if name else None
    want_text = norm(text) if text else None
    hits = []
    for i, n in enumerate(snap.nodes()):
        if not n.rendered:
            continue
        if want_role is not None and n.role != want_role:
            continue
        nm = norm(n.name)
        if want_name is not None and want_name not in nm:
            continue
        if want_text is not None and not any(want_text in norm(s) for s in (n.name, n.value, n.text) if s):
            continue
        if want_role is None and not (n.interactive or n.name or n.text):
            continue
        exact = want_name is not None and nm == want_name
        hits.append((not n.interactive, not exact, not n.visible, i, n))
    if want_text is not None and want_role is None and want_name is None:
        hits = _deepest(hits)
    hits.sort(key=lambda t: t[:4])
    return [t[-1] for t in hits[:limit]], len(hits)


def _deepest(hits: list) -> list:
    """For a text search, drop a non-interactive match whose text only repeats a matching child's."""
    ids = {id(t[-1]) for t in hits}
    out = []
    for t in hits:
        n = t[-1]
        if not n.interactive and any(id(c) in ids for c in n.children):
            continue
        out.append(t)
    return out


def found_item(snap: DomSnapshot, n: VirtualNode) -> dict:
    """One match, in the payload's shape plus where it is: `vis` false when outside the viewport or
    hidden, `in` the container it sits in (a form, a row, a dialog …)."""
    from engine.snapshot.serialize.tokens import clean_text, cut

    x, y, w, h = n.bounds
    e: dict = {"i": n.node_id, "r": ROLE_MIN.get(n.role, n.role or n.tag)}
    if n.name:
        e["n"] = clean_text(cut(n.name, 80))
    if n.value and not n.redacted:
        e["v"] = clean_text(cut(n.value, 50))
    if n.text and n.text != n.name and not n.interactive:
        e["t"] = clean_text(cut(n.text, 120))
    states = [k for k in ("disabled", "checked", "expanded", "selected", "focused", "invalid")
              if n.states and n.states.get(k)]
    if states:
        e["s"] = ",".join(states)
    e["xy"] = [round(x + w / 2), round(y + h / 2)]
    if not n.visible:
        e["vis"] = False
    if n.occluded:
        e["occ"] = True
    box = n.container(_CONTEXT_ROLES, _CONTEXT_TAGS)
    if box is not None and box is not n:
        label = box.name or ""
        e["in"] = f"{box.role or box.tag}" + (f" {clean_text(cut(label, 40))!r}" if label else "")
    return e


def find_text(snap: DomSnapshot, nodes: list[VirtualNode]) -> str:
    return "\n".join(_line(found_item(snap, n)) for n in nodes)
