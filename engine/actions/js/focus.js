// Focus the element (this) for typing; optionally select its content so typing replaces it.
// Returns whether focus landed on it (through shadow roots) and whether anything is selected.
function focusField(clear) {
  const el = this;
  el.focus({ preventScroll: true });
  let a = document.activeElement;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
  const focused = a === el || el.contains(a);
  let selected = false;
  if (clear) {
    if (typeof el.select === 'function' && (el.localName === 'input' || el.localName === 'textarea')) {
      try { el.select(); selected = (el.value || '').length > 0; } catch (e) {}
    } else if (el.isContentEditable) {
      const r = document.createRange(); r.selectNodeContents(el);
      const s = getSelection(); s.removeAllRanges(); s.addRange(r); selected = !!el.textContent;
    }
  }
  return { focused, selected };
}
