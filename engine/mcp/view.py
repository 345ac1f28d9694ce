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

FORMATS = ("reading", "semantic", "tree", "skeleton", "full")
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
        self.text = False        # whole semantic payloads carry the text channel (txt)
        self.mode = "reading"    # how changes are written: reading lines, or semantic items as JSON

    def forget(self) -> None:
        self.items = None
        self.url = ""

    # -- whole payloads ---------------------------------------------------------------------------
    def render(self, snap: DomSnapshot, fmt: str = "reading", *, full_page: bool = False,
               max_tokens: int | None = None, focus: str = "", text: bool = False) -> Rendered:
        """The page in `fmt`, within `max_tokens` when given (what matches `focus` kept first, in every
        format); the view becomes what was shown. `text`: the semantic payload carries `txt`, the text a
        person reads in the viewport (`reading` always has it)."""
        if fmt not in FORMATS:
            raise ValueError(f"Unknown format {fmt!r}: use reading, semantic, tree, skeleton or full.")
        data = self._semantic(snap, full_page)
        items = list(data["interactive_tree"])
        self.text = text
        self.mode = "reading" if fmt == "reading" else "semantic"
        if fmt == "reading":
            out, header = _render_reading(snap, data, full_page, max_tokens, focus)
        elif fmt == "semantic":
            out, header = self._render_semantic(snap, data, full_page, max_tokens, focus, text)
        else:
            out, header = _render_other(snap, fmt, full_page, max_tokens, focus)
        self._remember(snap, items, full_page, data)
        return Rendered(text=out, header=header, tokens=estimate_tokens(out), items=items)

    def _render_semantic(self, snap: DomSnapshot, data: dict, full_page: bool, max_tokens: int | None, focus: str,
                         text: bool) -> tuple[str, str]:
        whole = self._semantic(snap, full_page, text=text) if text else data
        items = list(data["interactive_tree"])
        lines = list(whole.get("txt") or [])
        note = ""
        if max_tokens is not None:
            from engine.planners.payload import rag_filter
            from engine.snapshot.serialize.focus import cut_lines

            share = max_tokens if not lines else max(100, int(max_tokens * 0.6))
            kept = rag_filter(data, focus, share, snap)
            if kept.dom_filtered:
                items = kept.items
                note = (f" Cut to {len(items)} of {kept.original_node_count} elements to fit {max_tokens} tokens"
                        + (f", keeping those matching {focus!r} first" if focus else "")
                        + "; use browser_find for the rest.")
            if lines:
                left = max_tokens - estimate_tokens(_line({**whole, "interactive_tree": items, "txt": []}))
                if estimate_tokens(json.dumps(lines, ensure_ascii=False)) > left:
                    n = len(lines)
                    lines, dropped = cut_lines(lines, focus, max(0, left) * 4 - 2 * n)
                    note += (f" Text cut to {n - dropped} of {n} lines"
                             + (f", those matching {focus!r} first" if focus else "") + " (… marks a cut).")
        payload = {**whole, "interactive_tree": items}
        if text:
            payload["txt"] = lines
        out = _line(payload)
        what = f"{len(items)} elements" + (f" and {len(lines)} lines of text" if text else "")
        return out, (f"Semantic payload of the {'whole page' if full_page else 'viewport'}: {what}, "
                     f"~{estimate_tokens(out)} tokens.{note}")

    # -- changes ----------------------------------------------------------------------------------
    def change(self, snap: DomSnapshot, *, new_document: bool = False) -> Change:
        """The change since the view — the whole payload when there is no view, or the page is a new
        document (another URL, or a load the caller saw); the view becomes the current payload."""
        data = self._semantic(snap, self.full_page)
        items = data["interactive_tree"]
        reading = self.mode == "reading"
        if reading:
            whole_text = _render_reading(snap, data, self.full_page, None, "")[0]
        else:
            whole_text = _line(self._semantic(snap, self.full_page, text=True) if self.text else data)
        show = _reading_line if reading else _line
        if self.items is None or new_document or _document(snap.url) != _document(self.url):
            self._remember(snap, items, self.full_page, data)
            return Change(True, whole_text, f"a new page: its whole {'reading' if reading else 'semantic payload'} "
                                            f"({len(items)} controls) follows")
        old = self.items
        new = {str(i["i"]): i for i in items}
        added = [k for k in new if k not in old]
        gone = [k for k in old if k not in new]
        changed = [k for k in new if k in old and _content(new[k]) != _content(old[k])]
        lines = [f"+{show(new[k])}" for k in added] + [f"~{show(new[k])}" for k in changed]
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
                                            f"the whole {'reading' if reading else 'semantic payload'} follows "
                                            "(it is shorter)")
        summary = f"{len(added)} added, {len(changed)} changed, {len(gone)} gone" + (", scrolled" if moved else "")
        return Change(False, text, summary, added, changed, gone)

    # -- helpers ----------------------------------------------------------------------------------
    @staticmethod
    def _semantic(snap: DomSnapshot, full_page: bool, *, text: bool = False) -> dict:
        options = {"full_page": True} if full_page else {}
        if text:
            options["text"] = True
        return snap.serialize("semantic", **options).data

    def _remember(self, snap: DomSnapshot, items: list[dict], full_page: bool, data: dict) -> None:
        self.items = {str(i["i"]): i for i in items}
        self.url = snap.url
        self.full_page = full_page
        self.scroll = data.get("scroll_position", "")


def _reading_line(item: dict) -> str:
    from engine.snapshot.serialize.reading import control_line
    return control_line(item)


def _render_reading(snap: DomSnapshot, data: dict, full_page: bool, max_tokens: int | None,
                    focus: str) -> tuple[str, str]:
    from engine.snapshot.serialize.reading import render_reading
    return render_reading(snap, data, full_page=full_page, max_tokens=max_tokens, focus=focus)


def _render_other(snap: DomSnapshot, fmt: str, full_page: bool, max_tokens: int | None,
                  focus: str) -> tuple[str, str]:
    """tree, skeleton or full, cut to `max_tokens` with what matches `focus` first."""
    from engine.snapshot.serialize.focus import cut_html, cut_lines, cut_tree

    options = {"full_page": full_page} if fmt == "skeleton" else {}
    out = snap.serialize(fmt, **options)
    text = out.text
    header = f"{fmt.capitalize()} of the page: {out.node_count} elements, ~{out.tokens} tokens."
    if max_tokens is None or out.tokens <= max_tokens:
        return text, header
    budget = max_tokens * 4
    first = f", keeping the parts matching {focus!r} first" if focus else ""
    if fmt == "tree" and focus and out.truncated:
        # the focus may match past the tree's node budget: look for it in the whole tree
        out = snap.serialize("tree", max_nodes=len(snap.nodes()) + 1)
        header = f"Tree of the page: {out.node_count} elements, ~{out.tokens} tokens."
    if fmt == "tree" and out.data is not None:
        data, kept, dropped = cut_tree(out.data, focus, budget)
        text = _line(data)
        while estimate_tokens(text) > max_tokens and kept > 1:  # (an estimate per node: shave what is over)
            budget = int(budget * 0.9)
            data, kept, dropped = cut_tree(out.data, focus, budget)
            text = _line(data)
        return text, header + (f" Cut to {kept} nodes (of {kept + dropped}) to fit ~{max_tokens} tokens{first}; "
                               '{"cut": N} marks N children left out.')
    if fmt == "skeleton":
        lines, dropped = cut_lines(text.split("\n"), focus, budget)
        text = "\n".join(lines)
    else:
        whole = text
        text, dropped = cut_html(whole, focus, budget)
        while estimate_tokens(text) > max_tokens and budget > 0:  # (non-ASCII text costs more than 1/4 token)
            budget = int(budget * 0.9)
            text, dropped = cut_html(whole, focus, budget)
    return text, header + (f" Cut to ~{max_tokens} tokens (of {out.tokens}){first}; {dropped} parts left out "
                           "(… marks a cut); use browser_find for the rest.")


def _content(item: dict) -> dict:
    return {k: v for k, v in item.items() if k not in _POSITION_KEYS}


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
