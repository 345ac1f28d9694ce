"""The pages of `vigil bench read` (engine/bench/read.py): generated pages written for it, and pages of
the real-app corpus (tests/fixtures/real) — each with questions whose answer is text a person sees in
the viewport, and actions whose outcome is only text."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Act:
    """Do `verb` on the control (role, name); the page then shows `outcome` (text only)."""

    verb: str        # click, type_submit
    role: str
    name: str
    outcome: str
    text: str = ""   # what to type
    failed: bool = False  # the outcome is an error message: the step must not be verified


@dataclass(frozen=True)
class ReadPage:
    key: str
    title: str
    path: str                      # a generated page's file name, or a corpus page's path
    corpus: bool = False           # served from the corpus (tests/fixtures/real)
    questions: tuple[tuple[str, str], ...] = ()   # (question, the answer's words)
    acts: tuple[Act, ...] = ()
    html: str = ""
    ready: bool = False            # wait for the corpus page's html[data-ready]
    scroll_to: str = ""            # scroll this text into view first (a question further down the page)
    extra: dict = field(default_factory=dict)


ORDER = """<!doctype html><html><head><title>Order #A-20417</title>
<style>body{font-family:sans-serif} td,th{padding:4px 10px}</style></head><body>
<header><a href="#">Shop</a> <a href="#">Orders</a> <a href="#">Account</a></header>
<main><h1>Order #A-20417</h1>
<p>Placed on 12 November 2026 by <strong>Grace Hopper</strong></p>
<dl><dt>Delivery date</dt><dd>Thursday 3 December</dd>
<dt>Tracking number</dt><dd><span>1Z 999 AA1 01 2345 6784</span></dd></dl>
<table><thead><tr><th>Item</th><th>Qty</th><th>Price</th></tr></thead><tbody>
<tr><td>Walnut desk organiser</td><td>1</td><td>$38.00</td></tr>
<tr><td><a href="#">Brass pen</a></td><td>2</td><td>$16.20</td></tr></tbody></table>
<div class="total"><span>Order total</span> <span>$54.20</span></div>
<p id="state" role="status">Status: Shipped</p>
<button id="again">Buy again</button> <button id="cancel">Cancel order</button></main>
<script>
document.getElementById('again').onclick = () => {
  document.getElementById('state').textContent = 'Status: Added to your cart again (2 items)'; };
document.getElementById('cancel').onclick = () => {
  const d = document.createElement('div'); d.setAttribute('role', 'alert');
  d.textContent = 'This order has shipped and can no longer be cancelled.';
  document.querySelector('main').prepend(d); };
</script></body></html>"""

SIGNUP = """<!doctype html><html><head><title>Create your workspace</title>
<style>.bad{color:#c62828}</style></head><body>
<h1>Create your workspace</h1><p>Pick a name your team will recognise.</p>
<label for="ws">Workspace name</label> <input id="ws" value="acme-team">
<p id="msg" class="bad"></p><button id="create" type="button">Create workspace</button>
<p>Workspaces left on your plan: 3</p>
<script>
document.getElementById('create').onclick = () => {
  document.getElementById('msg').textContent = 'That workspace name is taken. Try acme-team-2.'; };
</script></body></html>"""

INVOICE = """<!doctype html><html><head><title>Invoice INV-0042</title></head><body>
<h1>Invoice INV-0042</h1><p>Billed to Ada Lovelace · due 30 November</p>
<p>Amount due: <b id="due">$1,250.00</b></p><p>Status: <span id="st">Unpaid</span></p>
<button id="pay">Mark as paid</button><div id="toast" aria-live="polite"></div>
<script>
document.getElementById('pay').onclick = () => setTimeout(() => {
  document.getElementById('st').textContent = 'Paid'; document.getElementById('due').textContent = '$0.00';
  document.getElementById('toast').textContent = 'Marked as paid'; }, 150);
</script></body></html>"""


# What a person reads that the DOM's text does not say plainly (issue 39): a price's currency sign and the
# stock words are CSS generated content, the nightly price is aria-hidden (its screen-reader copy .sr-only
# text), the chart's values are SVG <text>, the booking code is shown in capitals (text-transform), and the
# stay's facts are a grid and a flex row that place each label before its value out of document order.
HOTEL = """<!doctype html><html><head><meta charset="utf-8"><title>Deluxe room — Hotel Lumen</title>
<style>body{font-family:sans-serif;max-width:720px}
.eur::before{content:"€"} .stock::after{content:"In stock";display:block;color:#2e7d32}
.left::after{content:"Only " attr(data-n) " rooms left"}
.sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.code{text-transform:uppercase;font-family:monospace}
.facts{display:grid;grid-template-columns:140px 1fr;grid-template-areas:"a b" "c d"}
.facts .in-v{grid-area:b} .facts .in-l{grid-area:a} .facts .out-v{grid-area:d} .facts .out-l{grid-area:c}
.stay{display:flex;flex-direction:row-reverse;justify-content:flex-end;gap:12px}</style></head><body>
<h1>Deluxe room</h1>
<div class="price"><span aria-hidden="true">$240 per night</span>
<span class="sr-only">240 US dollars a night</span></div>
<p class="stock">Sea view, king bed</p><p class="left" data-n="2"></p>
<p>Breakfast: <span class="eur">18</span> per person</p>
<p>Booking code: <span class="code">lum-4k2x</span></p>
<div class="facts"><span class="in-v">12 March, from 15:00</span><span class="in-l">Check-in</span>
<span class="out-v">15 March, by 11:00</span><span class="out-l">Check-out</span></div>
<div class="stay"><span>3 nights</span><span>Stay</span></div>
<details><summary>Cancellation policy</summary><p>Free cancellation until 9 March</p></details>
<h2>Occupancy</h2>
<svg width="360" height="120" role="img" aria-label="Occupancy by month">
<rect x="10" y="40" width="40" height="60" fill="#90caf9"></rect><text x="10" y="115">May</text>
<text x="10" y="35">64%</text><rect x="80" y="20" width="40" height="80" fill="#1e88e5"></rect>
<text x="80" y="115">June</text><text x="80" y="15">87%</text>
<a href="#occupancy-report"><text x="160" y="60">Full occupancy report</text></a></svg>
<p><button id="book">Book now</button></p>
</body></html>"""


def report_page(rows: int = 320) -> str:
    """A quarterly report of `rows` table rows (about 1,700 elements): questions on what the first
    screen shows, a button whose outcome is a status line."""
    body = "".join(f"<tr><td>R-{i:04d}</td><td>Region {i % 7}</td><td>{(i * 37) % 1000}.{i % 100:02d}</td>"
                   f"<td>{'open' if i % 3 else 'closed'}</td></tr>" for i in range(1, rows + 1))
    return f"""<!doctype html><html><head><title>Quarterly report</title>
<style>body{{font-family:sans-serif}} td{{padding:2px 8px}}</style></head><body>
<nav><a href="#">Home</a> <a href="#">Reports</a> <a href="#">Settings</a></nav>
<h1>Quarterly report — Q3 2026</h1>
<p>Prepared by Margaret Hamilton. Figures in thousands of euros.</p>
<p id="status" role="status">Last recalculated 2 hours ago</p>
<button id="recalc">Recalculate</button>
<table><thead><tr><th>Ref</th><th>Region</th><th>Amount</th><th>State</th></tr></thead><tbody>{body}</tbody></table>
<script>
document.getElementById('recalc').onclick = () => setTimeout(() => {{
  document.getElementById('status').textContent = 'Recalculated {rows} rows: total 158,412.80'; }}, 100);
</script></body></html>"""


PAGES: tuple[ReadPage, ...] = (
    ReadPage("order", "order page", "order.html", html=ORDER,
             questions=(("What is the order total?", "$54.20"), ("When is the delivery?", "Thursday 3 December"),
                        ("What is the tracking number?", "1Z 999 AA1 01 2345 6784"),
                        ("Whose order is it?", "Grace Hopper"), ("How much is the brass pen line?", "$16.20")),
             acts=(Act("click", "button", "Buy again", "Status: Added to your cart again (2 items)"),
                   Act("click", "button", "Cancel order", "This order has shipped and can no longer be cancelled.",
                       failed=True))),
    ReadPage("signup", "sign-up form", "signup.html", html=SIGNUP,
             questions=(("How many workspaces are left?", "Workspaces left on your plan: 3"),),
             acts=(Act("click", "button", "Create workspace", "That workspace name is taken. Try acme-team-2.",
                       failed=True),)),
    ReadPage("invoice", "invoice", "invoice.html", html=INVOICE,
             questions=(("How much is due?", "$1,250.00"), ("Who is billed?", "Ada Lovelace")),
             acts=(Act("click", "button", "Mark as paid", "Marked as paid"),)),
    ReadPage("report", "generated report (1,700 elements)", "report.html", html=report_page(),
             questions=(("Who prepared the report?", "Margaret Hamilton"), ("Which quarter?", "Q3 2026"),
                        ("What is the amount of R-0003?", "111.03"),
                        ("When was it last recalculated?", "Last recalculated 2 hours ago")),
             acts=(Act("click", "button", "Recalculate", "Recalculated 320 rows: total 158,412.80"),)),
    ReadPage("hotel", "room page (CSS, SVG, layout)", "hotel.html",
             html=HOTEL,
             questions=(("What does the room cost?", "$240 per night"), ("Is it available?", "In stock"),
                        ("How many rooms are left?", "Only 2 rooms left"), ("What does breakfast cost?", "€18"),
                        ("What is the booking code?", "LUM-4K2X"), ("When is check-in?", "Check-in 12 March"),
                        ("When is check-out?", "Check-out 15 March"), ("How long is the stay?", "Stay 3 nights"),
                        ("What was the occupancy in June?", "87%"))),
    ReadPage("docs-os", "Python docs: os (real)", "pydoc/library/os.html", corpus=True,
             questions=(("What is the page about?", "os — Miscellaneous operating system interfaces"),
                        ("Where is the source code?", "Lib/os.py"),
                        ("What do the module's functions raise (the Note box)?",
                         "All functions in this module raise OSError (or subclasses thereof)"))),
    ReadPage("docs-json", "Python docs: json (real)", "pydoc/library/json.html", corpus=True,
             questions=(("What format does the module handle?", "JavaScript Object Notation"),
                        ("Which RFC specifies JSON?", "RFC 7159"))),
    ReadPage("todomvc", "TodoMVC in React (real)", "todomvc-react.html", corpus=True, ready=True,
             acts=(Act("type_submit", "textbox", "What needs to be done?", "1 item left", text="Walk the dog"),)),
)
