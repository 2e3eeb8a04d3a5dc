  // enumerate/names.js: visible text, roles and accessible names.
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
