"""Issue [2/8]: every page of the effect corpus (tests/support/hostile_effects.py, problems e1–e7) really does its
damage when nothing stands in the way — else holding it proves nothing. The recording server is the truth: at least
one of the pattern's forbidden requests must arrive.

How each pattern is let through is its `unguarded`: True runs its script through the real loop under `auto` (never
asks, so no gate and no held submission stops it); "raw" sends the step's input straight over CDP, without Vigil's
action layer (the patterns whose protection is the input guard, which runs under every policy); False is not shown.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from support import hostile_corpus as hc
from support import hostile_loop
from support.hostile_corpus import PATTERNS, Pattern

pytestmark = pytest.mark.usefixtures("hostile_tab_closed")
EFFECT = [p.id for p in PATTERNS.values() if p.problem.startswith("e")]

# The element a raw step acts on, found in the page by the name the step gives (its aria-label, its label's words or
# its text): the same element the loop would ground the step on, on these small pages.
_FIND = """(function (name) {
  const norm = s => (s || '').replace(/\\s+/g, ' ').trim();
  for (const el of document.querySelectorAll('input, button, select, textarea, [role]')) {
    const label = el.labels && el.labels.length ? el.labels[0].textContent : '';
    if ([el.getAttribute('aria-label'), label, el.textContent].some(s => norm(s) === name)) return el;
  }
  return null;
})(%s)"""
_FOCUS = "(function () { const el = %s; if (!el) return false; el.focus(); return document.activeElement === el; })()"
_CENTRE = ("(function () { const el = %s; if (!el) return null; el.scrollIntoView({block: 'center'});"
           " const r = el.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()")


async def _through_loop(browser, p: Pattern, servers, work: Path) -> list:
    seen: list = []
    await hostile_loop.run_loop(browser, dataclasses.replace(p, policy="auto"), servers, work, seen, only_script=True)
    return seen


async def _evaluate(tab, expression: str):
    r = await tab.cdp.send("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                           session_id=tab.session_id)
    return r.get("result", {}).get("value")


async def _send(tab, method: str, params: dict) -> None:
    await tab.cdp.send(method, params, session_id=tab.session_id)


async def _raw(browser, p: Pattern, servers) -> list:
    """The pattern's one step as bare input events: the element focused or the pointer put on it, then its keys or
    presses, as a browser with no guard would send them."""
    (step,) = p.steps
    tab = hostile_loop.SHARED.get("tab")
    if tab is not None and tab in browser.tabs:
        await tab.goto(hc.page_url(p, servers))
    else:
        tab = hostile_loop.SHARED["tab"] = await browser.new_tab(hc.page_url(p, servers))
    log = servers["main"].log
    mark = log.mark()
    sent = hostile_loop.Unanswered(browser.context)
    try:
        await _raw_input(tab, step)
        await sent.settle(least=0.15)  # a request the input started reaches the server
    finally:
        sent.close()
    return log.since(mark)


async def _raw_input(tab, step: dict) -> None:
    """The step's keys into its focused field, or its presses at its element's centre."""
    element = _FIND % json.dumps(step["target"]["name"])
    if step["action"] == "type":
        assert await _evaluate(tab, _FOCUS % element), f"no field named {step['target']['name']!r} to focus"
        for ch in step["text"]:
            key = {"key": ch, "windowsVirtualKeyCode": ord(ch.upper()), "nativeVirtualKeyCode": ord(ch.upper())}
            await _send(tab, "Input.dispatchKeyEvent", {"type": "keyDown", "text": ch, **key})
            await _send(tab, "Input.dispatchKeyEvent", {"type": "keyUp", **key})
    elif step["action"] == "double_click":
        x, y = await _evaluate(tab, _CENTRE % element)
        await _send(tab, "Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})
        for n in (1, 2):
            for kind, buttons in (("mousePressed", 1), ("mouseReleased", 0)):
                await _send(tab, "Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left",
                                                              "buttons": buttons, "clickCount": n})
    else:
        raise AssertionError(f"no raw input for {step['action']}")


@pytest.mark.parametrize("pid", EFFECT)
def test_unguarded(pid, harness, servers, work):
    p = PATTERNS[pid]
    if p.unguarded is False:
        pytest.skip(f"{pid}: its damage cannot be shown unguarded ({p.note})")
    hostile_loop.SHARED["harness"] = harness
    raw = p.unguarded == "raw"
    run = _raw(harness.browser, p, servers) if raw else _through_loop(harness.browser, p, servers, work)
    hits = harness.run(run, timeout=100)
    how = "raw input" if raw else "the loop under auto"
    assert hc.forbidden_hits(p, hits, p.host), (
        f"{pid} (problem {p.problem}) does no damage unguarded ({how}): none of {p.forbidden} arrived; the server "
        f"saw {hc.describe_hits(hits) or 'nothing'}")
