"""Sentinel verification (seed 000 §2.6.3): every action carries an expected outcome, checked
against the state captured before it ran — so a click that "worked" but only flashed an
"Invalid email" toast is reported as a failure, with the toast's text."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from engine.browser.target import PageTarget
from engine.errors import VigilError
from engine.models import ExpectedOutcome, PageEvent, PageState, VerificationResult
from engine.observe.changes import Change, scrub_secrets, what_changed, words
from engine.observe.stream import read_stream, summarize
from engine.snapshot.cache import SnapshotCache
from engine.snapshot.dom_snapshot import DomSnapshot
from engine.snapshot.vnode import VirtualNode

ERROR_ROLES = ("alert", "alertdialog")


@dataclass
class PreState:
    url: str
    nav_count: int
    mutations: int
    t_ms: float                    # epoch ms when the action began
    snapshot: DomSnapshot | None
    node_id: str | None = None
    facts: dict = field(default_factory=dict)  # probe facts of the target before the action
    scroll: tuple[float, float] = (0.0, 0.0)
    # the page just before the final step of an action (e.g. Enter after typing): mutations,
    # nav_count and the field's valueFp, so "submitted" judges the submission and not the typing
    mark: dict = field(default_factory=dict)

    # read of the snapshot once, not again on each look of a verification (each reads every node)
    @functools.cached_property
    def scrolled_boxes(self) -> dict[str, tuple]:
        return _scrolled_boxes(self.snapshot)

    @functools.cached_property
    def error_nodes(self) -> dict[str, str]:
        return _error_nodes(self.snapshot)


@dataclass
class PostState:
    url: str
    nav_count: int
    mutations: int
    snapshot: DomSnapshot | None
    events: list[PageEvent]
    facts: dict = field(default_factory=dict)
    scroll: tuple[float, float] = (0.0, 0.0)
    secrets: list[str] = field(default_factory=list)  # typed secrets in every form they reappear in
    changes: list[Change] = field(default_factory=list)  # what the step changed (set by evaluate)
    said: str = ""                                       # those changes in words, secrets masked


def _scrolled_boxes(snap: DomSnapshot | None) -> dict[str, tuple]:
    """Where each scroll container of the page stands (its depth and what is left below): a box scrolled by the
    step is a change, though the page around it stayed where it was."""
    if snap is None:
        return {}
    return {n.node_id: (n.scroll.get("depth_pct"), n.scroll.get("has_more"), n.scroll.get("scroll_height"))
            for n in snap.nodes() if n.scroll}


def default_expectation(action: str, node_id: str | None, *, submit: bool = False) -> ExpectedOutcome:
    """Sensible outcomes when the caller gives none."""
    if action in ("navigate", "back"):
        return ExpectedOutcome(type="navigation")
    if action == "type" and submit:
        # a todo box or chat box clears itself, a search box navigates: judge the submission
        return ExpectedOutcome(type="submitted", node_id=node_id)
    if action == "type":
        return ExpectedOutcome(type="value_changes", node_id=node_id)
    if action == "select":
        return ExpectedOutcome(type="value_changes", node_id=node_id)
    if action in ("check", "uncheck"):
        return ExpectedOutcome(type="state_changes", node_id=node_id, state="checked")
    if action in ("click", "double_click", "scroll"):
        return ExpectedOutcome(type="any_change")
    return ExpectedOutcome(type="no_change")  # hover, press, wait: only look for errors


def _visible_matches(snap: DomSnapshot | None, text: str | None, role: str | None) -> dict[str, VirtualNode]:
    if snap is None:
        return {}
    needle = " ".join(text.casefold().split()) if text else None
    out = {}
    for n in snap.nodes():
        if not n.rendered or n.visible_ratio <= 0:
            continue
        if role and n.role != role:
            continue
        if needle is not None:
            hay = f"{n.name or ''} {n.text or ''}".casefold()
            if needle not in " ".join(hay.split()):
                continue
        elif not role:
            continue
        out[n.node_id] = n
    return out


def _error_nodes(snap: DomSnapshot | None) -> dict[str, str]:
    """Visible alerts and fields marked invalid: key → message."""
    if snap is None:
        return {}
    out = {}
    for n in snap.nodes():
        if not n.rendered:
            continue
        if n.role in ERROR_ROLES:
            msg = (n.name or n.text or "").strip() or _subtree_text(n)
            if msg:
                out[f"alert:{msg}"] = msg
        elif n.states and n.states.get("invalid") and n.interactive:
            out[f"invalid:{n.node_id}"] = f"{n.name or n.role} is marked invalid"
    return out


def _subtree_text(n: VirtualNode, limit: int = 160) -> str:
    parts: list[str] = []
    for d in n.iter():
        if d.text:
            parts.append(d.text)
        if sum(map(len, parts)) > limit:
            break
    return " ".join(parts)[:limit]


def _node_facts(snap: DomSnapshot | None, node_id: str | None) -> VirtualNode | None:
    if snap is None or node_id is None or node_id not in snap:
        return None
    return snap.get(node_id)


def _check(exp: ExpectedOutcome, pre: PreState, post: PostState, target: str | None) -> tuple[bool, str, float]:
    """(met, what actually happened, confidence)."""
    t = exp.type
    url_changed = post.url != pre.url
    navigated = post.nav_count > pre.nav_count or url_changed
    if t == "navigation":
        if not navigated:
            return False, f"the page did not navigate (still {post.url})", 0.9
        if exp.url_contains and exp.url_contains not in post.url:
            return False, f"navigated to {post.url}, which does not contain {exp.url_contains!r}", 0.9
        return True, (f"navigated to {post.url}" if url_changed else f"reloaded {post.url}"), 0.95
    if t in ("element_appears", "element_disappears"):
        node_id = exp.node_id if t == "element_disappears" else None
        if node_id:
            before = _node_facts(pre.snapshot, node_id)
            after = _node_facts(post.snapshot, node_id)
            gone = after is None or not after.rendered
            label = f'{before.role} "{before.name}"' if before is not None and before.name else f"element {node_id}"
            return (gone, f"{label} is gone" if gone else f"{label} is still there", 0.9)
        what = exp.describe().split(" ", 2)[-1] if (exp.text or exp.role) else "an element"
        pre_m = _visible_matches(pre.snapshot, exp.text, exp.role)
        post_m = _visible_matches(post.snapshot, exp.text, exp.role)
        if t == "element_disappears":
            if pre_m and not post_m:
                return True, f"{what} disappeared", 0.85
            return False, (f"{what} is still visible" if post_m else f"{what} was not visible before the action"), 0.8
        new = [n for k, n in post_m.items() if k not in pre_m]
        if new:
            n = new[0]
            return True, f'{n.role or n.tag} "{(n.name or n.text)[:80]}" appeared', 0.9
        needle = (exp.text or "").casefold()
        if needle:
            for e in post.events:
                if e.kind in ("added", "shown", "text") and needle in e.text.casefold():
                    return True, f"\"{e.text[:80]}\" appeared briefly ({e.category} message)", 0.8
        if post_m:
            return False, f"{what} was already visible before the action and nothing new appeared", 0.7
        return False, f"{what} did not appear", 0.85
    node_id = exp.node_id or target
    if t == "value_changes":
        b, a = pre.facts.get("valueFp"), post.facts.get("valueFp")
        secret = post.facts.get("secret")
        shown = "(value hidden)" if secret else f'"{(post.facts.get("value") or "")[:80]}"'
        if not post.facts:
            return False, f"element {node_id} could not be read after the action", 0.6
        if exp.value is not None and not secret and (post.facts.get("value") or "") != exp.value:
            return False, f'the value is {shown}, not "{exp.value}"', 0.9
        if a == b and exp.value is None:
            return False, f"the value did not change (still {shown})", 0.9
        return True, f"the value is now {shown}", 0.95
    if t == "state_changes":
        key = exp.state or "checked"
        b = _state(pre, node_id, key)
        a = _state(post, node_id, key)
        if a == b:
            return False, f"{key} stayed {a}", 0.9
        return True, f"{key}: {b} → {a}", 0.95
    if t == "submitted":
        return _submitted(pre, post, navigated)
    if t == "any_change":
        changed = navigated or post.mutations > pre.mutations or bool(post.events) or bool(post.changes)
        # (the scroll containers are looked at only when nothing else says the page changed: every node is read)
        scrolled = post.scroll != pre.scroll or (
            not changed and pre.scrolled_boxes != _scrolled_boxes(post.snapshot))
        changed = changed or scrolled
        if not changed:
            return False, "nothing on the page changed", 0.7
        bits = [f"navigated to {post.url}" if url_changed else "navigated"] if navigated else []
        if post.said:
            bits.append(post.said)
        elif post.mutations > pre.mutations:
            bits.append("the DOM changed, but no text a person reads changed")
        if scrolled:
            bits.append("scrolled")
        return True, ", ".join(bits) or "the page reacted", 0.6 if not post.said else 0.7
    return True, "no change was required", 0.5  # no_change


def _submitted(pre: PreState, post: PostState, navigated: bool) -> tuple[bool, str, float]:
    """Did pressing Enter do anything? Judged from the moment before Enter (`pre.mark`)."""
    mark = pre.mark or {}
    if navigated or post.nav_count > mark.get("nav_count", pre.nav_count):
        return True, (f"navigated to {post.url}" if post.url != pre.url else f"reloaded {post.url}"), 0.95
    bits = []
    f = post.facts
    if not f or f.get("connected") is False:
        bits.append("the field left the page")
    elif "valueFp" in mark and f.get("valueFp") != mark["valueFp"]:
        if f.get("secret"):
            bits.append("the field was consumed (value hidden)")
        elif not f.get("value"):
            bits.append("the field was cleared")
        else:
            bits.append(f'the field now holds "{(f.get("value") or "")[:80]}"')
    dom = post.mutations > mark.get("mutations", pre.mutations)
    if dom and not post.said:  # (else the words of what changed follow)
        bits.append("the DOM changed")
    if bits or dom:
        return True, ", ".join(bits) or "the page changed", 0.8
    return False, ("nothing happened after Enter: no navigation, no change on the page, and the field still holds "
                   "the text"), 0.85


def _state(s: PreState | PostState, node_id: str | None, key: str):
    if key == "checked" and s.facts.get("checked") is not None:
        return s.facts["checked"]
    n = _node_facts(s.snapshot, node_id)
    return (n.states or {}).get(key, False) if n is not None else None


def _quote(texts: list[str], n: int = 2) -> str:
    return "; ".join("'" + (t if len(t) <= 160 else t[:159] + "…") + "'" for t in texts[:n])


def http_error(pre: PreState, post: PostState) -> str:
    """"HTTP 404 Not Found" when the step brought a new document (another address, or a reload) whose server
    answered an HTTP error; else ""."""
    snap = post.snapshot
    if snap is None or not snap.context.http_error:
        return ""
    new_doc = urlsplit(post.url)[:4] != urlsplit(pre.url)[:4] or post.nav_count > pre.nav_count
    return snap.context.http_error if new_doc else ""


def evaluate(exp: ExpectedOutcome, pre: PreState, post: PostState, target: str | None) -> VerificationResult:
    # the target's own value or state is left to the check when the step expects it (no word twice); after a key
    # press or a click that expects no such thing (an arrow key on a slider) the words tell it
    told = {exp.type, exp.or_.type if exp.or_ is not None else None} & {"value_changes", "state_changes"}
    post.changes = what_changed(pre.snapshot, post.snapshot, post.events, (pre.node_id or target) if told else None)
    post.said = scrub_secrets(words(post.changes), post.secrets)
    met, actual, conf = _check(exp, pre, post, target)
    verified = exp.type if met else None
    if not met and exp.or_ is not None:
        met2, actual2, conf2 = _check(exp.or_, pre, post, target)
        if met2:
            met, actual, conf, verified = True, actual2, conf2, exp.or_.type
        else:
            actual = f"{actual}; and {actual2}"
    http = http_error(pre, post)
    if http:  # the page the step led to is the server's error page: said with the outcome, and an error seen
        actual = f"{actual}, which answered {http}" if met else f"{actual}; the page answered {http}"
    errors = _stream_errors(pre, post)
    if http:
        errors.insert(0, http)
    new_err = {k: v for k, v in _error_nodes(post.snapshot).items() if k not in pre.error_nodes}
    for v in new_err.values():
        if not any(v in e or e in v for e in errors):
            errors.append(v)
    for c in post.changes:  # error messages that appeared in the viewport because of the step
        if c.error and c.raw and not any(c.raw in e or e.rstrip("…") in c.raw for e in errors):
            errors.append(c.raw)
    errors = [scrub_secrets(e, post.secrets) for e in errors]
    successes = [scrub_secrets(e.text, post.secrets) for e in post.events if e.category == "success"]
    success = met
    spoilt = met and bool(errors) and verified in ("any_change", "no_change", "submitted")
    if spoilt:
        # the page reacted, with an error message: the step did not do what was meant
        success, conf = False, 0.8
        actual = f"{actual}, but an error showed"
    said = post.said
    page = f" Page: {said}." if said and said not in actual else ""
    if success:
        feedback = f"Verified: {actual}.{page}"
        if errors:
            unsaid = [e for e in errors if e[:60] not in feedback]
            if unsaid:
                feedback += " Errors were also seen: " + _quote(unsaid) + "."
            conf = round(conf * 0.8, 2)
    elif spoilt:
        rest = scrub_secrets(words([c for c in post.changes if not c.error]), post.secrets)
        feedback = "An error showed after the step: " + _quote(errors) + "."
        if rest:
            feedback += f" Page: {rest}."
    else:
        feedback = f"Expected {exp.describe()}, but {actual}."
        if errors:
            feedback += " Error: " + _quote(errors) + "."
        if said and said not in feedback:
            feedback += f" Page: {said}."
    if successes and not success:
        feedback += " Success messages: " + "; ".join(f"'{s}'" for s in successes[:3]) + "."
    state = PageState(url=post.url, url_changed=post.url != pre.url, dom_changed=post.mutations > pre.mutations,
                      recent_mutations=[scrub_secrets(m, post.secrets) for m in summarize(post.events)])
    actual = scrub_secrets(actual, post.secrets)
    return VerificationResult(success=success, verified_outcome=verified, expected=exp, actual_outcome=actual,
                              errors_detected=errors, success_messages=successes, page_state=state,
                              confidence=max(0.0, min(1.0, conf)), feedback=scrub_secrets(feedback, post.secrets),
                              page_changes=[scrub_secrets(c.say(), post.secrets) for c in post.changes[:12]])


PostFacts = Callable[[], Awaitable[dict]]

# Told by the loop and the action layer (within `ends_when`, nested: any of them ends the wait): whether the browser
# held and refused what the step's action set off (a script leaving the site, a download: the step fails BLOCKED
# whatever the page shows next), and whether the step did something besides the page (a new tab or popup, a download
# began, a dialog was raised: that is the change an any-change step made). Either way the outcome is not waited for
# any longer.
_Hook = Callable[[], bool]
_ENDS: contextvars.ContextVar[tuple[tuple[_Hook, _Hook], ...]] = contextvars.ContextVar("vigil_verification_ends",
                                                                                         default=())


def _never() -> bool:
    return False


@contextlib.contextmanager
def ends_when(refused: _Hook = _never, besides: _Hook = _never) -> Iterator[None]:
    """Within this block a verification still waiting for its outcome ends as soon as `refused()` is true, and an
    any-change one as soon as `besides()` is (besides those of the blocks around it)."""
    token = _ENDS.set((*_ENDS.get(), (refused, besides)))
    try:
        yield
    finally:
        _ENDS.reset(token)


def _ended(exp: ExpectedOutcome, res: VerificationResult) -> VerificationResult | None:
    """The verification as it ends early (see `ends_when`), or None while it goes on waiting."""
    hooks = _ENDS.get()
    if any(refused() for refused, _ in hooks):
        return res.model_copy(update={"feedback": f"{res.feedback} Not waited for any longer: the browser refused "
                                                  "what the step set off."})
    return res if exp.type == "any_change" and any(besides() for _, besides in hooks) else None


def _stream_errors(pre: PreState, post: PostState) -> list[str]:
    """The error messages the change stream saw since the action. On another page (not just another #fragment),
    what the stream saw is that page's content arriving — a search result mentioning "error" is no error message:
    only fields marked invalid count there."""
    moved = urlsplit(post.url)[:4] != urlsplit(pre.url)[:4]
    return [e.text for e in post.events if e.category == "error" and (not moved or e.kind == "invalid")]


def _spoilt(res: VerificationResult, pre: PreState, post: PostState, page: PageTarget) -> bool:
    """The outcome was met but an error the change stream saw showed with it, and no other document is loading. The
    stream keeps what it saw (a flash of an error is a failure even once gone), so only another page could change
    the verdict: seen twice in a row on the same address, it is final. (An error seen only in the page as it is now
    may still go: that is waited for as before.)"""
    return (res.verified_outcome is not None and not res.success and not getattr(page, "loading", False)
            and bool(_stream_errors(pre, post)))


async def verify(page: PageTarget, snapshots: SnapshotCache, exp: ExpectedOutcome, pre: PreState, target: str | None,
                 post_facts: PostFacts | None = None, started: float | None = None) -> VerificationResult:
    """Check `exp` now; while it is not met, look again every 200 ms until its timeout from `started`.
    A step that led to a page the server answered with an HTTP error is not looked at again, nor one whose doings
    the browser refused, nor an any-change one that opened a tab, downloaded or raised a dialog (`ends_when`: the
    change happened elsewhere, and the step's incidents say what it was), nor one spoilt by an error on two looks
    in a row."""
    started = time.monotonic() if started is None else started
    spoilt_at: str | None = None  # the address of the last look, when it found the step spoilt
    while True:
        post = await observe_post(page, snapshots, pre, post_facts)
        res = evaluate(exp, pre, post, target)
        if res.success or (time.monotonic() - started) * 1000 >= exp.timeout_ms:
            return res
        if http_error(pre, post):  # the server's error page: waiting does not turn it into the page meant
            return res
        spoilt = _spoilt(res, pre, post, page)
        if spoilt and spoilt_at == post.url:
            return res
        spoilt_at = post.url if spoilt else None
        early = _ended(exp, res)
        if early is not None:
            return early
        await asyncio.sleep(0.2)


async def check(page: PageTarget, snapshots: SnapshotCache, exp: ExpectedOutcome, pre: PreState, target: str | None,
                post_facts: PostFacts | None = None) -> VerificationResult:
    """Check `exp` once, on the page as it is now."""
    return evaluate(exp, pre, await observe_post(page, snapshots, pre, post_facts), target)


# The main document's address and the HTTP status it was answered with (0: not over HTTP, or not known).
_STATUS = ("function() { const e = performance.getEntriesByType('navigation')[0];"
           " return [location.href, /^https?:/.test(location.href) && e && e.responseStatus || 0]; }")


async def _learn_status(page: PageTarget) -> bool:
    """After a navigation: the new document's HTTP status, from the document itself, into the tab's network monitor
    (Playwright's response event comes over another connection and may not be in yet); whether it was learnt."""
    network = getattr(page, "network", None)
    if network is None or not hasattr(network, "note_document"):
        return False
    try:
        sid, ctx = await page.context_for(page.main_frame_id, timeout=1.0)
        r = await page.cdp.send("Runtime.callFunctionOn", {"functionDeclaration": _STATUS, "executionContextId": ctx,
                                                           "returnByValue": True}, session_id=sid, timeout=1.0)
    except (VigilError, TimeoutError):
        return False
    v = r.get("result", {}).get("value")
    if not isinstance(v, list) or len(v) != 2 or not v[1]:
        return False
    network.note_document(str(v[0]), int(v[1]))
    return True


async def observe_post(page: PageTarget, snapshots: SnapshotCache, pre: PreState,
                       post_facts: PostFacts | None = None) -> PostState:
    # the stream first, then the page: what the counters saw is in the snapshot (a change that lands
    # between the two reads is read again, so the words and the counters tell of the same page)
    reading = await read_stream(page, pre.t_ms)
    learnt = page.nav_count > pre.nav_count and await _learn_status(page)
    snap = await snapshots.snapshot()
    if learnt and snap.context.http_status is None and page.network.status_of(snap.url) is not None:
        page.invalidate()  # a picture of the new document taken before its status was known: take it again
        snap = await snapshots.snapshot()
    again = await read_stream(page, pre.t_ms)
    if again.mutations != reading.mutations:
        snap = await snapshots.snapshot()
    reading = again
    facts = {}
    if post_facts is not None:
        facts = await post_facts() or {}
    return PostState(url=snap.url, nav_count=page.nav_count, mutations=reading.mutations, snapshot=snap,
                     events=reading.events(), facts=facts, scroll=(snap.context.scroll_x, snap.context.scroll_y),
                     secrets=page.secrets.forms() if page.secrets else [])
