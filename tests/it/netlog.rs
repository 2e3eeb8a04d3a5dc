//! Reading Chromium's net log (what `SEAMARK_NET_LOG` makes each browser
//! write): every request to a host that is not this machine, with the
//! traffic annotation that names the service that made it.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// A request the browser made, or a host it looked up, off this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Foreign {
    /// The URL, or `scheme://host:port` for a lookup with no request.
    pub url: String,
    /// The traffic annotation's hash, when the net log names one.
    pub annotation: Option<u64>,
    /// The net log it is in.
    pub file: PathBuf,
}

impl Foreign {
    /// Whether a page asked for it (a navigation or a page's own resource:
    /// a lure the domain guard blocks), rather than the browser itself.
    pub fn is_a_pages(&self) -> bool {
        self.annotation
            .is_some_and(|a| PAGE_ANNOTATIONS.contains(&a))
    }

    /// The service, when the annotation is one seen before.
    pub fn service(&self) -> &'static str {
        self.annotation
            .map_or("a host lookup (no request)", service)
    }
}

/// The traffic annotations of what a page asks for: navigations
/// (navigation_url_loader) and a page's subresources (blink_resource_loader).
const PAGE_ANNOTATIONS: &[u64] = &[63171670, 101845102];

/// The services whose annotations turned up in seamark's net logs, each
/// turned off (or pointed nowhere) in `src/browser/mod.rs`'s flags.
fn service(annotation: u64) -> &'static str {
    match annotation {
        109231476 => "omnibox AI Mode eligibility (AimEnabled)",
        65957842 => "GCM device check-in",
        61656965 => "GCM registration",
        46188932 => "network time (NetworkTimeServiceQuerying)",
        117649486 => "spell-check dictionary download",
        35565745 => "Google account list (gaia ListAccounts)",
        54845618 => "component updater",
        _ => "unknown service",
    }
}

/// Every foreign request in the net logs of `dir` (none when it has none).
pub fn foreign_in(dir: &Path) -> Vec<Foreign> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files.iter().flat_map(|f| foreign_requests(f)).collect()
}

/// The net logs in `dir`.
pub fn logs_in(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |d| d.count())
}

/// The foreign requests of one net log. A browser that was killed leaves
/// its log cut short, maybe in the middle of an event: it is read up to its
/// last whole event (a browser killed before it wrote any made none).
pub fn foreign_requests(file: &Path) -> Vec<Foreign> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let Some(log) = parse(&text) else {
        return Vec::new();
    };
    let types = &log["constants"]["logEventTypes"];
    let type_id = |name: &str| types[name].as_u64();
    let (alive, lookup) = (
        type_id("REQUEST_ALIVE"),
        type_id("HOST_RESOLVER_MANAGER_REQUEST"),
    );
    let mut found = Vec::new();
    for event in log["events"].as_array().into_iter().flatten() {
        let kind = event["type"].as_u64();
        let params = &event["params"];
        let (url, annotation) = if kind == alive {
            (
                params["url"].as_str(),
                params["traffic_annotation"].as_u64(),
            )
        } else if kind == lookup {
            (params["host"].as_str(), None)
        } else {
            continue;
        };
        let Some(url) = url else { continue };
        if is_foreign(url) {
            found.push(Foreign {
                url: url.chars().take(120).collect(),
                annotation,
                file: file.to_path_buf(),
            });
        }
    }
    // A lookup for a request already listed says nothing more.
    let hosts: Vec<Option<String>> = found
        .iter()
        .filter(|f| f.annotation.is_some())
        .map(|f| host(&f.url))
        .collect();
    found.retain(|f| f.annotation.is_some() || !hosts.contains(&host(&f.url)));
    found
}

/// A net log, whole or cut short: Chromium writes an event a line.
fn parse(text: &str) -> Option<Value> {
    if let Ok(v) = serde_json::from_str(text) {
        return Some(v);
    }
    let mut cut = text;
    while !cut.is_empty() {
        let whole = cut.trim_end().trim_end_matches(',');
        if let Ok(v) = serde_json::from_str(&format!("{whole}]}}")) {
            return Some(v);
        }
        cut = &cut[..cut.trim_end().rfind('\n').unwrap_or(0)];
    }
    None
}

fn host(url: &str) -> Option<String> {
    url::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
}

/// Whether a URL reaches past this machine: a network scheme and a host
/// that is not loopback.
pub fn is_foreign(url: &str) -> bool {
    let Ok(u) = url::Url::parse(url) else {
        return false;
    };
    if !matches!(u.scheme(), "http" | "https" | "ws" | "wss") {
        return false;
    }
    match u.host() {
        Some(url::Host::Ipv4(ip)) => !ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => !ip.is_loopback(),
        Some(url::Host::Domain(d)) => d != "localhost" && !d.ends_with(".localhost"),
        None => false,
    }
}

#[test]
fn loopback_is_home_and_every_other_host_is_foreign() {
    assert!(!is_foreign("http://127.0.0.1:4000/signin.html"));
    assert!(!is_foreign("http://127.0.0.2:9/ListAccounts"));
    assert!(!is_foreign("http://[::1]:80/"));
    assert!(!is_foreign("http://localhost:3000/"));
    assert!(!is_foreign("data:text/html,hi"));
    assert!(is_foreign("https://www.google.com/async/folae"));
    assert!(is_foreign("https://android.clients.google.com:443"));
}

#[test]
fn a_net_log_cut_short_by_a_kill_is_still_read() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("cut.json");
    let log = r#"{"constants": {"logEventTypes": {"REQUEST_ALIVE": 2}},
"events": [
{"type": 2, "params": {"traffic_annotation": 65957842, "url": "https://android.clients.google.com/checkin"}},
{"type": 2, "params": {"traffic_annotation": 1, "url": "http://127.0.0.1:8000/"}},
"#;
    std::fs::write(&file, format!("{log}{{\"type\": 2, \"par")).expect("write");
    let found = foreign_requests(&file);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].service(), "GCM device check-in");
}
