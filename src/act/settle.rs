//! Waiting for the page to settle after a command: the document loaded, the
//! network briefly quiet, the DOM briefly quiet; bounded, so a page that never
//! rests (a ticker, an animation that rewrites nodes) costs at most the bound.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use chromiumoxide::Page;

use super::watch::{lock, Events};
use crate::perceive::{watch_eval, WATCH_JS};

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
/// Time between two looks at the page.
const POLL: Duration = Duration::from_millis(20);

/// The document's readiness and the mutation count, from the isolated world.
async fn activity(page: &Page) -> Option<(bool, i64)> {
    let expression = format!("[document.readyState, {WATCH_JS}]");
    let v = tokio::time::timeout(Duration::from_secs(2), watch_eval(page, &expression))
        .await
        .ok()??;
    let ready = v.get(0)?.as_str()? == "complete";
    Some((ready, v.get(1)?.as_i64()?))
}

/// Waits until the page has been quiet for `quiet`, at most `bound`.
pub(super) async fn settle(
    page: &Page,
    events: &Mutex<Events>,
    quiet: Duration,
    bound: Duration,
) -> Settled {
    let start = Instant::now();
    let mut last_count = None;
    let mut quiet_since = Instant::now();
    loop {
        if lock(events).gone().is_some() {
            break;
        }
        let ready = match activity(page).await {
            Some((ready, count)) => {
                if last_count != Some(count) {
                    last_count = Some(count);
                    quiet_since = Instant::now();
                }
                ready
            }
            None => {
                // The page is busy navigating: look again.
                last_count = None;
                quiet_since = Instant::now();
                false
            }
        };
        let network_quiet = {
            let ev = lock(events);
            ev.recent_inflight(LONG_REQUEST) == 0
                && ev.last_network.is_none_or(|t| t.elapsed() >= quiet)
        };
        if ready && network_quiet && quiet_since.elapsed() >= quiet {
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
