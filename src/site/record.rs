//! `--record-site`: every response a session's tabs receive, sealed as it
//! arrives and appended to the run directory's `site-entries.jsonl` (so a
//! run killed outright keeps what it recorded), written whole as
//! `site.har` when the run ends.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use har::v1_2::Entries;

use super::har_file::{entry, read_har, write_har, HAR_FILE};
use super::{SiteError, SiteReport};
use crate::browser::{Exchange, Tap, Traffic};
use crate::safety::Secrets;

/// Where a recording's entries go as they arrive, one sealed HAR entry a
/// line, until `site.har` is written.
pub const ENTRIES_FILE: &str = "site-entries.jsonl";

/// Records a session's traffic; [`SiteRecorder::save`] writes it.
#[derive(Debug)]
pub struct SiteRecorder {
    secrets: Secrets,
    entries: Mutex<Vec<Entries>>,
    /// The entries file, appended to as they arrive.
    log: Mutex<Option<std::fs::File>>,
}

/// The entries a killed run left in `dir`'s entries file (a line cut short
/// by the kill is left out).
fn left_entries(dir: &Path) -> Vec<Entries> {
    std::fs::read_to_string(dir.join(ENTRIES_FILE))
        .map(|text| {
            text.lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect()
        })
        .unwrap_or_default()
}

impl SiteRecorder {
    /// A recorder that goes on from what `dir` holds: its `site.har` (a
    /// resumed run adds to what it recorded before) and the entries a run
    /// killed there left; it seals `secrets` (and every cookie and
    /// authorization) in what it records.
    pub fn continuing(dir: &Path, secrets: Secrets) -> Result<Arc<SiteRecorder>, SiteError> {
        let har = dir.join(HAR_FILE);
        let mut before = if har.is_file() {
            read_har(&har)?
        } else {
            Vec::new()
        };
        before.extend(left_entries(dir));
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join(ENTRIES_FILE))
            .map_err(|source| SiteError::Write {
                path: dir.join(ENTRIES_FILE),
                cause: source,
            })?;
        Ok(Arc::new(SiteRecorder {
            secrets,
            entries: Mutex::new(before),
            log: Mutex::new(Some(log)),
        }))
    }

    /// What the browser does with it.
    pub fn traffic(self: &Arc<Self>) -> Traffic {
        Traffic::Record(self.clone())
    }

    /// Writes what was recorded so far into `dir`'s `site.har` (whole, or
    /// not at all), drops the entries file, and says what it holds.
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
        self.log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let _ = std::fs::remove_file(dir.join(ENTRIES_FILE));
        Ok(SiteReport {
            mode: "recorded".into(),
            har,
            requests,
            unmatched: Vec::new(),
        })
    }
}

/// Writes `site.har` from what a run killed in `dir` left in its entries
/// file: `None` when it left none.
pub fn rebuild(dir: &Path) -> Option<Result<SiteReport, SiteError>> {
    if !dir.join(ENTRIES_FILE).is_file() {
        return None;
    }
    // The entries were sealed as they were written: nothing more to seal.
    Some(SiteRecorder::continuing(dir, Secrets::default()).and_then(|r| r.save(dir)))
}

impl Tap for SiteRecorder {
    fn took(&self, exchange: Exchange) {
        // Sealed now: a value never waits in memory, or on disk, to be
        // sealed later.
        let sealed = entry(&exchange, &self.secrets);
        if let Some(log) = self
            .log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_mut()
        {
            let line = serde_json::to_string(&sealed).unwrap_or_default();
            if let Err(e) = writeln!(log, "{line}") {
                tracing::debug!("an entry of the recording was not appended: {e}");
            }
        }
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(sealed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::browser::{Asked, Got};

    #[test]
    fn a_run_killed_before_its_end_keeps_what_it_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let recorder = SiteRecorder::continuing(dir.path(), Secrets::default()).unwrap();
        for path in ["/a", "/b"] {
            recorder.took(Exchange {
                asked: Asked {
                    method: "GET".into(),
                    url: format!("http://s.test{path}"),
                    headers: Vec::new(),
                    body: None,
                    resource: "Document".into(),
                },
                at: std::time::SystemTime::UNIX_EPOCH,
                got: Got::Failed("ConnectionRefused".into()),
            });
        }
        // Killed: no save; a half-written last line too.
        drop(recorder);
        let mut log = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.path().join(ENTRIES_FILE))
            .unwrap();
        write!(log, "{{\"startedDateTime\": \"2026").unwrap();
        let report = rebuild(dir.path()).expect("entries were left").unwrap();
        assert_eq!(report.requests, 2);
        assert_eq!(read_har(&report.har).unwrap().len(), 2);
        assert!(!dir.path().join(ENTRIES_FILE).exists());
        assert!(rebuild(dir.path()).is_none());
    }
}
