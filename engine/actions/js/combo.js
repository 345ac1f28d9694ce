// Facts about a select-like widget (this) for select(): its visible replacement when it is a
// hidden native <select>, the popup it controls, the hidden native <select> that mirrors it, and
// the text field that filters its list. Elements are answered by their snapshot IDs.
//   mode: 'control' | 'replacement' | 'widget' | 'field' | 'shows' (want = the choice: a chip or live
//   region showing it) | 'scan' (this = a list's scroller; want = the option)
async function combo(KEY, mode, want) {
  const S = window[KEY];
  const el = this;
  const squash = (t) => (t || '').replace(/\s+/g, ' ').trim();
  const idOf = (e) => (e && S && S.ids.has(e) ? S.ids.get(e) : null);
  const parentEl = (e) => e.parentElement || (e.parentNode && e.parentNode.host) || null;
  const seen = (e) => {
    if (!e.checkVisibility || !e.checkVisibility({ visibilityProperty: true, checkOpacity: true })) return false;
    const r = e.getBoundingClientRect();
    if (r.width < 4 || r.height < 4) return false;
    // clipped to a pixel (the "visually hidden" pattern)
    const cs = getComputedStyle(e);
    return !(cs.clip && cs.clip !== 'auto' && /rect\(0(px)?,? 0(px)?,? 0(px)?,? 0(px)?\)|rect\(1px/.test(cs.clip)) &&
      !(cs.clipPath && /inset\(50%\)/.test(cs.clipPath));
  };
  const onPage = (e) => { const r = e.getBoundingClientRect(); return r.right > 0 && r.bottom > 0; };
  // What a person sees and clicks for a widget: itself, or — when a library keeps its input
  // off-screen or transparent while a value is shown — the nearest visible box around it.
  const face = (e, avoid) => {
    if (seen(e) && onPage(e)) return e;
    let a = parentEl(e);
    for (let depth = 0; a && depth < 2 && a !== document.body; depth++, a = parentEl(a)) {
      if (avoid && a.contains(avoid)) return null;
      if (seen(a) && onPage(a)) return a;
    }
    return null;
  };
  const byIdIn = (node, id) => {
    const root = node.getRootNode();
    return (root.getElementById ? root.getElementById(id) : null) || document.getElementById(id);
  };
  const WIDGET = '[role="combobox"], [aria-haspopup]:not([aria-haspopup="false"]), [aria-controls], [aria-owns], [aria-expanded]';
  const editable = (e) => e && !e.readOnly && !e.disabled && ((e.localName === 'input' && !/^(checkbox|radio|button|submit|reset|image|file|range|color|hidden)$/.test((e.type || '').toLowerCase())) ||
    e.localName === 'textarea' || e.isContentEditable);

  if (mode === 'control') return { id: el.localName === 'label' && el.control ? idOf(el.control) : null };

  if (mode === 'replacement') {
    // A native <select> a library hides and replaces with its own widget (Tom Select, Choices,
    // select2…): the nearest visible widget among its ancestors and their descendants.
    if (seen(el)) return { visible: true };
    const up = parentEl(el);
    // hidden with a hidden section (a collapsed panel): nothing stands in for it
    if (up && up.checkVisibility && !up.checkVisibility({ visibilityProperty: true })) return { visible: false, found: false };
    const FIELD = 'input:not([type="hidden"]), select, textarea, button';
    let a = parentEl(el);
    for (let depth = 0; a && depth < 3; depth++, a = parentEl(a)) {
      if (a !== document.body && a.matches(WIDGET) && face(a)) return { visible: false, id: idOf(a), found: true };
      const fields = Array.from(a.querySelectorAll(FIELD));
      // the first visible widget after the select, with no other form field in between
      const cands = Array.from(a.querySelectorAll(WIDGET)).filter((c) => c !== el && !el.contains(c) && c.localName !== 'option' &&
        (el.compareDocumentPosition(c) & Node.DOCUMENT_POSITION_FOLLOWING) && face(c, el));
      for (const w of cands) {
        const between = fields.some((f) => f !== el && f !== w && !w.contains(f) && !el.contains(f) &&
          (el.compareDocumentPosition(f) & Node.DOCUMENT_POSITION_FOLLOWING) && (w.compareDocumentPosition(f) & Node.DOCUMENT_POSITION_PRECEDING));
        if (!between) return { visible: false, id: idOf(w), found: true };
        break;
      }
      if (a === document.body) break;
    }
    return { visible: false, found: false };
  }

  if (mode === 'widget') {
    // The popup this combobox controls (aria-controls / aria-owns on it or on its input), whether
    // it says it is expanded, and the hidden native <select> that mirrors it.
    const controls = [];
    const holders = [el].concat(Array.from(el.querySelectorAll('[aria-controls], [aria-owns]')).slice(0, 4));
    for (const h of holders) {
      for (const attr of ['aria-controls', 'aria-owns']) {
        for (const id of (h.getAttribute(attr) || '').split(/\s+/).filter(Boolean)) {
          const p = byIdIn(h, id);
          if (p && !controls.includes(p)) controls.push(p);
        }
      }
    }
    const exp = el.getAttribute('aria-expanded') || (el.querySelector('[aria-expanded]') || { getAttribute: () => null }).getAttribute('aria-expanded');
    let mirror = null;
    let a = el;
    for (let depth = 0; a && depth < 4 && a !== document.body && !mirror; depth++, a = parentEl(a)) {
      const cand = Array.from(a.querySelectorAll('select')).filter((s) => !seen(s));
      if (cand.length === 1) mirror = cand[0];
      else if (cand.length > 1) {
        mirror = cand.find((s) => el.compareDocumentPosition(s) & Node.DOCUMENT_POSITION_PRECEDING) || cand[0];
      }
    }
    // its options in the flat tree: web components slot their options into a list in their shadow
    const OPT = /^(option|menuitem|menuitemradio|menuitemcheckbox|treeitem|radio|tab)$/;
    const flatOptions = (p) => {
      const out = [];
      const stack = [p];
      let budget = 3000;
      while (stack.length && budget-- > 0 && out.length < 500) {
        const n = stack.pop();
        if (n !== p && OPT.test(n.getAttribute('role') || '') && idOf(n)) { out.push(idOf(n)); continue; }
        const kids = n.localName === 'slot' ? n.assignedElements({ flatten: true }) : Array.from((n.shadowRoot || n).children);
        for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
      }
      return out;
    };
    const f = face(el);
    return {
      opener: f && f !== el ? idOf(f) : null,
      controls: controls.map((p) => ({ id: idOf(p), shown: seen(p) || Array.from(p.children).some(seen),
        options: p.querySelector('slot') ? flatOptions(p) : [] })),
      expanded: exp === null ? null : exp === 'true',
      editable: !!editable(el),
      mirror: mirror ? { id: idOf(mirror), label: Array.from(mirror.selectedOptions || []).map((o) => squash(o.textContent)).join(', '),
        value: mirror.value, multiple: mirror.multiple } : null,
    };
  }

  if (mode === 'field') {
    // Where typing filters the list: the focused text field (a search box the widget opened),
    // else the widget itself when it is one.
    let a = document.activeElement;
    while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
    if (editable(a) && seen(a)) return { id: idOf(a) };
    if (editable(el)) return { id: idOf(el) };
    const inner = Array.from(el.querySelectorAll('input, textarea, [contenteditable]')).find((e) => editable(e) && seen(e));
    return { id: inner ? idOf(inner) : null };
  }
  if (mode === 'shows') {
    // After a pick: does the widget show the choice `want` outside its value — as a chip or tag
    // (a multiple select whose input stays empty and whose picked option left the list), or in its
    // live region? The widget is this element and the ancestors around it that hold no other
    // form field (its control box); its open list is not part of it.
    const w = squash(want).toLowerCase();
    if (!w) return { chip: null, live: null };
    const FIELDS = 'input:not([type="hidden"]), select, textarea';
    let scope = el;
    for (let a = parentEl(el), depth = 0; a && depth < 4 && a !== document.body; depth++, a = parentEl(a)) {
      if (a.querySelectorAll(FIELDS).length > 2) break;
      scope = a;
    }
    const LIST = '[role="listbox"], [role="option"], [role="menu"], [role="tree"], [role="grid"]';
    const LIVE = '[aria-live]:not([aria-live="off"]), [role="status"], [role="log"], [role="alert"]';
    let chip = null, live = null;
    let budget = 600;
    const stack = [scope];
    while (stack.length && budget-- > 0 && !chip) {
      const n = stack.pop();
      if (n !== scope && n.matches(LIST)) continue;
      if (n.matches(LIVE)) {
        const t = squash(n.textContent);
        if (!live && t && t.toLowerCase().includes(w)) live = t.slice(0, 200);
        continue;
      }
      const t = n.localName === 'input' || n.localName === 'select' || n.localName === 'textarea' ? '' : squash(n.textContent);
      if (!t.toLowerCase().includes(w)) continue;
      // the smallest visible element whose text is the choice (a chip may hold a remove "×")
      const is = (e) => { const l = squash(e.textContent).toLowerCase(); return l === w || l.replace(/[×✕✖]\s*$/, '').trim() === w; };
      if (is(n) && seen(n) && !Array.from(n.children).some(is)) { chip = t.replace(/\s*[×✕✖]\s*$/, '').slice(0, 200); break; }
      for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]);
    }
    return { chip: chip, live: live };
  }
  if (mode === 'scan') {
    // A long or virtual list: page through it from the top until an option with that text is
    // rendered (virtual lists only create the rows in view), then bring it into view.
    const w = squash(want).toLowerCase();
    const SEL = '[role="option"], [role="menuitem"], [role="menuitemradio"], [role="menuitemcheckbox"], [role="treeitem"], li';
    const test = () => {
      for (const o of el.querySelectorAll(SEL)) {
        const t = squash(o.getAttribute('aria-label') || o.textContent).toLowerCase();
        if (t && (t === w || t.startsWith(w) || t.includes(w))) return o;
      }
      return null;
    };
    const tick = () => new Promise((res) => requestAnimationFrame(() => setTimeout(res, 20)));
    const t0 = performance.now();
    el.scrollTop = 0;
    await tick();
    for (let steps = 0; ; steps++) {
      const o = test();
      if (o) { o.scrollIntoView({ block: 'nearest' }); await tick(); return { found: true, steps }; }
      const before = el.scrollTop;
      el.scrollBy({ top: Math.max(16, el.clientHeight * 0.8), behavior: 'instant' });
      await tick();
      if (el.scrollTop === before) return { found: false, steps, end: true };
      if (performance.now() - t0 > 8000) return { found: false, steps, end: false };
    }
  }
  return null;
}
