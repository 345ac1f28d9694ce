// Installed into every document of a controlled tab (main world), before page scripts run
// when possible. Holds Vigil's per-document state under a non-enumerable, per-launch key:
//   ids/byId/info : stable node IDs (element identity → ID, ID → WeakRef, ID → match key)
//   closed        : closed shadow roots, recorded by wrapping Element.prototype.attachShadow
//   listeners     : elements given click-like listeners through addEventListener
//   ver           : bumped on any mutation / input / scroll, so a cached snapshot can be reused
//   muts, lastMut : count and time (Date.now) of real DOM mutations, for stability waits
//   events        : the mutation stream — a rolling buffer of meaningful changes (toasts,
//                   errors, fields marked invalid, elements shown or removed), caught even when
//                   they vanish before anyone looks. Secret field values are never recorded.
// It is idempotent: running it twice in one document changes nothing.
(function install(KEY) {
  if (Object.prototype.hasOwnProperty.call(window, KEY)) return;
  const state = {
    ids: new WeakMap(), byId: new Map(), info: new Map(), next: 1,
    closed: new WeakMap(), noRoot: new WeakSet(), listeners: new WeakMap(),
    ver: 0, lastFrames: [], suspects: [], events: [],
  };
  Object.defineProperty(window, KEY, { value: state, enumerable: false, configurable: false, writable: false });
  // A function's source as the browser has it, with Function.prototype.toString as it was before page scripts ran
  // (a page may replace it): engine.actions.input tells Vigil's own key listeners from the page's by it.
  const toSource = Function.prototype.toString, apply = Reflect.apply;
  Object.defineProperty(state, 'source', { value: (f) => apply(toSource, f, []), enumerable: false,
                                           configurable: false, writable: false });
  const CLICKY = new Set(['click', 'mousedown', 'mouseup', 'pointerdown', 'pointerup', 'dblclick', 'touchstart']);
  const disguise = (fn, native) => {
    try { Object.defineProperty(fn, 'toString', { value: () => Function.prototype.toString.call(native), enumerable: false }); } catch (e) {}
    return fn;
  };
  const origAttach = Element.prototype.attachShadow;
  if (origAttach) {
    const wrapped = function attachShadow(init) {
      const root = origAttach.call(this, init);
      if (init && init.mode === 'closed') state.closed.set(this, root);
      if (state.hook) state.hook(this);   // the host now renders its shadow tree (incremental walks)
      return root;
    };
    Element.prototype.attachShadow = disguise(wrapped, origAttach);
  }
  const proto = EventTarget.prototype;
  const origAdd = proto.addEventListener, origRemove = proto.removeEventListener;
  proto.addEventListener = disguise(function addEventListener(type, fn, opts) {
    if (CLICKY.has(type) && this instanceof Element) {
      state.listeners.set(this, (state.listeners.get(this) || 0) + 1);
      if (state.hook) state.hook(this);
    }
    return origAdd.call(this, type, fn, opts);
  }, origAdd);
  proto.removeEventListener = disguise(function removeEventListener(type, fn, opts) {
    if (CLICKY.has(type) && this instanceof Element && state.listeners.has(this)) {
      const n = state.listeners.get(this) - 1;
      if (n <= 0) state.listeners.delete(this); else state.listeners.set(this, n);
      if (state.hook) state.hook(this);
    }
    return origRemove.call(this, type, fn, opts);
  }, origRemove);
  const bump = () => { state.ver++; };

  // ---- secrets: password and one-time-code fields (shared with the walker) ----------------
  // Secret fields: passwords, one-time codes, and fields whose name, id, autocomplete, aria-label or
  // placeholder says PIN, CVV, card number, secret or token (keep in step with engine/vision/js/secret_boxes.js).
  const SECRET_RX = /(^|[^a-z])(otp|one.?time|2fa|totp|mfa|passcode|pin|pin.?code|verification.?code|security.?code|cvv2?|cvc|csc|card.?number|cardnumber|cc.?num(ber)?|cc.?csc|secret|token|api.?key)([^a-z]|$)/i;
  state.secret = function (el) {
    const tag = el.localName;
    if (tag !== 'input' && tag !== 'textarea') return false;
    const type = (el.getAttribute('type') || '').toLowerCase();
    if (type === 'password') return true;
    if (type === 'hidden' || type === 'checkbox' || type === 'radio' || type === 'submit' || type === 'button') return false;
    const ac = (el.getAttribute('autocomplete') || '').toLowerCase();
    if (ac.indexOf('one-time-code') >= 0 || ac.indexOf('current-password') >= 0 || ac.indexOf('new-password') >= 0 ||
        ac.indexOf('cc-number') >= 0 || ac.indexOf('cc-csc') >= 0) return true;
    return SECRET_RX.test(((el.getAttribute('name') || '') + ' ' + (el.id || '') + ' ' + ac + ' ' +
      (el.getAttribute('aria-label') || '') + ' ' + (el.getAttribute('placeholder') || '')).replace(/[_-]+/g, ' '));
  };

  // ---- mutation stream ---------------------------------------------------------------------
  const MAX_EVENTS = 80, PER_BATCH = 8, MAX_TEXT = 160;
  state.muts = 0; state.lastMut = Date.now();
  const SKIP = new Set(['script', 'style', 'link', 'meta', 'noscript', 'template', 'head', 'title', 'br', 'svg', 'path']);
  const RX = [
    // (kept in step with engine/observe/changes.py ERROR_RX)
    ['error', /\b(error|errors|invalid|fail(ed|ure)?|incorrect|denied|(?<![*(]\s?)required(?!\))|not valid|wrong|unable|cannot|can['\u2019]t|could ?n['\u2019]?o?t|problem|expired|rejected|forbidden|not found|(is|are|was) (already )?taken|already (exists|in use|registered|taken|used)|not available|unavailable|too (short|long|many|few)|must (be|contain|include|have|match)|does ?n['\u2019]?o?t match|please (enter|choose|select|provide|fill)|no longer|not allowed|try again)\b/i],
    ['success', /\b(success(ful(ly)?)?|saved|thank(s| you)|welcome|created|completed?|done|added|submitted|confirmed|updated|sent|approved|subscribed)\b/i],
    ['warning', /\b(warning|caution|careful|attention|are you sure)\b/i],
    ['loading', /\b(loading|please wait|processing|saving|submitting|searching|fetching)\b/i],
  ];
  const CLS = [['error', /(^|[-_ ])(error|danger|invalid|fail)/i], ['success', /(^|[-_ ])(success|ok|saved|done)([-_ ]|$)/i],
    ['warning', /(^|[-_ ])(warn|warning|caution)/i], ['loading', /(^|[-_ ])(loading|spinner|busy|skeleton)/i]];
  const NOTICE = /(^|[-_ ])(toast|snack|alert|notif|message|msg|flash|banner|notice|callout|feedback|status|error|success|warning)/i;
  const squash = (t) => (t || '').replace(/\s+/g, ' ').trim();
  // An element's words as a person reads them: textContent without the text of style sheets, scripts, <noscript>,
  // <template> and the title (a new document's <html> or <body> carried its CSS and JS into the events). The walk
  // runs only when such an element is inside, and stops after `max` characters.
  const NO_TEXT = new Set(['style', 'script', 'noscript', 'template', 'title']);
  const NO_TEXT_SEL = 'style,script,noscript,template,title';
  const readText = (el, max) => {
    if (NO_TEXT.has(el.localName)) return '';
    const all = el.textContent || '';
    if (!all || !el.firstElementChild || !el.querySelector(NO_TEXT_SEL)) return all;
    let out = '';
    const w = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let n = w.nextNode(); n && out.length <= max; n = w.nextNode()) {
      const p = n.parentNode;
      if (!(p && NO_TEXT.has(p.localName))) out += n.data;
    }
    return out;
  };
  const shortText = (el) => { const t = squash(readText(el, 4 * MAX_TEXT)); return t.length > MAX_TEXT ? t.slice(0, MAX_TEXT) + '\u2026' : t; };
  // Red text (a form error shown only by its colour): red well above green and blue.
  const reddish = (el) => {
    try {
      const m = /rgba?\((\d+), (\d+), (\d+)/.exec(getComputedStyle(el).color);
      return !!m && +m[1] >= 150 && +m[1] - Math.max(+m[2], +m[3]) >= 90;
    } catch (e) { return false; }
  };
  const classify = (el, text) => {
    const role = el.getAttribute && (el.getAttribute('role') || '');
    const cls = (typeof el.className === 'string' ? el.className : '') + ' ' + (el.id || '');
    for (const [c, rx] of CLS) if (rx.test(cls)) return c;
    if (el.getAttribute && el.getAttribute('aria-busy') === 'true') return 'loading';
    for (const [c, rx] of RX) if (rx.test(text)) return c;
    if (role === 'alert' || role === 'alertdialog') return 'error';
    // words in red, with no class or role saying so — a sentence, not a red badge, price or count
    if (/[a-z]{2,}(\s+\S+){2,}/i.test(text) && reddish(el)) return 'error';
    return null;
  };
  const noticeLike = (el) => {
    const role = el.getAttribute('role') || '';
    return role === 'alert' || role === 'status' || role === 'log' || role === 'alertdialog' || role === 'dialog' ||
      el.hasAttribute('aria-live') || NOTICE.test((typeof el.className === 'string' ? el.className : '') + ' ' + (el.id || ''));
  };
  const shown = (el) => { try { return el.checkVisibility ? el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true }) : !!el.offsetParent; } catch (e) { return false; } };
  const fieldName = (el) => squash(el.getAttribute('aria-label') || (el.labels && el.labels[0] && el.labels[0].textContent) ||
    el.getAttribute('placeholder') || el.getAttribute('name') || el.id || el.localName).slice(0, 60);
  const recent = new Map();  // cat|kind|text → time, to drop repeats within 1.5 s
  const push = (cat, kind, text) => {
    if (!text) return;
    const now = Date.now(), k = cat + '|' + kind + '|' + text, last = recent.get(k);
    if (last && now - last < 1500) return;
    recent.set(k, now);
    if (recent.size > 200) recent.clear();
    state.events.push([now, cat, kind, text]);
    if (state.events.length > MAX_EVENTS) state.events.splice(0, state.events.length - MAX_EVENTS);
  };
  state.visible = new WeakMap();  // notice-like element → was it shown when last seen
  const onAdded = (el) => {
    if (el.nodeType !== 1 || SKIP.has(el.localName)) return 0;
    const text = shortText(el);
    if (!text || (squash(readText(el, 4000)).length > 400 && !noticeLike(el))) return 0;  // a big re-render, not a message
    if (!shown(el)) return 0;
    const cat = classify(el, text);
    const notice = noticeLike(el);
    if (!cat && !notice && el.childElementCount > 3) return 0;
    state.visible.set(el, true);
    push(cat || (notice ? 'text' : 'element'), 'added', text);
    return 1;
  };
  const onShownOrHidden = (el) => {
    if (el.nodeType !== 1 || SKIP.has(el.localName)) return 0;
    const now = shown(el), was = state.visible.get(el);
    const notice = noticeLike(el);
    if (now && was !== true && (notice || was === false)) {
      const text = shortText(el);
      if (!text) return 0;
      state.visible.set(el, true);
      push(classify(el, text) || 'text', 'shown', text);
      return 1;
    }
    if (!now && was === true) {
      state.visible.set(el, false);
      const text = shortText(el);
      if (text) push('element', 'hidden', text);
      return 1;
    }
    if (was === undefined && notice) state.visible.set(el, now);
    return 0;
  };
  const onRemoved = (el) => {
    if (el.nodeType !== 1 || SKIP.has(el.localName)) return 0;
    const tag = el.localName, role = el.getAttribute('role') || '';
    if (!(tag === 'button' || tag === 'a' || role === 'button' || noticeLike(el) || state.visible.get(el) === true)) return 0;
    const text = shortText(el);
    if (!text || text.length > 120) return 0;
    push('element', 'removed', (role || (tag === 'a' ? 'link' : tag)) + ' \u201c' + text + '\u201d');
    return 1;
  };
  // ---- transient states: "Saving…" on the control just used, "Loading…" in a live region, aria-busy -----------
  // Elements whose text turned transient (or that became aria-busy) are noted as they change (a few records of each
  // batch, small elements only); the settle asks `state.transient(since)` whether one changed by the action still
  // shows.
  const TRANSIENT = /^(saving|loading|processing|submitting|sending|uploading|updating|deleting|removing|verifying|authori[sz]ing|connecting|signing (in|up|out)|logging (in|out)|please wait|working|checking|redirecting|paying)\b|(\u2026|\.\.\.)$/i;
  const TRANSIENT_AFTER_INPUT = 5000, TRANSIENT_MAX = 80, TRANSIENT_RECORDS = 24;
  const LIVE = '[aria-live]:not([aria-live="off"]),[role=status],[role=alert],[role=log],[role=progressbar]';
  const CONTROL = 'button,a,summary,label,input,select,textarea,[role=button],[role=link],[role=menuitem],[role=tab],' +
    '[role=switch],[role=checkbox],[role=option]';
  state.transients = new Map();  // element → [time noted, 'text' | 'busy']
  state.lastTarget = null;       // the element the last trusted input went to
  // (a leaf, or a box of a few leaves: its textContent is a few words, never a subtree's)
  const small = (el) => {
    if (el.childElementCount > 4) return false;
    for (let c = el.firstElementChild; c; c = c.nextElementSibling) if (c.firstElementChild) return false;
    return true;
  };
  const noteText = (el, now) => {
    // (not text being typed into an editor: "Loading..." typed is the person's words, not the page's state)
    if (!el || el.nodeType !== 1 || NO_TEXT.has(el.localName) || el.isContentEditable || !small(el)) return;
    const t = el.textContent;
    if (!t || t.length > 4 * TRANSIENT_MAX) return;
    const q = squash(t);
    if (q.length <= TRANSIENT_MAX && TRANSIENT.test(q)) note(el, now, 'text');
  };
  const note = (el, now, kind) => {
    state.transients.delete(el);
    state.transients.set(el, [now, kind]);
    if (state.transients.size > 12) state.transients.delete(state.transients.keys().next().value);
  };
  const noteTransients = (records, now) => {
    for (let i = 0; i < records.length && i < TRANSIENT_RECORDS; i++) {
      const m = records[i];
      if (m.type === 'characterData') noteText(m.target.parentElement, now);
      else if (m.type === 'childList') {
        noteText(m.target, now);
        for (let k = 0; k < m.addedNodes.length && k < 2; k++) noteText(m.addedNodes[k], now);
      } else if (m.attributeName === 'aria-busy' && m.target.getAttribute('aria-busy') === 'true') note(m.target, now, 'busy');
    }
  };
  // Whether `el` is the control acted on, inside it or around it (across shadow roots), or a submit button of
  // its form (Enter in a field: the form's button says "Saving…").
  const byActed = (el, acted) => {
    if (!acted || !acted.isConnected) return false;
    const area = (acted.closest && acted.closest(CONTROL)) || acted;
    if (el.contains(area)) return true;
    for (let n = el, k = 0; n && k < 8; k++) {
      if (area.contains(n)) return true;
      const r = n.getRootNode();
      n = r && r.host;
    }
    const form = area.form || (area.closest && area.closest('form'));
    return !!form && el.form === form && (el.type === 'submit' || el.localName === 'button');
  };
  // The words of a transient state the action brought that still shows ('' when none): changes noted from
  // the action's input (or from `since`, epoch ms, when none came) on the control acted on, in a live region,
  // or an element marked aria-busy.
  state.transient = (since) => {
    if (!state.transients.size) return '';
    const li = state.lastInput;
    const from = li && since - TRANSIENT_AFTER_INPUT <= li && li <= since + 350 ? li - 20 : since;
    const acted = li >= from ? state.lastTarget : null;
    let found = '';
    for (const [el, [t, kind]] of state.transients) {
      if (t < from - 10000 || !el.isConnected) { state.transients.delete(el); continue; }
      if (found || t < from || !shown(el)) continue;
      if (kind === 'busy') {
        if (el.getAttribute('aria-busy') === 'true') found = shortText(el).slice(0, TRANSIENT_MAX) || 'aria-busy';
        continue;
      }
      const q = squash(el.textContent);
      if (q.length <= TRANSIENT_MAX && TRANSIENT.test(q) && (byActed(el, acted) || el.closest(LIVE))) found = q;
    }
    return found;
  };
  const onMutations = (records) => {
    state.ver++; state.muts += records.length; state.lastMut = Date.now();
    // (in every batch, not only after an input here: a click in the page can make a frame say "Processing…")
    try { noteTransients(records, state.lastMut); } catch (e) {}
    let budget = PER_BATCH;
    for (let i = 0; i < records.length && budget > 0; i++) {
      const m = records[i];
      try {
        if (m.type === 'childList') {
          for (const n of m.addedNodes) {
            if (budget <= 0) break;
            if (n.nodeType === 1) budget -= onAdded(n);
            else if (n.nodeType === 3 && m.target.nodeType === 1 && !SKIP.has(m.target.localName) && squash(n.data)) {
              const el = m.target;
              if (shown(el)) {
                const text = shortText(el);
                if (text && text.length <= MAX_TEXT) { state.visible.set(el, true); push(classify(el, text) || (noticeLike(el) ? 'text' : 'element'), 'text', text); budget--; }
              }
            }
          }
          for (const n of m.removedNodes) { if (budget <= 0) break; budget -= onRemoved(n); }
        } else if (m.type === 'attributes') {
          const el = m.target, a = m.attributeName;
          if (a === 'aria-invalid') {
            if (el.getAttribute('aria-invalid') === 'true') { push('form', 'invalid', fieldName(el) + ' marked invalid'); budget--; }
          } else if (a === 'hidden' || a === 'class' || a === 'style' || a === 'open' || a === 'aria-hidden') {
            budget -= onShownOrHidden(el);
          }
        } else if (m.type === 'characterData') {
          const el = m.target.parentElement;
          if (el && !SKIP.has(el.localName) && noticeLike(el) && shown(el)) { const text = shortText(el); push(classify(el, text) || 'text', 'text', text); budget--; }
        }
      } catch (e) {}
    }
  };
  try {
    new MutationObserver(onMutations).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  } catch (e) {}
  // Fields the user or the agent changed (change events only, not every keystroke).
  origAdd.call(window, 'change', (ev) => {
    const el = ev.target;
    if (!el || el.nodeType !== 1) return;
    const tag = el.localName, type = (el.getAttribute('type') || '').toLowerCase();
    let what;
    if (tag === 'input' && (type === 'checkbox' || type === 'radio')) what = fieldName(el) + (el.checked ? ' checked' : ' unchecked');
    else if (tag === 'select') what = fieldName(el) + ' = ' + squash(Array.from(el.selectedOptions || []).map((o) => o.textContent).join(', ')).slice(0, 60);
    else if (tag === 'input' && type === 'file') what = fieldName(el) + ': file chosen';
    else if (state.secret(el)) what = fieldName(el) + ' changed (value hidden)';
    else if (tag === 'input' || tag === 'textarea') what = fieldName(el) + ' = \u201c' + squash(el.value).slice(0, 60) + '\u201d';
    if (what) push('form', 'changed', what);
  }, { capture: true, passive: true });
  // The last input a person (or Vigil's CDP input) gave the page, for the settle after an action.
  state.lastInput = 0;
  const onInput = (ev) => {
    if (!ev.isTrusted) return;
    state.lastInput = Date.now();
    const t = ev.composedPath ? ev.composedPath()[0] : ev.target;
    state.lastTarget = t && t.nodeType === 1 ? t : ev.target;
  };
  for (const t of ['pointerdown', 'mousedown', 'keydown', 'click', 'input', 'change', 'submit']) {
    try { origAdd.call(window, t, onInput, { capture: true, passive: true }); } catch (e) {}
  }
  for (const t of ['input', 'change', 'scroll', 'focusin', 'focusout', 'resize']) {
    try { origAdd.call(window, t, bump, { capture: true, passive: true }); } catch (e) {}
  }
})
