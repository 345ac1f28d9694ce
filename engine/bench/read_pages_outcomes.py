"""Pages of `vigil bench read` for outcomes as a person sees them (issue 39, item 6): a transient "Saving…" waited
out, text inside a cross-site payment frame, a navigation whose events must carry no style sheet or script text,
and a link to a page the server answers 404. Each page is one self-contained file, as `bench_read` writes them:
the card frame is the same file opened as http://localhost:PORT/… (another site than 127.0.0.1, so Chromium puts
it out of process), and the drafts page is the same file opened with `?drafts` (a new document either way).

`extra["absent_from_events"]`: words that must not be in the step's events (its verification's `recent_mutations`
and `success_messages`) after the page's action — style sheet and script text."""

from __future__ import annotations

from engine.bench.read_pages import Act, ReadPage

SAVING = """<!doctype html><html><head><meta charset="utf-8"><title>Profile settings</title></head><body>
<h1>Profile settings</h1><p>Display name: <b>Ada Lovelace</b></p><p>Time zone: Europe/London</p>
<button id="save">Save</button>
<script>
// no request: the button says "Saving…" for a second, then "Saved" (as many apps do over a socket or a worker)
document.getElementById('save').onclick = (e) => { const b = e.currentTarget; b.textContent = 'Saving\u2026';
  setTimeout(() => { b.textContent = 'Saved'; }, 1000); };
</script></body></html>"""

CARD_FRAME = """<!doctype html><html><head><meta charset="utf-8"><title>Checkout</title></head><body><script>
// Opened on localhost this file is the card frame; on 127.0.0.1 it is the checkout that embeds it from localhost.
if (location.hostname === 'localhost') {
  document.title = 'Card';
  document.body.innerHTML = '<p>Card ending 4242</p><p id="s" role="status"></p>';
  addEventListener('message', () => setTimeout(() => {
    document.getElementById('s').textContent = 'Card accepted'; parent.postMessage('paid', '*'); }, 600));
} else {
  document.body.innerHTML = '<h1>Checkout</h1><p>Order total: $42.00</p><button id="pay">Pay $42.00</button>' +
    '<iframe title="Card details" style="width:420px;height:160px;border:1px solid #888"></iframe>';
  const f = document.querySelector('iframe');
  f.src = 'http://localhost:' + location.port + location.pathname;
  document.getElementById('pay').onclick = (e) => { e.currentTarget.textContent = 'Processing\u2026';
    f.contentWindow.postMessage('pay', '*'); };
  addEventListener('message', (e) => { if (e.data === 'paid') document.getElementById('pay').textContent = 'Paid'; });
}
</script></body></html>"""

DRAFTS = """<!doctype html><html><head><meta charset="utf-8"><title>Drafts</title>
<style>body{font:15px/1.5 Georgia,serif;color:#222} .note{color:#555}</style></head><body>
<script>window.saves = 0;</script>
<main id="start"><h1>Writing desk</h1><p>Three drafts are waiting.</p><a href="?drafts">Open drafts</a></main>
<main id="drafts" hidden><h1>Saved drafts</h1><style>.x{color:red}</style><p class="note">Your drafts were saved.</p>
<noscript>Enable JavaScript to edit drafts</noscript></main>
<script>if (location.search === '?drafts') { start.hidden = true; drafts.hidden = false; }</script>
</body></html>"""

ARCHIVE = """<!doctype html><html><head><meta charset="utf-8"><title>Reports</title></head><body>
<h1>Reports</h1><p>Quarterly reports of 2026.</p><a href="reports-archive-2019.html">Open the 2019 archive</a>
</body></html>"""

OUTCOME_PAGES: list[ReadPage] = [
    ReadPage("outcome-saving", "transient 'Saving…' then 'Saved'", "outcome-saving.html", html=SAVING,
             questions=(("What is the display name?", "Ada Lovelace"),),
             acts=(Act("click", "button", "Save", "button 'Save' → 'Saved'"),)),
    ReadPage("outcome-card-frame", "cross-site card frame", "outcome-card-frame.html", html=CARD_FRAME,
             questions=(("Which card pays?", "Card ending 4242"),),
             acts=(Act("click", "button", "Pay $42.00", "Card accepted"),)),
    ReadPage("outcome-styled-nav", "navigation, no style text in events", "outcome-styled-nav.html", html=DRAFTS,
             questions=(("How many drafts are waiting?", "Three drafts are waiting."),),
             acts=(Act("click", "link", "Open drafts", "Saved drafts"),),
             extra={"absent_from_events": ("body{", ".x{", "window.saves", "Enable JavaScript")}),
    ReadPage("outcome-http-404", "link to a page the server answers 404", "outcome-http-404.html", html=ARCHIVE,
             questions=(("Which year's archive is linked?", "2019"),),
             acts=(Act("click", "link", "Open the 2019 archive", "HTTP 404 Not Found", failed=True),)),
]
