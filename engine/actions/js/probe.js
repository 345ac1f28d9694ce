// Called on the target element (this) in its own frame: can it be acted on, and where?
// Returns facts in the frame's own CSS pixels; the caller adds the frame offsets.
//   mode: 'pointer' (click, hover…) | 'focus' (type, press) | 'state' (read facts only)
function probe(KEY, mode) {
  const S = window[KEY];
  // the state of a <label> is the state of the control it labels (checked, value)
  const el = mode === 'state' && this.localName === 'label' && this.control ? this.control : this;
  const squash = (t) => (t || '').replace(/[\s\u200b-\u200d\u2060\ufeff]+/g, ' ').trim();
  const desc = (e) => {
    if (!e || e.nodeType !== 1) return '';
    let d = e.localName + (e.id ? '#' + e.id : '');
    if (!e.id && typeof e.className === 'string' && e.className.trim()) d += '.' + e.className.trim().split(/\s+/).slice(0, 2).join('.');
    const t = squash(e.getAttribute('aria-label') || e.textContent).slice(0, 60);
    return t ? d + ' "' + t + '"' : d;
  };
  const idOf = (e) => { for (let n = e; n; n = n.parentNode || n.host) { if (n.nodeType === 1 && S && S.ids.has(n)) return S.ids.get(n); } return null; };
  // The flat tree: a slotted element's parent is its slot; a shadow root's is its host.
  const flatParent = (n) => n.assignedSlot || n.parentNode || n.host || null;
  const within = (outer, inner) => { for (let n = inner; n; n = flatParent(n)) if (n === outer) return true; return false; };
  const parentEl = (e) => e.parentElement || (e.parentNode && e.parentNode.host) || null;
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
  const roleOf = (e) => (e.getAttribute('role') || '').split(/\s+/)[0].toLowerCase();
  const tag = el.localName, type = (el.getAttribute('type') || '').toLowerCase();
  const role = roleOf(el);
  const secret = !!(S && S.secret(el));
  const facts = {
    connected: el.isConnected, tag, type, role, secret,
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
  // What a custom combobox shows as its value: the text of its visible selection, not the
  // options of its open list (for an input: its value, else the chips beside it in its control).
  const shownText = (root) => {
    const out = [];
    let budget = 400;  // elements: a widget's face is small; never walk a whole page
    const walk = (n) => {
      for (let c = n.firstChild; c && budget > 0; c = c.nextSibling) {
        if (c.nodeType === 3) { out.push(c.data); continue; }
        if (c.nodeType !== 1) continue;
        budget--;
        const ln = c.localName, r = roleOf(c);
        if (ln === 'input' || ln === 'select' || ln === 'textarea' || ln === 'script' || ln === 'style' || ln === 'template' || ln === 'label') continue;
        if (c.hasAttribute('aria-live') || r === 'status' || r === 'log') continue;   // announcements, not the value
        if (r === 'option' && c.getAttribute('aria-selected') !== 'true') continue;
        if (c.checkVisibility && !c.checkVisibility({ visibilityProperty: true, checkOpacity: true }) && getComputedStyle(c).display !== 'contents') continue;
        walk(c);
      }
    };
    walk(root);
    return squash(out.join(' '));
  };
  const comboShown = () => {
    if (tag === 'input' || tag === 'textarea') {
      if (el.value) return el.value;
      // an empty search input: what the widget around it shows (its chosen item sits a few levels up in
      // some libraries, e.g. Ant Design's selection item beside the search box's own wrapper)
      let p = parentEl(el);
      for (let up = 0; p && up < 4; up++, p = parentEl(p)) {
        if (p.querySelectorAll('input, select, textarea').length > 2) break;
        const t = shownText(p);
        if (t.length > 200) break;
        if (t) return t;
      }
      return '';
    }
    return shownText(el).slice(0, 200);
  };
  if (tag === 'input' || tag === 'textarea' || tag === 'select') {
    let v = tag === 'select' ? Array.from(el.selectedOptions || []).map((o) => squash(o.textContent)).join(', ') : el.value;
    if (tag === 'input' && role === 'combobox' && !secret) v = comboShown();
    if (secret) {
      // never leaves the page: a salted fingerprint, enough to tell "changed" from "unchanged"
      if (!S.salt) Object.defineProperty(S, 'salt', { value: Math.random().toString(36).slice(2) });
      let h = 2166136261; const s = S.salt + v;
      for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); }
      facts.valueFp = (h >>> 0).toString(16) + ':' + v.length;
    } else { facts.value = v; facts.valueFp = v; }
  } else if (el.isContentEditable) { facts.value = squash(el.textContent); facts.valueFp = facts.value; }
  else if (role === 'combobox' || role === 'listbox' || (el.getAttribute('aria-haspopup') || 'false') !== 'false' && role !== 'menuitem' ||
    (!role && el.querySelector(':scope > [role="combobox"], :scope > * > [role="combobox"]'))) {
    // a combobox, a listbox, or the box around a library's combobox input (Tom Select's control)
    facts.value = comboShown(); facts.valueFp = facts.value;
  }
  if (mode === 'state' || !el.isConnected) return facts;

  // Visibility: opacity does not stop a click. A transparent but laid-out control (a styled
  // switch, a TodoMVC toggle, a styled file input) is operated where it is, or through its label.
  const shown = (e) => e.checkVisibility ? e.checkVisibility({ visibilityProperty: true }) : !!e.getClientRects().length;
  const opaque = (e) => e.checkVisibility ? e.checkVisibility({ visibilityProperty: true, checkOpacity: true }) : shown(e);
  const CONTROL_ROLES = ['checkbox', 'radio', 'switch', 'button', 'option', 'menuitemcheckbox', 'menuitemradio'];
  const isControl = (e) => /^(input|select|textarea|button)$/.test(e.localName) || CONTROL_ROLES.includes(roleOf(e));
  const usable = (e) => {
    if (!shown(e)) return false;
    if (opaque(e)) return true;
    // transparent itself (not inside a faded-out menu): still there for the pointer
    const p = parentEl(e);
    return isControl(e) && parseFloat(getComputedStyle(e).opacity) === 0 && (!p || opaque(p));
  };
  const sized = (e) => { const r = e.getBoundingClientRect(); return r.width >= 2 && r.height >= 2; };
  const labels = Array.from(el.labels || []).filter((l) => usable(l) && sized(l));
  const toggle = tag === 'input' && (type === 'checkbox' || type === 'radio' || type === 'file');
  let targets;
  if (usable(el) && sized(el)) {
    facts.transparent = !opaque(el);
    // a covered or transparent toggle can still be reached through its label, as a person would
    targets = [el].concat(toggle ? labels : []);
  } else if (mode === 'pointer' && toggle && labels.length) {
    targets = labels;  // a visually hidden checkbox/radio is operated through its label
  } else {
    targets = [el];
  }
  const first = targets[0];
  let r = first.getBoundingClientRect();
  facts.rendered = usable(first) && r.width > 0 && r.height > 0;
  if (!facts.rendered && shown(first) && !opaque(first)) {
    // transparent now, but fading: a menu whose fade-in has not begun to show it yet (a delayed
    // or just-started animation sits at opacity 0). The caller looks again once it has moved on.
    const up = (e) => { const p = flatParent(e); return p && p.nodeType === 11 ? p.host : p; };
    for (let e = first; e && e.nodeType === 1; e = up(e)) {
      if (e.getAnimations && e.getAnimations().some((a) => a.playState === 'running' || a.pending)) { facts.fading = true; break; }
    }
  }
  facts.rect = [r.left, r.top, r.width, r.height];
  facts.vw = window.innerWidth; facts.vh = window.innerHeight;
  if (first !== el) facts.via = 'label';
  if (mode !== 'pointer' || !facts.rendered) return facts;

  // Hit-testing. A hit on the target, its label, a shadow host it lives in, or content slotted
  // into its nearest host lands on the control. A hit on one of its own ancestors only misses
  // it (a round element's corner, a gap between line boxes): not a cover. Anything else covers.
  const hosts = [];
  for (let root = el.getRootNode(); root && root.host; root = root.host.getRootNode()) hosts.push(root.host);
  const allLabels = Array.from(el.labels || []);
  const lands = (h, t) => {
    if (within(el, h) || within(t, h) || allLabels.some((l) => within(l, h)) || hosts.includes(h)) return true;
    if (hosts.length) { for (let n = h.parentNode; n; n = n.parentNode) if (n === hosts[0]) return true; }
    return false;
  };
  // Candidate points: per box of the element (an inline element may wrap over lines), the centre
  // of its part inside the viewport, then four points at a quarter in — inside any ellipse the
  // box holds, so a round button or a date picker's day cell is probed inside its shape.
  const pointsOf = (t) => {
    const pts = [];
    const rects = Array.from(t.getClientRects()).filter((b) => b.width > 0 && b.height > 0).slice(0, 4);
    for (const b of (rects.length ? rects : [t.getBoundingClientRect()])) {
      const x1 = Math.max(b.left, 0), y1 = Math.max(b.top, 0), x2 = Math.min(b.right, innerWidth), y2 = Math.min(b.bottom, innerHeight);
      if (x2 - x1 < 1 || y2 - y1 < 1) continue;
      const w = x2 - x1, h = y2 - y1;
      pts.push([x1 + w / 2, y1 + h / 2], [x1 + w / 4, y1 + h / 4], [x1 + 3 * w / 4, y1 + h / 4],
        [x1 + w / 4, y1 + 3 * h / 4], [x1 + 3 * w / 4, y1 + 3 * h / 4]);
    }
    return pts;
  };
  // When none of those land (a ring, a shape cut out with clip-path), a finer grid over the box.
  const gridOf = (t) => {
    const pts = [];
    const b = t.getBoundingClientRect();
    const x1 = Math.max(b.left, 0), y1 = Math.max(b.top, 0), x2 = Math.min(b.right, innerWidth), y2 = Math.min(b.bottom, innerHeight);
    if (x2 - x1 < 1 || y2 - y1 < 1) return pts;
    for (let i = 1; i < 8; i++) for (let j = 1; j < 8; j++) if (i % 2 || j % 2) pts.push([x1 + (x2 - x1) * i / 8, y1 + (y2 - y1) * j / 8]);
    return pts;
  };
  let cover = null, centre = null, missed = false;
  const tryPoints = (t, pts) => {
    for (const [x, y] of pts) {
      const h = deepHit(x, y);
      if (!h) continue;
      if (lands(h, t)) {
        facts.point = [x, y];
        if (t !== el) { facts.via = 'label'; r = t.getBoundingClientRect(); facts.rect = [r.left, r.top, r.width, r.height]; }
        else delete facts.via;
        return true;
      }
      if (within(h, el)) { missed = true; continue; }  // its own container: a miss, not a cover
      if (cover === null) cover = h;
    }
    return false;
  };
  for (const t of targets) {
    const pts = pointsOf(t);
    if (!pts.length) continue;
    if (centre === null) centre = pts[0];
    if (tryPoints(t, pts)) return facts;
  }
  // Nothing covers it, but those points missed its shape: look closer before giving up on it.
  if (cover === null && centre !== null) for (const t of targets) if (tryPoints(t, gridOf(t))) return facts;
  if (centre === null) { facts.offscreen = true; return facts; }
  facts.center = centre;
  if (cover === null) {
    // Every probe fell on the element's own containers (e.g. it takes no pointer events):
    // a click at its centre goes where a person's would.
    facts.point = centre; facts.missed = missed;
    return facts;
  }
  // Covered: name the cover, and the outermost positioned box it belongs to (a banner, a modal).
  let box = cover;
  for (let n = cover; n && n !== document.body && n !== document.documentElement; n = n.parentElement || (n.parentNode && n.parentNode.host)) {
    const pos = getComputedStyle(n).position;
    if (pos === 'fixed' || pos === 'sticky' || pos === 'absolute') box = n;
  }
  facts.cover = { id: idOf(cover), desc: desc(cover), boxId: idOf(box), boxDesc: desc(box) };
  const buttons = [];
  for (const b of box.querySelectorAll('button, [role="button"], a[href], input[type="button"], input[type="submit"]')) {
    if (buttons.length >= 4) break;
    const name = squash(b.getAttribute('aria-label') || b.textContent || b.value).slice(0, 40);
    if (name && S && S.ids.has(b)) buttons.push([S.ids.get(b), name]);
  }
  facts.cover.buttons = buttons;
  return facts;
}
