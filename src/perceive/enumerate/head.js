// seamark's element enumerator: one function, whose body is kept in the files
// of this folder by concern and joined in this order into the one script the
// page is given (registry.rs: head, names, walk, keep, geometry, occlusion,
// describe, text). Called on a root (a document, or a closed
// shadow root) in a frame's main world, where the page's own listeners are
// visible to `getEventListeners`. It only reads: no attributes, no globals, no
// focus, scroll or selection change.
//
// `reg` is the document's node registry, an object only seamark holds a handle
// to (the page cannot reach it): `map` numbers every node ever reported, for
// the document's life; `next` is the next number; `nodes` holds each numbered
// node still in the document, by number, for the caller to ask which node a
// number is (frames.rs, `IDENTIFY_JS`), and `swept` when it last let go of
// those that left (see `numberOf`); `listeners` is the DevTools
// command line API's `getEventListeners`, captured when the registry was made;
// `pause` lets the page's event loop run (null where it never would);
// `sheets` maps the URL of a stylesheet the page may not read (cross-origin)
// to its rules, parsed from the text seamark fetched for it (null when that
// failed); `changes` counts what happens on the page (registry.rs); `rules`
// and `memo` are kept here by the enumerator: the position rules of the
// stylesheets it last read (see `positionRules`), and the work on the whole
// document it may keep while nothing happens.
//
// Returns { meta: JSON string, nodes: [Node] }. `meta.els[k].n` (and `proxy`,
// `cover.n`) are registry numbers: no node identity goes on the wire here
// (deep-serializing one costs the page 20-40 µs); the caller asks for those of
// the elements a command names. `nodes` holds the custom elements `meta.hosts`
// indexes, whose closed shadow roots the caller learns from their deep
// serialization.
// `meta.unread` lists the stylesheets it could not read and has no text for;
// `meta.reused`, how many parts of the work it kept from its last look.
(async function (root, opts, reg) {
  // enumerate/head.js: the opening: limits, the viewport, pausing, the role sets, styles and the composed tree.
  const MAX_NAME = opts.maxName || 80;
  const MAX_OPTIONS = opts.maxOptions || 20;
  const MAX_ELEMENTS = opts.maxElements || 5000;
  const MAX_OFFSCREEN = opts.maxOffscreen === undefined ? 100 : opts.maxOffscreen;
  // Most unreadable stylesheets reported per call, and per document.
  const MAX_UNREAD = 16, MAX_SHEETS = 256;
  const win = (root.ownerDocument || root).defaultView || window;
  const doc = root.ownerDocument || root;
  const vw = win.innerWidth, vh = win.innerHeight;
  const sx = win.scrollX, sy = win.scrollY;
  const se = doc.scrollingElement || doc.documentElement;
  const dw = Math.max(se ? se.scrollWidth : 0, vw), dh = Math.max(se ? se.scrollHeight : 0, vh);
  const listeners = typeof reg.listeners === 'function' ? reg.listeners : null;
  // A screenshot taken meanwhile needs the main thread for a moment: every
  // `YIELD_MS` the enumerator lets the event loop run (`reg.pause`).
  const YIELD_MS = opts.yieldMs || 0;
  let ranSince = performance.now();
  const pause = async () => {
    if (!YIELD_MS || typeof reg.pause !== 'function' || performance.now() - ranSince < YIELD_MS) return;
    await reg.pause();
    ranSince = performance.now();
  };
  const WIDGET_ROLES = new Set(['button', 'link', 'checkbox', 'radio', 'switch', 'tab', 'menuitem',
    'menuitemcheckbox', 'menuitemradio', 'option', 'combobox', 'listbox', 'slider', 'spinbutton',
    'textbox', 'searchbox', 'treeitem', 'scrollbar', 'tree', 'menu', 'menubar',
    'radiogroup', 'tablist']);
  // Composite widgets that group controls: where the controls inside are
  // listed, the group is not one more (an unlabelled menubar is named by all
  // its items' text). A listbox stays: SELECT picks its options.
  const CONTAINER_ROLES = new Set(['menubar', 'menu', 'tablist', 'radiogroup', 'tree']);
  // Roles a click acts on. Drawn around one link or button of the same name
  // (a menu item or a tab made of an <li> around an <a>), they are one
  // control: listed once, as the inner element with the outer's role and states.
  const CLICK_ROLES = new Set(['menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab', 'option',
    'treeitem', 'button', 'link', 'switch', 'checkbox', 'radio']);
  // A grid cell is not among them: a data grid's cells (github's file list)
  // are a table's, and only one that takes focus or clicks itself is a
  // control (a day in a date picker), as for any element.
  const NATIVE = 'a[href],area[href],button,input:not([type=hidden]),select,textarea,summary,' +
    '[contenteditable]:not([contenteditable=false]),[role],[tabindex],[onclick],[onmousedown],' +
    '[onpointerdown],iframe,frame';

  const styleCache = new Map();
  const style = (el) => {
    let s = styleCache.get(el);
    if (!s) { s = win.getComputedStyle(el); styleCache.set(el, s); }
    return s;
  };
  // Not shown: not laid out, or laid out and not painted.
  const unseen = (st) => st.display === 'none' || st.visibility === 'hidden';
  // The composed-tree parent: crosses shadow boundaries to the host.
  const parentOf = (el) => {
    if (el.parentElement) return el.parentElement;
    const r = el.parentNode;
    return r && r.host ? r.host : null;
  };
  const containsComposed = (outer, inner) => {
    for (let n = inner; n; n = parentOf(n)) if (n === outer) return true;
    return false;
  };
  const clean = (s) => (s || '').replace(/\s+/g, ' ').trim();
  const cut = (s, n) => (s.length > n ? s.slice(0, n - 1) + '…' : s);
