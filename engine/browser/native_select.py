"""A native `<select>` chosen the way a person's own list would choose it, for a window that draws the list
itself (Chromium draws an open select's list in a popup of its own, which the screencast does not paint).

`find_select` finds the closed single-choice select at a point of the viewport (through open shadow roots) or
the focused one, focuses it and reads its options; `choose` selects one (the select's `input` and `change` fire
only when it changed) and counts as the person's input in the page; `release` lets go of the page objects held
while a list is open."""

from __future__ import annotations

import dataclasses
import logging
import time

from engine.browser.target import PageTarget

log = logging.getLogger("vigil.browser.native_select")

GROUP = "vigil-select"  # the page objects held while a list is open

# the closed single-choice select at a point (through open shadow roots), or the focused one; null otherwise
_SELECT = "(e) => e && e.localName === 'select' && !e.multiple && e.size <= 1 && !e.disabled ? e : null"
AT_POINT_JS = """(() => {{ let d = document, e = null;
  for (let i = 0; i < 8; i++) {{ const h = d.elementFromPoint({x}, {y}); if (!h || h === e) break; e = h;
    if (!h.shadowRoot) break; d = h.shadowRoot; }}
  return ({sel})(e); }})()"""
FOCUSED_JS = f"""(() => {{ let e = document.activeElement;
  while (e && e.shadowRoot && e.shadowRoot.activeElement) e = e.shadowRoot.activeElement;
  return ({_SELECT})(e); }})()"""
READ_JS = """function() { this.focus(); const r = this.getBoundingClientRect();
  const opts = Array.from(this.options).map((o) => { const g = o.parentElement.localName === 'optgroup' ?
    o.parentElement : null; return [o.label || o.text, o.disabled || !!(g && g.disabled), g ? g.label : null,
    o.hidden]; });
  return {rect: [r.x, r.y, r.width, r.height], options: opts, index: this.selectedIndex,
    font: parseFloat(getComputedStyle(this).fontSize) || 13}; }"""
CHOOSE_JS = """function(i) { if (this.selectedIndex === i) return false; this.selectedIndex = i;
  this.dispatchEvent(new Event('input', {bubbles: true, composed: true}));
  this.dispatchEvent(new Event('change', {bubbles: true})); return true; }"""


@dataclasses.dataclass
class SelectInfo:
    """An open select: the page object, its box (CSS px of the viewport) and its options."""

    object_id: str
    rect: tuple[float, float, float, float]
    options: list[tuple[str, bool, str | None, bool]]  # (label, disabled, optgroup label, hidden)
    index: int
    font_px: float = 13.0  # the select's font size (CSS px): the list is drawn at the page's size


async def _send(target: PageTarget, method: str, params: dict) -> dict:
    return await target.cdp.send(method, params, session_id=target.session_id, timeout=3)


async def find_select(target: PageTarget, point: tuple[float, float] | None) -> SelectInfo | None:
    """The closed single-choice select at page `point` (CSS px), or the focused one (`point` None), focused
    and read; None where there is none (or the page does not answer)."""
    expr = AT_POINT_JS.format(x=point[0], y=point[1], sel=_SELECT) if point is not None else FOCUSED_JS
    r = await _send(target, "Runtime.evaluate", {"expression": expr, "objectGroup": GROUP})
    oid = (r.get("result") or {}).get("objectId")
    if not oid or "exceptionDetails" in r:
        return None
    got = await _send(target, "Runtime.callFunctionOn", {"functionDeclaration": READ_JS, "objectId": oid,
                                                         "returnByValue": True})
    v = (got.get("result") or {}).get("value")
    if not v:
        return None
    return SelectInfo(oid, tuple(v["rect"]), [tuple(o) for o in v["options"]], int(v["index"]),
                      float(v.get("font") or 13.0))


async def choose(target: PageTarget, info: SelectInfo, index: int) -> bool:
    """Select option `index` in the page (its input and change events fire when it changed)."""
    r = await _send(target, "Runtime.callFunctionOn", {"functionDeclaration": CHOOSE_JS, "objectId": info.object_id,
                                                       "arguments": [{"value": index}], "returnByValue": True})
    target.person_input_at = time.monotonic()  # the person acted in the page
    return bool((r.get("result") or {}).get("value"))


async def release(target: PageTarget) -> None:
    try:
        await _send(target, "Runtime.releaseObjectGroup", {"objectGroup": GROUP})
    except Exception as exc:  # a page gone meanwhile holds nothing
        log.debug("select objects not released: %s", exc)
