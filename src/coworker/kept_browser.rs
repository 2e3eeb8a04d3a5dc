//! The browser a worker process keeps for its sessions: one Chromium,
//! launched at the first session, that each session's run opens a browser
//! context of its own in (`--worker-browser`), so that no session pays a
//! browser's launch. A context keeps its cookies, storage, cache, service
//! workers and permissions apart from every other, its downloads go to its
//! own run's folder, and Chromium drops it when the run's connection ends
//! (a run that crashes included). A browser that died, or that does not
//! answer within [`ANSWER_WITHIN`], is replaced before the next session.
//!
//! The process boundary stays where it protects: each run is still a
//! process of its own, so a run that crashes or is killed takes no other
//! session with it; only a crash of the browser itself fails the runs
//! that are in it then, and the next session gets a new one.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::browser::{BrowserError, BrowserOptions, SharedBrowser};

/// How long the kept browser has to answer before it is taken as wedged.
pub const ANSWER_WITHIN: Duration = Duration::from_secs(5);

/// A worker process's browser.
#[derive(Debug, Default)]
pub struct KeptBrowser {
    browser: tokio::sync::Mutex<Option<Arc<SharedBrowser>>>,
    launches: AtomicUsize,
}

impl KeptBrowser {
    /// None launched yet.
    pub fn new() -> KeptBrowser {
        KeptBrowser::default()
    }

    /// The DevTools websocket of a browser that answers: the kept one, or
    /// a new one launched in place of one that died or is wedged.
    pub async fn websocket(&self) -> Result<String, BrowserError> {
        let mut kept = self.browser.lock().await;
        if let Some(browser) = kept.as_ref() {
            if browser.is_alive() && browser.answers(ANSWER_WITHIN).await {
                return Ok(browser.websocket().to_string());
            }
            tracing::warn!("the worker's browser died or does not answer: a new one is launched");
        }
        // The old one, if any, is killed as it is dropped.
        *kept = None;
        let browser = SharedBrowser::start(&BrowserOptions::default()).await?;
        self.launches.fetch_add(1, Ordering::SeqCst);
        let websocket = browser.websocket().to_string();
        *kept = Some(browser);
        Ok(websocket)
    }

    /// How many browsers it launched so far.
    pub fn launches(&self) -> usize {
        self.launches.load(Ordering::SeqCst)
    }
}
