//! `--site FILE.har`: every request of a session's tabs answered from a
//! recording, never from the network.
//!
//! A request finds its recorded answer by its method and URL and, for one
//! with a body (a form sent, a JSON post), by that body sealed as the
//! recording sealed it. Where the URL is not the same, two looser looks
//! follow: the query in any order, then the query without the parameters
//! that change every time (a cache-buster, a timestamp). A request made
//! again gets the next recorded answer of the same request, and the last
//! one once they are used up. A request with none fails as a refused
//! connection and is listed in the run's result.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use base64::Engine;
use har::v1_2::Entries;

use super::har_file::{read_har, sealed_body, FAILED};
use super::{SiteError, SiteReport};
use crate::browser::{Answer, Asked, Responder, Traffic};
use crate::safety::Secrets;

/// Query parameters that change with every request and say nothing of
/// what is asked: cache-busters and timestamps.
const VOLATILE: [&str; 14] = [
    "_",
    "_t",
    "t",
    "ts",
    "timestamp",
    "time",
    "cb",
    "cachebust",
    "cachebuster",
    "nocache",
    "rnd",
    "rand",
    "random",
    "nonce",
];

/// Headers a recorded response is not answered with: its body is given
/// decoded and whole, sealed values may have changed its length.
const DROPPED: [&str; 3] = ["content-encoding", "content-length", "transfer-encoding"];

/// A recorded request and its answer.
#[derive(Debug)]
struct Recorded {
    method: String,
    /// The URL as recorded, its fragment left out.
    url: String,
    /// Its query in order.
    sorted: String,
    /// Its query in order, volatile parameters left out.
    loose: String,
    /// Its body, sealed, when it had one.
    body: Option<String>,
    answer: Answer,
}

/// Which of a recorded request's URL keys a look compares.
type KeyOf = fn(&Recorded) -> &str;

/// What a replay keeps as it goes.
#[derive(Debug, Default)]
struct Progress {
    /// How often each request was answered, by the key it matched on.
    uses: HashMap<String, usize>,
    answered: usize,
    unmatched: Vec<String>,
}

/// A recording that answers a session's requests.
#[derive(Debug)]
pub struct SiteReplay {
    har: PathBuf,
    secrets: Secrets,
    recorded: Vec<Recorded>,
    started: Option<SystemTime>,
    progress: Mutex<Progress>,
}

/// The URL without its fragment, and the same with its query sorted, and
/// sorted without its volatile parameters.
fn url_keys(url: &str) -> (String, String, String) {
    let Ok(mut parsed) = url::Url::parse(url) else {
        return (url.to_string(), url.to_string(), url.to_string());
    };
    parsed.set_fragment(None);
    let exact = parsed.to_string();
    let mut pairs: Vec<(String, String)> = parsed.query_pairs().into_owned().collect();
    pairs.sort();
    let with = |pairs: &[(String, String)]| {
        let mut u = parsed.clone();
        if pairs.is_empty() {
            u.set_query(None);
        } else {
            u.query_pairs_mut().clear().extend_pairs(pairs);
        }
        u.to_string()
    };
    let sorted = with(&pairs);
    pairs.retain(|(name, value)| !volatile(name, value));
    (exact, sorted, with(&pairs))
}

/// Whether a query parameter changes every time: a cache-buster by its
/// name, or a value that reads as a timestamp (10 to 13 digits) or a
/// random number (`0.` and six digits or more).
fn volatile(name: &str, value: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    VOLATILE.contains(&name.to_ascii_lowercase().as_str())
        || (digits(value) && (10..=13).contains(&value.len()))
        || value
            .strip_prefix("0.")
            .is_some_and(|rest| rest.len() >= 6 && digits(rest))
}

/// Whether two sealed bodies ask the same: equal, or equal as JSON, or as
/// form fields in any order (volatile ones aside).
fn same_body(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    if let (Ok(x), Ok(y)) = (
        serde_json::from_str::<serde_json::Value>(a),
        serde_json::from_str::<serde_json::Value>(b),
    ) {
        return x == y;
    }
    let form = |s: &str| {
        let mut pairs: Vec<(String, String)> = url::form_urlencoded::parse(s.as_bytes())
            .into_owned()
            .filter(|(k, v)| !volatile(k, v))
            .collect();
        pairs.sort();
        pairs
    };
    a.contains('=') && b.contains('=') && form(a) == form(b)
}

/// The answer an entry recorded.
fn answer_of(entry: &Entries) -> Answer {
    let response = &entry.response;
    if let Some(reason) = response
        .comment
        .as_deref()
        .and_then(|c| c.strip_prefix(FAILED))
    {
        return Answer::Fail(reason.trim().to_string());
    }
    if response.status <= 0 {
        // Another tool's recording of a request that got no response.
        return Answer::Fail("ConnectionFailed".into());
    }
    let content = &response.content;
    let text = content.text.as_deref().unwrap_or_default();
    let body = if content.encoding.as_deref() == Some("base64") {
        base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .unwrap_or_default()
    } else {
        text.as_bytes().to_vec()
    };
    let headers = response
        .headers
        .iter()
        .filter(|h| !DROPPED.contains(&h.name.to_ascii_lowercase().as_str()))
        // Cookies set together were kept a line each.
        .flat_map(|h| h.value.lines().map(|v| (h.name.clone(), v.to_string())))
        .collect();
    Answer::Respond {
        status: response.status,
        headers,
        body,
    }
}

/// `2026-03-14T09:26:53.123Z` (or without the milliseconds) as a moment.
fn moment(text: &str) -> Option<SystemTime> {
    let whole = text.get(..19)?;
    let ms: u64 = text
        .get(20..23)
        .filter(|_| text.as_bytes().get(19) == Some(&b'.'))
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    text.ends_with('Z')
        .then(|| crate::clock::parse_utc_rfc3339(&format!("{whole}Z")))
        .flatten()
        .map(|t| t + std::time::Duration::from_millis(ms))
}

impl SiteReplay {
    /// The recording in `har`, sealing what pages send with `secrets` as it
    /// was sealed when recorded.
    pub fn open(har: &Path, secrets: Secrets) -> Result<Arc<SiteReplay>, SiteError> {
        let entries = read_har(har)?;
        let started = entries
            .iter()
            .filter_map(|e| moment(&e.started_date_time))
            .min();
        let recorded = entries
            .iter()
            .map(|e| {
                let (url, sorted, loose) = url_keys(&e.request.url);
                Recorded {
                    method: e.request.method.to_ascii_uppercase(),
                    url,
                    sorted,
                    loose,
                    body: e.request.post_data.as_ref().and_then(|p| p.text.clone()),
                    answer: answer_of(e),
                }
            })
            .collect();
        Ok(Arc::new(SiteReplay {
            har: har.to_path_buf(),
            secrets,
            recorded,
            started,
            progress: Mutex::default(),
        }))
    }

    /// What the browser does with it.
    pub fn traffic(self: &Arc<Self>) -> Traffic {
        Traffic::Replay(self.clone())
    }

    /// When the recording began (its first request), if it says.
    pub fn started(&self) -> Option<SystemTime> {
        self.started
    }

    /// How many requests it holds.
    pub fn len(&self) -> usize {
        self.recorded.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.recorded.is_empty()
    }

    /// What the replay answered so far, and what it could not.
    pub fn report(&self) -> SiteReport {
        let progress = self.progress.lock().unwrap_or_else(PoisonError::into_inner);
        SiteReport {
            mode: "replayed".into(),
            har: self.har.clone(),
            requests: progress.answered,
            unmatched: progress.unmatched.clone(),
        }
    }

    /// The recorded entries that fit `asked`, the closest look first that
    /// finds any, with the key they were found by.
    fn candidates(&self, asked: &Asked) -> Option<(String, Vec<&Recorded>)> {
        let method = asked.method.to_ascii_uppercase();
        let body = asked.body.as_deref().map(|b| sealed_body(b, &self.secrets));
        let url = self.secrets.redact(&asked.url);
        let (exact, sorted, loose) = url_keys(&url);
        let looks: [(&str, KeyOf, &str); 3] = [
            ("url", |r| &r.url, &exact),
            ("sorted", |r| &r.sorted, &sorted),
            ("loose", |r| &r.loose, &loose),
        ];
        for (look, of, key) in looks {
            let fits: Vec<&Recorded> = self
                .recorded
                .iter()
                .filter(|r| r.method == method && of(r) == key)
                .filter(|r| match (&body, &r.body) {
                    (Some(a), Some(b)) => same_body(a, b),
                    (None, None) => true,
                    // A body of nothing is no body.
                    (Some(a), None) | (None, Some(a)) => a.is_empty(),
                })
                .collect();
            if !fits.is_empty() {
                let body_key = body.as_deref().unwrap_or_default();
                return Some((format!("{look} {method} {key} {body_key}"), fits));
            }
        }
        None
    }
}

impl Responder for SiteReplay {
    fn answer(&self, asked: &Asked) -> Answer {
        let found = self.candidates(asked);
        let mut progress = self.progress.lock().unwrap_or_else(PoisonError::into_inner);
        let Some((key, fits)) = found else {
            progress.unmatched.push(format!(
                "{} {}",
                asked.method,
                self.secrets.redact(&asked.url)
            ));
            return Answer::Fail("ConnectionRefused".into());
        };
        let used = progress.uses.entry(key).or_default();
        // The n-th time, the n-th recorded answer; then the last again.
        let answer = fits[(*used).min(fits.len() - 1)].answer.clone();
        *used += 1;
        progress.answered += 1;
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::browser::{Exchange, Got};

    fn asked(method: &str, url: &str, body: Option<&str>) -> Asked {
        Asked {
            method: method.into(),
            url: url.into(),
            headers: Vec::new(),
            body: body.map(|b| b.as_bytes().to_vec()),
            resource: "XHR".into(),
        }
    }

    fn replay_of(exchanges: &[(Asked, &str)], secrets: &Secrets) -> Arc<SiteReplay> {
        let dir = tempfile::tempdir().unwrap();
        let recorder = crate::site::SiteRecorder::continuing(dir.path(), secrets.clone()).unwrap();
        for (i, (a, body)) in exchanges.iter().enumerate() {
            crate::browser::Tap::took(
                recorder.as_ref(),
                Exchange {
                    asked: a.clone(),
                    at: SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(i as u64),
                    got: Got::Response {
                        status: 200,
                        status_text: "OK".into(),
                        headers: vec![("Content-Type".into(), "text/plain".into())],
                        body: Some(body.as_bytes().to_vec()),
                    },
                },
            );
        }
        let report = recorder.save(dir.path()).unwrap();
        let replay = SiteReplay::open(&report.har, secrets.clone()).unwrap();
        drop(dir);
        replay
    }

    fn body(answer: Answer) -> String {
        match answer {
            Answer::Respond { body, .. } => String::from_utf8(body).unwrap(),
            Answer::Fail(why) => format!("failed: {why}"),
        }
    }

    #[test]
    fn a_request_made_again_gets_the_next_recorded_answer_then_the_last() {
        let none = Secrets::default();
        let count = asked("GET", "http://s.test/api/count", None);
        let replay = replay_of(&[(count.clone(), "1"), (count.clone(), "2")], &none);
        let got: Vec<String> = (0..3).map(|_| body(replay.answer(&count))).collect();
        assert_eq!(got, ["1", "2", "2"]);
    }

    #[test]
    fn the_query_in_another_order_or_a_new_timestamp_still_finds_its_answer() {
        let none = Secrets::default();
        let replay = replay_of(
            &[(
                asked("GET", "http://s.test/q?b=2&a=1&_=1765000000000", None),
                "found",
            )],
            &none,
        );
        let later = asked("GET", "http://s.test/q?a=1&b=2&_=1765000099999#top", None);
        assert_eq!(body(replay.answer(&later)), "found");
        let other = asked("GET", "http://s.test/q?a=1&b=3", None);
        assert_eq!(body(replay.answer(&other)), "failed: ConnectionRefused");
        let report = replay.report();
        assert_eq!(report.unmatched, ["GET http://s.test/q?a=1&b=3"]);
        assert_eq!(report.requests, 1);
    }

    #[test]
    fn a_post_is_matched_by_its_body_with_a_typed_secret_sealed_on_both_sides() {
        let secrets = Secrets::new(vec!["pw=hunter2-horse".parse().unwrap()]).unwrap();
        let sent = |pw: &str| asked("POST", "http://s.test/in", Some(&format!("u=ada&pw={pw}")));
        let replay = replay_of(
            &[
                (sent("hunter2-horse"), "welcome"),
                (sent("wrong-one"), "denied"),
            ],
            &secrets,
        );
        assert_eq!(body(replay.answer(&sent("hunter2-horse"))), "welcome");
        assert_eq!(body(replay.answer(&sent("wrong-one"))), "denied");
        let json = |n: u32| {
            asked(
                "POST",
                "http://s.test/j",
                Some(&format!("{{\"a\":{n},\"b\":2}}")),
            )
        };
        let replay = replay_of(&[(json(1), "one")], &secrets);
        let reordered = asked("POST", "http://s.test/j", Some("{\"b\":2, \"a\":1}"));
        assert_eq!(body(replay.answer(&reordered)), "one");
        assert!(matches!(replay.answer(&json(5)), Answer::Fail(_)));
    }

    #[test]
    fn timestamps_and_random_numbers_are_volatile_and_words_are_not() {
        assert!(volatile("since", "1765000000"));
        assert!(volatile("x", "0.7263541"));
        assert!(volatile("CB", "anything"));
        assert!(!volatile("page", "2"));
        assert!(!volatile("q", "jobs"));
    }

    #[test]
    fn a_moment_reads_with_or_without_its_milliseconds() {
        let t = moment("2026-03-14T09:26:53.250Z").unwrap();
        let base = crate::clock::parse_utc_rfc3339("2026-03-14T09:26:53Z").unwrap();
        assert_eq!(t, base + std::time::Duration::from_millis(250));
        assert_eq!(moment("2026-03-14T09:26:53Z"), Some(base));
        assert_eq!(moment("yesterday"), None);
    }

    #[test]
    fn a_file_that_is_not_a_har_is_refused_with_its_reason() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.har");
        std::fs::write(&path, "{\"log\": 3}").unwrap();
        let err = SiteReplay::open(&path, Secrets::default()).unwrap_err();
        assert!(
            err.to_string().contains("is not a HAR 1.2 recording"),
            "{err}"
        );
        let missing = SiteReplay::open(&dir.path().join("none.har"), Secrets::default());
        assert!(matches!(missing, Err(SiteError::Read { .. })));
    }
}
