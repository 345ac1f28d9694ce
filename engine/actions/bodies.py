"""What each action does on the page, once its element is located (`page_actions` runs the frame
around it: locate, the state before, then settle and verify). A body raises `ActionFailure` (or
another VigilError) with the code and a message when the page does not take the action."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path

from engine.actions import input as inp
from engine.actions.context import ActionContext
from engine.actions.locate import ActionFailure, Target, call_on, describe, key_guard, keys_misdirected, probe
from engine.actions.pointer import focus, pointer, received
from engine.errors import ErrorCode, VigilError
from engine.observe.stream import read_stream

_JS = Path(__file__).resolve().parent / "js"
CHECK_VALUE, SCROLL, SUGGEST = ((_JS / f).read_text() for f in ("check_value.js", "scroll.js", "suggest.js"))
SUGGEST_WAIT_MS = 1500  # a combobox's suggestions: debounce (300 ms is common) plus a server's answer


async def type_text(c: ActionContext, text: str, clear: bool, submit: bool) -> None:
    page, t = c.page, c.element()
    f = await probe(page, t, "focus")
    c.masked = bool(f.get("secret")) or bool(t.node.redacted)
    what = describe(t.node)
    if f.get("disabled"):
        raise ActionFailure(f"{what} is disabled; nothing can be typed into it.", code=ErrorCode.DISABLED)
    if not f.get("editable"):
        raise ActionFailure(f"{what} is not a text field; use click, select or check for it.",
                            code=ErrorCode.NOT_ACTIONABLE)
    if f.get("readonly"):
        raise ActionFailure(f"{what} is read-only.", code=ErrorCode.NOT_ACTIONABLE)
    if f.get("tag") == "input" and ("\n" in text or "\r" in text):
        # a newline typed into a one-line field presses Enter: it would submit the form before any check
        raise ActionFailure(f"The text for {what} contains a line break, and in a one-line field a line break "
                            "presses Enter, which submits its form. Nothing was typed. Remove the line break, or "
                            "type the text and pass submit=True to submit on purpose.", code=ErrorCode.BAD_ARGUMENT)
    r = await focus(c, clear)
    # one insertion where the page cannot tell it from typing (no key listener …: inp.typing_mode), else keys: read
    # once the field has the focus (a page may add its listeners then), while the key watch is being armed
    mode: asyncio.Future[tuple[str, str]] | None = None
    if not c.masked:
        mode = asyncio.ensure_future(inp.typing_mode(page, t.session_id, t.object_id, text, t.context_id))
    try:
        async with _watching_keys(c, t):  # keys that land anywhere but this field are stopped
            typing = ("insert", "a secret") if mode is None else await mode
            await _type_into(c, t, text, clear, submit, bool(r.get("selected")), typing)
    finally:
        if mode is not None and not mode.done():
            mode.cancel()
            with contextlib.suppress(asyncio.CancelledError, VigilError):
                await mode


async def _type_into(c: ActionContext, t: Target, text: str, clear: bool, submit: bool, selected: bool,
                     typing: tuple[str, str]) -> None:
    page, what = c.page, describe(t.node)
    mode, why = typing
    insert = mode == "insert" and not c.masked
    c.data["typing"] = {"mode": "keys" if mode == "keys" else "insertion", "why": why}
    if clear and selected and not (insert and text):  # (an insertion replaces the selected text)
        await inp.press_chord(page, "Delete")
    watch = not submit and not c.masked and not insert  # suggestions: the lists showing before the typing are noted
    if watch:
        watch = bool((await call_on(page, t.session_id, t.object_id, SUGGEST, page.key, 0) or {}).get("auto"))
    if c.masked or insert:
        # a secret goes in as one insertion: no key event or partial value ("H", "Hu", "Hun" …) exists for a page
        # to echo into its text, title or console, where only the whole value would be recognised and scrubbed
        await inp.send_input(page, "Input.insertText", {"text": text})
    else:
        await inp.type_text(page, text)
    chk = await call_on(page, t.session_id, t.object_id, CHECK_VALUE, page.key, text, clear)
    shown = "a hidden value" if c.masked else f'"{text}"'
    if not chk.get("ok"):
        if c.masked or chk.get("secret"):
            why = "the field's value does not match what was typed (value hidden)"
        else:
            why = f'the field now holds "{chk.get("value")}"'
        if chk.get("maxLength") and len(text) > chk["maxLength"]:
            why += f" — it accepts at most {chk['maxLength']} characters"
        raise ActionFailure(f"Typed {shown} into {what}, but {why}.", code=ErrorCode.VALUE_MISMATCH)
    c.message = f"Typed {shown} into {what}."
    if watch:
        # a combobox or autocomplete fills its list after a debounce: the step ends once it shows
        # (or the bound passes), so that the next snapshot has the suggestions
        sug = await call_on(page, t.session_id, t.object_id, SUGGEST, page.key, SUGGEST_WAIT_MS,
                            timeout=SUGGEST_WAIT_MS / 1000 + 5)
        if sug and sug.get("auto"):
            c.data["suggestions"] = {"items": sug.get("items", 0), "waited_ms": sug.get("waited", 0)}
            if sug.get("items"):
                c.message += f" Its list of suggestions shows {sug['items']} item{'s' if sug['items'] != 1 else ''}."
    if submit:
        reading = await read_stream(page, time.time() * 1000)
        now = await probe(page, t, "state")
        c.mark = {"mutations": reading.mutations, "nav_count": page.nav_count, "valueFp": now.get("valueFp")}
        await inp.press_chord(page, "Enter")
        c.message += " Pressed Enter to submit."


async def _keys_landed(c: ActionContext, t: Target) -> None:
    """The key watch's verdict: MISDIRECTED, naming where the keys went, when the page moved the focus."""
    try:
        v = await key_guard(c.page, t, "keysread")
    except VigilError:  # the document went (the keys submitted its form): nothing to read, nothing watched now
        return
    if isinstance(v, dict) and v.get("misdirected"):
        c.data["misdirected"] = received(v)
        raise ActionFailure(keys_misdirected(t.node, v), code=ErrorCode.MISDIRECTED)


@contextlib.asynccontextmanager
async def _watching_keys(c: ActionContext, t: Target) -> AsyncIterator[None]:
    """Keys sent inside the block that land anywhere but `t` are stopped in the page; at its end the step fails
    MISDIRECTED when any did. The watch never outlives the block (a person's own keys are never stopped)."""
    await key_guard(c.page, t, "keys")
    try:
        yield
    except ActionFailure:
        await _keys_landed(c, t)  # (a value that does not match because the keys went elsewhere says so)
        raise
    except BaseException:
        with contextlib.suppress(VigilError):
            await key_guard(c.page, t, "keysread")
        raise
    await _keys_landed(c, t)


async def press(c: ActionContext, key: str, repeat: int = 1) -> None:
    t = c.target
    if t is None:
        for _ in range(repeat):
            await inp.press_chord(c.page, key)
    else:
        await focus(c, False)
        async with _watching_keys(c, t):
            for _ in range(repeat):
                await inp.press_chord(c.page, key)
    times = f" {repeat} times" if repeat > 1 else ""
    c.message = f"Pressed {key}{times}" + (f" in {describe(c.target.node)}." if c.target else ".")


async def set_checked(c: ActionContext, want: bool) -> None:
    t = c.element()
    what = describe(t.node)
    f = await probe(c.page, t, "state")
    if f.get("checked") is None and t.node.role not in ("checkbox", "radio", "switch", "menuitemcheckbox"):
        raise ActionFailure(f"{what} is not a checkbox, radio or switch; use click instead.",
                            code=ErrorCode.NOT_ACTIONABLE)
    if f.get("checked") == want:
        c.message = f"{what} was already {'checked' if want else 'unchecked'}; nothing to do."
        c.data["noop"] = True
        return
    if not want and f.get("type") == "radio":
        raise ActionFailure(f"{what} is a radio button: choose another option of the group instead of unchecking it.",
                            code=ErrorCode.NOT_ACTIONABLE)
    await pointer(c, force=False, clicks=1)
    after = await probe(c.page, t, "state")
    if after.get("checked") != want:
        raise ActionFailure(f"Clicked {what}, but it is still {'unchecked' if want else 'checked'}.",
                            code=ErrorCode.NO_EFFECT)
    via = " through its label" if c.data.get("via") == "label" else ""
    c.message = f"{'Checked' if want else 'Unchecked'} {what}{via}."


async def scroll(c: ActionContext, direction: str, amount: int | None) -> None:
    page = c.page
    if c.target is None:
        sid, ctx = await page.context_for(page.main_frame_id)
        r = await page.cdp.send("Runtime.callFunctionOn", {
            "functionDeclaration": SCROLL, "executionContextId": ctx, "returnByValue": True,
            "arguments": [{"value": direction}, {"value": amount}, {"value": False}]}, session_id=sid)
        r = r.get("result", {}).get("value") or {}
    else:
        t = c.target
        r = await call_on(page, t.session_id, t.object_id, SCROLL, direction, amount, False)
        if r.get("isRoot") and not t.node.scroll:
            # Not a scroll container: "scroll to X" means bring X into view.
            r = await call_on(page, t.session_id, t.object_id, SCROLL, direction, amount, True)
            c.message = f"Scrolled {describe(t.node)} into view."
            c.data["scroll"] = r
            return
    c.data["scroll"] = r
    dx, dy = r.get("moved", [0, 0])
    if not dx and not dy:
        end = "bottom" if direction in ("down", "bottom") else "top" if direction in ("up", "top") else "edge"
        raise ActionFailure(f"{r.get('desc', 'the page').capitalize()} did not move: it is already at the {end}.",
                            code=ErrorCode.NO_EFFECT)
    c.message = f"Scrolled {r.get('desc')} {direction} by {abs(int(dy or dx))} px (now at {r.get('pct')}%" + \
        (", the end)." if r.get("atEnd") else ").")


async def navigate(c: ActionContext, url: str, timeout: float) -> None:
    await c.page.goto(url, timeout=timeout)
    c.message = f"Opened {c.page.url}."


async def back(c: ActionContext, timeout: float) -> None:
    if not await c.page.history(-1, timeout=timeout):
        raise ActionFailure("There is no previous page in this tab's history.", code=ErrorCode.NOT_ACTIONABLE)
    c.message = f"Went back to {c.page.url}."


async def wait(c: ActionContext, ms: int) -> None:
    await asyncio.sleep(max(0, ms) / 1000)
    c.message = f"Waited {ms} ms."
