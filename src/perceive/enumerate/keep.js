  // enumerate/keep.js: what is read again on every look (values, checks, focus), what goes on the wire, and the work kept from the last look.
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

  // A node's number in the registry, given the first time it is reported.
  // `reg.nodes` holds each node by its number, set again whenever it is
  // reported (one a framework took out and put back is held again). Held,
  // not weakly referenced: a WeakRef costs 5-10 µs to make on a first look.
  const numberOf = (n) => {
    let i = reg.map.get(n);
    if (i === undefined) { i = reg.next++; reg.map.set(n, i); }
    reg.nodes[i] = n;
    return i;
  };
  // Nodes that left the document are let go, whenever more numbers were
  // given since the last sweep than nodes it kept (a feed scrolled for an
  // hour holds what is in it, not all it ever showed).
  const swept = reg.swept || { at: 0, kept: 0 };
  if (reg.next - swept.at > Math.max(1000, swept.kept)) {
    let kept = 0;
    for (let i = 0; i < reg.nodes.length; i++) {
      const n = reg.nodes[i];
      if (n === undefined) continue;
      if (n.isConnected) kept++; else reg.nodes[i] = undefined;
    }
    reg.swept = { at: reg.next, kept };
  }
  // The answer: the kept elements, and the custom elements that may hide a
  // closed shadow root (`meta.hosts` indexes them in `nodes`).
  const answer = (kept, hostEls, look) => {
    const meta = {
      url: String(doc.location ? doc.location.href : ''), title: String(doc.title || ''),
      vw, vh, sx, sy, dw, dh, els: kept, hosts: hostEls.map((_, i) => i), listeners: !!listeners, ...look,
    };
    return { meta: JSON.stringify(meta), nodes: hostEls };
  };
  // Work on the whole document kept from the last look while nothing could
  // have changed it: no mutation and no event that `reg.changes` counted, the
  // same stylesheets (as `positionRules` compares them), viewport, scroll,
  // document size and fullscreen element, and no animation running. Kept: the
  // page text, the elements that escape their ancestors' boxes (on old
  // reddit, half of a look), the verdict of the spot checks and the table
  // itself (see below). A closed shadow root's own look keeps nothing.
  const changes = reg.changes || null;
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
  // In a sealed document (no scripts, an opaque origin: see registry.rs) a
  // scroll inside it is not counted: boxes that moved are all that shows of
  // it, and then nothing of the last look is kept.
  if (lastTable && typeof reg.pause !== 'function') {
    memo = { seen: memo.seen };
    reg.memo = memo;
  }
