// Walker part 5 of 7: the whole-tree passes: subtree ends, delegating containers, text blocks, labels, IDs.
// A section of the walker factory (head.js opens it): the parts share its scope and are joined in order
// by engine/browser/target.py (WALKER_PARTS). Its phase function runs once per walk, in order.

  const W = (i) => { let r = rows[i]; if (r === RAW[i]) r = rows[i] = r.slice(); return r; };

  // Text blocks. A block (a paragraph, a list item, a cell, a code block) whose content is text
  // mixed with inline elements — links, code, emphasis, highlighted tokens — gets as its text that
  // whole content in reading order, so "specified by RFC 2616 (which obsoletes RFC 2068)" keeps its
  // words; the inline elements stay in the tree (links keep their IDs) but are marked folded, so
  // the serializations do not repeat them one token per node. Hidden inline parts are not read.
  // Text-level content: no role or a text-level one (code, emphasis, a link, an image) — not a
  // widget (a field, a button, a meter), which keeps its own node.
  function foldable(row) { return TEXT_ROLES.has(row[3]); }
  function composeText() {
    const inlBlocks = [];
    for (let k = compRows.length - 1; k >= 0; k--) {      // children before their parents
      const ri = compRows[k], cp = comp.get(ri);
      const raw = cp.raw, rawN = cp.rawN || raw, cuts = cp.cuts, kids = cp.kids;
      // words: its own text has words; plain: some words are not a control's; prose: every inline
      // child is text-level (formatting, links, images), not a widget such as a meter or a field
      // (outA: the words for a name from content — without what is aria-hidden, which a person reads but
      // accname leaves out, and as written, not as text-transform shows them)
      let out = '', outA = '', at = 0, words = false, plain = false, prose = true, parts = 0, block = false;
      for (let j = 0; j < cuts.length; j++) {
        const seg = raw.slice(at, cuts[j]);
        outA += rawN.slice(at, cuts[j]);
        at = cuts[j];
        if (!words && /\S/.test(seg)) words = true;
        out += seg;
        const c = kids[j];
        if (c === undefined) continue;                  // the walk stopped at its node budget
        const row = rows[c];
        const fl = row[7];
        // not rendered, or hidden from a person: not read (aria-hidden only: read, not named)
        const ahOnly = (fl & 524288) !== 0;
        if (!(fl & 1) || ((fl & 2048) && !ahOnly)) continue;
        if (!inl[c]) { out += '\n'; outA += '\n'; block = true; continue; }
        if (!foldable(row)) prose = false;
        const cc = comp.get(c);
        let t, tA;
        if (cc) { t = cc.flat; tA = cc.flatA; if (cc.plain && !(fl & 8)) plain = true; if (cc.block) block = true; if (!cc.prose) prose = false; }
        else {
          t = rawT.get(c) || (row[2] === 'img' ? ' ' + row[4] + ' ' : row[2] === 'br' ? '\n' : '');
          tA = rawTN.get(c) || t;
          if (!plain && !(fl & 8) && /\S/.test(t)) plain = true;
        }
        if (t) { out += t; parts++; }
        if (tA && !ahOnly) outA += tA;
      }
      const tail = raw.slice(at);
      if (!words && /\S/.test(tail)) words = true;
      out += tail; outA += rawN.slice(at);
      if (words) plain = true;
      cp.flat = out; cp.flatA = outA; cp.plain = plain; cp.block = block; cp.prose = prose; cp.parts = parts; cp.words = words;
      if (inl[ri]) {
        // A paragraph a style sheet lays out inline (Sphinx's "Note" and "See also" boxes) is still a
        // paragraph: a block, unless the block around it takes its words in (looked at below).
        if (parts && r0Block(rows[ri][3])) inlBlocks.push(ri);
        continue;
      }
      toBlock(ri, cp);
    }
    for (let k = inlBlocks.length - 1; k >= 0; k--) {   // parents before their children
      const ri = inlBlocks[k];
      if (!(rows[ri][7] & 1024)) toBlock(ri, comp.get(ri));
    }
  }
  function r0Block(role) { return role !== '' && role !== 'generic' && BLOCK_ROLES.has(role); }
  function toBlock(ri, cp) {
    const out = cp.flat, parts = cp.parts, plain = cp.plain, words = cp.words, prose = cp.prose, block = cp.block;
    const kids = cp.kids, cuts = cp.cuts;
    {
      let r = rows[ri];
      // A name from content leaves out what is not rendered (a heading's hidden permalink "¶").
      if (cp.nfc && !block && (parts < cuts.length || cp.flatA !== out)) {
        const nm = squash(cp.flatA);
        if (nm && nm !== r[4] && r[4].indexOf(nm) >= 0) (r = W(ri))[4] = wf(cut(nm, 250));
      }
      if (!parts || !plain || !(words || prose)) return;
      if (!BLOCK_ROLES.has(r[3])) return;             // a dialog, a form, a list: containers, not text
      const pre = r[2] === 'pre';
      const full = pre ? preText(out) : squash(out);
      if (!full) return;
      r = W(ri);
      r[5] = wf(limitText(full, TB_MAX));
      r[7] |= 512;
      if (cp.nfc && !block) r[4] = wf(cut(squash(cp.flatA), 250));
      // Mark the inline content as folded into this block (not a widget: a meter or a field in a
      // sentence keeps its own node).
      const todo = kids.slice();
      while (todo.length) {
        const c = todo.pop();
        if (c === undefined || !inl[c] || !foldable(rows[c])) continue;
        W(c)[7] |= 1024;
        const cc = comp.get(c);
        if (cc) for (const g of cc.kids) todo.push(g);
      }
    }
  }
  // The words a widget's field shows: its chosen value(s), not a placeholder, not a remove button.
  function fieldWords(F, ci) {
    const out = [];
    for (let d = F + 1; d < END[F]; d++) {
      if (d === ci) { d = END[ci] - 1; continue; }
      const dr = rows[d];
      if (!(dr[7] & 1) || (dr[7] & 2048) || dr[3] === 'button') { d = END[d] - 1; continue; }
      const cl = memo[d].el.getAttribute('class');
      if (cl && cl.indexOf('placeholder') >= 0) { d = END[d] - 1; continue; }
      const t = dr[5];
      if (t && !/^[×✕✖]$/.test(t)) out.push(t);
    }
    return out.join(', ');
  }

  // Per walk: set by passesPhase() (the walk runs the parts' phases in order).
  let nRows, END, RAW, tWalk, recovered, tIds;
  // Each walked element's row (`map`, declared in occlusion.js): made once a walk, when first needed (labels named by
  // aria-labelledby, occlusion; the next walk keeps it).
  function rowMap() {
    if (!map) { map = new Map(); for (let i = 0; i < nRows; i++) map.set(memo[i].el, i); }
    return map;
  }

  function passesPhase() {
    nRows = rows.length;
    map = null;
    // Where each subtree ends, and which subtrees lean on boxes above them.
    END = new Int32Array(nRows);
    for (let i = nRows - 1; i >= 0; i--) {
      if (END[i] < i + 1) END[i] = i + 1;
      const p = rows[i][0];
      if (p >= 0 && END[p] < END[i]) END[p] = END[i];
    }
    {
      let budget = 400000;
      for (const [ri, cb] of escRows) {
        for (let p = rows[ri][0]; p >= 0 && budget-- > 0; p = rows[p][0]) {
          if (cb !== null && memo[p].el === cb) break;
          NC[p] = 1;
        }
        if (budget <= 0) { for (let i = 0; i < nRows; i++) NC[i] = 1; break; }
      }
    }
    // Text-block inputs of every row, index-free (kids relative to their row) for later copies.
    for (const ri of compRows) {
      const m = memo[ri];
      if (m.cp) continue;
      const c = comp.get(ri);
      const k = new Array(c.kids.length);
      for (let z = 0; z < k.length; z++) k[z] = c.kids[z] - ri;
      m.cp = { raw: c.raw, rn: c.rawN || null, cuts: c.cuts, k: k, nfc: c.nfc };
    }
    // The whole-tree passes work on copies: the rows above stay as the walk made them, for reuse.
    // (copied on first write: W(i))
    RAW = rows.slice();

    // A container whose only sign of interactivity is a click listener and which holds other
    // controls is delegating its children's clicks (a framework root, a list's handler): it is not
    // a click target itself. A listener on a leaf — nothing interactive inside — still makes one.
    if (lstOnly.length) {
      const below = new Uint8Array(rows.length);
      for (let i = rows.length - 1; i > 0; i--) {
        const p = rows[i][0];
        if (p >= 0 && ((rows[i][7] & 8) || below[i])) below[p] = 1;
      }
      for (const [ri, role0, tier0] of lstOnly) {
        if (!below[ri]) continue;
        const r = W(ri);
        r[7] &= ~8; r[3] = role0 || ''; r[8] = tier0; r[4] = '';
      }
    }
    composeText();
    // A container some child of which its layout places out of document order reads its children by
    // their boxes (flag 131072, see head.js; a bit test per row).
    for (let i = 1; i < nRows; i++) if (rows[i][7] & 262144) { const p = rows[i][0]; if (p >= 0 && !(rows[p][7] & 131072)) W(p)[7] |= 131072; }
    tWalk = performance.now();

    // Label hunting for controls that are still unnamed.
    for (const [ri, el] of pendingNames) W(ri)[4] = wf(cut(huntLabel(el), 250));

    // A label that names a control through its aria-labelledby (a component's floating label, which
    // focuses the control when clicked) is part of that control, as a <label for> is (walk.js).
    {
      let rowOf = null;
      for (let ri = 0; ri < nRows; ri++) {
        const r = rows[ri];
        const lb = (r[7] & 8) && r[14] && r[14].a ? r[14].a['aria-labelledby'] : null;
        if (!lb) continue;
        if (!rowOf) rowOf = rowMap();
        for (const id of lb.split(/\s+/)) {
          const t = id && byIdIn(memo[ri].el, id);
          const q = t ? rowOf.get(t) : undefined;
          if (q === undefined || q === ri) continue;
          const lr = rows[q];
          if ((lr[7] & 8) && lr[3] === '' && lr[8] === 1 && !(lr[14] && lr[14].a && lr[14].a.tabindex !== undefined)) {
            const g = W(q); g[7] &= ~8;
          }
        }
      }
    }
    // A widget's visible field. A custom select's combobox is often a bare input inside the box a
    // person sees and clicks (its chosen value, its chevron): a sliver of it, or moved off-screen
    // once a value is chosen. That box — the nearest click target above the combobox, without a
    // role of its own, holding no other field — is the combobox's box: the combobox takes its place,
    // visibility and hit test (and, when its own value is empty, the words the field shows), and the
    // field is no click target of its own. A chevron or an arrow inside it is part of it.
    {
      const cands = new Map();
      for (let q = 0; q < occCandidates.length; q++) cands.set(occCandidates[q][0], q);
      for (let ri = 0; ri < nRows; ri++) {
        const r = rows[ri];
        if (r[3] !== 'combobox' || !(r[7] & 8) || !(r[7] & 1)) continue;
        let f = r[0], F = -1;
        for (let d = 0; f >= 0 && d < 7; d++, f = rows[f][0]) {
          const fr = rows[f];
          if ((fr[7] & 9) === 9 && fr[3] === '' && fr[8] === 1) { F = f; break; }
          if (fr[3] !== '' || (fr[7] & 8)) break;
        }
        if (F < 0) continue;
        const fr = rows[F];
        if (fr[11] < 8 || fr[12] < 8 || fr[12] > 120 || fr[13] <= 0 || (fr[7] & 2048)) continue;
        let other = false;
        for (let d = F + 1; d < END[F] && !other; d++) {
          if (d === ri) { d = END[ri] - 1; continue; }
          const dr = rows[d];
          if ((dr[7] & 2057) === 9 && dr[13] > 0 && (dr[3] === 'combobox' || dr[3] === 'textbox' || dr[3] === 'searchbox' || dr[3] === 'listbox')) other = true;
        }
        if (other) continue;
        const c = W(ri);
        c[9] = fr[9]; c[10] = fr[10]; c[11] = fr[11]; c[12] = fr[12]; c[13] = fr[13];
        c[7] = (c[7] & ~(2048 | (7 << 12))) | (fr[7] & (2048 | (7 << 12)));
        if ((c[14] && c[14].vb) || (fr[14] && fr[14].vb)) {
          const ex = c[14] = Object.assign({}, c[14] || {});
          if (fr[14] && fr[14].vb) ex.vb = fr[14].vb; else delete ex.vb;
        }
        if (!c[6] && !(c[7] & 16)) {
          const v = fieldWords(F, ri);
          if (v) c[6] = wf(cut(v, 500));
        }
        const g = W(F);
        g[7] &= ~8;
        // (an unnamed icon inside the field that only opens the menu, as the field does, is part of it)
        for (let d = F + 1; d < END[F]; d++) {
          if (d === ri) { d = END[ri] - 1; continue; }
          const dr = rows[d];
          if ((dr[7] & 8) && dr[3] === '' && dr[8] === 1 && !dr[4] && !dr[5]) W(d)[7] &= ~8;
        }
        const qf = cands.get(F), qc = cands.get(ri);
        if (qf !== undefined) {
          const e = occCandidates[qf].slice();
          e[0] = ri;
          if (qc !== undefined) occCandidates[qc] = e; else occCandidates.push(e);
        } else if (qc !== undefined) occCandidates[qc] = [ri, null, 0, 0, 0, 0, C0];   // (no box in view: not hit-tested)
      }
    }

    // Stable IDs for elements seen for the first time: a framework may have destroyed and
    // re-created an element we knew; give it its old ID back when tag, role, name and the
    // text of its row match — the nearest such retired ID wins, however far rows shifted.
    recovered = 0;
    if (fresh.length) {
      const retired = new Map();
      if (S.info.size) {
        for (const [oid, inf] of S.info) {
          const ref = S.byId.get(oid);
          const old = ref && ref.deref();
          if (old && old.isConnected) continue;
          let arr = retired.get(inf.k);
          if (!arr) retired.set(inf.k, arr = []);
          arr.push([oid, inf.x, inf.y]);
        }
      }
      for (const [ri, el] of fresh) {
        const row = rows[ri];
        let nid = null;
        if (retired.size && ((row[7] & 8) || (row[8] === 2 && row[4]))) {
          const arr = retired.get(keyOf(el, row));
          if (arr && arr.length) {
            let best = 0, bd = Infinity;
            for (let i = 0; i < arr.length; i++) {
              const d = Math.abs(arr[i][1] - row[9]) + Math.abs(arr[i][2] - row[10]);
              if (d < bd) { bd = d; best = i; }
            }
            nid = arr[best][0];
            arr.splice(best, 1);
            recovered++;
          }
        }
        if (nid === null) { nid = prefix + S.next; S.next++; }
        S.ids.set(el, nid);
        S.byId.set(nid, new WeakRef(el));
        row[1] = nid;
        RAW[ri][1] = nid;   // a row walked now: not shared with the previous walk
      }
    }
    tIds = performance.now();
  }
