  // enumerate/occlusion.js: what covers each control: dialogs, layers, hit tests and their spot checks.
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
  // Each point is checked against the layers that reach into its row of the
  // viewport only: felixge.de's comment frame has 435 layers over 300
  // controls in view, and checking each against all took 1.4-8.8 ms of its
  // first look (0.7-2.4 ms so).
  const ROWS = 32, rowHeight = Math.max(1, vh / ROWS);
  const rowOf = (y) => Math.min(ROWS - 1, Math.max(0, Math.floor(y / rowHeight)));
  let layerRows = null;
  const layersByRow = () => {
    const rows = Array.from({ length: ROWS }, () => []);
    for (const b of layerBoxes) for (let r = rowOf(b.y), last = rowOf(b.y + b.h); r <= last; r++) rows[r].push(b);
    return rows;
  };
  const clearAt = (el, x, y) => {
    if (style(el).pointerEvents === 'none') return false;
    if (!layerRows) layerRows = layersByRow();
    for (const b of layerRows[rowOf(y)] || layerBoxes) {
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
