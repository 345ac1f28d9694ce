// What a step will do, computed on the named element (this) before any input goes out: the element the
// input really reaches (a hit test at the element's point, a <label>'s control, the focused element for
// keys, a combobox's aria-activedescendant for Enter and Space) and what the browser's default action
// does with it (a form submission with the form owner and the submitter's overrides, implicit submission
// by Enter, a navigation, a new window, a download, a box checked, an option chosen). Words are taken as
// a person reads them: bidi overrides reversed, flex and grid `order` applied, letters over spans joined.
//   kind: click | double_click | press | type | select | check | uncheck | upload | hover
//   key: the pressed key as the key sender names it ("Enter", " ", …); option: the option to select (for a
//   typing: the text typed);
//   submit: the typing ends with Enter (the form's implicit submission)
function effectOf(KEY, kind, key, option, submit) {
  const S = window[KEY];
  const doc = this.ownerDocument || document;
  const win = doc.defaultView || window;
  const squash = (t) => (t || '').replace(/[\s\u200b-\u200d\u2060\ufeff]+/g, ' ').trim();
  const cut = (t, n) => { t = squash(t); return t.length > n ? t.slice(0, n - 1) + '…' : t; };
  const isEl = (n) => !!n && n.nodeType === 1;
  const flatParent = (n) => n.assignedSlot || n.parentNode || n.host || null;
  const upEl = (n) => { let p = flatParent(n); while (p && !isEl(p)) p = flatParent(p); return p; };
  const within = (outer, inner) => { for (let n = inner; n; n = flatParent(n)) if (n === outer) return true; return false; };
  const roleAttr = (e) => (e.getAttribute('role') || '').split(/\s+/)[0].toLowerCase();
  const typeOf = (e) => (e.getAttribute('type') || '').toLowerCase();
  const style = (e) => { try { return win.getComputedStyle(e); } catch (x) { return null; } };

  // -- words as rendered ---------------------------------------------------------------------------
  const RLO = '\u202e', LRO = '\u202d', PDF = '\u202c';
  const controls = (t) => {
    // a right-to-left override reverses the characters it spans (up to its pop or the end of the text)
    if (t.indexOf(RLO) < 0) return t.replace(/[\u202a-\u202e\u2066-\u2069]/g, '');
    let out = '', i = 0;
    while (i < t.length) {
      const s = t.indexOf(RLO, i);
      if (s < 0) { out += t.slice(i); break; }
      out += t.slice(i, s);
      let e = t.indexOf(PDF, s + 1);
      if (e < 0) e = t.length;
      out += Array.from(t.slice(s + 1, e)).reverse().join('');
      i = e + 1;
    }
    return out.replace(/[\u202a-\u202e\u2066-\u2069]/g, '').replace(LRO, '');
  };
  const pseudo = (e, which) => {
    try {
      const c = win.getComputedStyle(e, which).content;
      const m = /^"((?:[^"\\]|\\.)*)"$/.exec(c || '');
      return m ? m[1].replace(/\\(.)/g, '$1') : '';
    } catch (x) { return ''; }
  };
  const rendered = (root, limit) => {
    let out = '';
    let budget = 600;
    const walk = (n) => {
      if (out.length > limit || budget-- <= 0) return;
      if (n.nodeType === 3) {
        let t = n.data;
        const p = n.parentElement;
        const cs = p && style(p);
        if (cs && cs.direction === 'rtl' && /override/.test(cs.unicodeBidi)) t = Array.from(t).reverse().join('');
        out += controls(t);
        return;
      }
      if (!isEl(n)) return;
      const ln = n.localName;
      if (ln === 'script' || ln === 'style' || ln === 'template' || ln === 'noscript') return;
      const cs = style(n);
      if (cs && cs.display === 'none') return;
      if (ln === 'input') {
        const t = typeOf(n);
        if (t === 'button' || t === 'submit' || t === 'reset') out += ' ' + (n.value || '') + ' ';
        else if (t === 'image') out += ' ' + (n.alt || '') + ' ';
        return;
      }
      if (ln === 'img') { out += ' ' + (n.getAttribute('alt') || '') + ' '; return; }
      if (ln === 'select' || ln === 'textarea') return;
      const block = cs && !/^inline|contents/.test(cs.display);
      if (block) out += ' ';
      out += pseudo(n, '::before');
      let kids = [];
      const host = n.shadowRoot || (S && S.closed && S.closed.get(n));
      if (ln === 'slot') kids = n.assignedNodes({ flatten: true });
      if (!kids.length) kids = Array.from((host || n).childNodes);
      if (cs && /flex|grid/.test(cs.display)) {
        // the order a person sees: `order`, then a reversed direction
        const ord = (k) => { const s = isEl(k) && style(k); return s ? parseInt(s.order, 10) || 0 : 0; };
        kids = kids.map((k, i) => [ord(k), i, k]).sort((a, b) => a[0] - b[0] || a[1] - b[1]).map((x) => x[2]);
        if (/reverse/.test(cs.flexDirection || '')) kids.reverse();
        // items drawn edge to edge read as one word; items apart, as words
        let prev = null;
        for (const k of kids) {
          const r = isEl(k) ? k.getBoundingClientRect() : null;
          if (prev && r && r.width && !(Math.abs(r.left - prev.right) < 1.5 && Math.abs(r.top - prev.top) < 4)) out += ' ';
          const before = out.length;
          if (isEl(k)) {
            // an item is laid out as a block, yet its inside may be one run of letters: walk it inline
            const ks = style(k);
            if (ks && ks.display === 'none') continue;
            out += pseudo(k, '::before');
            const kh = k.shadowRoot || (S && S.closed && S.closed.get(k));
            for (const c of Array.from((kh || k).childNodes)) walk(c);
            out += pseudo(k, '::after');
          } else walk(k);
          if (out.length > before && r && r.width) prev = r;
        }
      } else {
        for (const k of kids) walk(k);
      }
      out += pseudo(n, '::after');
      if (block) out += ' ';
    };
    walk(root);
    return cut(out, limit);
  };

  // -- naming an element -------------------------------------------------------------------------
  const byIds = (e, attr) => {
    const ids = (e.getAttribute(attr) || '').split(/\s+/).filter(Boolean).slice(0, 8);
    const root = e.getRootNode();
    return ids.map((i) => { const t = root.getElementById ? root.getElementById(i) : doc.getElementById(i); return t ? rendered(t, 160) : ''; }).join(' ');
  };
  const IMPLICIT = { a: 'link', button: 'button', select: 'combobox', textarea: 'textbox', option: 'option',
    summary: 'button', label: 'label', form: 'form', dialog: 'dialog' };
  const roleOf = (e) => {
    const r = roleAttr(e);
    if (r) return r;
    if (e.localName === 'input') {
      const t = typeOf(e) || 'text';
      return { checkbox: 'checkbox', radio: 'radio', button: 'button', submit: 'button', reset: 'button', image: 'button',
        range: 'slider', search: 'searchbox', file: 'button', number: 'spinbutton' }[t] || 'textbox';
    }
    if (e.localName === 'a' && !e.hasAttribute('href')) return 'generic';
    return IMPLICIT[e.localName] || e.localName;
  };
  const labelsOf = (e) => { try { return e.labels ? Array.from(e.labels) : []; } catch (x) { return []; } };
  const nameOf = (e) => {
    // what a person reads on it first (the page can name an element one thing and show another: the policy
    // judges both), then what it is called
    const aria = squash(e.getAttribute('aria-label'));
    const lb = byIds(e, 'aria-labelledby');
    const shown = rendered(e, 160);
    const labels = labelsOf(e).map((l) => rendered(l, 120)).join(' ');
    const ln = e.localName;
    if (ln === 'input' || ln === 'select' || ln === 'textarea') {
      const t = typeOf(e);
      if (ln === 'input' && (t === 'button' || t === 'submit' || t === 'reset')) return cut(e.value || aria || lb, 120);
      // every name it is given (a label far away may say one thing and its aria-label another)
      const given = [];
      for (const w of [labels, aria, lb]) if (w && !given.some((g) => g.toLowerCase().includes(w.toLowerCase()))) given.push(w);
      return cut(given.join(' / ') || e.getAttribute('placeholder') || e.getAttribute('title') || e.getAttribute('name') || '', 120);
    }
    const words = [shown, aria, lb].filter(Boolean);
    const seen = [];
    for (const w of words) if (!seen.some((s) => s.toLowerCase().includes(w.toLowerCase()))) seen.push(w);
    return cut(seen.join(' / ') || e.getAttribute('title') || '', 160);
  };
  const idOf = (e) => { for (let n = e; n; n = flatParent(n)) { if (isEl(n) && S && S.ids && S.ids.has(n)) return S.ids.get(n); } return null; };
  const ownId = (e) => (S && S.ids && S.ids.has(e) ? S.ids.get(e) : null);
  const receiverOf = (e, via) => ({ role: roleOf(e), name: nameOf(e), tag: e.localName, id: cut(e.id || '', 40),
    ref: ownId(e) || idOf(e), via: via || null });

  // -- what activates what ------------------------------------------------------------------------
  const SUBMITS = (e) => (e.localName === 'button' && !['button', 'reset', 'menu'].includes(typeOf(e))) ||
    (e.localName === 'input' && (typeOf(e) === 'submit' || typeOf(e) === 'image'));
  const ACT_ROLES = { button: 1, link: 1, checkbox: 1, radio: 1, switch: 1, menuitem: 1, menuitemcheckbox: 1,
    menuitemradio: 1, option: 1, tab: 1, treeitem: 1 };
  const activatable = (e) => {
    const ln = e.localName;
    if ((ln === 'a' || ln === 'area') && e.hasAttribute('href')) return true;
    if (ln === 'button' || ln === 'summary' || ln === 'label' || ln === 'select' || ln === 'textarea') return true;
    if (ln === 'input' && typeOf(e) !== 'hidden') return true;
    return ACT_ROLES[roleAttr(e)] === 1;
  };
  const INTERACTIVE = (e) => ['a', 'button', 'input', 'select', 'textarea', 'details', 'embed', 'iframe', 'label', 'audio', 'video'].includes(e.localName);
  // the element a click on `hit` activates: its nearest activatable ancestor (up to `top`), a label's control
  const activatedBy = (hit, top) => {
    let e = hit, via = null;
    while (e && !activatable(e)) { if (e === top) break; e = upEl(e); }
    if (!e || !activatable(e)) return [top, null];
    if (e.localName === 'label') {
      const c = e.control;
      // a click on interactive content inside the label is that content's own (it does not reach the control)
      let inner = false;
      for (let n = hit; n && n !== e; n = upEl(n)) if (INTERACTIVE(n)) inner = true;
      if (c && !inner) return [c, 'label'];
    }
    return [e, via];
  };
  const deepHit = (x, y) => {
    let h = doc.elementFromPoint(x, y);
    while (h) {
      const root = h.shadowRoot || (S && S.closed && S.closed.get(h));
      if (!root) break;
      const d = root.elementFromPoint(x, y);
      if (!d || d === h) break;
      h = d;
    }
    return h;
  };
  const deepActive = () => {
    let a = doc.activeElement;
    while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
    return a;
  };
  const pointOf = (e) => {
    const vw = win.innerWidth, vh = win.innerHeight;
    for (const r of Array.from(e.getClientRects())) {
      const l = Math.max(r.left, 0), t = Math.max(r.top, 0), rr = Math.min(r.right, vw), b = Math.min(r.bottom, vh);
      if (rr - l >= 1 && b - t >= 1) return [(l + rr) / 2, (t + b) / 2];
    }
    return null;
  };

  // -- forms ----------------------------------------------------------------------------------------
  const SECRETISH = /one-time-code|cc-number|cc-csc|cc-exp|current-password|new-password/;
  const secretField = (e) => !!(S && S.secret && S.secret(e)) || typeOf(e) === 'password' ||
    SECRETISH.test((e.getAttribute('autocomplete') || '').toLowerCase());
  const formWords = (f) => {
    const parts = [];
    const named = squash(f.getAttribute('aria-label')) || byIds(f, 'aria-labelledby') || squash(f.getAttribute('title'));
    if (named) parts.push(named);
    const lg = f.querySelector('legend, h1, h2, h3, h4, h5, h6, [role=heading]');
    if (lg) parts.push(rendered(lg, 80));
    else {
      // the heading just before the form, as a person reads the page
      let p = f.previousElementSibling, hops = 0;
      while (p && hops++ < 3 && !/^h[1-6]$/.test(p.localName)) p = p.previousElementSibling;
      if (p && /^h[1-6]$/.test(p.localName)) parts.push(rendered(p, 80));
    }
    const buttons = [];
    for (const b of Array.from(f.elements || [])) {
      if (buttons.length >= 4) break;
      if (SUBMITS(b) && b.getClientRects().length) buttons.push(nameOf(b));
    }
    if (buttons.length) parts.push('buttons: ' + buttons.join(', '));
    return cut(parts.join('; '), 200);
  };
  let typed = null;   // [field, the value it will hold]: a typing's submission carries what was typed
  const queryOf = (f, submitter) => {
    let fd;
    try { fd = submitter ? new FormData(f, submitter) : new FormData(f); } catch (x) { fd = new FormData(f); }
    const secretNames = new Set();
    for (const e of Array.from(f.elements || [])) if (e.name && secretField(e)) secretNames.add(e.name);
    const q = [];
    if (typed && typed[0].name && typed[0].form === f) fd.set(typed[0].name, typed[1]);
    for (const [k, v] of fd.entries()) {
      if (q.length >= 12) break;
      const val = typeof v === 'string' ? (secretNames.has(k) ? '••••' : v.slice(0, 40)) : '(file)';
      q.push(encodeURIComponent(k) + '=' + encodeURIComponent(val));
    }
    return q.join('&');
  };
  const submission = (f, submitter, implicit) => {
    const over = (a) => submitter && submitter.hasAttribute(a);
    let method = (over('formmethod') ? submitter.formMethod : f.method) || 'get';
    const action = over('formaction') ? submitter.formAction : f.action;
    const target = (over('formtarget') ? submitter.formTarget : f.target) || '';
    let url = action;
    if (method === 'get') {
      const u = new URL(action, doc.baseURI);
      u.search = queryOf(f, submitter);
      url = u.href;
    }
    return { method: method.toUpperCase(), url, target, implicit: !!implicit,
      submitter: submitter ? nameOf(submitter) : '', form: formWords(f) };
  };
  const defaultButton = (f) => { for (const e of Array.from(f.elements || [])) if (SUBMITS(e)) return e; return null; };
  const BLOCKS_IMPLICIT = /^(text|search|url|tel|email|password|date|month|week|time|datetime-local|number)$/;
  const NO_ENTER = /^(button|submit|reset|image|file|color|hidden)$/;
  // Enter in a field of a form: its default button's submission, else the form's when it has one text field
  const implicitSubmission = (field) => {
    const f = field.form;
    if (!f) return null;
    const b = defaultButton(f);
    if (b) return b.matches(':disabled') ? null : submission(f, b, true);
    let blocking = 0;
    for (const e of Array.from(f.elements || [])) if (e.localName === 'input' && BLOCKS_IMPLICIT.test(typeOf(e) || 'text')) blocking++;
    return blocking === 1 ? submission(f, null, true) : null;
  };

  // -- keys that choose --------------------------------------------------------------------------------
  // The option an arrow, Home/End or a letter makes current on a closed one-line select, or the radio an arrow
  // checks in its group; null when the key chooses nothing.
  const chosenBy = (e, k) => {
    const ln = e.localName;
    const arrows = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1, PageDown: 1, PageUp: -1 };
    if (ln === 'select' && !e.multiple && (e.size || 1) <= 1) {
      const opts = Array.from(e.options || []).filter((o) => !o.disabled);
      if (!opts.length) return null;
      const cur = opts.indexOf(e.options[e.selectedIndex]);
      let i = -1;
      if (k === 'Home') i = 0;
      else if (k === 'End') i = opts.length - 1;
      else if (arrows[k]) i = Math.max(0, Math.min(opts.length - 1, cur + arrows[k]));
      else if (k.length === 1 && /\S/.test(k)) {
        const low = k.toLowerCase();
        for (let j = 1; j <= opts.length && i < 0; j++) {
          const o = opts[(cur + j) % opts.length];
          if (squash(o.label || o.text).toLowerCase().startsWith(low)) i = (cur + j) % opts.length;
        }
      }
      return i >= 0 && i !== cur ? opts[i] : null;
    }
    if (ln === 'input' && typeOf(e) === 'radio' && arrows[k] && e.name) {
      const scope = e.form || e.getRootNode();
      const group = Array.from(scope.querySelectorAll ? scope.querySelectorAll('input[type=radio]') : [])
        .filter((r) => r.name === e.name && !r.disabled && (r.form || null) === (e.form || null));
      const i = group.indexOf(e);
      if (i < 0 || group.length < 2) return null;
      return group[(i + arrows[k] + group.length) % group.length];
    }
    return null;
  };

  // -- the effect of activating an element (a click, Enter on a button or link, Space on a button or box) --
  const activation = (e, via, out) => {
    out.receiver = receiverOf(e, via);
    const ln = e.localName;
    if ((ln === 'a' || ln === 'area') && e.hasAttribute('href')) {
      const tgt = (e.getAttribute('target') || '').toLowerCase();
      out.url = e.href;
      out.words = nameOf(e);
      out.kind = e.hasAttribute('download') ? 'download' : (tgt && tgt !== '_self' && tgt !== '_top' && tgt !== '_parent') ? 'new_window' : 'navigate';
      return out;
    }
    if (SUBMITS(e)) {
      if (e.form && !e.matches(':disabled')) {
        out.kind = 'submit';
        out.submission = submission(e.form, e, false);
        out.words = out.submission.submitter;
      } else { out.kind = 'activate'; out.words = nameOf(e); }
      return out;
    }
    const t = typeOf(e);
    if (ln === 'input' && (t === 'checkbox' || t === 'radio')) {
      out.kind = 'toggle';
      out.state = t === 'radio' || !e.checked ? 'checked' : 'unchecked';
      out.words = nameOf(e);
      return out;
    }
    const r = roleAttr(e);
    if (r === 'checkbox' || r === 'switch' || r === 'menuitemcheckbox' || r === 'radio' || r === 'menuitemradio') {
      out.kind = 'toggle';
      out.state = e.getAttribute('aria-checked') === 'true' && r !== 'radio' && r !== 'menuitemradio' ? 'unchecked' : 'checked';
      out.words = nameOf(e);
      return out;
    }
    if (ln === 'input' && t === 'reset' && e.form) { out.kind = 'activate'; out.words = 'resets the form ' + formWords(e.form); return out; }
    out.kind = 'activate';
    out.words = nameOf(e);
    return out;
  };

  const out = { kind: 'none', receiver: null, words: '', url: '', state: '', submission: null, notes: [],
    secret: false, fills: false };
  let el = this;
  const K = key || '';
  if (kind === 'press' && !(this instanceof win.Element)) el = deepActive();
  if (!el || !isEl(el)) return out;

  if (kind === 'click' || kind === 'double_click' || kind === 'hover' || kind === 'check' || kind === 'uncheck') {
    let target = el, via = null;
    const p = pointOf(el);
    if (p) {
      const hit = deepHit(p[0], p[1]);
      if (hit && !within(el, hit) && !within(hit, el)) {
        out.notes.push('covered at its centre by ' + roleOf(hit) + ' "' + nameOf(hit).slice(0, 60) + '"');
      } else if (hit && within(el, hit) && hit !== el) {
        // a transparent child or overlay inside the named element takes the press
        const [a] = activatedBy(hit, el);
        if (a && a !== el && activatable(a)) { target = a; via = 'inner element'; }
      }
    }
    if (target === el && el.localName === 'label' && el.control) { target = el.control; via = 'label'; }
    else if (target === el && !activatable(el)) {
      // a click on plain content goes to the activatable element around it (a link, a button, a label's control)
      const [a, v] = activatedBy(el, null);
      if (a && a !== el) { target = a; via = v || 'the element around it'; }
    }
    if (kind === 'hover') { out.receiver = receiverOf(target, via); return out; }
    activation(target, via, out);
    if (kind === 'check' || kind === 'uncheck') { out.kind = out.kind === 'toggle' ? 'toggle' : out.kind; if (out.kind === 'toggle') out.state = kind === 'check' ? 'checked' : 'unchecked'; }
    return out;
  }

  if (kind === 'press') {
    // keys go to the element that has focus when they arrive (the named one is focused first)
    const via = this instanceof win.Element ? null : 'focus';
    const enter = K === 'Enter', space = K === ' ';
    const moved = chosenBy(el, K);
    if (moved) {
      // a key that chooses: an arrow or a letter on a closed select, an arrow in a radio group
      out.receiver = receiverOf(el, via);
      out.kind = moved.localName === 'option' ? 'select' : 'toggle';
      out.words = moved.localName === 'option' ? cut(moved.label || moved.text, 120) : nameOf(moved);
      if (out.kind === 'toggle') { out.state = 'checked'; out.receiver = receiverOf(moved, 'arrow key'); }
      return out;
    }
    if (!enter && !space) { out.receiver = receiverOf(el, via); return out; }
    const ad = el.getAttribute('aria-activedescendant');
    if (ad) {
      const root = el.getRootNode();
      const opt = root.getElementById ? root.getElementById(ad) : doc.getElementById(ad);
      if (opt) {
        // Enter or Space in a combobox, listbox, menu or palette runs its highlighted entry
        out.kind = 'activate';
        out.receiver = receiverOf(opt, 'active option');
        out.words = nameOf(opt);
        const link = opt.closest && opt.closest('a[href]');
        if (link) { out.kind = 'navigate'; out.url = link.href; }
        return out;
      }
    }
    const ln = el.localName, t = typeOf(el);
    if (enter) {
      if ((ln === 'a' || ln === 'area') && el.hasAttribute('href')) return activation(el, via, out);
      if (ln === 'button' || (ln === 'input' && /^(submit|image|button|reset)$/.test(t)) || ln === 'summary') return activation(el, via, out);
      if (ln === 'input' && !NO_ENTER.test(t)) {
        out.receiver = receiverOf(el, via);
        const s = implicitSubmission(el);
        if (s) { out.kind = 'submit'; out.submission = s; out.words = s.submitter || s.form; }
        return out;
      }
      if (ACT_ROLES[roleAttr(el)] === 1 && roleAttr(el) !== 'checkbox' && roleAttr(el) !== 'radio') return activation(el, via, out);
      out.receiver = receiverOf(el, via);
      return out;
    }
    // Space: buttons, boxes and radios (native or by role)
    if (ln === 'button' || (ln === 'input' && /^(submit|image|button|reset|checkbox|radio)$/.test(t)) || ln === 'summary' ||
        /^(button|checkbox|radio|switch|menuitem|menuitemcheckbox|menuitemradio|option|tab)$/.test(roleAttr(el))) return activation(el, via, out);
    out.receiver = receiverOf(el, via);
    return out;
  }

  if (kind === 'type') {
    const f = el.localName === 'label' && el.control ? el.control : el;
    out.kind = 'type';
    out.receiver = receiverOf(f, f === el ? null : 'label');
    out.secret = secretField(f);
    const ac = (f.getAttribute('autocomplete') || '').toLowerCase();
    const hint = (f.getAttribute('name') || '') + ' ' + (f.id || '') + ' ' + out.receiver.name;
    // a code or card field: pages commonly submit it themselves once it is full
    out.fills = /one-time-code|cc-number|cc-csc/.test(ac) || (out.secret && typeOf(f) !== 'password') ||
      (/\b(otp|one.?time|verification|verify|code|pin|cvc|cvv|security code|card number)\b/i.test(hint) &&
       (f.getAttribute('inputmode') === 'numeric' || f.maxLength > 0 && f.maxLength <= 8 || typeOf(f) === 'tel'));
    if (submit) {
      typed = [f, option || ''];
      const s = implicitSubmission(f);
      if (s) { out.submission = s; return out; }
    }
    if (out.fills && f.form) {
      const s = implicitSubmission(f) || (f.form ? submission(f.form, defaultButton(f.form), true) : null);
      if (s) { s.on_fill = true; s.implicit = false; out.submission = s; }
    }
    return out;
  }

  if (kind === 'select') {
    out.kind = 'select';
    out.receiver = receiverOf(el, null);
    const want = squash(option).toLowerCase();
    if (el.localName === 'select') {
      const opts = Array.from(el.options || []);
      const o = opts.find((x) => squash(x.label || x.text).toLowerCase() === want) ||
        opts.find((x) => squash(x.value).toLowerCase() === want) ||
        opts.find((x) => squash(x.label || x.text).toLowerCase().includes(want));
      out.words = o ? cut(o.label || o.text, 120) : cut(option, 120);
    } else out.words = cut(option, 120);
    return out;
  }

  if (kind === 'upload') {
    const f = el.localName === 'label' && el.control ? el.control : el;
    out.kind = 'upload';
    out.receiver = receiverOf(f, f === el ? null : 'label');
    out.words = out.receiver.name;
    return out;
  }
  out.receiver = receiverOf(el, null);
  return out;
}
