//! Waiting for the page to settle after a command, as briefly as the page
//! allows: the document loaded, no request in flight, no timer the page set
//! a short wait away (a debounce), and nothing moving for a quiet window.
//! The window is short (a quarter of [`super::ActOptions::quiet`]) when the
//! command moved nothing, and grows with how long the page kept moving, up
//! to `quiet`; a skill's commands settle briskly (see [`Quiet::brisk`]).
//! What moves on its own (a clock, a ticker: a node that keeps changing, a
//! chain of timers) is not counted. Bounded, so a page that never rests
//! costs at most the bound.

use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use chromiumoxide::Page;

use super::watch::{lock, Events};
use crate::browser::{evaluate, Viewport};
use crate::perceive::{self, watch_eval, PerceiveOptions, MOVED_JS};

/// The quiet window a wait ends on: `shortest` when the command moved
/// nothing, growing with how long the page kept moving up to `longest`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Quiet {
    pub shortest: Duration,
    pub longest: Duration,
}

impl Quiet {
    /// The usual window: a quarter of `quiet`, up to `quiet`.
    pub fn usual(quiet: Duration) -> Quiet {
        Quiet {
            shortest: quiet / 4,
            longest: quiet,
        }
    }

    /// The usual window at its longest: `quiet` however little moved.
    pub fn longest(quiet: Duration) -> Quiet {
        Quiet {
            shortest: quiet,
            longest: quiet,
        }
    }

    /// A brisk window, for commands whose next look checks what they need
    /// (a skill's): a sixteenth of `quiet`, however long the page moved.
    pub fn brisk(quiet: Duration) -> Quiet {
        Quiet {
            shortest: quiet / 16,
            longest: quiet / 16,
        }
    }
}

/// How the wait ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Settled {
    /// The bound was reached before the page was quiet.
    pub timed_out: bool,
    /// How long it took.
    pub waited: Duration,
}

/// Requests older than this are taken for long polls or streams.
const LONG_REQUEST: Duration = Duration::from_secs(2);
/// How long after the wait began a timer the page sets still counts as the
/// command's (a handler's work that went on a moment).
const TIMERS_AFTER: Duration = Duration::from_millis(50);
/// Time between two looks at the page.
const POLL: Duration = Duration::from_millis(15);

/// The document's readiness and how often something moved, from the
/// isolated world.
async fn activity(page: &Page) -> Option<(bool, i64)> {
    let expression = format!("[document.readyState, {MOVED_JS}]");
    let v = tokio::time::timeout(Duration::from_secs(2), watch_eval(page, &expression))
        .await
        .ok()??;
    let ready = v.get(0)?.as_str()? == "complete";
    Some((ready, v.get(1)?.as_i64()?))
}

/// How many timers the page set a short wait away from `since` to `until`
/// (ms since the epoch) are still to fire (see `TIMERS_JS` in watch.rs); 0 when the
/// page cannot say.
async fn pending_timers(page: &Page, since: f64, until: f64) -> i64 {
    let ask = format!("window.__seamarkTimers ? window.__seamarkTimers({since}, {until}) : 0");
    match tokio::time::timeout(Duration::from_secs(2), evaluate(page, &ask)).await {
        Ok(Ok(v)) => v.as_i64().unwrap_or(0),
        _ => 0,
    }
}

/// Waits until the page is quiet (see the module's doc) for a window of
/// `quiet`, at most `bound`. Timers count when the page set
/// them from `since` (the command's start) to a moment after the wait
/// began: later ones are the page's own doing. With `prime`, a document
/// the page had not shown before is looked at once it is loaded, while the
/// wait goes on (see `perceive::prime`).
pub(super) async fn settle(
    page: &Page,
    events: &Mutex<Events>,
    quiet: Quiet,
    bound: Duration,
    since: SystemTime,
    mut prime: Option<(Viewport, &PerceiveOptions)>,
) -> Settled {
    let start = Instant::now();
    let epoch_ms = |t: SystemTime| {
        t.duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64() * 1e3)
    };
    let (since_ms, until_ms) = (epoch_ms(since), epoch_ms(SystemTime::now() + TIMERS_AFTER));
    let mut last_count = None;
    // The command itself is the first movement.
    let mut last_move = start;
    loop {
        if lock(events).gone().is_some() {
            break;
        }
        let ready = match activity(page).await {
            Some((ready, count)) => {
                if last_count.is_some_and(|c| c != count) {
                    last_move = Instant::now();
                }
                last_count = Some(count);
                ready
            }
            None => {
                // The page is busy navigating: look again.
                last_count = None;
                last_move = Instant::now();
                false
            }
        };
        // Asked at every poll until it starts: the first ones may still see
        // the document the command began on.
        if let Some((viewport, options)) = prime.filter(|_| ready) {
            if perceive::prime(page, viewport, options).await {
                prime = None;
            }
        }
        let network_idle = {
            let ev = lock(events);
            if let Some(t) = ev.last_network.filter(|t| *t > last_move) {
                last_move = t;
            }
            ev.recent_inflight(LONG_REQUEST) == 0
        };
        // The longer the page kept moving, the longer it may go on.
        let window = (last_move.duration_since(start) * 2).clamp(quiet.shortest, quiet.longest);
        if ready
            && network_idle
            && last_move.elapsed() >= window
            && pending_timers(page, since_ms, until_ms).await == 0
        {
            return Settled {
                timed_out: false,
                waited: start.elapsed(),
            };
        }
        if start.elapsed() >= bound {
            break;
        }
        tokio::time::sleep(POLL).await;
    }
    Settled {
        timed_out: true,
        waited: start.elapsed(),
    }
}
