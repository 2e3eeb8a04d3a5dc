// seamark's reader: the readable content of one frame's document (or of one
// region of it) as a list of blocks, for the Rust side to write as Markdown.
// Called in the frame's main world with `this` the document's node registry
// (perceive/registry.rs), whose `map` numbers the nodes perception reported:
// a link or button it holds is told by its number, which the caller turns
// into the element's mark id. It only reads: no attribute, global, focus,
// scroll or selection change.
//
// `o.target`, when given, is a node whose region is read instead of the whole
// document: the nearest table, dialog, list, form, section or card around it.
// `o.maxChars` bounds the text collected; past it the walk stops (`cut`).
//
// Returns a JSON string: { url, title, blocks, parents, cut, words, region }.
// A block: { k: kind, t: text, l: level, d: depth, o: ordinal, b: [x, y, w, h]
// in the frame's viewport, c: container, r: folded region (`nav`, `header`,
// `footer`, `cookie`) with `ri` its instance, and per kind `rows` (table),
// `label`/`value`/`type`/`on`/`n` (field) or `fx`/`fy` (a child frame's
// content box). `parents[c]` is container c's parent (-1 at the top), `h[c]`
// whether it is a section (a sectioning element or a card of its own).
// Inline text marks a control perception reported as \u0001N\u0002text\u0003
// (N its registry number), and a line break as \n.
function (o) {
  const reg = this;
  const map = reg && reg.map;
  const target = o.target || null;
  const doc = target ? target.ownerDocument : document;
  const win = doc.defaultView || window;
  const sx = win.scrollX, sy = win.scrollY;
  const se = doc.scrollingElement || doc.documentElement;
  const dw = Math.max(se ? se.scrollWidth : 0, win.innerWidth);
  const MAX = o.maxChars || 400000;
  const SKIP = new Set(['script', 'style', 'noscript', 'template', 'head', 'meta', 'link', 'svg',
    'canvas', 'video', 'audio', 'map', 'object', 'embed', 'datalist', 'option', 'optgroup']);
  const HEADINGS = { h1: 1, h2: 2, h3: 3, h4: 4, h5: 5, h6: 6 };
  const MARKED = new Set(['a', 'button', 'summary']);
  // Elements whose box is their own even when displayed inline.
  const REPLACED = new Set(['img', 'iframe', 'frame', 'input', 'select', 'textarea']);
  const MARKED_ROLES = new Set(['link', 'button', 'tab', 'menuitem']);
  const SECTION_TAGS = new Set(['article', 'section', 'aside', 'main', 'form', 'fieldset', 'dialog',
    'table', 'ul', 'ol', 'dl', 'details', 'nav', 'header', 'footer', 'blockquote']);
  const SECTION_ROLES = new Set(['dialog', 'alertdialog', 'article', 'region', 'list', 'table',
    'grid', 'form', 'group', 'tabpanel', 'listbox', 'menu', 'navigation', 'complementary']);
  const COOKIE = /cookie|consent|gdpr|onetrust|cookiebanner/i;
  const blocks = [], parents = [], sections = [];
  let chars = 0, cut = false, words = 0, regions = 0;
  // The inline text being gathered, and the block element it belongs to.
  let buf = [];
  const stack = [];

  // Words of inline text, the markers' numbers left out.
  const countWords = (t) => (t.replace(/\u0001\d+\u0002/g, '').match(/[\p{L}\p{N}]+/gu) || []).length;
  const clean = (s) => s.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '');
  const roleOf = (el) => (el.getAttribute('role') || '').trim().split(/\s+/)[0];
  const isSection = (el) => SECTION_TAGS.has(el.localName) || SECTION_ROLES.has(roleOf(el));

  // The container of the block being emitted: registered, with its chain,
  // only when a block is emitted in it.
  const container = () => {
    let parent = -1;
    for (const s of stack) {
      if (s.c < 0) {
        s.c = parents.length;
        parents.push(parent);
        sections.push(s.sec ? 1 : 0);
      }
      parent = s.c;
    }
    return parent;
  };
  const emit = (block, ctx) => {
    if (cut) return;
    const top = stack[stack.length - 1];
    const r = top ? top.r : null;
    block.b = r ? [r.left, r.top, r.width, r.height] : [0, 0, 0, 0];
    block.c = container();
    if (ctx && ctx.region) { block.r = ctx.region; block.ri = ctx.ri; }
    blocks.push(block);
    if (chars > MAX) cut = true;
  };
  const addText = (s) => {
    if (!s) return;
    buf.push(s);
    chars += s.length;
  };
  // The gathered inline text as one block of `kind` (a paragraph unless the
  // context says a list item, a quote, a definition).
  const flush = (ctx, kind, extra) => {
    if (!buf.length) return;
    let t = buf.join('').replace(/[ \t\r\f\v\u00a0]+/g, ' ').replace(/ *\n */g, '\n').trim();
    buf = [];
    // Markers with nothing inside, and spaces left inside them.
    t = t.replace(/\u0001\d+\u0002\s*\u0003/g, '').trim();
    if (!t || !/[^\s\u0001-\u0003\d]|\d/.test(t.replace(/[\u0001]\d+[\u0002]/g, ''))) return;
    words += countWords(t);
    const block = { k: kind || (ctx && ctx.kind) || 'p', t };
    if (ctx && ctx.kind === 'li' && !kind) {
      block.d = ctx.depth;
      block.o = ctx.ord;
      block.cont = ctx.item.started ? 1 : 0;
      ctx.item.started = true;
    }
    Object.assign(block, extra || {});
    emit(block, ctx);
  };

  // Whether an element's box shows anything: not zero-size and clipped, not
  // a one-pixel screen-reader box, not clipped away, not off the canvas.
  // Style properties are read only when the box makes them matter: each read
  // costs, and the walk reads every element.
  const boxHidden = (el, st, r) => {
    const w = r.width, h = r.height;
    const tiny = w === 0 || h === 0 || (w <= 2 && h <= 2);
    if (tiny && (st.overflowX !== 'visible' || st.overflowY !== 'visible')) return true;
    const pos = st.position;
    const placed = pos === 'absolute' || pos === 'fixed';
    if (placed && st.clip === 'rect(0px, 0px, 0px, 0px)') return true;
    if ((tiny || w <= 2 || h <= 2 || placed) && st.clipPath === 'inset(50%)') return true;
    // Moved off the canvas: a box (one with an area: an empty wrapper's
    // content may show beside it) wholly left of or above the document, or
    // past its right edge, by its position or a transform.
    if (w > 0 && h > 0 && (r.right + sx <= 0 || r.bottom + sy <= 0 || r.left + sx >= dw)) {
      return pos !== 'static' || st.transform !== 'none';
    }
    return false;
  };

  const childrenOf = (el) => {
    if (el.localName === 'slot') {
      const assigned = el.assignedNodes({ flatten: true });
      return assigned.length ? assigned : Array.from(el.childNodes);
    }
    const root = el.shadowRoot;
    return Array.from((root || el).childNodes);
  };
  const walkChildren = (el, ctx) => {
    if (el.shadowRoot || el.localName === 'slot') {
      for (const c of childrenOf(el)) {
        if (cut) return;
        visit(c, ctx);
      }
      return;
    }
    for (let c = el.firstChild; c && !cut; c = c.nextSibling) visit(c, ctx);
  };

  const regionOf = (el, st, ctx) => {
    if (ctx.region || target) return null;
    const tag = el.localName, role = roleOf(el);
    if (tag === 'nav' || role === 'navigation') return 'nav';
    // Asked only of a header or footer: a lookup up the tree for every block adds up.
    const landmark = () => !el.closest('article, section, main, [role=main], [role=article]');
    if ((tag === 'header' && landmark()) || role === 'banner') return 'header';
    if ((tag === 'footer' && landmark()) || role === 'contentinfo') return 'footer';
    const floating = st.position === 'fixed' || st.position === 'sticky' ||
      role === 'dialog' || role === 'alertdialog' || tag === 'dialog';
    if (floating && COOKIE.test((el.id || '') + ' ' + (el.getAttribute('class') || '') +
      ' ' + (el.getAttribute('aria-label') || ''))) return 'cookie';
    return null;
  };

  const fieldLabel = (el) => {
    const aria = el.getAttribute('aria-label');
    if (aria && aria.trim()) return aria.trim();
    const by = el.getAttribute('aria-labelledby');
    if (by) {
      const t = by.split(/\s+/).map((id) => doc.getElementById(id)).filter(Boolean)
        .map((e) => e.innerText || e.textContent || '').join(' ').trim();
      if (t) return t;
    }
    if (el.labels && el.labels.length) {
      const t = (el.labels[0].innerText || '').trim();
      if (t) return t;
    }
    return (el.getAttribute('placeholder') || el.getAttribute('title') ||
      el.getAttribute('name') || '').trim();
  };
  const field = (el, ctx) => {
    const tag = el.localName;
    const type = tag === 'input' ? (el.type || 'text').toLowerCase() : tag;
    if (type === 'hidden') return;
    if (['submit', 'button', 'reset', 'image'].includes(type)) {
      addText(' ' + (el.value || el.getAttribute('alt') || '') + ' ');
      return;
    }
    flush(ctx);
    const f = { k: 'f', t: '', label: clean(fieldLabel(el)).replace(/\s+/g, ' ').slice(0, 120), type };
    const n = map && map.get(el);
    if (n !== undefined) f.n = n;
    if (type === 'checkbox' || type === 'radio') f.on = !!el.checked;
    else if (tag === 'select') {
      f.value = Array.from(el.selectedOptions || []).map((op) => (op.label || op.text || '').trim())
        .join(', ');
      f.shown = true;
    } else if (type !== 'file') f.value = String(el.value || '');
    chars += f.label.length + (f.value ? f.value.length : 0);
    emit(f, ctx);
  };

  const table = (el, ctx) => {
    const rows = [];
    let left = 0;
    const header = el.tHead;
    for (const row of Array.from(el.rows)) {
      if (cut || chars > MAX) { left++; continue; }
      const rs = getComputedStyle(row);
      if (rs.display === 'none' || rs.visibility === 'collapse' || rs.visibility === 'hidden') continue;
      const cells = [];
      for (const cell of Array.from(row.cells)) {
        const cs = cell.childElementCount ? getComputedStyle(cell) : null;
        if (cs && cs.display === 'none') continue;
        let t;
        if (!cell.childElementCount) {
          t = (cell.textContent || '').replace(/\s+/g, ' ').trim();
          chars += t.length;
        } else {
          const saved = buf;
          buf = [];
          walkChildren(cell, { ...ctx, inline: true, vis: true });
          t = buf.join('').replace(/\s+/g, ' ').trim();
          buf = saved;
        }
        const c = { t };
        if (cell.colSpan > 1) c.cs = Math.min(cell.colSpan, 50);
        if (cell.rowSpan > 1) c.rs = Math.min(cell.rowSpan, 1000);
        if (cell.localName === 'th') c.th = 1;
        cells.push(c);
      }
      if (!cells.length) continue;
      for (const c of cells) {
        words += countWords(c.t);
      }
      const r = { cells };
      if (header && row.parentElement === header) r.head = 1;
      rows.push(r);
    }
    if (!rows.length) return;
    const caption = el.caption ? clean((el.caption.innerText || '').trim()) : '';
    emit({ k: 'tbl', t: caption, rows, left }, ctx);
  };

  // A row of short items (a price of "$", "29", "/mo"; a bar of links) laid
  // out by flex or grid: one line, not a block per item.
  const shortRow = (el, st, r) => {
    const d = st.display;
    if (!r || r.height > 80) return false;
    if (!(d === 'flex' || d === 'inline-flex' || d === 'grid' || d === 'inline-grid')) return false;
    if ((d === 'flex' || d === 'inline-flex') && st.flexDirection.startsWith('column')) return false;
    const text = el.textContent || '';
    if (text.length > 100) return false;
    return !el.querySelector('h1,h2,h3,h4,h5,h6,p,ul,ol,li,table,dl,pre,blockquote,iframe,input,select,textarea,img,details');
  };

  const visit = (n, ctx) => {
    if (n.nodeType === 3) {
      if (ctx.vis) addText(clean(ctx.pre ? n.data : n.data.replace(/\s+/g, ' ')));
      return;
    }
    if (n.nodeType !== 1) return;
    const el = n;
    const tag = el.localName;
    if (SKIP.has(tag) || el.getAttribute('aria-hidden') === 'true') return;
    const st = getComputedStyle(el);
    const d = st.display;
    if (d === 'none' || st.contentVisibility === 'hidden' || st.opacity === '0') return;
    // The box of a plain inline element (text in a span) tells nothing the
    // checks use: it can be neither clipped, sized nor moved.
    let r = null;
    if (d !== 'contents' && (d !== 'inline' || REPLACED.has(tag))) {
      r = el.getBoundingClientRect();
      if (boxHidden(el, st, r)) return;
    }
    const vis = st.visibility === 'visible';
    if (tag === 'br') { addText('\n'); return; }
    if (tag === 'img') {
      const alt = (el.getAttribute('alt') || '').trim();
      if (vis && alt && roleOf(el) !== 'presentation') addText(' ![' + clean(alt).replace(/[\[\]]/g, '') + '] ');
      return;
    }
    if (tag === 'input' || tag === 'select' || tag === 'textarea') {
      if (vis) field(el, ctx);
      return;
    }
    if (tag === 'iframe' || tag === 'frame') {
      if (!vis || !r) return;
      flush(ctx);
      emit({ k: 'fr', t: '', fx: r.left + el.clientLeft + parseFloat(st.paddingLeft || '0'),
        fy: r.top + el.clientTop + parseFloat(st.paddingTop || '0') }, ctx);
      return;
    }
    // A label with its control: the field carries the label's words.
    if (tag === 'label' && el.control && el.control.localName !== 'button') {
      const c = el.control;
      if (el.contains(c) && vis) visit(c, ctx);
      return;
    }
    const inline = d.startsWith('inline') || d === 'contents' || d === 'ruby';
    // A control perception reported: its text is marked with its number.
    const n0 = map && (MARKED.has(tag) || MARKED_ROLES.has(roleOf(el))) ? map.get(el) : undefined;
    const mark = (inner) => {
      if (n0 === undefined) return inner();
      addText('\u0001' + n0 + '\u0002');
      inner();
      addText('\u0003');
    };
    if (ctx.inline || (inline && !HEADINGS[tag])) {
      // Boxes of their own are separate words.
      const boxed = d !== 'inline' && d !== 'contents';
      const inner = vis === ctx.vis ? ctx : { ...ctx, vis };
      if (boxed || !inline) addText(' ');
      if (n0 === undefined) walkChildren(el, inner);
      else mark(() => walkChildren(el, inner));
      if (boxed || !inline) addText(' ');
      return;
    }
    // A block: what came before it is a paragraph of its own.
    const sub = { ...ctx, vis };
    flush(ctx);
    const region = regionOf(el, st, ctx);
    if (region) { sub.region = region; sub.ri = ++regions; }
    const role = roleOf(el);
    const heading = HEADINGS[tag] || (role === 'heading' ? (parseInt(el.getAttribute('aria-level'), 10) || 2) : 0);
    stack.push({ c: -1, r, sec: isSection(el) || !!heading });
    try {
      if (heading) {
        walkChildren(el, { ...sub, inline: true });
        flush(sub, 'h', { l: Math.min(Math.max(heading, 1), 6) });
      } else if (tag === 'table' || d === 'table') {
        if (tag === 'table' && !el.querySelector('table') && role !== 'presentation' && role !== 'none') {
          table(el, sub);
        } else {
          walkChildren(el, sub);
        }
      } else if (tag === 'ul' || tag === 'ol' || role === 'list') {
        const depth = ctx.kind === 'li' ? ctx.depth + 1 : 0;
        let ord = tag === 'ol' ? (el.start || 1) : 0;
        for (const c of childrenOf(el)) {
          if (cut) break;
          if (c.nodeType === 1 && (c.localName === 'li' || roleOf(c) === 'listitem')) {
            const item = { started: false };
            visit(c, { ...sub, kind: 'li', depth, ord, item, listItem: true });
            if (ord && item.started) ord++;
          } else {
            visit(c, sub);
          }
        }
        flush(sub);
      } else if (tag === 'li' && ctx.listItem) {
        walkChildren(el, { ...sub, listItem: false });
        flush({ ...sub, listItem: false });
      } else if (tag === 'dt' || tag === 'dd') {
        walkChildren(el, { ...sub, inline: true });
        flush(sub, tag);
      } else if (tag === 'blockquote') {
        walkChildren(el, { ...sub, kind: ctx.kind === 'li' ? 'li' : 'q' });
        flush({ ...sub, kind: ctx.kind === 'li' ? 'li' : 'q' });
      } else if (tag === 'pre') {
        walkChildren(el, { ...sub, pre: true, inline: true });
        const t = buf.join('').replace(/\s+$/, '').replace(/^\n+/, '');
        buf = [];
        if (t.trim()) { words += countWords(t); emit({ k: 'pre', t }, sub); }
      } else if (tag === 'details' && !el.open) {
        const summary = Array.from(el.children).find((c) => c.localName === 'summary');
        if (summary) {
          const saved = buf;
          buf = [];
          const s0 = map ? map.get(summary) : undefined;
          if (s0 !== undefined) addText('\u0001' + s0 + '\u0002');
          walkChildren(summary, { ...sub, inline: true });
          if (s0 !== undefined) addText('\u0003');
          flush(sub, 'det');
          buf = saved;
        }
      } else if (shortRow(el, st, r)) {
        mark(() => walkChildren(el, { ...sub, inline: true }));
        flush(sub);
      } else {
        mark(() => walkChildren(el, sub));
        flush(sub);
      }
    } finally {
      stack.pop();
    }
  };

  // The region around a target: a table, dialog, list, form or section
  // around it, or the nearest card (an ancestor with much more text of its
  // own), whichever comes first; the target itself when it is one.
  const regionAround = (t) => {
    const own = (t.textContent || '').length;
    for (let e = t; e && e !== doc.body && e !== doc.documentElement;) {
      if (e.nodeType === 1) {
        if (e.localName === 'table' || (isSection(e) && !['td', 'th', 'tr'].includes(e.localName))) return e;
        const inTable = e.closest && e.closest('table');
        if (!inTable && e !== t && (e.textContent || '').length >= 2 * own + 20) return e;
      }
      const p = e.parentElement;
      e = p || (e.getRootNode && e.getRootNode().host) || null;
    }
    return t;
  };

  const start = target ? regionAround(target.nodeType === 1 ? target : target.parentElement) : doc.body;
  const base = { vis: true, region: null };
  if (start) {
    if (start !== doc.body) {
      // The region's own visibility comes from its ancestors.
      const st = getComputedStyle(start);
      base.vis = st.visibility === 'visible';
    }
    visit(start, base);
    flush(base);
  }
  return JSON.stringify({
    url: doc.URL, title: doc.title, blocks, parents, sections, cut, words,
  });
}
