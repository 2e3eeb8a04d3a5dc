//! Priming: the first look at a new document, taken while the page settles.
//!
//! A first look at a document costs about twice a later one (github.com:
//! 55 against 25-30 ms): the enumerator is compiled for the document and runs
//! cold, the page's styles are computed for script the first time, and the
//! stylesheets' position rules are read. After a command that loads a page,
//! the executor waits for the page to be quiet anyway (a quiet window of 50
//! ms or more, see act/settle.rs): a look taken then, whose answer is thrown
//! away, leaves the document's registry warm, and the look after the command
//! keeps its work where nothing changed since. Perception only reads, so the
//! quiet it waits for is not disturbed.

use std::time::Duration;

use chromiumoxide::Page;
use tokio::task::JoinHandle;

use super::recent::Recent;
use super::{enumerate_options, frames, registry, release_handles, view_rect, PerceiveOptions};
use crate::browser::{Link, Viewport};

/// The prime under way (or done and not yet waited for) per page, by target id.
static PRIMING: Recent<String, JoinHandle<()>> = Recent::new(32);

/// Longest wait of a look for a prime under way: past it the prime is
/// stopped and the look does its own work (a prime stopped while it held the
/// registry leaves it to the document: a look makes a new one).
const PRIME_WAIT: Duration = Duration::from_secs(3);

/// Starts a look at the page's current document in the background, unless
/// its main frame's document was looked at already or a prime of the page
/// is under way; returns whether it started one. The look's answer is
/// thrown away: what stays is the warm registry of each frame's document
/// (see registry.rs), which the next look takes once the prime is done.
/// Nothing starts outside a tokio runtime.
pub async fn prime(page: &Page, viewport: Viewport, options: &PerceiveOptions) -> bool {
    let target = page.target_id().inner().clone();
    if let Some(under_way) = PRIMING.take(&target) {
        if !under_way.is_finished() {
            PRIMING.put(target, under_way);
            return false;
        }
    }
    let Ok(Some(frame)) = page.mainframe().await else {
        return false;
    };
    let link = Link::Page(page.clone());
    let Ok(Some(context)) = link.frame_execution_context(frame.clone()).await else {
        return false;
    };
    if registry::known(&link, frame.inner(), context) {
        return false;
    }
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return false;
    };
    let page = page.clone();
    let view = view_rect(viewport);
    let options = enumerate_options(options);
    let look = runtime.spawn(async move {
        let mut notes = Vec::new();
        if let Err(e) = frames::enumerate_page(&page, view, &options, &mut notes).await {
            tracing::debug!("the page could not be primed: {e}");
        }
        release_handles(&Link::Page(page)).await;
    });
    PRIMING.put(target, look);
    true
}

/// Waits for the page's prime under way, if any (see [`PRIME_WAIT`]).
pub(crate) async fn primed(page: &Page) {
    let Some(mut under_way) = PRIMING.take(page.target_id().inner()) else {
        return;
    };
    if tokio::time::timeout(PRIME_WAIT, &mut under_way)
        .await
        .is_err()
    {
        tracing::debug!("a prime of the page took too long: stopped");
        under_way.abort();
    }
}
