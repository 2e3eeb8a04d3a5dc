  // enumerate/describe.js: the elements kept, ranked, hinted, named and folded.
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
  const DRAWN = { CANVAS: 'canvas', VIDEO: 'video', svg: 'svg', SVG: 'svg' };
  // Names and fixed states, for the kept elements only.
  const describe = (e) => {
    const orig = e.orig;
    delete e.orig;
    // A drawing that takes clicks (a game's canvas, a chart, a player) is
    // named for what it is, not as a nameless clickable.
    const role = roleOf(orig) || (orig.getAttribute('draggable') === 'true' ? 'draggable'
      : DRAWN[orig.tagName] || 'clickable');
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
  // ones nearest the viewport. Describing an element costs; far offscreen
  // ones come back after a scroll.
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
