"""What an action changed, in words a person would use: text that appeared, went away or changed
in the viewport, new values and states of controls, dialogs that opened — and messages that
flashed and went before anyone looked (the mutation stream).

The sentinel (sentinel.py) compares the page's text lines (engine/snapshot/serialize/text.py)
before and after the step, ranks what it finds — alerts and errors first, then status and live
regions and dialogs, then what is near the element acted on, then the rest — and puts the first
few hundred characters in the verification's feedback. Everything here quotes the page: callers
fence it as untrusted and scrub typed secrets out of it.
"""

from __future__ import annotations

import functools
import math
import re
import urllib.parse
from collections import Counter
from dataclasses import dataclass

from engine.models import PageEvent
from engine.secret_values import SHORT_MASK, scrub
from engine.snapshot.dom_snapshot import DomSnapshot
from engine.snapshot.serialize.hidden import F_HIDDEN, shown_thumb
from engine.snapshot.serialize.text import ATOMIC, TextLine, text_lines
from engine.snapshot.serialize.tokens import cut
from engine.snapshot.vnode import F_RENDERED, VirtualNode

# Words of an error message (kept in step with the mutation stream's, snapshot/js/install.js). "required" as a
# field's marker ("*required", "(required)", often drawn by ::after) is not one.
ERROR_RX = re.compile(
    r"\b(error|errors|invalid|fail(ed|ure)?|incorrect|denied|(?<![*(])(?<![*(]\s)required(?!\))|not valid|wrong|"
    r"unable|cannot|can['\u2019]t|"
    r"could ?n['\u2019]?o?t|problem|expired|rejected|forbidden|not found|(is|are|was) (already )?taken|"
    r"already (exists|in use|registered|taken|used)|not available|unavailable|too (short|long|many|few)|"
    r"must (be|contain|include|have|match)|does ?n['\u2019]?o?t match|please (enter|choose|select|provide|fill)|"
    r"no longer|not allowed|try again)\b", re.IGNORECASE)
NEAR_PX = 300           # text this close to the element acted on counts as its outcome
MAX_WORDS = 320         # characters of the words in the feedback
MAX_ITEM = 160          # characters of one quoted text
STATE_KEYS = ("checked", "selected", "expanded", "pressed", "disabled")
# controls whose name is the text a person reads on them (a field's name is its label, a text line of its own)
NAMED_BY_TEXT = frozenset({"button", "link", "tab", "menuitem", "menuitemcheckbox", "menuitemradio", "option",
                           "treeitem"})
DIALOG_ROLES = frozenset({"dialog", "alertdialog"})
RANK_ERROR, RANK_STATUS, RANK_NEAR, RANK_REST = 0, 1, 2, 3


@dataclass
class Change:
    """One thing the step changed."""

    verb: str            # "text appeared", "text gone", "text changed", "now", "dialog opened" …
    text: str            # what to quote (already in words: 'A' → 'B' for a change)
    rank: int            # RANK_*: the order they are told in
    dist: float = 0.0    # from the element acted on (px)
    order: int = 0       # reading order on the page
    error: bool = False  # it reads as an error message
    raw: str = ""        # the page's words alone (for errors_detected)

    def say(self, max_item: int = MAX_ITEM) -> str:
        return f"{self.verb}: {self.text}" if self.text else self.verb


def _q(s: str, n: int = MAX_ITEM) -> str:
    return "'" + cut(" ".join(s.split()), n) + "'"


def errorish(text: str) -> bool:
    return bool(ERROR_RX.search(text or ""))


def _document(url: str) -> str:
    return urllib.parse.urldefrag(url or "")[0]


def _centre(b: tuple[float, float, float, float]) -> tuple[float, float]:
    return b[0] + b[2] / 2, b[1] + b[3] / 2


def _dist(a: tuple[float, float] | None, b: tuple[float, float, float, float]) -> float:
    if a is None:
        return math.inf
    x, y, w, h = b
    dx = max(x - a[0], 0.0, a[0] - (x + w))
    dy = max(y - a[1], 0.0, a[1] - (y + h))
    return math.hypot(dx, dy)


def _rank_line(ln: TextLine, error: bool, status: bool, dist: float) -> int:
    if error:
        return RANK_ERROR
    if status or ln.kind in ("status", "alert"):
        return RANK_STATUS
    return RANK_NEAR if dist <= NEAR_PX else RANK_REST


def _events_by_text(events: list[PageEvent]) -> tuple[list[str], list[str]]:
    """(texts the stream classified as errors, texts of notices: success, warning or notice-like)"""
    errors = [e.text for e in events if e.category == "error" and e.kind in ("added", "shown", "text", "invalid")]
    notices = [e.text for e in events if e.category in ("success", "warning", "text", "loading")
               and e.kind in ("added", "shown", "text")]
    return errors, notices


def _matches(text: str, pool: list[str]) -> bool:
    t = " ".join(text.split()).rstrip("\u2026")
    for p in pool:
        p = p.rstrip("\u2026")
        if p and (p in t or t in p):
            return True
    return False


def _shown(n: VirtualNode) -> bool:
    """A person sees it (a slider input hidden inside the thumb they drag counts: they see the thumb move)."""
    return n.flags & (F_RENDERED | F_HIDDEN) == F_RENDERED or shown_thumb(n) is not None


def what_changed(pre: DomSnapshot | None, post: DomSnapshot | None, events: list[PageEvent] | None = None,
                 target: str | None = None) -> list[Change]:
    """The changes the step made, most relevant first."""
    if post is None:
        return []
    events = events or []
    err_events, notice_events = _events_by_text(events)
    tnode = None
    for s in (post, pre):
        if s is not None and target and target in s:
            tnode = s.get(target)
            break
    anchor = _centre(tnode.bounds) if tnode is not None else None
    out: list[Change] = []
    same_doc = pre is not None and _document(pre.url) == _document(post.url)
    post_lines = text_lines(post)
    if not same_doc:
        # another document: what it shows first — its alerts and status, its main heading
        heading_told = False
        for i, ln in enumerate(post_lines):
            if not ln.in_view:
                continue
            error = ln.kind == "alert" or ln.near_error  # (a search result saying "error" is no error)
            if ln.kind in ("alert", "status") or error or (ln.kind == "heading" and not heading_told):
                heading_told = heading_told or ln.kind == "heading"
                out.append(Change("the page shows", _q(ln.text), RANK_ERROR if error else RANK_STATUS,
                                  order=i, error=error, raw=ln.text))
        return _sorted(out)
    assert pre is not None
    pre_lines = text_lines(pre)
    pre_count = Counter(ln.text for ln in pre_lines)
    post_count = Counter(ln.text for ln in post_lines)
    pre_by_id = {ln.node_id: ln for ln in pre_lines}
    seen_new: Counter = Counter()
    for i, ln in enumerate(post_lines):
        if not ln.in_view:
            continue
        seen_new[ln.text] += 1
        if seen_new[ln.text] <= pre_count.get(ln.text, 0):
            continue  # this text was on the page before
        old = pre_by_id.get(ln.node_id)
        dist = _dist(anchor, ln.bounds)
        error = ln.kind == "alert" or ((ln.near_error or _matches(ln.text, err_events)
                                        or errorish(ln.text)) and len(ln.text) <= 400)
        status = _matches(ln.text, notice_events)
        if old is not None and old.text != ln.text:
            rank = _rank_line(ln, error, status, dist)
            out.append(Change("text changed", f"{_q(old.text, 80)} → {_q(ln.text)}", rank, dist, i, error, ln.text))
        else:
            out.append(Change("text appeared", _q(ln.text), _rank_line(ln, error, status, dist), dist, i, error,
                              ln.text))
    told_old = {c.raw for c in out}  # (a text both gone and appeared elsewhere is not gone)
    for i, ln in enumerate(pre_lines):
        if not ln.in_view or post_count.get(ln.text, 0) >= pre_count[ln.text]:
            continue
        if ln.text in told_old or any(c.verb == "text changed" and c.text.startswith(_q(ln.text, 80)) for c in out):
            continue
        dist = _dist(anchor, ln.bounds)
        rank = RANK_STATUS if ln.kind in ("alert", "status") else (RANK_NEAR if dist <= NEAR_PX else RANK_REST)
        out.append(Change("text gone", _q(ln.text), rank, dist, 10_000 + i))
    told = [c.raw for c in out if c.raw]  # (a button's words already told in its table row's)
    out += [c for c in _control_changes(pre, post, anchor, target)
            if not (c.verb == "text changed" and any(c.raw in t for t in told))]
    # messages that came and went before the snapshot after the step
    now_texts = [ln.text for ln in post_lines if ln.in_view]
    for e in events:
        if e.kind not in ("added", "shown", "text") or e.category not in ("error", "success", "warning"):
            continue
        if _matches(e.text, now_texts) or any(c.raw and _matches(e.text, [c.raw]) for c in out):
            continue
        error = e.category == "error"
        out.append(Change("appeared briefly", _q(e.text), RANK_ERROR if error else RANK_STATUS, order=-1,
                          error=error, raw=e.text))
    return _sorted(out)


def _control_changes(pre: DomSnapshot, post: DomSnapshot, anchor: tuple[float, float] | None,
                     target: str | None) -> list[Change]:
    """Values and states of controls in the viewport (the element acted on aside: the verification
    tells of it), controls and dialogs that came or went."""
    out: list[Change] = []
    pre_map = pre.node_map
    pre_names = Counter((n.role, n.name) for n in pre.nodes() if n.interactive and _shown(n) and n.name)
    for i, n in enumerate(post.nodes()):
        if not _shown(n) or (shown_thumb(n) or n).visible_ratio <= 0:
            continue
        role = n.role
        if role in DIALOG_ROLES:
            o = pre_map.get(n.node_id)
            if o is None or not _shown(o) or o.visible_ratio <= 0:
                out.append(Change(f"{'alert dialog' if role == 'alertdialog' else 'dialog'} opened",
                                  _q(n.name, 80) if n.name else "", RANK_STATUS, order=i))
            continue
        if not n.interactive or role not in ATOMIC:
            continue
        label = f'{role} "{cut(n.name, 40)}"' if n.name else role
        o = pre_map.get(n.node_id)
        dist = _dist(anchor, n.bounds)
        rank = RANK_NEAR if dist <= NEAR_PX else RANK_REST
        if o is None or not _shown(o):
            if n.name and pre_names.get((role, n.name), 0) == 0:
                out.append(Change("controls appeared", label, RANK_REST, dist, 20_000 + i))
            continue
        if role in NAMED_BY_TEXT and n.name and o.name and n.name != o.name and not n.redacted:
            # the words on a control changed ("Save" → "Saved"), the one acted on too: no verification says it
            out.append(Change("text changed", f"{role} {_q(o.name, 80)} → {_q(n.name)}", rank, dist, i,
                              raw=n.name))
        if n.node_id == target:
            continue
        if not n.redacted and (n.value or "") != (o.value or "") and not (n.value is None and o.value is None):
            out.append(Change(f"{label} now holds", _q(n.value or "", 80), rank, dist, i))
        ns, os_ = n.states or {}, o.states or {}
        for k in STATE_KEYS:
            a, b = ns.get(k, False), os_.get(k, False)
            if a != b:
                word = {"expanded": ("collapsed", "expanded")}.get(k, (f"not {k}", k))
                now = word[1] if a is True else (f"{k}={a}" if a not in (False, None) else word[0])
                out.append(Change(f"{label} is now {now}", "", rank, dist, i))
    for n in pre.nodes():
        if n.role in DIALOG_ROLES and _shown(n) and n.visible_ratio > 0:
            m = post.node_map.get(n.node_id)
            if m is None or not _shown(m) or m.visible_ratio <= 0:
                out.append(Change("dialog closed", _q(n.name, 80) if n.name else "", RANK_STATUS, order=30_000))
    return out


def _sorted(changes: list[Change]) -> list[Change]:
    return sorted(changes, key=lambda c: (c.rank, c.dist if c.rank >= RANK_NEAR else 0.0, c.order))


def words(changes: list[Change], limit: int = MAX_WORDS) -> str:
    """The changes in words, most relevant first, about `limit` characters at most (the first one
    always, cut when it alone is longer)."""
    parts: list[str] = []
    used = 0
    told = 0
    for c in changes:
        s = c.say()
        if parts and parts[-1].startswith(c.verb + ": ") and c.text:
            s = c.text  # same verb as the one before: "text appeared: 'A', 'B'"
            joined = f"{parts[-1]}, {s}"
            if used + len(s) + 2 > limit:
                break
            parts[-1] = joined
            used += len(s) + 2
            told += 1
            continue
        if parts and used + len(s) + 2 > limit:
            break
        if not parts and len(s) > limit:
            s = cut(s, limit)
        parts.append(s)
        used += len(s) + 2
        told += 1
    text = "; ".join(parts)
    left = len(changes) - told
    if left > 0:
        text += f"; and {left} more change{'s' if left > 1 else ''}"
    return text


# `scrub_secrets(text, forms)`: `text` with every known typed secret masked — the callers hand every form it may
# reappear in (`SecretValues.forms()`), so each is masked as given, with the change words' short mask
scrub_secrets = functools.partial(scrub, exact=True, mask=SHORT_MASK)
