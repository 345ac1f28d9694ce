// Boxes (CSS px, this frame's viewport) of what a picture must not show: secret fields (password,
// one-time code, PIN, CVV, card number, secret, token — by type, autocomplete, name, id, label or
// placeholder) and any text or field value that contains one of the secret values the session
// knows (`values`: each already in every form it may appear in: raw, URL-encoded …).
// Open and closed shadow roots are searched (closed ones through Vigil's page-side state).
function vigilSecretBoxes(KEY, values) {
  const S = window[KEY];
  const VW = window.innerWidth, VH = window.innerHeight;
  const WORDS = /(^|[^a-z0-9])(pin|pins|pincode|cvv|cvc|cvv2|csc|cid|card.?number|cardnumber|cc.?num(ber)?|cc.?csc|credit.?card|secret|token|api.?key|passcode|password|passwort|mot.?de.?passe|contrase(n|ñ)a|otp|one.?time|security.?code|verification.?code|ssn|social.?security|iban)([^a-z0-9]|$)/i;
  const AC = /(cc-number|cc-csc|cc-exp|one-time-code|current-password|new-password)/i;
  const out = [];
  const add = (r, pad) => {
    if (!r || r.width <= 0 || r.height <= 0) return;
    const x1 = Math.max(0, r.left - pad), y1 = Math.max(0, r.top - pad);
    const x2 = Math.min(VW, r.right + pad), y2 = Math.min(VH, r.bottom + pad);
    if (x2 > x1 && y2 > y1) out.push([x1, y1, x2 - x1, y2 - y1]);
  };
  const labelText = (el) => {
    let s = '';
    try { if (el.labels) for (const l of el.labels) s += ' ' + (l.textContent || ''); } catch (e) {}
    const by = el.getAttribute('aria-labelledby');
    if (by) for (const id of by.split(/\s+/)) { const n = id && el.getRootNode().getElementById && el.getRootNode().getElementById(id); if (n) s += ' ' + n.textContent; }
    return s;
  };
  const secretField = (el) => {
    if (S && S.secret && S.secret(el)) return true;
    if ((el.getAttribute('type') || '').toLowerCase() === 'password') return true;
    const ac = el.getAttribute('autocomplete') || '';
    if (AC.test(ac)) return true;
    const hay = [el.getAttribute('name'), el.id, ac, el.getAttribute('aria-label'), el.getAttribute('placeholder'),
      el.getAttribute('data-testid'), labelText(el)].join(' ');
    return WORDS.test(hay.replace(/[_-]+/g, ' '));
  };
  const vals = (values || []).filter((v) => v && v.length >= 1);
  const hasVal = (s) => { if (!s) return false; for (const v of vals) if (s.indexOf(v) >= 0) return true; return false; };
  const roots = [document];
  const hostsOf = (root) => {
    const w = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
    for (let n = w.nextNode(); n; n = w.nextNode()) {
      const sr = n.shadowRoot || (S && S.closed && S.closed.get(n));
      if (sr) roots.push(sr);
    }
  };
  for (let i = 0; i < roots.length; i++) {
    const root = roots[i];
    hostsOf(root);
    for (const el of root.querySelectorAll('input, textarea, [contenteditable=""], [contenteditable="true"]')) {
      const t = (el.getAttribute('type') || '').toLowerCase();
      if (t === 'hidden' || t === 'checkbox' || t === 'radio' || t === 'submit' || t === 'button' || t === 'image') continue;
      const v = el.localName === 'input' || el.localName === 'textarea' ? el.value : el.textContent;
      if (secretField(el) || hasVal(v)) add(el.getBoundingClientRect(), 2);
    }
    if (!vals.length) continue;
    // one pass over the root's whole text first: a page (or shadow root) that shows none of the values
    // is not walked node by node (on a 200k-element page that walk is most of the cost of a frame)
    if (!hasVal(root === document ? (document.documentElement && document.documentElement.textContent) : root.textContent)) continue;
    const tw = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = tw.nextNode(); n; n = tw.nextNode()) {
      const d = n.data;
      if (!d || !hasVal(d)) continue;
      const p = n.parentElement;
      if (p && (p.localName === 'script' || p.localName === 'style' || p.localName === 'title')) continue;
      for (const v of vals) {
        let at = d.indexOf(v);
        while (at >= 0) {
          const r = document.createRange();
          r.setStart(n, at); r.setEnd(n, at + v.length);
          for (const cr of r.getClientRects()) add(cr, 3);
          at = d.indexOf(v, at + v.length);
        }
      }
    }
  }
  return out;
}
