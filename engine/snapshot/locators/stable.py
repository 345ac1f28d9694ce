"""Whether an id (or a name) was made up by a library at run time, so a locator must not be built on it.

Libraries number or randomise the ids they give their elements: Select2's result items
(`select2-size-result-x4ki-Large`, four random characters per page load), React's useId (`:r1:`,
`«r1»`, `_r_1_`, and Radix's or Headless UI's ids built on it), MUI's `mui-123`, Angular
Material's `mat-option-12`, Ember's `ember123`, CSS-in-JS hashes (`css-1x2y3z`, `sc-abcdef`) …
Such an id changes with the next load, the next opening, or the order components mounted in: a
locator on it finds nothing when the test runs again.

Two kinds of evidence, both read from the id alone (no page state, O(length)):
- the id schemes of known libraries (the prefix says whose it is, the counter or hash says it is
  generated); an author's own id rarely starts with `mui-`, `ember` or `headlessui-`;
- a hash-like part: letters and digits mixed as no word is (`1x2y3z`, `13cymwt`, a UUID).
A number at the end of an ordinary word (`step-2`, `order-20417`, `h1`, `mp3`) is not evidence:
authors number their own elements, and such ids come from the page's data, not from a counter.
"""

from __future__ import annotations

import re
from collections.abc import Container

# Whole-id schemes of libraries that generate ids: each matches only the library's own prefix
# followed by its counter, hash or a useId part.
_LIBRARY = re.compile(r"""^(?:
      headlessui-                              # Headless UI: every id it sets is generated
    | radix-                                   # Radix: radix- + React's useId
    | react-aria\d*-                           # React Aria
    | mui-\d+$                                 # MUI's useId without React 18
    | (?:mat|cdk|mdc)-[a-z-]*?\d               # Angular Material / CDK counters: mat-option-12, mat-select-0-panel
    | ember\d+$                                # Ember's view ids
    | ui-id-\d+$                               # jQuery UI
    | react-select-\d+-                        # react-select's instance counter
    | downshift-\d+-                           # Downshift
    | rc[-_][a-z]+[-_]\d+                      # rc-components (Ant Design): rc-tabs-0-tab-1, rc_select_0
    | __BVID__\d+                              # BootstrapVue
    | vs\d+__                                  # vue-select
    | (?:\w+-)?v-\d+(?:-\d+)*$                 # Vue's useId (v-0, v-1-2) and Vuetify 3's (input-v-3)
    | (?:tooltip|popover)\d{3,}$               # Bootstrap's random tooltip/popover ids
    | sc-[A-Za-z0-9]+                          # styled-components
    | (?:css|emotion)-[0-9a-z]*\d[0-9a-z]*(?:-|$)  # Emotion's class hashes: css-1x2y3z
    | jsx-\d+$                                 # styled-jsx
    | ext-(?:gen|comp-)\d+$                    # Ext JS
    | gwt-uid-\d+$                             # GWT
    | yui_[\d_]+                               # YUI
    | pr_id_\d+$                               # PrimeNG
    | dijit_\w*?_\d+$                          # Dojo
    | __privateStripeFrame\d+$                 # Stripe's frames (a page-wide counter in their name)
)""", re.X)

# React's useId anywhere in the id: `:r1:` / `:R2m:` (18), `«r1»` (19.1), `_r_1_` (19.2), with an optional
# identifierPrefix inside the delimiters; also what libraries build on it (`headlessui-…-:r5:`).
_REACT_ID = re.compile(r"[:«][\w-]{0,20}?[rR][0-9a-zA-Z]{0,12}[:»]|(?:^|[^A-Za-z0-9])_[rR]_[0-9a-z]+_")

# Select2: a result item's id has four random characters after `-result-` (or a selected choice's after
# `-choice-`); a container's `select2-<x>-container|results` is stable only when <x> is its <select>'s id
# (else it is `name-` + two random characters, or four random ones).
_SELECT2_RANDOM = re.compile(r"^select2-.*-(?:result|choice)-[0-9a-z]{4}(?:-|$)")
_SELECT2_CONTAINER = re.compile(r"^select2-(.+)-(?:container|results)$")

_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_PARTS = re.compile(r"[^A-Za-z0-9]+")  # words of an id, or of a name such as `user[addresses][0][zip]`
_RUNS = re.compile(r"[A-Za-z]+|[0-9]+")
_VOWELS = frozenset("aeiouAEIOU")


def hash_like(part: str) -> bool:
    """A part of an id that reads as a hash, not as words and numbers: letters and digits mixed
    three or more times (`1x2y3z`, `k9f2`), or mixed at all with a run of three or more letters
    and no vowel in lower case (`13cymwt`, `3xgv`). `h1`, `mp3`, `b2b`, `oauth2`, `base64`, `2fa`, `html5`,
    `RTX4090` are not."""
    runs = _RUNS.findall(part)
    if len(runs) < 2:
        return False  # all letters or all digits
    if len(runs) >= 4:
        return True
    # hashes are lower-case base 36: a capitals run (`RTX4090`, `SKU12`) is a product code or an acronym
    return any(r.isalpha() and r.islower() and len(r) >= 3 and not (_VOWELS & set(r)) and r not in _CONSONANT_WORDS
               for r in runs)


# abbreviations without a vowel that sit next to numbers in ordinary ids (`mp3`, `html5`, `cc2`, `pdf2` …)
_CONSONANT_WORDS = frozenset({"btn", "nbr", "msg", "img", "pdf", "png", "jpg", "svg", "gif", "xml", "cms", "crm",
                              "sms", "dns", "cdn", "rss", "css", "php", "sql", "std", "qty", "pkg", "ctl", "txt",
                              "lng", "src", "dst", "mgr", "nmbr", "frm", "pwd", "cfg", "hdr", "ftr", "pnl",
                              "lbl", "chk", "cmd", "cnt", "grp", "ttl", "sym", "dlg", "wrd", "pts", "hrs", "yrs",
                              "tbl", "ctrl", "html", "xhtml", "rgb", "hsl", "kbd", "mth", "nth"})


def generated_id(value: str, known_ids: Container[str] = ()) -> bool:
    """Whether `value` (an id, or a name) was generated by a library, not chosen by the page's author.
    `known_ids`: the ids of the element's frame, which tell a Select2 container named after its
    <select>'s id (stable) from one named after nothing (random)."""
    if not value:
        return False
    if _LIBRARY.match(value) or _REACT_ID.search(value) or _UUID.search(value):
        return True
    if value.startswith("select2-"):
        if _SELECT2_RANDOM.match(value):
            return True
        m = _SELECT2_CONTAINER.match(value)
        if m:
            return m.group(1) not in known_ids
    return any(hash_like(p) for p in _PARTS.split(value))
