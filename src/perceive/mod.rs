//! Perception: from one consistent moment of the page, an [`Observation`](crate::perceive::Observation): the
//! screenshot, the [`ElementTable`](crate::perceive::ElementTable), the page signature, URL and title.
//!
//! Perception never changes the page: the enumerator only reads (no attributes,
//! no overlay nodes, no focus, selection or scroll change), and the moment is
//! checked by a mutation counter that lives in an isolated world.

mod ambient;
mod covers;
mod frames;
mod list;
mod places;
mod prime;
mod raw;
mod recent;
mod registry;
mod sheets;
mod signature;
mod table;

use std::time::{Duration, Instant};

use chromiumoxide::cdp::browser_protocol::page::CreateIsolatedWorldParams;
use chromiumoxide::cdp::js_protocol::runtime::{
    EvaluateParams, ExecutionContextId, ReleaseObjectGroupParams,
};
use chromiumoxide::Page;

use serde_json::Value;

use crate::browser::{Link, Session, Viewport};

pub use ambient::Ambient;
pub use list::{element_list, line, DEFAULT_LIST_CAP};
pub use prime::prime;
pub use signature::{page_signature, Fnv64};
pub use table::{Direction, Element, ElementState, ElementTable, NodeNumbers, Point, Rect};

/// Errors of perception.
#[derive(Debug, thiserror::Error)]
pub enum PerceiveError {
    /// A protocol command failed (the page crashed or closed, the browser went away).
    #[error("browser command failed during perception: {0}")]
    Cdp(chromiumoxide::error::CdpError),
    /// The enumerator could not run or answered something unreadable.
    #[error("element enumeration failed: {0}")]
    Enumerate(String),
    /// The screenshot could not be taken or decoded.
    #[error(transparent)]
    Browser(#[from] crate::browser::BrowserError),
}

// Written out, not `#[from]`: the message says the cause, so it is not the source too.
impl From<chromiumoxide::error::CdpError> for PerceiveError {
    fn from(e: chromiumoxide::error::CdpError) -> Self {
        PerceiveError::Cdp(e)
    }
}

/// Documents a look waits for when the one it looked at went away under it.
const MAX_NAVIGATIONS: usize = 3;

/// Longest wait for the document that replaced the one a look lost.
const NAVIGATION_WAIT: Duration = Duration::from_secs(10);

/// Whether an error says the page's document (its execution context) went
/// away while a look ran: Chromium's "Cannot find context with specified
/// id" and "Execution context was destroyed".
fn document_gone(error: &PerceiveError) -> bool {
    let text = error.to_string();
    text.contains("Cannot find context with specified id")
        || text.contains("Execution context was destroyed")
}

/// Limits of one perception.
#[derive(Debug, Clone)]
pub struct PerceiveOptions {
    /// Longest accessible name kept.
    pub max_name: usize,
    /// Most options kept per select.
    pub max_options: usize,
    /// Most candidate elements examined per document or shadow root.
    pub max_elements: usize,
    /// Most offscreen elements kept in the table per document or shadow root,
    /// nearest the viewport first; every element in view is always kept.
    pub max_offscreen: usize,
    /// Attempts to get a moment in which the page did not change.
    pub max_attempts: usize,
    /// Hit-test every control in view to tell whether it is covered, instead
    /// of only those a positioned element or a positioned `::before`/`::after`
    /// overlaps. Slower on pages with many controls in view (a hit test costs
    /// up to 0.1 ms there); for checking the faster analysis.
    pub exact_occlusion: bool,
    /// How many of the controls the analysis finds uncovered are hit-tested
    /// anyway, spread over the page, to check it; one disagreement and all of
    /// them are. 0 trusts the analysis.
    pub spot_checks: usize,
    /// Milliseconds the enumerator runs before it lets the page's main thread
    /// do other work, while the screenshot is being taken: the screenshot needs
    /// that thread for a moment, and gets it between the enumerator's steps
    /// instead of after them. 0 never yields.
    pub yield_ms: f64,
    /// Screens beyond each edge of the viewport past which a part of the page
    /// is not walked, where its box bounds what it draws (see docs/perception.md,
    /// "What perception finds"). Only the offscreen elements nearest the
    /// viewport are kept anyway; on a long feed this skips most of the page.
    /// 0 walks every part.
    pub far_screens: f64,
}

impl Default for PerceiveOptions {
    fn default() -> Self {
        Self {
            max_name: 80,
            max_options: 20,
            max_elements: 5000,
            max_offscreen: 100,
            max_attempts: 3,
            exact_occlusion: false,
            spot_checks: 10,
            yield_ms: 3.0,
            far_screens: 2.0,
        }
    }
}

/// How long the parts of one perception took.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct PerceiveTimings {
    /// Enumerating elements in every frame.
    pub enumerate_ms: f64,
    /// The screenshot.
    pub screenshot_ms: f64,
    /// The whole perception, retries included.
    pub total_ms: f64,
    /// How many attempts it took to get one consistent moment.
    pub attempts: usize,
    /// Parts of the work on a whole document (its text, the parts that escape
    /// their ancestors' boxes, the verdict of the occlusion spot checks, its
    /// table) kept from the last look, summed over frames:
    /// nothing on the page changed since (see docs/perception.md, "The page signature").
    pub reused: usize,
    /// Frames whose whole table was the last look's, with each control's
    /// value, checks and focus read again: nothing changed and no box moved.
    pub tables_kept: usize,
}

/// What the page looked like at one moment.
#[derive(Debug, Clone)]
pub struct Observation {
    /// CDP frame id of the top-level frame.
    pub frame: String,
    /// URL of the top-level document.
    pub url: String,
    /// Title of the top-level document.
    pub title: String,
    /// The viewport in CSS pixels.
    pub viewport: Viewport,
    /// Scroll offset of the top-level document.
    pub scroll: Point,
    /// The viewport screenshot, PNG.
    pub screenshot_png: Vec<u8>,
    /// The interactive elements, in mark-id order.
    pub table: ElementTable,
    /// See [`page_signature`].
    pub signature: String,
    /// The signature without the text: URL and elements only. Two looks
    /// whose structures match differ, if at all, in their text.
    pub structure: String,
    /// One hash per line of each frame's text, frames in tree order: what
    /// tells a line that changes on its own (see [`Ambient`]).
    pub text_lines: Vec<Vec<u32>>,
    /// Characters of the rendered text of every frame: what `READ` would
    /// have to go through.
    pub text_chars: usize,
    /// Whether the page held still across the perception. When it kept changing
    /// for every attempt, the last attempt is kept and this is false.
    pub stable: bool,
    /// Things the reader should know: skipped frames, truncation, instability.
    pub notes: Vec<String>,
    /// Costs.
    pub timings: PerceiveTimings,
}

impl Observation {
    /// A look with a URL and an element table and nothing else (no
    /// screenshot, text or signature), for tools and tests that build one by
    /// hand.
    pub fn of_table(url: &str, table: ElementTable) -> Observation {
        Observation {
            frame: String::new(),
            url: url.into(),
            title: String::new(),
            viewport: Viewport::default(),
            scroll: Point::default(),
            screenshot_png: Vec::new(),
            table,
            signature: String::new(),
            structure: String::new(),
            text_lines: Vec::new(),
            text_chars: 0,
            stable: true,
            notes: Vec::new(),
            timings: PerceiveTimings::default(),
        }
    }
}

/// The mutation watcher of a document, made once in an isolated world
/// (invisible to the page), and what it is asked: `$ask` is `__seamarkWatch`
/// (every mutation) or `__seamarkMoved` (those that are no ambient motion).
/// Style attribute changes are left out of both: animations rewrite them
/// every frame without changing what is on the page. A node that keeps
/// changing (three times or more, each within 1.5 s of the last, over 250
/// ms or more: a clock, a ticker, a carousel) moves on its own: its changes
/// are not counted as moves.
macro_rules! watch_js {
    ($ask:literal) => {
        concat!(
            r#"(() => {
  const g = globalThis;
  if (!g.__seamarkWatch) {
    let n = 0, moved = 0;
    const seen = new WeakMap();
    const count = (rs) => {
      const now = performance.now();
      for (const r of rs) {
        if (r.attributeName === 'style') continue;
        n++;
        const node = r.target.nodeType === 1 ? r.target : r.target.parentNode;
        if (!node) { moved++; continue; }
        let s = seen.get(node);
        if (!s || now - s.last > 1500) { s = { n: 0, first: now, last: now }; seen.set(node, s); }
        s.n++;
        s.last = now;
        if (s.n < 3 || now - s.first < 250) moved++;
      }
    };
    const o = new MutationObserver(count);
    o.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    g.__seamarkWatch = () => { count(o.takeRecords()); return n; };
    g.__seamarkMoved = () => { count(o.takeRecords()); return moved; };
    g.__seamarkOwnMotion = () => { count(o.takeRecords()); return n - moved; };
  }
  return g."#,
            $ask,
            r#"();
})()"#
        )
    };
}

/// Every DOM mutation of the document so far (see [`watch_js`]).
pub(crate) const WATCH_JS: &str = watch_js!("__seamarkWatch");

/// The mutations of the document so far that were no ambient motion.
pub(crate) const MOVED_JS: &str = watch_js!("__seamarkMoved");

/// The isolated world of each page's current document, by target id: one
/// world (and one MutationObserver) per document, made on first use and again
/// after a navigation replaced the document. A new world per call would leave
/// an observer behind on every perception and every command. Bounded: pages
/// come and go (tabs, replaced crashed pages).
static WATCH_WORLDS: recent::Recent<String, ExecutionContextId> = recent::Recent::new(32);

async fn new_world(page: &Page) -> Option<ExecutionContextId> {
    let frame = page.mainframe().await.ok()??;
    let world = page
        .execute(
            CreateIsolatedWorldParams::builder()
                .frame_id(frame)
                .world_name("seamark-watch")
                .build()
                .ok()?,
        )
        .await
        .ok()?;
    Some(world.result.execution_context_id)
}

async fn eval_in(page: &Page, context: ExecutionContextId, expression: &str) -> Option<Value> {
    let mut params = EvaluateParams::new(expression);
    params.context_id = Some(context);
    params.return_by_value = Some(true);
    params.silent = Some(true);
    let reply = page.execute(params).await.ok()?;
    if reply.result.exception_details.is_some() {
        return None;
    }
    reply.result.result.value.clone()
}

/// Evaluates `expression` in seamark's isolated world of the page's current
/// document, which the page cannot see. `None` when the page is busy
/// navigating or gone.
pub(crate) async fn watch_eval(page: &Page, expression: &str) -> Option<Value> {
    let target = page.target_id().inner().clone();
    if let Some(context) = WATCH_WORLDS.get(&target) {
        if let Some(v) = eval_in(page, context, expression).await {
            return Some(v);
        }
    }
    // The document changed (or this is the first look): a world for the new one.
    let Some(context) = new_world(page).await else {
        WATCH_WORLDS.take(&target);
        return None;
    };
    WATCH_WORLDS.put(target, context);
    eval_in(page, context, expression).await
}

/// The mutations of the document so far that were ambient motion (a node
/// that keeps changing on its own).
const OWN_MOTION_JS: &str = watch_js!("__seamarkOwnMotion");

/// Whether the page's watcher saw something change on its own (a clock, a
/// ticker) since it was set up: known before two looks ever fell on either
/// side of a tick. `false` when the page cannot say.
pub(crate) async fn moves_on_its_own(page: &Page) -> bool {
    watch_eval(page, OWN_MOTION_JS)
        .await
        .and_then(|v| v.as_i64())
        .is_some_and(|n| n > 0)
}

/// Every DOM mutation of the page's document so far, as its watcher counts
/// them (`None` when the page cannot say, as while it navigates).
pub(crate) async fn mutation_count(page: &Page) -> Option<i64> {
    watch_eval(page, WATCH_JS).await?.as_i64()
}

async fn timed<T>(f: impl std::future::Future<Output = T>) -> (T, Duration) {
    let start = Instant::now();
    let out = f.await;
    (out, start.elapsed())
}

/// Perceives the session's page.
pub async fn perceive(
    session: &Session,
    options: &PerceiveOptions,
) -> Result<Observation, PerceiveError> {
    let page = session.page();
    let viewport = session.viewport();
    let start = Instant::now();
    prime::primed(page).await;
    let opts = frames::EnumerateOptions {
        yield_ms: options.yield_ms,
        ..enumerate_options(options)
    };
    let view = view_rect(viewport);
    let attempts = options.max_attempts.max(1);
    let mut attempt = 0;
    let mut navigations_waited = 0;
    loop {
        attempt += 1;
        let mut notes = Vec::new();
        // Pipelined: the renderer runs commands in the order they arrive, so the
        // first count is taken before the enumerator runs without waiting for it.
        let (before, (frames, enumerate_time), (shot, shot_time)) = futures::join!(
            mutation_count(page),
            timed(frames::enumerate_page(page, view, &opts, &mut notes)),
            timed(session.screenshot()),
        );
        // The handles go while the count is read: one round trip, not two.
        let own = Link::Page(page.clone());
        let (after, ()) = futures::join!(mutation_count(page), release_handles(&own));
        let stable = before.is_some() && before == after;
        if !stable && attempt < attempts {
            continue;
        }
        // The document went away under the look (a redirect, a form's answer
        // arriving late on a loaded machine): the look waits for the new one
        // and is taken again, as a look that was never begun.
        if frames.as_ref().is_err_and(document_gone) && navigations_waited < MAX_NAVIGATIONS {
            navigations_waited += 1;
            attempt -= 1;
            let _ = tokio::time::timeout(NAVIGATION_WAIT, page.wait_for_navigation()).await;
            continue;
        }
        let frames = frames?;
        let screenshot_png = shot?;
        if !stable {
            notes.push(format!(
                "the page kept changing during {attempts} attempts; this is the last one"
            ));
        }
        let mut obs = finish(page, frames, viewport, screenshot_png, stable, notes).await;
        obs.timings = PerceiveTimings {
            enumerate_ms: enumerate_time.as_secs_f64() * 1e3,
            screenshot_ms: shot_time.as_secs_f64() * 1e3,
            total_ms: start.elapsed().as_secs_f64() * 1e3,
            attempts: attempt,
            ..obs.timings
        };
        return Ok(obs);
    }
}

fn enumerate_options(options: &PerceiveOptions) -> frames::EnumerateOptions {
    frames::EnumerateOptions {
        max_name: options.max_name,
        max_options: options.max_options,
        max_elements: options.max_elements,
        max_offscreen: options.max_offscreen,
        exact_occlusion: options.exact_occlusion,
        spot_checks: options.spot_checks,
        // Without a screenshot alongside, yielding would only let the page run.
        yield_ms: 0.0,
        far_screens: options.far_screens,
    }
}

pub(crate) use frames::call_on_registry;
pub use places::frame_origin;
pub(crate) use places::{frame_spots, FrameSpot};

pub(crate) fn view_rect(viewport: Viewport) -> Rect {
    Rect {
        x: 0.0,
        y: 0.0,
        w: f64::from(viewport.width),
        h: f64::from(viewport.height),
    }
}

/// Perceives without a screenshot or a consistency check: the table, the
/// signature, URL and title, as the executor needs them after each command.
/// `screenshot_png` is empty.
pub async fn glance(
    page: &Page,
    viewport: Viewport,
    options: &PerceiveOptions,
) -> Result<Observation, PerceiveError> {
    let start = Instant::now();
    prime::primed(page).await;
    let mut notes = Vec::new();
    let frames = frames::enumerate_page(
        page,
        view_rect(viewport),
        &enumerate_options(options),
        &mut notes,
    )
    .await?;
    release_handles(&Link::Page(page.clone())).await;
    let mut obs = finish(page, frames, viewport, Vec::new(), true, notes).await;
    obs.timings.enumerate_ms = start.elapsed().as_secs_f64() * 1e3;
    obs.timings.total_ms = obs.timings.enumerate_ms;
    obs.timings.attempts = 1;
    Ok(obs)
}

/// Enumerates the page's elements: the table alone, as perception builds it
/// (for benchmarks and tools).
pub async fn element_table(
    page: &Page,
    viewport: Viewport,
    options: &PerceiveOptions,
) -> Result<ElementTable, PerceiveError> {
    Ok(glance(page, viewport, options).await?.table)
}

/// Fills in the backendNodeIds of `elements` that a look left unknown: a look
/// reports its document's node numbers only (see [`NodeNumbers`]), and an
/// element's node identity is asked for when something needs it (a command
/// names it, a tool hit-tests it). Elements whose document or node is gone
/// keep 0.
pub async fn identify(page: &Page, elements: &mut [Element]) -> Result<(), PerceiveError> {
    frames::identify(page, elements).await
}

/// Releases the handles the enumerator returned, on the page's session or a
/// frame's (see browser/remote.rs).
pub(crate) async fn release_handles(link: &Link) {
    let _ = link
        .execute(ReleaseObjectGroupParams::new(frames::OBJECT_GROUP))
        .await;
}

/// Assembles the observation, and checks elements of child frames against
/// covers in their parents.
async fn finish(
    page: &Page,
    frames: Vec<frames::FrameResult>,
    viewport: Viewport,
    screenshot_png: Vec<u8>,
    stable: bool,
    notes: Vec<String>,
) -> Observation {
    let holders: Vec<(String, i64)> = frames
        .iter()
        .filter_map(|f| Some((f.frame_id.clone(), f.outer_owner?)))
        .collect();
    let mut obs = assemble(frames, viewport, screenshot_png, stable, notes);
    if obs.table.elements.iter().any(|e| e.frame != obs.frame) {
        covers::check_child_frame_covers(page, &obs.frame, &holders, &mut obs.table.elements).await;
    }
    obs
}

/// Orders elements in reading order, assigns mark ids, and computes the signature.
fn assemble(
    frames: Vec<frames::FrameResult>,
    viewport: Viewport,
    screenshot_png: Vec<u8>,
    stable: bool,
    mut notes: Vec<String>,
) -> Observation {
    let main = frames.first();
    let url = main.map(|f| f.url.clone()).unwrap_or_default();
    let title = main.map(|f| f.title.clone()).unwrap_or_default();
    let (sx, sy) = main.map(|f| f.scroll).unwrap_or((0.0, 0.0));
    let main_id = main.map(|f| f.frame_id.clone()).unwrap_or_default();
    if main.is_some_and(|f| !f.listeners_seen) {
        notes.push(
            "event listeners could not be inspected; listener-only elements may be missing".into(),
        );
    }
    let dropped: usize = frames.iter().map(|f| f.dropped).sum();
    let far_parts: usize = frames.iter().map(|f| f.far_parts).sum();
    let reused: usize = frames.iter().map(|f| f.reused).sum();
    let tables_kept = frames.iter().filter(|f| f.table_kept).count();
    let far = [
        (dropped > 0).then(|| format!("up to {dropped} found and left out")),
        (far_parts > 0).then(|| format!("{far_parts} distant parts of the page not looked at")),
    ];
    let far: Vec<String> = far.into_iter().flatten().collect();
    if !far.is_empty() {
        notes.push(format!(
            "elements far from the viewport are not in the table ({}); scroll to reach them",
            far.join(", ")
        ));
    }
    if frames.iter().any(|f| f.truncated) {
        notes.push(
            "the page has more candidate elements than the cap (max_elements): past it only native controls within a screen of the viewport were looked for"
                .into(),
        );
    }
    let frame_texts: Vec<(String, String)> = frames
        .iter()
        .map(|f| (f.frame_id.clone(), f.text_hash.clone()))
        .collect();
    let frame_places: Vec<(String, String)> = frames
        .iter()
        .map(|f| (f.frame_id.clone(), String::new()))
        .collect();
    let text_lines: Vec<Vec<u32>> = frames.iter().map(|f| f.text_lines.clone()).collect();
    let text_chars = frames.iter().map(|f| f.text_chars).sum();
    let mut seen = std::collections::HashSet::new();
    let elements: Vec<Element> = frames
        .into_iter()
        .flat_map(|f| f.elements)
        .filter(|e| seen.insert(e.node))
        .collect();
    let elements: Vec<Element> = reading_order(elements)
        .into_iter()
        .enumerate()
        .map(|(k, mut e)| {
            e.id = u32::try_from(k + 1).unwrap_or(u32::MAX);
            e
        })
        .collect();
    let table = ElementTable { elements };
    let signature = page_signature(&url, &table, &frame_texts);
    let structure = page_signature(&url, &table, &frame_places);
    Observation {
        frame: main_id,
        url,
        title,
        viewport,
        scroll: Point { x: sx, y: sy },
        screenshot_png,
        table,
        signature,
        structure,
        text_lines,
        text_chars,
        stable,
        notes,
        timings: PerceiveTimings {
            reused,
            tables_kept,
            ..PerceiveTimings::default()
        },
    }
}

/// Tallest band one line of the reading order spans: a tall element (a card, a
/// sidebar) must not pull everything beside it into its line.
const MAX_LINE_HEIGHT: f64 = 48.0;

/// Sorts elements as a person reads: lines from top to bottom, each line left to
/// right. An element joins the current line when its vertical middle falls within
/// the line's first element, so a tall textarea beside a short input on one line
/// stays on that line. Ties keep document order, so the result is deterministic.
fn reading_order(elements: Vec<Element>) -> Vec<Element> {
    let top = |e: &Element| e.bbox.y;
    let mut indexed: Vec<(usize, Element)> = elements.into_iter().enumerate().collect();
    indexed.sort_by(|(i, a), (j, b)| {
        top(a)
            .total_cmp(&top(b))
            .then(a.bbox.x.total_cmp(&b.bbox.x))
            .then(i.cmp(j))
    });
    let mut lines: Vec<Vec<(usize, Element)>> = Vec::new();
    let mut band = (f64::NEG_INFINITY, f64::NEG_INFINITY);
    for (i, e) in indexed {
        let mid = top(&e) + e.bbox.h / 2.0;
        match lines.last_mut() {
            Some(line) if mid >= band.0 && mid <= band.1 => line.push((i, e)),
            _ => {
                band = (top(&e), top(&e) + e.bbox.h.clamp(1.0, MAX_LINE_HEIGHT));
                lines.push(vec![(i, e)]);
            }
        }
    }
    lines
        .into_iter()
        .flat_map(|mut line| {
            line.sort_by(|(i, a), (j, b)| a.bbox.x.total_cmp(&b.bbox.x).then(i.cmp(j)));
            line.into_iter().map(|(_, e)| e)
        })
        .collect()
}
