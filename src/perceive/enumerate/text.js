  // enumerate/text.js: the page signature's text part, and the answer.
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
