"""select(): pick an option the way a person does.

A visible native `<select>` gets its value set with input and change events. Everything else —
an ARIA combobox or listbox, and the libraries that hide a native `<select>` behind their own
widget (Tom Select, Choices.js, select2 …) — is operated through that widget: open it, find the
list it opened (`aria-controls`/`aria-owns`, else the list that appeared), pick the option by name
in that list (typing to filter or scrolling when the list is long or virtual), click it, then
check that the widget shows it. A hidden native `<select>` that mirrors the widget is only read,
never clicked; given its ID, select() acts through the widget that replaced it.
"""

from __future__ import annotations

from pathlib import Path

from engine.actions import input as inp
from engine.actions.context import ActionContext
from engine.actions.locate import ActionFailure, Target, call_on, describe, probe, resolve, scroll_into_view
from engine.actions.pointer import FOCUS, pointer
from engine.errors import ErrorCode, UnknownNodeError, VigilError
from engine.names import norm
from engine.observe.stability import StabilityConfig, wait_stable
from engine.snapshot.dom_snapshot import DomSnapshot
from engine.snapshot.serialize.hidden import hidden_reason
from engine.snapshot.vnode import VirtualNode

_JS = Path(__file__).resolve().parent / "js"
SELECT, COMBO = ((_JS / f).read_text() for f in ("select.js", "combo.js"))

POPUP_ROLES = frozenset({"listbox", "menu", "tree", "grid", "treegrid", "radiogroup", "tablist"})
OPTION_ROLES = frozenset({"option", "menuitem", "menuitemradio", "menuitemcheckbox", "treeitem", "radio", "tab"})
VALUE_ROLES = frozenset({"combobox", "listbox"})  # widgets whose value select() checks afterwards
SHORT = StabilityConfig(dom_quiet_ms=150, network_quiet_ms=250, timeout_ms=1500)


def _q(s: str) -> str:
    return s if len(s) <= 60 else s[:59] + "…"


async def select(c: ActionContext, option: str) -> None:
    """Pick `option` in a native select, a widget standing in for one, or an ARIA combobox or listbox."""
    t = c.element()
    what = describe(t.node)
    f = await probe(c.page, t, "focus")
    if f.get("disabled"):
        raise ActionFailure(f"{what} is disabled.", code=ErrorCode.DISABLED)
    if f["tag"] == "label":  # a label: act on the control it labels
        r = await call_on(c.page, t.session_id, t.object_id, COMBO, c.page.key, "control")
        ctl = await _by_page_id(c, r.get("id"), t, "control") if r and r.get("id") else None
        if ctl is not None:
            t, what = ctl, f"{what} (its {describe(ctl.node)})"
            f = await probe(c.page, t, "focus")
            if f.get("disabled"):
                raise ActionFailure(f"{what} is disabled.", code=ErrorCode.DISABLED)
    if f["tag"] != "select":
        await _select_widget(c, t, option)
        return
    rep = await call_on(c.page, t.session_id, t.object_id, COMBO, c.page.key, "replacement")
    if not rep.get("visible") and rep.get("found"):
        widget = await _by_page_id(c, rep.get("id"), t, "replacement")
        if widget is not None:
            c.data["via"] = "widget"
            c.data["widget"] = widget.node.node_id
            await _select_widget(c, widget, option, native=t)
            return
    await scroll_into_view(c.page, t)
    r = await call_on(c.page, t.session_id, t.object_id, SELECT, option)
    if not r.get("found"):
        shown = ", ".join(r.get("options", [])[:15])
        more = f" (and {r['total'] - 15} more)" if r.get("total", 0) > 15 else ""
        raise ActionFailure(f'{what} has no option "{option}". Its options: {shown}{more}.', code=ErrorCode.NOT_FOUND)
    if r.get("disabled"):
        raise ActionFailure(f'Option "{r.get("label")}" of {what} is disabled.', code=ErrorCode.DISABLED)
    c.message = f'Selected "{r["label"]}" in {what}.'
    if not r.get("changed"):
        c.message = f'"{r["label"]}" was already selected in {what}; nothing to do.'
        c.data["noop"] = True
    if not rep.get("visible"):
        c.message += " (The list is hidden and no widget on the page stands in for it, so its value was set directly.)"
    if r.get("ambiguous"):
        c.message += f' ({r["ambiguous"]} options contain "{option}"; took the first.)'
    c.data["selected"] = {"label": r["label"], "value": r["value"]}

async def _by_page_id(c: ActionContext, page_id: str | None, anchor: Target, mode: str) -> Target | None:
    """The live element the page-side registry calls `page_id` (a fresh snapshot gives IDs to new elements)."""
    snap = await c.snapshots.snapshot()
    if not page_id or page_id not in snap:
        snap = await c.snapshots.snapshot(force=True)
        if not page_id:
            r = await call_on(c.page, anchor.session_id, anchor.object_id, COMBO, c.page.key, mode)
            page_id = r.get("id") if r else None
    if not page_id or page_id not in snap:
        return None
    try:
        return await resolve(c.page, snap, page_id)
    except UnknownNodeError:
        return None

# -- a widget: open, find, pick, check -------------------------------------------------------
async def _select_widget(c: ActionContext, cb: Target, option: str, native: Target | None = None) -> None:
    what = describe(cb.node)
    said = what if native is None else f"{describe(native.node)} through the widget that stands in for it, {what}"
    before = await c.snapshots.snapshot()
    info = await call_on(c.page, cb.session_id, cb.object_id, COMBO, c.page.key, "widget")
    was = (await probe(c.page, cb, "state")).get("value")
    if was and norm(was) == norm(option):
        c.message = f'"{_q(was)}" is already selected in {said}; nothing to do.'
        c.data["noop"] = True
        return
    inline = cb.node.role in POPUP_ROLES and bool(_options(cb.node))
    ctl = info.get("controls", [])
    already_open = info.get("expanded") is True and (not ctl or any(x.get("shown") for x in ctl))
    opened = False
    if not inline and not already_open:
        # open it (where a person would click: the widget, or the box showing its value)
        opener = await _by_page_id(c, info.get("opener"), cb, "widget") if info.get("opener") else None
        await pointer(c, force=False, clicks=1, target=opener or cb)
        opened = True
        await wait_stable(c.page, SHORT)
    typed = ""
    scrolls = 0
    opts: list[VirtualNode] = []
    first: list[VirtualNode] = []  # the options seen before any filtering, for the message
    popup: VirtualNode | None = None
    while True:
        snap = await c.snapshots.snapshot(force=True)
        if cb.node.node_id not in snap:
            raise ActionFailure(f"{what} went away after it was opened; take a new snapshot.", code=ErrorCode.STALE)
        cb_now = snap.get(cb.node.node_id)
        if inline:
            popup, opts = cb_now, _options(cb_now)
        else:
            info = await call_on(c.page, cb.session_id, cb.object_id, COMBO, c.page.key, "widget")
            popup, opts = _find_list(snap, before, cb_now, info)
        hit, alike = _match(opts, option)
        if hit is not None:
            break
        if not typed and len(opts) > len(first):
            first = opts
        if not typed and not inline:
            field = await _filter_field(c, cb)
            if field is not None:
                await _type_filter(c, field, option)
                typed = field.node.node_id
                continue
        if popup is not None and not scrolls:
            scrolls = await _scan_list(c, snap, popup, option)
            if scrolls:
                continue
        msg = _not_found(what, option, opts if len(opts) >= len(first) else first, opened=opened,
                         typed=bool(typed), scrolled=scrolls, popup=popup)
        await _leave_closed(c, snap, typed, opened)
        raise ActionFailure(msg, code=ErrorCode.NOT_FOUND)
    if (hit.states or {}).get("disabled"):
        raise ActionFailure(f'Option "{_q(hit.name)}" of {what} is disabled.', code=ErrorCode.DISABLED)
    snap = await c.snapshots.snapshot()
    opt = await resolve(c.page, snap, hit.node_id)
    await pointer(c, force=False, clicks=1, target=opt)
    await wait_stable(c.page, SHORT)
    name = hit.name or hit.text or option
    c.data["selected"] = {"label": name, "option": hit.node_id}
    if popup is not None:
        c.data["list"] = popup.node_id
    how = " after typing to filter the list" if typed else (" after scrolling through its list" if scrolls else "")
    c.message = f'Selected "{_q(name)}" in {said}{how}.'
    if alike > 1:
        c.message += f' ({alike} options match "{option}"; took the first.)'
    await _check_shown(c, cb, opt, native, name, what, info)
    if was is not None and norm(was) == norm(name) and norm(c.data.get("shown")) == norm(name):
        c.message = f'"{_q(name)}" was already selected in {said}; it still is.'
        c.data["noop"] = True

async def _check_shown(c: ActionContext, cb: Target, opt: Target, native: Target | None, name: str, what: str,
                       info: dict) -> None:
    """After the click: does the widget (or the native select mirroring it, or the option) show the choice?"""
    want = norm(name)
    shown = None
    try:
        shown = (await probe(c.page, cb, "state")).get("value")
    except VigilError:
        pass
    mirror_label = None
    if native is not None:
        try:
            mirror_label = (await probe(c.page, native, "state")).get("value")
        except VigilError:
            pass
    else:
        try:
            w = await call_on(c.page, cb.session_id, cb.object_id, COMBO, c.page.key, "widget")
            mirror_label = (w.get("mirror") or {}).get("label")
        except VigilError:
            pass
    picked = False
    try:
        of = await call_on(c.page, opt.session_id, opt.object_id, _OPTION_STATE)
        picked = bool(of and of.get("picked"))
    except VigilError:
        pass
    c.data["shown"] = shown
    if mirror_label is not None:
        c.data["mirror"] = mirror_label
    ok = bool(want) and (want in norm(shown) or want in norm(mirror_label)) or picked
    strict = cb.node.role in VALUE_ROLES or native is not None or bool(info.get("mirror"))
    if ok:
        if mirror_label is not None and want in norm(mirror_label):
            c.message += f' The hidden native select it mirrors now holds "{_q(mirror_label)}".'
        return
    # A multiple select's value is its chips: the input stays empty and the picked option may have
    # left the list; the choice shows as a chip or tag in the widget, or in its live region.
    seen_as = None
    try:
        s = await call_on(c.page, cb.session_id, cb.object_id, COMBO, c.page.key, "shows", name)
        seen_as = ("chip", s["chip"]) if s and s.get("chip") else ("live", s["live"]) if s and s.get("live") else None
    except VigilError:
        pass
    if seen_as is not None:
        c.data["shown_as"] = {seen_as[0]: seen_as[1]}
        c.message += (f' It shows as "{_q(seen_as[1])}" in the widget.' if seen_as[0] == "chip"
                      else f' Its live region says "{_q(seen_as[1])}".')
        return
    if not strict:
        return  # a menu or a tab list: clicking the item is the whole action
    seen = f'it shows "{_q(shown)}"' if shown else "it shows no value"
    if mirror_label is not None:
        seen += f' and the hidden native select holds "{_q(mirror_label)}"'
    raise ActionFailure(f'Clicked option "{_q(name)}" of {what}, but {seen}. The widget did not take the choice; '
                        "take a new snapshot and look at its list.", code=ErrorCode.VALUE_MISMATCH)

async def _filter_field(c: ActionContext, cb: Target) -> Target | None:
    r = await call_on(c.page, cb.session_id, cb.object_id, COMBO, c.page.key, "field")
    return await _by_page_id(c, r.get("id") if r else None, cb, "field")

async def _type_filter(c: ActionContext, field: Target, text: str) -> None:
    r = await call_on(c.page, field.session_id, field.object_id, FOCUS, True)
    if r.get("selected"):
        await inp.press_chord(c.page, "Delete")
    await inp.type_text(c.page, text)
    await wait_stable(c.page, SHORT)

async def _leave_closed(c: ActionContext, snap: DomSnapshot, typed: str, opened: bool) -> None:
    """After a failed pick: clear the filter text typed and close the list, as a person would."""
    try:
        if typed and typed in snap:
            field = await resolve(c.page, snap, typed)
            r = await call_on(c.page, field.session_id, field.object_id, FOCUS, True)
            if r.get("selected"):
                await inp.press_chord(c.page, "Delete")
        if opened or typed:
            await inp.press_chord(c.page, "Escape")
            await wait_stable(c.page, SHORT)
    except VigilError:
        pass

async def _scan_list(c: ActionContext, snap: DomSnapshot, popup: VirtualNode, option: str) -> int:
    """Page through a long or virtual list (from its top) until the option is rendered; the
    number of pages turned (0: the list does not scroll)."""
    box = next((n for n in popup.iter() if n.scroll), None)
    p: VirtualNode | None = popup
    for _ in range(3):
        if box is not None or p is None:
            break
        if p.scroll:
            box = p
        p = p.parent
    if box is None:
        return 0
    t = await resolve(c.page, snap, box.node_id)
    r = await call_on(c.page, t.session_id, t.object_id, COMBO, c.page.key, "scan", option, timeout=15)
    await wait_stable(c.page, SHORT)
    return max(1, int((r or {}).get("steps", 0)))




_OPTION_STATE = ("function() { const e = this; if (!e.isConnected) return { picked: false };"
                 " const a = (n) => e.getAttribute(n);"
                 " return { picked: a('aria-selected') === 'true' || a('aria-checked') === 'true' ||"
                 " (a('aria-current') || 'false') !== 'false' || !!(e.localName === 'option' && e.selected) ||"
                 " !!(e.localName === 'input' && e.checked) }; }")


def _options(popup: VirtualNode) -> list[VirtualNode]:
    """The options inside a list: nodes with an option-like role, else its named interactive leaves."""
    found = [n for n in popup.iter() if n is not popup and n.role in OPTION_ROLES and n.rendered]
    if found:
        return found
    leaves = []
    for n in popup.iter():
        if n is popup or not n.interactive or not n.rendered:
            continue
        if any(d is not n and d.interactive for d in n.iter()):
            continue
        leaves.append(n)
    return leaves


def _inside(n: VirtualNode, anc: VirtualNode) -> bool:
    p: VirtualNode | None = n
    while p is not None:
        if p is anc or p.node_id == anc.node_id:
            return True
        p = p.parent
    return False


def _gap(a: VirtualNode, b: VirtualNode) -> float:
    ax, ay, aw, ah = a.bounds
    bx, by, bw, bh = b.bounds
    dx = max(0.0, max(ax, bx) - min(ax + aw, bx + bw))
    dy = max(0.0, max(ay, by) - min(ay + ah, by + bh))
    return dx + dy


def _find_list(snap: DomSnapshot, before: DomSnapshot | None, cb: VirtualNode,
               info: dict) -> tuple[VirtualNode | None, list[VirtualNode]]:
    """The list this widget opened: the one it names (aria-controls/aria-owns) that shows options,
    else the list that appeared since `before` nearest to it, else the options that appeared.

    A named element that shows no option a person can see does not end the search: libraries
    point aria-controls at the box showing the value (the list being in aria-owns, Select2) or at
    an invisible 0×0 copy of the list kept for screen readers while the visible options have no
    role (Ant Design)."""
    named: tuple[VirtualNode | None, list[VirtualNode]] | None = None
    for ctl in info.get("controls", []):
        nid = ctl.get("id")
        if nid and nid in snap:
            n = snap.get(nid)
            if n.rendered:
                slotted = [snap.get(i) for i in ctl.get("options", []) if i in snap]
                opts = _options(n) or [o for o in slotted if o.rendered]
                if any(_seen(o) for o in opts):
                    return n, [o for o in opts if _seen(o)]
                if named is None or (opts and not named[1]):
                    named = (n, opts)
    if named is not None and named[1]:
        # a copy whose options nobody sees: the visible click targets that carry their names
        echo = _echoed(snap, cb, {norm(o.name or o.text) for o in named[1]} - {""})
        if echo[1]:
            return echo
    found = _list_near(snap, before, cb, info)
    if found[0] is not None or found[1] or named is None:
        return found
    return named[0], [o for o in named[1] if _seen(o)]


def _leaf_targets(snap: DomSnapshot, cb: VirtualNode):
    """Visible, named click targets with no click target inside, outside the widget."""
    for n in snap.nodes():
        if (n.interactive and n.parent is not None and _seen(n) and (n.name or n.text)
                and not _inside(n, cb) and not _inside(cb, n)
                and not any(d is not n and d.interactive for d in n.iter())):
            yield n


def _echoed(snap: DomSnapshot, cb: VirtualNode, names: set[str]) -> tuple[VirtualNode | None, list[VirtualNode]]:
    """The visible list whose items bear the names of an invisible copy's options: all the click
    targets beside (same parent as) the first visible one named like a copied option."""
    leaves = list(_leaf_targets(snap, cb))
    hit = next((n for n in leaves if norm(n.name or n.text) in names), None)
    if hit is None or hit.parent is None:
        return None, []
    pid = hit.parent.node_id
    return hit.parent, [n for n in leaves if n.parent is not None and n.parent.node_id == pid]


def _seen(n: VirtualNode) -> bool:
    """Rendered, with a box, and not hidden from a person (0×0, clipped away, transparent…)."""
    return n.rendered and n.bounds[2] >= 2 and n.bounds[3] >= 2 and hidden_reason(n) is None


def _list_near(snap: DomSnapshot, before: DomSnapshot | None, cb: VirtualNode,
               info: dict) -> tuple[VirtualNode | None, list[VirtualNode]]:
    old = before.node_map if before is not None else {}

    def new(n: VirtualNode) -> bool:
        o = old.get(n.node_id)
        return o is None or not o.rendered or (o.visible_ratio <= 0 < n.visible_ratio)

    lists = []
    for n in snap.nodes():
        if n.role not in POPUP_ROLES or not n.rendered or n.node_id == cb.node_id or _inside(cb, n):
            continue
        opts = [o for o in _options(n) if _seen(o)]
        if not opts:
            continue
        lists.append((not new(n), _gap(n, cb), -len(opts), n, opts))
    lists = [x for x in lists if not x[0]] or ([x for x in lists if info.get("expanded")] if lists else [])
    if lists:
        lists.sort(key=lambda x: (x[0], x[1], x[2]))
        return lists[0][3], lists[0][4]
    appeared = [n for n in snap.nodes() if n.role in OPTION_ROLES and _seen(n) and new(n)]
    if appeared:
        return None, appeared
    # options without a role (the list a person sees, beside an accessibility copy): the named
    # click targets that appeared together under one parent, the group nearest the widget
    groups: dict[str, list[VirtualNode]] = {}
    parents: dict[str, VirtualNode] = {}
    for n in _leaf_targets(snap, cb):
        if not new(n) or n.parent is None:
            continue
        groups.setdefault(n.parent.node_id, []).append(n)
        parents[n.parent.node_id] = n.parent
    if not groups:
        return None, []
    pid = min(groups, key=lambda k: (min(_gap(o, cb) for o in groups[k]), -len(groups[k])))
    return parents[pid], groups[pid]


def _match(opts: list[VirtualNode], option: str) -> tuple[VirtualNode | None, int]:
    """The option named `option`: exact (case- and space-insensitive), else the one that starts
    with it, else the one that contains it; with how many options matched at that level."""
    want = norm(option)
    if not want:
        return None, 0
    named = [(n, norm(n.name or n.text)) for n in opts]
    for test in (lambda s: s == want, lambda s: s.startswith(want), lambda s: want in s):
        hits = [n for n, s in named if s and test(s)]
        if hits:
            return hits[0], len(hits)
    return None, 0


def _not_found(what: str, option: str, opts: list[VirtualNode], *, opened: bool, typed: bool, scrolled: int,
               popup: VirtualNode | None) -> str:
    steps = [s for s, on in (("opening it", opened), (f'typing "{_q(option)}" to filter it', typed),
                             ("scrolling through its list", scrolled)) if on]
    after = f" after {' and '.join(steps)}" if steps else ""
    if popup is None and not opts:
        return (f'{what} opened no list of options{after}, so "{_q(option)}" could not be chosen. '
                "Take a new snapshot: if a list is showing, click the option by its ID.")
    named = [n for n in opts if (n.name or n.text)]
    unnamed = [n for n in opts if not (n.name or n.text)]
    msg = f'{what} shows no option "{_q(option)}"{after}.'
    if named:
        shown = ", ".join(f'"{_q(n.name or n.text)}"' for n in named[:12])
        more = f" (and {len(named) - 12} more)" if len(named) > 12 else ""
        msg += f" Options seen: {shown}{more}."
    if unnamed:
        ids = ", ".join(n.node_id for n in unnamed[:8])
        msg += (f" {len(unnamed)} option{'s are' if len(unnamed) > 1 else ' is'} visible but "
                f"unnamed (IDs {ids}); click one by its ID if it is the right one.")
    if not opts:
        msg += " Its list is open but shows no options."
    return msg
