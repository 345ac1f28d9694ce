// Scroll the page (this = null → document) or the nearest scroll container of an element.
// An element that is not itself scrollable and not inside a scroller is scrolled into view.
function scrollBox(direction, amount, toView) {
  const root = document.scrollingElement || document.documentElement;
  const scrollable = (e) => {
    if (!e || e.nodeType !== 1) return false;
    if (e === root) return true;
    const cs = getComputedStyle(e);
    const y = (cs.overflowY === 'auto' || cs.overflowY === 'scroll') && e.scrollHeight > e.clientHeight + 1;
    const x = (cs.overflowX === 'auto' || cs.overflowX === 'scroll') && e.scrollWidth > e.clientWidth + 1;
    return y || x;
  };
  let box = root, el = this && this.nodeType === 1 ? this : null;
  if (el) {
    if (toView) {
      el.scrollIntoView({ block: 'center', inline: 'nearest', behavior: 'instant' });
      const r = el.getBoundingClientRect();
      return { intoView: true, top: r.top, height: r.height, vh: innerHeight };
    }
    box = el;
    while (box && !scrollable(box)) box = box.parentElement || (box.parentNode && box.parentNode.host) || null;
    if (!box) box = root;
  }
  const isRoot = box === root;
  const vw = isRoot ? innerWidth : box.clientWidth, vh = isRoot ? innerHeight : box.clientHeight;
  const bx = box.scrollLeft, by = box.scrollTop;
  let dx = 0, dy = 0;
  const a = amount || Math.round(0.8 * (direction === 'left' || direction === 'right' ? vw : vh));
  if (direction === 'down') dy = a; else if (direction === 'up') dy = -a;
  else if (direction === 'right') dx = a; else if (direction === 'left') dx = -a;
  else if (direction === 'top') dy = -by; else if (direction === 'bottom') dy = box.scrollHeight;
  box.scrollBy({ left: dx, top: dy, behavior: 'instant' });
  const range = box.scrollHeight - vh;
  return { isRoot, moved: [box.scrollLeft - bx, box.scrollTop - by], at: [box.scrollLeft, box.scrollTop],
    pct: range > 0 ? Math.round(100 * box.scrollTop / range) : 0, atEnd: box.scrollTop + vh >= box.scrollHeight - 2,
    atStart: box.scrollTop <= 0, desc: isRoot ? 'the page' : box.localName + (box.id ? '#' + box.id : '') };
}
