// Walker part 7 of 7: what the next walk needs, the diff against the rows last sent, the answer.
// A section of the walker factory (head.js opens it): the parts share its scope and are joined in order
// by engine/browser/target.py (WALKER_PARTS). Its phase function runs once per walk, in order.

  // Remember what each non-structural node looked like, for re-creation matching next time.
  function keyOf(el, row) {
    // tag | role | name | context: the text of the nearest row-like ancestor (or the parent).
    let ctx = '';
    const item = el.parentElement && el.parentElement.closest('li,tr,[role=row],[role=listitem],[role=option],article,[role=article]');
    const c = item || el.parentElement;
    if (c) {
      ctx = ctxCache.get(c);
      if (ctx === undefined) { ctx = contentText(c, 80).slice(0, 80); ctxCache.set(c, ctx); }
    }
    return row[2] + '|' + row[3] + '|' + row[4] + '|' + ctx;
  }

  // Whether two row extras would serialize the same (plain objects, strings, numbers, booleans, null).
  function sameJson(a, b) {
    if (a === b) return true;
    if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) || Array.isArray(b)) return false;
    // (the same keys in the same order: for-in over one, the keys of the other)
    const kb = Object.keys(b);
    let i = 0;
    for (const k in a) if (k !== kb[i++] || !sameJson(a[k], b[k])) return false;
    return i === kb.length;
  }

  // Per walk: set by finishPhase() (the walk runs the parts' phases in order).
  let newInfo, tEnd, old, truncated, seq, out, diff, base, se;
  function finishPhase() {
    // The key is reused while the name is unchanged (it costs a text walk of the row).
    newInfo = new Map();
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i];
      if (!(row[7] & 8) && !(row[8] === 2 && row[4])) continue;
      const prev = S.info.get(row[1]);
      if (prev && prev.n === row[4] && prev.x === row[9] && prev.y === row[10]) { newInfo.set(row[1], prev); continue; }
      let k;
      if (prev && prev.n === row[4]) k = prev.k;
      else { const ref = S.byId.get(row[1]); const el = ref && ref.deref(); k = el ? keyOf(el, row) : ''; }
      newInfo.set(row[1], { k: k, n: row[4], x: row[9], y: row[10] });
    }
    S.info = newInfo;
    // Forget IDs of elements that are gone and were not re-created.
    if (S.byId.size > rows.length * 2 + 1000) {
      for (const [oid, ref] of S.byId) { const e = ref.deref(); if (!e || !e.isConnected) S.byId.delete(oid); }
    }
    S.suspects = suspects;
    tEnd = performance.now();

    // Keep this walk for the next one, and send only the rows that changed since the last one the
    // caller holds (opts.base: [token, seq] of the rows it kept).
    old = I.prev;
    truncated = count > maxNodes;
    I.prev = {
      raw: RAW, memo: memo, nc: NC, end: END, map: map, final: rows, key: optsKey, vw: VW, vh: VH,
      dpr: window.devicePixelRatio, sx: window.scrollX, sy: window.scrollY, truncated: truncated,
      controls: controls, scrollers: scrollers, remote: remote, focused: focused, floats: floats,
      floatSet: new Set(floats.map((f) => f[0])), hover: HOVER || hoverChain(), anims: ANIM.targets, occ: occNow,
    };
    seq = ++I.seq;
    out = rows, diff = null;
    base = opts.base;
    if (old && base && base[0] === I.tok && base[1] === I.sent) {
      // Parents in the compact form (`pd`): a kept row's parent is the one it had, shifted as its run
      // is; only the rows whose parent moved otherwise are listed, so the reply follows the change.
      const same = [], ch = [], body = [], pd = [];
      const of = old.final, oldMemo = old.memo;
      let runI = -1, runJ = -1, runN = 0;
      for (let i = 0; i < nRows; i++) {
        const r = rows[i];
        // (an unchanged page keeps every row where it was: one look at the same row before the map)
        const el = memo[i].el, j = i < oldMemo.length && oldMemo[i].el === el ? i : old.map.get(el);
        let eq = j !== undefined;
        if (eq) {
          const o = of[j];
          if (r !== o) {
            for (let f = 1; f < 14; f++) if (r[f] !== o[f]) { eq = false; break; }
            if (eq && r[14] !== o[14]) eq = !!(r[14] && o[14]) && sameJson(r[14], o[14]);
          }
          if (eq) {
            const op = o[0];
            if (r[0] !== (op >= 0 ? op + i - j : op)) pd.push(i, r[0]);
          }
        }
        if (!eq) { ch.push(i); body.push(r); continue; }
        if (runN && i === runI + runN && j === runJ + runN) runN++;
        else { if (runN) same.push(runI, runJ, runN); runI = i; runJ = j; runN = 1; }
      }
      if (runN) same.push(runI, runJ, runN);
      diff = { base: I.sent, n: nRows, pd: pd, same: same, ch: ch };
      out = body;
    }
    I.sent = seq;
    se = document.scrollingElement || document.documentElement;
    return JSON.stringify({
      url: location.href, title: wf(document.title || ''), vw: VW, vh: VH,
      sx: window.scrollX, sy: window.scrollY, sw: se.scrollWidth, sh: se.scrollHeight,
      dpr: window.devicePixelRatio, ver: S.ver, ready: document.readyState,
      rows: out, diff: diff, tok: I.tok, seq: seq, frames: frames, suspects: suspects.length, truncated: truncated,
      inc: { mode: PLAN ? 'incremental' : 'full', why: I.why, walked: walked, copied: copied, xs: I.xneed.length ? I.xneed : undefined },
      t: { walk: tWalk - t0, ids: tIds - tWalk, occlusion: tOcc - tIds, info: tEnd - tOcc, hits: hits, proof: tProof, proven: trustedN, recovered: recovered },
    });
  }

  // What a walk leaves is dropped once its reply is made (the next walk builds its own).
  function release() {
    t0 = S = prefix = OX = OY = VW = VH = C0 = MAXT = colourPairs = TB_MAX = ctxCache = rows = frames = undefined;
    fresh = suspects = pendingNames = occCandidates = focused = labelMaps = ROLE_ARIA = I = optsKey = undefined;
    HOVER = ANIM = stack = stackCx = slotCtx = rootEl = PLAN = P = DSUB = DTOUCH = SX = SY = undefined;
    DOC_SCROLLER = BODY = count = maxNodes = htmlClips = inl = rawT = rawTN = comp = compRows = undefined;
    cutsScratch = lstOnly = memo = NC = escRows = scrollers = controls = remote = floats = newFloat = undefined;
    pzRows = walked = copied = walkedRows = walkedForced = layOf = nRows = END = RAW = tWalk = undefined;
    recovered = tIds = hits = map = occNow = changed = WALKED = proof = tProof = trustedN = deferred = early = undefined;
    exactMs = exactN = left = tOcc = newInfo = tEnd = old = truncated = seq = out = diff = base = se = undefined;
  }

  function vigilWalk(key, options) {
    KEY = key; opts = options;
    try {
      headPhase(); namesPhase(); planPhase();
      const early = walkPhase();
      if (early !== undefined) return early;
      passesPhase(); occlusionPhase();
      return finishPhase();
    } finally {
      release();
    }
  }
  return vigilWalk;
})()
