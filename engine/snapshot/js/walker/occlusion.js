// Walker part 6 of 7: occlusion: hit tests over the visible part of each box.
// A section of vigilWalk's body (head.js opens the function): the parts share its scope and
// are joined in order by engine/browser/target.py (WALKER_PARTS).

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
