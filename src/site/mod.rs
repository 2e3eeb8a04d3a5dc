//! A site as a run saw it: every response the browser received, kept in
//! the run directory as `site.har` (`--record-site`), and a run done again
//! against that recording instead of the network (`--site FILE.har`).
//!
//! The recording is HAR 1.2 with bodies, sealed as everything seamark keeps
//! is: cookie and authorization values are never written, and every secret
//! value is replaced by its `{{secret:NAME}}` placeholder wherever it
//! appears (a URL, a form sent, a body). A replay seals what the page sends
//! by the same rules before it looks for it, so a secret typed again finds
//! the request it was recorded in.

mod har_file;
mod record;
mod replay;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

pub use har_file::{read_har, HAR_FILE};
pub use record::{rebuild, SiteRecorder, ENTRIES_FILE};
pub use replay::SiteReplay;

use serde::{Deserialize, Serialize};

use crate::browser::{PageClock, Traffic};
use crate::safety::Secrets;

/// What a run does with the site's traffic.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum SiteUse {
    /// The network, as it is.
    #[default]
    Live,
    /// The network, every response kept in the run directory's `site.har`
    /// (`--record-site`).
    Record,
    /// The recording in this file, never the network (`--site FILE.har`).
    Replay(PathBuf),
}

/// Where a fixed clock starts (`--fixed-clock`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockStart {
    /// Where the recording began (with `--site`), else now.
    Recording,
    /// At this moment.
    At(SystemTime),
}

/// Why a fixed clock cannot start where it is asked to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClockError {
    /// `recording` with no recording.
    #[error(
        "a fixed clock without a time starts where the recording began: give the recording \
         (--site), or a time (2026-03-14T09:26:53Z)"
    )]
    NoRecording,
    /// Neither `recording` nor a time.
    #[error("{0:?} is not `recording` nor a time in UTC such as 2026-03-14T09:26:53Z")]
    NotTime(String),
}

impl ClockStart {
    /// `recording`, or a time in UTC (`2026-03-14T09:26:53Z`); `replayed`
    /// says whether a recording answers the run (where `recording` starts).
    pub fn parse(text: &str, replayed: bool) -> Result<ClockStart, ClockError> {
        match text.trim() {
            "recording" if replayed => Ok(ClockStart::Recording),
            "recording" => Err(ClockError::NoRecording),
            time => crate::clock::parse_utc_rfc3339(time)
                .map(ClockStart::At)
                .ok_or_else(|| ClockError::NotTime(time.to_string())),
        }
    }
}

/// A run's hold on the site: what the browser does with the traffic, and
/// what is said of it at the end.
#[derive(Debug)]
pub enum SiteHold {
    /// Responses are recorded.
    Recording(Arc<SiteRecorder>),
    /// Requests are answered from a recording.
    Replaying(Arc<SiteReplay>),
}

impl SiteHold {
    /// The hold `use_` asks for, sealing with `secrets`: none for the
    /// network as it is. A recording goes on from the `site.har` that run
    /// directory `dir` holds already (a resumed run).
    pub fn open(
        use_: &SiteUse,
        secrets: &Secrets,
        dir: &Path,
    ) -> Result<Option<SiteHold>, SiteError> {
        Ok(match use_ {
            SiteUse::Live => None,
            SiteUse::Record => Some(SiteHold::Recording(SiteRecorder::continuing(
                dir,
                secrets.clone(),
            )?)),
            SiteUse::Replay(har) => {
                Some(SiteHold::Replaying(SiteReplay::open(har, secrets.clone())?))
            }
        })
    }

    /// What the browser does with its tabs' traffic.
    pub fn traffic(&self) -> Traffic {
        match self {
            SiteHold::Recording(r) => r.traffic(),
            SiteHold::Replaying(r) => r.traffic(),
        }
    }

    /// The pages' clock, starting where `start` says.
    pub fn clock(hold: Option<&SiteHold>, start: ClockStart) -> PageClock {
        let recorded = match hold {
            Some(SiteHold::Replaying(r)) => r.started(),
            _ => None,
        };
        PageClock::starting(match start {
            ClockStart::At(t) => t,
            ClockStart::Recording => recorded.unwrap_or_else(SystemTime::now),
        })
    }

    /// At the end: the recording written into `dir`, or what the replay
    /// answered and could not.
    pub fn finish(&self, dir: &Path) -> Result<SiteReport, SiteError> {
        match self {
            SiteHold::Recording(r) => r.save(dir),
            SiteHold::Replaying(r) => Ok(r.report()),
        }
    }
}

/// What cannot be recorded or replayed.
#[derive(Debug, thiserror::Error)]
pub enum SiteError {
    /// The recording could not be read.
    #[error("cannot read the recording {path}: {cause}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        cause: std::io::Error,
    },
    /// The file is not a HAR seamark can replay.
    #[error("{path} is not a HAR 1.2 recording: {reason}")]
    NotHar {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The recording could not be written.
    #[error("cannot write the recording {path}: {cause}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        cause: std::io::Error,
    },
}

/// What a run did with the site's traffic, as its result tells it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SiteReport {
    /// `recorded` (`--record-site`) or `replayed` (`--site`).
    pub mode: String,
    /// The recording written or read.
    pub har: PathBuf,
    /// Responses recorded, or requests answered from the recording.
    pub requests: usize,
    /// In a replay: the requests the recording had no answer for, which
    /// failed as a refused connection (`GET http://…`), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmatched: Vec<String>,
}

impl SiteReport {
    /// One line for a person: `12 requests had no recording: GET …, …`.
    pub fn unmatched_line(&self) -> Option<String> {
        let n = self.unmatched.len();
        if n == 0 {
            return None;
        }
        const SHOWN: usize = 5;
        let mut shown = self.unmatched[..n.min(SHOWN)].join(", ");
        if n > SHOWN {
            shown.push_str(&format!(", and {} more", n - SHOWN));
        }
        Some(format!(
            "{n} request{} had no recording: {shown}",
            if n == 1 { "" } else { "s" }
        ))
    }
}
