"""The `reading` rendering: the viewport as a person reads it — its text and its controls in reading
order, one short line each. It is the MCP server's default snapshot (engine/mcp/view.py).

Why a format of its own rather than only a text channel in the semantic payload: an MCP client
reads to decide, and acts by ref; it needs the words and the refs, not viewport coordinates or JSON
keys. Lines in reading order put the "Total: $54.20" next to the "Pay" button it is about, and cost
about half the semantic payload's tokens per control, so a small page costs no more than Playwright
MCP's snapshot of it while a large one costs a small part. `semantic` stays as seed 000 defines it
for Vigil's own planners (their prompts, DOM RAG and the delta tracker are built on its items).

    Order #A-20417 | http://shop.test/orders/20417 | scrolled 0%, more below
    # Order #A-20417
    Placed on 12 November 2026 by Grace Hopper
    Walnut desk organiser | 1 | $38.00
    [39] btn "Cancel order"
    [12] inp "Workspace name" = "acme-team" (required)

A control: `[ref] role "name"`, then ` = "value"` and `(states)` when it has them; roles in the
semantic payload's short forms. Text: "# " a heading, "- " a list item, " | " between the cells
of a row, "[alert] " and "[status] " messages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.snapshot.serialize.focus import cut_lines
from engine.snapshot.serialize.text import reading_order, text_lines
from engine.snapshot.serialize.tokens import clean_text, cut, estimate_tokens

if TYPE_CHECKING:
    from engine.snapshot.view import SnapshotView

LEGEND = ('Lines in reading order. A control: [ref] role "name" = "value" (states) — act on it by its ref; '
          'roles: btn button, inp text input, chk checkbox, sel select/combobox, opt option, num number input, '
          'clk clickable without a role. Text: "# " heading, "- " list item, " | " between the cells of a row, '
          '"[alert] " and "[status] " messages. Only what is in the viewport; scroll or browser_find for the rest.')


def control_line(item: dict) -> str:
    """One semantic payload item as a reading line: `[12] btn "Save" = "x" (checked, covered)`."""
    s = f"[{item['i']}] {item['r']}"
    if item.get("n"):
        s += f' "{item["n"]}"'
    if item.get("v"):
        s += f' = "{item["v"]}"'
    if item.get("txt"):
        s += f': {item["txt"]}'
    states = [item["s"]] if item.get("s") else []
    if item.get("occ"):
        states.append("covered")
    scr = item.get("scr")
    if scr:
        states.append(f"scrolls, at {scr.get('depth', 0)}%" + (", more below" if scr.get("h") else ""))
    if item.get("f"):
        states.append(f"frame {item['f']}")
    if states:
        s += " (" + ", ".join(states) + ")"
    return s


def header(snap: SnapshotView, data: dict) -> str:
    bits = [clean_text(cut(snap.context.title, 80)) or "(no title)", snap.context.url]
    if snap.context.http_error:  # the server's error page, not the page the address names
        bits.append(f"the page answered {snap.context.http_error}")
    where = f"scrolled {data.get('scroll_position', '0%')}"
    if data.get("more_below"):
        where += ", more below"
    bits.append(where)
    if data.get("truncated"):
        bits.append(str(data["truncated"]))
    return " | ".join(bits)


def reading_lines(snap: SnapshotView, data: dict, *, full_page: bool = False) -> list[str]:
    """The controls of `data` (the semantic payload, viewport or whole page) and the text a person reads,
    merged in reading order; labels that only repeat a control's name are left out."""
    order = reading_order(snap)
    items = data["interactive_tree"]
    names = {str(e.get("n", "")) for e in items if e.get("n")}
    ranked: list[tuple[int, int, str]] = []
    for e in items:
        ranked.append((order.get(str(e["i"]), 1 << 30), 1, control_line(e)))
    last = None
    for ln in text_lines(snap):
        if not (full_page or ln.in_view):
            continue
        if ln.kind in ("label", "text") and ln.text.strip(" :*") in names:
            continue
        s = ln.render()
        if s == last:
            continue
        last = s
        ranked.append((order.get(ln.node_id, 1 << 30), 0, s))
    ranked.sort(key=lambda t: (t[0], t[1]))
    return [s for _, _, s in ranked]


def render_reading(snap: SnapshotView, data: dict | None = None, *, full_page: bool = False,
                   max_tokens: int | None = None, focus: str = "") -> tuple[str, str]:
    """(the reading of the viewport — or the whole page — as text, a header in our words saying what it
    holds); cut to `max_tokens` with the lines matching `focus` first. `data`: the semantic payload to
    take the controls from (the snapshot's own, viewport or whole page, when not given)."""
    if data is None:
        data = snap.serialize("semantic", **({"full_page": True} if full_page else {})).data
    head = header(snap, data)
    lines = reading_lines(snap, data, full_page=full_page)
    n_controls = len(data["interactive_tree"])
    n_text = len(lines) - n_controls
    note = ""
    if max_tokens is not None and estimate_tokens("\n".join([head] + lines)) > max_tokens:
        n = len(lines)
        budget = max_tokens * 4 - len(head) - 8
        kept, dropped = cut_lines(lines, focus, budget)
        while estimate_tokens("\n".join([head] + kept)) > max_tokens and budget > 0:
            budget = int(budget * 0.85)  # (text that is not ASCII costs more than a quarter token a character)
            kept, dropped = cut_lines(lines, focus, budget)
        lines = kept
        note = (f" Cut to {n - dropped} of {n} lines to fit ~{max_tokens} tokens"
                + (f", those matching {focus!r} first" if focus else "") + " (… marks a cut); scroll or "
                "browser_find for the rest.")
    out = "\n".join([head] + lines)
    where = "whole page" if full_page else "viewport"
    return out, (f"The {where} as a person reads it: {n_controls} controls ([ref] role \"name\") and {n_text} lines "
                 f"of text, ~{estimate_tokens(out)} tokens.{note}")
