// Installed into every document of a controlled tab (main world), before page scripts run
// when possible. Holds Vigil's per-document state under a non-enumerable, per-launch key:
//   ids/byId/info : stable node IDs (element identity → ID, ID → WeakRef, ID → match key)
//   closed        : closed shadow roots, recorded by wrapping Element.prototype.attachShadow
//   listeners     : elements given click-like listeners through addEventListener
//   ver           : bumped on any mutation / input / scroll, so a cached snapshot can be reused
// It is idempotent: running it twice in one document changes nothing.
(function install(KEY) {
  if (Object.prototype.hasOwnProperty.call(window, KEY)) return;
  const state = {
    ids: new WeakMap(), byId: new Map(), info: new Map(), next: 1,
    closed: new WeakMap(), noRoot: new WeakSet(), listeners: new WeakMap(),
    ver: 0, lastFrames: [], suspects: [], events: [],
  };
  Object.defineProperty(window, KEY, { value: state, enumerable: false, configurable: false, writable: false });
  const CLICKY = new Set(['click', 'mousedown', 'mouseup', 'pointerdown', 'pointerup', 'dblclick', 'touchstart']);
  const disguise = (fn, native) => {
    try { Object.defineProperty(fn, 'toString', { value: () => Function.prototype.toString.call(native), enumerable: false }); } catch (e) {}
    return fn;
  };
  const origAttach = Element.prototype.attachShadow;
  if (origAttach) {
    const wrapped = function attachShadow(init) {
      const root = origAttach.call(this, init);
      if (init && init.mode === 'closed') state.closed.set(this, root);
      return root;
    };
    Element.prototype.attachShadow = disguise(wrapped, origAttach);
  }
  const proto = EventTarget.prototype;
  const origAdd = proto.addEventListener, origRemove = proto.removeEventListener;
  proto.addEventListener = disguise(function addEventListener(type, fn, opts) {
    if (CLICKY.has(type) && this instanceof Element) state.listeners.set(this, (state.listeners.get(this) || 0) + 1);
    return origAdd.call(this, type, fn, opts);
  }, origAdd);
  proto.removeEventListener = disguise(function removeEventListener(type, fn, opts) {
    if (CLICKY.has(type) && this instanceof Element && state.listeners.has(this)) {
      const n = state.listeners.get(this) - 1;
      if (n <= 0) state.listeners.delete(this); else state.listeners.set(this, n);
    }
    return origRemove.call(this, type, fn, opts);
  }, origRemove);
  const bump = () => { state.ver++; };
  try {
    new MutationObserver(bump).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  } catch (e) {}
  for (const t of ['input', 'change', 'scroll', 'focusin', 'focusout', 'resize']) {
    try { origAdd.call(window, t, bump, { capture: true, passive: true }); } catch (e) {}
  }
})
