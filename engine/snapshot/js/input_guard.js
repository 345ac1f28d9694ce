// What the input really hit (issue [1/7], part 5). Installed right after install.js in every document,
// before page scripts run. While Vigil clicks (armed by the pointer probe, for one press sequence), it
// records the element that receives each trusted pointermove / pointerdown / mousedown / pointerup /
// mouseup / click / dblclick (capture phase on window, so before any listener of the page; the deepest
// target, closed shadow roots included) and compares it with the approved element: the element itself,
// its descendants (shadow tree included), its labels, its shadow hosts, or what the probe's own hit test
// found at the click's point. An event that reaches anything else is stopped there — no listener of the
// page sees it, its default action (focus, activation, submit) is cancelled — and so is every later
// event of that press. Vigil reads the verdict after the pointer arrived (no press when it moved) and
// after the click (the step fails with MISDIRECTED).
//
// A hostile page must not fake or erase this: everything lives in this closure, built from the
// originals taken before page scripts run (uncurried, so later changes to prototypes do not reach it);
// the one entry point, S.guard, cannot be replaced, and obeys only the caller that first gave it a
// secret (Vigil passes a per-launch secret in every call; a page that claims it first makes every
// click on it fail, never pass). It never holds field values.
(function inputGuard(KEY) {
  'use strict';
  const S = window[KEY];
  if (!S || Object.prototype.hasOwnProperty.call(S, 'guard')) return;
  const call = Function.prototype.call;
  const bind = Function.prototype.bind;
  const uncurry = (f) => (typeof f === 'function' ? bind.call(call, f) : null);
  const describeOf = Object.getOwnPropertyDescriptor;
  const getter = (proto, name) => { const d = proto && describeOf(proto, name); return d && d.get ? uncurry(d.get) : null; };
  // (no spread: it iterates through Array.prototype[Symbol.iterator], which the page can replace)
  const safe = (f, a, b, c, d, e) => { try { return f ? f(a, b, c, d, e) : null; } catch (x) { return null; } };
  const defineProp = Object.defineProperty;
  const blank = Object.create.bind(null, null);   // objects without a prototype: no inherited setters
  const now = Date.now;
  const ElementP = Element.prototype, NodeP = Node.prototype;
  const parentNodeOf = getter(NodeP, 'parentNode');
  const nodeTypeOf = getter(NodeP, 'nodeType');
  const connected = getter(NodeP, 'isConnected');
  const textOf = getter(NodeP, 'textContent');
  const rootOf = uncurry(NodeP.getRootNode);
  const hostOf = getter(window.ShadowRoot && ShadowRoot.prototype, 'host');
  const slotOf = getter(ElementP, 'assignedSlot');
  const localNameOf = getter(ElementP, 'localName');
  const idOfEl = getter(ElementP, 'id');
  const attr = uncurry(ElementP.getAttribute);
  const openRootOf = getter(ElementP, 'shadowRoot');
  const controlOf = getter(window.HTMLLabelElement && HTMLLabelElement.prototype, 'control');
  const valueOf = getter(window.HTMLInputElement && HTMLInputElement.prototype, 'value');
  const docHit = uncurry(Document.prototype.elementFromPoint);
  const rootHit = uncurry(window.ShadowRoot && ShadowRoot.prototype.elementFromPoint);
  const pathOf = uncurry(Event.prototype.composedPath);
  const stop = uncurry(Event.prototype.stopImmediatePropagation);
  const cancel = uncurry(Event.prototype.preventDefault);
  const clientX = getter(MouseEvent.prototype, 'clientX'), clientY = getter(MouseEvent.prototype, 'clientY');
  const listen = uncurry(EventTarget.prototype.addEventListener);
  const wmGet = uncurry(WeakMap.prototype.get), wmSet = uncurry(WeakMap.prototype.set);
  const charAt = uncurry(String.prototype.charAt), sliceStr = uncurry(String.prototype.slice);
  const doc = document;

  // Closed shadow roots, seen by wrapping attachShadow (after install.js's own wrapper, which it calls).
  const closedRoots = new WeakMap();
  const attachShadow = ElementP.attachShadow;
  if (attachShadow) {
    const attach = uncurry(attachShadow);
    const wrapped = function attachShadow(init) {
      const root = attach(this, init);
      if (init && init.mode === 'closed') wmSet(closedRoots, this, root);
      return root;
    };
    const asString = uncurry(Function.prototype.toString);
    try { defineProp(wrapped, 'toString', { value: () => asString(attachShadow), enumerable: false }); } catch (e) {}
    ElementP.attachShadow = wrapped;
  }

  // Elements given a listener for a release (mouseup, pointerup), seen by wrapping addEventListener (after
  // install.js's wrapper, which it calls): kept here, where the page cannot reach it.
  const handled = new WeakSet();
  const wsAdd = uncurry(WeakSet.prototype.add), wsHas = uncurry(WeakSet.prototype.has);
  const RELEASES = blank();
  RELEASES.mouseup = 1; RELEASES.pointerup = 1;
  const prevAdd = EventTarget.prototype.addEventListener;
  if (prevAdd) {
    const add = uncurry(prevAdd);
    const shown = safe(uncurry(prevAdd.toString), prevAdd) || 'function addEventListener() { [native code] }';
    const wrappedAdd = function addEventListener(type, fn, opts) {
      if (RELEASES[type] === 1) safe(wsAdd, handled, this);
      return add(this, type, fn, opts);
    };
    try { defineProp(wrappedAdd, 'toString', { value: () => shown, enumerable: false }); } catch (e) {}
    EventTarget.prototype.addEventListener = wrappedAdd;
  }

  // ---- the flat tree, from the originals ---------------------------------------------------------
  const isEl = (n) => !!n && safe(nodeTypeOf, n) === 1;
  const flatParent = (n) => {
    if (isEl(n)) { const s = safe(slotOf, n); if (s) return s; }
    const p = safe(parentNodeOf, n);
    if (p) return p;
    return safe(hostOf, n);   // a shadow root's parent is its host
  };
  const within = (outer, inner) => { for (let n = inner, i = 0; n && i < 4096; n = flatParent(n), i++) if (n === outer) return true; return false; };
  const shadowOf = (h) => safe(openRootOf, h) || wmGet(closedRoots, h) || (S.closed && safe(wmGet, S.closed, h)) || null;
  const deepen = (h, x, y) => {
    for (let i = 0; h && i < 32; i++) {
      const root = shadowOf(h);
      if (!root) break;
      const d = safe(rootHit, root, x, y);
      if (!d || d === h || !within(h, d)) break;
      h = d;
    }
    return h;
  };
  const hitAt = (x, y) => deepen(safe(docHit, doc, x, y), x, y);
  const isLabel = (n) => isEl(n) && safe(localNameOf, n) === 'label';

  // ---- naming what received the input (for the message; never a field's value) ------------------
  const squash = (t) => {
    let out = '', space = false;
    t = t || '';
    for (let i = 0; i < t.length && out.length < 60; i++) {
      const ch = charAt(t, i);
      if (ch === ' ' || ch === '\n' || ch === '\t' || ch === '\r' || ch === '\u00a0' || ch === '\u200b') { space = out.length > 0; continue; }
      if (space) { out += ' '; space = false; }
      out += ch;
    }
    return out;
  };
  const ROLES = blank();
  ROLES.button = 'button'; ROLES.a = 'link'; ROLES.select = 'combobox'; ROLES.textarea = 'textbox'; ROLES.summary = 'button';
  ROLES.iframe = 'iframe'; ROLES.label = 'label';
  const labelsOf = blank();
  labelsOf.input = getter(window.HTMLInputElement && HTMLInputElement.prototype, 'labels');
  labelsOf.textarea = getter(window.HTMLTextAreaElement && HTMLTextAreaElement.prototype, 'labels');
  labelsOf.select = getter(window.HTMLSelectElement && HTMLSelectElement.prototype, 'labels');
  const describe = (e) => {
    const d = blank();
    if (!isEl(e)) { d.role = 'nothing'; d.name = ''; d.ref = ''; d.id = null; return d; }
    const tag = safe(localNameOf, e) || '';
    const type = safe(attr, e, 'type') || '';
    let role = safe(attr, e, 'role') || '';
    if (!role) role = tag === 'input' ? ((type === 'button' || type === 'submit' || type === 'reset') ? 'button' : (type === 'checkbox' || type === 'radio') ? type : 'textbox') : (ROLES[tag] || tag);
    let name = safe(attr, e, 'aria-label') || '';
    if (!name && tag === 'input' && (type === 'button' || type === 'submit' || type === 'reset')) name = safe(valueOf, e) || '';
    if (!name && tag !== 'input' && tag !== 'textarea' && tag !== 'select') name = safe(textOf, e) || '';
    if (!name && (tag === 'input' || tag === 'textarea' || tag === 'select')) {
      // a field is named by its <label> (then its placeholder): never by its value
      const ls = safe(labelsOf[tag], e);
      if (ls && ls.length) name = safe(textOf, ls[0]) || '';
      if (!name) name = safe(attr, e, 'placeholder') || '';
    }
    if (!name) name = safe(attr, e, 'title') || '';
    d.role = squash(role); d.name = squash(name);
    const id = safe(idOfEl, e);
    d.ref = id ? '#' + sliceStr(id, 0, 40) : tag;
    let sid = null;
    for (let n = e, i = 0; n && i < 64 && sid === null; n = flatParent(n), i++) {
      if (isEl(n) && S.ids) sid = safe(wmGet, S.ids, n) || null;
      if (n !== e) break;   // the element's own ID only
    }
    d.id = sid === null ? null : '' + sid;
    return d;
  };

  // ---- the armed press sequence ------------------------------------------------------------------
  let owner = null;        // the secret of whoever armed it first (Vigil)
  let arm = null;          // the press sequence being watched, or null
  let last = null;         // its verdict once read or over
  const EXPIRE_MS = 30000;  // a watch Vigil never read (a failed step) ends by itself
  const twin = (h, el) => isEl(h) && safe(localNameOf, h) === safe(localNameOf, el) && !safe(connected, el) &&
    squash(safe(textOf, h)) === squash(safe(textOf, el)) && safe(attr, h, 'aria-label') === safe(attr, el, 'aria-label') &&
    safe(attr, h, 'role') === safe(attr, el, 'role') && safe(attr, h, 'type') === safe(attr, el, 'type');
  const lands = (a, h, kind) => {
    const el = a.el;
    if (!h) return false;
    if (h === a.hit || within(el, h)) return true;
    // one of its shadow hosts (a closed root's events reach window retargeted to its host)
    for (let r = safe(rootOf, el), i = 0; r && i < 32; i++) {
      const host = safe(hostOf, r);
      if (!host) break;
      if (host === h) return true;
      // content slotted into its nearest host lands on the control (as the probe judges it)
      if (i === 0) for (let n = safe(parentNodeOf, h), j = 0; n && j < 4096; n = safe(parentNodeOf, n), j++) if (n === host) return true;
      r = safe(rootOf, host);
    }
    // inside one of its labels
    for (let n = h, i = 0; n && i < 4096; n = flatParent(n), i++) if (isLabel(n) && safe(controlOf, n) === el) return true;
    // a label (or what it holds) passes its click on to its control
    if (kind === 'click') for (let n = el, i = 0; n && i < 4096; n = flatParent(n), i++) if (isLabel(n) && safe(controlOf, n) === h) return true;
    // the page re-rendered the element: an identical one took its place
    return twin(h, el);
  };
  // Could a release over it do something: a control (its own listeners may sit on the page's root, as
  // React's do), or an element with a listener for a release (from its addEventListener calls, seen
  // above, or an on… property), up to what it shares with el. (A click cannot reach it: a click goes to
  // what the press and the release share.)
  const ACT_TAGS = blank(), ACT_ROLES = blank(), ITEM_ROLES = blank();
  for (const t of ['button', 'input', 'select', 'textarea', 'summary', 'label', 'option']) ACT_TAGS[t] = 1;
  for (const r of ['button', 'link', 'checkbox', 'radio', 'switch', 'menuitem', 'menuitemcheckbox', 'menuitemradio',
    'option', 'tab', 'treeitem', 'gridcell', 'slider', 'spinbutton', 'combobox', 'textbox', 'searchbox']) ACT_ROLES[r] = 1;
  for (const r of ['option', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'gridcell', 'treeitem', 'row']) ITEM_ROLES[r] = 1;
  const onProps = [];
  for (const k of ['onmouseup', 'onpointerup']) { const g = getter(HTMLElement.prototype, k); if (g) onProps[onProps.length] = g; }
  const roleOf = (n) => { const r = safe(attr, n, 'role') || ''; let out = ''; for (let i = 0; i < r.length && charAt(r, i) !== ' '; i++) out += charAt(r, i); return out; };
  const trigger = (el) => {
    const tag = safe(localNameOf, el), role = roleOf(el), pop = safe(attr, el, 'aria-haspopup');
    return tag === 'select' || role === 'combobox' || role === 'listbox' || (pop !== null && pop !== 'false') ||
      safe(attr, el, 'aria-expanded') !== null || (tag === 'input' && safe(attr, el, 'list') !== null);
  };
  // What held el when it was pressed (its flat-tree ancestors, kept then): a release that removes el (a select's
  // list closes as its option takes the pointerup) sends the rest of it — mouseup, click — to what is under the
  // pointer now, which is one of these when nothing new was put there.
  const keepAround = (a) => {
    const up = [];
    for (let n = flatParent(a.el), i = 0; n && i < 4096; n = flatParent(n), i++) if (isEl(n)) up[up.length] = n;
    a.around = up;
  };
  const wasAround = (a, h) => {
    const up = a.around;
    if (!up || safe(connected, a.el)) return false;   // (while el is in the page, `within` answers)
    for (let i = 0; i < up.length; i++) if (up[i] === h) return true;
    return false;
  };
  const acts = (a, h) => {
    for (let n = h, i = 0; n && i < 256; n = flatParent(n), i++) {
      if (!isEl(n)) continue;
      if (within(n, a.el) || wasAround(a, n)) return false;   // reached what it shares (or shared) with el
      const tag = safe(localNameOf, n), role = roleOf(n);
      // an item of the list it opened, or that list's own widget
      if (a.trigger && (ITEM_ROLES[role] === 1 || tag === 'option' || role === 'combobox' || role === 'listbox')) continue;
      if (ACT_TAGS[tag] === 1 || ACT_ROLES[role] === 1 || (tag === 'a' && safe(attr, n, 'href') !== null)) return true;
      if (safe(wsHas, handled, n)) return true;
      for (let j = 0; j < onProps.length; j++) if (safe(onProps[j], n)) return true;
    }
    return false;
  };
  const entry = (kind, h, ok) => { const e = blank(); e.kind = kind; e.el = h; e.ok = ok; return e; };
  // A frame the press put under the pointer would take the release in its own document, out of reach:
  // right after the press's own handlers ran, such a frame is made transparent to the pointer until the
  // watch ends, so the release comes back here and is stopped.
  const later = bind.call(window.setTimeout, window), styleOf = getter(HTMLElement.prototype, 'style');
  const setProp = uncurry(CSSStyleDeclaration.prototype.setProperty);
  const getProp = uncurry(CSSStyleDeclaration.prototype.getPropertyValue);
  const getPrio = uncurry(CSSStyleDeclaration.prototype.getPropertyPriority);
  const FRAMES = blank();
  FRAMES.iframe = 1; FRAMES.frame = 1; FRAMES.object = 1; FRAMES.embed = 1;
  let moved = null;   // [frame, its inline pointer-events, its priority] while one is held off
  const restore = () => {
    if (!moved) return;
    const m = moved; moved = null;
    const st = safe(styleOf, m[0]);
    if (st) safe(setProp, st, 'pointer-events', m[1], m[2]);
  };
  const frameCheck = (a) => () => {
    if (arm !== a || a.done || a.bad || moved) return;
    const h = safe(docHit, doc, a.x, a.y);
    if (!isEl(h) || FRAMES[safe(localNameOf, h)] !== 1 || lands(a, h, 'mousedown')) return;
    a.bad = entry('mousedown', h, false);
    const st = safe(styleOf, h);
    if (!st) return;
    moved = [h, safe(getProp, st, 'pointer-events') || '', safe(getPrio, st, 'pointer-events') || ''];
    safe(setProp, st, 'pointer-events', 'none', 'important');
  };
  const live = () => {
    if (arm && now() - arm.at > EXPIRE_MS) { last = arm; arm = null; restore(); }
    return arm;
  };
  const onEvent = (kind) => (ev) => {
    if (!ev.isTrusted) return;
    const a = live();
    if (!a || a.done) return;
    let h = null;
    const p = safe(pathOf, ev);
    if (p && p.length) h = p[0];
    if (kind !== 'click' && kind !== 'dblclick' && isEl(h)) h = deepen(h, safe(clientX, ev), safe(clientY, ev));
    const press = kind === 'pointerdown' || kind === 'mousedown', release = kind === 'pointerup' || kind === 'mouseup';
    let ok = lands(a, h, kind);
    // A click goes to what its press and release share: an element around this one once the press landed
    // on it (the release went elsewhere, harmlessly: below), or around the identical element that took
    // its place.
    if (!ok && kind === 'click' && !a.bad && ((a.pressed && (within(h, a.el) || wasAround(a, h))) ||
      (a.up !== null && within(h, a.up)))) ok = true;
    // Released over something the press opened (a calendar, the list of a select): fine when it does
    // nothing with a release (not a control, no listener of its own for it). Over a control, or an item of
    // the list of anything but a select-like trigger, the release is stopped and the step fails.
    if (!ok && release && !a.bad && a.pressed && !acts(a, h)) { ok = true; if (!a.loose) a.loose = entry(kind, h, true); }
    if (press && ok) {
      if (!a.pressed) keepAround(a);
      a.pressed = true;
      // what the pointerdown handlers did is laid out by now (at mousedown); what the mousedown handlers
      // do is looked at once they ran (the bubble listeners below), and again a moment later
      if (kind === 'mousedown') frameCheck(a)();
      safe(later, frameCheck(a), 0);
    }
    if (kind === 'mouseup' && ok && lands(a, h, kind)) a.up = h;
    if (kind === 'pointermove') {
      // only the move to the click's point (a person's own mouse elsewhere on the page is not the step's)
      const dx = safe(clientX, ev) - a.x, dy = safe(clientY, ev) - a.y;
      if (!(dx * dx + dy * dy <= 16)) return;
      a.moves++;
      if (!ok && !a.moveBad) a.moveBad = entry(kind, h, false);
      return;
    }
    a.seen++;
    if (release) a.releases++;
    if (!ok && !a.bad) a.bad = entry(kind, h, false);
    if (a.bad) { a.blocked++; safe(stop, ev); safe(cancel, ev); }
    if (kind === 'click') a.clicks++;
    if (kind === 'dblclick' || (kind === 'click' && a.clicks >= a.want && a.want < 2)) { a.done = true; restore(); }
  };
  for (const k of ['pointerdown', 'mousedown']) {
    safe(listen, window, k, (ev) => { const a = arm; if (ev.isTrusted && a && a.pressed && !a.done) frameCheck(a)(); }, { capture: false });
  }
  const KINDS = ['pointermove', 'pointerdown', 'mousedown', 'pointerup', 'mouseup', 'click', 'dblclick'];
  for (let i = 0; i < KINDS.length; i++) {
    const k = KINDS[i];
    safe(listen, window, k, onEvent(k), { capture: true, passive: k === 'pointermove' });
  }

  // ---- the keys of a typing or a press -------------------------------------------------------------
  // Armed on the element being typed into (after Vigil focused it): every trusted key event that produces
  // text or activates (a character, Enter, Space, Backspace, Delete) and every beforeinput/input must land on
  // it (or inside it). One that lands elsewhere — the page moved the focus on keydown, on input, or on focus
  // — is stopped and cancelled, and so is every later key of the watch; keys that only move (arrows, Tab) and
  // keyups are let be, so a widget that moves its own focus on arrows is no alarm.
  let keyArm = null;
  const keyOf = getter(KeyboardEvent.prototype, 'key');
  const JUDGED_KEYS = blank();
  JUDGED_KEYS.Enter = 1; JUDGED_KEYS.Backspace = 1; JUDGED_KEYS.Delete = 1;
  const activeOf = getter(Document.prototype, 'activeElement');
  const deepActive = () => {
    let a = safe(activeOf, doc);
    for (let i = 0; a && i < 32; i++) { const r = shadowOf(a); const d = r && r.activeElement; if (!d || d === a) break; a = d; }
    return a;
  };
  const bodyOf = getter(Document.prototype, 'body'), rootElOf = getter(Document.prototype, 'documentElement');
  const editableOf = getter(HTMLElement.prototype, 'isContentEditable');
  // a key that reaches the bare page (the field let go of the focus, as a chat box does once Enter sent the
  // message) types nothing and presses nothing
  const bare = (h) => (h === safe(bodyOf, doc) || h === safe(rootElOf, doc) || h === doc || h === window) &&
    !(isEl(h) && safe(editableOf, h));
  const keyLands = (k, h) => h === k.el || within(k.el, h) || lands(k, h, 'key');
  const onKey = (kind) => (ev) => {
    if (!ev.isTrusted || !keyArm) return;
    const k = keyArm;
    if (now() - k.at > EXPIRE_MS) { keyArm = null; return; }
    const p = safe(pathOf, ev);
    const h = p && p.length ? p[0] : null;
    const key = kind === 'keydown' || kind === 'keypress' || kind === 'keyup' ? (safe(keyOf, ev) || '') : '';
    const judged = kind === 'beforeinput' || kind === 'input' ||
      ((kind === 'keydown' || kind === 'keypress') && (key.length === 1 || JUDGED_KEYS[key] === 1));
    if (judged && keyLands(k, h)) { if (kind === 'keydown' || kind === 'beforeinput') k.seen++; }
    else if (judged && !k.bad && !bare(h)) k.bad = entry(kind, h, false);
    if (k.bad) { k.blocked++; safe(stop, ev); safe(cancel, ev); }
  };
  const KEY_KINDS = ['keydown', 'keypress', 'beforeinput', 'input', 'keyup'];
  for (let i = 0; i < KEY_KINDS.length; i++) safe(listen, window, KEY_KINDS[i], onKey(KEY_KINDS[i]), { capture: true });

  const report = (e) => {
    const r = blank();
    r.kind = e.kind;
    const d = describe(e.el);
    r.role = d.role; r.name = d.name; r.ref = d.ref; r.id = d.id;
    return r;
  };
  const verdict = (a) => {
    const v = blank();
    v.armed = true; v.want = a.want; v.seen = a.seen; v.clicks = a.clicks; v.blocked = a.blocked;
    v.misdirected = false;
    const bad = a.bad || a.moveBad;
    if (bad) { v.misdirected = true; v.got = report(bad); v.phase = a.bad ? 'press' : 'move'; }
    else if (a.want > 0 && a.seen === 0) { v.misdirected = true; v.phase = 'unreached'; }
    // pressed here, released in another document (a frame the press put under the pointer); not for a
    // select, whose list the browser draws itself and takes the release
    else if (a.want > 0 && a.pressed && a.releases === 0 && !a.trigger) { v.misdirected = true; v.phase = 'released'; }
    return v;
  };
  const ops = blank();
  // arm(el, x, y, clicks, opens): watch the next press sequence of `clicks` clicks at (x, y) on el (`opens`:
  // el opens a list on the press, as a select does)
  ops.arm = (el, x, y, want, opens) => {
    if (!isEl(el)) return false;
    restore();
    const a = blank();
    a.el = el; a.trigger = opens === true || trigger(el); a.pressed = false; a.releases = 0; a.loose = null; a.hit = hitAt(x, y); a.x = +x; a.y = +y; a.want = want | 0; a.at = now();
    a.around = null; a.moves = 0; a.seen = 0; a.clicks = 0; a.blocked = 0; a.bad = null; a.moveBad = null; a.up = null; a.done = false;
    arm = a; last = null;
    return true;
  };
  // moved(x, y): after the pointer arrived, before any press: is the approved element still what it hits?
  ops.moved = (x, y) => {
    const a = live();
    if (!a) return null;
    if (!a.moveBad) {
      const h = hitAt(x, y);
      if (!lands(a, h, 'pointermove')) a.moveBad = entry('pointermove', h, false);
    }
    const v = verdict(a);
    v.misdirected = !!a.moveBad; v.phase = 'move';
    if (a.moveBad) { last = a; arm = null; }
    return v;
  };
  // read(): the verdict of the press sequence (once; it ends the watch)
  ops.read = () => {
    restore();
    const a = arm || last;
    arm = null; last = null;
    return a ? verdict(a) : null;
  };
  ops.disarm = () => { arm = null; last = null; keyArm = null; restore(); return true; };
  // keys(el): watch the keys about to be sent to el (focused by now)
  ops.keys = (el) => {
    if (!isEl(el)) return false;
    const k = blank();
    k.el = el; k.hit = null; k.at = now(); k.seen = 0; k.blocked = 0; k.bad = null;
    keyArm = k;
    return true;
  };
  // keysread(): the verdict on those keys (once; it ends the watch): where the ones that went astray went, and
  // what has the focus now
  ops.keysread = () => {
    const k = keyArm;
    keyArm = null;
    if (!k) return null;
    const v = blank();
    v.seen = k.seen; v.blocked = k.blocked; v.misdirected = !!k.bad;
    if (k.bad) { v.got = report(k.bad); v.phase = 'keys'; }
    const f = deepActive();
    v.focusMoved = !!f && f !== k.el && !within(k.el, f) && f !== doc.body;
    if (v.focusMoved) v.focus = report(entry('focus', f, false));
    return v;
  };
  const guard = function guard(secret, op, a1, a2, a3, a4, a5) {
    if (typeof secret !== 'string' || secret.length < 16) return 'refused';
    if (owner === null) owner = secret;
    else if (secret !== owner) return 'refused';
    const f = ops[op];
    return f ? f(a1, a2, a3, a4, a5) : null;
  };
  defineProp(S, 'guard', { value: guard, enumerable: false, configurable: false, writable: false });
})
