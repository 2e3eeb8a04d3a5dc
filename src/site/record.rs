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
    /// The person's secrets, and every cookie and authorization value seen
    /// so far: each is sealed wherever it appears again (a body that
    /// echoes it, a URL a script put it in), in any of its encodings.
    secrets: Mutex<Sealing>,
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
            secrets: Mutex::new(Sealing {
                secrets,
                learned: Vec::new(),
            }),
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
        // Sealed again with every value learned since each came: a page's
        // source that held a token its script sent later.
        let secrets = self
            .secrets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .secrets
            .clone();
        let entries: Vec<Entries> = entries
            .into_iter()
            .map(|e| secrets.redacted(&e).unwrap_or(e))
            .collect();
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
        let secrets = self
            .secrets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .learn(&exchange);
        let sealed = entry(&exchange, &secrets);
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

/// The secrets a recording seals, and the credential values it learned.
#[derive(Debug)]
struct Sealing {
    secrets: Secrets,
    learned: Vec<String>,
}

impl Sealing {
    /// Learns the cookie and authorization values `exchange` carries (a
    /// cookie sent or set, an `Authorization` header and the credential in
    /// it); gives the secrets to seal it and what follows with.
    fn learn(&mut self, exchange: &Exchange) -> Secrets {
        for (name, value) in credentials(exchange) {
            if self.learned.contains(&value) {
                continue;
            }
            let taken = self
                .secrets
                .names()
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>();
            let name = (1..)
                .map(|n| {
                    if n == 1 {
                        name.clone()
                    } else {
                        format!("{name}-{n}")
                    }
                })
                .find(|n| !taken.contains(n))
                .unwrap_or_default();
            // Too short a value is no secret to find (`Secret::plain`).
            if let Some(secret) = crate::safety::Secret::plain(&name, &value) {
                if let Ok(more) = self.secrets.and(vec![secret]) {
                    self.secrets = more;
                }
            }
            self.learned.push(value);
        }
        self.secrets.clone()
    }
}

/// The credential values of an exchange, each with a secret's name: every
/// cookie sent or set (`cookie-sid`), and the `Authorization` (and proxy's)
/// value, whole and without its scheme, a Basic one decoded too.
fn credentials(exchange: &Exchange) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for (header, value) in &exchange.asked.headers {
        match header.to_ascii_lowercase().as_str() {
            "cookie" => found.extend(value.split(';').filter_map(cookie_pair)),
            "authorization" | "proxy-authorization" => found.extend(authorization(value)),
            _ => {}
        }
    }
    if let crate::browser::Got::Response { headers, .. } = &exchange.got {
        for (header, value) in headers {
            if header.eq_ignore_ascii_case("set-cookie") {
                found.extend(
                    value
                        .lines()
                        .filter_map(|l| cookie_pair(l.split(';').next().unwrap_or_default())),
                );
            }
        }
    }
    found.retain(|(_, v)| !v.is_empty());
    found
}

/// A cookie's `name=value` as a secret's name and its value.
fn cookie_pair(pair: &str) -> Option<(String, String)> {
    let (name, value) = pair.split_once('=')?;
    let clean: String = name
        .trim()
        .chars()
        .take(40)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    Some((format!("cookie-{clean}"), value.trim().to_string()))
}

/// An `Authorization` value's secrets: it whole, its credential, and a
/// Basic credential's `user:password` and password.
fn authorization(value: &str) -> Vec<(String, String)> {
    let mut found = vec![value.to_string()];
    if let Some((scheme, credential)) = value.split_once(' ') {
        let credential = credential.trim();
        found.push(credential.to_string());
        if scheme.eq_ignore_ascii_case("basic") {
            use base64::Engine;
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(credential)
                .ok()
                .and_then(|b| String::from_utf8(b).ok());
            if let Some((_, password)) = decoded.as_deref().and_then(|d| d.split_once(':')) {
                found.push(password.to_string());
                found.extend(decoded.clone());
            }
        }
    }
    found
        .into_iter()
        .map(|v| ("authorization".to_string(), v))
        .collect()
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
