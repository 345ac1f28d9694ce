// Pass 1 of a snapshot, run in one document (main world) through Runtime.callFunctionOn.
// This file opens the walker (part 1 of 7); the other parts in this folder are the sections of its
// body, joined in order by engine/browser/target.py (WALKER_PARTS). finish.js closes it.
// The source is a factory, evaluated once per document (engine/snapshot/capture.py keeps its result as
// the state's `walk`): helpers and constant tables live at its level, so each is one function object
// across walks and V8 can optimise it to its top tier (closures made anew per walk never got there).
// What one walk holds is a factory-level `let` set by its part's phase function (xxxPhase, run in
// order by vigilWalk in finish.js) and dropped after the reply (release).
// Walks the whole document — open and closed shadow roots included — and returns one JSON
// string: a flat, pre-ordered list of element rows plus page facts. Child frames are not
// entered: each iframe element is listed in `frames` and walked in its own context by Python.
//
// Row layout (keep in sync with engine/snapshot/capture.py):
//   [parent, id, tag, role, name, text, value, flags, tier, x, y, w, h, ratio, extra]
// flags: 1 rendered, 2 occluded, 4 in shadow, 8 interactive, 16 redacted, 32 listener,
//        64 cursor-pointer, 128 focusable, 256 frame owner,
//        512 text block (its text is its whole inline content in reading order, links and code included),
//        1024 folded (inline content of a text block ancestor: its text is already in that block's text),
//        2048 hidden from a person (rendered, but no one can see it), with why in bits 12-14 (HID_WHY:
//             1 aria-hidden, 2 transparent, 3 clipped away, 4 zero-size, 5 off-screen beyond the page,
//             6 font-size 0, 7 the same colour as its background; keep in sync with serialize/hidden.py),
//        32768 inside a closed shadow root (Vigil walks it; Playwright's locators cannot reach it),
//        65536 a child of a shadow root itself (the top of a tree scope; its parent row is the host),
//        131072 lays its children out in another order than the document's (a flex or grid container
//               with a reversed direction, or with a child of 262144): read them by their boxes,
//        262144 placed out of document order by its flex or grid container (`order`, grid placement),
//        524288 hidden from assistive technology only (aria-hidden, with 2048): a person sees it
// tier:  0 structural, 1 non-semantic, 2 semantic
// extra: 0 or {st: states, a: attributes, sc: scroll, ob: occluder id, obd: its description,
//        vb: the visible part of the box [x, y, w, h] when a scroll area or overflow box cuts it,
//        lr: the line boxes [[x, y, w, h], …] of an inline element wrapped over two or more lines}
(function vigilWalker() {
  let KEY, opts;   // this walk's arguments
  const wf = (s) => (s && s.isWellFormed && !s.isWellFormed()) ? s.toWellFormed() : s;
  // Names and texts as a person reads them: zero-width characters and soft hyphens dropped,
  // whitespace collapsed (accname does the same; `get\u200b/pets` is "get/pets").
  const ZW = /[\u00ad\u200b-\u200d\u2060-\u2064\ufeff]/g;
  const squash = (s) => s.replace(ZW, '').replace(/\s+/g, ' ').trim();
  const cut = (s, n) => (s.length > n ? s.slice(0, n) : s);
  // Text the same colour as what is behind it cannot be read: compare computed rgb() colours.
  const WHITE = 'rgb(255, 255, 255)';
  const rgbOf = (c) => { const m = /^rgba?\((\d+), (\d+), (\d+)/.exec(c); return m ? [+m[1], +m[2], +m[3]] : null; };
  // (the pair before is asked again most of the time: text after text in one block; the map holds the others)
  let lastFg = '', lastBg = '', lastSame = false;
  const sameColour = (a, b) => {
    if (a === b) return true;
    if (a === lastFg && b === lastBg) return lastSame;
    const key = a + '|' + b;
    let r = colourPairs.get(key);
    if (r === undefined) {
      const p = rgbOf(a), q = rgbOf(b);
      r = !!(p && q) && Math.abs(p[0] - q[0]) + Math.abs(p[1] - q[1]) + Math.abs(p[2] - q[2]) < 24;
      colourPairs.set(key, r);
    }
    lastFg = a; lastBg = b; lastSame = r;
    return r;
  };

  const IMPLICIT = {
    a: null, area: null, article: 'article', aside: 'complementary', button: 'button',
    datalist: 'listbox', dd: 'definition', details: 'group', dialog: 'dialog', dt: 'term',
    fieldset: 'group', figure: 'figure', footer: null, form: 'form', h1: 'heading', h2: 'heading',
    h3: 'heading', h4: 'heading', h5: 'heading', h6: 'heading', header: null, hr: 'separator',
    iframe: 'iframe', img: null, input: null, li: 'listitem', main: 'main', menu: 'list', meter: 'meter',
    nav: 'navigation', ol: 'list', optgroup: 'group', option: 'option', output: 'status',
    p: 'paragraph', progress: 'progressbar', search: 'search', section: null, select: null,
    summary: 'button', table: 'table', tbody: 'rowgroup', thead: 'rowgroup', tfoot: 'rowgroup',
    td: 'cell', th: 'columnheader', tr: 'row', textarea: 'textbox', ul: 'list', label: null,
    legend: null, caption: 'caption', blockquote: 'blockquote', code: 'code', strong: 'strong',
    em: 'emphasis', time: 'time', mark: 'mark', video: null, audio: null, svg: null, canvas: null,
  };
  const INPUT_ROLE = {
    button: 'button', submit: 'button', reset: 'button', image: 'button', checkbox: 'checkbox',
    radio: 'radio', range: 'slider', number: 'spinbutton', search: 'searchbox', email: 'textbox',
    tel: 'textbox', text: 'textbox', url: 'textbox', password: 'textbox', '': 'textbox',
    date: 'textbox', 'datetime-local': 'textbox', month: 'textbox', time: 'textbox', week: 'textbox',
    color: 'button', file: 'button', hidden: null,
  };
  const ARIA_ROLES = new Set(('alert alertdialog application article banner blockquote button caption cell checkbox code ' +
    'columnheader combobox complementary contentinfo definition deletion dialog directory document emphasis feed figure ' +
    'form generic grid gridcell group heading img insertion link list listbox listitem log main mark marquee math menu ' +
    'menubar menuitem menuitemcheckbox menuitemradio meter navigation none note option paragraph presentation progressbar ' +
    'radio radiogroup region row rowgroup rowheader scrollbar search searchbox separator slider spinbutton status ' +
    'strong subscript superscript switch tab table tablist tabpanel term textbox time timer toolbar tooltip tree ' +
    'treegrid treeitem').split(' '));
  const INTERACTIVE = new Set(['button', 'link', 'textbox', 'searchbox', 'checkbox', 'radio', 'combobox', 'listbox',
    'option', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab', 'switch', 'slider', 'spinbutton', 'treeitem',
    'gridcell', 'scrollbar']);
  const NAME_FROM_CONTENT = new Set(['button', 'link', 'heading', 'cell', 'columnheader', 'rowheader', 'option', 'tab',
    'menuitem', 'menuitemcheckbox', 'menuitemradio', 'checkbox', 'radio', 'switch', 'treeitem', 'tooltip', 'gridcell',
    'row', 'caption', 'term']);
  const ATOMIC = new Set(['button', 'link', 'menuitem', 'tab', 'option', 'treeitem', 'checkbox', 'radio', 'switch',
    'slider', 'spinbutton', 'textbox', 'searchbox', 'combobox']);
  const INLINE = new Set(['span', 'b', 'i', 'em', 'strong', 'a', 'small', 'label', 'code', 'sup', 'sub', 'mark',
    'abbr', 'img', 'u', 's', 'q', 'cite', 'kbd', 'var', 'time', 'data', 'bdi', 'bdo', 'font', 'slot', 'svg', 'wbr',
    'dfn', 'samp', 'ins', 'del', 'big', 'tt']);
  // (and SVG's parts that are never drawn where they stand: definitions, symbols, masks, their texts)
  const SKIP = new Set(['script', 'style', 'noscript', 'template', 'head', 'meta', 'link', 'title', 'base',
    'defs', 'symbol', 'clipPath', 'mask', 'pattern', 'marker', 'linearGradient', 'radialGradient', 'filter', 'desc',
    'metadata']);
  const SVG_NS = 'http://www.w3.org/2000/svg';
  // Attributes kept for skeleton/full output and the analyst. Not class, style or src: they are
  // most of the bytes on real pages and none of the meaning.
  const KEEP_ATTR = new Set(['id', 'href', 'type', 'name', 'placeholder', 'title', 'alt', 'aria-label', 'data-testid',
    'data-test', 'data-cy', 'for', 'action', 'method', 'autocomplete', 'tabindex', 'contenteditable',
    'min', 'max', 'step', 'maxlength', 'pattern', 'target', 'role',
    // DELETE semantics on links and buttons (Rails/Turbo, htmx, formmethod): a destructive step asks
    'data-method', 'data-turbo-method', 'formmethod', 'hx-delete', 'data-hx-delete',
    // a link that downloads asks under auto-safe (engine/loop/policy.py), whatever its address
    'download',
    // what names and describes an element is judged for risk on its own (engine/loop/risk.py)
    'aria-labelledby', 'aria-describedby',
    // a button outside its form still submits it (form=ID), to where it says (formaction)
    'form', 'formaction',
    // an SVG link's address
    'xlink:href']);
  const FORM_TAGS = new Set(['input', 'select', 'textarea', 'button']);
  const TEXT_ATTR = new Set(['aria-label', 'title', 'alt', 'placeholder']);   // read as words: no invisible characters
  // Structural roles an element gets from its tag that a page may still make a click target.
  const ITEM_ROLES = new Set(['listitem', 'cell', 'row', 'term', 'definition']);
  const LIST_TAGS = new Set(['ul', 'ol', 'menu', 'dl', 'tbody', 'thead', 'tfoot', 'table']);
  const VALUE_ROLES = new Set(['slider', 'spinbutton', 'progressbar', 'meter', 'scrollbar']);
  const TEXT_ROLES = new Set(['', 'generic', 'code', 'strong', 'emphasis', 'mark', 'time', 'subscript', 'superscript',
    'deletion', 'insertion', 'img', 'presentation', 'none', 'link']);
  const BLOCK_ROLES = new Set(['', 'generic', 'paragraph', 'listitem', 'cell', 'gridcell', 'columnheader', 'rowheader',
    'heading', 'caption', 'term', 'definition', 'blockquote', 'code', 'note', 'tooltip', 'status', 'alert', 'log',
    'option', 'figure', 'article', 'emphasis', 'strong', 'mark', 'time', 'insertion', 'deletion']);

  const limitText = (s, n) => (s.length > n ? s.slice(0, n) + '… (' + (s.length - n) + ' more characters)' : s);
  // Preformatted text keeps its lines and their indentation; trailing spaces and runs of blank
  // lines go.
  const preText = (s) => s.replace(ZW, '').replace(/\r\n?/g, '\n').replace(/[ \t\f\v\u00a0]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n').replace(/^\n+|\s+$/g, '');
  // Whether this element's name comes from its content (so a composed text can replace it).
  const nameFromContent = (el, role) => NAME_FROM_CONTENT.has(role || '') && !el.hasAttribute('aria-label') &&
    !el.hasAttribute('aria-labelledby') && !FORM_TAGS.has(el.localName);
  // React's and Vue's root containers carry the delegated listeners of the whole app.
  const isAppRoot = (el) => {
    if (el.__vue_app__ || el._reactRootContainer) return true;
    const ks = Object.keys(el);
    for (let i = 0; i < ks.length; i++) if (ks[i].startsWith('__reactContainer$') || ks[i].startsWith('_reactListening')) return true;
    return false;
  };

  const rootOf = (el) => el.getRootNode();
  // Whether an absolutely placed box's `clip` / `clip-path` cuts it to (almost) nothing.
  const cutAway = (cs) => {
    const cl = cs.clip;
    if (cl && cl !== 'auto') {
      const v = cl.match(/-?[\d.]+px/g);
      if (v && v.length === 4 && (parseFloat(v[1]) - parseFloat(v[3]) < 2 || parseFloat(v[2]) - parseFloat(v[0]) < 2)) return true;
    }
    const cp = cs.clipPath;
    return cp !== 'none' && /^inset\((50|100)%\)$/.test(cp);
  };
  // Whether a box that is not positioned is still the containing block of absolutely placed boxes
  // inside it (a transform, a filter, a perspective, paint or layout containment, will-change of those).
  const holdsAbsolute = (cs) => cs.transform !== 'none' || cs.filter !== 'none' || cs.perspective !== 'none' ||
    (cs.contain !== 'none' && /paint|layout|strict|content/.test(cs.contain)) ||
    (cs.willChange !== 'auto' && /transform|filter|perspective/.test(cs.willChange));
  // The line boxes of a wrapped inline element, in top coordinates (two or more lines, else null).
  const lineRects = (el) => {
    const cr = el.getClientRects();
    if (cr.length < 2) return null;
    // (the fragments of one line — text around an inline child — make one line box)
    const lines = [];
    let cur = null;
    for (let i = 0; i < cr.length && lines.length < 20; i++) {
      const r = cr[i];
      if (r.width < 1 || r.height < 1) continue;
      if (cur && r.top < cur[3] && r.bottom > cur[1]) {
        cur[0] = Math.min(cur[0], r.left); cur[1] = Math.min(cur[1], r.top);
        cur[2] = Math.max(cur[2], r.right); cur[3] = Math.max(cur[3], r.bottom);
      } else lines.push(cur = [r.left, r.top, r.right, r.bottom]);
    }
    if (lines.length < 2) return null;
    return lines.map((l) => [Math.round(l[0] + OX), Math.round(l[1] + OY), Math.round(l[2] - l[0]), Math.round(l[3] - l[1])]);
  };
  // Newer pseudo-classes throw on older Chromium builds: treat that as "does not match".
  const safeMatches = (el, sel) => { try { return el.matches(sel); } catch (e) { return false; } };
  const byIdIn = (el, id) => {
    const r = rootOf(el);
    return (r.getElementById ? r.getElementById(id) : null) || document.getElementById(id);
  };

  // Per walk: set by headPhase() (the walk runs the parts' phases in order).
  let t0, S, prefix, OX, OY, VW, VH, C0, MAXT, colourPairs, TB_MAX, ctxCache, rows, frames, fresh, suspects,
    pendingNames, occCandidates, focused;
  function headPhase() {
    t0 = performance.now();
    S = window[KEY];
    if (!S) throw new Error('vigil state missing');
    opts = opts || {};
    prefix = opts.prefix || '';
    OX = opts.ox || 0, OY = opts.oy || 0;          // offset of this document in top coordinates
    VW = window.innerWidth, VH = window.innerHeight;
    // Clip of this frame's viewport, in local coordinates (parent frames may hide part of it).
    C0 = opts.clip ? opts.clip : [0, 0, VW, VH];
    MAXT = opts.maxText || 200;
    colourPairs = new Map();   // a page has few colours: each pair is compared once
    TB_MAX = opts.maxBlockText || 2000;   // text of a text block (a paragraph, a code block)

    S.lastFrames = [];
    ctxCache = new Map();
    rows = [];
    frames = [];
    fresh = [];      // [rowIndex, element] for elements seen the first time
    suspects = [];   // custom elements that may hide a closed shadow root we do not know yet
    pendingNames = []; // interactive, unnamed form controls: label hunting after the walk
    occCandidates = [];
    // Styles and layout brought up to date first: a focused element that became hidden loses focus then.
    if (document.documentElement) document.documentElement.getBoundingClientRect();
    focused = document.activeElement;
    while (focused && focused.shadowRoot && focused.shadowRoot.activeElement) focused = focused.shadowRoot.activeElement;
    if (focused && S.closed.has(focused)) { const a = S.closed.get(focused).activeElement; if (a) focused = a; }
  }
