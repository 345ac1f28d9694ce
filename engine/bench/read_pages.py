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
