// Called on an <iframe> element (this) in its parent frame: where its content box starts, and
// whether a point inside the child frame (child CSS px) reaches the frame, or something covers it.
function owner(KEY, px, py) {
  const S = window[KEY];
  const r = this.getBoundingClientRect(), cs = getComputedStyle(this);
  const ox = r.left + this.clientLeft + parseFloat(cs.paddingLeft), oy = r.top + this.clientTop + parseFloat(cs.paddingTop);
  const out = { ox, oy };
  if (px === null) return out;
  const x = ox + px, y = oy + py;
  // Outside this window: a scroll asked for by an out-of-process child has not reached us yet.
  out.inView = x >= 0 && y >= 0 && x < innerWidth && y < innerHeight;
  let h = document.elementFromPoint(x, y);
  while (h && (h.shadowRoot || (S && S.closed.get(h)))) {
    const d = (h.shadowRoot || S.closed.get(h)).elementFromPoint(x, y);
    if (!d || d === h) break;
    h = d;
  }
  out.ok = h === this;
  if (!out.ok && h) {
    const squash = (t) => (t || '').replace(/\s+/g, ' ').trim();
    let id = null;
    for (let n = h; n; n = n.parentNode || n.host) if (n.nodeType === 1 && S && S.ids.has(n)) { id = S.ids.get(n); break; }
    out.cover = { id, desc: h.localName + (h.id ? '#' + h.id : '') + ' "' + squash(h.textContent).slice(0, 60) + '"', boxId: id, buttons: [] };
  }
  return out;
}
