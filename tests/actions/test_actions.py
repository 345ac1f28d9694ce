"""Actions on node IDs against real pages: real input, refusals with reasons, self-healing."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket

from engine.models import ActionResult


def _id(snap, role=None, name=None, **kw) -> str:
    hits = snap.find(role, name, **kw)
    assert hits, f"fixture lacks {role} {name!r}"
    return hits[0].node_id


async def _text(tab, selector: str) -> str:
    return (await tab.page.text_content(selector)) or ""


def test_click_double_click_hover_and_refusals(server, harness):
    async def go(tab):
        snap = await tab.snapshot()
        gen = tab.generation
        r = await tab.click(_id(snap, "button", "Add one"))
        assert r.success and r.error_code is None, r.message
        assert r.point and r.verification and r.verification.success, r.message
        assert await _text(tab, "#count") == "1"
        assert tab.generation > gen  # every action invalidates the snapshot
        r = await tab.double_click(_id(snap, "button", "Double me"))
        assert r.success and await _text(tab, "#dbl-out") == "double"
        r = await tab.hover(snap.find(text="Hover here")[0].node_id)
        assert r.success and await _text(tab, "#hov-out") == "hovered"
        gen = tab.generation
        r = await tab.click(_id(snap, "button", "Disabled action"))
        assert not r.success and r.error_code == "DISABLED" and "disabled" in r.message
        assert tab.generation > gen  # failures invalidate too
        hidden = [n for n in snap.nodes() if n.name == "Hidden action"]
        assert hidden, "the walker keeps display:none buttons in the complete tree"
        r = await tab.click(hidden[0].node_id)
        assert not r.success and r.error_code == "NOT_ACTIONABLE" and "not visible" in r.message
    harness.page(server.url("actions.html"), go)


def test_type_clear_append_limits_and_secrets(server, harness):
    async def go(tab):
        snap = await tab.snapshot()
        name = _id(snap, "textbox", "Name")
        r = await tab.type(name, "Ada Lovelace")
        assert r.success and r.verification.success, r.message
        assert await tab.page.input_value("#name") == "Ada Lovelace"
        r = await tab.type(name, "!", clear=False)
        assert r.success and await tab.page.input_value("#name") == "Ada Lovelace!"
        r = await tab.type(_id(snap, "textbox", "Short"), "abcdef")
        assert not r.success and r.error_code == "VALUE_MISMATCH" and "at most 3" in r.message, r.message
        r = await tab.type(_id(snap, "textbox", "Notes"), "line one\nline two")
        assert r.success and await tab.page.input_value("#notes") == "line one\nline two"
        r = await tab.type(_id(snap, "textbox", "Editor"), "rich text")
        assert r.success and (await _text(tab, "#ed")).strip() == "rich text", r.message
        r = await tab.type(_id(snap, "textbox", "Pass"), "hunter2secret")
        assert r.success and r.verification.success, r.message
        assert await tab.page.input_value("#pw") == "hunter2secret"
        dumped = r.model_dump_json()
        assert "hunter2" not in dumped and "hidden" in r.message
        events = await tab.recent_events()
        assert all("hunter2" not in e.text for e in events)
        r = await tab.type(_id(snap, "button", "Add one"), "x")
        assert not r.success and r.error_code == "NOT_ACTIONABLE" and "not a text field" in r.message
    harness.page(server.url("actions.html"), go)


def test_press_keys_and_chords(server, harness):
    async def go(tab):
        snap = await tab.snapshot()
        name = _id(snap, "textbox", "Name")
        r = await tab.press("Control+A", name)
        assert r.success, r.message
        assert "[Ctrl+a]" in await _text(tab, "#keys")
        r = await tab.type(name, "replaced", clear=False)  # typing over the Control+A selection
        assert await tab.page.input_value("#name") == "replaced", r.message
        r = await tab.press("Escape")
        assert r.success and "[Escape]" in await _text(tab, "#keys")
        r = await tab.press("Hyper+Q")
        assert not r.success and r.error_code == "BAD_ARGUMENT" and "modifier" in r.message
    harness.page(server.url("actions.html"), go)


def test_select_check_and_listbox(server, harness):
    async def go(tab):
        snap = await tab.snapshot()
        fruit = _id(snap, "combobox", "Fruit")
        r = await tab.select(fruit, "banana")
        assert r.success and r.verification.success and await tab.page.input_value("#fruit") == "ba", r.message
        r = await tab.select(fruit, "ap")
        assert r.success and await tab.page.input_value("#fruit") == "ap"
        r = await tab.select(fruit, "Cherry")
        assert not r.success and r.error_code == "DISABLED"
        r = await tab.select(fruit, "Mango")
        assert not r.success and r.error_code == "NOT_FOUND" and "Banana" in r.message
        terms = _id(snap, "checkbox", "I accept the terms")
        r = await tab.check(terms)
        assert r.success and r.verification.success, r.message
        assert "through its label" in r.message and await tab.page.is_checked("#terms")
        news = _id(snap, "checkbox", "Newsletter")
        r = await tab.check(news)
        assert r.success and r.data.get("noop") and "already checked" in r.message
        r = await tab.uncheck(news)
        assert r.success and not await tab.page.is_checked("#news")
        r = await tab.select(_id(snap, "listbox", "Size"), "Large")
        assert r.success, r.message
        assert await _text(tab, "#size-out") == "Large"
    harness.page(server.url("actions.html"), go)


def test_scroll_page_container_and_into_view(server, harness):
    async def go(tab):
        snap = await tab.snapshot()
        r = await tab.scroll(direction="up")
        assert not r.success and r.error_code == "NO_EFFECT" and "top" in r.message
        r = await tab.scroll(direction="down")
        assert r.success and r.data["scroll"]["moved"][1] > 300
        assert await tab.page.evaluate("scrollY") > 300
        box = _id(snap, None, "Log box")
        r = await tab.scroll(box, "down", 50)
        assert r.success and await tab.page.evaluate("document.getElementById('box').scrollTop") == 50, r.message
        # the box scrolled is the change (the page around it stayed): verified at once, not "nothing changed"
        assert r.verification.success and r.verification.actual_outcome == "scrolled", r.message
        assert r.timings_ms["verify"] < 1500, r.timings_ms
        assert await tab.page.evaluate("scrollY") > 300  # the page stayed where it was
        r = await tab.scroll(_id(snap, "heading", "Terms"))
        assert r.success and "into view" in r.message
        top = await tab.page.evaluate("document.getElementById('terms-h').getBoundingClientRect().top")
        assert 0 <= top <= 800
    harness.page(server.url("actions.html"), go)


def test_occluded_click_is_refused_naming_the_cover(server, harness):
    async def go(tab):
        snap = await tab.snapshot()
        under = _id(snap, "button", "Covered button")
        r = await tab.click(under)
        assert not r.success and r.error_code == "OCCLUDED", r.message
        accept = _id(snap, "button", "Accept cookies")
        assert "div#banner" in r.message and f'{accept} "Accept cookies"' in r.message, r.message
        r = await tab.click(under, force=True, expect={"type": "any_change", "timeout_ms": 500})  # (changes nothing)
        assert r.success and "force" in r.message
    harness.page(server.url("overlay.html"), go)

    async def far(tab):
        # below the fold and under the fixed banner's band until scrolled: scrolled into view, then clicked
        snap = await tab.snapshot()
        r = await tab.click(_id(snap, "button", "Far button"))
        assert r.success, r.message
        assert await _text(tab, "#far-out") == "far clicked"
    harness.page(server.url("actions.html"), far)


def test_shadow_roots_and_frames(server, harness):
    async def go(tab):
        snap = await tab.snapshot()
        assert (await tab.click(_id(snap, "button", "Open shadow button"))).success
        r = await tab.type(_id(snap, "textbox", "Closed field"), "secret sauce")
        assert r.success, r.message
        r = await tab.click(_id(snap, "button", "Closed shadow button"))
        assert r.success, r.message
        snap = await tab.snapshot()
        assert snap.find(text="open clicked") and snap.find(text="closed clicked:secret sauce")
    harness.page(server.url("actions.html"), go)

    async def frames(tab):
        await tab.wait_stable()
        snap = await tab.snapshot()
        buttons = snap.find("button", "Frame button")
        fields = snap.find("textbox", "Frame field")
        assert len(buttons) == 2 and len(fields) == 2
        assert buttons[0].frame_id != buttons[1].frame_id
        for i, (b, f) in enumerate(zip(buttons, fields, strict=True)):
            r = await tab.type(f.node_id, f"hello {i}")
            assert r.success, r.message
            r = await tab.click(b.node_id)
            assert r.success and r.verification.success, r.message
        snap = await tab.snapshot()
        assert snap.find(text="clicked hello 0") and snap.find(text="clicked hello 1"), "both frames got real input"
    harness.page(server.url("act_frames.html"), frames)


def test_ghost_match_recovers_a_rerendered_element(server, harness):
    async def go(tab):
        snap = await tab.snapshot()
        old = _id(snap, "button", "Save")
        await tab.page.evaluate("rename('Save changes')")  # new element, new name: the walker cannot keep the ID
        r = await tab.click(old)
        assert r.success, r.message
        assert r.recovered_from == old and r.node_id != old
        assert f"recovered {old} → {r.node_id}" in r.message
        assert await _text(tab, "#out") == "clicked Save changes"
        snap = await tab.snapshot()
        current = _id(snap, "button", "Save changes")
        await tab.page.evaluate("replaceWithLink('Delete everything')")  # other role, other name, far away
        r = await tab.click(current)
        assert not r.success and r.error_code == "STALE"
        assert 'button "Save changes"' in r.message and "gone" in r.message, r.message
        assert await _text(tab, "#out") == "clicked Save changes"  # nothing else was clicked
    harness.page(server.url("heal.html"), go)


def test_sub_second_toast_is_caught(server, harness):
    # the toast shows for 150 ms: gone before the verification's last look, so only the change stream can catch it
    async def go(tab):
        snap = await tab.snapshot()
        r = await tab.click(_id(snap, "button", "Flash error"))
        assert r.success
        v = r.verification
        assert not v.success, "a click whose only effect is an error toast is not a success"
        assert "Payment failed: card declined" in v.errors_detected
        assert any("Payment failed" in m for m in v.page_state.recent_mutations)
        snap = await tab.snapshot()
        assert not snap.find(text="Payment failed"), "the toast is gone from the page itself"
        events = await tab.recent_events()
        added = [e for e in events if "Payment failed" in e.text and e.kind == "added"]
        assert added and added[0].category == "error"
        assert any(e.kind == "removed" and "Payment failed" in e.text for e in events)
    harness.page(server.url("actions.html"), go)


def test_navigation_outcomes_back_and_failures(server, harness):
    async def go(tab):
        snap = await tab.snapshot()
        # (a short window: this click never navigates, and 3 s of waiting for it would say nothing more)
        r = await tab.click(_id(snap, "button", "Add one"), expect={"type": "navigation", "timeout_ms": 500})
        assert r.success and not r.verification.success
        assert "did not navigate" in r.verification.feedback
        r = await tab.click(_id(snap, "link", "Next page"),
                            expect={"type": "navigation", "or": {"type": "element_appears", "text": "Thank you"}})
        v = r.verification
        assert r.success and v.success and v.verified_outcome == "navigation", r.message
        assert v.page_state.url_changed and v.page_state.url.endswith("actions_next.html")
        r = await tab.back()
        assert r.success and r.verification.success and tab.page.url.endswith("actions.html")
        r = await tab.navigate(server.url("actions_next.html"),
                               expect={"type": "element_appears", "text": "Thank you", "role": "heading"})
        assert r.success and r.verification.success and "appeared" in r.verification.actual_outcome
        with socket.socket() as sock:  # a port nobody listens on
            sock.bind(("127.0.0.1", 0))
            closed_port = sock.getsockname()[1]
        r = await tab.navigate(f"http://127.0.0.1:{closed_port}/")
        assert not r.success and r.error_code == "NAVIGATION_FAILED" and "ERR_CONNECTION_REFUSED" in r.message
        r = await tab.wait(50)
        assert r.success and r.verification.success
    harness.page(server.url("actions.html"), go)


def test_bad_input_gives_clear_results(server, harness):
    async def go(tab):
        snap = await tab.snapshot()
        r = await tab.click("99999")
        assert not r.success and r.error_code == "NOT_FOUND" and "99999" in r.message
        r = await tab.click(_id(snap, "button", "Add one"), expect={"type": "teleport"})
        assert not r.success and r.error_code == "BAD_ARGUMENT"
        r = await tab.scroll(direction="sideways")
        assert not r.success and r.error_code == "BAD_ARGUMENT"
        assert isinstance(r, ActionResult) and json.loads(r.model_dump_json())["error_code"] == "BAD_ARGUMENT"
        crash = asyncio.create_task(tab.cdp.send("Page.crash", session_id=tab.session_id, timeout=5))
        r = await tab.click(_id(snap, "button", "Add one"))  # the renderer dies under this click
        if r.success:  # the click won the race: the next action meets the dead tab
            for _ in range(50):
                if tab.crashed:
                    break
                await asyncio.sleep(0.1)
            r = await tab.click(_id(snap, "button", "Add one"))
        with contextlib.suppress(Exception):
            await crash
        assert not r.success and r.error_code == "TAB_CRASHED" and "crashed" in r.message
    harness.page(server.url("actions.html"), go)


def test_cover_in_the_parent_document_hides_frame_content(server, harness):
    async def go(tab):
        await tab.wait_stable()
        snap = await tab.snapshot()
        button = snap.find("button", "Frame button")[0]
        assert button.frame_id != tab.main_frame_id
        assert button.occluded and "div#modal" in (button.occluded_by_desc or ""), "the snapshot sees the cover"
        r = await tab.click(button.node_id)
        assert not r.success and r.error_code == "OCCLUDED" and "Please sign in" in r.message, r.message
        close = snap.find("button", "Close")[0].node_id
        assert (await tab.click(close)).success
        r = await tab.click(button.node_id)
        assert r.success, r.message
        assert (await tab.snapshot()).find(text="clicked")
    harness.page(server.url("frame_overlay.html"), go)


def test_mutation_stream_reaches_into_frames(server, harness):
    async def go(tab):
        await tab.wait_stable()
        snap = await tab.snapshot()
        saves = snap.find("button", "Save in frame")
        assert len(saves) == 2
        cross = saves[1]
        r = await tab.click(cross.node_id, expect={"type": "element_appears", "text": "Saved successfully"})
        assert r.success and r.verification.success, r.message
        assert "Saved successfully" in r.verification.success_messages
        events = [e for e in await tab.recent_events() if e.text == "Saved successfully"]
        assert events and events[0].category == "success" and events[0].frame_id == cross.frame_id
    harness.page(server.url("act_frames.html"), go)


def test_stability_wait_on_busy_dom_and_network(server, harness):
    from engine.observe.stability import StabilityConfig

    async def go(tab):
        short = StabilityConfig(timeout_ms=800)
        await tab.page.evaluate("window.tick = setInterval(() => { document.title = 'busy ' + Date.now(); "
                                "document.getElementById('count').textContent = Date.now(); }, 50)")
        st = await tab.wait_stable(short)
        assert not st.stable and 700 <= st.waited_ms < 1500 and "DOM keeps changing" in st.describe()
        await tab.page.evaluate("clearInterval(window.tick)")
        st = await tab.wait_stable()
        assert st.stable and st.waited_ms < 1500, st.describe()
        await tab.page.evaluate("fetch('/hang').catch(() => {})")  # a request that never finishes
        st = await tab.wait_stable(short)
        assert not st.stable and st.inflight >= 1 and "in flight" in st.describe()
    harness.page(server.url("actions.html"), go)
