"""Acting where real pages put things (issue 39, items 7–9), on pages written as the web writes them, served by
local HTTP servers to a real Chromium:

- a payment form in a cross-site (out-of-process) iframe is clicked on its first load and after every reload;
- a slider whose <input type=range> is visually hidden inside the thumb a person drags (MUI's Slider) is in the
  semantic payload, where its thumb is, and its arrow keys move it by its ID;
- a select that opens on pointerdown and chooses on pointerup (Radix Select, shadcn/ui's select): the list it
  opens in a portal removes the option as the option takes the release, and the step's record says what the page
  did (never MISDIRECTED while the page chose the option)."""

from __future__ import annotations

import json

import pytest

from support.paths import FIXTURES
from support.recording_server import RecordingServer, Reply

PAY_FRAME = """<!doctype html><html><head><meta charset=utf-8><title>Pay</title></head>
<body style="margin:0;font:14px sans-serif">
<form onsubmit="event.preventDefault()"><label>Card number <input id=card autocomplete=cc-number></label>
<button id=pay type=button>Pay 12 EUR</button><p id=status>Not paid</p></form>
<script>document.getElementById('pay').addEventListener('click', () => {
  window.paid = (window.paid || 0) + 1; document.getElementById('status').textContent = 'Paid ' + window.paid; });
</script></body></html>"""

CHECKOUT = """<!doctype html><html><head><meta charset=utf-8><title>Checkout</title></head>
<body style="font:15px sans-serif">
<h1>Checkout</h1><p>Total: 12 EUR</p>
<iframe title="Secure payment" src="{frame}" allow="payment *"
 style="border:none;width:420px;height:140px;display:block;transform:translate(0px)"></iframe>
</body></html>"""

# MUI's Slider as it renders: the thumb is a span with the visually hidden <input type=range> inside it (MUI 5
# gives the input the thumb's size, cut away by clip; the classic visually-hidden box is 1 px).
SLIDERS = """<!doctype html><html><head><meta charset=utf-8><title>Sound</title><style>
body { font: 15px sans-serif; margin: 24px; }
.MuiSlider-root { position: relative; display: inline-block; width: 300px; height: 4px; padding: 13px 0;
  margin: 16px 12px; cursor: pointer; touch-action: none; color: #1976d2; }
.MuiSlider-rail, .MuiSlider-track { position: absolute; top: 50%; transform: translateY(-50%); height: inherit;
  display: block; border-radius: 12px; background: currentColor; }
.MuiSlider-rail { width: 100%; opacity: .38; }
.MuiSlider-thumb { position: absolute; width: 20px; height: 20px; box-sizing: border-box; border-radius: 50%; top: 50%;
  transform: translate(-50%, -50%); background: currentColor; display: flex;
  align-items: center; justify-content: center; }
</style></head><body><h1>Sound</h1>
<p>Volume <output id=volume-out>30</output> · Bass <output id=bass-out>50</output></p>
<span class="MuiSlider-root" data-out=volume-out><span class="MuiSlider-rail"></span>
 <span class="MuiSlider-track" style="left:0%;width:30%"></span>
 <span data-index="0" class="MuiSlider-thumb" style="left:30%"><input data-index="0" aria-label="Volume"
  aria-valuenow="30" aria-orientation="horizontal" aria-valuemax="100" aria-valuemin="0" type="range" min="0"
  max="100" step="1" value="30" style="border:0;clip:rect(0 0 0 0);height:100%;margin:-1px;overflow:hidden;
  padding:0;position:absolute;white-space:nowrap;width:100%;direction:ltr"></span></span><br>
<span class="MuiSlider-root" data-out=bass-out><span class="MuiSlider-rail"></span>
 <span class="MuiSlider-track" style="left:0%;width:50%"></span>
 <span data-index="0" class="MuiSlider-thumb" style="left:50%"><input data-index="0" aria-label="Bass"
  aria-valuenow="50" aria-orientation="horizontal" aria-valuemax="100" aria-valuemin="0" type="range" min="0"
  max="100" step="1" value="50" style="border:0;clip:rect(0 0 0 0);height:1px;margin:-1px;overflow:hidden;
  padding:0;position:absolute;white-space:nowrap;width:1px;direction:ltr"></span></span>
<script>
for (const root of document.querySelectorAll('.MuiSlider-root')) {
  const input = root.querySelector('input');
  input.addEventListener('change', () => {
    const v = +input.value;
    input.setAttribute('aria-valuenow', v);
    root.querySelector('.MuiSlider-thumb').style.left = v + '%';
    root.querySelector('.MuiSlider-track').style.width = v + '%';
    document.getElementById(root.dataset.out).textContent = v;
  });
  input.addEventListener('input', () => input.dispatchEvent(new Event('change')));
}
</script></body></html>"""

# A select as Radix writes it: the trigger (role combobox) opens on pointerdown, its list goes into a portal at
# the end of <body> with the selected option under the pointer, and <body> lets no pointer through while it is
# open; options are chosen on pointerup, through a listener on the portal's container (<body>, as React's
# portals listen), except the release of the very press that opened the list (unless the pointer moved 10 px).
# "Size" chooses on any pointerup, that release included; "Plan", as its option takes the release, puts a button
# that deletes on mouseup under the pointer (the browser sends that mouseup where the option was, not to it).
SELECTS = """<!doctype html><html><head><meta charset=utf-8><title>Order</title><style>
body { font: 15px sans-serif; margin: 24px; }
.field { margin: 18px 0; } .field label { display: inline-block; width: 60px; }
button[role=combobox] { font: inherit; width: 160px; text-align: left; padding: 4px 8px; }
[role=listbox] { position: fixed; pointer-events: auto; background: #fff; border: 1px solid #888; z-index: 10; }
[role=option] { padding: 0 8px; height: 28px; line-height: 28px; cursor: default; }
[role=option][data-highlighted] { background: #dde; }
#del { position: fixed; width: 200px; height: 60px; z-index: 20; }
</style></head><body><h1>Order</h1>
<div class=field><label for=fruit>Fruit</label><button type=button role=combobox id=fruit aria-expanded=false
 aria-autocomplete=none data-state=closed><span class=val>Apple</span> ▾</button></div>
<div class=field><label for=size>Size</label><button type=button role=combobox id=size aria-expanded=false
 aria-autocomplete=none data-state=closed><span class=val>Medium</span> ▾</button></div>
<div class=field><label for=plan>Plan</label><button type=button role=combobox id=plan aria-expanded=false
 aria-autocomplete=none data-state=closed><span class=val>Basic</span> ▾</button></div>
<p id=picked>Nothing picked</p>
<script>
window.picked = []; window.deleted = 0;
const ITEMS = { fruit: ['Apple', 'Banana', 'Cherry', 'Mango', 'Pear'], size: ['Small', 'Medium', 'Large'],
  plan: ['Basic', 'Pro', 'Team'] };
let open = null;   // {trigger, list, down: [x, y] of the opening press or null, moved}
function close() {
  const o = open; open = null;
  o.list.remove();
  document.body.style.pointerEvents = '';
  o.trigger.setAttribute('aria-expanded', 'false'); o.trigger.dataset.state = 'closed';
  o.trigger.focus();
}
function choose(o, v) {
  o.trigger.querySelector('.val').textContent = v;
  window.picked.push(o.trigger.id + ':' + v);
  document.getElementById('picked').textContent = 'Picked ' + v.toLowerCase();
  close();
}
for (const trigger of document.querySelectorAll('[role=combobox]')) {
  trigger.addEventListener('pointerdown', (e) => {
    if (e.button !== 0 || open) return;
    e.preventDefault();
    const list = document.createElement('div');
    list.setAttribute('role', 'listbox'); list.id = trigger.id + '-list';
    trigger.setAttribute('aria-controls', list.id);
    const now = trigger.querySelector('.val').textContent;
    for (const v of ITEMS[trigger.id]) {
      const opt = document.createElement('div');
      opt.setAttribute('role', 'option'); opt.textContent = v; opt.dataset.value = v;
      opt.setAttribute('aria-selected', String(v === now));
      opt.addEventListener('pointermove', () => opt.setAttribute('data-highlighted', ''));
      opt.addEventListener('pointerleave', () => opt.removeAttribute('data-highlighted'));
      list.appendChild(opt);
    }
    document.body.appendChild(list);
    const sel = list.querySelector('[aria-selected=true]'), r = trigger.getBoundingClientRect();
    list.style.left = r.left + 'px'; list.style.minWidth = r.width + 'px';
    list.style.top = (e.clientY - sel.offsetTop - 14) + 'px';
    document.body.style.pointerEvents = 'none';
    trigger.setAttribute('aria-expanded', 'true'); trigger.dataset.state = 'open';
    open = { trigger, list, down: trigger.id === 'size' ? null : [e.clientX, e.clientY], moved: 0 };
  });
}
document.addEventListener('pointermove', (e) => {
  if (!open || !open.down) return;
  open.moved = Math.max(open.moved, Math.abs(e.clientX - open.down[0]), Math.abs(e.clientY - open.down[1]));
});
document.body.addEventListener('pointerup', (e) => {
  if (!open) return;
  const o = open, opt = e.target.closest && e.target.closest('[role=option]');
  if (o.down) { const still = o.moved <= 10; o.down = null; if (still) return; }
  if (!opt || !o.list.contains(opt)) return;
  if (o.trigger.id === 'plan') {   // the trap: a delete button where the pointer is, as the option goes
    const del = document.createElement('button');
    del.id = 'del'; del.textContent = 'Delete my account';
    del.style.left = (e.clientX - 100) + 'px'; del.style.top = (e.clientY - 30) + 'px';
    del.addEventListener('mouseup', () => { window.deleted++; });
    document.body.appendChild(del);
  }
  choose(o, opt.dataset.value);
});
</script></body></html>"""


@pytest.fixture(scope="module")
def sites():
    """Two servers: the shop on 127.0.0.1 and the payment provider on localhost (another site: its frame runs in
    another process), plus the pages of the widgets."""
    pay = RecordingServer({"GET /pay.html": Reply(PAY_FRAME)})
    shop = RecordingServer({"GET /checkout.html": Reply(CHECKOUT.replace("{frame}", pay.url("pay.html", "localhost"))),
                            "GET /sliders.html": Reply(SLIDERS), "GET /selects.html": Reply(SELECTS)},
                           static=FIXTURES)
    yield shop, pay
    shop.close()
    pay.close()


async def _frame_value(tab, frame_id: str, expr: str):
    sid, ctx = await tab.context_for(frame_id)
    r = await tab.cdp.send("Runtime.evaluate", {"expression": expr, "contextId": ctx, "returnByValue": True},
                           session_id=sid)
    return r["result"].get("value")


def test_a_payment_frame_from_another_site_is_clicked_after_every_reload(sites, harness):
    shop, _ = sites

    async def go(tab):
        out = []
        for load in range(4):
            if load:
                await tab.reload()
            snap = None
            for _ in range(60):  # the frame's document arrives after the page's load on a busy machine
                snap = await tab.snapshot(force=True)
                if snap.find("button", "Pay 12 EUR", exact=True):
                    break
            node = snap.find("button", "Pay 12 EUR", exact=True)[0]
            cross = tab.frames[node.frame_id].cross_process
            r = await tab.click(node.node_id)
            out.append((cross, r, await _frame_value(tab, node.frame_id, "window.paid || 0")))
        return out

    for load, (cross, r, paid) in enumerate(harness.page(shop.url("checkout.html"), go)):
        assert cross, "the payment frame must run out of process"
        assert r.success, (load, r.error_code, r.message)
        assert "Verified" in r.message and "Paid 1" in r.message, (load, r.message)
        assert paid == 1, (load, paid)


def test_a_slider_hidden_inside_its_thumb_is_listed_and_moves_by_its_id(sites, harness):
    shop, _ = sites

    async def go(tab):
        snap = await tab.snapshot()
        payload = json.loads(snap.serialize("semantic").text)["interactive_tree"]
        thumbs = await tab.page.evaluate("[...document.querySelectorAll('.MuiSlider-thumb')].map(t => {"
                                         " const r = t.getBoundingClientRect(); return [r.x + r.width / 2,"
                                         " r.y + r.height / 2]; })")
        tree = snap.serialize("tree").text
        ids = {name: snap.find("slider", name, exact=True)[0].node_id for name in ("Volume", "Bass")}
        results = [await tab.press("ArrowRight", ids["Volume"]), await tab.press("ArrowLeft", ids["Bass"])]
        now = await tab.page.evaluate("[...document.querySelectorAll('.MuiSlider-thumb input')]"
                                      ".map(i => i.getAttribute('aria-valuenow'))")
        return payload, thumbs, tree, ids, results, now

    payload, thumbs, tree, ids, results, now = harness.page(shop.url("sliders.html"), go)
    listed = {e["n"]: e for e in payload if e["r"] == "slider"}
    assert set(listed) == {"Volume", "Bass"}, payload
    for (name, value), (cx, cy) in zip((("Volume", "30"), ("Bass", "50")), thumbs, strict=True):
        e = listed[name]
        assert e["i"] == ids[name] and e["v"] == value, e
        assert abs(e["xy"][0] - cx) <= 1 and abs(e["xy"][1] - cy) <= 1, (e, cx, cy)  # where its thumb is
    assert "clipped away" not in tree and "zero-size" not in tree, tree
    assert all(r.success for r in results), [r.message for r in results]
    assert now == ["31", "49"], now
    # the words say what the key did to the slider, as a person sees the thumb move
    for r, name, value in zip(results, ("Volume", "Bass"), ("31", "49"), strict=True):
        assert f"slider \"{name}\" now holds: '{value}'" in r.message, r.message


def _select(snap, name: str) -> str:
    return snap.find("combobox", name, exact=True)[0].node_id


def test_a_select_that_chooses_on_pointerup_is_recorded_as_the_page_did_it(sites, harness):
    shop, _ = sites
    state = "({picked: window.picked.slice(), deleted: window.deleted, expanded: document.querySelector('#fruit')" \
            ".getAttribute('aria-expanded'), shown: document.querySelector('#picked').textContent})"

    async def go(tab):
        out = {}
        snap = await tab.snapshot()
        out["open"] = (await tab.click(_select(snap, "Fruit")), await tab.page.evaluate(state))
        snap = await tab.snapshot()
        out["mango"] = (await tab.click(snap.find("option", "Mango", exact=True)[0].node_id),
                        await tab.page.evaluate(state))
        # the opening press's own release chooses the option the list put under the pointer
        snap = await tab.snapshot()
        out["size"] = (await tab.click(_select(snap, "Size")), await tab.page.evaluate(state))
        # as the option takes the release, a delete button is put under the pointer
        snap = await tab.snapshot()
        await tab.click(_select(snap, "Plan"))
        snap = await tab.snapshot()
        out["trap"] = (await tab.click(snap.find("option", "Team", exact=True)[0].node_id),
                       await tab.page.evaluate(state))
        return out

    out = harness.page(shop.url("selects.html"), go)
    r, st = out["open"]
    assert r.success, (r.error_code, r.message)
    assert st["expanded"] == "true" and st["picked"] == [], st
    r, st = out["mango"]
    assert st["picked"] == ["fruit:Mango"] and st["shown"] == "Picked mango", st
    assert r.success, (r.error_code, r.message)  # the page chose it: so does the record
    assert "Verified" in r.message and "Picked mango" in r.message, r.message
    r, st = out["size"]
    assert st["picked"] == ["fruit:Mango", "size:Medium"], st
    assert r.success, (r.error_code, r.message)
    r, st = out["trap"]  # the rest of the release goes where the option was, never to the new button
    assert st["deleted"] == 0 and st["picked"][-1] == "plan:Team", st
    assert r.success and "Picked team" in r.message, (r.error_code, r.message)


def test_the_real_radix_select_chooses_and_says_so(harness):
    page = FIXTURES / "real" / "radix-select.html"
    if not page.exists() or not (FIXTURES / "real" / "node_modules" / "@radix-ui" / "react-select").exists():
        pytest.skip("the real Radix Select page is not in the corpus (tests/fixtures/real/radix-select.html)")
    server = RecordingServer({}, static=FIXTURES)
    js = ("[window.fruit, document.querySelector('#fruit').textContent.replace('▾', '').trim(),"
          " document.querySelector('#picked').textContent]")

    async def go(tab):
        await tab.page.wait_for_function("document.querySelector('#fruit')")
        snap = await tab.snapshot()
        opened = await tab.click(_select(snap, "Fruit"))
        snap = await tab.snapshot()
        chose = await tab.click(snap.find("option", "Mango", exact=True)[0].node_id)
        return opened, chose, await tab.page.evaluate(js)

    try:
        opened, chose, st = harness.page(server.url("real/radix-select.html"), go)
    finally:
        server.close()
    assert opened.success, opened.message
    assert st == ["mango", "Mango", "Picked mango"], st
    assert chose.success, (chose.error_code, chose.message)
