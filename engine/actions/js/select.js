// Choose an option of a native <select> (this) by value or visible label, as a person would,
// firing input and change. Exact value, then exact label (case-insensitive), then a label that
// contains the text. Multiple selects keep their other selections.
function selectOption(want) {
  const el = this;
  const squash = (t) => (t || '').replace(/\s+/g, ' ').trim();
  const opts = Array.from(el.options);
  const w = squash(want).toLowerCase();
  let o = opts.find((x) => x.value === want) || opts.find((x) => squash(x.label || x.textContent).toLowerCase() === w) ||
    opts.find((x) => x.value.toLowerCase() === w);
  let partial = false;
  if (!o) { const c = opts.filter((x) => squash(x.label || x.textContent).toLowerCase().includes(w)); if (c.length) { o = c[0]; partial = c.length > 1 ? c.length : false; } }
  const labels = opts.slice(0, 25).map((x) => squash(x.label || x.textContent) + (x.value && x.value !== squash(x.textContent) ? ' (' + x.value + ')' : ''));
  if (!o) return { found: false, options: labels, total: opts.length };
  if (o.disabled || (o.parentElement && o.parentElement.localName === 'optgroup' && o.parentElement.disabled)) return { found: true, disabled: true, label: squash(o.textContent) };
  const before = el.value;
  if (el.multiple) o.selected = true; else el.value = o.value;
  el.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
  el.dispatchEvent(new Event('change', { bubbles: true }));
  return { found: true, label: squash(o.label || o.textContent), value: o.value, changed: before !== el.value || el.multiple, ambiguous: partial };
}
