"""A step's critical path (issue [5/7] item 3): text goes in as one insertion only where the page cannot
tell it from typing (no key listener of its own on the field, its ancestors, document or window; no mask,
length limit, list or combobox), else key by key; a step's after picture, begun as its input goes out, is
kept only if the page did not change after it, and reaches the step's record and the store, masked."""

from __future__ import annotations

import asyncio
import io

from PIL import Image

from engine.loop import AgentLoop, AutoApprove, ScriptedPlanner
from engine.store import Store
from engine.store.recorder import SessionRecorder
from engine.vision.mask import FILL

PAGE = "speed_keys.html"


def _id(snap, name: str) -> str:
    hits = [n.node_id for n in snap.node_map.values() if n.role == "textbox" and n.name == name]
    assert hits, f"no textbox {name!r}"
    return hits[0]


def test_typing_inserts_only_where_no_key_handler_would_see_it(server, harness):
    async def go(tab):
        snap = await tab.snapshot()
        out = {}
        for name, text in (("Plain", "Ada Lovelace"), ("Watched", "hello"), ("Inner", "abc"), ("Masked", "123456"),
                           ("Limited", "short"), ("Notes", "two words"), ("Shadow", "xyz")):
            r = await tab.type(_id(snap, name), text)
            assert r.success and r.verification is not None and r.verification.success, (name, r.message)
            out[name] = r.data["typing"]
        seen = await tab.page.evaluate("() => window.seen")
        values = await tab.page.evaluate("() => ['plain', 'watched', 'inner', 'masked', 'limited', 'notes']"
                                         ".map((i) => document.getElementById(i).value)")
        return out, seen, values

    typing, seen, values = harness.page(server.url(PAGE), go)
    # no key listener anywhere on its path: one insertion, which its input listener sees as one event
    assert typing["Plain"]["mode"] == "insertion" and typing["Notes"]["mode"] == "insertion", typing
    assert seen["plain"] == ["insertText:Ada Lovelace"] and seen["notes"] == ["insertText:two words"]
    # a keydown listener on the field, a keyup one on an ancestor, beforeinput on a shadow host: real keystrokes,
    # and the page's listeners see every key
    assert typing["Watched"] == {"mode": "keys", "why": "the page listens for keydown on the field"}
    assert seen["watched"] == list("hello")
    assert typing["Inner"]["mode"] == "keys" and "keyup on an ancestor" in typing["Inner"]["why"]
    assert seen["inner"] == list("abc")
    assert typing["Shadow"]["mode"] == "keys" and "beforeinput" in typing["Shadow"]["why"]
    assert seen["sh"] == list("xyz")
    # an input mask, a length limit: keystrokes, whatever the listeners
    assert typing["Masked"]["mode"] == "keys" and "mask" in typing["Masked"]["why"]
    assert typing["Limited"]["mode"] == "keys" and "maxlength" in typing["Limited"]["why"]
    assert values == ["Ada Lovelace", "hello", "abc", "123456", "short", "two words"]


def test_retyping_replaces_the_text_with_one_insertion(server, harness):
    async def go(tab):
        nid = _id(await tab.snapshot(), "Plain")
        first = await tab.type(nid, "first text")
        second = await tab.type(nid, "second")
        state = await tab.page.evaluate("() => [document.getElementById('plain').value, window.seen.plain]")
        return first, second, state

    first, second, (value, seen) = harness.page(server.url(PAGE), go)
    assert first.success and second.success and second.verification.success, second.message
    assert value == "second"
    # the old text selected, the insertion replaces it: no Delete key was needed
    assert seen == ["insertText:first text", "insertText:second"]


def test_a_snapshot_checked_right_after_a_settle_needs_no_frame_of_its_own(server, harness):
    """Before the snapshot cache trusts a page's versions it lets a frame pass (scroll events fire with the next
    frame). A settle that has just seen two painted frames is that frame: the next step's observation, right after
    it, reads the versions at once. Later, the check waits for a frame again."""
    frame_waits: list[str] = []

    async def go(tab):
        await tab.snapshot()
        cdp = tab.target.cdp
        send = cdp.send

        async def counting(method, params=None, *args, **kwargs):
            if method == "Runtime.evaluate" and "requestAnimationFrame" in (params or {}).get("expression", ""):
                frame_waits.append("check")
            return await send(method, params, *args, **kwargs)

        cdp.send = counting
        try:
            await tab.wait_stable(since=0.0)
            right_after = await tab.snapshot()
            after_settle = len(frame_waits)
            await asyncio.sleep(0.1)
            later = await tab.snapshot()
        finally:
            del cdp.send
        return right_after is later, after_settle, len(frame_waits) - after_settle

    same, after_settle, later = harness.page(server.url(PAGE), go)
    assert same, "nothing changed: the cached snapshot both times"
    assert after_settle == 0, "the settle's painted frames were waited for again"
    assert later == 1, "a check long after the settle lets a frame pass first"


def _fill_share(jpeg: bytes, box: tuple[int, int, int, int]) -> float:
    img = Image.open(io.BytesIO(jpeg)).convert("RGB").crop(box)
    px = [img.getpixel((x, y)) for y in range(img.height) for x in range(img.width)]
    return sum(1 for p in px if all(abs(a - b) <= 12 for a, b in zip(p, FILL, strict=True))) / len(px)


def _red_share(jpeg: bytes, box: tuple[int, int, int, int]) -> float:
    img = Image.open(io.BytesIO(jpeg)).convert("RGB").crop(box)
    px = [img.getpixel((x, y)) for y in range(img.height) for x in range(img.width)]
    return sum(1 for r, g, b in px if r > 200 and g < 60 and b < 60) / len(px)


def test_after_picture_is_attached_masked_and_shows_the_page_the_step_left(server, harness, tmp_path):
    store = Store.open(tmp_path / "s.db")
    secret = "Hunter2Secret"
    steps = [{"action": "type", "target": {"role": "textbox", "name": "Password"}, "text": secret},
             {"action": "click", "target": {"role": "button", "name": "Show later"}},
             {"action": "finish", "answer": "done"}]

    async def go(tab):
        rec = SessionRecorder(store)
        loop = AgentLoop(tab, ScriptedPlanner(steps), gate=AutoApprove(), policy="auto")
        rec.start(loop, "type", tab.url, planner="script", policy="auto")
        res = await loop.run("type")
        rec.finish(res)
        return rec.session_id, res

    sid, res = harness.page(server.url(PAGE), go, timeout=60)
    assert res.status == "success", res.reason
    data = store.load(sid)
    for i in range(2):
        assert {"screenshot_before", "screenshot_after"} <= set(data.blobs[i]), data.blobs[i]
        assert data.steps[i].screenshot_after == res.steps[i].screenshot_after and res.steps[i].screenshot_after
        assert data.steps[i].status == "completed"
    after = store.get_blob(data.blobs[0]["screenshot_after"])
    # the echoed password (big red letters at 400,20 CSS px; the JPEG is 1024 px wide for a 1280 px viewport)
    # is painted over, and no red letter is left
    box = (int(410 * 0.8), int(25 * 0.8), int(690 * 0.8), int(55 * 0.8))
    assert _fill_share(after, box) > 0.5 and _red_share(after, box) < 0.01
    # the click's change came 10 ms after the input: a picture begun as the input went out is not the after
    # picture (the page's DOM version changed after it); the one that is shows the change
    late = store.get_blob(data.blobs[1]["screenshot_after"])
    assert _red_share(late, (10, int(310 * 0.8), int(290 * 0.8), int(490 * 0.8))) > 0.7
