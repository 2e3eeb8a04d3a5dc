//! `--record-site`: every response a session's tabs receive, sealed as it
//! arrives, written to the run directory's `site.har`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use har::v1_2::Entries;

use super::har_file::{entry, read_har, write_har, HAR_FILE};
use super::{SiteError, SiteReport};
use crate::browser::{Exchange, Tap, Traffic};
use crate::safety::Secrets;

/// Records a session's traffic; [`SiteRecorder::save`] writes it.
#[derive(Debug)]
pub struct SiteRecorder {
    secrets: Secrets,
    entries: Mutex<Vec<Entries>>,
}

impl SiteRecorder {
    /// A recorder that seals `secrets` (and every cookie and authorization).
    pub fn new(secrets: Secrets) -> Arc<SiteRecorder> {
        Arc::new(SiteRecorder {
            secrets,
            entries: Mutex::default(),
        })
    }

    /// A recorder that goes on from the `site.har` in `dir`, when there is
    /// one (a resumed run adds to what it recorded before).
    pub fn continuing(dir: &Path, secrets: Secrets) -> Result<Arc<SiteRecorder>, SiteError> {
        let har = dir.join(HAR_FILE);
        let before = if har.is_file() {
            read_har(&har)?
        } else {
            Vec::new()
        };
        Ok(Arc::new(SiteRecorder {
            secrets,
            entries: Mutex::new(before),
        }))
    }

    /// What the browser does with it.
    pub fn traffic(self: &Arc<Self>) -> Traffic {
        Traffic::Record(self.clone())
    }

    /// Writes what was recorded so far into `dir`'s `site.har` (whole, or
    /// not at all) and says what it holds.
    pub fn save(&self, dir: &Path) -> Result<SiteReport, SiteError> {
        let mut entries = self
            .entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        // In the order the responses came, not the order their bodies did.
        entries.sort_by(|a, b| a.started_date_time.cmp(&b.started_date_time));
        let har: PathBuf = dir.join(HAR_FILE);
        let requests = entries.len();
        write_har(&har, entries)?;
        Ok(SiteReport {
            mode: "recorded".into(),
            har,
            requests,
            unmatched: Vec::new(),
        })
    }
}

impl Tap for SiteRecorder {
    fn took(&self, exchange: Exchange) {
        // Sealed now: a value never waits in memory to be sealed later.
        let sealed = entry(&exchange, &self.secrets);
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(sealed);
    }
}
