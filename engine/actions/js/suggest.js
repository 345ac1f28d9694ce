// After typing into a field (this): when it is a combobox or an autocomplete, wait — up to `ms` —
// for the suggestions it controls to show (libraries debounce the typing, 300 ms is common, then
// ask a server): the popup named by aria-controls/aria-owns (on the field or on the combobox
// around it) showing items, or a list that appears next to the field — new or changed since
// `mark`, the call made before typing (ms = 0), which notes the lists showing then. Answers what it saw.
async function waitSuggestions(KEY, ms) {
  const el = this;
  const S = window[KEY] || {};
  const t0 = performance.now();
  const attr = (e, n) => (e && e.getAttribute ? e.getAttribute(n) || '' : '');
  const wrap = el.parentElement && el.parentElement.closest('[role="combobox"]');
  const role = attr(el, 'role').trim().toLowerCase();
  const ac = attr(el, 'aria-autocomplete').toLowerCase();
  const pop = attr(el, 'aria-haspopup').toLowerCase();
  const ids = [el, wrap].flatMap((e) => (attr(e, 'aria-controls') + ' ' + attr(e, 'aria-owns')).split(/\s+/)).filter(Boolean);
  const auto = role === 'combobox' || !!wrap || ac === 'list' || ac === 'both' || (pop !== '' && pop !== 'false') ||
    ids.length > 0 || el.hasAttribute('list');
  if (!auto) return { auto: false };
  const root = el.getRootNode();
  const byId = (id) => (root.getElementById ? root.getElementById(id) : null) || document.getElementById(id);
  const ITEM = '[role="option"], [role="menuitem"], [role="treeitem"], li';
  const shown = (e) => {
    if (!e.isConnected || (e.checkVisibility && !e.checkVisibility({ visibilityProperty: true, checkOpacity: true }))) return false;
    const r = e.getBoundingClientRect();
    return r.width >= 2 && r.height >= 2;
  };
  const items = (p) => { let n = 0; for (const i of p.querySelectorAll(ITEM)) { if (shown(i)) n++; if (n > 50) break; } return n; };
  // the lists next to the field: within a few hundred pixels below or above it
  const LIST = '[role="listbox"], [role="menu"], [role="tree"], [role="grid"], ul, ol';
  const fr = el.getBoundingClientRect();
  const near = (p) => { const r = p.getBoundingClientRect(); return r.bottom > fr.top - 400 && r.top < fr.bottom + 400 && r.right > fr.left - 200 && r.left < fr.right + 200; };
  const sig = (p) => (p.textContent || '').replace(/\s+/g, ' ').slice(0, 400);
  if (!ms) {
    const m = new Map();
    for (const p of document.querySelectorAll(LIST)) if (shown(p) && items(p)) m.set(p, sig(p));
    for (const id of ids) { const p = byId(id); if (p && shown(p) && items(p)) m.set(p, sig(p)); }
    try { Object.defineProperty(S, 'sugMark', { value: { el: el, lists: m }, configurable: true, writable: true }); } catch (e) {}
    return { auto: true, marked: m.size };
  }
  const before = S.sugMark && S.sugMark.el === el ? S.sugMark.lists : new Map();
  if (S.sugMark) S.sugMark = null;
  const ready = () => {
    for (const id of ids) {
      const p = byId(id);
      if (p && shown(p) && items(p) && before.get(p) !== sig(p)) return { via: 'controls', items: items(p) };
    }
    for (const p of document.querySelectorAll(LIST)) {
      if (p.contains(el) || !shown(p) || !near(p)) continue;
      const n = items(p);
      if (n && before.get(p) !== sig(p)) return { via: 'near', items: n };
    }
    return null;
  };
  const tick = () => new Promise((res) => setTimeout(res, 40));
  while (performance.now() - t0 < ms) {
    const r = ready();
    if (r) {
      // let the list finish rendering (a frame) before the page is read
      await new Promise((res) => requestAnimationFrame(() => setTimeout(res, 0)));
      return Object.assign({ auto: true, waited: Math.round(performance.now() - t0) }, r);
    }
    await tick();
  }
  return { auto: true, waited: Math.round(performance.now() - t0), items: 0 };
}
