"""Outcomes as a person sees them (issue 39, item 6), on real pages served by real local servers: a transient state
("Saving…" for a second, no request) is waited out and the words tell what it led to; text that appears inside a
cross-site (out-of-process) payment frame reaches the words; the events never carry style sheet or script text;
a page the server answers with an HTTP error says so in the result and in the snapshot."""

from __future__ import annotations

import pytest

from engine.snapshot.serialize.reading import render_reading

from support.recording_server import RecordingServer, Reply

# A save button that says "Saving…" for a second with no request, then "Saved"; an instant one beside it (a
# control: no transient state, no extra wait), and a menu button whose label always ends in "…" (never waited for).
SAVE = """<!doctype html><meta charset="utf-8"><title>Profile</title><h1>Profile</h1>
<label>Display name <input id=n value="Ada"></label>
<button id=save onclick="save()">Save</button> <button id=like onclick="this.textContent = 'Liked'">Like</button>
<button id=more onclick="panel.hidden = !panel.hidden">More\u2026</button><p id=panel hidden>Export, Print</p>
<script>
function save() { const b = document.getElementById('save'); b.textContent = 'Saving\u2026';
  setTimeout(() => { b.textContent = 'Saved'; }, 1000); }
</script>"""

# The checkout on one site; its card frame on another (another server, addressed as localhost): out of process.
CHECKOUT = """<!doctype html><meta charset="utf-8"><title>Checkout</title><h1>Checkout</h1><p>Total: $42.00</p>
<button id=pay onclick="pay()">Pay $42.00</button>
<iframe title="Card" src="{frame}" style="width:420px;height:180px;border:1px solid #888"></iframe>
<script>
function pay() { const b = document.getElementById('pay'); b.textContent = 'Processing\u2026';
  document.querySelector('iframe').contentWindow.postMessage('pay', '*'); }
addEventListener('message', (e) => { if (e.data === 'paid') document.getElementById('pay').textContent = 'Paid'; });
</script>"""
# The card frame answers after 600 ms, with no request (a timer); its own button says "Checking…" for half a second.
CARD = """<!doctype html><meta charset="utf-8"><title>Card</title><p>Card ending 4242</p><p id=s role=status></p>
<button id=check onclick="check()">Check card</button>
<script>
addEventListener('message', () => setTimeout(() => {
  document.getElementById('s').textContent = 'Card accepted'; parent.postMessage('paid', '*'); }, 600));
function check() { const b = document.getElementById('check'); b.textContent = 'Checking\u2026';
  setTimeout(() => { b.textContent = 'Check card';
    document.getElementById('s').textContent = 'Card verified'; }, 500); }
</script>"""

START = """<!doctype html><title>Start</title><h1>Start</h1><a href="/drafts">Drafts</a> <a href="/boom">Reports</a>"""
DRAFTS = """<!doctype html><html><head><title>Drafts</title><style>body{font:14px/1.4 sans-serif;color:#222}</style>
</head><body><script>window.saves = 0;</script><main><h1>Saved drafts</h1><div><style>.x{color:red}</style>
<p>Your drafts were saved.</p><noscript>Enable JavaScript to edit</noscript><template><p>Template done</p></template>
</div></main></body></html>"""
BOOM = "<!doctype html><title>Error</title><h1>Internal error</h1><p>Something broke.</p>"


@pytest.fixture(scope="module")
def sites():
    with RecordingServer({"GET /card": Reply(CARD)}) as frame_site:
        card = frame_site.url("card", host="localhost")  # another site than 127.0.0.1: Chromium puts it out of process
        routes = {"GET /save": Reply(SAVE), "GET /checkout": Reply(CHECKOUT.replace("{frame}", card)),
                  "GET /start": Reply(START), "GET /drafts": Reply(DRAFTS), "GET /boom": Reply(BOOM, status=500)}
        with RecordingServer(routes) as site:
            yield site


async def _click(tab, role: str, name: str):
    snap = await tab.snapshot()
    return await tab.click(snap.find(role, name)[0].node_id)


def test_a_transient_state_is_waited_out_and_ordinary_steps_are_not(harness, sites):
    async def go(tab):
        r = await _click(tab, "button", "Save")
        v = r.verification
        assert v.success and "text changed: button 'Save' → 'Saved'" in v.feedback, r.message
        assert "Saving" not in v.feedback, r.message
        assert r.timings_ms["settle"] >= 900 and r.data["settled"] is True, r.timings_ms
        # no transient state: no extra wait, and the button's new words are told
        r = await _click(tab, "button", "Like")
        assert "button 'Like' → 'Liked'" in r.message and r.timings_ms["settle"] < 600, (r.message, r.timings_ms)
        # a label that always ends in "…" was not changed by the click: not a transient state
        r = await _click(tab, "button", "More…")
        assert "Export, Print" in r.message and r.timings_ms["settle"] < 600, (r.message, r.timings_ms)
    harness.page(sites.url("save"), go)


def test_text_in_a_cross_site_payment_frame_reaches_the_words(harness, sites):
    async def go(tab):
        snap = await tab.snapshot()
        assert [f.cross_process for f in snap.frames] == [True], snap.frames
        # the main page says "Processing…" until the card frame answers (600 ms later, no request)
        r = await _click(tab, "button", "Pay $42.00")
        assert "'Card accepted'" in r.message and "'Paid'" in r.message, r.message
        assert "Processing" not in r.verification.feedback, r.message
        # a click inside the frame: its button says "Checking…", then the frame's status changes
        r = await _click(tab, "button", "Check card")
        assert r.success and "'Card accepted' → 'Card verified'" in r.message, r.message
        assert "Checking" not in r.verification.feedback, r.message
    harness.page(sites.url("checkout"), go)


def test_events_never_carry_style_or_script_text_and_http_errors_are_said(harness, sites):
    async def go(tab):
        r = await _click(tab, "link", "Drafts")
        v = r.verification
        said = [*v.page_state.recent_mutations, *v.success_messages, *v.errors_detected]
        assert any("Your drafts were saved." in s for s in said), said  # the page's words still come through
        for code in ("body{", ".x{", "window.saves", "Enable JavaScript", "Template done"):
            assert not any(code in s for s in said), (code, said)
        assert tab.snapshot is not None and (await tab.snapshot()).context.http_status == 200
        assert (await tab.snapshot()).context.http_error == ""

        # a navigation to a missing page: the result and the snapshot say the server's answer
        r = await tab.navigate(sites.url("no-such-page"))
        assert "HTTP 404 Not Found" in r.message, r.message
        ctx = (await tab.snapshot()).context
        assert (ctx.http_status, ctx.http_error) == (404, "HTTP 404 Not Found")
        head = render_reading(await tab.snapshot())[0].splitlines()[0]  # what an MCP client reads first
        assert "the page answered HTTP 404 Not Found" in head, head

        # a click that navigates to a page the server answers with 500: the step did not do what was meant
        await tab.navigate(sites.url("start"))
        r = await _click(tab, "link", "Reports")
        v = r.verification
        assert "HTTP 500 Internal Server Error" in r.message and not v.success, r.message
        assert v.errors_detected[0] == "HTTP 500 Internal Server Error", v.errors_detected
        assert (await tab.snapshot()).context.http_error == "HTTP 500 Internal Server Error"
        # back on a page answered 200: nothing said
        r = await tab.back()
        assert "HTTP" not in r.message and (await tab.snapshot()).context.http_status == 200, r.message
    harness.page(sites.url("start"), go)
