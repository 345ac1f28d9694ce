// Walker part 3 of 7: incremental walks: what the previous walk left, and whether this one may reuse it.
// A section of the walker factory (head.js opens it): the parts share its scope and are joined in order
// by engine/browser/target.py (WALKER_PARTS). Its phase function runs once per walk, in order.

  // ---- incremental walks -------------------------------------------------------------------
  function incState() {
    const st = { prev: null, seq: 0, recs: [], over: false, style: false, marks: new Set(), observed: new WeakSet(),
      roots: [], css: null, xneed: [], refs: null, why: '', tok: Math.random().toString(36).slice(2), sent: 0 };
    const onRecs = (rs) => {
      if (st.recs.length + rs.length > 4000) { st.over = true; st.recs.length = 0; return; }
      for (const r of rs) st.recs.push(r);
    };
    st.mo = new MutationObserver(onRecs);
    st.observe = (root) => {
      if (st.observed.has(root)) return;
      st.observed.add(root);
      if (root.nodeType === 11) st.roots.push(root);
      try { st.mo.observe(root, { subtree: true, childList: true, attributes: true, attributeOldValue: true, characterData: true }); } catch (e) {}
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
  // combinators (a change styles the following siblings), :focus-within (focus styles ancestors),
  // @container (a box's size restyles what is inside). For sibling combinators, what of an element the
  // compounds left of them read (`sel`, see sibScan) says which changes restyle its siblings. A sheet
  // from another origin (a CDN, another host, every sheet of a file:// page) cannot be read here: the
  // browser reads it for Vigil (CDP's CSS domain, engine/snapshot/stylesheets.py), which hands its
  // flags in as opts.xcss (href → [has, sib, fw, cq, how many sheets of that address it read,
  // {e, a, c, t}: see sibScan]); one it has not read yet makes every flag assumed (`unk`), and its
  // address is asked for (I.xneed, sent back in `inc.xs`).
  function cssFlags() {
    // pse: some rule may give an element a pseudo-element box (::before, ::marker…), which the walk does not
    // see: occlusion then proves nothing by geometry (occlusion.js)
    const f = { has: false, sib: false, fw: false, cq: false, unk: 0, xk: '', em: false, any: false, cls: new Set(), att: new Set(),
      gen: null, pse: false };
    const gens = [];
    const seen = new Set();
    const unread = new Map();   // href → sheets at it that could not be read
    const scanRules = (rules, depth) => {
      for (const r of rules) {
        const s = r.selectorText;
        if (s) {
          selFlags(s, f);
          if (!f.pse && PSE_BOX.test(s)) f.pse = true;
          if (r.style && s.indexOf(':after') + s.indexOf(':before') > -2) genRule(s, r.style.content, gens);
        }
        if (r.start || r.end) selFlags((r.start || '') + ', ' + (r.end || ''), f);   // @scope (a) to (b)
        if ('containerQuery' in r) f.cq = true;
        if (r.cssRules && depth < 8) scanRules(r.cssRules, depth + 1);
        if (r.styleSheet && depth < 8) scanSheet(r.styleSheet, depth + 1);
      }
    };
    const scanSheet = (sh, depth) => {
      if (!sh || seen.has(sh)) return;
      seen.add(sh);
      let rules;
      try { rules = sh.cssRules; } catch (e) { const h = sh.href || ''; unread.set(h, (unread.get(h) || 0) + 1); return; }
      if (rules) scanRules(rules, depth);
    };
    for (const r of [document].concat(I.roots)) {
      try { for (const sh of r.styleSheets) scanSheet(sh, 0); } catch (e) { f.unk++; }
      try { for (const sh of (r.adoptedStyleSheets || [])) scanSheet(sh, 0); } catch (e) {}
    }
    const X = opts.xcss || null;
    I.xneed = [];
    for (const [h, k] of unread) {
      const x = X && h ? X[h] : undefined;
      if (x && x[4] >= k) {
        f.has = f.has || !!x[0]; f.sib = f.sib || !!x[1]; f.fw = f.fw || !!x[2]; f.cq = f.cq || !!x[3];
        const q = x[5] || { a: true };
        if (q.e) f.em = true;
        if (q.a) f.any = true;
        for (const c of q.c || []) f.cls.add(c);
        for (const t of q.t || []) f.att.add(t);
        continue;
      }
      f.unk++;
      if (h && x !== null) I.xneed.push(h);   // (null: the browser could not read it either)
    }
    if (f.unk) { f.has = f.sib = f.fw = f.cq = f.any = true; }
    if (unread.size) f.pse = true;   // (what the browser read for us does not say which pseudo-elements it styles)
    for (const [h, k] of unread) {   // (generated content in the sheets the browser read for us)
      const x = X && h ? X[h] : undefined;
      if (x && x[4] >= k && x[5] && x[5].g) for (const g of x[5].g) gens.push(g);
    }
    f.gen = genIndex(gens);
    return f;
  }
  // A pseudo-element in a selector that can make a box of its own (anything but the ones drawn inside their
  // element's box or not drawn at all: selection, placeholder, scroll bars, highlights, file button, ::part/::slotted
  // which style real elements). The legacy one-colon forms count.
  const PSE_BOX = /::(?!(?:selection|placeholder|-webkit-scrollbar|-webkit-input-placeholder|-webkit-inner-spin-button|-webkit-outer-spin-button|-webkit-search-cancel-button|-webkit-calendar-picker-indicator|file-selector-button|-webkit-file-upload-button|highlight|spelling-error|grammar-error|target-text|search-text|part|slotted|cue)\b)|:(?:before|after|first-letter|first-line)\b/i;
  // A rule that gives ::before or ::after words (a non-empty string, attr(), var() that may hold one):
  // its selectors without the pseudo-element, for genHit (names.js). Empty strings (clearfix), icon-font
  // glyphs and punctuation alone are no words.
  function genRule(s, content, out) {
    if (!content || content === 'none' || content === 'normal') return;
    if (!/attr\(|var\(/.test(content)) {
      const words = content.replace(/\\[0-9a-fA-F]{1,6} ?/g, (q) => String.fromCodePoint(parseInt(q.slice(1), 16)))
        .replace(/["'\s]|[\uE000-\uF8FF]|counters?\([^)]*\)|url\([^)]*\)/g, '');
      if (!words || NO_WORDS.test(words)) return;
    }
    for (const part of splitTop(s)) {
      if (!/::?(?:before|after)\b/i.test(part)) continue;
      out.push(part.replace(/::?(?:before|after)\b/gi, '').trim() || '*');
    }
  }
  // A selector list's selectors (commas inside brackets and parentheses kept).
  function splitTop(s) {
    const out = [];
    let depth = 0, start = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s[i];
      if (c === '\\') i++;
      else if (c === '(' || c === '[') depth++;
      else if (c === ')' || c === ']') depth--;
      else if (c === ',' && depth === 0) { out.push(s.slice(start, i)); start = i + 1; }
    }
    out.push(s.slice(start));
    return out;
  }
  // The selectors as one list, and the classes, ids and tags their last compounds need (an element with
  // none of them is not matched against the list): null when there are none.
  function genIndex(sels) {
    if (!sels.length) return null;
    const G = { sel: '', cls: new Set(), id: new Set(), tag: new Set(), any: false };
    const ok = [];
    const probe = document.createDocumentFragment();
    for (const sel of new Set(sels)) {
      try { probe.querySelector(sel); } catch (e) { continue; }   // (a selector this browser does not take)
      ok.push(sel);
      const parts = sel.replace(/\[[^\]]*\]/g, '[]').replace(/\([^()]*\)/g, '()').split(/[\s>+~]+/);
      const last = parts[parts.length - 1].replace(/:(?:not|is|where|has)\(.*$/, '');   // (the last compound)
      const c = /\.((?:[\w-]|\\.)+)/.exec(last), i = /#((?:[\w-]|\\.)+)/.exec(last), t = /^([a-zA-Z][\w-]*)/.exec(last);
      if (c && c[1].indexOf('\\') < 0) G.cls.add(c[1]);
      else if (i && i[1].indexOf('\\') < 0) G.id.add(i[1]);
      else if (t) G.tag.add(t[1].toLowerCase());
      else G.any = true;
    }
    if (!ok.length) return null;
    G.sel = ok.join(', ');
    return G;
  }
  // One selector list's flags. A `+` or `~` counts as a sibling combinator, not as an attribute
  // selector's operator or value, nor the step of :nth-child(2n+1) (which only insertions and removals
  // change: their parent is walked again whole); `:nth-child(… of S)` reads the siblings' state.
  function selFlags(s, f) {
    if (s.indexOf(':has(') >= 0) f.has = true;
    if (s.indexOf(':focus-within') >= 0) f.fw = true;
    if (/:nth-(?:last-)?(?:child|of-type)\([^)]*\sof\s/i.test(s)) { f.sib = true; f.any = true; }
    if (s.indexOf('+') >= 0 || s.indexOf('~') >= 0) {
      const t = s.replace(/\[\s*([^\]\s=~|^$*]+)[^\]]*\]/g, '[$1]')
        .replace(/:nth-(?:last-)?(?:child|of-type)\(([^()]*)\)/gi, (m, a) => (/\sof\s/i.test(a) ? m : ''));
      if (t.indexOf('+') >= 0 || t.indexOf('~') >= 0) sibScan(t, f);
    }
  }
  // The compound just left of each sibling combinator: what of the element it matches can change its
  // following siblings' style — its classes (`cls`), attributes (`att`; a state pseudo-class stands for
  // the attribute it follows: :checked for `checked`, :disabled for `disabled`…), whether it has
  // children (`em`: :empty). Anything else (another pseudo-class, a nested `&`, a combinator inside
  // :is() or :not(), an escape) could depend on anything: `any`. (Kept in step with
  // engine/snapshot/stylesheets.py, which reads the sheets the page cannot.)
  const SIB_PSEUDO = {
    hover: '', focus: '', 'focus-visible': '', active: '', 'first-child': '', 'last-child': '', 'only-child': '',
    'first-of-type': '', 'last-of-type': '', 'only-of-type': '', 'nth-child': '', 'nth-last-child': '', 'nth-of-type': '',
    'nth-last-of-type': '', not: '', is: '', where: '', root: '', scope: '', checked: 'checked', disabled: 'disabled',
    enabled: 'disabled', required: 'required', optional: 'required', 'read-only': 'readonly disabled contenteditable',
    'read-write': 'readonly disabled contenteditable', 'placeholder-shown': 'placeholder', link: 'href', 'any-link': 'href',
    visited: 'href', open: 'open', lang: 'lang', dir: 'dir', empty: '!', blank: '!',
  };
  function sibScan(s, f) {
    let depth = 0, start = 0, last = '';
    const flush = (end) => { const c = s.slice(start, end).trim(); if (c) last = c; };
    for (let i = 0; i < s.length; i++) {
      const c = s[i];
      if (c === '\\') { i++; continue; }
      if (c === '(' || c === '[') { depth++; continue; }
      if (c === ')' || c === ']') { depth--; continue; }
      if (depth > 0) { if (c === '+' || c === '~') { f.sib = true; f.any = true; } continue; }
      if (c === ',') { flush(i); last = ''; start = i + 1; }
      else if (c === ' ' || c === '>' || c === '\n' || c === '\t' || c === '\r' || c === '\f') { flush(i); start = i + 1; }
      else if (c === '+' || c === '~') {
        flush(i);
        f.sib = true;
        if (last) leftOf(last, f); else f.any = true;   // (a relative selector: its left is the nesting parent)
        last = ''; start = i + 1;
      }
    }
  }
  function leftOf(c, f) {
    if (c.indexOf('&') >= 0 || /\\[0-9a-f]/i.test(c)) { f.any = true; return; }
    const rest = c.replace(/\.((?:[^\s.#:[\]()>+~,*|\\]|\\.)+)/g, (m, k) => { f.cls.add(k.replace(/\\(.)/g, '$1')); return ' '; });
    if (rest.indexOf('#') >= 0) f.att.add('id');
    for (const m of rest.matchAll(/\[\s*([\w-]+)/g)) f.att.add(m[1].toLowerCase());
    for (const m of rest.matchAll(/:([\w-]+)/g)) {
      const v = SIB_PSEUDO[m[1].toLowerCase()];
      if (v === undefined) f.any = true;
      else if (v === '!') f.em = true;
      else if (v) for (const a of v.split(' ')) f.att.add(a);
    }
  }
  // Whether a mutation record's change can restyle its target's following siblings (see sibScan).
  function sibChange(css, r) {
    if (!css.sib) return false;
    if (css.any) return true;
    if (r.type === 'childList') return css.em;
    if (r.type !== 'attributes') return false;
    const a = r.attributeName;
    if (a !== 'class') return css.att.has(a);
    const was = new Set((r.oldValue || '').split(/\s+/)), now = new Set(((r.target.getAttribute && r.target.getAttribute('class')) || '').split(/\s+/));
    for (const k of was) if (k && !now.has(k) && css.cls.has(k)) return true;
    for (const k of now) if (k && !was.has(k) && css.cls.has(k)) return true;
    return false;
  }
  // Why a walk cannot be bounded by what the CSS does: the rule, or the sheet that could not be read.
  const cssWhy = (css, what) => (css.unk ? 'a cross-origin style sheet could not be read' : 'a style sheet uses ' + what);
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
    // Style sheets added, removed or changed (or changes too many to tell): what the CSS can do is read
    // again — also before a forced or first walk, so the next walk knows it (and the sheets this
    // document cannot read are asked for at once).
    let sheets = style || over;
    for (const r of recs) {
      if (sheets) break;
      if (r.type === 'childList') {
        for (const lst of [r.addedNodes, r.removedNodes]) for (const n of lst) {
          const nn = n.localName;
          if (nn === 'style' || nn === 'link') sheets = true;
        }
      }
      const t = r.target;
      const tl = t.localName || (t.parentNode && t.parentNode.localName);
      if (tl === 'style' || t.localName === 'link') sheets = true;
    }
    if (!sheets) for (const el of marks) if (el.localName === 'link' || el.localName === 'style') { sheets = true; break; }
    // the elements an aria-labelledby or -describedby points from are looked up again after a change that
    // can add one (an element added, the attribute set, a new shadow root)
    if (I.refs && (over || I.refs.n !== I.roots.length)) I.refs = null;
    for (const r of recs) {
      if (!I.refs) break;
      if (r.type === 'attributes' ? (r.attributeName === 'aria-labelledby' || r.attributeName === 'aria-describedby')
        : r.type === 'childList' && Array.prototype.some.call(r.addedNodes, (n) => n.nodeType === 1)) I.refs = null;
    }
    const xk = opts.xcss ? JSON.stringify(opts.xcss) : '';
    if (sheets || (I.css && I.css.unk && I.css.xk !== xk)) I.css = null;
    // (rules that give a pseudo-element words, learnt from a sheet read for us since: rows copied from the
    // last walk lack them)
    let genNew = false;
    if (!I.css) {
      const was = I.gsel;
      I.css = cssFlags(); I.css.xk = xk;
      I.gsel = I.css.gen ? I.css.gen.sel : '';
      genNew = was !== undefined && was !== I.gsel;
    }
    if (opts.full) return fail(opts.why || 'forced');
    if (!P) return fail('first walk of this document');
    if (P.key !== optsKey) return fail('the frame moved or its clip changed');
    if (P.vw !== VW || P.vh !== VH || P.dpr !== window.devicePixelRatio) return fail('the viewport changed');
    if (P.sx !== window.scrollX || P.sy !== window.scrollY) return fail('the page scrolled');
    if (P.truncated) return fail('the last walk hit the node limit');
    if (over) return fail('too many changes');
    if (style) return fail('style sheets or fonts changed');
    if (sheets) return fail('style sheets changed');
    if (genNew) return fail('style sheets read for us give generated words');
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
    // (with its following siblings when the CSS can style them by it: by default, a state change)
    const addSub = (el, sibs = sib) => {
      if (!el || el.nodeType !== 1 || !el.isConnected) return;
      sub.add(el);
      if (sibs) for (let s = el.nextElementSibling; s; s = s.nextElementSibling) sub.add(s);
    };
    const css = I.css;
    if (css.has && (recs.length || marks.size)) return fail(cssWhy(css, ':has()'));
    if (css.cq && (recs.length || marks.size)) return fail(cssWhy(css, 'container queries'));
    sib = css.sib;
    for (const r of recs) {
      let t = r.target;
      if (r.type === 'characterData') t = t.parentNode;
      if (!t) continue;
      if (t.nodeType === 11) { if (t.host) addSub(t.host); continue; }
      if (t.nodeType === 9) return fail('the document was replaced');
      if (r.type === 'characterData') { if (t.isConnected && t.nodeType === 1) sub.add(t); continue; }
      addSub(t, sibChange(css, r));
      // a slotted light child whose slot changes is re-placed: its host is re-walked
      if (r.type === 'attributes' && r.attributeName === 'slot' && t.parentNode && (t.parentNode.shadowRoot || S.closed.has(t.parentNode))) addSub(t.parentNode);
    }
    for (const el of marks) {
      if (el.localName === 'img' || el.localName === 'video' || el.localName === 'object' || el.localName === 'embed' || el.localName === 'input') addSub(el.parentElement || el);
      else addSub(el);
    }
    for (const [el, sg] of P.controls) if (el.isConnected && ctlSig(el) !== sg) addSub(el);
    for (const [el, l, t] of P.scrollers) if (el.isConnected && (el.scrollLeft !== l || el.scrollTop !== t)) sub.add(el);
    const foc = deepFocus();
    if (foc !== P.focused) {
      if (css.fw) return fail('focus moved and ' + cssWhy(css, ':focus-within'));
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
    labelDeps(P, sub, rowp, recs);
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
  // Rows that read other parts of the page: a form control's name (or a labelable button's, output's,
  // meter's; an aria-labelledby user's) comes from its labels and from the elements its
  // aria-labelledby names. Only those whose label sources meet a changed subtree are walked again:
  // the `for` target of a label in, around or removed from a changed subtree (or whose `for` changed);
  // everything inside a label around one (the controls it wraps); and every element whose
  // aria-labelledby or aria-describedby names an id in, around or removed from one, or an id that
  // changed (and the element that now holds such an id: a label's target may have moved to it).
  function labelDeps(P, sub, rowp, recs) {
    const ids = new Set(), fors = [], wraps = [];
    const around = new Set();
    const forOf = (l, root) => { const f = l.getAttribute('for'); if (f) fors.push([root, f]); };
    const inside = (n, root) => {
      for (const l of n.getElementsByTagName('label')) forOf(l, root);
      for (const e of n.querySelectorAll('[id]')) ids.add(e.id);
    };
    const todo = [];
    for (const el of sub) {
      inside(el, el.getRootNode());
      todo.push(el);
    }
    while (todo.length) {
      for (let n = todo.pop(); n && n.nodeType !== 9; n = upOf(n)) {
        if (n.nodeType !== 1) continue;
        if (around.has(n)) break;
        around.add(n);
        if (n.id) ids.add(n.id);
        if (n.localName === 'label') { wraps.push(n); forOf(n, n.getRootNode()); }
        if (n.assignedSlot) todo.push(n.assignedSlot);
      }
    }
    for (const r of recs) {
      if (r.type === 'childList') {
        let root = null;
        for (const n of r.removedNodes) {
          if (n.nodeType !== 1) continue;
          root = root || r.target.getRootNode();
          if (n.id) ids.add(n.id);
          if (n.localName === 'label') forOf(n, root);
          inside(n, root);
        }
      } else if (r.type === 'attributes' && r.oldValue) {
        if (r.attributeName === 'id') ids.add(r.oldValue);
        else if (r.attributeName === 'for' && r.target.localName === 'label') fors.push([r.target.getRootNode(), r.oldValue]);
      }
    }
    const add = (e) => { if (e && e.nodeType === 1 && e.isConnected) rowp.push(e); };
    for (const l of wraps) sub.add(l);
    for (const [root, f] of fors) add(root.getElementById ? root.getElementById(f) : document.getElementById(f));
    if (ids.size) {
      const refs = referrers();
      for (const x of ids) { const a = refs.get(x); if (a) for (const e of a) add(e); }
      for (const root of [document].concat(I.roots)) {
        if (root.getElementById && (root === document || root.isConnected)) for (const x of ids) add(root.getElementById(x));
      }
    }
    // a native checkbox or radio shrunk to nothing takes its label's box: walked again every time
    for (const el of P.remote) {
      if (el.localName !== 'input' || !el.isConnected) continue;
      const ty = el.type;
      if (ty !== 'checkbox' && ty !== 'radio') continue;
      const k = P.map.get(el), r = k === undefined ? null : P.memo[k].r;
      if (!r || r[2] < 2 || r[3] < 2) rowp.push(el);
    }
  }
  // id → the elements whose aria-labelledby or aria-describedby names it (kept while nothing can add one;
  // one that went is skipped when used)
  function referrers() {
    if (I.refs) return I.refs.map;
    const map = new Map();
    for (const root of [document].concat(I.roots)) {
      let els = [];
      try { els = root.querySelectorAll('[aria-labelledby],[aria-describedby]'); } catch (e) {}
      for (const e of els) {
        const v = (e.getAttribute('aria-labelledby') || '') + ' ' + (e.getAttribute('aria-describedby') || '');
        for (const t of v.split(/\s+/)) {
          if (!t) continue;
          let a = map.get(t);
          if (!a) map.set(t, a = []);
          if (a[a.length - 1] !== e) a.push(e);
        }
      }
    }
    I.refs = { map: map, n: I.roots.length };
    return map;
  }
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

  // Per walk: set by planPhase() (the walk runs the parts' phases in order).
  let I, optsKey, HOVER, ANIM;
  function planPhase() {
    // The previous walk's rows (before the whole-tree passes) and what each row was computed from
    // are kept in S.inc.prev. A later walk re-walks only what can have changed — dirty subtrees
    // (mutations, form state, focus, hover, listeners, image loads, inner scrolls, animations),
    // rows that read other parts of the page (form controls and their labels, aria-labelledby) and
    // their ancestors — and copies every other subtree whose context and box are unchanged. The
    // whole-tree passes (delegating containers, text blocks, label hunting, IDs, occlusion) then
    // run over all rows as in a full walk. Anything it cannot bound (styles, fonts, viewport or page
    // scroll, :has() rules, layout animations, too many changes) makes a full walk, and says why.
    I = S.inc || (S.inc = incState());
    optsKey = JSON.stringify([prefix, OX, OY, C0, opts.maxText || 200, opts.maxBlockText || 2000]);
    HOVER = null;  // the pointer's :hover chain, read once per walk
    ANIM = runningAnims();
  }
