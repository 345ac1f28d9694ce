// Walker part 6 of 7: occlusion: hit tests over the visible part of each box.
// A section of the walker factory (head.js opens it): the parts share its scope and are joined in order
// by engine/browser/target.py (WALKER_PARTS). Its phase function runs once per walk, in order.

  // Occlusion: a multi-point hit test over the visible part of the box — the centre and four points
  const up = (n) => n.parentNode || (n.nodeType === 11 ? n.host : null);
  const coverDesc = (b) => wf(cut(b.localName + (b.id ? '#' + b.id : '') + ' "' + contentText(b, 80) + '"', 120));
  const meets = (x1, y1, x2, y2) => {
    for (const r of changed) if (r[0] < x2 + 1 && r[0] + r[2] > x1 - 1 && r[1] < y2 + 1 && r[1] + r[3] > y1 - 1) return true;
    return false;
  };
  // A hit on any of these (or inside them) is the control itself: it, its labels, the shadow hosts it lives in.
  function ownersOf(el) {
    const owners = new Set([el]);
    for (const l of labelsFor(el)) owners.add(l);
    const wl = el.closest('label'); if (wl) owners.add(wl);
    for (let hst = rootOf(el).host; hst; hst = rootOf(hst).host) owners.add(hst);
    return owners;
  }
  // Occlusion proven by geometry (issue 41): on a page of many controls in view (a 5,000-row form), a hit test
  // costs milliseconds (Chromium walks every sibling box), so a control of the document tree whose hit points
  // only boxes of itself, its labels and its containers can reach is not hit-tested: its hit test could not
  // see anything else. What can be hit is listed: every walked element's box (positioned, fixed, sticky,
  // transformed, z-indexed overlays included: their boxes are where they are drawn) and every text node's
  // boxes (text overflowing its element, a negative indent). What the walk cannot list turns the proof off
  // for the whole page: pseudo-element boxes (any rule with ::before, ::after, ::marker…, a style sheet it
  // cannot read, list markers, quotes), the top layer (a modal's backdrop, popovers, full screen), SVG drawn
  // outside its box, MathML, a slider (its thumb overflows its box), a rendered <script>/<style>, closed
  // shadow roots not found yet, a cut walk. A sample of the proven controls is still hit-tested (below).
  // (RUN_MIN, RUN_MAX: the rows of a run of sibling subtrees out of view whose text is measured as one Range)
  const PROOF_MIN = 40, BAND = 32, PROOF_ROW_MS = 0.004, RUN_MIN = 16, RUN_MAX = 512;
  // (the inline tags whose box is made of their own lines: not a picture, not a slot)
  const TEXT_INLINE = new Set([...INLINE].filter((t) => t !== 'img' && t !== 'svg' && t !== 'slot'));
  function topNode(n) {   // what a hit test in the document returns for a node: its host in the document tree
    for (let r = n.getRootNode(); r !== document; r = n.getRootNode()) {
      if (!r.host) return null;
      n = r.host;
    }
    return n;
  }
  function buildProof() {
    if (occCandidates.length < PROOF_MIN || count > maxNodes || suspects.length || !I.css || I.css.unk || I.css.pse) return false;
    for (const i of pzRows) {   // (quotes; a list item's marker, unless it has none)
      const el = memo[i].el;
      if (el.localName === 'q') return false;
      const lc = getComputedStyle(el);
      if (lc.display.indexOf('list-item') >= 0 && (lc.listStyleType !== 'none' || lc.listStyleImage !== 'none')) return false;
    }
    for (const q of [':modal', ':popover-open', ':fullscreen']) {
      try { if (document.querySelector(q)) return false; } catch (e) { return false; }
    }
    for (const r of [document].concat(I.roots)) {
      if (r !== document && !r.isConnected) continue;
      for (const e of r.querySelectorAll('head,script,style,noscript,template,title,meta,link,base')) {
        if (getComputedStyle(e).display !== 'none') return false;
      }
    }
    const nb = Math.ceil(VH / BAND) + 1;
    const bands = [];
    for (let b = 0; b < nb; b++) bands.push([]);
    const boxes = [];   // [x1, y1, x2, y2, node as a hit test in the document returns it]
    const add = (l, t, r, b, node) => {
      if (r <= l || b <= t) return true;       // (nothing to hit)
      if (r < 0 || b < 0 || l > VW || t > VH) return true;
      if (!node) return false;
      const k = boxes.length;
      boxes.push([l - 1, t - 1, r + 1, b + 1, node]);
      const b1 = Math.max(0, Math.floor((t - 1) / BAND)), b2 = Math.min(nb - 1, Math.floor((b + 1) / BAND));
      for (let z = b1; z <= b2; z++) bands[z].push(k);
      return true;
    };
    for (let i = 0; i < nRows; i++) {
      const m = memo[i], el = m.el;
      if (el.namespaceURI === SVG_NS) {
        if (el.ownerSVGElement) continue;   // (inside an <svg>: within its box, which clips, below)
        const sc = getComputedStyle(el);
        if (sc.overflowX === 'visible' || sc.overflowY === 'visible') return false;
      } else if (m.r && (el.localName === 'math' || (el.localName === 'input' && el.type === 'range'))) return false;   // (a slider's thumb is drawn outside its box)
      if (m.r && !add(m.r[0], m.r[1], m.r[0] + m.r[2], m.r[1] + m.r[3], rows[i][7] & 4 ? topNode(el) : el)) return false;
    }
    // Text, where it is drawn (a Range's boxes: it may overflow its element, or be indented out of it). White space
    // alone in a flex or grid container is not drawn (CSS Flexbox §4, Grid §6): not measured.
    // A line is hit across its whole line box, not only where its glyphs are: a line-height far above the font's
    // (a zero-height flex container with a huge line-height) takes hits far from its text, so the box is grown by the
    // leading on both sides (read once per element; an ordinary line-height adds under a few px, which changes nothing).
    const range = document.createRange();
    const texts = (p, node, lay) => {
      let lead = -1, vertical = false;   // (a line written top to bottom has its leading to its sides)
      for (let c = p.firstChild; c; c = c.nextSibling) {
        if (c.nodeType !== 3 || (lay && !/\S/.test(c.data))) continue;
        range.selectNodeContents(c);
        const rc = range.getBoundingClientRect();
        if (lead < 0) {
          const cs = p.nodeType === 1 ? getComputedStyle(p) : null, lh = cs ? parseFloat(cs.lineHeight) : NaN;
          lead = lh > 0 ? lh : 0;
          vertical = !!cs && cs.writingMode.startsWith('vertical') || !!cs && cs.writingMode.startsWith('sideways');
        }
        const across = vertical ? rc.width : rc.height, grow = lead > 1.5 * across ? lead - across : 0;
        const ex = vertical ? grow : 0, ey = vertical ? 0 : grow;
        if (!add(rc.left - ex, rc.top - ey, rc.right + ex, rc.bottom + ey, node)) return false;
      }
      return true;
    };
    // A run of sibling subtrees whose boxes lie out of view is measured first as one Range: its box holds the boxes of
    // all the text in them, so when it does not reach the viewport, none of that text can be hit there (add() would
    // drop each box) and it is not measured node by node. (Where it does reach it, they are, as before.)
    let single = 0;   // rows before this one are measured node by node (they were in a run that reached the viewport)
    const unseenRun = (i) => {
      const p = rows[i][0];
      if (p < 0) return 0;
      let j = i, last = -1;
      while (j < nRows && rows[j][0] === p && j - i < RUN_MAX) {
        const r = memo[j].r;
        if (!r || !(r[0] + r[2] < 0 || r[1] + r[3] < 0 || r[0] > VW || r[1] > VH)) break;
        const e = END[j];
        let plainTree = true;   // (no shadow tree in it: a Range of the document does not hold its text)
        for (let k = j; k < e && plainTree; k++) {
          const x = memo[k].el;
          if ((rows[k][7] & 4) || x.shadowRoot || S.closed.has(x)) plainTree = false;
        }
        if (!plainTree) break;
        last = j; j = e;
      }
      if (last < 0 || j - i < RUN_MIN) return 0;
      single = j;
      let u;
      try { range.setStartBefore(memo[i].el); range.setEndAfter(memo[last].el); u = range.getBoundingClientRect(); }
      catch (e) { return 0; }
      // (2 px: the union is in single precision)
      return u.width <= 0 || u.height <= 0 || u.right < -2 || u.bottom < -2 || u.left > VW + 2 || u.top > VH + 2 ? j : 0;
    };
    for (let i = 0; i < nRows; i++) {
      if (i >= single) {
        const e = unseenRun(i);
        if (e) { i = e - 1; continue; }
      }
      const m = memo[i], el = m.el;
      // (an inline box — display: inline, a text-level tag, not a host — is the union of its fragments, each around
      // its own words: its box, listed above, holds where its text is drawn; not measured again)
      if (m.b === 0 && m.il === 1 && m.r && m.r[2] > 0 && m.r[3] > 0 && TEXT_INLINE.has(el.localName)) continue;
      if (el.namespaceURI === SVG_NS || !el.firstChild && !el.shadowRoot) continue;   // (an <svg>'s words are in its box)
      const node = rows[i][7] & 4 ? topNode(el) : el;
      if (!texts(el, node, layOf.has(i))) return false;
      const sr = el.shadowRoot || S.closed.get(el);
      if (sr && !texts(sr, node, false)) return false;
    }
    return { bands: bands, boxes: boxes };
  }
  // Whether the proof is worth building: the hit tests left would cost more than it (its cost grows with the page's
  // rows, a hit test's with the boxes around the point: measured on the first controls). S.occlusion: 'exact' hit-tests
  // every control, 'proof' always tries the proof (tests and the benchmark compare the two).
  function proofWorth(left) {
    if (proof !== null || S.occlusion === 'proof') return true;
    if (S.occlusion === 'exact' || occCandidates.length < PROOF_MIN || exactN < 1) return false;
    return (exactMs / exactN) * left > PROOF_ROW_MS * nRows;
  }
  // Whether geometry proves the control clear: every box that meets its hit points is its own, a label's, or a
  // container's (the hit test would then say it is not occluded).
  function proofFor(el, x1, y1, x2, y2) {
    if (occCandidates.length < PROOF_MIN || S.occlusion === 'exact' || rootOf(el) !== document || el.namespaceURI === SVG_NS) return false;
    if (proof === null) { const t = performance.now(); proof = buildProof(); tProof = performance.now() - t; }
    if (!proof) return false;
    const ix = (x2 - x1) / 4, iy = (y2 - y1) / 4;
    const qx1 = x1 + ix, qy1 = y1 + iy, qx2 = x2 - ix, qy2 = y2 - iy;   // (the five points lie in this box)
    const b1 = Math.max(0, Math.floor(qy1 / BAND)), b2 = Math.min(proof.bands.length - 1, Math.floor(qy2 / BAND));
    let owners = null, anc = null;
    const seen = new Set();
    for (let z = b1; z <= b2; z++) {
      for (const k of proof.bands[z]) {
        if (seen.has(k)) continue;
        seen.add(k);
        const bx = proof.boxes[k];
        if (bx[0] > qx2 || bx[2] < qx1 || bx[1] > qy2 || bx[3] < qy1) continue;
        const n = bx[4];
        if (n === el) continue;
        if (!anc) {
          anc = new Set();
          for (let q = el.parentNode; q; q = q.parentNode) {
            if (q.namespaceURI === SVG_NS) return false;   // (in a <foreignObject>: the picture's shapes are not listed)
            anc.add(q);
          }
        }
        if (anc.has(n)) continue;
        if (!owners) owners = ownersOf(el);
        let mine = false;
        for (let q = n; q; q = q.parentNode) if (owners.has(q)) { mine = true; break; }
        if (!mine) return false;
      }
    }
    return true;
  }
  // The hit test of one control: sets its row's occlusion and occNow; returns how many points hit something that
  // is neither the control (its label, its host) nor one of its containers.
  function hitTest(ri, el, x1, y1, x2, y2) {
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
      if (!owners) owners = ownersOf(el);
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
    return n - ok;
  }
  // The check of a proven control in the sample: its centre hit-tested (a hit test costs milliseconds on a page of
  // many boxes: one point each, so the sample spans the page). Clear, as the proof says: the control itself, one of
  // its own (a label), or a container the point falls through to. (Proven controls are in the document tree.)
  function centreClear(el, x1, y1, x2, y2) {
    const top = document.elementFromPoint((x1 + x2) / 2, (y1 + y2) / 2);
    hits++;
    if (!top || top === el) return true;
    const owners = ownersOf(el);
    for (let q = top; q; q = up(q)) if (owners.has(q)) return true;
    for (let q = up(el); q; q = up(q)) if (q === top) return true;
    return false;
  }

  // Per walk: set by occlusionPhase() (the walk runs the parts' phases in order).
  let hits, map, occNow, changed, WALKED, proof, tProof, trustedN, deferred, early, exactMs, exactN, left, tOcc;
  function occlusionPhase() {
    // at 25 % / 75 % of its width and height: inside the shape of any box (a border-radius draws at
    // most an ellipse, which holds them), and clear of the thin edges neighbours overlap (a grid's
    // column-resize handles). A hit on the element,
    // on its label, on the shadow host it lives in (a checkbox inside <sl-checkbox>) or anything
    // inside those is the element. A hit on one of its own ancestors means the point fell through
    // the element (a rounded corner, a transparent edge): it says nothing. Anything else covers it.
    hits = 0;
    rowMap();
    // An incremental walk hit-tests again only where something changed: the boxes of the rows in changed
    // subtrees and of the ancestors whose box moved (where they are and where they were), and of the
    // elements gone. A control copied from the last walk whose visible part meets none of them keeps its
    // last result (its cover's description is read again).
    occNow = new Map();
    changed = null;
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
    WALKED = new Uint8Array(nRows);
    for (const ri of walkedRows) WALKED[ri] = 1;
    // proof: null (not built yet), false (not available) or the painters by band of the viewport; trustedN: the
    // controls proven clear and not hit-tested
    proof = null, tProof = 0, trustedN = 0;
    deferred = [];
    early = [];      // [el, x1, y1, x2, y2, points that hit something else]: the timed hit tests
    exactMs = 0, exactN = 0, left = occCandidates.length;
    for (const [ri, el, x, y, w, h, clip] of occCandidates) {
      left--;
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
      if (proofWorth(left) && proofFor(el, x1, y1, x2, y2)) { deferred.push([ri, el, x1, y1, x2, y2]); continue; }
      if (exactN < 8 && proof === null) {   // (the first controls' hit tests are timed: proofWorth)
        const t = performance.now();
        const bad = hitTest(ri, el, x1, y1, x2, y2);
        exactMs += performance.now() - t; exactN++;
        early.push([el, x1, y1, x2, y2, bad]);
      } else hitTest(ri, el, x1, y1, x2, y2);
    }
    // The candidates proven clear by geometry: a sample is hit-tested as a check of the proof; if any point of the
    // sample hits something the proof did not expect, the proof is not trusted and every one of them is hit-tested.
    if (deferred.length) {
      // A control hit-tested before the proof was built that the proof says is clear checks it as a sampled one
      // does: it stands for the first of the sample (the first controls of the page).
      let trusted = true, checked = 0;
      for (const [el, x1, y1, x2, y2, bad] of early) {
        if (!proofFor(el, x1, y1, x2, y2)) continue;
        checked++;
        if (bad !== 0) { trusted = false; break; }
      }
      // (the first, the last and evenly between: three, and one more per 64)
      const every = Math.max(1, Math.floor(deferred.length / (2 + (deferred.length >> 6))));
      let sampled = 0;
      for (let q = checked && deferred.length > 1 ? 1 : 0; q < deferred.length && trusted; q++) {
        if (q % every !== 0 && q !== deferred.length - 1) continue;
        const d = deferred[q];
        if (!centreClear(d[1], d[2], d[3], d[4], d[5])) trusted = false;
        sampled++;
      }
      // (not trusted: every one is hit-tested, the sampled ones too)
      for (const d of deferred) {
        if (trusted) occNow.set(d[1], false);
        else hitTest(d[0], d[1], d[2], d[3], d[4], d[5]);
      }
      if (trusted) trustedN = deferred.length - sampled;
    }
    tOcc = performance.now();
  }
