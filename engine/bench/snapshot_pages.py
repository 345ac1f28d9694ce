"""The pages of `vigil bench snapshot` built the way real sites are built, and the one-node change made
to each before a re-snapshot.

- `xorigin`: the generated shop page with its style sheet served from a second local server (another
  origin, as from a CDN: the page cannot read its rules), with the sibling rules real sheets have.
- `inputs`: a form of many rows, each with a label, an input, a button and a clickable div (some
  inputs wrapped by their label, some named by aria-labelledby); the change sets one `data-`
  attribute on one button.
- `docs`: Python's documentation as Debian ships it (python3-doc), opened from `file://` (every sheet
  of a file:// page counts as another origin); the change sets one paragraph's text.
"""

from __future__ import annotations

import glob
from pathlib import Path

SHOP_SIBLING_CSS = (".card-wrap + .card-wrap{margin-top:0}.filters label + label{margin-top:2px}"
                    "nav li ~ li{border-left:1px solid #456}.filters input:checked + span{font-weight:bold}"
                    ".actions .add:disabled ~ .fav{opacity:.5}")

# One node changes before every measurement: the text of a price (generated shop pages).
PRICE_CHANGE = ("(k) => { const p = document.querySelectorAll('.price'); const e = p[Math.min(9, p.length - 1)]; "
                "e.textContent = '$' + (100 + k % 800) + '.99'; }")
BUTTON_ATTR_CHANGE = ("(k) => { const b = document.querySelectorAll('.row button'); "
                      "b[Math.floor(b.length / 2)].setAttribute('data-k', String(k)); }")
PARAGRAPH_CHANGE = ("(k) => { const ps = Array.from(document.querySelectorAll('div.body p')).filter((p) => "
                    "!p.firstElementChild && p.textContent.trim()); const e = ps[Math.min(5, ps.length - 1)]; "
                    "e.textContent = 'A paragraph changed ' + k + ' times.'; }")


def generate_form_page(rows: int = 5000) -> str:
    """`rows` rows of a form, each with an input, a button and a clickable div (deterministic): the input
    named by a label[for] before it (one row in three), by a label around it (one in three) or by
    aria-labelledby (its row's clickable div and a hint above the form); every button described by
    aria-describedby (the same hint)."""
    parts = ['<h1>Order form</h1><p id="hint">Quantities are per box.</p><form class="rows">']
    for i in range(rows):
        if i % 3 == 0:
            field = f'<label for="q{i}">Quantity {i}</label> <input id="q{i}" type="number" min="0">'
        elif i % 3 == 1:
            field = f'<label>Note {i} <input name="n{i}"></label>'
        else:
            field = f'<input id="q{i}" aria-labelledby="m{i} hint">'
        parts.append(f'<div class="row">{field} <button type="button" aria-describedby="hint">Add {i}</button> '
                     f'<div class="more" id="m{i}" onclick="void 0">Details {i}</div></div>')
    parts.append("</form>")
    css = ("<style>body{font:14px sans-serif;margin:8px}.row{display:flex;gap:8px;align-items:center;padding:2px 0;"
           "border-bottom:1px solid #eee}.more{cursor:pointer;color:#236}</style>")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>Form of {rows} rows</title>{css}</head>"
            f"<body>{''.join(parts)}</body></html>")


def docs_page(name: str = "library/json.html") -> Path | None:
    """A page of the Python documentation as Debian's python3-doc installs it (None: not installed)."""
    here = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "real" / "pydoc" / name
    if here.is_file():
        return here
    found = sorted(glob.glob(f"/usr/share/doc/python3*/html/{name}"))
    return Path(found[-1]) if found else None
