//! The domain guard: a small HTTP proxy on 127.0.0.1 that a launched Chromium
//! sends every request through (`--proxy-server`, loopback included). It sees
//! the host of each request, whatever made it: a navigation, a redirect hop, a
//! new tab or popup, an iframe, a script, a worker. A blocked host gets a 403
//! and never a connection; each refusal is recorded.
//!
//! HTTPS goes through `CONNECT host:port` tunnels: the host is checked and the
//! bytes are passed through untouched (no TLS interception). Plain HTTP
//! requests are forwarded with `Connection: close`, so every request on a
//! connection is checked.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use super::domains::DomainPolicy;
use crate::browser::RequestFilter;
use crate::clock::utc_rfc3339;

/// A request the guard refused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Blocked {
    /// The URL (plain HTTP) or `host:port` (a tunnel).
    pub target: String,
    /// Why.
    pub reason: String,
    /// When, UTC.
    pub at: String,
}

/// Hosts Chromium itself calls in the background (sign-in, updates, safe
/// browsing): their refusals are recorded but are no news to the model.
const BROWSER_HOSTS: &[&str] = &[
    "accounts.google.com",
    "clients1.google.com",
    "clients2.google.com",
    "update.googleapis.com",
    "passwordsleakcheck-pa.googleapis.com",
    "clients2.google.com",
    "optimizationguide-pa.googleapis.com",
    "safebrowsing.googleapis.com",
    "content-autofill.googleapis.com",
    "redirector.gvt1.com",
    "edgedl.me.gvt1.com",
];

impl Blocked {
    /// Whether the browser, not the page, made this request.
    pub fn is_browser_background(&self) -> bool {
        let host = url::Url::parse(&self.target)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_else(|| host_port(&self.target, 443).0);
        BROWSER_HOSTS.contains(&host.as_str())
    }
}

/// The running guard.
pub struct DomainGuard {
    /// `127.0.0.1:PORT`, for `--proxy-server`.
    pub addr: String,
    blocked: Arc<Mutex<Vec<Blocked>>>,
    policy: Arc<DomainPolicy>,
    task: JoinHandle<()>,
}

impl Drop for DomainGuard {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Longest request head read.
const MAX_HEAD: usize = 64 * 1024;

impl DomainGuard {
    /// Starts the guard for `policy`.
    pub async fn start(policy: DomainPolicy) -> std::io::Result<DomainGuard> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?.to_string();
        let blocked = Arc::new(Mutex::new(Vec::new()));
        let log = blocked.clone();
        let policy = Arc::new(policy);
        let serving = policy.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else {
                    continue;
                };
                let (log, policy) = (log.clone(), serving.clone());
                tokio::spawn(async move {
                    if let Err(e) = serve(client, &policy, &log).await {
                        tracing::debug!("domain guard: {e}");
                    }
                });
            }
        });
        Ok(DomainGuard {
            addr,
            blocked,
            policy,
            task,
        })
    }

    /// Everything refused so far.
    pub fn blocked(&self) -> Vec<Blocked> {
        self.blocked.lock().map(|b| b.clone()).unwrap_or_default()
    }

    /// The shared record, for the executor to report new refusals.
    pub fn record(&self) -> Arc<Mutex<Vec<Blocked>>> {
        self.blocked.clone()
    }

    /// The same checks for a browser that cannot be given a proxy (one
    /// seamark attached to): a filter its tabs' requests pass (see
    /// browser/intercept.rs), which records its refusals here, and the seal
    /// for the routes that filter does not see. Requests without a host
    /// (`data:`, `blob:`) never reach the network, and pass.
    pub fn request_filter(&self) -> RequestFilter {
        let (policy, log) = (self.policy.clone(), self.blocked.clone());
        let seal = policy.seal_script();
        RequestFilter::new(move |target| {
            let host = url::Url::parse(target)
                .ok()
                .filter(|u| matches!(u.scheme(), "http" | "https" | "ws" | "wss"))
                .and_then(|u| u.host_str().map(str::to_string));
            match host.and_then(|h| policy.refusal(&h)) {
                Some(reason) => {
                    record(&log, target, reason);
                    false
                }
                None => true,
            }
        })
        .sealed_with(seal)
    }
}

/// Records a refusal.
fn record(log: &Mutex<Vec<Blocked>>, target: &str, reason: String) -> String {
    if let Ok(mut l) = log.lock() {
        l.push(Blocked {
            target: target.to_string(),
            reason: reason.clone(),
            at: utc_rfc3339(SystemTime::now()),
        });
    }
    reason
}

/// Splits `host:port` (IPv6 in brackets) into its parts.
fn host_port(authority: &str, default_port: u16) -> (String, u16) {
    if let Some(rest) = authority.strip_prefix('[') {
        if let Some((h, tail)) = rest.split_once(']') {
            let port = tail
                .strip_prefix(':')
                .and_then(|p| p.parse().ok())
                .unwrap_or(default_port);
            return (h.to_string(), port);
        }
    }
    match authority.rsplit_once(':') {
        Some((h, p)) if p.chars().all(|c| c.is_ascii_digit()) && !p.is_empty() => {
            (h.to_string(), p.parse().unwrap_or(default_port))
        }
        _ => (authority.to_string(), default_port),
    }
}

async fn serve(
    mut client: TcpStream,
    policy: &DomainPolicy,
    log: &Mutex<Vec<Blocked>>,
) -> std::io::Result<()> {
    let Some((buf, head_end)) = read_head(&mut client).await? else {
        return Ok(());
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default().to_string();
    let mut parts = request_line.split_whitespace();
    let (method, target, version) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or("HTTP/1.1"),
    );
    let body = &buf[head_end..];
    if method.eq_ignore_ascii_case("CONNECT") {
        return tunnel(client, target, body, policy, log).await;
    }
    let Ok(url) = url::Url::parse(target) else {
        return client
            .write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            .await;
    };
    let host = url.host_str().unwrap_or_default().to_string();
    if let Some(reason) = policy.refusal(&host) {
        let reason = record(log, url.as_str(), reason);
        let body = format!(
            "<!doctype html><title>Blocked</title><h1>Blocked by seamark</h1><p>{}</p>",
            reason.replace('<', "&lt;")
        );
        let answer = format!(
            "HTTP/1.1 403 Forbidden\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        return client.write_all(answer.as_bytes()).await;
    }
    let port = url.port_or_known_default().unwrap_or(80);
    let Ok(mut upstream) = TcpStream::connect((host.as_str(), port)).await else {
        return client.write_all(BAD_GATEWAY).await;
    };
    let forwarded = forwarded_head(method, &url, version, lines);
    upstream.write_all(forwarded.as_bytes()).await?;
    upstream.write_all(body).await?;
    tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
    Ok(())
}

/// What the proxy answers when the host cannot be reached.
const BAD_GATEWAY: &[u8] = b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n";

/// Reads a request's head: the bytes read and where the head ends; none
/// when the client closed first. A head too large is answered 431.
async fn read_head(client: &mut TcpStream) -> std::io::Result<Option<(Vec<u8>, usize)>> {
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    loop {
        let n = tokio::time::timeout(Duration::from_secs(30), client.read(&mut chunk))
            .await
            .map_err(|_| std::io::Error::other("no request head"))??;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            return Ok(Some((buf, i + 4)));
        }
        if buf.len() > MAX_HEAD {
            client
                .write_all(b"HTTP/1.1 431 Request Header Fields Too Large\r\n\r\n")
                .await?;
            return Ok(None);
        }
    }
}

/// `CONNECT host:port`: a tunnel to an allowed host, with the bytes the
/// client sent after the head; a refused host is answered 403.
async fn tunnel(
    mut client: TcpStream,
    target: &str,
    sent: &[u8],
    policy: &DomainPolicy,
    log: &Mutex<Vec<Blocked>>,
) -> std::io::Result<()> {
    let (host, port) = host_port(target, 443);
    if let Some(reason) = policy.refusal(&host) {
        record(log, target, reason);
        return client
            .write_all(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
            .await;
    }
    let Ok(mut upstream) = TcpStream::connect((host.as_str(), port)).await else {
        return client.write_all(BAD_GATEWAY).await;
    };
    client
        .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        .await?;
    upstream.write_all(sent).await?;
    tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
    Ok(())
}

/// The head sent on: an origin-form request line and the client's headers
/// but those of its connection, closed after one request (so each request
/// is checked).
fn forwarded_head<'a>(
    method: &str,
    url: &url::Url,
    version: &str,
    headers: impl Iterator<Item = &'a str>,
) -> String {
    let path = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    };
    let mut forwarded = format!("{method} {path} {version}\r\n");
    for line in headers.filter(|l| !l.is_empty()) {
        let name = line
            .split(':')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        if matches!(
            name.as_str(),
            "connection" | "proxy-connection" | "keep-alive"
        ) {
            continue;
        }
        forwarded.push_str(line);
        forwarded.push_str("\r\n");
    }
    forwarded.push_str("Connection: close\r\n\r\n");
    forwarded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authorities_split_into_host_and_port() {
        assert_eq!(
            host_port("example.com:8443", 443),
            ("example.com".into(), 8443)
        );
        assert_eq!(host_port("example.com", 443), ("example.com".into(), 443));
        assert_eq!(host_port("[::1]:8080", 80), ("::1".into(), 8080));
        assert_eq!(host_port("[::1]", 80), ("::1".into(), 80));
    }

    #[tokio::test]
    async fn the_request_filter_refuses_as_the_proxy_does_and_records_it() {
        let guard = DomainGuard::start(DomainPolicy {
            allow: vec!["127.0.0.1".parse().expect("pattern")],
            block: Vec::new(),
        })
        .await
        .expect("guard");
        let filter = guard.request_filter();
        assert!(filter.allows("http://127.0.0.1:8080/page"));
        assert!(!filter.allows("https://tracker.example/pixel.png"));
        assert!(!filter.allows("wss://tracker.example/socket"));
        // No host, no network: nothing leaves.
        assert!(filter.allows("data:text/plain,hi"));
        let blocked = guard.blocked();
        assert_eq!(blocked.len(), 2, "{blocked:?}");
        assert_eq!(blocked[0].target, "https://tracker.example/pixel.png");
        assert!(blocked[0].reason.contains("outside the allowed domains"));
    }
}
