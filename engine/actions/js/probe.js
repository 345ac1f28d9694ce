// Called on the target element (this) in its own frame: can it be acted on, and where?
// Returns facts in the frame's own CSS pixels; the caller adds the frame offsets.
//   mode: 'pointer' (click, hover…) | 'focus' (type, press) | 'state' (read facts only)
function probe(KEY, mode) {
  const S = window[KEY];
  let el = this;
  const squash = (t) => (t || '').replace(/\s+/g, ' ').trim();
  const desc = (e) => {
    if (!e || e.nodeType !== 1) return '';
    let d = e.localName + (e.id ? '#' + e.id : '');
    if (!e.id && typeof e.className === 'string' && e.className.trim()) d += '.' + e.className.trim().split(/\s+/).slice(0, 2).join('.');
    const t = squash(e.getAttribute('aria-label') || e.textContent).slice(0, 60);
    return t ? d + ' "' + t + '"' : d;
  };
  const idOf = (e) => { for (let n = e; n; n = n.parentNode || n.host) { if (n.nodeType === 1 && S && S.ids.has(n)) return S.ids.get(n); } return null; };
  const composedContains = (outer, inner) => {
    for (let n = inner; n; n = n.parentNode || n.host) if (n === outer) return true;
    return false;
  };
  const deepHit = (x, y) => {
    let h = document.elementFromPoint(x, y);
    while (h) {
      const root = h.shadowRoot || (S && S.closed.get(h));
      if (!root) break;
      const d = root.elementFromPoint(x, y);
      if (!d || d === h) break;
      h = d;
    }
    return h;
  };
  const tag = el.localName, type = (el.getAttribute('type') || '').toLowerCase();
  const secret = !!(S && S.secret(el));
  const facts = {
    connected: el.isConnected, tag, type, secret,
    disabled: !!(el.matches(':disabled') || el.closest('[aria-disabled="true"]')),
    readonly: !!(el.readOnly || el.getAttribute('aria-readonly') === 'true'),
    editable: (tag === 'input' && !['checkbox', 'radio', 'button', 'submit', 'reset', 'image', 'file', 'range', 'color', 'hidden'].includes(type)) ||
      tag === 'textarea' || el.isContentEditable,
    checked: (tag === 'input' && (type === 'checkbox' || type === 'radio')) ? el.checked :
      (el.getAttribute('aria-checked') === 'true' ? true : el.getAttribute('aria-checked') === 'false' ? false :
        el.getAttribute('aria-pressed') === 'true' ? true : el.getAttribute('aria-pressed') === 'false' ? false : null),
    value: null, valueFp: null,
    inForm: !!(el.form || el.closest('form')),
  };
  if (tag === 'input' || tag === 'textarea' || tag === 'select') {
    const v = tag === 'select' ? Array.from(el.selectedOptions || []).map((o) => squash(o.textContent)).join(', ') : el.value;
    if (secret) {
      // never leaves the page: a salted fingerprint, enough to tell "changed" from "unchanged"
      if (!S.salt) Object.defineProperty(S, 'salt', { value: Math.random().toString(36).slice(2) });
      let h = 2166136261; const s = S.salt + v;
      for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); }
      facts.valueFp = (h >>> 0).toString(16) + ':' + v.length;
    } else { facts.value = v; facts.valueFp = v; }
  } else if (el.isContentEditable) { facts.value = squash(el.textContent); facts.valueFp = facts.value; }
  if (mode === 'state' || !el.isConnected) return facts;

  // A visually hidden native checkbox/radio is operated through its label, as a person would.
  let target = el;
  const visibleNow = (e) => e.checkVisibility ? e.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true }) : !!e.getClientRects().length;
  let r = el.getBoundingClientRect();
  if (mode === 'pointer' && tag === 'input' && (type === 'checkbox' || type === 'radio') && (!visibleNow(el) || r.width < 2 || r.height < 2) && el.labels && el.labels.length) {
    for (const l of el.labels) { if (visibleNow(l)) { target = l; r = l.getBoundingClientRect(); facts.via = 'label'; break; } }
  }
  facts.rendered = visibleNow(target) && r.width > 0 && r.height > 0;
  facts.rect = [r.left, r.top, r.width, r.height];
  facts.vw = window.innerWidth; facts.vh = window.innerHeight;
  if (mode !== 'pointer' || !facts.rendered) return facts;
  // Candidate points: the centre of the part inside the viewport, then four inner points.
  const x1 = Math.max(r.left, 0), y1 = Math.max(r.top, 0), x2 = Math.min(r.right, innerWidth), y2 = Math.min(r.bottom, innerHeight);
  if (x2 - x1 < 1 || y2 - y1 < 1) { facts.offscreen = true; return facts; }
  const pts = [[(x1 + x2) / 2, (y1 + y2) / 2], [x1 + (x2 - x1) / 4, y1 + (y2 - y1) / 4], [x1 + 3 * (x2 - x1) / 4, y1 + (y2 - y1) / 4],
    [x1 + (x2 - x1) / 4, y1 + 3 * (y2 - y1) / 4], [x1 + 3 * (x2 - x1) / 4, y1 + 3 * (y2 - y1) / 4]];
  const ok = (h) => h && (composedContains(target, h) || composedContains(el, h) ||
    (h.localName === 'label' && h.control === el) || (el.labels && Array.from(el.labels).some((l) => composedContains(l, h))));
  let first = null;
  for (const [x, y] of pts) {
    const h = deepHit(x, y);
    if (first === null) first = h;
    if (ok(h)) { facts.point = [x, y]; return facts; }
  }
  // Covered: name the cover, and the outermost positioned box it belongs to (a banner, a modal).
  if (first) {
    let box = first;
    for (let n = first; n && n !== document.body && n !== document.documentElement; n = n.parentElement || (n.parentNode && n.parentNode.host)) {
      const pos = getComputedStyle(n).position;
      if (pos === 'fixed' || pos === 'sticky' || pos === 'absolute') box = n;
    }
    facts.cover = { id: idOf(first), desc: desc(first), boxId: idOf(box), boxDesc: desc(box) };
    const buttons = [];
    for (const b of box.querySelectorAll('button, [role="button"], a[href], input[type="button"], input[type="submit"]')) {
      if (buttons.length >= 4) break;
      const name = squash(b.getAttribute('aria-label') || b.textContent || b.value).slice(0, 40);
      if (name && S && S.ids.has(b)) buttons.push([S.ids.get(b), name]);
    }
    facts.cover.buttons = buttons;
  }
  facts.center = pts[0];
  return facts;
}
