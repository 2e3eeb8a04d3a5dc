  // enumerate/walk.js: candidates, and the walk over the tree that finds them (far parts, position rules).
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
    // An item a person drags (a sortable list's row): DRAG takes its id.
    if (el.getAttribute('draggable') === 'true') return 1;
    return 0;
  };
  // React keeps a component's handlers on its node (`__reactProps$…`) and
  // listens for every event at its root container (`__reactContainer$…`,
  // `_reactRootContainer`): the props tell which node takes clicks, right
  // clicks and presses; the root's own listeners are everyone's, not its own.
  const REACT_HANDLERS = ['onClick', 'onMouseDown', 'onPointerDown', 'onMouseUp', 'onContextMenu', 'onDoubleClick', 'onTouchStart'];
  const reactOf = (el) => {
    let props = null, root = el._reactRootContainer !== undefined;
    for (const k of Object.keys(el)) {
      if (k.startsWith('__reactProps$')) props = el[k];
      else if (k.startsWith('__reactContainer$')) root = true;
    }
    return { props, root };
  };
  const hasListener = (el) => {
    const react = reactOf(el);
    if (react.props && REACT_HANDLERS.some((h) => typeof react.props[h] === 'function')) return true;
    if (react.root || !listeners) return false;
    let l;
    try { l = listeners(el); } catch (e) { return false; }
    return !!(l && (l.click || l.mousedown || l.pointerdown || l.contextmenu || l.dblclick));
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
