//! Node identities, numbered once per document and told on demand.
//!
//! Telling which node an element is costs the page's main thread 20-40 µs per
//! node (the protocol's deep serialization): on a first look at a page with
//! 700 controls in view, more than the rest of enumeration. So each document
//! gets a registry: an object in its main world that numbers every node the
//! enumerator reports and holds it while it stays in the document. Only
//! seamark holds a handle to it (no global: the page cannot reach it), so it
//! lives as long as the document. A look reports registry numbers only; the backendNodeId of a
//! node is asked for when a command names its element (see
//! `frames::identify`), and kept here, number → backendNodeId, for the
//! document's life: a node does not change its id while it lives.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::browser::Link;
use chromiumoxide::cdp::js_protocol::runtime::{
    EvaluateParams, ExecutionContextId, RemoteObjectId,
};

use super::recent::Recent;
use super::PerceiveError;

/// Object group of the registries: never released; a registry goes with its document.
const GROUP: &str = "seamark-registry";

/// How many documents' registries are remembered (frames and navigations add up).
const MAX_DOCUMENTS: usize = 32;

/// Most node numbers learned per document. The numbers come from the page's
/// main world, where a hostile page can bend the built-ins the enumerator uses:
/// a number past this is not learned (it is asked for each time its element is
/// named), rather than allocated for.
const MAX_NUMBER: usize = 1 << 20;

/// The enumerator: one function, its body in files by concern, joined here
/// into the one script the page is given.
const ENUMERATE_JS: &str = concat!(
    include_str!("enumerate/head.js"),
    include_str!("enumerate/names.js"),
    include_str!("enumerate/walk.js"),
    include_str!("enumerate/keep.js"),
    include_str!("enumerate/geometry.js"),
    include_str!("enumerate/occlusion.js"),
    include_str!("enumerate/describe.js"),
    include_str!("enumerate/text.js"),
);

/// How the enumerator yields to the page's event loop: a message to itself,
/// over a channel only the registry holds (the page sees no event of ours).
/// Measured against `scheduler.yield()`, whose continuation runs ahead of the
/// screenshot's work: 55 against 66 ms per perception of old reddit.
///
/// None (never yield) where the document may not run scripts, as in a frame
/// sandboxed without `allow-scripts` (ad and comment embeds): there its tasks
/// never run, and a yield would never come back. A listener of our own does
/// not run there either, which tells.
const PAUSE_JS: &str = "(() => { \
    const t = new EventTarget(); let runs = false; \
    t.addEventListener('x', () => { runs = true; }); t.dispatchEvent(new Event('x')); \
    if (!runs) return null; \
    const c = new MessageChannel(), waiting = []; \
    c.port1.onmessage = () => { const go = waiting.shift(); if (go) go(); }; \
    return () => new Promise((go) => { waiting.push(go); c.port2.postMessage(0); }); \
  })()";

/// What tells the enumerator that nothing happened on the page since its last
/// look, so that work on the whole document can be kept (see enumerate/keep.js,
/// `memo`). A function of whether the document runs scripts (`pause` is not
/// null). It counts every DOM mutation, style attributes included, in the
/// document and in the shadow roots it is given (`watch`), and every event
/// after which styles may match otherwise without a mutation: pointer and keys (hover, focus,
/// active), form input (checked, values), toggles (popovers, details), the
/// address's fragment (`:target`), loads (images and fonts that change the
/// layout), scrolls (of any element), resizes, transitions and animations
/// starting and ending. Its listeners are passive and capture on the window,
/// where every event passes first; an element's `load` and `error` stop at
/// the document (they never reach the window), so those two are caught there.
///
/// Where the document runs no scripts (a frame sandboxed without
/// `allow-scripts`: comment and ad embeds, 295 of felixge.de's 326 controls)
/// no listener runs, and no mutation record was seen to queue either. If its
/// origin is opaque too (no `allow-same-origin`), no script anywhere can reach
/// it: only the browser changes it, as a person points, types, clicks and
/// scrolls. There the states those would change are read on each count: the
/// elements pointed at, focused, checked, open or invalid (what style rules
/// match on), the images loaded and the fonts' status; what cannot be read
/// counts as a change. A scroll inside it is not told: enumerate/keep.js then
/// keeps only a whole table whose boxes did not move. A document without
/// scripts that a parent of its origin can edit gets no counter (null), and
/// the enumerator keeps nothing there. Its listener is named
/// `__seamarkBump`, so that typing can tell it from the page's (see
/// `act::input::put_text`).
const CHANGES_JS: &str = "((scripted) => { \
    let n = 0; const __seamarkBump = () => { n++; }; \
    const o = new MutationObserver(__seamarkBump); \
    const all = { subtree: true, childList: true, attributes: true, characterData: true }; \
    o.observe(document, all); \
    const roots = new WeakSet(); \
    const watch = (r) => { if (roots.has(r)) return false; roots.add(r); o.observe(r, all); return true; }; \
    if (!scripted && String(self.origin) !== 'null') return null; \
    if (!scripted) { \
      const states = [':hover', ':focus-within', ':checked', ':indeterminate', ':placeholder-shown', ':invalid', \
        ':target', ':popover-open', ':modal', ':open'].filter((s) => { \
        try { document.querySelector(s); return true; } catch (e) { return false; } }).join(','); \
      let last = []; \
      const read = () => { \
        let now = []; \
        try { \
          now = [...document.querySelectorAll(states)]; \
          let loaded = 0; for (const i of document.images) if (i.complete) loaded++; \
          now.push(loaded, document.fonts ? document.fonts.status : ''); \
        } catch (e) { n++; } \
        if (now.length !== last.length || now.some((x, i) => x !== last[i])) n++; \
        last = now; \
      }; \
      return { count: () => { read(); return n; }, watch }; \
    } \
    for (const t of ['pointerover', 'pointerout', 'pointerdown', 'pointerup', 'click', 'keydown', \
      'keyup', 'focusin', 'focusout', 'input', 'change', 'beforetoggle', 'toggle', 'hashchange', 'load', 'scroll', \
      'resize', 'fullscreenchange', 'transitionstart', 'transitionend', 'transitioncancel', 'animationstart', \
      'animationend', 'animationcancel']) window.addEventListener(t, __seamarkBump, { capture: true, passive: true }); \
    for (const t of ['load', 'error']) document.addEventListener(t, __seamarkBump, { capture: true, passive: true }); \
    if (document.fonts) document.fonts.addEventListener('loadingdone', __seamarkBump); \
    return { count: () => { if (o.takeRecords().length) n++; return n; }, watch }; \
  })";

/// Makes a registry. Others may leave their own compiled scripts on it (the
/// reader does, see read/mod.rs). `getEventListeners` exists only while an evaluation with
/// the command line API runs; the function itself keeps working after it. The
/// enumerator is compiled once per document and kept here, so the engine
/// keeps what it learned running it: from the second perception of a page on,
/// its loops run optimized instead of interpreted (a third of its time).
fn new_registry_js() -> String {
    format!(
        "(() => {{ const pause = {PAUSE_JS}; \
         return {{ map: new WeakMap(), next: 0, nodes: [], enumerate: ({ENUMERATE_JS}), \
         listeners: typeof getEventListeners === 'function' ? getEventListeners : null, \
         pause, changes: ({CHANGES_JS})(!!pause), sheets: new Map() }}; }})()"
    )
}

/// One document's registry, as the caller knows it.
#[derive(Debug)]
pub(crate) struct Registry {
    /// The handle to the registry object.
    pub object: RemoteObjectId,
    /// Which registry this is, of all made in this process: the numbers it
    /// gives mean nodes of its document only.
    pub document: u64,
    /// backendNodeId of each registry number; 0 where not learned.
    ids: Vec<i64>,
    /// Work for the document left running after a perception (stylesheet
    /// texts on their way to the page), which the next one waits for.
    pending: Option<tokio::task::JoinHandle<()>>,
}

impl Registry {
    /// A registry the caller knows nothing of yet, at `object`.
    fn new(object: RemoteObjectId) -> Self {
        static MADE: AtomicU64 = AtomicU64::new(1);
        Self {
            object,
            document: MADE.fetch_add(1, Ordering::Relaxed),
            ids: Vec::new(),
            pending: None,
        }
    }

    /// Runs `work` for this document off the perception's path: spawned, and
    /// waited for when the registry is next taken (without a tokio runtime to
    /// spawn on, now). One at a time: an earlier one is waited for first.
    pub async fn later(&mut self, work: impl Future<Output = ()> + Send + 'static) {
        self.settle().await;
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => self.pending = Some(runtime.spawn(work)),
            Err(_) => work.await,
        }
    }

    /// Waits for the work [`Registry::later`] left running.
    async fn settle(&mut self) {
        if let Some(work) = self.pending.take() {
            if let Err(e) = work.await {
                tracing::debug!("work left for the next perception failed: {e}");
            }
        }
    }

    /// Records that registry number `number` is node `backend_node_id`.
    pub fn learn(&mut self, number: usize, backend_node_id: i64) {
        if number >= MAX_NUMBER {
            return;
        }
        if self.ids.len() <= number {
            self.ids.resize(number + 1, 0);
        }
        self.ids[number] = backend_node_id;
    }

    /// backendNodeId of every registry number, 0 where not learned.
    pub fn numbers(&self) -> Vec<i64> {
        self.ids.clone()
    }

    /// The backendNodeId of registry number `number`, if known.
    pub fn node(&self, number: usize) -> Option<i64> {
        self.ids.get(number).copied().filter(|&b| b > 0)
    }
}

/// Which document a registry belongs to: a frame's main world in one page.
#[derive(Debug, PartialEq)]
struct Key {
    target: String,
    frame: String,
    context: ExecutionContextId,
}

static REGISTRIES: Recent<Key, Registry> = Recent::new(MAX_DOCUMENTS);

fn key(link: &Link, frame: &str, context: ExecutionContextId) -> Key {
    Key {
        target: link.target_id().to_string(),
        frame: frame.to_string(),
        context,
    }
}

/// Takes the registry of a frame's document out of the cache (`true`), or
/// makes one (`false`). Give it back with [`give_back`] once its answers are
/// read. One whose document could not be enumerated is not given back: its
/// handle may be gone with the document.
pub(crate) async fn take(
    link: &Link,
    frame: &str,
    context: ExecutionContextId,
) -> Result<(Registry, bool), PerceiveError> {
    if let Some(mut registry) = REGISTRIES.take(&key(link, frame, context)) {
        registry.settle().await;
        return Ok((registry, true));
    }
    let mut params = EvaluateParams::new(new_registry_js());
    params.context_id = Some(context);
    params.include_command_line_api = Some(true);
    params.silent = Some(true);
    params.object_group = Some(GROUP.into());
    let reply = link.execute(params).await?;
    let object = reply.result.result.object_id.clone().ok_or_else(|| {
        PerceiveError::Enumerate("the frame's node registry could not be made".into())
    })?;
    Ok((Registry::new(object), false))
}

/// Whether a frame's document has a registry kept: it was looked at before,
/// and no look holds the registry now.
pub(crate) fn known(link: &Link, frame: &str, context: ExecutionContextId) -> bool {
    REGISTRIES.contains(&key(link, frame, context))
}

/// Puts a registry back for the next perception of the same document.
pub(crate) fn give_back(link: &Link, frame: &str, context: ExecutionContextId, registry: Registry) {
    REGISTRIES.put(key(link, frame, context), registry);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_is_told_only_once_learned() {
        let mut r = Registry::new(RemoteObjectId::new("registry"));
        r.learn(4, 15);
        assert_eq!(r.node(3), None);
        assert_eq!(r.node(4), Some(15));
        assert_eq!(r.node(9), None);
        let other = Registry::new(RemoteObjectId::new("registry"));
        assert_ne!(r.document, other.document);
    }

    #[test]
    fn a_number_from_a_bent_page_allocates_nothing() {
        let mut r = Registry::new(RemoteObjectId::new("registry"));
        r.learn(usize::MAX, 7);
        r.learn(1 << 40, 7);
        assert_eq!(r.node(1 << 40), None);
        assert!(r.ids.capacity() < 1024);
    }
}
