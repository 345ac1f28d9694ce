// Walker part 3 of 7: incremental walks: what the previous walk left, and whether this one may reuse it.
// A section of vigilWalk's body (head.js opens the function): the parts share its scope and
// are joined in order by engine/browser/target.py (WALKER_PARTS).

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
