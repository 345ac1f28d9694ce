// Walker part 2 of 7: names, roles and states of an element (accname, implicit roles, labels).
// A section of the walker factory (head.js opens it): the parts share its scope and are joined in order
// by engine/browser/target.py (WALKER_PARTS). Its phase function runs once per walk, in order.

  // Text of an element's content for name-from-content roles: text, img alt, aria-label of
  // children; hidden subtrees skipped when cheaply known.
  // skip: an element left out (a control inside the label that names it is not part of its name).
  function contentText(el, budget, skip) {
    // The common case first, with the same answer: no children, or one text child, and no shadow
    // root or slot that would put other nodes there.
    const f = el.firstChild;
    if ((!f || (f === el.lastChild && f.nodeType === 3)) && el.localName !== 'slot' && !el.shadowRoot && !S.closed.has(el) &&
        !genHit(el)) return f ? squash(f.data) : '';
    let out = '';
    const stack = [el];
    let guard = 0;
    while (stack.length && out.length < budget && guard++ < 400) {
      const n = stack.pop();
      if (typeof n === 'string') { out += n; continue; }
      if (n.nodeType === 3) { out += n.data; continue; }
      if (n.nodeType !== 1) continue;
      if (n !== el) {
        if (n === skip) continue;
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
      const kids = sr ? null : (n.localName === 'slot' && n.assignedNodes ? n.assignedNodes({ flatten: true }) : null);
      const block = n !== el && !INLINE.has(n.localName);
      if (block) { out += ' '; stack.push(' '); }
      // its ::before words first, its ::after words last (accname counts generated content)
      if (genHit(n)) { const g = genWords(n); out += g[0]; stack.push(g[1]); }
      // (children by their siblings, not a NodeList: the common case, and cheaper)
      if (kids) for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
      else for (let c = (sr || n).lastChild; c; c = c.previousSibling) stack.push(c);
    }
    return squash(out);
  }
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
    if (!s.trim()) {
      const wrap = el.closest('label');
      // (a label names only its first labelable descendant or its `for` target; the old rule is
      // kept for input, select and textarea)
      if (wrap && (NATIVE_FIELD.has(el.localName) || wrap.control === el)) s = contentText(wrap, 150, el);
    }
    return squash(s);
  }
  const NATIVE_FIELD = new Set(['input', 'select', 'textarea']);
  // HTML's labelable elements besides input, select, textarea, meter and progress: a <label for>
  // (or a wrapping label) names a button — the checkbox or switch of headless kits is a
  // <button role=checkbox> beside its <label for> —, an output, and a form-associated custom element.
  const labelable = (el, tag) => tag === 'button' || tag === 'output' ||
    (tag.indexOf('-') > 0 && !!(el.constructor && el.constructor.formAssociated));

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
    if (labelable(el, tag)) { const l = labelsText(el); if (l) return l; }
    if (tag === 'img' || tag === 'area') return squash(el.getAttribute('alt') || el.getAttribute('title') || '');
    if (tag === 'fieldset') { const lg = el.querySelector(':scope > legend'); if (lg) return contentText(lg, 150); }
    if (tag === 'table') { const c = el.querySelector(':scope > caption'); if (c) return contentText(c, 150); }
    if (tag === 'figure') { const c = el.querySelector(':scope > figcaption'); if (c) return contentText(c, 150); }
    if (NAME_FROM_CONTENT.has(role)) {
      const s = contentText(el, 260) || (INTERACTIVE.has(role) ? generatedText(el) : '');
      if (s) return s;
    }
    const t = el.getAttribute('title');
    return t ? squash(t) : '';
  }

  // CSS generated content (::before/::after) is part of a name from content, as browsers compute
  // it: a picker whose label is `content: attr(data-label)` or `content: 'Normal'`. Read only for
  // an element with no other content (a cost of two style reads).
  function generatedText(el) {
    let out = '';
    for (const ps of ['::before', '::after']) {
      let c = '';
      try { c = getComputedStyle(el, ps).content || ''; } catch (e) { continue; }
      const m = /^(["'])(.*)\1$/.exec(c);
      if (m) out += m[2].replace(/\\(.)/g, '$1') + ' ';
      else { const a = /^attr\(\s*([\w-]+)\s*\)$/.exec(c); if (a) out += (el.getAttribute(a[1]) || '') + ' '; }
    }
    return squash(out.replace(/[\uE000-\uF8FF]/g, ''));   // (icon-font glyphs are no words)
  }

  // CSS generated content a person reads (a price's currency sign, "In stock"): the page's style sheets
  // say which selectors give a ::before or ::after words (plan.js, cssFlags: I.css.gen); only an element
  // one of them may match is asked for its pseudo-elements' styles (two style reads), so a page without
  // such rules pays nothing. Quoted strings and attr() are read; counter() and images are not.
  function genHit(el) {
    const G = I.css && I.css.gen;
    if (!G) return false;
    if (G.any) return safeMatches(el, G.sel);
    if (G.tag.has(el.localName)) return safeMatches(el, G.sel);
    if (G.id.size && el.id && G.id.has(el.id)) return safeMatches(el, G.sel);
    const cl = el.classList;
    if (cl) for (let i = 0; i < cl.length; i++) if (G.cls.has(cl[i])) return safeMatches(el, G.sel);
    return false;
  }
  // [before, after]: the words of an element's ::before and ::after as it shows them (with a space
  // around one laid out as a block).
  function genWords(el) {
    const out = ['', ''];
    for (let k = 0; k < 2; k++) {
      let ps = null;
      try { ps = getComputedStyle(el, k ? '::after' : '::before'); } catch (e) { continue; }
      const c = ps.content;
      if (!c || c === 'none' || c === 'normal' || ps.display === 'none') continue;
      let t = contentWords(el, c);
      if (!t || NO_WORDS.test(t)) continue;
      if (ps.textTransform !== 'none') t = transformText(t, ps.textTransform, true);
      out[k] = ps.display.startsWith('inline') ? t : ' ' + t + ' ';
    }
    return out;
  }
  // Punctuation and separators alone (a title's ":", a breadcrumb's "/" or "›", a list's "•") are no words a
  // person reads as text; a currency sign or a star is.
  const NO_WORDS = /^[\p{P}\p{Sm}\s]*$/u;
  // The words of a computed `content` value: its strings and attr() values in order (counter(), url()
  // and the alternative text after `/` are left out), icon-font glyphs dropped.
  function contentWords(el, c) {
    let out = '';
    const re = /"((?:\\.|[^"\\])*)"|'((?:\\.|[^'\\])*)'|attr\(\s*([\w-]+)\s*\)|(\/)/g;
    let m;
    while ((m = re.exec(c))) {
      if (m[4]) break;
      if (m[3]) out += el.getAttribute(m[3]) || '';
      else out += (m[1] !== undefined ? m[1] : m[2]).replace(/\\([0-9a-fA-F]{1,6}) ?|\\(.)/g,
        (q, h, ch) => (h ? String.fromCodePoint(parseInt(h, 16)) : ch));
    }
    return out.replace(/[\uE000-\uF8FF]/g, '').replace(/\n/g, ' ');
  }
  // Text as CSS text-transform shows it. `capitalize` upper-cases a word's first letter; `start`: the
  // text starts a word (else its first letter may continue a word of the element before it).
  function transformText(s, tt, start) {
    if (tt === 'uppercase') return s.toUpperCase();
    if (tt === 'lowercase') return s.toLowerCase();
    if (tt === 'capitalize') {
      return s.replace(/(^|\s)(\p{Ll})/gu, (m, a, b, i) => {
        if (i === 0 && !a && !start) return m;
        const u = b.toUpperCase();
        return a + (u.length === 1 ? u : b);
      });
    }
    return s;
  }

  // An element's own text (its text nodes; `cuts`: where its element children sit, kept in step) as
  // text-transform shows it. Capitalize never starts a word at a cut (the child's words may run on).
  function transformRaw(text, cuts, tt) {
    if (tt !== 'uppercase' && tt !== 'lowercase' && tt !== 'capitalize') return text;
    if (!cuts.length) return transformText(text, tt, true);
    let out = '', at = 0;
    const moved = [];
    for (let j = 0; j <= cuts.length; j++) {
      const end = j < cuts.length ? cuts[j] : text.length;
      out += transformText(text.slice(at, end), tt, j === 0);
      at = end;
      if (j < cuts.length) moved.push(out.length);
    }
    for (let j = 0; j < moved.length; j++) cuts[j] = moved[j];
    return out;
  }

  // Label hunting for unnamed form controls: nearby preceding text, then the name attribute.
  function huntLabel(el) {
    // Checkboxes and radios are usually followed by their text: <input type=checkbox> Subscribe
    const ty = (el.getAttribute('type') || el.getAttribute('role') || '').toLowerCase();
    if (ty === 'checkbox' || ty === 'radio' || ty === 'switch') {
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
          // a previous sibling that holds a field is that field's block (its label, its input):
          // its text and anything before it name that field, not this one
          if (holdsField(p)) return byName(el);
          if (!SKIP.has(t) && p.getClientRects().length) { const s = contentText(p, 120); if (s) return s; }  // hidden text is no label
        }
        p = p.previousSibling;
      }
      n = n.parentElement; hops++;
      if (n && (n.localName === 'form' || n.localName === 'body')) break;
    }
    return byName(el);
  }
  // The last resort: the name attribute — the control's own, or that of the one native field a
  // custom select keeps inside it for the form (Choices.js).
  function byName(el) {
    let nm = el.getAttribute('name');
    if (!nm && el.firstElementChild) {
      const inner = el.querySelectorAll('select[name],input[name],textarea[name]');
      if (inner.length === 1) nm = inner[0].getAttribute('name');
    }
    return nm ? nm.replace(/[_-]+/g, ' ').trim() : '';
  }
  const FIELD_SEL = 'input:not([type=hidden]):not([type=submit]):not([type=button]):not([type=reset]):not([type=image]),' +
    'select,textarea,[role=combobox],[role=textbox],[role=listbox],[role=searchbox],[role=spinbutton],[contenteditable=""],[contenteditable=true]';
  const holdsField = (p) => p.firstElementChild !== null && !!p.querySelector(FIELD_SEL);
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
    // (an SVG link's address may be xlink:href)
    if (tag === 'a' || tag === 'area') return el.hasAttribute('href') || el.hasAttribute('xlink:href') ? ['link', true] : [null, false];
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

  // Grids whose library attaches a click listener to every row and every cell (Grid.js, on Preact):
  // the row is one click target (its links and buttons stay theirs), its cells are parts of it —
  // not one clickable per cell, which floods the payload. (Used by the walk's item classification.)
  function rowOfClickCells(el, tag) {
    if (tag !== 'tr' || !S.listeners.has(el)) return false;
    for (let c = el.firstElementChild; c; c = c.nextElementSibling) if (c.localName === 'td' && S.listeners.has(c)) return true;
    return false;
  }
  function cellOfClickRow(el, tag) {
    return (tag === 'td' || tag === 'th') && !!el.parentElement && rowOfClickCells(el.parentElement, 'tr');
  }

  const isSecret = (el) => S.secret(el);
  // What an element's attribute names say (see the walk): bits.
  const A_ARIA = 1, A_AHID = 2, A_ALB = 4, A_ROLE = 8, A_TI = 16, A_ON = 32, A_TID = 64;

  // Per walk: set by namesPhase() (the walk runs the parts' phases in order).
  let labelMaps, ROLE_ARIA;
  function namesPhase() {
    // label[for] lookups: one query per document/shadow root, not `el.labels` (which walks the
    // whole document on first use for every input — quadratic on big forms).
    labelMaps = new Map();

    // The role, and in ROLE_ARIA whether it is accessibility data (not one array per element).
    // hasRole: false when the element is known to have no role attribute.
    ROLE_ARIA = false;
  }
