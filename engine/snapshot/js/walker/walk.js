// Walker part 4 of 7: the walk itself: every element once, pre-order, or a copy of its unchanged subtree.
// A section of the walker factory (head.js opens it): the parts share its scope and are joined in order
// by engine/browser/target.py (WALKER_PARTS). Its phase function runs once per walk, in order.

  // Walk: iterative, pre-order; a stack of
  const pushChildren = (host, parentRow, clip, posClip, inShadow, ptr, atomic, dead, transp, pcomp, ahid, bg, posEl, forced) => {
    const sr = host.shadowRoot || S.closed.get(host);
    if (sr) I.observe(sr);
    // Shadow content first (it is what renders), then light children (slotted or fallback).
    // (one context for all the children of a host, shared: not one array per child)
    // (script, style and the like are never walked: not pushed)
    let cx = null;
    for (let c = host.lastElementChild; c; c = c.previousElementSibling) {
      if (SKIP.has(c.localName)) continue;
      if (!cx) cx = [parentRow, clip, posClip, inShadow, ptr, atomic, dead, transp, pcomp, sr ? (host.shadowRoot ? 1 : 2) : 0, ahid, bg, posEl, forced, null];
      stack.push(c); stackCx.push(cx);
    }
    if (sr) {
      cx = null;
      for (let c = sr.lastElementChild; c; c = c.previousElementSibling) {
        if (SKIP.has(c.localName)) continue;
        // inShadow: 1 in an open root, 2 in a closed one (or anywhere below one); 3 and 4 the same for a
        // child of the shadow root itself (the top of its tree scope: Playwright's query order needs it)
        if (!cx) cx = [parentRow, clip, posClip, host.shadowRoot && inShadow !== 2 ? 3 : 4, ptr, atomic, dead, transp, null, 0, ahid, bg, posEl, forced, null];
        stack.push(c); stackCx.push(cx);
      }
    }
  };
  // The context part of a row's memo (see sameCtx), shared by the children of one context.
  const ctxMemo = (c) => c[14] || (c[14] = [c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[10], c[11], c[12]]);
  const closedPart = (el, tag) => {
    const d = el.parentElement;
    return !!d && d.localName === 'details' && !d.open && !(tag === 'summary' && d.querySelector(':scope > summary') === el);
  };
  const sameClip = (a, b) => a === b || (a[0] === b[0] && a[1] === b[1] && a[2] === b[2] && a[3] === b[3] && a[4] === b[4]);
  function sameCtx(c, clipIn, posIn, inShadow, parentPtr, atomicAnc, deadAnc, transpAnc, ahidAnc, bgAnc, posEl) {
    return sameClip(c[0], clipIn) && sameClip(c[1], posIn) && c[2] === inShadow && c[3] === parentPtr && c[4] === atomicAnc &&
      c[5] === deadAnc && c[6] === transpAnc && c[7] === ahidAnc && c[8] === bgAnc && c[9] === posEl;
  }
  // Copy the previous walk's subtree at row k (its rows, and what the whole-tree passes need).
  function copyTree(k, parent, pcomp) {
    const e = P.end[k], d = rows.length - k;
    if (pcomp) pcomp.kids.push(rows.length);
    for (let q = k; q < e; q++) {
      let r = P.raw[q];
      const np = q === k ? parent : r[0] + d;
      if (np !== r[0]) { r = r.slice(); r[0] = np; }
      const i = rows.length;
      rows.push(r);
      const m = P.memo[q];
      memo.push(m);
      NC.push(P.nc[q]);
      inl.push(m.il);
      if (m.rt) rawT.set(i, m.rt);
      if (m.rtn) rawTN.set(i, m.rtn);
      if (m.cp) {
        const kids = new Array(m.cp.k.length);
        for (let z = 0; z < kids.length; z++) kids[z] = m.cp.k[z] + i;
        comp.set(i, { raw: m.cp.raw, rawN: m.cp.rn, cuts: m.cp.cuts, kids: kids, nfc: m.cp.nfc, flat: '', plain: false });
        compRows.push(i);
      }
      if (m.lst) lstOnly.push([i, m.lst[0], m.lst[1]]);
      if (m.fr) { frames.push([i].concat(m.fr)); S.lastFrames.push(m.el); }
      if (m.su) suspects.push(m.el);
      if (m.pn) pendingNames.push([i, m.el]);
      if (m.cand) occCandidates.push([i].concat(m.cand));
      if (m.sl) slotCtx.set(m.el, m.sl);
      if (m.scr) scrollers.push([m.el, m.scr[0], m.scr[1]]);
      if (m.ctl !== null) controls.push([m.el, m.ctl]);
      if (m.rem) remote.push(m.el);
      if (m.fl) floats.push([m.el].concat(m.fl));
      if (m.pz) pzRows.push(i);
    }
    copied += e - k;
    return e - k;
  }
  // One element of the walk (false: the node budget is spent). A function of its own, not the body of a loop in the
  // walker: V8 compiles this small function early and well (the walker as a whole only late, from on-stack
  // replacement); the loop ran 10-30 % faster on the bench pages (issue 41).
  function walkOne(el, C) {
    const tag = el.localName;
    if (SKIP.has(tag)) return true;
    const parent = C[0], inShadow = C[3], pcomp = C[8], slotted = C[9];
    let clipIn = C[1], posIn = C[2], parentPtr = C[4], atomicAnc = C[5], deadAnc = C[6], transpAnc = C[7], ahidAnc = C[10],
      bgAnc = C[11], posElIn = C[12], forced = C[13];
    let ownCx = false;   // the context differs from the shared one (slotted): its memo is its own
    if (slotted) {
      const sl = el.assignedSlot;
      const si = sl && slotCtx.get(sl);
      if (si) { [clipIn, posIn, parentPtr, atomicAnc, deadAnc, transpAnc, ahidAnc, bgAnc, posElIn] = si; ownCx = true; }
      else if (slotted === 1 && !sl) { deadAnc = true; ownCx = true; }     // no slot takes it: not rendered
    }
    // A closed <details> shows its summary only: the rest of it is not rendered (Chromium still lays it
    // out in a content-visibility:hidden slot, so its boxes alone do not say so).
    if (parent >= 0 && !deadAnc && rows[parent][2] === 'details' && closedPart(el, tag)) { deadAnc = true; ownCx = true; }
    if (!forced) {
      if (DSUB.has(el)) forced = true;
      else if (!DTOUCH.has(el)) {
        const k = P.map.get(el);
        if (k !== undefined && !P.nc[k] && count + (P.end[k] - k) <= maxNodes) {
          const m = P.memo[k];
          let ok = m.b !== 0 && sameCtx(m.cx, clipIn, posIn, inShadow, parentPtr, atomicAnc, deadAnc, transpAnc, ahidAnc, bgAnc, posElIn);
          if (ok && m.b === 1) {
            const rc = el.getBoundingClientRect();
            ok = rc.left === m.r[0] && rc.top === m.r[1] && rc.width === m.r[2] && rc.height === m.r[3];
          } else if (ok && m.b === 2) ok = getComputedStyle(el).display === 'none';
          if (ok) { count += copyTree(k, parent, pcomp); return true; }
        }
      }
    }
    if (count++ >= maxNodes) return false;
    walked++;
    walkedRows.push(rows.length);
    walkedForced.push(forced ? 1 : 0);
    let id = S.ids.get(el);
    const rowIndex = rows.length;
    let memoLst = null, memoFr = null, memoSu = false, memoPn = false, memoCand = null, memoScr = null, labelCtl = null;
    if (id === undefined) fresh.push([rowIndex, el]);
    // The element's attribute names, read once: most elements have none of the attributes asked
    // about below, and one look at the names spares a call into the DOM for each of them.
    const an = el.getAttributeNames();
    let af = 0, keep = null;
    for (let i = 0; i < an.length; i++) {
      const a = an[i];
      if (a.startsWith('aria-')) {
        af |= A_ARIA;
        if (a === 'aria-hidden') af |= A_AHID;
        else if (a === 'aria-labelledby') af |= A_ALB;
      } else if (a === 'role') af |= A_ROLE;
      else if (a === 'tabindex') af |= A_TI;
      else if (a === 'onclick' || a === 'onmousedown' || a === 'onpointerdown' || a === 'onmouseup') af |= A_ON;
      else if (a === 'data-testid' || a === 'data-test' || a === 'data-cy') af |= A_TID;
      if (KEEP_ATTR.has(a)) (keep || (keep = [])).push(a);
    }
    const cs = getComputedStyle(el);
    const display = deadAnc ? 'none' : cs.display;
    const dead = deadAnc || display === 'none';
    // Transparent (opacity 0) boxes are laid out and take clicks: it is how styled switches, toggles
    // and file pickers hide their native input. Only a transparent part that lets clicks through
    // (pointer-events: none — a faded-out menu, the native <select> a custom one mirrors) is taken
    // as not there; a checkbox or radio stays (its label takes the click).
    const transp = transpAnc || (!dead && cs.opacity === '0');
    // (a list item's marker or quotes may be boxes of their own the walk does not list: see occlusion.js)
    const memoPz = !dead && (tag === 'q' || display.indexOf('list-item') >= 0);
    let memoFl = null;
    // (a floated box is blockified: an inline-level display says it does not float, without a read)
    if (!dead && !display.startsWith('inline') && cs.float !== 'none') {
      const rc = el.getBoundingClientRect();
      memoFl = [rc.left, rc.top, rc.width, rc.height, floatMargins(cs)];
      floats.push([el].concat(memoFl));
      if (P && !P.floatSet.has(el)) newFloat = true;
    }
    const vis = dead ? '' : cs.visibility;
    let rendered = !dead && vis !== 'hidden' && vis !== 'collapse';
    // So is a transparent part hidden from assistive technology too (aria-hidden: the mirror input
    // a component keeps for form validation).
    const ariaHidden = (af & A_AHID) !== 0 && el.getAttribute('aria-hidden') === 'true';
    if (rendered && transp && !(tag === 'input' && (el.type === 'checkbox' || el.type === 'radio') && !ariaHidden) &&
        (cs.pointerEvents === 'none' || ariaHidden)) rendered = false;
    let x = 0, y = 0, w = 0, h = 0, ratio = 0, vbox = null;
    let rect = null;
    const pos = dead ? 'static' : cs.position;
    let clip = pos === 'fixed' ? C0 : pos === 'absolute' ? posIn : clipIn;
    if (display !== 'none') {
      rect = el.getBoundingClientRect();
      x = rect.left; y = rect.top; w = rect.width; h = rect.height;
      // A native checkbox or radio shrunk to nothing (the visually-hidden pattern) is where its
      // label is: that is what a person sees and clicks.
      if (rendered && (w < 2 || h < 2) && tag === 'input' && (el.type === 'checkbox' || el.type === 'radio')) {
        const lab = el.closest('label') || labelsFor(el)[0];
        const lr = lab && lab.getBoundingClientRect();
        if (lr && lr.width >= 2 && lr.height >= 2) { x = lr.left; y = lr.top; w = lr.width; h = lr.height; }
      }
    }
    let flags = rendered ? 1 : 0;
    // 4 in shadow, 32768 in a closed root, 65536 a child of the shadow root itself
    if (inShadow) flags |= (inShadow % 2 === 0 ? 32772 : 4) | (inShadow > 2 ? 65536 : 0);
    // Reading order follows the layout: a flex container laid out in reverse, or a child its flex or
    // grid container places by `order` or grid placement, is read by its boxes (serialize/text.py).
    if (!dead) {
      if (display.endsWith('flex')) {
        layOf.set(rowIndex, 1);
        if (cs.flexDirection.endsWith('reverse') || cs.flexWrap === 'wrap-reverse') flags |= 131072;
      } else if (display.endsWith('grid')) layOf.set(rowIndex, 2);
      const pl = parent >= 0 && layOf.size ? layOf.get(parent) : undefined;
      if (pl && (cs.order !== '0' || (pl === 2 && (cs.gridRowStart !== 'auto' || cs.gridColumnStart !== 'auto')))) flags |= 262144;
    }
    // The visually-hidden pattern (an absolutely placed box cut to nothing by `clip: rect(0 0 0 0)` or
    // `clip-path: inset(50%)`: a library's native <select> kept for its form) shows nothing of itself
    // or of what is inside it. (Not a native checkbox or radio: it is where its label is, above.)
    if (rendered && (pos === 'absolute' || pos === 'fixed') && !(tag === 'input' && (el.type === 'checkbox' || el.type === 'radio')) && cutAway(cs)) {
      clip = [x, y, 0, 0, 1];
    }
    // Visible ratio: the part of the box inside the clip (viewport ∩ overflow-clipping ancestors),
    // relative to the smaller of the box and the clip (so a huge wrapper that fills the view is visible).
    // A box under 2 px either way (the visually-hidden pattern) is not seen by anyone.
    if (rendered && w >= 2 && h >= 2) {
      const ix = Math.max(x, clip[0]), iy = Math.max(y, clip[1]);
      const ax = Math.min(x + w, clip[0] + clip[2]), ay = Math.min(y + h, clip[1] + clip[3]);
      if (ax > ix && ay > iy) {
        const vis = (ax - ix) * (ay - iy);
        // What a scroll area or an overflow box cuts off the box (more than the viewport does): the
        // part that can be seen, for the overlay (a menu's option half scrolled out of it).
        if (clip !== C0 && (ix > x + 0.5 || iy > y + 0.5 || ax < x + w - 0.5 || ay < y + h - 0.5)) {
          const vx = Math.max(x, C0[0]), vy = Math.max(y, C0[1]);
          const vx2 = Math.min(x + w, C0[0] + C0[2]), vy2 = Math.min(y + h, C0[1] + C0[3]);
          if (ix > vx + 0.5 || iy > vy + 0.5 || ax < vx2 - 0.5 || ay < vy2 - 0.5) vbox = [Math.round(ix + OX), Math.round(iy + OY), Math.round(ax - ix), Math.round(ay - iy)];
        }
        const denom = Math.min(w * h, Math.max(1, clip[2] * clip[3]));
        ratio = Math.min(1, vis / denom);
      }
    }
    let role = roleOf(el, tag, (af & A_ROLE) !== 0), roleIsAria = ROLE_ARIA;
    const isHost = !!(el.shadowRoot || S.closed.has(el));
    const ptr = cs.cursor === 'pointer';
    let tier = 0, interactive = false;
    let listener = S.listeners.has(el);
    if (listener) {
      flags |= 32;
      // A framework's root container (React, Vue) holds the listeners of the whole app it renders:
      // that is delegation, not a click target.
      if (isAppRoot(el)) listener = false;
    }
    if (ptr && !parentPtr) flags |= 64;
    const tabindexAttr = (af & A_TI) ? el.getAttribute('tabindex') : null;
    const ti = tabindexAttr === null ? NaN : parseInt(tabindexAttr, 10);
    const ce = el.isContentEditable && (!el.parentElement || !el.parentElement.isContentEditable);
    if (role && roleIsAria && role !== 'none' && role !== 'presentation' && role !== 'generic') {
      tier = 2;
      if (INTERACTIVE.has(role)) interactive = true;
    }
    // A list item, row or cell that is plainly a click target (its own pointer cursor — or one its
    // list gives every item —, a listener, a click attribute, a tab stop, a listbox or menu around
    // it) is one: an option or menu item when its list says so, else a clickable, named by its text.
    if (tier === 2 && ITEM_ROLES.has(role) && !(af & A_ROLE)) {
      const pe = el.parentElement;
      const pr = pe && tag === 'li' ? (pe.getAttribute('role') || '').trim().toLowerCase() : '';
      const inRole = pr === 'listbox' ? 'option' : (pr === 'menu' || pr === 'menubar') ? 'menuitem' : '';
      const ptrItem = ptr && (!parentPtr || (pe && LIST_TAGS.has(pe.localName)));
      const onattr = (af & A_ON) !== 0;
      const rowPart = listener && !inRole && !onattr && !ptrItem && !(ti >= 0) && cellOfClickRow(el, tag);  // (names.js)
      if (!rowPart && (inRole || onattr || listener || ptrItem || ti >= 0)) {
        if (listener && !inRole && !onattr && !ptrItem && !(ti >= 0) && !rowOfClickCells(el, tag)) { lstOnly.push([rowIndex, role, tier]); memoLst = [role, tier]; }
        role = inRole || null; roleIsAria = !!inRole; tier = 1;
        if (!atomicAnc) interactive = true;
      }
    }
    let hint = false;
    if (tier === 0) {
      const testid = (af & A_TID) !== 0;
      const onattr = (af & A_ON) !== 0;
      hint = onattr || listener || (ti >= 0) || ce || (ptr && !parentPtr) || (role && !roleIsAria);
      // A label of a control a person sees (its `for` or the field inside it) is part of that control:
      // clicking it works the control, which is the one click target (a select's floating label, a
      // checkbox's words, a menu toggle's icon label). A label whose control is not rendered is
      // itself the click target: it then takes the control's name when it has none of its own.
      if (tag === 'label' && !onattr && !(ti >= 0) && !testid && !role && !ce) {
        const lc = el.control;
        if (lc) {
          labelCtl = lc;
          if (hint && lc.getClientRects().length) hint = false;
        }
      }
      if (hint || testid) {
        tier = 1;
        if (!atomicAnc) interactive = true;
        // Only a listener or a tab stop (or, on a component's host, a pointer cursor): a leaf is a
        // click target; a container of other controls is delegating their clicks, is a focusable
        // scroller, or is a component wrapping its real control (<sl-button> around its <button>)
        // — decided after the walk, when its descendants are known.
        if (!onattr && !ce && !(role && !roleIsAria) && !testid && (isHost || !(ptr && !parentPtr))) { lstOnly.push([rowIndex, role, 0]); memoLst = [role, 0]; }
      }
    }
    if (tier === 2 && ce) interactive = true;
    if (tier === 2 && ti >= 0 && !interactive && role !== 'dialog' && role !== 'region' && role !== 'main') interactive = true;
    if (interactive && atomicAnc && tier < 2) interactive = false;
    if (interactive) flags |= 8;
    if (ti >= 0 || (el.tabIndex >= 0 && interactive)) flags |= 128;
    let name = '';
    let value = null;
    if (tier > 0 || role) {
      name = nameOf(el, tag, role || '', (af & A_ARIA) !== 0);
      if (!name && tier === 1) name = contentText(el, 120);
      if (!name && labelCtl) name = squash(labelCtl.getAttribute('aria-label') || labelCtl.title || '');
    }
    // Direct text of this element (its own text nodes), and where its element children sit in it.
    let text = '';
    let nKids = 0;
    cutsScratch.length = 0;
    if (tag !== 'textarea') {
      for (let c = el.firstChild; c; c = c.nextSibling) {
        const nt = c.nodeType;
        if (nt === 3) text += c.data;
        else if (nt === 1 && !SKIP.has(c.localName)) { cutsScratch.push(text.length); nKids++; }
      }
    }
    // Text as shown (text-transform). Names keep the words as written: Playwright's accname (its
    // get_by_role) does not transform them (Chromium's tree does; the two differ in case only).
    // textN: the text for names, where it differs.
    let textN = null;
    const asWritten = text;
    const tt = dead || !text ? 'none' : cs.textTransform;   // (read only for an element with words of its own)
    if (tt !== 'none') {
      const t2 = transformRaw(text, cutsScratch, tt);
      if (t2 !== text) { if (t2.length === text.length) textN = text; text = t2; }
    }
    // CSS generated content is text a person reads: ::before words open the element's text, ::after
    // words close it (only for an element a ::before/::after rule with words may match: genHit).
    if (rendered && tag !== 'input' && tag !== 'textarea' && tag !== 'select' && genHit(el)) {
      const g = genWords(el);
      if (g[0]) {
        for (let i = 0; i < cutsScratch.length; i++) cutsScratch[i] += g[0].length;
        text = g[0] + text; if (textN !== null) textN = g[0] + textN;
      }
      if (g[1]) { text += g[1]; if (textN !== null) textN += g[1]; }
    }
    // (a shadow host renders its own tree: it is a unit of its own, never part of a text run)
    // (inside an SVG picture, a <tspan> runs on in its <text>; a <text> or a group is a unit of its own)
    const svgEl = tag !== 'svg' && el.namespaceURI === SVG_NS;
    const isInl = !isHost && (svgEl ? tag === 'tspan' || tag === 'textPath' : display.startsWith('inline') || display === 'contents');
    inl.push(isInl ? 1 : 0);
    // Rows whose inline content may make a text block (or part of one): composed after the walk.
    let cpHere = null;
    if (nKids && !isHost && (text.length || isInl || tag === 'pre' || tag === 'code' || (svgEl && tag === 'text'))) {
      cpHere = { raw: text, rawN: textN, cuts: cutsScratch.slice(), kids: [], nfc: nameFromContent(el, role), flat: '', plain: false };
      comp.set(rowIndex, cpHere);
      compRows.push(rowIndex);
    } else if (isInl && text) { rawT.set(rowIndex, text); if (textN !== null) rawTN.set(rowIndex, textN); }
    // A block's own words are kept whole (up to TB_MAX, then a marker): a paragraph is read, not
    // skimmed. Inline pieces keep a short text (their words are in their block's text too).
    // A control's words are its name (generated content included); its own text stays what the DOM holds,
    // as written, which is what a text locator (Playwright's get_by_text) can find.
    if (text !== asWritten && interactive && ATOMIC.has(role || '')) text = asWritten;
    if (text) {
      // (a paragraph laid out inline by a style sheet is still read whole)
      const para = isInl && r0Block(role || '');
      text = tag === 'pre' ? limitText(preText(text), TB_MAX) : limitText(squash(text), isInl && !para ? MAXT : TB_MAX);
      if (text && (!isInl || para) && !isHost && tag !== 'slot' && BLOCK_ROLES.has(role || '')) flags |= 512;
    }
    if (pcomp) pcomp.kids.push(rowIndex);
    // A thin, empty, unnamed box that only listens (a virtual list's scroll bar thumb, a column's
    // resize handle) is dragged, not clicked, and says nothing: not a click target to offer.
    if (interactive && tier === 1 && !role && !name && !text && !isHost && !(ti >= 0) && !(af & A_ON) && !ce &&
        rect && Math.min(w, h) < 10 && !FORM_TAGS.has(tag) && (!nKids || !el.querySelector('svg,img,canvas,input,button,a,[role]'))) {
      interactive = false; tier = 0; flags &= ~8;
    }
    let secret = false;
    if (tag === 'input' || tag === 'textarea' || tag === 'select') {
      secret = isSecret(el, tag);
      if (secret) { flags |= 16; value = null; }
      else if (tag === 'select') {
        const o = el.selectedOptions;
        value = o && o.length ? Array.from(o).map((x) => squash(x.textContent || x.label || '')).join(', ') : '';
      } else {
        const type = (el.getAttribute('type') || '').toLowerCase();
        if (type !== 'checkbox' && type !== 'radio' && type !== 'file' && type !== 'hidden' && type !== 'submit' && type !== 'button' && type !== 'reset' && type !== 'image') value = cut(el.value || '', 500);
        else if (type === 'file') value = el.files && el.files.length ? Array.from(el.files).map((f) => f.name).join(', ') : '';
      }
    } else if (ce) {
      value = cut(squash(el.textContent || ''), 1000);
    } else if (VALUE_ROLES.has(role)) {
      // Range widgets say where they are through ARIA (a slider's thumb has no text of its value).
      const vt = el.getAttribute('aria-valuetext'), vn = el.getAttribute('aria-valuenow');
      if (vt && vt.trim()) value = cut(squash(vt), 200);
      else if (vn !== null && vn.trim()) value = vn.trim();
      else if ((tag === 'progress' && el.hasAttribute('value')) || tag === 'meter') value = String(el.value);
    }
    // States: only the non-default ones.
    let st = tier > 0 || interactive ? statesOf(el, tag, role, (af & A_ARIA) !== 0) : null;
    if (el === focused) (st || (st = {})).focused = true;
    // Attributes kept for skeleton/full output and the analyst.
    let at = null;
    if (keep) for (const a of keep) {
      const v = el.getAttribute(a);
      if (v === null) continue;
      (at || (at = {}))[a] = wf(cut(TEXT_ATTR.has(a) ? v.replace(ZW, '') : v, a === 'href' ? 120 : 200));
    }
    // Scroll containers: depth and whether more content lies below.
    let sc = null;
    let childClip = clip;
    // (overflow does not apply to inline boxes: not read for them)
    if (display !== 'none' && display !== 'contents' && display !== 'inline' && rect) {
      const ov = cs.overflowY, ovx = cs.overflowX;
      const clipsY = ov !== 'visible', clipsX = ovx !== 'visible';
      const isDocScroller = el === DOC_SCROLLER;
      // (an <input> always clips, the browser's own style says so; its scroll moves only the words inside it,
      // which no row holds: not read, not watched)
      if ((clipsY || clipsX) && !isDocScroller && tag !== 'input') memoScr = [el.scrollLeft, el.scrollTop];
      let ownClip = clipsY || clipsX;
      if (el === rootEl) { htmlClips = ownClip; ownClip = false; }      // the viewport's overflow
      else if (el === BODY && !htmlClips) ownClip = false;     // propagated to the viewport
      if (!isDocScroller && ownClip) {
        // Children are clipped to this box (its padding box approximated by the border box).
        const nx = Math.max(clip[0], x), ny = Math.max(clip[1], y);
        const nx2 = Math.min(clip[0] + clip[2], x + w), ny2 = Math.min(clip[1] + clip[3], y + h);
        // [4]: 1 once a clipping box on the way down has no size (a collapsed panel): nothing in it is seen
        const gone = clip[4] === 1 || (clipsX && w < 2) || (clipsY && h < 2) ? 1 : 0;
        childClip = [clipsX ? nx : clip[0], clipsY ? ny : clip[1], clipsX ? Math.max(0, nx2 - nx) : clip[2], clipsY ? Math.max(0, ny2 - ny) : clip[3], gone];
      }
      const scrollableY = (ov === 'auto' || ov === 'scroll' || isDocScroller) && el.scrollHeight > el.clientHeight + 4;
      if (scrollableY && !isDocScroller) {
        const range = el.scrollHeight - el.clientHeight;
        sc = { d: Math.round(100 * el.scrollTop / range), m: el.scrollTop + el.clientHeight < el.scrollHeight - 4, sh: el.scrollHeight, ch: el.clientHeight };
      }
    }
    if (tag === 'iframe' || tag === 'frame') {
      flags |= 256;
      // Content box offset, for stitching the child document into top coordinates.
      let cx = x, cy = y, cw = w, ch = h;
      if (rect) {
        const bl = parseFloat(cs.borderLeftWidth) + parseFloat(cs.paddingLeft);
        const bt = parseFloat(cs.borderTopWidth) + parseFloat(cs.paddingTop);
        cx = x + bl; cy = y + bt; cw = el.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
        ch = el.clientHeight - parseFloat(cs.paddingTop) - parseFloat(cs.paddingBottom);
      }
      const vx = Math.max(cx, clip[0]), vy = Math.max(cy, clip[1]);
      const vx2 = Math.min(cx + cw, clip[0] + clip[2]), vy2 = Math.min(cy + ch, clip[1] + clip[3]);
      memoFr = [cx + OX, cy + OY, cw, ch, [vx - cx, vy - cy, Math.max(0, vx2 - vx), Math.max(0, vy2 - vy)], rendered];
      frames.push([rowIndex].concat(memoFr));
      S.lastFrames.push(el);
    }
    if (tag.indexOf('-') > 0 && !el.shadowRoot && !S.closed.has(el) && !S.noRoot.has(el)) { suspects.push(el); memoSu = true; }
    if (interactive && !name && (tag === 'input' || tag === 'textarea' || tag === 'select' || role === 'textbox' || role === 'combobox' || role === 'checkbox' || role === 'switch' || role === 'radio')) { pendingNames.push([rowIndex, el]); memoPn = true; }
    if (interactive && rendered && ratio > 0) { memoCand = [el, x, y, w, h, clip]; occCandidates.push([rowIndex].concat(memoCand)); }
    // Hidden from a person: rendered (laid out, in the tree), but nobody can see it. Such text and
    // controls never reach the model's payload and are marked in the other formats.
    const ahid = ahidAnc || ariaHidden;
    let bg = bgAnc;
    let hid = 0;
    let fsz = null;   // the font size, once read (a style read costs: read at most once)
    // (the background only matters to this element's own text and to what is inside it: a leaf
    // without text does not read it)
    if (!dead && (text || el.firstElementChild || isHost || tag === 'slot')) {
      if (cs.backgroundImage !== 'none') bg = null;                 // a picture behind: colour unknown
      else {
        const bc = cs.backgroundColor;
        if (bc && bc !== 'rgba(0, 0, 0, 0)' && bc !== 'transparent') bg = bc.indexOf('rgba') === 0 ? null : bc;
      }
    }
    // (aria-hidden is the reason given first; flag 524288 says a person still sees it — it is read —,
    // unlike the visually-hidden copy inside an aria-hidden box)
    if (rendered && (text || interactive || name)) {
      if (transp && !interactive) hid = 2;
      else if (clip[4] === 1) hid = 3;   // inside a box that clips its overflow and has no size
      else if (display !== 'contents' && (w < 2 || h < 2) && (interactive || cs.overflowX !== 'visible' || cs.overflowY !== 'visible' || !text)) hid = 4;
      else if (display !== 'contents' && (x + SX + w <= 0 || y + SY + h <= 0)) hid = 5;
      else if ((text || !interactive) && (fsz = parseFloat(cs.fontSize)) === 0) hid = 6;
      else if (text && !svgEl) {   // (SVG text is painted with its fill, not its colour)
        const fg = cs.color;
        if (fg === 'rgba(0, 0, 0, 0)' || fg === 'transparent') hid = 2;
        else if (bg && sameColour(fg, bg)) hid = 7;
      }
      if (ahid) { if (!hid) flags |= 524288; hid = 1; }
      if (hid) flags |= 2048 | (hid << 12);
    }
    // The words a person reads on a button input are its value (the browser's own word when it has none):
    // its text, even where an aria-label names it otherwise (what it shows is judged as well as its name).
    if (tag === 'input' && !text) {
      const bt = (el.getAttribute('type') || '').toLowerCase();
      if (bt === 'submit' || bt === 'button' || bt === 'reset') {
        text = limitText(squash(el.hasAttribute('value') ? el.value : (bt === 'submit' ? 'Submit' : bt === 'reset' ? 'Reset' : '')), MAXT);
      }
    } else if (interactive && !text && !el.firstElementChild && rendered && tag !== 'input' && tag !== 'select' && tag !== 'textarea') {
      // a control whose only words are CSS generated content (`::before { content: "Delete account" }`):
      // a person reads them on it, whatever its aria-label says (two style reads, for word-less leaves only)
      const g = generatedText(el);
      if (g) text = limitText(g, MAXT);
    }
    // A wrapped inline element (a link over two lines of a paragraph): one box per line.
    let lr = null;
    if (display === 'inline' && rect && ratio > 0 && h > 1.7 * (fsz === null ? parseFloat(cs.fontSize) : fsz)) lr = lineRects(el);
    let extra = 0;
    if (st || at || sc || vbox || lr) {
      extra = {}; if (st) extra.st = st; if (at) extra.a = at; if (sc) extra.sc = sc; if (vbox) extra.vb = vbox; if (lr) extra.lr = lr;
    }
    rows.push([parent, id === undefined ? null : id, tag, role || '', wf(name.length > 250 ? name.slice(0, 250) : name),
      wf(text), value === null ? null : wf(value), flags, tier,
      Math.round(x + OX), Math.round(y + OY), Math.round(w), Math.round(h),
      Math.round(ratio * 100) / 100, extra]);
    const atomicHere = atomicAnc || (interactive && ATOMIC.has(role || ''));
    // (a transformed or contained box is the containing block of the absolutely placed boxes in it;
    // read only where that changes their clip: a scroll area or overflow box lies between)
    const cbHere = pos !== 'static' || (childClip !== posIn && (el.firstElementChild || isHost) && !dead && holdsAbsolute(cs));
    const posElHere = cbHere ? el : posElIn;
    const mm = {
      el: el, cx: ownCx ? [clipIn, posIn, inShadow, parentPtr, atomicAnc, deadAnc, transpAnc, ahidAnc, bgAnc, posElIn] : ctxMemo(C),
      r: rect ? [rect.left, rect.top, rect.width, rect.height] : null,
      b: deadAnc ? 3 : display === 'none' ? 2 : (!rect || display === 'contents' || display === 'inline') ? 0 : 1,
      il: isInl ? 1 : 0, rt: rawT.get(rowIndex) || null, rtn: rawTN.get(rowIndex) || null, cp: null, lst: memoLst, fr: memoFr,
      su: memoSu, pn: memoPn, cand: memoCand, sl: null, scr: memoScr, ctl: null, rem: false, fl: memoFl, pz: memoPz,
    };
    if (tag === 'input' || tag === 'select' || tag === 'textarea') mm.ctl = ctlSig(el);
    mm.rem = memoPn || tag === 'input' || tag === 'select' || tag === 'textarea' || tag === 'meter' || tag === 'progress' ||
      ((tag === 'button' || tag === 'output') && el.id !== '') || (af & A_ALB) !== 0 || labelCtl !== null;
    memo.push(mm);
    if (memoPz) pzRows.push(rowIndex);
    NC.push(0);
    if (pos === 'fixed' || pos === 'sticky') escRows.push([rowIndex, null]);
    else if (pos === 'absolute') escRows.push([rowIndex, posElIn]);
    if (memoScr) scrollers.push([el, memoScr[0], memoScr[1]]);
    if (mm.ctl !== null) controls.push([el, mm.ctl]);
    if (mm.rem) remote.push(el);
    // opaque subtrees (an SVG picture is entered only when it has words or links: a chart's labels)
    if ((tag === 'svg' && (dead || !el.querySelector('text,a'))) || tag === 'iframe' || tag === 'frame' || tag === 'math') return true;
    if (tag === 'slot') slotCtx.set(el, mm.sl = [childClip, cbHere ? childClip : posIn, ptr, atomicHere, dead, transp, ahid, bg, posElHere]);
    if (el.firstElementChild || isHost) pushChildren(el, rowIndex, childClip, cbHere ? childClip : posIn, inShadow > 2 ? inShadow - 2 : inShadow, ptr, atomicHere, dead, transp, cpHere, ahid, bg, posElHere, forced);
    return true;
  }

  // Per walk: set by walkPhase() (the walk runs the parts' phases in order).
  let stack, stackCx, slotCtx, rootEl, PLAN, P, DSUB, DTOUCH, SX, SY, DOC_SCROLLER, BODY, count, maxNodes, htmlClips,
    inl, rawT, rawTN, comp, compRows, cutsScratch, lstOnly, memo, NC, escRows, scrollers, controls, remote, floats,
    newFloat, pzRows, walked, copied, walkedRows, walkedForced, layOf;
  function walkPhase() {
    //   [node, parentRow, clip, posClip, inShadow, parentPointer, atomicAncestor, deadAncestor, transparentAncestor,
    //    composer (see composeText), slotted (1: a light child of a host with an open root, 2: a closed one)]
    // `clip` clips a node in normal flow; `posClip` clips an absolutely positioned node there: the clip
    // inside its nearest positioned ancestor (its containing block), so an overflow:hidden box that
    // is not positioned does not clip it. Fixed nodes (modal dialogs and popovers too) take this
    // frame's viewport. Overflow set on <html>, or on <body> while <html> has none, is the viewport's
    // (CSS overflow propagation: how modal libraries lock scrolling), so it clips nothing by its box.
    // A light child of a shadow host renders where its slot is: clip, visibility, cursor and the
    // control it sits in come from that slot (walked first), and a child no slot takes is not shown.
    stack = [], stackCx = [];
    slotCtx = new Map();
    rootEl = document.documentElement;
    if (!rootEl) return JSON.stringify({ empty: true, url: location.href, title: '', vw: VW, vh: VH });
    PLAN = plan();
    P = PLAN ? I.prev : null;
    DSUB = PLAN ? PLAN.sub : null, DTOUCH = PLAN ? PLAN.touched : null;
    stack.push(rootEl); stackCx.push([-1, C0, C0, 0, false, false, false, false, null, 0, false, WHITE, null, !PLAN, null]);
    SX = window.scrollX, SY = window.scrollY;
    DOC_SCROLLER = document.scrollingElement, BODY = document.body;   // read once, not per element
    count = 0;
    maxNodes = opts.maxNodes || 200000;
    htmlClips = false;       // <html> has its own overflow: <body>'s is then not propagated
    // For text blocks (see composeText): per row, whether it is laid out inline; the raw text of
    // inline rows without element children; and, for rows whose inline content may be composed,
    // where each element child sits in their raw text and which rows those children became.
    inl = [];
    rawT = new Map();
    rawTN = new Map();     // (the same as written, where text-transform changes it: for names)
    comp = new Map();
    compRows = [];
    cutsScratch = [];
    lstOnly = [];          // [row, role, tier]: rows whose only sign of interactivity is a listener or a tab stop
    // Per row, what the next incremental walk needs (index-free, so a copied subtree shares them).
    memo = [];
    NC = [];               // 1: the subtree's layout may depend on boxes outside it (fixed, sticky, absolute)
    escRows = [];          // walked rows positioned against something above them
    scrollers = [], controls = [], remote = [], floats = [];
    newFloat = false;
    pzRows = [];           // rows that may draw a box the walk does not list (a list marker, quotes)
    walked = 0, copied = 0;
    walkedRows = [], walkedForced = [];
    // Flex and grid containers met in this walk (row → 1 flex, 2 grid): their children may be placed out
    // of document order (flag 262144).
    layOf = new Map();
    while (stack.length) {
      const el = stack.pop(), C = stackCx.pop();
      if (!walkOne(el, C)) break;
    }
    // A float that was not there makes the lines of the blocks after it wrap anew: walk it all.
    if (newFloat) return vigilWalk(KEY, Object.assign({}, opts, { full: true, why: 'a floating box appeared' }));
  }
