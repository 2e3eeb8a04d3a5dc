// seamark's element enumerator. Called on a root (a document, or a closed
// shadow root) in a frame's main world, where the page's own listeners are
// visible to `getEventListeners`. It only reads: no attributes, no globals, no
// focus, scroll or selection change.
//
// `reg` is the document's node registry, an object only seamark holds a handle
// to (the page cannot reach it): `map` numbers every node ever reported, for
// the document's life; `next` is the next number; `listeners` is the DevTools
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
// `cover.n`) are registry numbers. The caller knows the backendNodeId of every
// number below `opts.known`; `nodes` holds the nodes numbered `meta.ids` (the
// others reported), then the custom elements `meta.hosts` indexes, whose
// closed shadow roots the caller learns from the deep serialization of `nodes`.
// `meta.unread` lists the stylesheets it could not read and has no text for;
// `meta.reused`, how many parts of the work it kept from its last look.
(async function (root, opts, reg) {
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
  const KNOWN = opts.known || 0;
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

  // Visible text of a subtree, bounded, skipping what is never shown as text.
  const SKIP_TEXT = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'SELECT', 'TEXTAREA', 'OPTION']);
  const textOf = (node, limit) => {
    let out = '';
    const walk = (n) => {
      if (out.length >= limit) return;
      if (n.nodeType === 3) { out += n.data; return; }
      if (n.nodeType !== 1) return;
      if (SKIP_TEXT.has(n.tagName) || n.hidden || n.getAttribute('aria-hidden') === 'true') return;
      // What is not rendered is not part of the name (reddit's "Leave", shown
      // only on hover, made "JoinedLeave"), and a box of its own is a word of
      // its own ("average" and "Read more" ran together).
      let apart = n.tagName === 'BR';
      if (n !== node) {
        const st = style(n);
        if (unseen(st)) return;
        if (!st.display.startsWith('inline') && st.display !== 'contents') { apart = true; out += ' '; }
      }
      if (n.tagName === 'IMG' || (n.tagName === 'INPUT' && n.type === 'image')) { out += ' ' + (n.getAttribute('alt') || '') + ' '; return; }
      if (n.tagName === 'INPUT') { if (['submit', 'button', 'reset'].includes(n.type)) out += ' ' + n.value + ' '; return; }
      const al = n !== node && n.getAttribute('aria-label');
      if (al) { out += ' ' + al + ' '; return; }
      if (n.tagName === 'svg' || n.tagName === 'SVG') {
        const t = n.querySelector('title');
        if (t) out += ' ' + t.textContent + ' ';
        return;
      }
      const kids = n.shadowRoot ? n.shadowRoot.childNodes : n.childNodes;
      for (const c of kids) walk(c);
      if (apart) out += ' ';
    };
    walk(node);
    return clean(out);
  };
  const byIds = (el, ids) => {
    const r = el.getRootNode();
    return clean(ids.split(/\s+/).map((id) => {
      const t = r.getElementById ? r.getElementById(id) : doc.getElementById(id);
      return t ? textOf(t, 200) : '';
    }).join(' '));
  };

  const roleOf = (el) => {
    const explicit = (el.getAttribute('role') || '').trim().split(/\s+/)[0];
    if (explicit && explicit !== 'presentation' && explicit !== 'none' && explicit !== 'generic') return explicit;
    const tag = el.tagName.toLowerCase();
    switch (tag) {
      case 'a': case 'area': return el.hasAttribute('href') ? 'link' : '';
      case 'button': return 'button';
      case 'select': return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
      case 'textarea': return 'textbox';
      case 'summary': return 'button';
      case 'iframe': case 'frame': return 'iframe';
      case 'input': {
        const t = el.type;
        if (['button', 'submit', 'reset', 'image'].includes(t)) return 'button';
        if (t === 'checkbox') return 'checkbox';
        if (t === 'radio') return 'radio';
        if (t === 'range') return 'slider';
        if (t === 'number') return 'spinbutton';
        if (t === 'search') return 'searchbox';
        if (t === 'file') return 'file';
        if (t === 'color') return 'button';
        return 'textbox';
      }
    }
    if (el.isContentEditable) return 'textbox';
    return '';
  };

  const nameOf = (el, role) => {
    const lb = el.getAttribute('aria-labelledby');
    if (lb) { const t = byIds(el, lb); if (t) return t; }
    const al = clean(el.getAttribute('aria-label'));
    if (al) return al;
    const tag = el.tagName;
    if (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA') {
      if (tag === 'INPUT' && ['submit', 'button', 'reset'].includes(el.type)) {
        return clean(el.value) || (el.type === 'submit' ? 'Submit' : el.type === 'reset' ? 'Reset' : '');
      }
      if (tag === 'INPUT' && el.type === 'image') return clean(el.getAttribute('alt')) || clean(el.title) || 'Submit';
      const labels = labelsOf(el).map((l) => textOf(l, 200)).join(' ');
      if (clean(labels)) return clean(labels);
      return clean(el.title) || clean(el.getAttribute('placeholder')) || clean(el.getAttribute('aria-placeholder')) || '';
    }
    if (tag === 'IFRAME' || tag === 'FRAME') return clean(el.title) || clean(el.getAttribute('name'));
    if (tag === 'IMG') return clean(el.getAttribute('alt')) || clean(el.title);
    const text = textOf(el, 300);
    if (text) return text;
    return clean(el.title) || clean(el.getAttribute('placeholder')) || clean(el.getAttribute('aria-placeholder')) ||
      clean(el.getAttribute('alt')) || '';
  };

  // Why an element is a candidate: strong (native control, widget role, editable)
  // or weak (tabindex, listener, cursor:pointer); weak ones yield to what they contain.
  // An editing host has the attribute, unless the whole document is editable.
  const designMode = doc.designMode === 'on';
  // The editing hosts the walk met (for the page text, which leaves out what
  // is typed into them).
  const editingHosts = [];
  const strength = (el) => {
    const tag = el.tagName;
    if (tag === 'A' || tag === 'AREA') return el.hasAttribute('href') ? 2 : 0;
    if (tag === 'BUTTON' || tag === 'SELECT' || tag === 'TEXTAREA' || tag === 'SUMMARY') return 2;
    if (tag === 'INPUT') return el.type === 'hidden' ? 0 : 2;
    if (tag === 'IFRAME' || tag === 'FRAME') return 0;
    // Attribute checks first: most elements have neither, and reading
    // isContentEditable costs more than asking for an attribute.
    const role = el.getAttribute('role');
    if (role !== null && WIDGET_ROLES.has(role.trim().split(/\s+/)[0])) return 2;
    if ((designMode || el.hasAttribute('contenteditable')) && el.isContentEditable &&
      !(parentOf(el) && parentOf(el).isContentEditable)) {
      if (el.hasAttribute('contenteditable')) editingHosts.push(el);
      return 2;
    }
    const ti = el.getAttribute('tabindex');
    if (ti !== null && parseInt(ti, 10) >= 0) return 1;
    if (el.hasAttribute('onclick') || el.hasAttribute('onmousedown') || el.hasAttribute('onpointerdown')) return 1;
    return 0;
  };
  const hasListener = (el) => {
    if (!listeners) return false;
    let l;
    try { l = listeners(el); } catch (e) { return false; }
    return !!(l && (l.click || l.mousedown || l.pointerdown));
  };

  // Collect elements of this root and of open shadow roots inside it; remember
  // hosts whose shadow root we cannot see (closed) for the caller to probe.
  const found = [];
  const hosts = [];
  // Never rendered as content, so never a control or a container of one.
  const SKIP_SUBTREE = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'META', 'LINK']);
  // Depth-first over the light tree and open shadow roots. Inside a strong
  // control, weak candidates would be dropped anyway, so their styles and
  // listeners are not looked at; a display:none subtree is not entered.
  // Past MAX_ELEMENTS candidates, only native controls and widgets within a
  // screen of the viewport are still taken (no styles, no listeners): what is
  // on screen must not depend on how many controls come before it in the
  // document (scrolled to the bottom of a long feed, the first thousands
  // filled the cap and the screen came out empty).
  let capped = false;
  // Has a box, and it lies within a screen of the viewport.
  const withinScreen = (r) => r.bottom > -vh && r.top < 2 * vh && r.right > -vw && r.left < 2 * vw;
  const nearScreen = (el) => {
    const r = el.getBoundingClientRect();
    return (r.width > 0 || r.height > 0) && withinScreen(r);
  };
  // What the walk learns on its way back up: a weak candidate that holds
  // another candidate is a wrapper or a delegation container, and the control
  // inside is the one to act on; a weak one inside a strong control (a span
  // with a listener in a button) gives way too. A strong control inside a
  // strong control (a button in a link) stays.
  const holdsCandidate = new Set();
  const inStrong = new Set();
  // Groups (CONTAINER_ROLES) that hold a strong candidate, and how many
  // strong candidates were found so far (to tell).
  const groups = new Set();
  let strongFound = 0;
  // Far parts. On a long page most of the document lies screens away, and
  // only the offscreen candidates nearest the viewport are kept: a subtree
  // whose box lies more than FAR screens beyond every edge of the viewport is
  // not walked (on a feed 64 screens long, nine in ten of the styles the walk
  // would read). Only in a document's light tree, and only where its box
  // bounds what it draws: not around an element that is fixed, absolutely
  // positioned against an element outside it, in the top layer or anchored
  // (`escapes`), nor where content overflows the box towards the viewport. A
  // transform, relative offset or negative margin that carries content more
  // than FAR screens is not followed.
  const FAR = opts.farScreens || 0;
  const band = { top: -FAR * vh, bottom: (FAR + 1) * vh, left: -FAR * vw, right: (FAR + 1) * vw };
  const beyond = (r, bottom, right) => bottom < band.top || r.top > band.bottom || right < band.left || r.left > band.right;
  const withinBand = (r) => r.top >= band.top && r.bottom <= band.bottom && r.left >= band.left && r.right <= band.right;
  // Checking where parts lie costs a few boxes per part: worth it only where
  // the document reaches at least two more screens past the band.
  const cullable = FAR > 0 && root.nodeType === 9 &&
    (-sy < band.top - 2 * vh || dh - sy > band.bottom + 2 * vh || -sx < band.left - 2 * vw || dw - sx > band.right + 2 * vw);
  // The elements a far box does not bound: every ancestor of a fixed element
  // (or of one in the top layer: dialogs, popovers, the fullscreen element),
  // and of an absolutely positioned one up to its containing block. Which
  // elements may be positioned so comes from the style rules that say so (a
  // pseudo-element's rule counts for its owner) and from inline styles; null
  // (walk everything) when a stylesheet cannot be read (cross-origin, and
  // seamark has not got its text yet) or a rule cannot be matched from the
  // document (nested, scoped).
  const PSEUDO_ELEMENT = /::?(?:before|after|first-line|first-letter)\b|::[\w-]+(?:\([^)]*\))?/gi;
  // The rules, read again only when the stylesheets change (one more sheet,
  // one less, or a rule inserted or deleted at the top of one): reading a
  // thousand rules costs a millisecond.
  // A cross-origin sheet's rules come from its text, which seamark fetches
  // when told of it (`meta.unread`); until then it cannot be read.
  const unread = new Set();
  const rulesOf = (sh) => {
    try { return sh.cssRules; } catch (e) { /* cross-origin */ }
    const given = reg.sheets instanceof Map && sh.href ? reg.sheets.get(sh.href) : undefined;
    if (given === undefined && sh.href && unread.size < MAX_UNREAD && reg.sheets.size < MAX_SHEETS) unread.add(String(sh.href));
    return given || null;
  };
  // Compared with the stylesheets once per look: the memo's key, the far
  // parts and the pseudo-element layers all ask.
  let lookRules;
  const positionRules = () => lookRules || (lookRules = readPositionRules());
  const readPositionRules = () => {
    const sheets = [...doc.styleSheets, ...(doc.adoptedStyleSheets || [])];
    const sizes = sheets.map((sh) => { const r = rulesOf(sh); return r ? r.length : -1; });
    const known = reg.rules;
    if (known && known.sheets.length === sheets.length &&
      known.sheets.every((sh, i) => sh === sheets[i] && known.sizes[i] === sizes[i])) return known;
    const fixed = [], absolute = [], owners = [];
    let readable = !sizes.includes(-1);
    const nested = (r) => {
      for (let a = r.parentRule; a; a = a.parentRule) {
        if (a.selectorText !== undefined || (typeof CSSScopeRule !== 'undefined' && a instanceof CSSScopeRule)) return true;
      }
      return false;
    };
    const scan = (rules) => {
      for (const r of rules) {
        if (r.styleSheet) { const inner = rulesOf(r.styleSheet); if (inner) scan(inner); else readable = false; }
        if (r.cssRules) scan(r.cssRules);
        if (r.selectorText === undefined || !r.style) continue;
        const pos = r.style.getPropertyValue('position');
        if (!pos || pos === 'static' || pos === 'relative' || pos === 'sticky') continue;
        if (nested(r)) { readable = false; continue; }
        const sel = r.selectorText.replace(PSEUDO_ELEMENT, '');
        // A pseudo-element or a shadow part is placed from inside its owner,
        // which is kept walking too. Anchored or not plainly absolute: placed
        // anywhere, like a fixed one.
        if (sel !== r.selectorText) { owners.push(sel); fixed.push(sel); }
        else (pos === 'absolute' && !r.style.cssText.includes('anchor') ? absolute : fixed).push(sel);
      }
    };
    if (readable) for (const sh of sheets) scan(rulesOf(sh));
    reg.rules = { sheets, sizes, readable, fixed: fixed.join(','), absolute: absolute.join(','), owners: owners.join(',') };
    return reg.rules;
  };
  const escapesOf = () => {
    const rules = positionRules();
    if (!rules.readable) return null;
    const TOP_LAYER = 'dialog,[popover]';
    // One pass over the document for every kind; each element found is then
    // told apart by its own few matches.
    let all;
    try {
      all = doc.querySelectorAll([rules.fixed, rules.absolute, TOP_LAYER, '[style*="position" i]'].filter(Boolean).join(','));
    } catch (e) { return null; }
    const keep = new Set();
    const mark = (el, until) => {
      for (let a = parentOf(el); a && a !== until; a = parentOf(a)) keep.add(a);
    };
    for (const el of all) {
      const inline = el.style.position;
      if (rules.owners && el.matches(rules.owners)) keep.add(el);
      if (inline === 'fixed' || el.matches(TOP_LAYER) || (rules.fixed && el.matches(rules.fixed))) mark(el, null);
      else if (inline === 'absolute' || (rules.absolute && el.matches(rules.absolute))) {
        // Its containing block, or the nearest table cell: a table's part is
        // not the containing block, and then the whole way up is kept.
        const cb = el.offsetParent;
        mark(el, cb && !/^(TD|TH|TABLE)$/.test(cb.tagName) ? cb : null);
      }
    }
    if (doc.fullscreenElement) mark(doc.fullscreenElement, null);
    return keep;
  };
  let escapes;
  let farParts = 0;
  const placeOf = (el) => {
    const r = el.getBoundingClientRect();
    // A box without area bounds nothing (display: contents, a wrapper of
    // floats or of positioned children).
    if (r.width === 0 || r.height === 0) return { wide: true };
    // What overflows the box (towards the bottom and the right, where
    // overflow can be scrolled to) counts as its own; it is read only where
    // it could change the answer (a box below or right of the band overflows
    // away from it; one reaching out of the band is wide anyway).
    const past = r.top > band.bottom || r.left > band.right;
    if (!past) {
      if (!beyond(r, r.bottom, r.right) && !withinBand(r)) return { wide: true };
      const bottom = r.top + Math.max(r.height, el.scrollHeight), right = r.left + Math.max(r.width, el.scrollWidth);
      if (!beyond(r, bottom, right)) return { wide: !withinBand({ top: r.top, bottom, left: r.left, right }) };
    }
    if (escapes === undefined) escapes = memoized('escapes', escapesOf);
    return { wide: true, cull: !!escapes && !escapes.has(el) };
  };
  // `parentCursor` is the composed parent's cursor when the walk read it;
  // `wide`, whether the parent's box reaches beyond the band (or is unknown),
  // so that its children's may lie beyond it. Returns whether the subtree
  // holds a candidate.
  const visit = (parent, insideStrong, parentCursor, wide) => {
    let holds = false;
    for (let el = parent.firstElementChild; el; el = el.nextElementSibling) {
      const tag = el.tagName;
      if (SKIP_SUBTREE.has(tag)) continue;
      const place = wide && (el.firstElementChild || el.shadowRoot) ? placeOf(el) : { wide: false };
      const s0 = strength(el);
      let s = s0;
      let cursor, askListeners = false;
      if (place.cull) {
        // Far away: a strong control stays (it is examined by distance), a
        // weak one may be the wrapper of what is not walked, and goes. What is
        // not walked may hold candidates: a weak element around it is taken
        // for a wrapper.
        farParts++;
        if (s0 === 2 && found.length < MAX_ELEMENTS) { found.push({ el, s: 2 }); strongFound++; }
        holds = true;
        continue;
      }
      if (found.length >= MAX_ELEMENTS) {
        capped = true;
        s = s0 === 2 && nearScreen(el) ? 2 : 0;
      } else if (s === 0 && !insideStrong && tag !== 'HTML' && tag !== 'BODY') {
        // A frame's style is read for the layers only.
        const st = style(el);
        if (tag !== 'IFRAME' && tag !== 'FRAME') {
          if (st.display === 'none') continue;
          cursor = st.cursor;
          if (cursor === 'pointer') {
            const p = parentCursor === undefined ? parentOf(el) : null;
            if ((p ? style(p).cursor : parentCursor) !== 'pointer') s = 1;
          }
          askListeners = s === 0;
        }
      }
      if (s > 0) {
        found.push({ el, s });
        if (s === 2) strongFound++;
        if (insideStrong) inStrong.add(el);
      }
      const inner = insideStrong || s === 2;
      const strongBefore = strongFound;
      let below = false;
      if (el.shadowRoot) {
        shadowRoots.push(el.shadowRoot);
        below = visit(el.shadowRoot, inner, cursor, false);
      } else if (tag.includes('-')) hosts.push(el);
      if (visit(el, inner, cursor, place.wide)) below = true;
      // Listeners make a candidate only of an element that holds none (the
      // others are wrappers, dropped anyway), so they are asked last.
      if (askListeners && !below && found.length < MAX_ELEMENTS && hasListener(el)) {
        s = 1;
        found.push({ el, s });
      }
      if (s > 0 && below) holdsCandidate.add(el);
      if (s === 2 && strongFound > strongBefore && CONTAINER_ROLES.has(roleOf(el))) groups.add(el);
      holds = holds || below || s > 0;
    }
    return holds;
  };
  // What a control holds now: its value, checked, selected, expanded and
  // focus. A script can set a value or a checked state without a DOM
  // mutation or an event, so these are read on every look, also when the
  // rest of the table is kept (`role` is the element's own, before folding).
  const LIVE = ['value', 'has_value', 'checked', 'selected', 'expanded', 'focused', 'multiple', 'selected_options'];
  const live = (e, orig, role) => {
    for (const k of LIVE) delete e[k];
    const tag = e.tag;
    if (tag === 'input' || tag === 'textarea') {
      if (orig.type === 'password') e.has_value = orig.value.length > 0;
      else if (!['checkbox', 'radio', 'file', 'submit', 'button', 'reset', 'image'].includes(orig.type)) e.value = cut(orig.value, 200);
    } else if (tag === 'select' && orig.multiple) {
      // A list that takes several options shows each one selected.
      e.multiple = true;
      e.selected_options = [...orig.selectedOptions].slice(0, MAX_OPTIONS).map((o) => cut(clean(o.text), 60));
    } else if (tag === 'select') {
      e.value = cut([...orig.selectedOptions].map((o) => clean(o.text)).join(', '), 200);
    } else if (role === 'listbox' && orig.getAttribute('aria-multiselectable') === 'true') {
      e.multiple = true;
      e.selected_options = [...orig.querySelectorAll('[role=option][aria-selected=true]')]
        .slice(0, MAX_OPTIONS).map((o) => cut(clean(o.textContent), 60));
    } else if (orig.isContentEditable && role === 'textbox') {
      e.value = cut(textOf(orig, 200), 200);
    }
    const ac = orig.getAttribute('aria-checked');
    if (orig.type === 'checkbox' || orig.type === 'radio') e.checked = !!orig.checked;
    else if (ac === 'true' || ac === 'false' || ac === 'mixed') e.checked = ac === 'true';
    const as = orig.getAttribute('aria-selected');
    if (as === 'true' || as === 'false') e.selected = as === 'true';
    const ae = orig.getAttribute('aria-expanded');
    if (ae === 'true' || ae === 'false') e.expanded = ae === 'true';
    else if (tag === 'summary' && orig.parentElement && orig.parentElement.tagName === 'DETAILS') e.expanded = orig.parentElement.open;
    if (orig.getRootNode().activeElement === orig) e.focused = true;
  };
  // A link or button drawn inside a tab or menu item of its name is listed
  // as that control: it takes the states it has not of its own from it.
  const adoptStates = (e, outer) => {
    for (const k of ['checked', 'selected', 'expanded']) if (e[k] === undefined && outer[k] !== undefined) e[k] = outer[k];
  };

  // Only the nodes the caller does not know yet go on the wire.
  const nodes = [];
  const ids = [], sent = new Set();
  const numberOf = (n) => {
    let i = reg.map.get(n);
    if (i === undefined) { i = reg.next++; reg.map.set(n, i); }
    if (i >= KNOWN && !sent.has(i)) { sent.add(i); ids.push(i); nodes.push(n); }
    return i;
  };
  // The answer: the kept elements, and the custom elements that may hide a
  // closed shadow root (their indexes in `nodes`).
  const answer = (kept, hostEls, look) => {
    const hostIdx = hostEls.map((h) => { const i = nodes.length; nodes.push(h); return i; });
    const meta = {
      url: String(doc.location ? doc.location.href : ''), title: String(doc.title || ''),
      vw, vh, sx, sy, dw, dh, els: kept, ids, hosts: hostIdx, listeners: !!listeners, ...look,
    };
    return { meta: JSON.stringify(meta), nodes };
  };
  // Work on the whole document kept from the last look while nothing could
  // have changed it: no mutation and no event that `reg.changes` counted, the
  // same stylesheets (as `positionRules` compares them), viewport, scroll,
  // document size and fullscreen element, and no animation running. Kept: the
  // page text, the elements that escape their ancestors' boxes (on old
  // reddit, half of a look), the verdict of the spot checks and the table
  // itself (see below). A closed shadow root's own look keeps nothing.
  const changes = typeof reg.pause === 'function' && reg.changes ? reg.changes : null;
  let memo = null;
  if (changes && root.nodeType === 9) {
    const seen = { n: changes.count(), vw, vh, sx, sy, dw, dh, rules: positionRules(), fs: doc.fullscreenElement };
    const last = reg.memo;
    // The page can bend what reads its animations: what cannot be read counts
    // as running, rather than failing the look (a failed look costs the
    // document its registry).
    const animating = () => {
      try { return doc.getAnimations().some((a) => a.playState === 'running' || a.pending); } catch (e) { return true; }
    };
    const quiet = !!last && Object.keys(seen).every((k) => last.seen[k] === seen[k]) && !animating();
    memo = quiet ? last : { seen };
    reg.memo = memo;
  }
  // A part of that work: the one kept, unless `stale`, or `compute`d now and
  // kept for the next look.
  let reused = 0;
  const memoized = (part, compute, stale = false) => {
    if (memo && memo[part] !== undefined && !stale) { reused++; return memo[part]; }
    const value = compute();
    if (memo) memo[part] = value;
    return value;
  };
  // The table of the last look is this one's when nothing happened since and
  // every element it listed is still in the document, with the same box: then
  // only each control's value, checks and focus are read again (`live`). One
  // box that moved (a rule edited through the CSSOM, an image loaded) and the
  // page is looked at anew. What this cannot see: an element that became a
  // control with neither a mutation nor an event (a click listener added by a
  // timer) is listed from the next change on.
  const tableKey = [MAX_NAME, MAX_OPTIONS, MAX_ELEMENTS, MAX_OFFSCREEN, !!opts.exactOcclusion, opts.spotChecks, opts.farScreens].join();
  const same = ({ e, node, orig }) => {
    if (!node.isConnected || !orig.isConnected) return false;
    const b = node.getBoundingClientRect();
    return b.left === e.x && b.top === e.y && b.width === e.w && b.height === e.h;
  };
  const lastTable = memo && memo.table;
  if (lastTable && lastTable.key === tableKey && memo.text !== undefined && lastTable.rows.every(same)) {
    const kept = lastTable.rows.map(({ e, node, orig, role, cover, outer }) => {
      numberOf(node);
      if (node !== orig) numberOf(orig);
      if (cover) numberOf(cover);
      const k = { ...e };
      live(k, orig, role);
      if (outer) {
        const o = { tag: outer.e.tag };
        live(o, outer.orig, outer.e.role);
        adoptStates(k, o);
      }
      return k;
    });
    return answer(kept, lastTable.hosts, {
      dropped: lastTable.dropped, text_hash: String(memo.text.hash), text_lines: memo.text.lines, text_chars: memo.text.chars || 0, truncated: lastTable.truncated, far: lastTable.far,
      unread: [], reused: Object.keys(memo).length - 1, kept: true,
    });
  }
  const shadowRoots = [];
  visit(root, false, undefined, cullable);
  // Shadow roots are watched from the look that first meets them on: what
  // changed in one before cannot be told, and the text is read again.
  let newRoots = false;
  if (changes) for (const r of root.nodeType === 11 ? [root, ...shadowRoots] : shadowRoots) if (changes.watch(r)) newRoots = true;
  await pause();
  // Each control's labels, from one pass over the labels. A control's own
  // `labels` list costs a walk of the whole document the first time it is
  // read after any change (47 ms for the 1,250 inputs of a dense form).
  const labelMap = new Map();
  for (const r of [root, ...shadowRoots]) {
    for (const l of r.querySelectorAll('label')) {
      const c = l.control;
      if (!c) continue;
      const ls = labelMap.get(c);
      if (ls) ls.push(l); else labelMap.set(c, [l]);
    }
  }
  const labelsOf = (el) => labelMap.get(el) || [];
  // Positioned elements (relative, absolute, fixed, sticky): the only ones that
  // paint over content that is not theirs on a page laid out in flow. Hit tests
  // cost up to 0.1 ms each on a big page; they are spent only where a layer
  // meets a control (see `clearAt` below). Only the occlusion analysis needs
  // them, and it is off past the cap. The walk read the style of every element
  // that is neither a control nor inside one.
  const layers = [];
  if (!capped && !opts.exactOcclusion && root.nodeType === 9) {
    for (const [el, st] of styleCache) {
      if (el !== doc.documentElement && el !== doc.body && st.position !== 'static') layers.push(el);
    }
  }

  // Geometry and visibility.
  const inter = (a, b) => {
    const x = Math.max(a.x, b.x), y = Math.max(a.y, b.y);
    const r = Math.min(a.x + a.w, b.x + b.w), btm = Math.min(a.y + a.h, b.y + b.h);
    return r > x && btm > y ? { x, y, w: r - x, h: btm - y } : null;
  };
  const boxOf = (el, b = el.getBoundingClientRect()) => {
    if (b.width >= 1 && b.height >= 1) return { x: b.left, y: b.top, w: b.width, h: b.height };
    // display:contents or an inline wrapper around blocks: union of the children.
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (const c of el.children) {
      const r = c.getBoundingClientRect();
      if (r.width < 1 || r.height < 1) continue;
      x0 = Math.min(x0, r.left); y0 = Math.min(y0, r.top);
      x1 = Math.max(x1, r.right); y1 = Math.max(y1, r.bottom);
    }
    return x1 > x0 && y1 > y0 ? { x: x0, y: y0, w: x1 - x0, h: y1 - y0 } : null;
  };
  // The region through which an element's descendants can be seen: the
  // intersection of the boxes of ancestors that clip overflow, up to a fixed
  // element (which escapes its ancestors' clips). Memoized per element, so a
  // page costs one look per ancestor, not one per ancestor per candidate.
  // `clip` null means unclipped; `scroll` tells whether the innermost clipping
  // ancestor lets a user scroll (auto/scroll) rather than hide (hidden/clip).
  const UNCLIPPED = { clip: null, empty: false, scroll: true, fixed: false };
  const chainMemo = new Map();
  const chainOf = (a) => {
    if (!a || a === doc.documentElement || a === doc.body) return UNCLIPPED;
    let c = chainMemo.get(a);
    if (c) return c;
    const st = style(a);
    const fixed = st.position === 'fixed';
    const base = fixed ? UNCLIPPED : chainOf(parentOf(a));
    c = { clip: base.clip, empty: base.empty, scroll: base.scroll, fixed: fixed || base.fixed };
    if (!c.empty && (st.overflowX !== 'visible' || st.overflowY !== 'visible')) {
      // Content shows through the padding box: inside the borders and scrollbars.
      const r = a.getBoundingClientRect();
      const own = a.clientWidth || a.clientHeight
        ? { x: r.left + a.clientLeft, y: r.top + a.clientTop, w: a.clientWidth, h: a.clientHeight }
        : { x: r.left, y: r.top, w: r.width, h: r.height };
      c.clip = c.clip ? inter(c.clip, own) : own;
      c.empty = !c.clip;
      c.scroll = /(auto|scroll)/.test(st.overflowX + st.overflowY);
      if (c.empty) c.clip = own;
    }
    chainMemo.set(a, c);
    return c;
  };
  // Clip a box by its ancestors. Returns {clip, scrollable, clipper}: clip is
  // the visible part (null if nothing shows), clipper the region it is hidden
  // from, and scrollable whether a user can scroll it into that region.
  const clipOf = (el, box) => {
    const c = style(el).position === 'fixed' ? UNCLIPPED : chainOf(parentOf(el));
    if (!c.clip) return { clip: box, scrollable: true, clipper: null };
    const vis = c.empty ? null : inter(box, c.clip);
    return vis ? { clip: vis, scrollable: true, clipper: null } : { clip: null, scrollable: c.scroll, clipper: c.clip };
  };
  const inFixed = (el) => style(el).position === 'fixed' || chainOf(parentOf(el)).fixed;
  const isVisible = (el) => {
    if (el.checkVisibility) return el.checkVisibility({ opacityProperty: true, visibilityProperty: true, contentVisibilityAuto: true });
    const st = style(el);
    return !unseen(st) && parseFloat(st.opacity) > 0;
  };
  const direction = (b, area) => {
    if (b.y + b.h <= area.y) return 'above';
    if (b.y >= area.y + area.h) return 'below';
    if (b.x + b.w <= area.x) return 'left';
    if (b.x >= area.x + area.w) return 'right';
    return 'below';
  };
  // A visually hidden native checkbox or radio is usually drawn by its label.
  const proxyOf = (el) => {
    if (el.tagName !== 'INPUT') return null;
    for (const l of labelsOf(el)) if (isVisible(l) && boxOf(l)) return l;
    return null;
  };

  // The first dialog shown in a document or shadow root, looked for once per
  // root: every control behind a backdrop asks (a search of the whole
  // document, a millisecond on a big page).
  const shownDialogs = new Map();
  const shownDialogOf = (r) => {
    if (!shownDialogs.has(r)) {
      let shown = null;
      for (const d of r.querySelectorAll('dialog[open],[aria-modal=true],[role=dialog],[role=alertdialog]')) {
        if (isVisible(d)) { shown = d; break; }
      }
      shownDialogs.set(r, shown);
    }
    return shownDialogs.get(r);
  };
  // Describe what covers a point: the nearest dialog-like or fixed ancestor.
  const coverOf = (h) => {
    let pick = null;
    for (let n = h; n && n !== doc.body && n !== doc.documentElement; n = parentOf(n)) {
      const role = (n.getAttribute('role') || '').split(/\s+/)[0];
      if (n.tagName === 'DIALOG' || role === 'dialog' || role === 'alertdialog' || n.getAttribute('aria-modal') === 'true') {
        pick = { el: n, role: 'dialog' }; break;
      }
      const pos = style(n).position;
      if (!pick && (pos === 'fixed' || pos === 'sticky')) pick = { el: n, role: /header|nav/i.test(n.tagName) || /header|nav/i.test(n.className || '') ? 'header' : 'overlay' };
    }
    if (!pick) pick = { el: h, role: roleOf(h) || h.tagName.toLowerCase() };
    // A nameless backdrop stands for the dialog it belongs to.
    if (pick.role === 'overlay' && !textOf(pick.el, 20)) {
      const d = shownDialogOf(h.getRootNode());
      if (d) pick = { el: d, role: 'dialog' };
    }
    const el = pick.el;
    let name = clean(el.getAttribute('aria-label'));
    if (!name && el.getAttribute('aria-labelledby')) name = byIds(el, el.getAttribute('aria-labelledby'));
    if (!name) { const hd = el.querySelector('h1,h2,h3,h4,legend,strong'); if (hd) name = textOf(hd, 80); }
    if (!name) name = textOf(el, 60);
    return { el, text: cut(pick.role, 20) + (name ? ' "' + cut(name, 40) + '"' : '') };
  };
  const hitSelf = (el, proxy, x, y) => {
    const r = el.getRootNode();
    const h = (r.elementFromPoint ? r : doc).elementFromPoint(x, y);
    if (!h) return { ok: false, h: null };
    if (h === el || containsComposed(el, h)) return { ok: true, h };
    if (proxy && (h === proxy || containsComposed(proxy, h))) return { ok: true, h };
    for (const l of labelsOf(el)) if (containsComposed(l, h)) return { ok: true, h };
    return { ok: false, h };
  };

  // The first sample point where the element is hit, or what covers the first.
  const probe = (orig, proxy, pts) => {
    let first = null;
    for (const [x, y] of pts) {
      const r = hitSelf(orig, proxy, x, y);
      if (r.ok) return { hit: true, x, y };
      if (!first) first = r;
    }
    return { hit: false, h: first && first.h };
  };

  const viewport = { x: 0, y: 0, w: vw, h: vh };
  // A point on a whole CSS pixel, where the span from `a`, `w` long, has one:
  // the protocol's hit test takes whole pixels, and a middle half a pixel
  // above a cover's edge was clear here and covered there (phys.org's share
  // bar under its breadcrumb).
  const onPixel = (a, w, f) => {
    const v = Math.floor(a + w * f);
    return v >= a ? v : Math.ceil(a) < a + w ? Math.ceil(a) : a + w * f;
  };
  const ATOMIC = new Set(['INPUT', 'SELECT', 'TEXTAREA', 'BUTTON', 'IMG', 'IFRAME', 'FRAME', 'VIDEO', 'CANVAS']);
  const SPOT_CHECKS = opts.spotChecks === undefined ? 10 : opts.spotChecks;
  const cleared = [];
  const els = [];
  // A weak element around other candidates is a wrapper of the control
  // inside, or a container that delegates to them: the controls are listed,
  // not it. Except a card: a clickable row or tile (an e-mail in an inbox,
  // around its star and trash icons) with words of its own that no control
  // inside it holds, when the controls inside have no words (icons) and it
  // is no bigger than a quarter of the viewport and at least four times the
  // controls it holds. It does something of its own (opens the e-mail) that
  // nothing else in the table does.
  const foundEls = new Set(found.map((f) => f.el));
  const ownWords = (el, inner) => {
    let words = false;
    for (let c = el.firstChild; c; c = c.nextSibling) {
      if (c.nodeType === 3 && c.data.trim()) words = true;
      if (c.nodeType !== 1 || SKIP_TEXT.has(c.tagName)) continue;
      if (foundEls.has(c)) { inner.push(c); continue; }
      // Not cached: what the walk did not read is no layer (see `layers`).
      const st = styleCache.get(c) || win.getComputedStyle(c);
      if (!unseen(st) && ownWords(c, inner)) words = true;
    }
    return words;
  };
  const isCard = (el) => {
    const area = (r) => r.width * r.height;
    const r = el.getBoundingClientRect();
    if (area(r) === 0 || area(r) > vw * vh / 4) return false;
    const inner = [];
    return ownWords(el, inner) && inner.every((c) => !c.textContent.trim()) &&
      area(r) >= 4 * inner.reduce((sum, c) => sum + area(c.getBoundingClientRect()), 0);
  };
  const candidates = found.filter(({ el, s }) => s === 2 ? !groups.has(el) :
    (!holdsCandidate.has(el) || isCard(el)) && !inStrong.has(el));
  // Examine the candidates nearest the viewport first: every one whose box
  // touches it (or has no box: a hidden control its label draws), then the
  // offscreen ones by distance, until MAX_OFFSCREEN offscreen ones are kept.
  // Farther ones would not be kept: their visibility and clipping are not
  // looked at (on a long page, most candidates).
  const distance = (r) => {
    const dy = r.bottom < 0 ? -r.bottom : r.top > vh ? r.top - vh : 0;
    const dx = r.right < 0 ? -r.right : r.left > vw ? r.left - vw : 0;
    return dx + dy;
  };
  const near = [], far = [];
  const rects = [];
  for (let i = 0; i < candidates.length; i++) {
    if ((i & 255) === 255) await pause();
    rects.push(candidates[i].el.getBoundingClientRect());
  }
  // Once far parts were skipped, what was found beyond the band is only part
  // of what lies there: none of it is kept, so that the offscreen ones kept
  // are the nearest of all.
  let beyondBand = 0;
  candidates.forEach((_, i) => {
    const r = rects[i];
    const d = r.width === 0 && r.height === 0 ? 0 : distance(r);
    if (d > 0 && farParts > 0 && beyond(r, r.bottom, r.right)) beyondBand++;
    else (d === 0 ? near : far).push([d, i]);
  });
  far.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const examine = near.concat(far);
  // Occlusion without hit tests. In flow, two boxes overlap only when one
  // contains the other, so a point of a control that no layer covers, other
  // than the control's own ancestors and descendants, hits the control.
  // Layers: positioned elements (with their overflow), and absolutely
  // positioned ::before/::after of the controls in view, of layers and of
  // the root (a stretched link's ::after covers its whole card; a hit there
  // is its owner's). Trusted only for a whole document walked to its end
  // (past the cap styles are not read), with no modal dialog (its backdrop is
  // not in its box), no inert subtree and no fullscreen element; and checked
  // by hit tests on a spread sample of the controls it clears, all of which
  // are hit-tested if one disagrees.
  const isModal = (l) => { try { return l.matches(':modal'); } catch (e) { return false; } };
  const analytic = !opts.exactOcclusion && root.nodeType === 9 && !capped && !doc.fullscreenElement &&
    !doc.querySelector('[inert]') && !layers.some(isModal);
  const layerBoxes = [];
  // A layer paints its overflow beside its box, unless it clips it (a
  // visually hidden heading, 1×1 with its text clipped, covered the links
  // beside it).
  const addLayer = (el, r, pseudo) => {
    const st = pseudo ? null : style(el);
    const w = st && st.overflowX === 'visible' ? Math.max(r.width, el.scrollWidth) : r.width;
    const h = st && st.overflowY === 'visible' ? Math.max(r.height, el.scrollHeight) : r.height;
    const b = { el, pseudo, x: r.left, y: r.top, w, h };
    if (b.w > 0 && b.h > 0 && inter(b, viewport)) layerBoxes.push(b);
  };
  const FULL = { left: -1e9, top: -1e9, width: 2e9, height: 2e9 };
  // Only a style rule positions a pseudo-element (an inline style cannot reach
  // one). Where every stylesheet of the document could be read, an element
  // that matches no rule positioning a pseudo-element has none, and its two
  // computed styles (1-2 µs each, for every control in view) are not asked
  // for. Elements in a shadow tree follow their own stylesheets: asked.
  const pseudoRules = analytic ? positionRules() : null;
  const mayOwnPositioned = (owner) => {
    if (!pseudoRules.readable || owner.getRootNode() !== doc) return true;
    if (!pseudoRules.owners) return false;
    try { return owner.matches(pseudoRules.owners); } catch (e) { return true; }
  };
  const addPseudoLayers = (owner) => {
    if (!mayOwnPositioned(owner)) return;
    for (const which of ['::before', '::after']) {
      const pos = win.getComputedStyle(owner, which).position;
      if (pos === 'fixed') addLayer(owner, FULL, true);
      else if (pos === 'absolute') {
        // Its containing block: the nearest positioned ancestor, or the page.
        let a = owner;
        while (a && a !== doc.documentElement && style(a).position === 'static') a = parentOf(a);
        addLayer(owner, a && a !== doc.documentElement ? a.getBoundingClientRect() : FULL, true);
      }
    }
  };
  await pause();
  if (analytic) {
    // Strong controls' styles are not read in the walk; only those in view
    // can cover a control in view.
    for (const [, i] of near) {
      const { el, s } = candidates[i];
      if (s === 2 && style(el).position !== 'static') layers.push(el);
    }
    // A layer more than a screen away would need that much overflow, or a
    // pseudo-element thrown that far, to reach the viewport: not looked at.
    for (const l of layers) {
      const r = l.getBoundingClientRect();
      if (!withinScreen(r)) continue;
      addLayer(l, r, false);
      addPseudoLayers(l);
    }
    for (const o of [doc.documentElement, doc.body]) if (o) addPseudoLayers(o);
    for (const [, i] of near) addPseudoLayers(candidates[i].el);
  }
  // A layer leaves a control alone if it is the control's ancestor or
  // descendant; a pseudo-element's layer only if the control owns it.
  const related = (b, el) => b.pseudo
    ? b.el === el || el.contains(b.el) || containsComposed(el, b.el)
    : b.el.contains(el) || el.contains(b.el) || containsComposed(b.el, el) || containsComposed(el, b.el);
  const clearAt = (el, x, y) => {
    if (style(el).pointerEvents === 'none') return false;
    for (const b of layerBoxes) {
      if (x >= b.x && x < b.x + b.w && y >= b.y && y < b.y + b.h && !related(b, el)) return false;
    }
    return true;
  };
  await pause();
  let offscreenSeen = 0, unexamined = beyondBand;
  for (let k = 0; k < examine.length; k++) {
    if ((k & 63) === 63) await pause();
    const [dist, ci] = examine[k];
    if (dist > 0 && offscreenSeen >= MAX_OFFSCREEN) { unexamined += examine.length - k; break; }
    const { el: orig, s } = candidates[ci];
    let el = orig;
    let proxy = null;
    const disabledSelf = orig.matches(':disabled') || orig.getAttribute('aria-disabled') === 'true';
    let visible = isVisible(el);
    let box = visible ? boxOf(el, rects[ci]) : null;
    if ((!visible || !box || box.w < 2 || box.h < 2) && (proxy = proxyOf(orig))) {
      el = proxy; visible = true; box = boxOf(proxy);
    }
    if (!visible || !box) continue;
    const { clip, scrollable, clipper } = clipOf(el, box);
    // Off the document's canvas is a hiding place (a skip link at -9999px),
    // unless a scroll area holds it: scrolled past, it is above its top.
    const docBox = { x: box.x + sx, y: box.y + sy, w: box.w, h: box.h };
    const offCanvas = docBox.x + docBox.w <= 0 || docBox.y + docBox.h <= 0 || docBox.x >= dw || docBox.y >= dh;
    if (offCanvas && !(clipper && scrollable)) continue;
    let state = 'interactable', dir = null, cover = null, px = null, py = null, vis = null, inContainer = false, clearPts = null;
    if (!clip) {
      if (!scrollable) continue;
      state = 'offscreen'; dir = direction(box, clipper); inContainer = true;
    } else {
      vis = inter(clip, viewport);
      if (!vis) {
        if (inFixed(el)) continue;
        state = 'offscreen'; dir = direction(clip, viewport);
      } else {
        // Sample points: the middle of each line box of a wrapped inline element
        // (the middle of their union can fall between the lines), then the
        // middle and quarter points of the visible box.
        const pts = [];
        const at = (b, fx, fy) => [onPixel(b.x, b.w, fx), onPixel(b.y, b.h, fy)];
        // A form control or an image is one box however it is laid out: its
        // line boxes are not asked for (2 µs each).
        const rects = ATOMIC.has(el.tagName) ? [] : el.getClientRects();
        if (rects.length > 1) {
          for (const r of [...rects].slice(0, 4)) {
            const v = inter({ x: r.left, y: r.top, w: r.width, h: r.height }, vis);
            if (v && v.w >= 1 && v.h >= 1) pts.push(at(v, 0.5, 0.5));
          }
        }
        for (const [fx, fy] of [[0.5, 0.5], [0.25, 0.25], [0.75, 0.25], [0.25, 0.75], [0.75, 0.75]]) {
          pts.push(at(vis, fx, fy));
        }
        if (analytic && !proxy && clearAt(orig, pts[0][0], pts[0][1])) {
          px = pts[0][0]; py = pts[0][1]; clearPts = pts;
        } else {
          const r = probe(orig, proxy, pts);
          if (r.hit) { px = r.x; py = r.y; } else { state = 'occluded'; cover = r.h ? coverOf(r.h) : null; }
        }
      }
    }
    if (disabledSelf) state = 'disabled';
    const e = { node: el, orig, ci, x: box.x, y: box.y, w: box.w, h: box.h, state };
    if (clearPts) cleared.push({ e, orig, pts: clearPts });
    if (state === 'offscreen') offscreenSeen++;
    if (vis) { e.vis = vis; }
    if (px !== null) { e.px = px; e.py = py; }
    if (dir) e.dir = dir;
    if (inContainer) e.in_container = true;
    if (cover) e.cover = cover;
    els.push(e);
  }
  await pause();
  // Where nothing happened since the last look, the spot checks would hit
  // what they hit then (the same boxes and layers, the same scroll): their
  // verdict is kept.
  const spotCheck = () => {
    const checkStep = Math.max(1, Math.floor(cleared.length / Math.max(1, SPOT_CHECKS)));
    for (let i = 0; SPOT_CHECKS > 0 && i < cleared.length; i += checkStep) {
      const { e, orig } = cleared[i];
      if (!hitSelf(orig, null, e.px, e.py).ok) return false;
    }
    return true;
  };
  const agree = cleared.length === 0 || memoized('agree' + SPOT_CHECKS, spotCheck);
  if (!agree) {
    for (const { e, orig, pts } of cleared) {
      const r = probe(orig, null, pts);
      if (r.hit) { e.px = r.x; e.py = r.y; continue; }
      delete e.px; delete e.py;
      if (e.state !== 'disabled') e.state = 'occluded';
      if (r.h) e.cover = coverOf(r.h);
    }
  }
  // Back in document order, which breaks ties in the reading order.
  els.sort((a, b) => a.ci - b.ci);
  for (const e of els) delete e.ci;
  // An element without a name (an icon) is told by the words of a small
  // vocabulary in its id and classes, its descendants' classes and the
  // symbols its SVG draws ("rebelbar__menu-toggle hambg-btn": "menu toggle"). Only these
  // words pass: the rest of a class is the page's, and the model reads this.
  // Layout words (left, top, dark) are not among them: utility classes are
  // full of them.
  const HINT_WORDS = new Set(['menu', 'toggle', 'hamburger', 'burger', 'nav', 'close', 'dismiss',
    'search', 'cart', 'basket', 'user', 'account', 'profile', 'avatar', 'login', 'logout', 'signin',
    'share', 'like', 'heart', 'star', 'favorite', 'favourite', 'bookmark', 'save', 'play', 'pause',
    'mute', 'volume', 'next', 'prev', 'previous', 'back', 'forward', 'home', 'settings', 'gear',
    'filter', 'sort', 'expand', 'collapse', 'more', 'dropdown', 'notification', 'notifications',
    'bell', 'help', 'info', 'edit', 'delete', 'trash', 'add', 'plus', 'minus', 'remove', 'download',
    'upload', 'copy', 'print', 'zoom', 'fullscreen', 'chat', 'message', 'mail', 'email', 'phone',
    'calendar', 'arrow', 'chevron', 'caret', 'facebook', 'twitter', 'instagram', 'linkedin',
    'youtube', 'tiktok', 'pinterest', 'reddit', 'github', 'whatsapp', 'language', 'translate',
    'location', 'refresh', 'reload', 'undo', 'redo', 'send', 'submit', 'cancel', 'accept', 'reject',
    'cookie', 'cookies']);
  const hintOf = (el) => {
    const words = [];
    const add = (text) => {
      const parts = String(text || '').replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase().split(/[^a-z]+/);
      for (const w of parts) if (words.length < 3 && HINT_WORDS.has(w) && !words.includes(w)) words.push(w);
    };
    // Descendants' ids are left out: icons exported from a design tool carry
    // their artboard's ("992---Search---Open-filters" in a hamburger).
    const from = (n) => {
      add(n.getAttribute('class'));
      if (n.tagName.toLowerCase() === 'use') add(n.getAttribute('href') || n.getAttribute('xlink:href'));
    };
    add(el.id);
    from(el);
    let seen = 0;
    for (const n of el.querySelectorAll('*')) {
      if (words.length >= 3 || ++seen > 20) break;
      from(n);
    }
    return words.join(' ');
  };
  // A field nobody labelled is told by the text a person reads beside it:
  // just before it (a table cell's "Full name:", old reddit's "shortlink:"),
  // or just after a checkbox, radio or switch ("Remember me"). Only in the
  // field's parent or the one above it, with no other control in between, and
  // short: a paragraph is not a label.
  const FIELD_ROLES = new Set(['textbox', 'searchbox', 'combobox', 'spinbutton', 'listbox', 'slider',
    'checkbox', 'radio', 'switch']);
  const CONTROLS = 'input:not([type=hidden]),select,textarea,button,a[href],[contenteditable]';
  const besideOf = (el, role) => {
    const after = role === 'checkbox' || role === 'radio' || role === 'switch';
    for (let n = el, up = 0; n && up < 2; n = n.parentElement, up++) {
      for (let c = after ? n.nextSibling : n.previousSibling; c; c = after ? c.nextSibling : c.previousSibling) {
        if (c.nodeType === 1) {
          if (c.matches(CONTROLS) || c.querySelector(CONTROLS)) return '';
          if (unseen(style(c))) continue;
        }
        const text = c.nodeType === 3 ? clean(c.data) : c.nodeType === 1 ? textOf(c, 100) : '';
        // Beside the field's parent, a sentence is what the page says above
        // the form, not a label (MiniWoB's instructions above its task).
        if (text) return text.length <= 60 && !(up > 0 && /[.!?]$/.test(text)) ? text : '';
      }
    }
    return '';
  };
  // Names and fixed states, for the kept elements only.
  const describe = (e) => {
    const orig = e.orig;
    delete e.orig;
    const role = roleOf(orig) || 'clickable';
    const tag = orig.tagName.toLowerCase();
    e.tag = tag; e.role = role; e.name = cut(nameOf(orig, role), MAX_NAME);
    if (!e.name) {
      const hint = (FIELD_ROLES.has(role) && besideOf(orig, role)) || hintOf(orig);
      if (hint) e.hint = hint;
    }
    if (tag === 'input') e.type = orig.type;
    if (tag === 'select') {
      e.options = [...orig.options].slice(0, MAX_OPTIONS).map((o) => cut(clean(o.text), 60));
      e.option_count = orig.options.length;
    }
    if (orig.href && (tag === 'a' || tag === 'area')) e.href = String(orig.href).slice(0, 500);
    live(e, orig, role);
    if (e.node !== orig) e.proxy = orig;
  };

  // Keep the elements that matter now: every one in view, then the offscreen
  // ones nearest the viewport. Describing an element and, the first time it
  // is reported, its node identity (20-40 µs of the page's main thread) cost;
  // far offscreen ones come back after a scroll.
  const RANK = { interactable: 0, occluded: 1, disabled: 2, offscreen: 3 };
  const away = (e) => {
    const dy = e.y + e.h < 0 ? -(e.y + e.h) : e.y > vh ? e.y - vh : 0;
    const dx = e.x + e.w < 0 ? -(e.x + e.w) : e.x > vw ? e.x - vw : 0;
    return dx + dy;
  };
  // A disabled control not in view ranks with the offscreen ones.
  const rankOf = (e) => RANK[e.state] + (e.state === 'disabled' && !e.vis ? 1 : 0);
  const order = els.map((e, i) => [rankOf(e), away(e), i]);
  order.sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);
  const inView = order.filter((o) => o[0] < 3).length;
  const keep = order.slice(0, inView + MAX_OFFSCREEN).map((o) => o[2]).sort((a, b) => a - b);
  const dropped = els.length - keep.length + unexamined;
  await pause();
  const described = keep.map((i) => { const e = els[i], orig = e.orig; describe(e); return [e, orig, e.role]; });
  const byOrig = new Map(described.map(([e, orig]) => [orig, e]));
  const origOf = new Map(described.map(([e, orig]) => [e, orig]));
  const folded = new Set();
  const foldedInto = new Map();
  for (const [e, orig] of described) {
    if (orig.tagName !== 'A' && orig.tagName !== 'BUTTON') continue;
    // The nearest kept element up to three levels up.
    let outer = null;
    for (let a = parentOf(orig), k = 0; a && k < 3 && !outer; a = parentOf(a), k++) outer = byOrig.get(a) || null;
    if (!outer || outer.tag === 'a' || outer.tag === 'button' || !CLICK_ROLES.has(outer.role) ||
      outer.name !== e.name || folded.has(outer)) continue;
    e.role = outer.role;
    adoptStates(e, outer);
    if (outer.state === 'disabled') e.state = 'disabled';
    folded.add(outer);
    foldedInto.set(e, { e: outer, orig: origOf.get(outer) });
  }
  // A nameless element that acts only through a listener or its cursor, laid
  // over a control of its own parent's (a Material button's "touch target",
  // which widens the hit area of the button beside it) is that control: it is
  // no line of its own. Only where the two boxes nearly agree: a card's
  // click area around a small button does something else.
  const area = (r) => (r ? r.w * r.h : 0);
  for (const [e, orig] of described) {
    if (e.role !== 'clickable' || e.name || !parentOf(orig)) continue;
    const near = parentOf(parentOf(orig)) || parentOf(orig);
    const twin = described.some(([c, co]) => c !== e && c.role !== 'clickable' && !folded.has(c) &&
      area(c) > 0 && area(e) <= 2 * area(c) && area(inter(e, c)) >= 0.9 * area(c) && containsComposed(near, co));
    if (twin) folded.add(e);
  }
  // Links of the same name to the same address (an author's avatar and name,
  // a product's picture and title) are one way to go: listed once, where it
  // can be clicked now if one can. Not where the address is a fragment or a
  // script: those links may each do something else.
  const byTarget = new Map();
  for (const [e] of described) {
    if (folded.has(e) || e.tag !== 'a' || !e.href || e.href.includes('#') || !/^https?:/i.test(e.href)) continue;
    const key = e.href + '\n' + e.name;
    const first = byTarget.get(key);
    if (!first) { byTarget.set(key, e); continue; }
    if (rankOf(e) < rankOf(first)) { folded.add(first); byTarget.set(key, e); } else folded.add(e);
  }
  const rows = [];
  const kept = described.filter(([e]) => !folded.has(e)).map(([e, orig, role]) => {
    const node = e.node, cover = e.cover && e.cover.el;
    e.n = numberOf(node); delete e.node;
    if (e.proxy) e.proxy = numberOf(e.proxy);
    if (e.cover) e.cover = { n: numberOf(cover), text: e.cover.text };
    rows.push({ e, node, orig, role, cover, outer: foldedInto.get(e) });
    return e;
  });
  // Custom elements that may hide a closed shadow root: only those that show
  // within a screen of the viewport are worth a probe (each costs a node
  // identity on the wire, and most custom elements have no shadow root).
  const hostEls = hosts.filter(nearScreen).slice(0, 200);

  // The page signature's text part: rendered text of the document, hashed here
  // so that a long page does not cross the wire.
  await pause();
  const textHashOf = () => {
    let t = doc.body.innerText || '';
    // What is typed into an editable area is a field's value, not page text:
    // typing must not look like a new page. The hosts are those the walk met
    // (searching the document for them cost a millisecond on a big page): one
    // in a far part is typed into only once it is near.
    for (const ed of editingHosts) {
      const own = ed.innerText;
      if (own) t = t.replace(own, '');
    }
    // Besides the whole text's hash, one per line (the last one takes the
    // rest past MAX_LINES): a line that changes on its own, a clock, is told
    // from a change a command made (see perceive/ambient.rs).
    let h1 = 0x811c9dc5, h2 = 0x01000193, l = 0x811c9dc5;
    const lines = [];
    for (let i = 0; i < t.length; i++) {
      const c = t.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 16777619) >>> 0;
      h2 = Math.imul(h2 ^ c, 2246822519) >>> 0;
      if (c === 10 && lines.length < MAX_LINES - 1) { lines.push(l); l = 0x811c9dc5; }
      else l = Math.imul(l ^ c, 16777619) >>> 0;
    }
    lines.push(l);
    return { hash: h1.toString(16) + h2.toString(16), lines, chars: t.length };
  };
  const MAX_LINES = 2000;
  const text = root.nodeType === 9 && doc.body ? memoized('text', textHashOf, newRoots) : { hash: 0, lines: [] };
  if (memo) memo.table = { key: tableKey, rows, hosts: hostEls, dropped, truncated: capped, far: farParts };
  return answer(kept, hostEls, {
    dropped, text_hash: String(text.hash), text_lines: text.lines, text_chars: text.chars || 0, truncated: capped, far: farParts, unread: [...unread], reused,
  });
})
