// The live view: the newest frame asked for after the last one shown (a
// slow viewer gets fewer, and slows nothing else), the state beside it,
// and, while the person has the browser, their pointer and keys sent to
// it in order, as fractions of the frame (its size on this screen does
// not matter).
'use strict';

const $ = (id) => document.getElementById(id);
const screen = $('screen');
let seq = 0;
let state = { version: 0 };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function frames() {
  for (;;) {
    try {
      const r = await fetch('frame?after=' + seq, { cache: 'no-store' });
      if (r.status === 200) {
        seq = Number(r.headers.get('x-seq')) || seq;
        const url = URL.createObjectURL(await r.blob());
        const old = screen.src;
        screen.src = url;
        screen.dataset.seq = String(seq);
        if (old.startsWith('blob:')) setTimeout(() => URL.revokeObjectURL(old), 1000);
      } else if (r.status !== 204) {
        await sleep(1000);
      }
    } catch (e) {
      await sleep(1000);
    }
  }
}

function render() {
  const s = state;
  const mine = s.control === 'person';
  let status;
  if (s.ended) status = 'the run has ended';
  else if (mine) status = 'you have the browser';
  else if (s.control === 'wanted') status = 'the agent stops after this step…';
  else status = 'step ' + s.step + ': ' + (s.doing || '');
  $('status').textContent = status;
  $('where').textContent = (s.title ? s.title + ' · ' : '') + (s.url || '');
  $('take').hidden = s.ended || s.control !== 'agent';
  $('back').hidden = !mine;
  $('asked').hidden = !s.asked || mine;
  $('asked').textContent = s.asked ? 'The agent asks for your hands: ' + s.asked : '';
  screen.classList.toggle('yours', mine);
  document.body.dataset.control = s.control;
}

async function states() {
  for (;;) {
    try {
      const r = await fetch('state?after=' + state.version, { cache: 'no-store' });
      if (r.ok) {
        state = await r.json();
        render();
      } else {
        await sleep(1000);
      }
    } catch (e) {
      await sleep(1000);
    }
  }
}

async function post(path, body) {
  const r = await fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (r.ok && r.status === 200) {
    state = await r.json();
    render();
  }
  return r;
}

// Input goes out one event at a time, in order; a move waiting behind
// others is replaced by the newest one.
let queue = Promise.resolve();
let pendingMove = null;
function send(event) {
  if (state.control !== 'person') return;
  if (event.kind === 'mouse' && event.action === 'move') {
    const first = pendingMove === null;
    pendingMove = event;
    if (!first) return;
    queue = queue.then(() => {
      const e = pendingMove;
      pendingMove = null;
      return post('input', e).catch(() => {});
    });
    return;
  }
  queue = queue.then(() => post('input', event).catch(() => {}));
}

function at(e) {
  const r = screen.getBoundingClientRect();
  return { x: (e.clientX - r.left) / r.width, y: (e.clientY - r.top) / r.height };
}
const mods = (e) => (e.altKey ? 1 : 0) | (e.ctrlKey ? 2 : 0) | (e.metaKey ? 4 : 0) | (e.shiftKey ? 8 : 0);
const BUTTONS = ['left', 'middle', 'right'];

function mouse(action) {
  return (e) => {
    if (state.control !== 'person') return;
    e.preventDefault();
    if (action === 'down') screen.focus();
    const p = at(e);
    send({
      kind: 'mouse', action, x: p.x, y: p.y,
      button: action === 'move' ? 'none' : (BUTTONS[e.button] || 'left'),
      buttons: e.buttons, clicks: e.detail || 1, modifiers: mods(e),
    });
  };
}
screen.addEventListener('mousedown', mouse('down'));
screen.addEventListener('mouseup', mouse('up'));
screen.addEventListener('mousemove', mouse('move'));
screen.addEventListener('contextmenu', (e) => { if (state.control === 'person') e.preventDefault(); });
screen.addEventListener('dragstart', (e) => e.preventDefault());
screen.addEventListener('wheel', (e) => {
  if (state.control !== 'person') return;
  e.preventDefault();
  const p = at(e);
  const unit = e.deltaMode === 1 ? 40 : e.deltaMode === 2 ? 800 : 1;
  send({ kind: 'wheel', x: p.x, y: p.y, dx: e.deltaX * unit, dy: e.deltaY * unit });
}, { passive: false });

function key(action) {
  return (e) => {
    if (state.control !== 'person') return;
    e.preventDefault();
    send({ kind: 'key', action, key: e.key, code: e.code, key_code: e.keyCode, modifiers: mods(e) });
  };
}
screen.addEventListener('keydown', key('down'));
screen.addEventListener('keyup', key('up'));
screen.addEventListener('paste', (e) => {
  if (state.control !== 'person') return;
  e.preventDefault();
  const text = e.clipboardData ? e.clipboardData.getData('text') : '';
  if (text) send({ kind: 'text', text });
});

$('take').addEventListener('click', () => post('take', {}));
$('back').addEventListener('submit', (e) => {
  e.preventDefault();
  const note = $('note').value;
  $('note').value = '';
  queue = queue.then(() => post('back', { note }));
});

frames();
states();
