  // enumerate/geometry.js: the walk run, labels, positioned layers, boxes and visibility.
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
