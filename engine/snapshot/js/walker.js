// Pass 1 of a snapshot, run in one document (main world) through Runtime.callFunctionOn.
// Walks the whole document — open and closed shadow roots included — and returns one JSON
// string: a flat, pre-ordered list of element rows plus page facts. Child frames are not
// entered: each iframe element is listed in `frames` and walked in its own context by Python.
//
// Row layout (keep in sync with engine/snapshot/capture.py):
//   [parent, id, tag, role, name, text, value, flags, tier, x, y, w, h, ratio, extra]
// flags: 1 rendered, 2 occluded, 4 in shadow, 8 interactive, 16 redacted, 32 listener,
//        64 cursor-pointer, 128 focusable, 256 frame owner,
//        512 text block (its text is its whole inline content in reading order, links and code included),
//        1024 folded (inline content of a text block ancestor: its text is already in that block's text),
//        2048 hidden from a person (rendered, but no one can see it), with why in bits 12-14 (HID_WHY:
//             1 aria-hidden, 2 transparent, 3 clipped away, 4 zero-size, 5 off-screen beyond the page,
//             6 font-size 0, 7 the same colour as its background; keep in sync with serialize/hidden.py)
// tier:  0 structural, 1 non-semantic, 2 semantic
// extra: 0 or {st: states, a: attributes, sc: scroll, ob: occluder id}
function vigilWalk(KEY, opts) {
  const t0 = performance.now();
  let S = window[KEY];
  if (!S) throw new Error('vigil state missing');
  opts = opts || {};
  const prefix = opts.prefix || '';
  const OX = opts.ox || 0, OY = opts.oy || 0;          // offset of this document in top coordinates
  const VW = window.innerWidth, VH = window.innerHeight;
  // Clip of this frame's viewport, in local coordinates (parent frames may hide part of it).
  const C0 = opts.clip ? opts.clip : [0, 0, VW, VH];
  const MAXT = opts.maxText || 200;
  const wf = (s) => (s && s.isWellFormed && !s.isWellFormed()) ? s.toWellFormed() : s;
  // Names and texts as a person reads them: zero-width characters and soft hyphens dropped,
  // whitespace collapsed (accname does the same; `get\u200b/pets` is "get/pets").
  const ZW = /[\u00ad\u200b-\u200d\u2060-\u2064\ufeff]/g;
  const squash = (s) => s.replace(ZW, '').replace(/\s+/g, ' ').trim();
  const cut = (s, n) => (s.length > n ? s.slice(0, n) : s);
  // Text the same colour as what is behind it cannot be read: compare computed rgb() colours.
  const WHITE = 'rgb(255, 255, 255)';
  const rgbOf = (c) => { const m = /^rgba?\((\d+), (\d+), (\d+)/.exec(c); return m ? [+m[1], +m[2], +m[3]] : null; };
  const colourPairs = new Map();   // a page has few colours: each pair is compared once
  const sameColour = (a, b) => {
    if (a === b) return true;
    const key = a + '|' + b;
    let r = colourPairs.get(key);
    if (r === undefined) {
      const p = rgbOf(a), q = rgbOf(b);
      r = !!(p && q) && Math.abs(p[0] - q[0]) + Math.abs(p[1] - q[1]) + Math.abs(p[2] - q[2]) < 24;
      colourPairs.set(key, r);
    }
    return r;
  };

  const IMPLICIT = {
    a: null, area: null, article: 'article', aside: 'complementary', button: 'button',
    datalist: 'listbox', dd: 'definition', details: 'group', dialog: 'dialog', dt: 'term',
    fieldset: 'group', figure: 'figure', footer: null, form: 'form', h1: 'heading', h2: 'heading',
    h3: 'heading', h4: 'heading', h5: 'heading', h6: 'heading', header: null, hr: 'separator',
    iframe: 'iframe', img: null, input: null, li: 'listitem', main: 'main', menu: 'list', meter: 'meter',
    nav: 'navigation', ol: 'list', optgroup: 'group', option: 'option', output: 'status',
    p: 'paragraph', progress: 'progressbar', search: 'search', section: null, select: null,
    summary: 'button', table: 'table', tbody: 'rowgroup', thead: 'rowgroup', tfoot: 'rowgroup',
    td: 'cell', th: 'columnheader', tr: 'row', textarea: 'textbox', ul: 'list', label: null,
    legend: null, caption: 'caption', blockquote: 'blockquote', code: 'code', strong: 'strong',
    em: 'emphasis', time: 'time', mark: 'mark', video: null, audio: null, svg: null, canvas: null,
  };
  const INPUT_ROLE = {
    button: 'button', submit: 'button', reset: 'button', image: 'button', checkbox: 'checkbox',
    radio: 'radio', range: 'slider', number: 'spinbutton', search: 'searchbox', email: 'textbox',
    tel: 'textbox', text: 'textbox', url: 'textbox', password: 'textbox', '': 'textbox',
    date: 'textbox', 'datetime-local': 'textbox', month: 'textbox', time: 'textbox', week: 'textbox',
    color: 'button', file: 'button', hidden: null,
  };
  const ARIA_ROLES = new Set(('alert alertdialog application article banner blockquote button caption cell checkbox code ' +
    'columnheader combobox complementary contentinfo definition deletion dialog directory document emphasis feed figure ' +
    'form generic grid gridcell group heading img insertion link list listbox listitem log main mark marquee math menu ' +
    'menubar menuitem menuitemcheckbox menuitemradio meter navigation none note option paragraph presentation progressbar ' +
    'radio radiogroup region row rowgroup rowheader scrollbar search searchbox separator slider spinbutton status ' +
    'strong subscript superscript switch tab table tablist tabpanel term textbox time timer toolbar tooltip tree ' +
    'treegrid treeitem').split(' '));
  const INTERACTIVE = new Set(['button', 'link', 'textbox', 'searchbox', 'checkbox', 'radio', 'combobox', 'listbox',
    'option', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab', 'switch', 'slider', 'spinbutton', 'treeitem',
    'gridcell', 'scrollbar']);
  const NAME_FROM_CONTENT = new Set(['button', 'link', 'heading', 'cell', 'columnheader', 'rowheader', 'option', 'tab',
    'menuitem', 'menuitemcheckbox', 'menuitemradio', 'checkbox', 'radio', 'switch', 'treeitem', 'tooltip', 'gridcell',
    'row', 'caption', 'term']);
  const ATOMIC = new Set(['button', 'link', 'menuitem', 'tab', 'option', 'treeitem', 'checkbox', 'radio', 'switch',
    'slider', 'spinbutton', 'textbox', 'searchbox', 'combobox']);
  const INLINE = new Set(['span', 'b', 'i', 'em', 'strong', 'a', 'small', 'label', 'code', 'sup', 'sub', 'mark',
    'abbr', 'img', 'u', 's', 'q', 'cite', 'kbd', 'var', 'time', 'data', 'bdi', 'bdo', 'font', 'slot', 'svg', 'wbr',
    'dfn', 'samp', 'ins', 'del', 'big', 'tt']);
  const SKIP = new Set(['script', 'style', 'noscript', 'template', 'head', 'meta', 'link', 'title', 'base']);
  // Attributes kept for skeleton/full output and the analyst. Not class, style or src: they are
  // most of the bytes on real pages and none of the meaning.
  const KEEP_ATTR = new Set(['id', 'href', 'type', 'name', 'placeholder', 'title', 'alt', 'aria-label', 'data-testid',
    'data-test', 'data-cy', 'for', 'action', 'method', 'autocomplete', 'tabindex', 'contenteditable',
    'min', 'max', 'step', 'maxlength', 'pattern', 'target', 'role',
    // DELETE semantics on links and buttons (Rails/Turbo, htmx, formmethod): a destructive step asks
    'data-method', 'data-turbo-method', 'formmethod', 'hx-delete', 'data-hx-delete',
    // a link that downloads asks under auto-safe (engine/loop/policy.py), whatever its address
    'download']);
  const FORM_TAGS = new Set(['input', 'select', 'textarea', 'button']);
  const TEXT_ATTR = new Set(['aria-label', 'title', 'alt', 'placeholder']);   // read as words: no invisible characters
  // Structural roles an element gets from its tag that a page may still make a click target.
  const ITEM_ROLES = new Set(['listitem', 'cell', 'row', 'term', 'definition']);
  const LIST_TAGS = new Set(['ul', 'ol', 'menu', 'dl', 'tbody', 'thead', 'tfoot', 'table']);
  const VALUE_ROLES = new Set(['slider', 'spinbutton', 'progressbar', 'meter', 'scrollbar']);
  const TEXT_ROLES = new Set(['', 'generic', 'code', 'strong', 'emphasis', 'mark', 'time', 'subscript', 'superscript',
    'deletion', 'insertion', 'img', 'presentation', 'none', 'link']);
  const BLOCK_ROLES = new Set(['', 'generic', 'paragraph', 'listitem', 'cell', 'gridcell', 'columnheader', 'rowheader',
    'heading', 'caption', 'term', 'definition', 'blockquote', 'code', 'note', 'tooltip', 'status', 'alert', 'log',
    'option', 'figure', 'article', 'emphasis', 'strong', 'mark', 'time', 'insertion', 'deletion']);
  const TB_MAX = opts.maxBlockText || 2000;   // text of a text block (a paragraph, a code block)

  const limitText = (s, n) => (s.length > n ? s.slice(0, n) + '… (' + (s.length - n) + ' more characters)' : s);
  // Preformatted text keeps its lines and their indentation; trailing spaces and runs of blank
  // lines go.
  const preText = (s) => s.replace(ZW, '').replace(/\r\n?/g, '\n').replace(/[ \t\f\v\u00a0]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n').replace(/^\n+|\s+$/g, '');
  // Whether this element's name comes from its content (so a composed text can replace it).
  const nameFromContent = (el, role) => NAME_FROM_CONTENT.has(role || '') && !el.hasAttribute('aria-label') &&
    !el.hasAttribute('aria-labelledby') && !FORM_TAGS.has(el.localName);
  // React's and Vue's root containers carry the delegated listeners of the whole app.
  const isAppRoot = (el) => {
    if (el.__vue_app__ || el._reactRootContainer) return true;
    const ks = Object.keys(el);
    for (let i = 0; i < ks.length; i++) if (ks[i].startsWith('__reactContainer$') || ks[i].startsWith('_reactListening')) return true;
    return false;
  };

  S.lastFrames = [];
  const ctxCache = new Map();
  const rows = [];
  const frames = [];
  const fresh = [];      // [rowIndex, element] for elements seen the first time
  const suspects = [];   // custom elements that may hide a closed shadow root we do not know yet
  const pendingNames = []; // interactive, unnamed form controls: label hunting after the walk
  const occCandidates = [];
  // Styles and layout brought up to date first: a focused element that became hidden loses focus then.
  if (document.documentElement) document.documentElement.getBoundingClientRect();
  let focused = document.activeElement;
  while (focused && focused.shadowRoot && focused.shadowRoot.activeElement) focused = focused.shadowRoot.activeElement;
  if (focused && S.closed.has(focused)) { const a = S.closed.get(focused).activeElement; if (a) focused = a; }

  const rootOf = (el) => el.getRootNode();
  // Newer pseudo-classes throw on older Chromium builds: treat that as "does not match".
  const safeMatches = (el, sel) => { try { return el.matches(sel); } catch (e) { return false; } };
  const byIdIn = (el, id) => {
    const r = rootOf(el);
    return (r.getElementById ? r.getElementById(id) : null) || document.getElementById(id);
  };

  // Text of an element's content for name-from-content roles: text, img alt, aria-label of
  // children; hidden subtrees skipped when cheaply known.
  function contentText(el, budget) {
    // The common case first, with the same answer: no children, or one text child, and no shadow
    // root or slot that would put other nodes there.
    const f = el.firstChild;
    if ((!f || (f === el.lastChild && f.nodeType === 3)) && el.localName !== 'slot' && !el.shadowRoot && !S.closed.has(el)) return f ? squash(f.data) : '';
    let out = '';
    const stack = [el];
    let guard = 0;
    while (stack.length && out.length < budget && guard++ < 400) {
      const n = stack.pop();
      if (typeof n === 'string') { out += n; continue; }
      if (n.nodeType === 3) { out += n.data; continue; }
      if (n.nodeType !== 1) continue;
      if (n !== el) {
        const t = n.localName;
        if (SKIP.has(t) || n.hidden || n.getAttribute('aria-hidden') === 'true') continue;
        const al = n.getAttribute('aria-label');
        if (al) { out += al + ' '; continue; }
        if (t === 'img') { out += (n.getAttribute('alt') || '') + ' '; continue; }
        if (t === 'input' || t === 'select' || t === 'textarea') continue;
      }
      // The flattened tree, as accname walks it: a shadow root instead of the light children, and
      // at a <slot> the nodes assigned to it (or its fallback content when nothing is).
      const sr = n.shadowRoot || S.closed.get(n);
      const kids = sr ? sr.childNodes : (n.localName === 'slot' && n.assignedNodes ? n.assignedNodes({ flatten: true }) : n.childNodes);
      const block = n !== el && !INLINE.has(n.localName);
      if (block) { out += ' '; stack.push(' '); }
      for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
    }
    return squash(out);
  }

  // label[for] lookups: one query per document/shadow root, not `el.labels` (which walks the
  // whole document on first use for every input — quadratic on big forms).
  const labelMaps = new Map();
  function labelsFor(el) {
    const r = rootOf(el);
    let m = labelMaps.get(r);
    if (!m) {
      m = new Map();
      if (r.querySelectorAll) for (const l of r.querySelectorAll('label[for]')) {
        const k = l.getAttribute('for');
        if (!m.has(k)) m.set(k, []);
        m.get(k).push(l);
      }
      labelMaps.set(r, m);
    }
    return el.id ? (m.get(el.id) || []) : [];
  }
  function labelsText(el) {
    let s = '';
    for (const l of labelsFor(el)) s += contentText(l, 150) + ' ';
    if (!s.trim()) { const wrap = el.closest('label'); if (wrap) s = contentText(wrap, 150); }
    return squash(s);
  }

  // Accessible-name computation, following the precedence of accname for what matters here.
  // aria: false when the element is known to have no aria-* attribute.
  function nameOf(el, tag, role, aria) {
    const lb = aria === false ? null : el.getAttribute('aria-labelledby');
    if (lb) {
      let s = '';
      for (const id of lb.split(/\s+/)) { const r = id && byIdIn(el, id); if (r) s += contentText(r, 150) + ' '; }
      s = squash(s);
      if (s) return s;
    }
    const al = aria === false ? null : el.getAttribute('aria-label');
    if (al && al.trim()) return squash(al);
    if (tag === 'input' || tag === 'textarea' || tag === 'select' || tag === 'meter' || tag === 'progress') {
      const type = tag === 'input' ? (el.getAttribute('type') || '').toLowerCase() : '';
      if (type === 'submit' || type === 'reset' || type === 'button') {
        const v = el.getAttribute('value');
        return v ? squash(v) : (type === 'submit' ? 'Submit' : type === 'reset' ? 'Reset' : '');
      }
      if (type === 'image') return squash(el.getAttribute('alt') || el.getAttribute('value') || 'Submit');
      const l = labelsText(el);
      if (l) return l;
      const t = el.getAttribute('title') || el.getAttribute('placeholder') || el.getAttribute('aria-placeholder');
      if (t && t.trim()) return squash(t);
      return '';   // label hunting continues after the walk
    }
    if (tag === 'img' || tag === 'area') return squash(el.getAttribute('alt') || el.getAttribute('title') || '');
    if (tag === 'fieldset') { const lg = el.querySelector(':scope > legend'); if (lg) return contentText(lg, 150); }
    if (tag === 'table') { const c = el.querySelector(':scope > caption'); if (c) return contentText(c, 150); }
    if (tag === 'figure') { const c = el.querySelector(':scope > figcaption'); if (c) return contentText(c, 150); }
    if (NAME_FROM_CONTENT.has(role)) {
      const s = contentText(el, 260);
      if (s) return s;
    }
    const t = el.getAttribute('title');
    return t ? squash(t) : '';
  }

  // Label hunting for unnamed form controls: nearby preceding text, then the name attribute.
  function huntLabel(el) {
    // Checkboxes and radios are usually followed by their text: <input type=checkbox> Subscribe
    const ty = (el.getAttribute('type') || '').toLowerCase();
    if (ty === 'checkbox' || ty === 'radio') {
      let q = el.nextSibling, steps = 0;
      while (q && steps++ < 3) {
        if (q.nodeType === 3) { const s = squash(q.data); if (s) return s; }
        else if (q.nodeType === 1) {
          const t = q.localName;
          if (t === 'input' || t === 'select' || t === 'textarea' || t === 'button' || t === 'br') break;
          const s = contentText(q, 120); if (s) return s;
        }
        q = q.nextSibling;
      }
    }
    let n = el, hops = 0;
    while (n && hops < 3) {
      let p = n.previousSibling, steps = 0;
      while (p && steps++ < 4) {
        if (p.nodeType === 3) { const s = squash(p.data); if (s) return s; }
        else if (p.nodeType === 1) {
          const t = p.localName;
          if (t === 'input' || t === 'select' || t === 'textarea' || t === 'button') break;
          if (!SKIP.has(t) && p.getClientRects().length) { const s = contentText(p, 120); if (s) return s; }  // hidden text is no label
        }
        p = p.previousSibling;
      }
      n = n.parentElement; hops++;
      if (n && (n.localName === 'form' || n.localName === 'body')) break;
    }
    const nm = el.getAttribute('name');
    return nm ? nm.replace(/[_-]+/g, ' ').trim() : '';
  }

  // The role, and in ROLE_ARIA whether it is accessibility data (not one array per element).
  // hasRole: false when the element is known to have no role attribute.
  let ROLE_ARIA = false;
  function roleOf(el, tag, hasRole) {
    const r = hasRole === false ? null : el.getAttribute('role');
    if (r) {
      // The first role token a browser knows; else the element's own role (an <a href> with
      // role="doc-noteref" is a link); else the unknown token is a hint, not accessibility data.
      const toks = r.trim().toLowerCase().split(/\s+/);
      for (const t of toks) if (ARIA_ROLES.has(t)) { ROLE_ARIA = true; return t; }
      const own = implicitRole(el, tag);
      if (own[0]) { ROLE_ARIA = own[1]; return own[0]; }
      ROLE_ARIA = false;
      return toks[0];
    }
    const own = implicitRole(el, tag);
    ROLE_ARIA = own[1];
    return own[0];
  }
  function implicitRole(el, tag) {
    if (tag === 'input') {
      const type = (el.getAttribute('type') || 'text').toLowerCase();
      const v = INPUT_ROLE[type];
      if (v === undefined) return ['textbox', true];
      if ((type === 'text' || type === 'search' || type === '' || type === 'email' || type === 'tel' || type === 'url') && el.getAttribute('list')) return ['combobox', true];
      return [v, v !== null];
    }
    if (tag === 'select') return [(el.multiple || el.size > 1) ? 'listbox' : 'combobox', true];
    if (tag === 'a' || tag === 'area') return el.hasAttribute('href') ? ['link', true] : [null, false];
    if (tag === 'img') { const alt = el.getAttribute('alt'); return alt === '' ? ['presentation', true] : ['img', true]; }
    if (tag === 'section') return (el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby')) ? ['region', true] : [null, false];
    if (tag === 'header' || tag === 'footer') {
      const inner = el.parentElement && el.parentElement.closest('article,aside,main,nav,section');
      return inner ? [null, false] : [tag === 'header' ? 'banner' : 'contentinfo', true];
    }
    if (tag === 'svg') return el.hasAttribute('aria-label') || el.querySelector(':scope > title') ? ['img', true] : [null, false];
    if (tag === 'th') return [el.getAttribute('scope') === 'row' ? 'rowheader' : 'columnheader', true];
    const v = IMPLICIT[tag];
    return v ? [v, true] : [null, false];
  }

  // An element's non-default states. aria: false when it has no aria-* attribute (none is read then).
  function statesOf(el, tag, role, aria) {
    let st = null;
    const setSt = (k, v) => { (st || (st = {}))[k] = v; };
    const ga = (n) => (aria ? el.getAttribute(n) : null);
    if (el.matches(':disabled') || ga('aria-disabled') === 'true') setSt('disabled', true);
    if (tag === 'input' && (el.type === 'checkbox' || el.type === 'radio')) { if (el.checked) setSt('checked', true); if (el.indeterminate) setSt('checked', 'mixed'); }
    const ac = ga('aria-checked'); if (ac === 'true') setSt('checked', true); else if (ac === 'mixed') setSt('checked', 'mixed');
    const ae = ga('aria-expanded'); if (ae === 'true') setSt('expanded', true); else if (ae === 'false') setSt('expanded', false);
    if (tag === 'summary' && el.parentElement && el.parentElement.localName === 'details') setSt('expanded', !!el.parentElement.open);
    if (tag === 'option' ? el.selected : ga('aria-selected') === 'true') setSt('selected', true);
    const ap = ga('aria-pressed'); if (ap === 'true') setSt('pressed', true); else if (ap === 'mixed') setSt('pressed', 'mixed');
    if (el.required || ga('aria-required') === 'true') setSt('required', true);
    if (el.readOnly === true || ga('aria-readonly') === 'true') setSt('readonly', true);
    if (ga('aria-invalid') === 'true' || ((tag === 'input' || tag === 'textarea' || tag === 'select') && safeMatches(el, ':user-invalid'))) setSt('invalid', true);
    if (role === 'heading') { const lv = ga('aria-level') || (tag.length === 2 && tag[0] === 'h' ? tag[1] : null); if (lv) setSt('level', +lv); }
    if (ga('aria-haspopup') && ga('aria-haspopup') !== 'false') setSt('haspopup', ga('aria-haspopup'));
    if (tag === 'dialog' && el.open) setSt('open', true);
    if (ga('aria-modal') === 'true' || (tag === 'dialog' && safeMatches(el, ':modal'))) setSt('modal', true);
    if (tag === 'input' && (el.type === 'range' || el.type === 'number')) { if (el.min) setSt('min', el.min); if (el.max) setSt('max', el.max); }
    else if (VALUE_ROLES.has(role)) {
      const mn = ga('aria-valuemin'), mx = ga('aria-valuemax');
      if (mn !== null && mn.trim()) setSt('min', mn.trim()); else if (tag === 'meter') setSt('min', String(el.min));
      if (mx !== null && mx.trim()) setSt('max', mx.trim()); else if (tag === 'meter' || tag === 'progress') setSt('max', String(el.max));
    }
    return st;
  }

  const isSecret = (el) => S.secret(el);
  // What an element's attribute names say (see the walk): bits.
  const A_ARIA = 1, A_AHID = 2, A_ALB = 4, A_ROLE = 8, A_TI = 16, A_ON = 32, A_TID = 64;

  // ---- incremental walks -------------------------------------------------------------------
  // The previous walk's rows (before the whole-tree passes) and what each row was computed from
  // are kept in S.inc.prev. A later walk re-walks only what can have changed — dirty subtrees
  // (mutations, form state, focus, hover, listeners, image loads, inner scrolls, animations),
  // rows that read other parts of the page (form controls and their labels, aria-labelledby) and
  // their ancestors — and copies every other subtree whose context and box are unchanged. The
  // whole-tree passes (delegating containers, text blocks, label hunting, IDs, occlusion) then
  // run over all rows as in a full walk. Anything it cannot bound (styles, fonts, viewport or page
  // scroll, :has() rules, layout animations, too many changes) makes a full walk, and says why.
  const I = S.inc || (S.inc = incState());
  function incState() {
    const st = { prev: null, seq: 0, recs: [], over: false, style: false, marks: new Set(), observed: new WeakSet(),
      roots: [], css: null, why: '', tok: Math.random().toString(36).slice(2), sent: 0 };
    const onRecs = (rs) => {
      if (st.recs.length + rs.length > 4000) { st.over = true; st.recs.length = 0; return; }
      for (const r of rs) st.recs.push(r);
    };
    st.mo = new MutationObserver(onRecs);
    st.observe = (root) => {
      if (st.observed.has(root)) return;
      st.observed.add(root);
      if (root.nodeType === 11) st.roots.push(root);
      try { st.mo.observe(root, { subtree: true, childList: true, attributes: true, characterData: true }); } catch (e) {}
      const mark = (ev) => { const t = ev.composedPath ? ev.composedPath()[0] : ev.target; if (t && t.nodeType === 1) S.hook(t); };
      try { root.addEventListener('load', mark, true); root.addEventListener('error', mark, true); } catch (e) {}
    };
    // listeners added or removed and shadow roots attached change rows without a mutation
    S.hook = (el) => { if (st.marks.size > 5000) { st.over = true; st.marks.clear(); } else st.marks.add(el); };
    st.observe(document);
    try { if (document.fonts) document.fonts.addEventListener('loadingdone', () => { st.style = true; }); } catch (e) {}
    // style sheets changed through the CSSOM (CSS-in-JS) change any element's style
    try {
      const P = CSSStyleSheet.prototype;
      for (const m of ['insertRule', 'deleteRule', 'replace', 'replaceSync', 'addRule', 'removeRule']) {
        const orig = P[m];
        if (typeof orig !== 'function') continue;
        const wrapped = { [m](...a) { st.style = true; return orig.apply(this, a); } }[m];
        try { Object.defineProperty(wrapped, 'toString', { value: () => Function.prototype.toString.call(orig), enumerable: false }); } catch (e) {}
        P[m] = wrapped;
      }
    } catch (e) {}
    return st;
  }
  // What the page's CSS can do across elements: :has() (a change styles its ancestors), sibling
  // combinators (a change styles the following siblings), :focus-within (focus styles ancestors).
  function cssFlags() {
    const f = { has: false, sib: false, fw: false, cq: false };
    const seen = new Set();
    const scanRules = (rules, depth) => {
      for (const r of rules) {
        const s = r.selectorText;
        if (s) {
          if (s.indexOf(':has(') >= 0) f.has = true;
          if (s.indexOf('+') >= 0 || s.indexOf('~') >= 0) f.sib = true;
          if (s.indexOf(':focus-within') >= 0) f.fw = true;
        }
        if ('containerQuery' in r) f.cq = true;   // @container: a box's size restyles what is inside
        if (r.cssRules && depth < 8) scanRules(r.cssRules, depth + 1);
        if (r.styleSheet && depth < 8) scanSheet(r.styleSheet, depth + 1);
      }
    };
    const scanSheet = (sh, depth) => {
      if (!sh || seen.has(sh)) return;
      seen.add(sh);
      let rules;
      try { rules = sh.cssRules; } catch (e) { f.has = f.sib = f.fw = f.cq = true; return; }  // cross-origin: unknown
      if (rules) scanRules(rules, depth);
    };
    for (const r of [document].concat(I.roots)) {
      try { for (const sh of r.styleSheets) scanSheet(sh, 0); } catch (e) { f.has = true; }
      try { for (const sh of (r.adoptedStyleSheets || [])) scanSheet(sh, 0); } catch (e) {}
    }
    return f;
  }
  const optsKey = JSON.stringify([prefix, OX, OY, C0, opts.maxText || 200, opts.maxBlockText || 2000]);
  const deepFocus = () => {
    let f = document.activeElement;
    while (f && f.shadowRoot && f.shadowRoot.activeElement) f = f.shadowRoot.activeElement;
    if (f && S.closed.has(f)) { const a = S.closed.get(f).activeElement; if (a) f = a; }
    return f;
  };
  const hoverChain = () => { try { return Array.from(document.querySelectorAll(':hover')); } catch (e) { return []; } };
  const SAFE_ANIM = new Set(['offset', 'composite', 'easing', 'computedOffset', 'transform', 'opacity', 'color',
    'backgroundColor', 'filter', 'boxShadow', 'outlineColor', 'borderColor', 'translate', 'rotate', 'scale',
    'fill', 'stroke', 'strokeDashoffset', 'visibility']);
  const ctlSig = (el) => {
    const t = el.localName;
    let s = el.value + '\u0001' + (t === 'input' ? (el.checked ? 1 : 0) + (el.indeterminate ? 2 : 0) : '');
    if (t === 'select') { for (const o of el.options) if (o.selected) s += ',' + o.index; }
    if (t === 'input' && el.files) s += '\u0001' + el.files.length;
    return s + (safeMatches(el, ':user-invalid') ? '!' : '');
  };
  const upOf = (n) => n.parentNode || (n.nodeType === 11 ? n.host : null);
  // Decide the walk: null for a full walk (with I.why), or {sub, touched} for an incremental one.
  function plan() {
    const P = I.prev;
    const recs = I.recs; I.recs = [];
    for (const r of I.mo.takeRecords()) recs.push(r);
    const over = I.over, style = I.style, marks = I.marks;
    I.over = false; I.style = false; I.marks = new Set();
    if (opts.full) return fail(opts.why || 'forced');
    if (!P) return fail('first walk of this document');
    if (P.key !== optsKey) return fail('the frame moved or its clip changed');
    if (P.vw !== VW || P.vh !== VH || P.dpr !== window.devicePixelRatio) return fail('the viewport changed');
    if (P.sx !== window.scrollX || P.sy !== window.scrollY) return fail('the page scrolled');
    if (P.truncated) return fail('the last walk hit the node limit');
    if (over) return fail('too many changes');
    if (style) { I.css = null; return fail('style sheets or fonts changed'); }
    if (document.fonts && document.fonts.status === 'loading') return fail('fonts are loading');
    // A float shapes the lines of the blocks after it without changing their boxes: one that moved,
    // went or changed its margins makes a full walk (a new one is caught during the walk).
    for (const [el, x, y, w, h, mg] of P.floats) {
      if (!el.isConnected) return fail('a floating box went away');
      const rc = el.getBoundingClientRect(), fc = getComputedStyle(el);
      if (rc.left !== x || rc.top !== y || rc.width !== w || rc.height !== h || fc.float === 'none' || floatMargins(fc) !== mg) return fail('a floating box moved');
    }
    const sub = new Set(), rowp = [];
    let sib = false;
    const addSub = (el) => {
      if (!el || el.nodeType !== 1 || !el.isConnected) return;
      sub.add(el);
      if (sib) for (let s = el.nextElementSibling; s; s = s.nextElementSibling) sub.add(s);
    };
    for (const r of recs) {
      const t = r.target;
      if (r.type === 'childList') {
        for (const lst of [r.addedNodes, r.removedNodes]) for (const n of lst) {
          const nn = n.localName;
          if (nn === 'style' || nn === 'link') { I.css = null; return fail('style sheets changed'); }
        }
      }
      const tl = t.localName || (t.parentNode && t.parentNode.localName);
      if (tl === 'style' || (t.localName === 'link')) { I.css = null; return fail('style sheets changed'); }
    }
    if (!I.css) I.css = cssFlags();
    const css = I.css;
    if (css.has && (recs.length || marks.size)) return fail('the page styles with :has()');
    if (css.cq && (recs.length || marks.size)) return fail('the page styles with container queries');
    sib = css.sib;
    for (const r of recs) {
      let t = r.target;
      if (r.type === 'characterData') t = t.parentNode;
      if (!t) continue;
      if (t.nodeType === 11) { if (t.host) addSub(t.host); continue; }
      if (t.nodeType === 9) return fail('the document was replaced');
      if (r.type === 'characterData') { if (t.isConnected && t.nodeType === 1) sub.add(t); continue; }
      addSub(t);
      // a slotted light child whose slot changes is re-placed: its host is re-walked
      if (r.type === 'attributes' && r.attributeName === 'slot' && t.parentNode && (t.parentNode.shadowRoot || S.closed.has(t.parentNode))) addSub(t.parentNode);
    }
    for (const el of marks) {
      if (el.localName === 'img' || el.localName === 'video' || el.localName === 'object' || el.localName === 'embed' || el.localName === 'input') addSub(el.parentElement || el);
      else if (el.localName === 'link' || el.localName === 'style') { I.css = null; return fail('style sheets changed'); }
      else addSub(el);
    }
    for (const [el, sg] of P.controls) if (el.isConnected && ctlSig(el) !== sg) addSub(el);
    for (const [el, l, t] of P.scrollers) if (el.isConnected && (el.scrollLeft !== l || el.scrollTop !== t)) sub.add(el);
    const foc = deepFocus();
    if (foc !== P.focused) {
      if (css.fw) return fail('focus moved and the page styles :focus-within');
      if (P.focused) addSub(P.focused);
      if (foc && foc !== document.body && foc !== document.documentElement) addSub(foc);
      else if (foc) rowp.push(foc);
    }
    const hov = HOVER = hoverChain();
    const hp = P.hover;
    let k = 0;
    while (k < hov.length && k < hp.length && hov[k] === hp[k]) k++;
    if (k < hov.length || k < hp.length) {
      if (k === 0) return fail('the pointer entered or left the page');
      if (hp[k]) addSub(hp[k]);
      if (hov[k]) addSub(hov[k]);
    }
    const deep = hov.length ? hov[hov.length - 1] : null;
    if (deep && (deep.shadowRoot || S.closed.has(deep))) addSub(deep);
    if (ANIM.layout) return fail('an animation moves the layout');
    for (const tg of ANIM.targets) addSub(tg);
    for (const tg of P.anims) addSub(tg);
    for (const el of P.remote) if (el.isConnected) rowp.push(el);
    if (sub.size > 2000) return fail('too many changes');
    // every ancestor of a changed element (through shadow hosts, and through the slot a light
    // child renders in) is re-read: its name, text block or box may come from what changed
    const touched = new Set();
    const todo = [];
    for (const el of sub) todo.push(el);
    for (const el of rowp) { touched.add(el); todo.push(el); }
    while (todo.length) {
      let n = todo.pop();
      if (n.assignedSlot) todo.push(n.assignedSlot);
      n = upOf(n);
      while (n && n.nodeType !== 9 && !touched.has(n)) {
        if (n.nodeType === 1) touched.add(n);
        if (n.assignedSlot) todo.push(n.assignedSlot);
        n = upOf(n);
      }
    }
    I.why = sub.size + ' changed subtree(s)';
    return { sub: sub, touched: touched };
  }
  let HOVER = null;  // the pointer's :hover chain, read once per walk
  function fail(why) { I.why = why; return null; }
  const floatMargins = (c) => c.marginTop + ' ' + c.marginRight + ' ' + c.marginBottom + ' ' + c.marginLeft + ' ' + c.float + ' ' + c.shapeOutside;
  // Animations and transitions under way change boxes and styles without a mutation.
  function runningAnims() {
    const out = { targets: [], layout: false };
    let anims = [];
    try { anims = document.getAnimations ? document.getAnimations() : []; } catch (e) {}
    for (const a of anims) {
      const ef = a.effect, tg = ef && ef.target;
      if (!tg || a.playState === 'finished' || a.playState === 'idle') continue;
      out.targets.push(tg);
      if (!out.layout) {
        let kf = [];
        try { kf = ef.getKeyframes(); } catch (e) {}
        for (const f of kf) for (const p in f) if (!SAFE_ANIM.has(p)) out.layout = true;
      }
    }
    return out;
  }
  const ANIM = runningAnims();

  // Walk: iterative, pre-order; a stack of
  //   [node, parentRow, clip, posClip, inShadow, parentPointer, atomicAncestor, deadAncestor, transparentAncestor,
  //    composer (see composeText), slotted (1: a light child of a host with an open root, 2: a closed one)]
  // `clip` clips a node in normal flow; `posClip` clips an absolutely positioned node there: the clip
  // inside its nearest positioned ancestor (its containing block), so an overflow:hidden box that
  // is not positioned does not clip it. Fixed nodes (modal dialogs and popovers too) take this
  // frame's viewport. Overflow set on <html>, or on <body> while <html> has none, is the viewport's
  // (CSS overflow propagation: how modal libraries lock scrolling), so it clips nothing by its box.
  // A light child of a shadow host renders where its slot is: clip, visibility, cursor and the
  // control it sits in come from that slot (walked first), and a child no slot takes is not shown.
  const stack = [], stackCx = [];
  const slotCtx = new Map();
  const pushChildren = (host, parentRow, clip, posClip, inShadow, ptr, atomic, dead, transp, pcomp, ahid, bg, posEl, forced) => {
    const sr = host.shadowRoot || S.closed.get(host);
    if (sr) I.observe(sr);
    // Shadow content first (it is what renders), then light children (slotted or fallback).
    // (one context for all the children of a host, shared: not one array per child)
    // (script, style and the like are never walked: not pushed)
    let cx = null;
    for (let c = host.lastElementChild; c; c = c.previousElementSibling) {
      if (SKIP.has(c.localName)) continue;
      if (!cx) cx = [parentRow, clip, posClip, inShadow, ptr, atomic, dead, transp, pcomp, sr ? (host.shadowRoot ? 1 : 2) : 0, ahid, bg, posEl, forced, null];
      stack.push(c); stackCx.push(cx);
    }
    if (sr) {
      cx = null;
      for (let c = sr.lastElementChild; c; c = c.previousElementSibling) {
        if (SKIP.has(c.localName)) continue;
        if (!cx) cx = [parentRow, clip, posClip, true, ptr, atomic, dead, transp, null, 0, ahid, bg, posEl, forced, null];
        stack.push(c); stackCx.push(cx);
      }
    }
  };
  // The context part of a row's memo (see sameCtx), shared by the children of one context.
  const ctxMemo = (c) => c[14] || (c[14] = [c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[10], c[11], c[12]]);
  const rootEl = document.documentElement;
  if (!rootEl) return JSON.stringify({ empty: true, url: location.href, title: '', vw: VW, vh: VH });
  const PLAN = plan();
  const P = PLAN ? I.prev : null;
  const DSUB = PLAN ? PLAN.sub : null, DTOUCH = PLAN ? PLAN.touched : null;
  stack.push(rootEl); stackCx.push([-1, C0, C0, false, false, false, false, false, null, 0, false, WHITE, null, !PLAN, null]);
  const SX = window.scrollX, SY = window.scrollY;
  const DOC_SCROLLER = document.scrollingElement, BODY = document.body;   // read once, not per element
  let count = 0;
  const maxNodes = opts.maxNodes || 200000;
  let htmlClips = false;       // <html> has its own overflow: <body>'s is then not propagated
  // For text blocks (see composeText): per row, whether it is laid out inline; the raw text of
  // inline rows without element children; and, for rows whose inline content may be composed,
  // where each element child sits in their raw text and which rows those children became.
  const inl = [];
  const rawT = new Map();
  const comp = new Map();
  const compRows = [];
  const cutsScratch = [];
  const lstOnly = [];          // [row, role, tier]: rows whose only sign of interactivity is a listener or a tab stop
  // Per row, what the next incremental walk needs (index-free, so a copied subtree shares them).
  const memo = [];
  const NC = [];               // 1: the subtree's layout may depend on boxes outside it (fixed, sticky, absolute)
  const escRows = [];          // walked rows positioned against something above them
  const scrollers = [], controls = [], remote = [], floats = [];
  let newFloat = false;
  let walked = 0, copied = 0;
  const walkedRows = [], walkedForced = [];
  const sameClip = (a, b) => a === b || (a[0] === b[0] && a[1] === b[1] && a[2] === b[2] && a[3] === b[3] && a[4] === b[4]);
  function sameCtx(c, clipIn, posIn, inShadow, parentPtr, atomicAnc, deadAnc, transpAnc, ahidAnc, bgAnc, posEl) {
    return sameClip(c[0], clipIn) && sameClip(c[1], posIn) && c[2] === inShadow && c[3] === parentPtr && c[4] === atomicAnc &&
      c[5] === deadAnc && c[6] === transpAnc && c[7] === ahidAnc && c[8] === bgAnc && c[9] === posEl;
  }
  // Copy the previous walk's subtree at row k (its rows, and what the whole-tree passes need).
  function copyTree(k, parent, pcomp) {
    const e = P.end[k], d = rows.length - k;
    if (pcomp) pcomp.kids.push(rows.length);
    for (let q = k; q < e; q++) {
      let r = P.raw[q];
      const np = q === k ? parent : r[0] + d;
      if (np !== r[0]) { r = r.slice(); r[0] = np; }
      const i = rows.length;
      rows.push(r);
      const m = P.memo[q];
      memo.push(m);
      NC.push(P.nc[q]);
      inl.push(m.il);
      if (m.rt) rawT.set(i, m.rt);
      if (m.cp) {
        const kids = new Array(m.cp.k.length);
        for (let z = 0; z < kids.length; z++) kids[z] = m.cp.k[z] + i;
        comp.set(i, { raw: m.cp.raw, cuts: m.cp.cuts, kids: kids, nfc: m.cp.nfc, flat: '', plain: false });
        compRows.push(i);
      }
      if (m.lst) lstOnly.push([i, m.lst[0], m.lst[1]]);
      if (m.fr) { frames.push([i].concat(m.fr)); S.lastFrames.push(m.el); }
      if (m.su) suspects.push(m.el);
      if (m.pn) pendingNames.push([i, m.el]);
      if (m.cand) occCandidates.push([i].concat(m.cand));
      if (m.sl) slotCtx.set(m.el, m.sl);
      if (m.scr) scrollers.push([m.el, m.scr[0], m.scr[1]]);
      if (m.ctl !== null) controls.push([m.el, m.ctl]);
      if (m.rem) remote.push(m.el);
      if (m.fl) floats.push([m.el].concat(m.fl));
    }
    copied += e - k;
    return e - k;
  }
  while (stack.length) {
    const el = stack.pop(), C = stackCx.pop();
    const tag = el.localName;
    if (SKIP.has(tag)) continue;
    const parent = C[0], inShadow = C[3], pcomp = C[8], slotted = C[9];
    let clipIn = C[1], posIn = C[2], parentPtr = C[4], atomicAnc = C[5], deadAnc = C[6], transpAnc = C[7], ahidAnc = C[10],
      bgAnc = C[11], posElIn = C[12], forced = C[13];
    let ownCx = false;   // the context differs from the shared one (slotted): its memo is its own
    if (slotted) {
      const sl = el.assignedSlot;
      const si = sl && slotCtx.get(sl);
      if (si) { [clipIn, posIn, parentPtr, atomicAnc, deadAnc, transpAnc, ahidAnc, bgAnc, posElIn] = si; ownCx = true; }
      else if (slotted === 1 && !sl) { deadAnc = true; ownCx = true; }     // no slot takes it: not rendered
    }
    if (!forced) {
      if (DSUB.has(el)) forced = true;
      else if (!DTOUCH.has(el)) {
        const k = P.map.get(el);
        if (k !== undefined && !P.nc[k] && count + (P.end[k] - k) <= maxNodes) {
          const m = P.memo[k];
          let ok = m.b !== 0 && sameCtx(m.cx, clipIn, posIn, inShadow, parentPtr, atomicAnc, deadAnc, transpAnc, ahidAnc, bgAnc, posElIn);
          if (ok && m.b === 1) {
            const rc = el.getBoundingClientRect();
            ok = rc.left === m.r[0] && rc.top === m.r[1] && rc.width === m.r[2] && rc.height === m.r[3];
          } else if (ok && m.b === 2) ok = getComputedStyle(el).display === 'none';
          if (ok) { count += copyTree(k, parent, pcomp); continue; }
        }
      }
    }
    if (count++ >= maxNodes) break;
    walked++;
    walkedRows.push(rows.length);
    walkedForced.push(forced ? 1 : 0);
    let id = S.ids.get(el);
    const rowIndex = rows.length;
    let memoLst = null, memoFr = null, memoSu = false, memoPn = false, memoCand = null, memoScr = null;
    if (id === undefined) fresh.push([rowIndex, el]);
    // The element's attribute names, read once: most elements have none of the attributes asked
    // about below, and one look at the names spares a call into the DOM for each of them.
    const an = el.getAttributeNames();
    let af = 0, keep = null;
    for (let i = 0; i < an.length; i++) {
      const a = an[i];
      if (a.startsWith('aria-')) {
        af |= A_ARIA;
        if (a === 'aria-hidden') af |= A_AHID;
        else if (a === 'aria-labelledby') af |= A_ALB;
      } else if (a === 'role') af |= A_ROLE;
      else if (a === 'tabindex') af |= A_TI;
      else if (a === 'onclick' || a === 'onmousedown' || a === 'onpointerdown' || a === 'onmouseup') af |= A_ON;
      else if (a === 'data-testid' || a === 'data-test' || a === 'data-cy') af |= A_TID;
      if (KEEP_ATTR.has(a)) (keep || (keep = [])).push(a);
    }
    const cs = getComputedStyle(el);
    const display = deadAnc ? 'none' : cs.display;
    const dead = deadAnc || display === 'none';
    // Transparent (opacity 0) boxes are laid out and take clicks: it is how styled switches, toggles
    // and file pickers hide their native input. Only a transparent part that lets clicks through
    // (pointer-events: none — a faded-out menu, the native <select> a custom one mirrors) is taken
    // as not there; a checkbox or radio stays (its label takes the click).
    const transp = transpAnc || (!dead && cs.opacity === '0');
    let memoFl = null;
    // (a floated box is blockified: an inline-level display says it does not float, without a read)
    if (!dead && !display.startsWith('inline') && cs.float !== 'none') {
      const rc = el.getBoundingClientRect();
      memoFl = [rc.left, rc.top, rc.width, rc.height, floatMargins(cs)];
      floats.push([el].concat(memoFl));
      if (P && !P.floatSet.has(el)) newFloat = true;
    }
    const vis = dead ? '' : cs.visibility;
    let rendered = !dead && vis !== 'hidden' && vis !== 'collapse';
    // So is a transparent part hidden from assistive technology too (aria-hidden: the mirror input
    // a component keeps for form validation).
    const ariaHidden = (af & A_AHID) !== 0 && el.getAttribute('aria-hidden') === 'true';
    if (rendered && transp && !(tag === 'input' && (el.type === 'checkbox' || el.type === 'radio') && !ariaHidden) &&
        (cs.pointerEvents === 'none' || ariaHidden)) rendered = false;
    let x = 0, y = 0, w = 0, h = 0, ratio = 0;
    let rect = null;
    const pos = dead ? 'static' : cs.position;
    const clip = pos === 'fixed' ? C0 : pos === 'absolute' ? posIn : clipIn;
    if (display !== 'none') {
      rect = el.getBoundingClientRect();
      x = rect.left; y = rect.top; w = rect.width; h = rect.height;
      // A native checkbox or radio shrunk to nothing (the visually-hidden pattern) is where its
      // label is: that is what a person sees and clicks.
      if (rendered && (w < 2 || h < 2) && tag === 'input' && (el.type === 'checkbox' || el.type === 'radio')) {
        const lab = el.closest('label') || labelsFor(el)[0];
        const lr = lab && lab.getBoundingClientRect();
        if (lr && lr.width >= 2 && lr.height >= 2) { x = lr.left; y = lr.top; w = lr.width; h = lr.height; }
      }
    }
    let flags = rendered ? 1 : 0;
    if (inShadow) flags |= 4;
    // Visible ratio: the part of the box inside the clip (viewport ∩ overflow-clipping ancestors),
    // relative to the smaller of the box and the clip (so a huge wrapper that fills the view is visible).
    // A box under 2 px either way (the visually-hidden pattern) is not seen by anyone.
    if (rendered && w >= 2 && h >= 2) {
      const ix = Math.max(x, clip[0]), iy = Math.max(y, clip[1]);
      const ax = Math.min(x + w, clip[0] + clip[2]), ay = Math.min(y + h, clip[1] + clip[3]);
      if (ax > ix && ay > iy) {
        const vis = (ax - ix) * (ay - iy);
        const denom = Math.min(w * h, Math.max(1, clip[2] * clip[3]));
        ratio = Math.min(1, vis / denom);
      }
    }
    let role = roleOf(el, tag, (af & A_ROLE) !== 0), roleIsAria = ROLE_ARIA;
    const isHost = !!(el.shadowRoot || S.closed.has(el));
    const ptr = cs.cursor === 'pointer';
    let tier = 0, interactive = false;
    let listener = S.listeners.has(el);
    if (listener) {
      flags |= 32;
      // A framework's root container (React, Vue) holds the listeners of the whole app it renders:
      // that is delegation, not a click target.
      if (isAppRoot(el)) listener = false;
    }
    if (ptr && !parentPtr) flags |= 64;
    const tabindexAttr = (af & A_TI) ? el.getAttribute('tabindex') : null;
    const ti = tabindexAttr === null ? NaN : parseInt(tabindexAttr, 10);
    const ce = el.isContentEditable && (!el.parentElement || !el.parentElement.isContentEditable);
    if (role && roleIsAria && role !== 'none' && role !== 'presentation' && role !== 'generic') {
      tier = 2;
      if (INTERACTIVE.has(role)) interactive = true;
    }
    // A list item, row or cell that is plainly a click target (its own pointer cursor — or one its
    // list gives every item —, a listener, a click attribute, a tab stop, a listbox or menu around
    // it) is one: an option or menu item when its list says so, else a clickable, named by its text.
    if (tier === 2 && ITEM_ROLES.has(role) && !(af & A_ROLE)) {
      const pe = el.parentElement;
      const pr = pe && tag === 'li' ? (pe.getAttribute('role') || '').trim().toLowerCase() : '';
      const inRole = pr === 'listbox' ? 'option' : (pr === 'menu' || pr === 'menubar') ? 'menuitem' : '';
      const ptrItem = ptr && (!parentPtr || (pe && LIST_TAGS.has(pe.localName)));
      const onattr = (af & A_ON) !== 0;
      if (inRole || onattr || listener || ptrItem || ti >= 0) {
        if (listener && !inRole && !onattr && !ptrItem && !(ti >= 0)) { lstOnly.push([rowIndex, role, tier]); memoLst = [role, tier]; }
        role = inRole || null; roleIsAria = !!inRole; tier = 1;
        if (!atomicAnc) interactive = true;
      }
    }
    let hint = false;
    if (tier === 0) {
      const testid = (af & A_TID) !== 0;
      const onattr = (af & A_ON) !== 0;
      hint = onattr || listener || (ti >= 0) || ce || (ptr && !parentPtr) || (role && !roleIsAria);
      if (hint || testid) {
        tier = 1;
        if (!atomicAnc) interactive = true;
        // Only a listener or a tab stop (or, on a component's host, a pointer cursor): a leaf is a
        // click target; a container of other controls is delegating their clicks, is a focusable
        // scroller, or is a component wrapping its real control (<sl-button> around its <button>)
        // — decided after the walk, when its descendants are known.
        if (!onattr && !ce && !(role && !roleIsAria) && !testid && (isHost || !(ptr && !parentPtr))) { lstOnly.push([rowIndex, role, 0]); memoLst = [role, 0]; }
      }
    }
    if (tier === 2 && ce) interactive = true;
    if (tier === 2 && ti >= 0 && !interactive && role !== 'dialog' && role !== 'region' && role !== 'main') interactive = true;
    if (interactive && atomicAnc && tier < 2) interactive = false;
    if (interactive) flags |= 8;
    if (ti >= 0 || (el.tabIndex >= 0 && interactive)) flags |= 128;
    let name = '';
    let value = null;
    if (tier > 0 || role) {
      name = nameOf(el, tag, role || '', (af & A_ARIA) !== 0);
      if (!name && tier === 1) name = contentText(el, 120);
    }
    // Direct text of this element (its own text nodes), and where its element children sit in it.
    let text = '';
    let nKids = 0;
    cutsScratch.length = 0;
    if (tag !== 'textarea') {
      for (let c = el.firstChild; c; c = c.nextSibling) {
        const nt = c.nodeType;
        if (nt === 3) text += c.data;
        else if (nt === 1 && !SKIP.has(c.localName)) { cutsScratch.push(text.length); nKids++; }
      }
    }
    // (a shadow host renders its own tree: it is a unit of its own, never part of a text run)
    const isInl = !isHost && (display.startsWith('inline') || display === 'contents');
    inl.push(isInl ? 1 : 0);
    // Rows whose inline content may make a text block (or part of one): composed after the walk.
    let cpHere = null;
    if (nKids && !isHost && (text.length || isInl || tag === 'pre' || tag === 'code')) {
      cpHere = { raw: text, cuts: cutsScratch.slice(), kids: [], nfc: nameFromContent(el, role), flat: '', plain: false };
      comp.set(rowIndex, cpHere);
      compRows.push(rowIndex);
    } else if (isInl && text) rawT.set(rowIndex, text);
    // A block's own words are kept whole (up to TB_MAX, then a marker): a paragraph is read, not
    // skimmed. Inline pieces keep a short text (their words are in their block's text too).
    if (text) {
      text = tag === 'pre' ? limitText(preText(text), TB_MAX) : limitText(squash(text), isInl ? MAXT : TB_MAX);
      if (text && !isInl && !isHost && tag !== 'slot' && BLOCK_ROLES.has(role || '')) flags |= 512;
    }
    if (pcomp) pcomp.kids.push(rowIndex);
    let secret = false;
    if (tag === 'input' || tag === 'textarea' || tag === 'select') {
      secret = isSecret(el, tag);
      if (secret) { flags |= 16; value = null; }
      else if (tag === 'select') {
        const o = el.selectedOptions;
        value = o && o.length ? Array.from(o).map((x) => squash(x.textContent || x.label || '')).join(', ') : '';
      } else {
        const type = (el.getAttribute('type') || '').toLowerCase();
        if (type !== 'checkbox' && type !== 'radio' && type !== 'file' && type !== 'hidden' && type !== 'submit' && type !== 'button' && type !== 'reset' && type !== 'image') value = cut(el.value || '', 500);
        else if (type === 'file') value = el.files && el.files.length ? Array.from(el.files).map((f) => f.name).join(', ') : '';
      }
    } else if (ce) {
      value = cut(squash(el.textContent || ''), 1000);
    } else if (VALUE_ROLES.has(role)) {
      // Range widgets say where they are through ARIA (a slider's thumb has no text of its value).
      const vt = el.getAttribute('aria-valuetext'), vn = el.getAttribute('aria-valuenow');
      if (vt && vt.trim()) value = cut(squash(vt), 200);
      else if (vn !== null && vn.trim()) value = vn.trim();
      else if ((tag === 'progress' && el.hasAttribute('value')) || tag === 'meter') value = String(el.value);
    }
    // States: only the non-default ones.
    let st = tier > 0 || interactive ? statesOf(el, tag, role, (af & A_ARIA) !== 0) : null;
    if (el === focused) (st || (st = {})).focused = true;
    // Attributes kept for skeleton/full output and the analyst.
    let at = null;
    if (keep) for (const a of keep) {
      const v = el.getAttribute(a);
      if (v === null) continue;
      (at || (at = {}))[a] = wf(cut(TEXT_ATTR.has(a) ? v.replace(ZW, '') : v, a === 'href' ? 120 : 200));
    }
    // Scroll containers: depth and whether more content lies below.
    let sc = null;
    let childClip = clip;
    // (overflow does not apply to inline boxes: not read for them)
    if (display !== 'none' && display !== 'contents' && display !== 'inline' && rect) {
      const ov = cs.overflowY, ovx = cs.overflowX;
      const clipsY = ov !== 'visible', clipsX = ovx !== 'visible';
      const isDocScroller = el === DOC_SCROLLER;
      if ((clipsY || clipsX) && !isDocScroller) memoScr = [el.scrollLeft, el.scrollTop];
      let ownClip = clipsY || clipsX;
      if (el === rootEl) { htmlClips = ownClip; ownClip = false; }      // the viewport's overflow
      else if (el === BODY && !htmlClips) ownClip = false;     // propagated to the viewport
      if (!isDocScroller && ownClip) {
        // Children are clipped to this box (its padding box approximated by the border box).
        const nx = Math.max(clip[0], x), ny = Math.max(clip[1], y);
        const nx2 = Math.min(clip[0] + clip[2], x + w), ny2 = Math.min(clip[1] + clip[3], y + h);
        // [4]: 1 once a clipping box on the way down has no size (a collapsed panel): nothing in it is seen
        const gone = clip[4] === 1 || (clipsX && w < 2) || (clipsY && h < 2) ? 1 : 0;
        childClip = [clipsX ? nx : clip[0], clipsY ? ny : clip[1], clipsX ? Math.max(0, nx2 - nx) : clip[2], clipsY ? Math.max(0, ny2 - ny) : clip[3], gone];
      }
      const scrollableY = (ov === 'auto' || ov === 'scroll' || isDocScroller) && el.scrollHeight > el.clientHeight + 4;
      if (scrollableY && !isDocScroller) {
        const range = el.scrollHeight - el.clientHeight;
        sc = { d: Math.round(100 * el.scrollTop / range), m: el.scrollTop + el.clientHeight < el.scrollHeight - 4, sh: el.scrollHeight, ch: el.clientHeight };
      }
    }
    if (tag === 'iframe' || tag === 'frame') {
      flags |= 256;
      // Content box offset, for stitching the child document into top coordinates.
      let cx = x, cy = y, cw = w, ch = h;
      if (rect) {
        const bl = parseFloat(cs.borderLeftWidth) + parseFloat(cs.paddingLeft);
        const bt = parseFloat(cs.borderTopWidth) + parseFloat(cs.paddingTop);
        cx = x + bl; cy = y + bt; cw = el.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
        ch = el.clientHeight - parseFloat(cs.paddingTop) - parseFloat(cs.paddingBottom);
      }
      const vx = Math.max(cx, clip[0]), vy = Math.max(cy, clip[1]);
      const vx2 = Math.min(cx + cw, clip[0] + clip[2]), vy2 = Math.min(cy + ch, clip[1] + clip[3]);
      memoFr = [cx + OX, cy + OY, cw, ch, [vx - cx, vy - cy, Math.max(0, vx2 - vx), Math.max(0, vy2 - vy)], rendered];
      frames.push([rowIndex].concat(memoFr));
      S.lastFrames.push(el);
    }
    if (tag.indexOf('-') > 0 && !el.shadowRoot && !S.closed.has(el) && !S.noRoot.has(el)) { suspects.push(el); memoSu = true; }
    if (interactive && !name && (tag === 'input' || tag === 'textarea' || tag === 'select' || role === 'textbox' || role === 'combobox')) { pendingNames.push([rowIndex, el]); memoPn = true; }
    if (interactive && rendered && ratio > 0) { memoCand = [el, x, y, w, h, clip]; occCandidates.push([rowIndex].concat(memoCand)); }
    // Hidden from a person: rendered (laid out, in the tree), but nobody can see it. Such text and
    // controls never reach the model's payload and are marked in the other formats.
    const ahid = ahidAnc || ariaHidden;
    let bg = bgAnc;
    let hid = 0;
    // (the background only matters to this element's own text and to what is inside it: a leaf
    // without text does not read it)
    if (!dead && (text || el.firstElementChild || isHost || tag === 'slot')) {
      const bc = cs.backgroundColor;
      if (cs.backgroundImage !== 'none') bg = null;                 // a picture behind: colour unknown
      else if (bc && bc !== 'rgba(0, 0, 0, 0)' && bc !== 'transparent') bg = bc.indexOf('rgba') === 0 ? null : bc;
    }
    if (rendered && (text || interactive || name)) {
      if (ahid) hid = 1;
      else if (transp && !interactive) hid = 2;
      else if (clip[4] === 1) hid = 3;   // inside a box that clips its overflow and has no size
      else if (display !== 'contents' && (w < 2 || h < 2) && (interactive || cs.overflowX !== 'visible' || cs.overflowY !== 'visible' || !text)) hid = 4;
      else if (display !== 'contents' && (x + SX + w <= 0 || y + SY + h <= 0)) hid = 5;
      else if ((text || !interactive) && parseFloat(cs.fontSize) === 0) hid = 6;
      else if (text) {
        const fg = cs.color;
        if (fg === 'rgba(0, 0, 0, 0)' || fg === 'transparent') hid = 2;
        else if (bg && sameColour(fg, bg)) hid = 7;
      }
      if (hid) flags |= 2048 | (hid << 12);
    }
    let extra = 0;
    if (st || at || sc) { extra = {}; if (st) extra.st = st; if (at) extra.a = at; if (sc) extra.sc = sc; }
    rows.push([parent, id === undefined ? null : id, tag, role || '', wf(name.length > 250 ? name.slice(0, 250) : name),
      wf(text), value === null ? null : wf(value), flags, tier,
      Math.round(x + OX), Math.round(y + OY), Math.round(w), Math.round(h),
      Math.round(ratio * 100) / 100, extra]);
    const atomicHere = atomicAnc || (interactive && ATOMIC.has(role || ''));
    const posElHere = pos === 'static' ? posElIn : el;
    const mm = {
      el: el, cx: ownCx ? [clipIn, posIn, inShadow, parentPtr, atomicAnc, deadAnc, transpAnc, ahidAnc, bgAnc, posElIn] : ctxMemo(C),
      r: rect ? [rect.left, rect.top, rect.width, rect.height] : null,
      b: deadAnc ? 3 : display === 'none' ? 2 : (!rect || display === 'contents' || display === 'inline') ? 0 : 1,
      il: isInl ? 1 : 0, rt: rawT.get(rowIndex) || null, cp: null, lst: memoLst, fr: memoFr,
      su: memoSu, pn: memoPn, cand: memoCand, sl: null, scr: memoScr, ctl: null, rem: false, fl: memoFl,
    };
    if (tag === 'input' || tag === 'select' || tag === 'textarea') mm.ctl = ctlSig(el);
    mm.rem = memoPn || tag === 'input' || tag === 'select' || tag === 'textarea' || tag === 'meter' || tag === 'progress' ||
      (af & A_ALB) !== 0;
    memo.push(mm);
    NC.push(0);
    if (pos === 'fixed' || pos === 'sticky') escRows.push([rowIndex, null]);
    else if (pos === 'absolute') escRows.push([rowIndex, posElIn]);
    if (memoScr) scrollers.push([el, memoScr[0], memoScr[1]]);
    if (mm.ctl !== null) controls.push([el, mm.ctl]);
    if (mm.rem) remote.push(el);
    if (tag === 'svg' || tag === 'iframe' || tag === 'frame' || tag === 'math') continue;  // opaque subtrees
    if (tag === 'slot') slotCtx.set(el, mm.sl = [childClip, pos === 'static' ? posIn : childClip, ptr, atomicHere, dead, transp, ahid, bg, posElHere]);
    if (el.firstElementChild || isHost) pushChildren(el, rowIndex, childClip, pos === 'static' ? posIn : childClip, inShadow, ptr, atomicHere, dead, transp, cpHere, ahid, bg, posElHere, forced);
  }
  // A float that was not there makes the lines of the blocks after it wrap anew: walk it all.
  if (newFloat) return vigilWalk(KEY, Object.assign({}, opts, { full: true, why: 'a floating box appeared' }));
  const nRows = rows.length;
  // Where each subtree ends, and which subtrees lean on boxes above them.
  const END = new Int32Array(nRows);
  for (let i = nRows - 1; i >= 0; i--) {
    if (END[i] < i + 1) END[i] = i + 1;
    const p = rows[i][0];
    if (p >= 0 && END[p] < END[i]) END[p] = END[i];
  }
  {
    let budget = 400000;
    for (const [ri, cb] of escRows) {
      for (let p = rows[ri][0]; p >= 0 && budget-- > 0; p = rows[p][0]) {
        if (cb !== null && memo[p].el === cb) break;
        NC[p] = 1;
      }
      if (budget <= 0) { for (let i = 0; i < nRows; i++) NC[i] = 1; break; }
    }
  }
  // Text-block inputs of every row, index-free (kids relative to their row) for later copies.
  for (const ri of compRows) {
    const m = memo[ri];
    if (m.cp) continue;
    const c = comp.get(ri);
    const k = new Array(c.kids.length);
    for (let z = 0; z < k.length; z++) k[z] = c.kids[z] - ri;
    m.cp = { raw: c.raw, cuts: c.cuts, k: k, nfc: c.nfc };
  }
  // The whole-tree passes work on copies: the rows above stay as the walk made them, for reuse.
  // (copied on first write: W(i))
  const RAW = rows.slice();
  const W = (i) => { let r = rows[i]; if (r === RAW[i]) r = rows[i] = r.slice(); return r; };

  // A container whose only sign of interactivity is a click listener and which holds other
  // controls is delegating its children's clicks (a framework root, a list's handler): it is not
  // a click target itself. A listener on a leaf — nothing interactive inside — still makes one.
  if (lstOnly.length) {
    const below = new Uint8Array(rows.length);
    for (let i = rows.length - 1; i > 0; i--) {
      const p = rows[i][0];
      if (p >= 0 && ((rows[i][7] & 8) || below[i])) below[p] = 1;
    }
    for (const [ri, role0, tier0] of lstOnly) {
      if (!below[ri]) continue;
      const r = W(ri);
      r[7] &= ~8; r[3] = role0 || ''; r[8] = tier0; r[4] = '';
    }
  }
  composeText();
  const tWalk = performance.now();

  // Text blocks. A block (a paragraph, a list item, a cell, a code block) whose content is text
  // mixed with inline elements — links, code, emphasis, highlighted tokens — gets as its text that
  // whole content in reading order, so "specified by RFC 2616 (which obsoletes RFC 2068)" keeps its
  // words; the inline elements stay in the tree (links keep their IDs) but are marked folded, so
  // the serializations do not repeat them one token per node. Hidden inline parts are not read.
  // Text-level content: no role or a text-level one (code, emphasis, a link, an image) — not a
  // widget (a field, a button, a meter), which keeps its own node.
  function foldable(row) { return TEXT_ROLES.has(row[3]); }
  function composeText() {
    for (let k = compRows.length - 1; k >= 0; k--) {      // children before their parents
      const ri = compRows[k], cp = comp.get(ri);
      const raw = cp.raw, cuts = cp.cuts, kids = cp.kids;
      // words: its own text has words; plain: some words are not a control's; prose: every inline
      // child is text-level (formatting, links, images), not a widget such as a meter or a field
      let out = '', at = 0, words = false, plain = false, prose = true, parts = 0, block = false;
      for (let j = 0; j < cuts.length; j++) {
        const seg = raw.slice(at, cuts[j]);
        at = cuts[j];
        if (!words && /\S/.test(seg)) words = true;
        out += seg;
        const c = kids[j];
        if (c === undefined) continue;                  // the walk stopped at its node budget
        const row = rows[c];
        if (!(row[7] & 1) || (row[7] & 2048)) continue; // not rendered, or hidden from a person: not read
        if (!inl[c]) { out += '\n'; block = true; continue; }
        if (!foldable(row)) prose = false;
        const cc = comp.get(c);
        let t;
        if (cc) { t = cc.flat; if (cc.plain && !(row[7] & 8)) plain = true; if (cc.block) block = true; if (!cc.prose) prose = false; }
        else {
          t = rawT.get(c) || (row[2] === 'img' ? ' ' + row[4] + ' ' : row[2] === 'br' ? '\n' : '');
          if (!plain && !(row[7] & 8) && /\S/.test(t)) plain = true;
        }
        if (t) { out += t; parts++; }
      }
      const tail = raw.slice(at);
      if (!words && /\S/.test(tail)) words = true;
      out += tail;
      if (words) plain = true;
      cp.flat = out; cp.plain = plain; cp.block = block; cp.prose = prose;
      if (inl[ri]) continue;
      let r = rows[ri];
      // A name from content leaves out what is not rendered (a heading's hidden permalink "¶").
      if (cp.nfc && !block && parts < cuts.length) {
        const nm = squash(out);
        if (nm && nm !== r[4] && r[4].indexOf(nm) >= 0) (r = W(ri))[4] = wf(cut(nm, 250));
      }
      if (!parts || !plain || !(words || prose)) continue;
      if (!BLOCK_ROLES.has(r[3])) continue;             // a dialog, a form, a list: containers, not text
      const pre = r[2] === 'pre';
      const full = pre ? preText(out) : squash(out);
      if (!full) continue;
      r = W(ri);
      r[5] = wf(limitText(full, TB_MAX));
      r[7] |= 512;
      if (cp.nfc && !block) r[4] = wf(cut(pre ? squash(full) : full, 250));
      // Mark the inline content as folded into this block (not a widget: a meter or a field in a
      // sentence keeps its own node).
      const todo = kids.slice();
      while (todo.length) {
        const c = todo.pop();
        if (c === undefined || !inl[c] || !foldable(rows[c])) continue;
        W(c)[7] |= 1024;
        const cc = comp.get(c);
        if (cc) for (const g of cc.kids) todo.push(g);
      }
    }
  }

  // Label hunting for controls that are still unnamed.
  for (const [ri, el] of pendingNames) W(ri)[4] = wf(cut(huntLabel(el), 250));

  // Stable IDs for elements seen for the first time: a framework may have destroyed and
  // re-created an element we knew; give it its old ID back when tag, role, name and the
  // text of its row match — the nearest such retired ID wins, however far rows shifted.
  let recovered = 0;
  if (fresh.length) {
    const retired = new Map();
    if (S.info.size) {
      for (const [oid, inf] of S.info) {
        const ref = S.byId.get(oid);
        const old = ref && ref.deref();
        if (old && old.isConnected) continue;
        let arr = retired.get(inf.k);
        if (!arr) retired.set(inf.k, arr = []);
        arr.push([oid, inf.x, inf.y]);
      }
    }
    for (const [ri, el] of fresh) {
      const row = rows[ri];
      let nid = null;
      if (retired.size && ((row[7] & 8) || (row[8] === 2 && row[4]))) {
        const arr = retired.get(keyOf(el, row));
        if (arr && arr.length) {
          let best = 0, bd = Infinity;
          for (let i = 0; i < arr.length; i++) {
            const d = Math.abs(arr[i][1] - row[9]) + Math.abs(arr[i][2] - row[10]);
            if (d < bd) { bd = d; best = i; }
          }
          nid = arr[best][0];
          arr.splice(best, 1);
          recovered++;
        }
      }
      if (nid === null) { nid = prefix + S.next; S.next++; }
      S.ids.set(el, nid);
      S.byId.set(nid, new WeakRef(el));
      row[1] = nid;
      RAW[ri][1] = nid;   // a row walked now: not shared with the previous walk
    }
  }
  const tIds = performance.now();

  // Occlusion: a multi-point hit test over the visible part of the box — the centre and four points
  // at 25 % / 75 % of its width and height: inside the shape of any box (a border-radius draws at
  // most an ellipse, which holds them), and clear of the thin edges neighbours overlap (a grid's
  // column-resize handles). A hit on the element,
  // on its label, on the shadow host it lives in (a checkbox inside <sl-checkbox>) or anything
  // inside those is the element. A hit on one of its own ancestors means the point fell through
  // the element (a rounded corner, a transparent edge): it says nothing. Anything else covers it.
  let hits = 0;
  const up = (n) => n.parentNode || (n.nodeType === 11 ? n.host : null);
  const map = new Map();
  for (let i = 0; i < nRows; i++) map.set(memo[i].el, i);
  // An incremental walk hit-tests again only where something changed: the boxes of the rows in changed
  // subtrees and of the ancestors whose box moved (where they are and where they were), and of the
  // elements gone. A control copied from the last walk whose visible part meets none of them keeps its
  // last result (its cover's description is read again).
  const occNow = new Map();
  let changed = null;
  if (P && P.occ) {
    changed = [];
    const add = (r) => { if (r && r[2] > 0 && r[3] > 0) changed.push(r); };
    for (let z = 0; z < walkedRows.length; z++) {
      const m = memo[walkedRows[z]];
      const k = P.map.get(m.el);
      const old = k !== undefined ? P.memo[k].r : null;
      if (walkedForced[z] || !old || !m.r || old[0] !== m.r[0] || old[1] !== m.r[1] || old[2] !== m.r[2] || old[3] !== m.r[3]) {
        add(m.r);
        add(old);
      }
    }
    for (let q = 0; q < P.memo.length && changed.length <= 400; q++) if (!map.has(P.memo[q].el)) add(P.memo[q].r);
    if (changed.length > 400) changed = null;
  }
  const WALKED = new Uint8Array(nRows);
  for (const ri of walkedRows) WALKED[ri] = 1;
  const coverDesc = (b) => wf(cut(b.localName + (b.id ? '#' + b.id : '') + ' "' + contentText(b, 80) + '"', 120));
  const meets = (x1, y1, x2, y2) => {
    for (const r of changed) if (r[0] < x2 + 1 && r[0] + r[2] > x1 - 1 && r[1] < y2 + 1 && r[1] + r[3] > y1 - 1) return true;
    return false;
  };
  for (const [ri, el, x, y, w, h, clip] of occCandidates) {
    if (!(rows[ri][7] & 8)) continue;     // no longer a click target (a delegating container)
    const x1 = Math.max(x, clip[0], 0), y1 = Math.max(y, clip[1], 0);
    const x2 = Math.min(x + w, clip[0] + clip[2], VW), y2 = Math.min(y + h, clip[1] + clip[3], VH);
    if (x2 <= x1 || y2 <= y1) continue;
    if (changed && !WALKED[ri]) {
      const pr = P.occ.get(el);
      if (pr !== undefined && !meets(x1, y1, x2, y2)) {
        occNow.set(el, pr);
        if (pr) {
          W(ri)[7] |= 2;
          if (pr !== true) {
            const ex = rows[ri][14] = rows[ri][14] ? Object.assign({}, rows[ri][14]) : {};
            ex.ob = pr[0];
            ex.obd = coverDesc(pr[2]);
          }
        }
        continue;
      }
    }
    const ix = (x2 - x1) / 4, iy = (y2 - y1) / 4;
    const pts = [[(x1 + x2) / 2, (y1 + y2) / 2], [x1 + ix, y1 + iy], [x2 - ix, y1 + iy], [x1 + ix, y2 - iy], [x2 - ix, y2 - iy]];
    const root = rootOf(el);
    const hitter = root.elementFromPoint ? root : document;
    let ok = 0, n = 0, blocker = null, owners = null;
    for (const [px, py] of pts) {
      // Three points either way decide it (at most five count): the rest cannot change the answer.
      if (ok >= 3 || n - ok >= 3) break;
      const top = hitter.elementFromPoint(px, py);
      hits++;
      if (!top) continue;
      if (top === el) { n++; ok++; continue; }
      if (!owners) {
        owners = new Set([el]);
        for (const l of labelsFor(el)) owners.add(l);
        const wl = el.closest('label'); if (wl) owners.add(wl);
        for (let hst = rootOf(el).host; hst; hst = rootOf(hst).host) owners.add(hst);
      }
      let mine = false;
      for (let q = top; q; q = up(q)) if (owners.has(q)) { mine = true; break; }
      if (mine) { n++; ok++; continue; }
      let container = false;
      for (let q = up(el); q; q = up(q)) if (q === top) { container = true; break; }
      if (container) continue;
      n++;
      if (!blocker) blocker = top;
    }
    let res = false;
    if (n > 0 && ok / n < 0.5) {
      W(ri)[7] |= 2;
      res = true;
      if (blocker) {
        // Name the covering element by its highest ancestor that does not contain the target.
        let b = blocker;
        while (b.parentElement && b.parentElement !== document.body && !b.parentElement.contains(el)) b = b.parentElement;
        const ex = rows[ri][14] = rows[ri][14] ? Object.assign({}, rows[ri][14]) : {};
        ex.ob = S.ids.get(b) || null;
        ex.obd = coverDesc(b);
        res = [ex.ob, ex.obd, b];
      }
    }
    occNow.set(el, res);
  }
  const tOcc = performance.now();

  // Remember what each non-structural node looked like, for re-creation matching next time.
  // The key is reused while the name is unchanged (it costs a text walk of the row).
  const newInfo = new Map();
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    if (!(row[7] & 8) && !(row[8] === 2 && row[4])) continue;
    const prev = S.info.get(row[1]);
    if (prev && prev.n === row[4] && prev.x === row[9] && prev.y === row[10]) { newInfo.set(row[1], prev); continue; }
    let k;
    if (prev && prev.n === row[4]) k = prev.k;
    else { const ref = S.byId.get(row[1]); const el = ref && ref.deref(); k = el ? keyOf(el, row) : ''; }
    newInfo.set(row[1], { k: k, n: row[4], x: row[9], y: row[10] });
  }
  S.info = newInfo;
  // Forget IDs of elements that are gone and were not re-created.
  if (S.byId.size > rows.length * 2 + 1000) {
    for (const [oid, ref] of S.byId) { const e = ref.deref(); if (!e || !e.isConnected) S.byId.delete(oid); }
  }
  S.suspects = suspects;
  const tEnd = performance.now();
  function keyOf(el, row) {
    // tag | role | name | context: the text of the nearest row-like ancestor (or the parent).
    let ctx = '';
    const item = el.parentElement && el.parentElement.closest('li,tr,[role=row],[role=listitem],[role=option],article,[role=article]');
    const c = item || el.parentElement;
    if (c) {
      ctx = ctxCache.get(c);
      if (ctx === undefined) { ctx = contentText(c, 80).slice(0, 80); ctxCache.set(c, ctx); }
    }
    return row[2] + '|' + row[3] + '|' + row[4] + '|' + ctx;
  }

  // Whether two row extras would serialize the same (plain objects, strings, numbers, booleans, null).
  function sameJson(a, b) {
    if (a === b) return true;
    if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) || Array.isArray(b)) return false;
    const ka = Object.keys(a), kb = Object.keys(b);
    if (ka.length !== kb.length) return false;
    for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i] || !sameJson(a[ka[i]], b[kb[i]])) return false;
    return true;
  }

  // Keep this walk for the next one, and send only the rows that changed since the last one the
  // caller holds (opts.base: [token, seq] of the rows it kept).
  const old = I.prev;
  const truncated = count > maxNodes;
  I.prev = {
    raw: RAW, memo: memo, nc: NC, end: END, map: map, final: rows, key: optsKey, vw: VW, vh: VH,
    dpr: window.devicePixelRatio, sx: window.scrollX, sy: window.scrollY, truncated: truncated,
    controls: controls, scrollers: scrollers, remote: remote, focused: focused, floats: floats,
    floatSet: new Set(floats.map((f) => f[0])), hover: HOVER || hoverChain(), anims: ANIM.targets, occ: occNow,
  };
  const seq = ++I.seq;
  let out = rows, diff = null;
  const base = opts.base;
  if (old && base && base[0] === I.tok && base[1] === I.sent) {
    // Parents in the compact form (`pd`): a kept row's parent is the one it had, shifted as its run
    // is; only the rows whose parent moved otherwise are listed, so the reply follows the change.
    const same = [], ch = [], body = [], pd = [];
    const of = old.final;
    let runI = -1, runJ = -1, runN = 0;
    for (let i = 0; i < nRows; i++) {
      const r = rows[i];
      const j = old.map.get(memo[i].el);
      let eq = j !== undefined;
      if (eq) {
        const o = of[j];
        if (r !== o) {
          for (let f = 1; f < 14; f++) if (r[f] !== o[f]) { eq = false; break; }
          if (eq && r[14] !== o[14]) eq = !!(r[14] && o[14]) && sameJson(r[14], o[14]);
        }
        if (eq) {
          const op = o[0];
          if (r[0] !== (op >= 0 ? op + i - j : op)) pd.push(i, r[0]);
        }
      }
      if (!eq) { ch.push(i); body.push(r); continue; }
      if (runN && i === runI + runN && j === runJ + runN) runN++;
      else { if (runN) same.push(runI, runJ, runN); runI = i; runJ = j; runN = 1; }
    }
    if (runN) same.push(runI, runJ, runN);
    diff = { base: I.sent, n: nRows, pd: pd, same: same, ch: ch };
    out = body;
  }
  I.sent = seq;
  const se = document.scrollingElement || document.documentElement;
  return JSON.stringify({
    url: location.href, title: wf(document.title || ''), vw: VW, vh: VH,
    sx: window.scrollX, sy: window.scrollY, sw: se.scrollWidth, sh: se.scrollHeight,
    dpr: window.devicePixelRatio, ver: S.ver, ready: document.readyState,
    rows: out, diff: diff, tok: I.tok, seq: seq, frames: frames, suspects: suspects.length, truncated: truncated,
    inc: { mode: PLAN ? 'incremental' : 'full', why: I.why, walked: walked, copied: copied },
    t: { walk: tWalk - t0, ids: tIds - tWalk, occlusion: tOcc - tIds, info: tEnd - tOcc, hits: hits, recovered: recovered },
  });
}
