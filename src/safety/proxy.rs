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
    let Some((head, buf)) = read_head(&mut client).await? else {
        return Ok(());
    };
    let body = &buf[head.end..];
    if head.method.eq_ignore_ascii_case("CONNECT") {
        return tunnel(client, &head.target, body, policy, log).await;
    }
    let Ok(url) = url::Url::parse(&head.target) else {
        return client.write_all(BAD_REQUEST).await;
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
    upstream.write_all(&head.forwarded(&url)).await?;
    upstream.write_all(body).await?;
    tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
    Ok(())
}

/// What the proxy answers when the host cannot be reached.
const BAD_GATEWAY: &[u8] = b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n";

/// What the proxy answers a head that is not HTTP, or a target that is no URL.
const BAD_REQUEST: &[u8] = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";

/// What the proxy answers a head too large.
const TOO_LARGE: &[u8] = b"HTTP/1.1 431 Request Header Fields Too Large\r\n\r\n";

/// Most header lines a request head may have.
const MAX_HEADERS: usize = 128;

/// A request's head, as httparse read it.
#[derive(Debug)]
struct Head {
    method: String,
    /// The request target: an absolute URL, or `host:port` for CONNECT.
    target: String,
    /// The `1` of HTTP/1.1.
    minor_version: u8,
    headers: Vec<(String, Vec<u8>)>,
    /// Where the head ends in the bytes read (the body, if any, follows).
    end: usize,
}

impl Head {
    /// Reads a head from `bytes`: none yet when it is not all there.
    fn parse(bytes: &[u8]) -> Result<Option<Head>, httparse::Error> {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut request = httparse::Request::new(&mut headers);
        let httparse::Status::Complete(end) = request.parse(bytes)? else {
            return Ok(None);
        };
        Ok(Some(Head {
            method: request.method.unwrap_or_default().to_string(),
            target: request.path.unwrap_or_default().to_string(),
            minor_version: request.version.unwrap_or(1),
            headers: request
                .headers
                .iter()
                .map(|h| (h.name.to_string(), h.value.to_vec()))
                .collect(),
            end,
        }))
    }

    /// The head sent on to `url`'s host: an origin-form request line and the
    /// client's headers but those of its connection, closed after one
    /// request (so each request is checked).
    fn forwarded(&self, url: &url::Url) -> Vec<u8> {
        let path = match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_string(),
        };
        let mut out =
            format!("{} {path} HTTP/1.{}\r\n", self.method, self.minor_version).into_bytes();
        let hop = |name: &str| {
            ["connection", "proxy-connection", "keep-alive"]
                .iter()
                .any(|h| name.eq_ignore_ascii_case(h))
        };
        for (name, value) in self.headers.iter().filter(|(n, _)| !hop(n)) {
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(value);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"Connection: close\r\n\r\n");
        out
    }
}

/// Reads a request's head and the bytes read with it; none when the client
/// closed first, or sent what is no HTTP head (answered 400) or one too
/// large (431).
async fn read_head(client: &mut TcpStream) -> std::io::Result<Option<(Head, Vec<u8>)>> {
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
        let refusal = match Head::parse(&buf) {
            Ok(Some(head)) => return Ok(Some((head, buf))),
            Ok(None) if buf.len() > MAX_HEAD => TOO_LARGE,
            Ok(None) => continue,
            Err(httparse::Error::TooManyHeaders) => TOO_LARGE,
            Err(_) => BAD_REQUEST,
        };
        client.write_all(refusal).await?;
        return Ok(None);
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

    #[test]
    fn a_forwarded_head_is_origin_form_without_the_clients_connection_headers() {
        let sent = b"GET http://site.test:8080/a/b?q=1 HTTP/1.1\r\nHost: site.test:8080\r\n\
            Proxy-Connection: keep-alive\r\nKeep-Alive: 5\r\nX-Raw: caf\xc3\xa9\r\n\r\nbody";
        let head = Head::parse(sent).unwrap().unwrap();
        assert_eq!(&sent[head.end..], b"body");
        let url = url::Url::parse(&head.target).unwrap();
        let forwarded = String::from_utf8(head.forwarded(&url)).unwrap();
        assert_eq!(
            forwarded,
            "GET /a/b?q=1 HTTP/1.1\r\nHost: site.test:8080\r\nX-Raw: caf\u{e9}\r\n\
             Connection: close\r\n\r\n"
        );
    }

    #[test]
    fn a_head_not_yet_whole_waits_and_one_that_is_no_http_is_an_error() {
        assert!(Head::parse(b"GET http://a.test/ HTTP/1.1\r\nHost: a")
            .unwrap()
            .is_none());
        assert!(Head::parse(b"\x16\x03\x01 not http\r\n\r\n").is_err());
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
