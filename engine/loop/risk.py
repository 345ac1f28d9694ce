"""Destructive and irreversible steps: recognised from the target's name, its form and the text
around it, so that `auto-safe` asks before "Delete account", "Pay now" or a "Yes" in a dialog that
asks "Delete all files?".

The vocabulary covers English and the languages people most often run this tool in (German,
French, Spanish). Words are matched on word boundaries after `names.norm`, so "Undelete" or
"Sendungsverfolgung" do not match, while "Delete account", "Konto löschen" and "Supprimer" do.

Page text can only ADD a reason here, never take one away: a hostile page that names a dangerous
button "Safe button" is still caught by its form or dialog, and a harmless button named "Delete"
merely asks once.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

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


def destructive_phrase(text: str) -> str | None:
    """The destructive verb phrase in `text` ("Delete account" → "delete"), or None."""
    t = norm(text or "")
    if not t or _SAFE_EXIT_RX.match(t):
        return None
    m = _DESTRUCTIVE_RX.search(t)
    return m.group(1).lower() if m else None


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


def destructive_reason(action_name: str, node: VirtualNode | None, *, submits: bool = False) -> str | None:
    """Why this click / Enter / submit is destructive or irreversible, in plain words, or None.

    `submits` says the step submits the node's form (Enter in a field, a submit button): then the
    form's submit buttons count as what the step does."""
    if node is None or action_name not in ("click", "double_click", "press", "type", "check", "select"):
        return None
    label = node.label() if hasattr(node, "label") else (node.name or "")
    why = _delete_semantics(node)
    if why:
        return f"{why}: {label}"
    if action_name in ("click", "double_click"):
        phrase = destructive_phrase(node.name or node.text or "")
        if phrase:
            return f'is destructive or irreversible ("{phrase}"): {label}'
    box = _context(node)
    if box is None:
        return None
    if action_name in ("click", "double_click") and _AFFIRM_RX.match(norm(node.name or node.text or "")):
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
            phrase = destructive_phrase(d.name or "") or (_delete_semantics(d) and "delete")
            if phrase:
                return f'submits a form whose button says "{d.name or phrase}"'
    return None
