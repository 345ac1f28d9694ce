"""A step's effect, computed in the page before its input goes out (`step_effect`; js/effect.js).

It runs on the live element behind the step's node ID (or, for a key pressed without a target, on the
focused element) and changes nothing in the page. The page can refuse or break the script: then the
effect is unknown (None), and the step is judged on its target alone, as before."""

from __future__ import annotations

import contextlib
import logging
import weakref
from pathlib import Path
from typing import Any

from engine.actions.locate import GROUP, call_on, release, resolve
from engine.browser.keys import pressed_key
from engine.browser.target import PageTarget
from engine.errors import VigilError
from engine.models import Action
from engine.models.effect import Receiver, StepEffect, Submission
from engine.snapshot.dom_snapshot import DomSnapshot

log = logging.getLogger("vigil.actions")
EFFECT = (Path(__file__).resolve().parent / "js" / "effect.js").read_text()
# the actions that put input into the page (what they do is computed); scroll, navigate and the rest are
# judged by what they name
EFFECT_ACTIONS = frozenset({"click", "double_click", "hover", "press", "type", "select", "check", "uncheck",
                            "upload"})


# The effect script runs in a world of its own (Page.createIsolatedWorld): the page shares the DOM with it but
# not its JavaScript, so a page that replaces a prototype's getter (a form's `action`, a label's `control`,
# `getComputedStyle`) cannot make it lie. (The page-side registry of node IDs is not there: the receiver's
# snapshot ID is looked up in the page's world after.)
WORLD = "vigil-effect"
_worlds: weakref.WeakKeyDictionary[PageTarget, dict[tuple[str, str], int]] = weakref.WeakKeyDictionary()


async def _world(page: PageTarget, sid: str, frame_id: str, fresh: bool = False) -> int:
    """The effect world's execution context in this frame (made once per document)."""
    known = _worlds.setdefault(page, {})
    if not fresh and (sid, frame_id) in known:
        return known[(sid, frame_id)]
    r = await page.cdp.send("Page.createIsolatedWorld", {"frameId": frame_id, "worldName": WORLD},
                            session_id=sid, timeout=5)
    ctx = int(r["executionContextId"])
    known[(sid, frame_id)] = ctx
    return ctx


async def _in_world(page: PageTarget, sid: str, oid: str, frame_id: str) -> str:
    """The same element as an object of the effect's world."""
    d = await page.cdp.send("DOM.describeNode", {"objectId": oid}, session_id=sid, timeout=5)
    backend = int(d["node"]["backendNodeId"])
    for fresh in (False, True):  # a context made for the frame's last document is gone after a navigation
        try:
            ctx = await _world(page, sid, frame_id, fresh)
            r = await page.cdp.send("DOM.resolveNode", {"backendNodeId": backend, "executionContextId": ctx,
                                                         "objectGroup": GROUP}, session_id=sid, timeout=5)
            return str(r["object"]["objectId"])
        except (VigilError, KeyError):
            if fresh:
                raise
    raise VigilError("the element could not be reached")


async def step_effect(page: PageTarget, snap: DomSnapshot, action: Action) -> StepEffect | None:
    """What `action` (its target a node ID of `snap`, or none for a key press) will do; None when it puts no
    input into the page or the page would not say."""
    if action.name not in EFFECT_ACTIONS:
        return None
    node_id = action.node_id
    if node_id is None and action.name != "press":
        return None
    key = pressed_key(action.key) if action.name == "press" else ""
    sid = None
    try:
        if node_id is not None:
            t = await resolve(page, snap, node_id)
            sid = t.session_id
            frame = t.node.frame_id or page.main_frame_id
            oid = await _in_world(page, sid, t.object_id, frame)
        else:
            sid, oid = await _document(page)
        raw = await call_on(page, sid, oid, EFFECT, page.key, action.name, key, _option(action),
                            bool(action.submit), timeout=5)
        rec = raw.get("receiver") if isinstance(raw, dict) else None
        if isinstance(rec, dict):  # the named element's own ID; another receiver is named by its words
            rec["ref"] = node_id if node_id is not None and not rec.get("via") else None
    except VigilError as exc:
        log.debug("effect not computed: %s", exc)
        return None
    finally:
        if sid is not None:
            with contextlib.suppress(VigilError):
                await release(page, sid)
    return effect_from(raw, action) if isinstance(raw, dict) else None


def _option(action: Action) -> str:
    """The option to select; for a typing that submits, the text (its form's query carries it, masked for a
    secret field by the script)."""
    if action.name == "type":
        return action.text or "" if action.submit else ""
    return action.option or ""


async def _document(page: PageTarget) -> tuple[str, str]:
    """The top document's object in the effect's world (a key pressed without a target goes to whatever it has
    focused)."""
    sid, _ = await page.context_for(page.main_frame_id)
    for fresh in (False, True):  # (a context made for the last document is gone after a navigation)
        try:
            ctx = await _world(page, sid, page.main_frame_id, fresh)
            r = await page.cdp.send("Runtime.evaluate", {"expression": "document", "contextId": ctx,
                                                         "objectGroup": GROUP}, session_id=sid, timeout=5)
            break
        except VigilError:
            if fresh:
                raise
    oid = (r.get("result") or {}).get("objectId")
    if not oid:
        raise VigilError("the page's document could not be reached")
    return sid, str(oid)


def effect_from(raw: dict[str, Any], action: Action) -> StepEffect:
    """The page's answer as a `StepEffect` (a typed value shown as what the field will hold, masked when the
    field is secret)."""
    rec = raw.get("receiver")
    sub = raw.get("submission")
    eff = StepEffect(kind=raw.get("kind") or "none",
                     receiver=Receiver(**{k: v for k, v in rec.items() if v is not None}) if rec else None,
                     words=str(raw.get("words") or ""), url=str(raw.get("url") or ""),
                     state=str(raw.get("state") or ""),
                     submission=Submission(**sub) if isinstance(sub, dict) else None,
                     notes=[str(n) for n in raw.get("notes") or []][:4])
    if action.name == "type":
        text = action.text or ""
        eff.state = "a hidden value" if raw.get("secret") else f"'{text[:40]}{'…' if len(text) > 40 else ''}'"
    return eff

