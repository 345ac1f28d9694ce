"""Whether text goes in as one insertion or key by key (`engine.actions.input.typing_mode`) is read in one call
per field (the DevTools console's getEventListeners, run on the field's whole event path in the page) and gives
what the call per node of the path (`DOMDebugger.getEventListeners`) gives: on listeners in the field's frame,
a same-origin frame and a cross-site one, inline handlers, listener objects, shadow roots — and on a page that
passes its own key listener off as one of Vigil's.

Real Chromium on the fixture server (the cross-site frame comes from `localhost`, the page from 127.0.0.1)."""

from __future__ import annotations

from engine.actions import input as inp
from engine.actions.locate import release, resolve

EXPECTED = {  # label → (mode, why)
    "Plain": ("insert", "no key listener, mask, list or length limit on the field"),
    "Inline": ("keys", "the page listens for keydown on the field"),
    "Inner": ("keys", "the page listens for keyup on an ancestor"),
    "Hidden": ("keys", "the page listens for keypress on the field"),
    "Shadow": ("keys", "the page listens for beforeinput on an ancestor"),
    "Quiet same": ("insert", "no key listener, mask, list or length limit on the field"),
    "Loud same": ("keys", "the page listens for keydown on the field"),
    "Quiet cross": ("keys", "the page listens for keydown on its window"),
    "Loud cross": ("keys", "the page listens for keydown on the field"),
}


def test_one_call_per_field_reads_what_a_call_per_node_reads(server, harness):
    async def go(tab):
        target = tab.target
        await tab.page.wait_for_function(
            "() => [...document.querySelectorAll('iframe')].every((f) => { try { return !f.contentDocument || "
            "f.contentDocument.readyState === 'complete'; } catch (e) { return true; } })")
        snap = await tab.snapshot()
        for _ in range(40):  # (the cross-site frame's fields, once its document is in)
            if sum(1 for n in snap.node_map.values() if n.role == "textbox") >= len(EXPECTED):
                break
            await tab.page.wait_for_timeout(50)
            snap = await tab.snapshot()
        methods: list[str] = []
        send = target.cdp.send

        async def noted(method, params=None, *args, **kwargs):
            methods.append(method)
            return await send(method, params, *args, **kwargs)

        target.cdp.send = noted
        out = {}
        try:
            for label in EXPECTED:
                hits = [n.node_id for n in snap.node_map.values() if n.role == "textbox" and n.name == label]
                assert hits, f"no textbox {label!r} in {[n.name for n in snap.node_map.values()]}"
                t = await resolve(target, snap, hits[0])
                assert t.context_id is not None, label
                start = len(methods)
                at_once = await inp.typing_mode(target, t.session_id, t.object_id, "abc", t.context_id)
                one_call = methods[start:]
                by_node = await inp.typing_mode(target, t.session_id, t.object_id, "abc")
                again = len(methods)
                await inp.typing_mode(target, t.session_id, t.object_id, "abc", t.context_id)
                out[label] = (at_once, by_node, one_call, methods[again:])
                await release(target, t.session_id)
        finally:
            del target.cdp.send
        return out

    out = harness.page(server.url("typing_listeners.html"), go)
    for label, want in EXPECTED.items():
        at_once, by_node, one_call, later = out[label]
        assert at_once == want, (label, at_once)
        assert by_node == want, (label, by_node)
        # one call, with no call per node; the reader of the field's document is asked for once and kept
        assert "DOMDebugger.getEventListeners" not in one_call, (label, one_call)
        assert later == ["Runtime.callFunctionOn"], (label, later)


def test_typing_reads_the_listeners_in_one_call(server, harness):
    """`type` itself uses the one call: text goes in by insertion or keys as before, with no call per node."""
    async def go(tab):
        snap = await tab.snapshot()
        ids = {n.name: n.node_id for n in snap.node_map.values() if n.role == "textbox"}
        methods: list[str] = []
        cdp = tab.target.cdp
        send = cdp.send

        async def noted(method, params=None, *args, **kwargs):
            methods.append(method)
            return await send(method, params, *args, **kwargs)

        cdp.send = noted
        try:
            plain = await tab.type(ids["Plain"], "Ada")
            inline = await tab.type(ids["Inline"], "xy")
        finally:
            del cdp.send
        counted = await tab.page.evaluate("() => [document.getElementById('plain').value, window.k || 0]")
        return plain, inline, methods, counted

    plain, inline, methods, (value, keys) = harness.page(server.url("typing_listeners.html"), go)
    assert plain.success and inline.success, (plain.message, inline.message)
    assert plain.data["typing"]["mode"] == "insertion" and inline.data["typing"]["mode"] == "keys"
    assert value == "Ada" and keys == 2, "the inline keydown handler saw both keys"
    assert "DOMDebugger.getEventListeners" not in methods
