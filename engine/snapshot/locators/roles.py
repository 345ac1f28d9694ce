"""Which of Vigil's roles Playwright's `get_by_role` would give an element too.

Vigil names some click targets itself (`clickable`, an `<li>` in a menu as `menuitem` …); a
`get_by_role` step is only written when the role is the element's own ARIA role — its `role`
attribute, or the implicit role HTML gives its tag — so Playwright computes the same one.
"""

from __future__ import annotations

from engine.snapshot.vnode import VirtualNode

ARIA_ROLES = frozenset("""
alert alertdialog application article banner blockquote button caption cell checkbox code columnheader combobox
complementary contentinfo definition deletion dialog directory document emphasis feed figure form generic grid
gridcell group heading img insertion link list listbox listitem log main mark marquee math menu menubar menuitem
menuitemcheckbox menuitemradio meter navigation none note option paragraph presentation progressbar radio
radiogroup region row rowgroup rowheader scrollbar search searchbox separator slider spinbutton status strong
subscript superscript switch tab table tablist tabpanel term textbox time timer toolbar tooltip tree treegrid
treeitem
""".split())

_BY_TAG = {
    "button": "button", "textarea": "textbox", "option": "option", "h1": "heading", "h2": "heading",
    "h3": "heading", "h4": "heading", "h5": "heading", "h6": "heading", "ul": "list", "ol": "list",
    "li": "listitem", "nav": "navigation", "main": "main", "dialog": "dialog", "table": "table", "tr": "row",
    "progress": "progressbar", "meter": "meter", "details": "group", "fieldset": "group", "hr": "separator",
    "output": "status", "article": "article", "aside": "complementary", "optgroup": "group", "menu": "list",
}
_BY_INPUT_TYPE = {
    "button": "button", "submit": "button", "reset": "button", "image": "button", "checkbox": "checkbox",
    "radio": "radio", "range": "slider", "number": "spinbutton", "search": "searchbox", "email": "textbox",
    "tel": "textbox", "text": "textbox", "url": "textbox", "": "textbox",
}


def implicit_role(node: VirtualNode) -> str:
    """The role HTML gives the element's tag (as Playwright computes it), or ""."""
    tag, a = node.tag, node.attrs or {}
    if tag in ("a", "area"):
        return "link" if "href" in a else ""
    if tag == "input":
        t = (a.get("type") or "").lower()
        if t in ("text", "search", "email", "tel", "url", "") and a.get("list"):
            return "combobox"
        return _BY_INPUT_TYPE.get(t, "")
    if tag == "select":
        return "listbox" if node.states.get("multiselectable") or "multiple" in a else "combobox"
    if tag == "img":
        return "img" if a.get("alt", "x") != "" else ""
    if tag in ("td", "th"):
        return ""  # cell, gridcell, columnheader … depend on the table: left to the role attribute
    return _BY_TAG.get(tag, "")


def own_aria_role(node: VirtualNode) -> str:
    """Vigil's role for the node when it is the element's own ARIA role, else ""."""
    role = node.role
    if role not in ARIA_ROLES:
        return ""
    explicit = ((node.attrs or {}).get("role") or "").split()
    for tok in explicit:
        if tok in ARIA_ROLES:
            return role if tok == role else ""
    return role if implicit_role(node) == role else ""
