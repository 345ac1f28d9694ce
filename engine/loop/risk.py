"""Destructive and irreversible steps: recognised from the target's name, its form and the text
around it, so that `auto-safe` asks before "Delete account", "Pay now" or a "Yes" in a dialog that
asks "Delete all files?".

The vocabulary covers English and the languages people most often run this tool in (German,
French, Spanish). Words are matched on word boundaries after `names.norm`, so "Undelete" or
"Sendungsverfolgung" do not match, while "Delete account", "Konto löschen" and "Supprimer" do.

Page text can only ADD a reason here, never take one away: a hostile page that names a dangerous
button "Safe button" is still caught by its form or dialog, and a harmless button named "Delete"
merely asks once. Everything a person or a model is told about the target is judged, each on its
own (`told`): its visible text, accessible name, value, title, and the text its `aria-labelledby`
and `aria-describedby` point at — so `<button aria-label="Continue">Delete account</button>` is
destructive, and says that its name and its words disagree (WCAG 2.5.3, "label in name").
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from engine.loop.untrusted import fold
from engine.names import norm

if TYPE_CHECKING:
    from engine.snapshot.vnode import VirtualNode

# One verb (or verb phrase) each; the phrase is what the reason quotes.
_DESTRUCTIVE = [
    # English
    r"delete", r"remove", r"erase", r"destroy", r"wipe", r"purge", r"discard", r"revoke", r"terminate",
    r"deactivate", r"close (?:my |your |the )?account",
    r"cancel (?:my |your |the )?(?:subscription|membership|plan|order|"
    r"booking|reservation|account|payment|transfer)", r"unsubscribe", r"factory reset",
    r"reset (?:all|everything|account)",
    r"empty (?:the )?(?:trash|bin|cart)", r"pay", r"pay now", r"purchase", r"buy", r"buy now", r"place (?:the )?order",
    r"confirm (?:the )?(?:order|purchase|payment|transfer)", r"complete (?:the )?(?:order|purchase|payment)",
    r"checkout", r"check out", r"transfer", r"wire", r"send", r"send money", r"publish", r"post publicly",
    r"submit payment", r"donate", r"subscribe and pay", r"withdraw", r"sign and submit", r"archive all",
    # German
    r"löschen", r"entfernen", r"kündigen", r"konto schließen", r"bezahlen", r"jetzt kaufen", r"kaufen",
    r"zahlungspflichtig bestellen", r"bestellen", r"überweisen", r"senden", r"absenden", r"veröffentlichen",
    # French
    r"supprimer", r"effacer", r"retirer", r"résilier", r"fermer (?:le |mon )?compte", r"payer", r"acheter",
    r"commander", r"virement", r"envoyer", r"publier",
    # Spanish
    r"eliminar", r"borrar", r"quitar", r"cancelar (?:la )?suscripción", r"cerrar (?:la )?cuenta", r"pagar",
    r"comprar", r"realizar pedido", r"transferir", r"enviar", r"publicar",
]
_DESTRUCTIVE_RX = re.compile(r"(?<![\w])(" + "|".join(sorted(_DESTRUCTIVE, key=len, reverse=True)) + r")(?![\w])",
                             re.IGNORECASE)
# Buttons that only confirm what the surrounding dialog or form asks.
_AFFIRM_RX = re.compile(r"^(?:yes|ok|okay|confirm|continue|proceed|i understand|i'm sure|im sure|sure|agree|accept|"
                        r"do it|go ahead|ja|oui|sí|si|bestätigen|confirmer|confirmar|weiter|continuer|continuar)\b",
                        re.IGNORECASE)
# A "Cancel" that only closes a dialog is the safe way out, not a destructive step.
_SAFE_EXIT_RX = re.compile(r"^(?:cancel|close|dismiss|no|no thanks|keep it|go back|back|not now|abbrechen|schließen|"
                           r"annuler|fermer|cancelar|cerrar|nein|non)[.!]?$", re.IGNORECASE)
_CONTEXT_ROLES = frozenset({"dialog", "alertdialog", "form"})
_CONTEXT_TAGS = frozenset({"dialog", "form"})
DELETE_ATTRS = ("data-method", "data-turbo-method", "formmethod", "hx-delete", "data-hx-delete")


# On a box or a switch these verbs name an item or an option ("Buy milk" in a to-do list, "Send me the newsletter"),
# not an act: a toggle is judged by the verbs that lose data, access or privacy (delete, purge, publish …)
_ITEM_VERBS = frozenset({"buy", "buy now", "pay", "pay now", "purchase", "send", "send money", "checkout", "check out",
                         "donate", "transfer", "wire", "withdraw", "kaufen", "jetzt kaufen", "bezahlen", "senden",
                         "absenden", "bestellen", "acheter", "payer", "envoyer", "commander", "comprar", "pagar",
                         "enviar", "transferir"})
TOGGLE_ROLES = frozenset({"checkbox", "switch", "radio", "menuitemcheckbox", "menuitemradio"})


def destructive_phrase(text: str, *, toggle: bool = False) -> str | None:
    """The destructive verb phrase in `text` ("Delete account" → "delete"), or None; `toggle`: the words of a
    box or switch (commerce and message verbs name an item there). Look-alike letters and fullwidth forms are
    folded first ("Ｄｅｌｅｔｅ", a Cyrillic "Dеlete")."""
    t = norm(fold(text or ""))
    if not t or _SAFE_EXIT_RX.match(t):
        return None
    for m in _DESTRUCTIVE_RX.finditer(t):
        phrase = m.group(1).lower()
        if not (toggle and phrase in _ITEM_VERBS):
            return phrase
    return None


def _context(node: VirtualNode) -> VirtualNode | None:
    """The dialog the node is in (its question is what a "Yes" confirms), else its form."""
    return node.container(("dialog", "alertdialog"), ("dialog",)) or node.container(_CONTEXT_ROLES, _CONTEXT_TAGS)


def _context_text(box: VirtualNode, limit: int = 600) -> str:
    """The visible words of a dialog or form (its name, headings and text), bounded."""
    out: list[str] = [box.name or ""]
    size = len(out[0])
    for d in box.iter():
        if size > limit:
            break
        if d is box or not d.rendered:
            continue
        t = d.text or (d.name if d.role in ("heading", "paragraph", "alert", "status") else "")
        if t:
            out.append(t)
            size += len(t)
    return " ".join(out)


def _delete_semantics(node: VirtualNode) -> str | None:
    attrs = node.attrs or {}
    for a in DELETE_ATTRS:
        v = str(attrs.get(a, "")).strip().lower()
        if a.endswith("hx-delete") and a in attrs or v == "delete":
            return f"sends a DELETE request ({a})"
    return None


def _root(node: VirtualNode) -> VirtualNode:
    while node.parent is not None:
        node = node.parent
    return node


def _text_of(el: VirtualNode, limit: int = 300) -> str:
    """The words of an element (hidden ones included: a hidden label still names what it labels)."""
    if el.text:
        return el.text[:limit]
    out: list[str] = []
    size = 0
    for d in el.iter():
        t = d.text if d is not el and not d.folded else ""
        if t:
            out.append(t)
            size += len(t)
            if size > limit:
                break
    return " ".join(out)[:limit] or (el.name or "")[:limit]


def referenced_text(node: VirtualNode, attr: str) -> str:
    """The text of the elements an id-list attribute (`aria-labelledby`, `aria-describedby`) points at,
    looked up by id in the snapshot (the walker keeps hidden elements, with their text); "" when none is
    there (a labelledby target the snapshot lacks is still judged through the name it gave)."""
    ids = [i for i in str((node.attrs or {}).get(attr, "")).split() if i][:8]
    if not ids:
        return ""
    found: dict[str, VirtualNode] = {}
    for d in _root(node).iter():
        i = (d.attrs or {}).get("id") if d.attrs else None
        if i in ids and i not in found and (d.frame_id == node.frame_id or not node.frame_id):
            found[i] = d
            if len(found) == len(ids):
                break
    return " ".join(_text_of(found[i]) for i in ids if i in found)


_F_HIDDEN = 2048   # the walker's "hidden from a person" flag, with why in bits 12-14 (js/walker/head.js)
_HID_ARIA = 1      # … because of aria-hidden: hidden from assistive technology, still seen by a person


def _seen(d: VirtualNode) -> bool:
    return d.rendered and (not d.flags & _F_HIDDEN or (d.flags >> 12) & 7 == _HID_ARIA)


def _visible_text(node: VirtualNode, limit: int = 300) -> str:
    """What a person reads on the element: its text, else the words of what it holds that a person can see
    (an aria-hidden "Delete account" inside a button is seen; a visually hidden span is not), or the value
    of an input button."""
    if node.text:
        return node.text
    if node.tag == "input":
        if str((node.attrs or {}).get("type", "")).lower() in ("button", "submit", "reset"):
            return str((node.attrs or {}).get("value") or node.value or "")
        return ""
    out: list[str] = []
    size = 0
    stack = list(reversed(node.children))
    while stack and size <= limit:
        d = stack.pop()
        if not _seen(d):
            continue  # nor what it holds
        if d.text and not d.folded:
            out.append(d.text)
            size += len(d.text)
        stack.extend(reversed(d.children))
    return " ".join(out)[:limit]


_EDITABLE_ROLES = frozenset({"textbox", "searchbox", "combobox", "spinbutton", "slider", "listbox"})


def told(node: VirtualNode) -> list[tuple[str, str]]:
    """Everything a person or a model is told about this element, each with what it is: the accessible
    name, the visible text, the value, the title, the aria-labelledby and aria-describedby text."""
    attrs = node.attrs or {}
    # a field's value is what was typed or chosen in it, not what the element does
    value = "" if node.role in _EDITABLE_ROLES or node.tag in ("select", "textarea") or (
        node.tag == "input" and str(attrs.get("type", "")).lower() not in ("button", "submit", "reset")) else (
        node.value or str(attrs.get("value") or ""))
    out = [("accessible name", node.name or ""), ("visible text", _visible_text(node)),
           ("value", value), ("title", str(attrs.get("title") or "")),
           ("aria-labelledby text", referenced_text(node, "aria-labelledby")),
           ("aria-describedby text", referenced_text(node, "aria-describedby"))]
    return [(what, t) for what, t in out if t and t.strip()]


_WORD = re.compile(r"[^\W\d_]{2,}")  # words of two letters or more (no digits, symbols or "×")


def _short(t: str, n: int = 60) -> str:
    t = " ".join(t.split())
    return t if len(t) <= n else t[:n - 1] + "…"


def label_mismatch(node: VirtualNode | None) -> str | None:
    """`named "Continue" but reads "Delete account"` when the accessible name does not contain the words
    of the visible text (WCAG 2.5.3 "label in name"), else None. Icon text ("×", "☰") never counts."""
    if node is None or not node.name:
        return None
    seen = _WORD.findall(norm(fold(_visible_text(node))))
    if not seen:
        return None
    named = set(_WORD.findall(norm(fold(node.name))))
    if all(w in named for w in seen):
        return None
    return f'named "{_short(node.name)}" but reads "{_short(_visible_text(node))}"'


def name_disagrees(node: VirtualNode | None) -> str | None:
    """The label-in-name mismatch when it is complete — the name and the visible text share no word, as in
    "Continue" / "Delete account" — which a page uses to show a person one thing and tell a model another
    (a name that only adds words, "Save" / "Save changes", is ordinary)."""
    why = label_mismatch(node)
    if why is None or node is None:
        return None
    named = set(_WORD.findall(norm(fold(node.name))))
    return None if named & set(_WORD.findall(norm(fold(_visible_text(node))))) else why


def destructive_words(node: VirtualNode) -> str | None:
    """The destructive phrase in anything the element tells, with where it was found, or None:
    `"delete" in its visible text`."""
    toggle = node.role in TOGGLE_ROLES or node.tag == "input" and str((node.attrs or {}).get("type", "")).lower() in (
        "checkbox", "radio")
    for what, text in told(node):
        phrase = destructive_phrase(text, toggle=toggle)
        if phrase:
            return f'"{phrase}" in its {what}' if what != "accessible name" else f'"{phrase}"'
    return None


def destructive_reason(action_name: str, node: VirtualNode | None, *, submits: bool = False) -> str | None:
    """Why this click / Enter / submit is destructive or irreversible, in plain words, or None.

    A key that activates an element (Enter on a button or link, Space on a button or checkbox) is
    judged as `click` (the caller passes "click" for it). `submits` says the step submits the node's
    form (Enter in a field, a submit button): then the form's submit buttons count as what the step does."""
    if node is None or action_name not in ("click", "double_click", "press", "type", "check", "select"):
        return None
    label = node.label() if hasattr(node, "label") else (node.name or "")
    why = _delete_semantics(node)
    if why:
        return f"{why}: {label}"
    if action_name in ("click", "double_click"):
        found = destructive_words(node)
        if found:
            lie = label_mismatch(node)
            return f"is destructive or irreversible ({found}): {label}" + (f"; {lie}" if lie else "")
    box = _context(node)
    if box is None:
        return None
    if action_name in ("click", "double_click") and any(
            _AFFIRM_RX.match(norm(fold(t))) for what, t in told(node) if what in ("visible text", "accessible name")):
        phrase = destructive_phrase(_context_text(box))
        if phrase:
            kind = "dialog" if box.role in ("dialog", "alertdialog") or box.tag == "dialog" else "form"
            return f'confirms a {kind} that asks to "{phrase}": {label}'
    if submits:
        for d in box.iter():
            if d is node or d.role != "button" or not d.rendered:
                continue
            typ = str((d.attrs or {}).get("type", "")).lower()
            if d.tag == "button" and typ in ("button", "reset") or d.tag == "input" and typ not in ("submit", "image"):
                continue
            phrase = next((p for _, t in told(d) if (p := destructive_phrase(t))), None) or (
                _delete_semantics(d) and "delete")
            if phrase:
                return f'submits a form whose button says "{d.name or phrase}"'
    return None
