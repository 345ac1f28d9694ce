"""Real input through CDP `Input.*` on the page's top-level session: the browser routes it to
whichever frame (same- or out-of-process) is under the pointer or holds focus, with the event
order a person produces (seed 002, Appendix A).

An input event that makes the page raise a dialog (a click on "Delete all" → `confirm`) gets no answer
until the dialog is answered. So every event goes through the page's dialog watcher
(`DialogWatcher.send_through`): it times out after `INPUT_TIMEOUT` seconds as any command does, but
not while a dialog is being decided — a person may take minutes to answer."""

from __future__ import annotations

import asyncio

from engine.browser.keys import KeyDef, key_def, modifier_mask, parse_chord
from engine.browser.target import PageTarget
from engine.errors import VigilError

PER_KEY_LIMIT = 256  # longer text: the rest goes in one Input.insertText
INPUT_TIMEOUT = 30.0  # seconds an input event may wait for the page (read at each call; the time a dialog
                      # is being decided does not count)


async def send_input(page: PageTarget, method: str, params: dict) -> dict:
    """One `Input.*` command on the page's top-level session (see the module docstring)."""
    return await page.dialogs.send_through(method, params, session_id=page.session_id, timeout=INPUT_TIMEOUT)


async def mouse_click(page: PageTarget, x: float, y: float, *, clicks: int = 1, button: str = "left") -> None:
    """Move, then press and release `clicks` times (clickCount 1, 2 … as a double click does)."""
    await send_input(page, "Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y, "button": "none"})
    await mouse_press(page, x, y, clicks=clicks, button=button)


async def mouse_press(page: PageTarget, x: float, y: float, *, clicks: int = 1, button: str = "left") -> None:
    """Press and release `clicks` times where the pointer already is (after `mouse_move` to x, y)."""
    bit = {"left": 1, "right": 2, "middle": 4}[button]
    for n in range(1, clicks + 1):
        await send_input(page, "Input.dispatchMouseEvent", {"type": "mousePressed", "x": x, "y": y,
                                                            "button": button, "buttons": bit, "clickCount": n})
        await send_input(page, "Input.dispatchMouseEvent", {"type": "mouseReleased", "x": x, "y": y,
                                                            "button": button, "buttons": 0, "clickCount": n})


async def mouse_move(page: PageTarget, x: float, y: float) -> None:
    await send_input(page, "Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y, "button": "none"})


async def _key(page: PageTarget, kind: str, kd: KeyDef, modifiers: int, text: str | None) -> None:
    p = {"type": kind, "key": kd.key, "code": kd.code, "windowsVirtualKeyCode": kd.key_code,
         "nativeVirtualKeyCode": kd.key_code, "modifiers": modifiers}
    if text:
        p["text"] = text
        p["unmodifiedText"] = text
    await send_input(page, "Input.dispatchKeyEvent", p)


async def press_chord(page: PageTarget, chord: str) -> None:
    """`Enter`, `Control+A`, `Shift+Tab` …: modifiers down, key down/up, modifiers up."""
    mods, kd = parse_chord(chord)
    held = 0
    for m in mods:
        held |= modifier_mask([m])
        await _key(page, "rawKeyDown", key_def(m), held, None)
    # Text is produced only without Control/Alt/Meta (Shift alone still types).
    produces = kd.text if not (held & 0b111) else ""
    await _key(page, "keyDown" if produces else "rawKeyDown", kd, held, produces or None)
    await _key(page, "keyUp", kd, held, None)
    for m in reversed(mods):
        held &= ~modifier_mask([m])
        await _key(page, "keyUp", key_def(m), held, None)


async def type_text(page: PageTarget, text: str) -> None:
    """Key events per character (keydown, keypress, input, keyup); newlines press Enter."""
    head, tail = text[:PER_KEY_LIMIT], text[PER_KEY_LIMIT:]
    for ch in head:
        if ch == "\n":
            await press_chord(page, "Enter")
            continue
        kd = key_def(ch) if ch != "\r" else key_def("Enter")
        shift = 8 if (len(ch) == 1 and ch.isalpha() and ch.isupper()) else 0
        await _key(page, "keyDown", kd, shift, ch)
        await _key(page, "keyUp", kd, shift, None)
    if tail:
        await send_input(page, "Input.insertText", {"text": tail})


# -- one insertion or real keystrokes ------------------------------------------------------------------
# Events through which a page could tell one insertion from key-by-key typing: key events, and the
# `beforeinput`/`textInput` that each keystroke (not the one insertion) fires per character. An `input`
# listener is not among them: it sees the same final value either way (one event instead of several).
KEY_EVENTS = frozenset({"keydown", "keypress", "keyup", "beforeinput", "textInput", "textinput"})
TEXT_TYPES = ("", "text", "search", "email", "url", "tel", "number")
_OBJECT_GROUP = "vigil-keys"

# On the field (this): why it must get real keystrokes whatever its listeners (`why`, null when none)
_WHY = ("const el = this, tag = el.localName; let why = null;"
         " const at = (n, a) => (n.getAttribute && n.getAttribute(a)) || '';"
         " if (tag === 'input') { const ty = at(el, 'type').toLowerCase();"
         "   if (TYPES.indexOf(ty) < 0) why = 'an input of type ' + ty; }"
         " else if (tag !== 'textarea') why = 'not a plain text field (' + (el.isContentEditable ? 'editable content'"
         "   : tag) + ')';"
         " if (!why && el.hasAttribute('maxlength')) why = 'it has a maxlength';"
         " if (!why && el.hasAttribute('list')) why = 'it has a list of suggestions (datalist)';"
         " if (!why) for (const a of Array.from(el.attributes)) if (/mask/i.test(a.name) || a.name === 'im-insert') {"
         "   why = 'it carries an input mask (' + a.name + ')'; break; }"
         " if (!why) { const ac = at(el, 'aria-autocomplete').toLowerCase();"
         "   const pop = at(el, 'aria-haspopup').toLowerCase();"
         "   if (ac && ac !== 'none') why = 'it autocompletes (aria-autocomplete ' + ac + ')';"
         "   else if (pop && pop !== 'false') why = 'it opens a popup (aria-haspopup)';"
         "   else if (at(el, 'aria-controls') || at(el, 'aria-owns')) why = 'it controls another element (aria-controls"
         " or aria-owns: a list of suggestions)'; }"
         " if (!why) for (let n = el, i = 0; n && n.nodeType === 1 && i < 64; n = n.parentElement, i++)"
         "   if (/(^|\\s)combobox(\\s|$)/.test(at(n, 'role'))) { why = 'it is a combobox'; break; }")
# …else the event path of a key typed into it — the field, its ancestors (slots, shadow roots and hosts on the way:
# the composed path), its document and window — for DOMDebugger.getEventListeners. By reference: [why, node, …].
_PATH = ("function(TYPES) { " + _WHY + " const out = [why]; if (why) return out;"
         " for (let n = el, i = 0; n && i < 4096; i++) {"
         "   out.push(n); n = n.assignedSlot || n.parentNode || n.host || null; }"
         " out.push(window); return out; }")
# …else, read in the same call with the DevTools console's getEventListeners (GEL: what DOMDebugger's reads,
# inline `on…` handlers included), every listener for a key event (KEYS) on that path, by value:
# [why] or [null, n, [[i, type, source], …]] (i: 0 the field … n-1 its window; a listener object's handleEvent),
# each source read with the toString the page had before its scripts ran (install.js: `source`); null without it.
# (the path and the lists are walked by index: no Array method that a page could have replaced)
_KEYS_ON_PATH = ("function(TYPES, KEYS, GEL, KEY) { " + _WHY + " if (why) return [why];"
                 " const S = window[KEY], str = S && S.source; if (typeof str !== 'function') return null;"
                 " const path = []; for (let n = el, i = 0; n && i < 4096; i++) {"
                 "   path[path.length] = n; n = n.assignedSlot || n.parentNode || n.host || null; }"
                 " path[path.length] = window;"
                 " const src = (f) => { try { if (typeof f !== 'function') f = f && f.handleEvent;"
                 "   return typeof f === 'function' ? str(f) : ''; } catch (e) { return ''; } };"
                 " const found = []; for (let i = 0; i < path.length; i++) { const ls = GEL(path[i]) || {};"
                 "   for (const t in ls) { if (KEYS[t] !== 1) continue; const arr = ls[t];"
                 "     for (let j = 0; j < arr.length; j++)"
                 "       found[found.length] = [i, t, src(arr[j] && arr[j].listener)]; } }"
                 " return [null, path.length, found]; }")
_READER_GROUP = "vigil-listener-reader"  # kept: one remote function per execution context


def _where(i: int, n: int) -> str:
    return "the field" if i == 0 else "its window" if i == n - 1 else "its document" if i == n - 2 else "an ancestor"


async def typing_mode(page: PageTarget, session_id: str, object_id: str, text: str,
                      context_id: int | None = None) -> tuple[str, str]:
    """("insert", why) when `text` can go into the field as one insertion (`Input.insertText`) without the
    page being able to tell it from typing, else ("keys", why). One insertion needs all of: a plain text
    field (input of type text/search/email/url/tel/number, or textarea; not editable content), no maxlength,
    no datalist, no attribute of an input mask (a name with "mask" in it), not a combobox or autocomplete
    (aria-autocomplete, aria-haspopup, aria-controls/owns, role combobox on it or an ancestor), no line
    break in the text, and no listener for a key
    event (keydown, keypress, keyup, beforeinput, textInput) that the page registered — inline `on…` handlers
    included — on the field, its ancestors (through shadow roots and slots), its document or its window.
    Vigil's own listeners (its install script's) do not count. Anything unreadable means keystrokes.
    With the element's `context_id`, all of it is one call (`_KEYS_ON_PATH`); else, or when that call cannot be
    made, a call per node of the path (`DOMDebugger.getEventListeners`)."""
    if not text:
        return "keys", "no text"
    if "\n" in text or "\r" in text:
        return "keys", "the text has a line break"
    if context_id is not None:
        at_once = await _mode_in_one_call(page, session_id, object_id, context_id)
        if at_once is not None:
            return at_once
    return await _mode_node_by_node(page, session_id, object_id)


async def _mode_in_one_call(page: PageTarget, sid: str, oid: str, ctx: int) -> tuple[str, str] | None:
    """typing_mode's answer from `_KEYS_ON_PATH` (the reader asked for once per execution context), or None
    when it could not be read that way."""
    send, readers, key = page.cdp.send, page.listener_readers, (sid, ctx)
    try:
        reader = readers.get(key)
        if reader is None:
            r = await send("Runtime.evaluate", {"expression": "getEventListeners", "includeCommandLineAPI": True,
                                                "contextId": ctx, "objectGroup": _READER_GROUP},
                           session_id=sid, timeout=5)
            res = r.get("result") or {}
            if "exceptionDetails" in r or res.get("type") != "function" or not res.get("objectId"):
                return None
            if len(readers) >= 32:  # (those of documents gone)
                readers.clear()
            reader = readers[key] = res["objectId"]
        r = await send("Runtime.callFunctionOn", {
            "functionDeclaration": _KEYS_ON_PATH, "objectId": oid, "returnByValue": True,
            "arguments": [{"value": list(TEXT_TYPES)}, {"value": dict.fromkeys(KEY_EVENTS, 1)}, {"objectId": reader},
                          {"value": page.key}]},
            session_id=sid, timeout=5)
    except VigilError:  # (a reader of a context gone, an element of another one): asked for again next time
        readers.pop(key, None)
        return None
    got = (r.get("result") or {}).get("value")
    if "exceptionDetails" in r or not isinstance(got, list) or not got:
        readers.pop(key, None)
        return None
    if got[0]:
        return "keys", str(got[0])
    if len(got) != 3 or not isinstance(got[2], list):
        return None
    own = page.scripts.install_source
    for i, kind, source in got[2]:
        if _ours_source(str(source), own):
            continue
        return "keys", f"the page listens for {kind} on {_where(int(i), int(got[1]))}"
    return "insert", "no key listener, mask, list or length limit on the field"


async def _mode_node_by_node(page: PageTarget, session_id: str, object_id: str) -> tuple[str, str]:
    send = page.cdp.send
    try:
        r = await send("Runtime.callFunctionOn", {"functionDeclaration": _PATH, "objectId": object_id,
                                                  "arguments": [{"value": list(TEXT_TYPES)}],
                                                  "objectGroup": _OBJECT_GROUP}, session_id=session_id, timeout=5)
        arr = r.get("result", {}).get("objectId")
        if "exceptionDetails" in r or not arr:
            return "keys", "its event path could not be read"
        props = (await send("Runtime.getProperties", {"objectId": arr, "ownProperties": True},
                            session_id=session_id, timeout=5)).get("result", [])
        items = sorted(((int(p["name"]), p.get("value") or {}) for p in props if p.get("name", "").isdigit()),
                       key=lambda x: x[0])
        if not items:
            return "keys", "its event path could not be read"
        why = items[0][1].get("value")
        if why:
            return "keys", str(why)
        nodes = [v.get("objectId") for _, v in items[1:]]
        if not nodes or not all(nodes):
            return "keys", "its event path could not be read"
        got = await asyncio.gather(*(send("DOMDebugger.getEventListeners", {"objectId": oid, "depth": 0,
                                                                            "objectGroup": _OBJECT_GROUP},
                                          session_id=session_id, timeout=5) for oid in nodes),
                                   return_exceptions=True)
        own = page.scripts.install_source
        for i, res in enumerate(got):
            if isinstance(res, BaseException):
                return "keys", "its listeners could not be read"
            for ls in res.get("listeners", []):
                if ls.get("type") not in KEY_EVENTS:
                    continue
                if _ours(ls, own):
                    continue
                return "keys", f"the page listens for {ls.get('type')} on {_where(i, len(nodes))}"
        return "insert", "no key listener, mask, list or length limit on the field"
    except VigilError as exc:
        return "keys", f"its listeners could not be read ({exc.message})"
    finally:
        try:
            await send("Runtime.releaseObjectGroup", {"objectGroup": _OBJECT_GROUP}, session_id=session_id,
                       timeout=5)
        except VigilError:
            pass


def _ours(listener: dict, own: str) -> bool:
    """Is this listener one of Vigil's own (its source text is part of the script Vigil installs)?"""
    return _ours_source((listener.get("handler") or {}).get("description") or "", own)


def _ours_source(source: str, own: str) -> bool:
    return len(source) > 20 and source in own
