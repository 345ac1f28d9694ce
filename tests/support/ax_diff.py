"""The differential check: Vigil's roles and names against Chromium's own accessibility tree.

For every element that Chromium's accessibility tree (CDP `Accessibility.getFullAXTree`) exposes
as an interactive control or as focusable, on every page of the real-app corpus, Vigil's snapshot
node for the same element must have the same role family and the same name (normalised: case,
spaces and invisible characters ignored; a name Vigil cut matches on its prefix) — or the
difference is listed, with its reason, in tests/fixtures/real/ax_allowlist.json.

Used by tests/acceptance/test_real_ax.py, and run as a script for the per-library figures:

    .venv/bin/python tests/support/ax_diff.py            # agreement per library and overall
    PYTHONPATH=/path/to/other/checkout .venv/bin/python tests/support/ax_diff.py   # the same for another Vigil

Only the public Tab API and CDP are used; one browser, each corpus page opened once.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

CORPUS_DIR = Path(__file__).resolve().parent.parent / "fixtures" / "real"
ALLOWLIST = CORPUS_DIR / "ax_allowlist.json"
TIMES: dict[str, float] = {}  # seconds per page, of the last run

# Chromium roles that are controls whatever their focus.
CONTROL_ROLES = {
    "button", "checkbox", "switch", "radio", "textbox", "searchbox", "combobox", "listbox", "option",
    "slider", "spinbutton", "link", "menuitem", "menuitemcheckbox", "menuitemradio", "tab", "treeitem",
}
# Focusable nodes of these roles are the document or a container, not a control.
NOT_CONTROLS = {"RootWebArea", "WebArea", "Iframe", "none", "presentation", "InlineTextBox", "StaticText"}
# Role families: names that say the same thing to a person.
FAMILY = {
    "searchbox": "textbox", "textbox": "textbox",
    "switch": "switch", "checkbox": "checkbox", "menuitemcheckbox": "menuitem", "menuitemradio": "menuitem",
    "menuitem": "menuitem", "image": "img", "img": "img",
    "generic": "generic", "none": "generic", "": "generic", "clickable": "generic", "group": "generic",
    "scrollable": "generic", "LabelText": "generic", "Section": "generic", "paragraph": "generic",
    "MenuListPopup": "listbox", "MenuListOption": "option",
    # DPUB-ARIA link roles: Chromium says what kind of link, Vigil keeps the <a href> a link
    "doc-noteref": "link", "doc-backlink": "link", "doc-biblioref": "link", "doc-glossref": "link",
}


def family(role: str | None) -> str:
    r = role or ""
    return FAMILY.get(r, r)


def norm_name(s: str | None) -> str:
    from engine.names import norm
    return norm(s)


def names_agree(chrome: str, vigil: str) -> bool:
    c, v = norm_name(chrome), norm_name(vigil)
    if c == v:
        return True
    # Vigil keeps 250 characters of a name (then "…"): a cut name matches on its prefix
    return v.endswith("…") and len(v) > 20 and c.startswith(v[:-1].rstrip())


@dataclass
class Pair:
    page: str
    chrome_role: str
    chrome_name: str
    vigil_role: str | None   # None: Vigil has no node for the element
    vigil_name: str
    tag: str

    def agrees(self) -> bool:
        return (self.vigil_role is not None and family(self.chrome_role) == family(self.vigil_role)
                and names_agree(self.chrome_name, self.vigil_name))

    def key(self) -> tuple:
        return (self.page, self.chrome_role, norm_name(self.chrome_name), self.vigil_role or "-",
                norm_name(self.vigil_name))

    def text(self) -> str:
        v = "no Vigil node" if self.vigil_role is None else f'{self.vigil_role} "{self.vigil_name}"'
        return f'{self.page}: <{self.tag}> Chromium {self.chrome_role} "{self.chrome_name}" — Vigil {v}'


def load_allowlist(path: Path = ALLOWLIST) -> list[dict]:
    data = json.loads(path.read_text(encoding="utf-8"))
    for e in data["differences"]:
        assert e.get("reason", "").strip(), f"{path}: every allowed difference says why: {e}"
    return data["differences"]


def allow_key(e: dict) -> tuple:
    ch, vi = e["chromium"], e["vigil"]
    return (e["page"], ch["role"], norm_name(ch["name"]), vi["role"] or "-", norm_name(vi["name"]))


_MARK = """(() => { const S = window[%s]; let n = 0;
  if (S && S.byId) for (const [id, ref] of S.byId) { const e = ref && ref.deref && ref.deref();
    if (e && e.setAttribute) { e.setAttribute('data-vigil-ax', id); n++; } }
  return n; })()"""
_UNMARK = """(() => { const S = window[%s];
  if (S && S.byId) for (const [, ref] of S.byId) { const e = ref && ref.deref && ref.deref();
    if (e && e.removeAttribute) e.removeAttribute('data-vigil-ax'); } })()"""


def _dom_ids(node: dict, out: dict) -> None:
    """backendNodeId → (Vigil node ID, tag) over the whole DOM (shadow roots included)."""
    stack = [node]
    while stack:
        n = stack.pop()
        attrs = n.get("attributes") or []
        for i in range(0, len(attrs) - 1, 2):
            if attrs[i] == "data-vigil-ax":
                out[n["backendNodeId"]] = (attrs[i + 1], (n.get("localName") or "").lower())
        out.setdefault(n["backendNodeId"], (None, (n.get("localName") or "").lower()))
        stack.extend(n.get("children") or [])
        stack.extend(n.get("shadowRoots") or [])
        if n.get("contentDocument") is None and n.get("templateContent") is None:
            continue


async def page_pairs(tab, page: str) -> list[Pair]:
    """Chromium's controls on the page, each beside Vigil's node for the same element."""
    snap = await tab.snapshot()
    sid, ctx = await tab.target.context_for(tab.main_frame_id)
    cdp = tab.cdp
    tree = await cdp.send("Accessibility.getFullAXTree", {}, session_id=sid)
    wanted = []
    for n in tree.get("nodes", []):
        if n.get("ignored") or "backendDOMNodeId" not in n:
            continue
        role = (n.get("role") or {}).get("value", "")
        props = {p["name"]: (p.get("value") or {}).get("value") for p in n.get("properties", [])}
        if role in NOT_CONTROLS:
            continue
        if role in CONTROL_ROLES or props.get("focusable") is True:
            wanted.append((role, (n.get("name") or {}).get("value", "") or "", n["backendDOMNodeId"]))
    # Vigil's node for each element: its ID put on the element for one read of the DOM, then removed
    # (after the accessibility tree was read, so the marks change nothing there).
    key = json.dumps(tab.key)
    await cdp.send("Runtime.evaluate", {"expression": _MARK % key, "contextId": ctx}, session_id=sid)
    try:
        doc = await cdp.send("DOM.getDocument", {"depth": -1, "pierce": True}, session_id=sid)
    finally:
        await cdp.send("Runtime.evaluate", {"expression": _UNMARK % key, "contextId": ctx}, session_id=sid)
    ids: dict[int, tuple] = {}
    _dom_ids(doc["root"], ids)
    out = []
    for role, name, backend in wanted:
        vid, tag = ids.get(backend, (None, ""))
        node = snap.get(vid) if vid else None
        out.append(Pair(page, role, name, (node.role or "clickable") if node is not None else None,
                        (node.name or "") if node is not None else "", tag))
    return out


async def corpus_pairs(browser, base_url: str, corpus: dict) -> dict[str, list[Pair]]:
    """Every corpus page once: its pairs, by page."""
    from engine.bench.real import open_page

    pages: dict[str, dict] = {}
    for w in corpus["widgets"]:
        pages.setdefault(w["page"], w)
    out = {}
    for page, w in pages.items():
        t0 = time.perf_counter()
        tab = await open_page(browser, base_url, w, corpus.get("ready"))
        try:
            out[page] = await page_pairs(tab, page)
        finally:
            await tab.close()
        TIMES[page] = time.perf_counter() - t0
    return out


def library_of(corpus: dict) -> dict[str, str]:
    lib: dict[str, str] = {}
    for w in corpus["widgets"]:
        lib.setdefault(w["page"], w.get("library", w["page"]))
    return lib


def report(by_page: dict[str, list[Pair]], corpus: dict, allowed: set[tuple]) -> str:
    libs = library_of(corpus)
    rows: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for page, pairs in by_page.items():
        r = rows[libs[page]]
        for p in pairs:
            r[0] += 1
            r[1] += p.agrees()
            r[2] += (not p.agrees()) and p.key() in allowed
    lines = []
    tot = [0, 0, 0]
    for lib, (n, ok, al) in sorted(rows.items()):
        tot = [tot[0] + n, tot[1] + ok, tot[2] + al]
        lines.append(f"{lib:<52} {ok:>4}/{n:<4} agree ({100 * ok / max(1, n):5.1f}%)  + {al} allowed")
    n, ok, al = tot
    lines.append(f"{'overall':<52} {ok:>4}/{n:<4} agree ({100 * ok / max(1, n):5.1f}%)  + {al} allowed "
                 f"→ {ok + al}/{n} accounted for")
    return "\n".join(lines)


async def _main() -> None:
    import engine
    from engine import launch
    from engine.bench.real import load_corpus
    from engine.local_server import serve_directory
    corpus = load_corpus(CORPUS_DIR)
    try:
        allowed = {allow_key(e) for e in load_allowlist()}
    except FileNotFoundError:
        allowed = set()
    with serve_directory(CORPUS_DIR) as base:
        async with launch() as browser:
            by_page = await corpus_pairs(browser, base, corpus)
    print(f"Vigil from {Path(engine.__file__).parent}")
    if "-v" in sys.argv:
        for pairs in by_page.values():
            for p in pairs:
                if not p.agrees():
                    print(("  allowed  " if p.key() in allowed else "  DIFFERS  ") + p.text())
    print(report(by_page, corpus, allowed))
    print("seconds per page: " + ", ".join(f"{p} {t:.1f}" for p, t in TIMES.items()))


if __name__ == "__main__":
    asyncio.run(_main())
