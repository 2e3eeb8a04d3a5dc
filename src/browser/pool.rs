//! Browsers that many runs share, each run in a browser context of its own:
//! one Chromium seamark launches, or remote browsers reached over their
//! DevTools websockets (Browserless, Selenium Grid 4's `se:cdp`, any
//! `--remote-debugging-port`). A browser that dies fails the runs that were
//! in it; the next run starts (or reaches) it again.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::browser::GetVersionParams;

use super::{BrowserError, BrowserOptions, Session, SharedBrowser};

/// Browsers that sessions open in.
#[derive(Debug)]
pub struct Pool {
    slots: Vec<Slot>,
    /// Held while a run chooses its browser.
    choosing: tokio::sync::Mutex<()>,
    /// How a browser seamark launches starts.
    options: BrowserOptions,
}

/// One browser of the pool, started again when it dies.
#[derive(Debug)]
struct Slot {
    /// The DevTools URL of a remote browser; `None` for one seamark launches.
    cdp: Option<String>,
    browser: tokio::sync::Mutex<Option<Arc<SharedBrowser>>>,
    /// Sessions being opened in it now (they hold no reference yet).
    opening: AtomicUsize,
}

impl Slot {
    /// Sessions open or being opened in the slot's browser.
    fn load(&self, browser: &Option<Arc<SharedBrowser>>) -> usize {
        let open = browser
            .as_ref()
            .map_or(0, |b| Arc::strong_count(b).saturating_sub(1));
        open + self.opening.load(Ordering::SeqCst)
    }
}

/// Counts a session being opened in a slot until it is open or failed.
struct Opening<'a>(&'a AtomicUsize);

impl Drop for Opening<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Pool {
    /// One browser seamark launches with `options` when `remote` is empty;
    /// else the browsers at these DevTools URLs. Each is started or reached
    /// now, so that a wrong URL is told before anything runs.
    pub async fn start(options: &BrowserOptions, remote: &[String]) -> Result<Pool, BrowserError> {
        let cdps: Vec<Option<String>> = if remote.is_empty() {
            vec![None]
        } else {
            remote.iter().cloned().map(Some).collect()
        };
        let mut slots = Vec::with_capacity(cdps.len());
        for cdp in cdps {
            let browser = SharedBrowser::start(&BrowserOptions {
                cdp: cdp.clone(),
                proxy: None,
                ..options.clone()
            })
            .await?;
            slots.push(Slot {
                cdp,
                browser: tokio::sync::Mutex::new(Some(browser)),
                opening: AtomicUsize::new(0),
            });
        }
        Ok(Pool {
            slots,
            choosing: tokio::sync::Mutex::new(()),
            options: BrowserOptions {
                cdp: None,
                proxy: None,
                ..options.clone()
            },
        })
    }

    /// Whether seamark launched the pool's browser (rather than reaching
    /// remote ones): only then can a run's requests go through its domain
    /// guard.
    pub fn launches(&self) -> bool {
        self.slots.iter().all(|s| s.cdp.is_none())
    }

    /// How many browsers the pool spreads sessions over.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether the pool has no browser (never: it starts with one at least).
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Opens a session in a new browser context of the least busy browser;
    /// one that died is started (or reached) again first. `options` are the
    /// run's: its viewport, and its domain guard as the context's proxy.
    pub async fn open(&self, options: &BrowserOptions) -> Result<Session, BrowserError> {
        // Runs that start at once must not all choose the same browser: the
        // choice is made, and counted, one run at a time.
        let order = {
            let _choosing = self.choosing.lock().await;
            let mut order: Vec<(usize, usize)> = Vec::with_capacity(self.slots.len());
            for (i, slot) in self.slots.iter().enumerate() {
                order.push((slot.load(&*slot.browser.lock().await), i));
            }
            order.sort();
            if let Some(&(_, first)) = order.first() {
                self.slots[first].opening.fetch_add(1, Ordering::SeqCst);
            }
            order
        };
        let mut last = None;
        for (n, (_, i)) in order.into_iter().enumerate() {
            let slot = &self.slots[i];
            if n > 0 {
                slot.opening.fetch_add(1, Ordering::SeqCst);
            }
            let _opening = Opening(&slot.opening);
            let browser = match self.live(slot).await {
                Ok(b) => b,
                Err(e) => {
                    last = Some(e);
                    continue;
                }
            };
            match Session::in_context(&browser, options).await {
                Ok(session) => return Ok(session),
                Err(e) => {
                    // A browser that stopped answering is started again by
                    // the next run; one that answers keeps its other runs.
                    if !answers(&browser).await {
                        let mut held = slot.browser.lock().await;
                        if held.as_ref().is_some_and(|b| Arc::ptr_eq(b, &browser)) {
                            *held = None;
                        }
                    }
                    last = Some(e);
                }
            }
        }
        Err(last.unwrap_or_else(|| BrowserError::Context {
            browser: "the pool".into(),
            reason: "it has no browser".into(),
        }))
    }

    /// The slot's browser, started (or reached) again when it died.
    async fn live(&self, slot: &Slot) -> Result<Arc<SharedBrowser>, BrowserError> {
        let mut held = slot.browser.lock().await;
        if let Some(b) = held.as_ref().filter(|b| b.is_alive()) {
            return Ok(b.clone());
        }
        if let Some(dead) = held.take() {
            tracing::warn!("the browser {} was lost; starting another", dead.origin());
        }
        let fresh = SharedBrowser::start(&BrowserOptions {
            cdp: slot.cdp.clone(),
            ..self.options.clone()
        })
        .await?;
        *held = Some(fresh.clone());
        Ok(fresh)
    }

    /// Ends the pool: closes the browsers it launched once their sessions
    /// have ended (remote ones are left running).
    pub async fn close(&self) {
        for slot in &self.slots {
            if let Some(b) = slot.browser.lock().await.take() {
                b.close().await;
            }
        }
    }
}

/// Whether the browser still answers a command, within a few seconds.
async fn answers(browser: &SharedBrowser) -> bool {
    browser.is_alive()
        && matches!(
            tokio::time::timeout(
                Duration::from_secs(3),
                browser.browser().execute(GetVersionParams::default())
            )
            .await,
            Ok(Ok(_))
        )
}
