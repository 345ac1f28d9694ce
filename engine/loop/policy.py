"""Approval policies: which steps are sensitive, and when the gate is asked.

Policies:
- `ask` (default): every step goes to the gate, `finish`/`fail` included.
- `auto-safe`: automatic, except sensitive steps, which always ask.
- `auto`: never asks. Sensitive reasons are still computed and kept in the step record, so an
  unattended run can be audited afterwards.

A step is sensitive when it types into a password or one-time-code field, submits a form, leaves
the site the run started on, touches a file input, is destructive or irreversible (delete, pay,
send, publish…: `engine.loop.risk`), runs while the page shows text that reads like instructions
to the agent (`engine.loop.untrusted`), or the planner flags it. Only the planner and the page's
structure can mark a step sensitive; page text can add a reason but never remove one.

A key that activates an element is a click on it (`activates`): Enter on a button, link or submit
input, Space on a button, checkbox, radio or submit input get every check a click gets — destructive,
submit (Space on a form's submit button submits it), leaving the site and downloading (links), the
dialog a "Yes" confirms — on the given node or, without one, on the focused element.
"""

from __future__ import annotations

import ipaddress
import urllib.parse
from pathlib import Path
from typing import TYPE_CHECKING

from engine.browser.keys import pressed_key
from engine.loop.redact import is_secret_field, types_secret
from engine.loop.risk import destructive_phrase, destructive_reason, name_disagrees
from engine.models import Action, ProposedStep

if TYPE_CHECKING:
    from engine.snapshot.dom_snapshot import DomSnapshot
    from engine.snapshot.vnode import VirtualNode

# Public suffixes with two labels that commonly host sites (a full list is not worth shipping
# for this check: an unknown suffix only makes two sites look like one, or one like two).
_TWO_LABEL_SUFFIXES = frozenset({
    "co.uk", "org.uk", "ac.uk", "gov.uk", "me.uk", "com.au", "net.au", "org.au", "co.nz", "co.jp", "ne.jp",
    "or.jp", "com.br", "com.cn", "com.mx", "co.in", "co.za", "com.tr", "co.kr", "com.sg", "com.hk",
    "github.io", "gitlab.io", "herokuapp.com", "vercel.app", "netlify.app", "pages.dev", "appspot.com",
})
_SUBMIT_KEYS = frozenset({"enter"})
_SPACE_KEYS = frozenset({" "})
# what Enter activates (a native button, link or submit input, and the ARIA widgets that behave as one)
_ENTER_ROLES = frozenset({"button", "link", "menuitem", "menuitemcheckbox", "menuitemradio"})
# what Space activates
_SPACE_ROLES = frozenset({"button", "checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio"})
_NO_IMPLICIT_SUBMIT = frozenset({"button", "reset", "checkbox", "radio", "file", "color", "range"})


def site_of(host: str) -> str:
    """The registrable domain of a host (`shop.example.co.uk` → `example.co.uk`); IPs and single
    labels (localhost) are their own site."""
    host = (host or "").lower().rstrip(".")
    if not host:
        return ""
    try:
        ipaddress.ip_address(host.strip("[]"))
        return host
    except ValueError:
        pass
    labels = host.split(".")
    if len(labels) <= 2:
        return host
    if ".".join(labels[-2:]) in _TWO_LABEL_SUFFIXES:
        return ".".join(labels[-3:])
    return ".".join(labels[-2:])


def leaves_site(url: str, start_domain: str, base_url: str = "") -> bool:
    """True when `url` (relative to `base_url`) points to another site than `start_domain`."""
    full = urllib.parse.urljoin(base_url, url) if base_url else url
    parts = urllib.parse.urlsplit(full)
    scheme = parts.scheme.lower()
    if scheme in ("javascript", "mailto", "tel", "about", "data", "blob", ""):
        return False
    if not start_domain:
        return False  # the run started on a blank page: there is no site to leave yet
    return site_of(parts.hostname or "") != site_of(start_domain)


def _ancestors(node: VirtualNode):
    p = node.parent
    while p is not None:
        yield p
        p = p.parent


def _in_form(node: VirtualNode) -> bool:
    """Inside a form that submits somewhere (a `method="dialog"` form only closes its dialog)."""
    for a in _ancestors(node):
        if a.tag == "form" or a.role == "form":
            return str((a.attrs or {}).get("method", "")).lower() != "dialog"
    return False


def _attr(node: VirtualNode, name: str) -> str:
    return str((node.attrs or {}).get(name, "")).lower()


def is_file_input(node: VirtualNode) -> bool:
    return node.tag == "input" and _attr(node, "type") == "file"


def is_submit_button(node: VirtualNode) -> bool:
    """A button that submits: type=submit (or an image input), or a button in a <form> — or outside one
    but naming it (`form=ID`) — whose type is not button/reset (the HTML default for <button> is submit)."""
    typ = _attr(node, "type")
    if node.tag == "input":
        return typ in ("submit", "image")
    if typ == "submit":
        return True
    if node.tag == "button" or node.role == "button":
        owned = _in_form(node) or (node.tag == "button" and bool(_attr(node, "form")))
        return typ not in ("button", "reset") and owned
    return False


def _enter_submits(node: VirtualNode) -> bool:
    """Enter in a text-like input of a form submits it (implicit submission), as does Enter on a
    submit button; not in a textarea, a select or a checkbox."""
    if node.tag == "input" and _attr(node, "type") not in _NO_IMPLICIT_SUBMIT:
        return _in_form(node)
    return is_submit_button(node)


def _key(key: str | None) -> str:
    """The key of a press without its modifiers, read as the key sender reads it ("Control+Enter" and "Return"
    → "enter", "space" → " "); "" for a name the sender refuses."""
    return pressed_key(key).lower()


def activates(key: str | None, node: VirtualNode | None) -> bool:
    """Whether pressing `key` on `node` activates it as a click would: Enter on a button, link or submit
    input; Space on a button, checkbox, radio or submit input."""
    if node is None:
        return False
    k = _key(key)
    if node.tag == "input":
        typ = _attr(node, "type")
        if k in _SUBMIT_KEYS:
            return typ in ("submit", "image", "button", "reset")
        if k in _SPACE_KEYS:
            return typ in ("submit", "image", "button", "reset", "checkbox", "radio")
        return False
    if k in _SUBMIT_KEYS:
        return node.role in _ENTER_ROLES or node.tag == "summary" or node.tag == "a" and "href" in (node.attrs or {})
    if k in _SPACE_KEYS:
        return node.role in _SPACE_ROLES or node.tag == "summary"
    return False


def _focused(snapshot: DomSnapshot | None) -> VirtualNode | None:
    if snapshot is None:
        return None
    for n in snapshot.nodes():
        if n.states and n.states.get("focused"):
            return n
    return None


def frame_url(snapshot: DomSnapshot | None, node: VirtualNode | None) -> str:
    """The address of the document that holds `node` (its frame's, not the top page's when it sits in an
    iframe); the page's without a node. Grants are checked against its origin."""
    return _base_url(snapshot, node)


def _base_url(snapshot: DomSnapshot | None, node: VirtualNode | None) -> str:
    if snapshot is None:
        return ""
    if node is not None and node.frame_id:
        for f in snapshot.frames:
            if f.frame_id == node.frame_id:
                return f.url
    return snapshot.url


def sensitive_reasons(action: Action, node: VirtualNode | None, snapshot: DomSnapshot | None,
                      start_domain: str, proposal: ProposedStep | None = None) -> list[str]:
    """Why this step needs a person's approval under `auto-safe` (empty when it does not)."""
    reasons: list[str] = []
    n = action.name
    if n == "press" and node is None:
        node = _focused(snapshot)  # a key press goes to the focused element
    # a key that activates the element is a click on it, with every check a click gets
    # checking a box is a click on it (or Space), with every check a click gets
    clicks = n in ("click", "double_click", "check", "uncheck") or n == "press" and activates(action.key, node)
    how = f"presses {action.key} on" if n == "press" else "clicks"
    submits = False
    if n == "type" and node is not None and (is_secret_field(node) or types_secret(action, node)):
        reasons.append("types into a password, one-time-code or card field")
    if n == "select" and action.option and destructive_phrase(action.option):
        reasons.append(f'is destructive or irreversible (selects "{action.option}"'
                       + (f" in {node.label()}" if node is not None else "") + ")")
    if node is not None and is_file_input(node) and n not in ("hover", "scroll"):
        reasons.append("uses a file input (uploads a file from this machine)")
    if n == "type" and action.submit:
        reasons.append("submits a form (types and presses Enter)")
        submits = True
    elif n == "press" and _key(action.key) in _SUBMIT_KEYS and node is not None and _enter_submits(node):
        reasons.append("submits a form (Enter in a form field)" if not is_submit_button(node)
                       else f"submits a form ({how} {node.label()})")
        submits = True
    elif clicks and node is not None and is_submit_button(node):
        reasons.append(f"submits a form ({how} {node.label()})")
        submits = True
    risky = destructive_reason("click" if clicks and n in ("press", "check", "uncheck") else n, node, submits=submits)
    if risky:
        reasons.append(risky)
    lie = name_disagrees(node) if clicks else None
    if lie and not (risky and lie in risky):
        reasons.append(f"{lie}: what the page shows and what it names this element disagree")
    if n == "navigate" and action.url and leaves_site(action.url, start_domain, snapshot.url if snapshot else ""):
        reasons.append(f"leaves {start_domain} for {urllib.parse.urlsplit(action.url).hostname or action.url}")
    if clicks and node is not None and node.role == "link":
        href = (node.attrs or {}).get("href") or ""
        if href and leaves_site(href, start_domain, _base_url(snapshot, node)):
            host = urllib.parse.urlsplit(urllib.parse.urljoin(_base_url(snapshot, node), href)).hostname
            reasons.append(f"leaves {start_domain} for {host} (link)")
    reasons.extend(_browsing_reasons(action, node, snapshot, start_domain, clicks=clicks))
    if proposal is not None and proposal.sensitive:
        reasons.append(proposal.sensitive_reason or "the planner flagged this step as sensitive")
    return reasons


_DOWNLOAD_EXTENSIONS = frozenset({
    ".pdf", ".zip", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".rar", ".tar", ".csv", ".tsv", ".xls", ".xlsx", ".ods",
    ".doc", ".docx", ".odt", ".ppt", ".pptx", ".exe", ".msi", ".dmg", ".pkg", ".deb", ".rpm", ".apk", ".iso",
    ".bin", ".ics", ".vcf", ".txt", ".json", ".xml", ".mp3", ".mp4", ".mov"})


def _downloads(node: VirtualNode) -> bool:
    """A link that downloads: a `download` attribute, or an href to a file of a downloadable type."""
    attrs = node.attrs or {}
    if "download" in attrs:
        return True
    path = urllib.parse.urlsplit(str(attrs.get("href") or "")).path.lower()
    return any(path.endswith(ext) for ext in _DOWNLOAD_EXTENSIONS)


def _browsing_reasons(action: Action, node: VirtualNode | None, snapshot: DomSnapshot | None,
                      start_domain: str, *, clicks: bool = False) -> list[str]:
    """Uploads, answers to page dialogs, downloads and tabs opened elsewhere (issue [9])."""
    n = action.name
    out: list[str] = []
    if n == "upload":
        names = ", ".join(Path(p).name for p in action.paths or [])
        out.append(f"uploads {names} from this machine to the page")
    if n == "dialog" and action.accept:
        out.append("answers the page's dialog OK" + (f' with "{action.text}"' if action.text else ""))
    if n == "new_tab" and action.url and leaves_site(action.url, start_domain, snapshot.url if snapshot else ""):
        out.append(f"opens {urllib.parse.urlsplit(action.url).hostname or action.url} in a new tab (another site)")
    if clicks and node is not None and node.role == "link" and _downloads(node):
        out.append(f"downloads a file ({node.label()}) to this machine")
    return out


def needs_approval(policy: str, reasons: list[str]) -> bool:
    """`ask` → always; `auto-safe` → only sensitive steps; `auto` → never."""
    if policy == "ask":
        return True
    if policy == "auto-safe":
        return bool(reasons)
    if policy == "auto":
        return False
    raise ValueError(f"Unknown approval policy {policy!r}; use ask, auto or auto-safe.")
