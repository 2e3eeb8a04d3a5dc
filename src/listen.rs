//! What listens on a port of seamark's (`seamark serve`, a run's live view):
//! who may ask (a `Host` it answers to, its token when it has one, no POST
//! from another site's page), how many connections at once and for how
//! long, and the bodies it answers with.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::json;
use tokio::net::TcpListener;
use tokio::sync::watch;

/// A response's body: whole, or a stream of events.
pub type Body = BoxBody<Bytes, Infallible>;

/// A whole response, never cached.
pub fn respond(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Response<Body> {
    let mut r = Response::new(Full::new(body.into()).boxed());
    *r.status_mut() = status;
    if let Ok(v) = content_type.parse() {
        r.headers_mut().insert("content-type", v);
    }
    if let Ok(v) = "no-store".parse() {
        r.headers_mut().insert("cache-control", v);
    }
    r
}

/// A JSON response.
pub fn json_response(status: StatusCode, value: serde_json::Value) -> Response<Body> {
    respond(status, "application/json", value.to_string())
}

/// An error as JSON: `{"error": "…"}`.
pub fn error(status: StatusCode, why: impl std::fmt::Display) -> Response<Body> {
    json_response(status, json!({ "error": why.to_string() }))
}

/// The most connections served at once: past it a new one waits in the
/// kernel's queue until one ends (each ends within [`HEAD_TIMEOUT`] when it
/// sends nothing), so that slow clients cannot take every file the server
/// may open.
pub const MAX_CONNECTIONS: usize = 256;

/// How long a connection may take to send a request's head, or stay idle
/// between requests.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

/// Who may ask: the names a server answers to and its token.
#[derive(Debug, Clone)]
pub struct Gate {
    /// The bearer token every route wants, if any.
    pub token: Option<String>,
    /// The host names the server answers to (a request's `Host`, without
    /// its port).
    pub hosts: Vec<String>,
    /// The cookie the token is kept in after the page's way in: each
    /// server its own, so that one's never stands for another's.
    pub cookie: &'static str,
}

impl Gate {
    /// The names a server listening on `listen` answers to by default:
    /// loopback's, and its own address when it is not every address.
    pub fn default_hosts(listen: std::net::SocketAddr) -> Vec<String> {
        let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "[::1]"].map(String::from).into();
        if !listen.ip().is_unspecified() && !listen.ip().is_loopback() {
            hosts.push(match listen.ip() {
                std::net::IpAddr::V6(ip) => format!("[{ip}]"),
                ip => ip.to_string(),
            });
        }
        hosts
    }

    /// Whether a request's `Host` (with or without a port) is one of the
    /// names the server answers to.
    fn answers_to(&self, host: &str) -> bool {
        let name = match host.rsplit_once(':') {
            Some((name, port))
                if !name.is_empty()
                    && port.bytes().all(|b| b.is_ascii_digit())
                    && !port.is_empty() =>
            {
                name
            }
            _ => host,
        };
        !name.is_empty() && self.hosts.iter().any(|h| h.eq_ignore_ascii_case(name))
    }

    /// Why a request is refused before it is routed: a `Host` the server
    /// does not answer to (a page on a name rebound to this address), a
    /// token missing or wrong, or a POST from a page of another origin.
    pub fn refused<B>(&self, req: &Request<B>) -> Option<Response<Body>> {
        let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok());
        let host = header("host").unwrap_or_default();
        if !self.answers_to(host) {
            return Some(error(
                StatusCode::MISDIRECTED_REQUEST,
                format!(
                    "this server does not answer to the name {host:?}: it answers to {} (more \
                     with --allow-host)",
                    self.hosts.join(", ")
                ),
            ));
        }
        if let Some(token) = &self.token {
            if let Some(r) = self.token_refused(req, token) {
                return Some(r);
            }
        }
        if req.method() != Method::GET && req.method() != Method::HEAD {
            // A page of this server posts with its own origin; a client that
            // is no browser sends none. Any other page (another site, a file
            // opened from disk, a sandboxed document: `null`) is refused.
            let own = |o: &str| {
                ["http://", "https://"]
                    .iter()
                    .any(|scheme| o.eq_ignore_ascii_case(&format!("{scheme}{host}")))
            };
            if let Some(origin) = header("origin").filter(|o| !own(o)) {
                return Some(error(
                    StatusCode::FORBIDDEN,
                    format!("a POST from another origin ({origin}) is refused"),
                ));
            }
            if header("sec-fetch-site").is_some_and(|s| s == "cross-site" || s == "same-site") {
                return Some(error(
                    StatusCode::FORBIDDEN,
                    "a POST from another site's page is refused",
                ));
            }
        }
        None
    }

    /// A token missing or wrong; or the page's way in: the token once in the
    /// address, answered with a cookie no other site's page sends, and a
    /// redirect to the same path of this server without it.
    fn token_refused<B>(&self, req: &Request<B>, token: &str) -> Option<Response<Body>> {
        let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok());
        let bearer = header("authorization").and_then(|v| v.strip_prefix("Bearer "));
        let cookie = header("cookie").and_then(|c| {
            c.split(';')
                .filter_map(|kv| kv.trim().split_once('='))
                .find(|(k, _)| *k == self.cookie)
                .map(|(_, v)| v)
        });
        let pairs: Vec<(String, String)> =
            url::form_urlencoded::parse(req.uri().query().unwrap_or_default().as_bytes())
                .into_owned()
                .collect();
        let query = pairs.iter().find(|(k, _)| k == "token").map(|(_, v)| v);
        if let Some(given) = query.filter(|_| req.method() == Method::GET) {
            if same(given, token) {
                // A path of this server's own: `//host/` would be another host.
                let mut location = format!("/{}", req.uri().path().trim_start_matches('/'));
                let rest: Vec<&(String, String)> =
                    pairs.iter().filter(|(k, _)| k != "token").collect();
                if !rest.is_empty() {
                    let mut query = url::form_urlencoded::Serializer::new(String::new());
                    for (k, v) in rest {
                        query.append_pair(k, v);
                    }
                    location = format!("{location}?{}", query.finish());
                }
                let mut r = respond(StatusCode::SEE_OTHER, "text/plain", "");
                let headers = r.headers_mut();
                if let Ok(v) = location.parse() {
                    headers.insert("location", v);
                }
                if let Ok(v) =
                    format!("{}={token}; HttpOnly; SameSite=Strict; Path=/", self.cookie).parse()
                {
                    headers.insert("set-cookie", v);
                }
                return Some(r);
            }
        }
        if bearer.or(cookie).is_some_and(|t| same(t, token)) {
            return None;
        }
        Some(error(
            StatusCode::UNAUTHORIZED,
            "this server wants its token: Authorization: Bearer <token> (the page: /?token=<token> \
             once)",
        ))
    }
}

/// Compares a given token with the server's in time that does not depend
/// on where they differ.
pub fn same(given: &str, token: &str) -> bool {
    given.len() == token.len()
        && given
            .bytes()
            .zip(token.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// A token of 32 random bytes, as hex; none when the system gives no
/// random bytes (a token made otherwise could be guessed).
pub fn new_token() -> Option<String> {
    let mut bytes = [0u8; 32];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Serves connections from `listener` with `answer` until `shutdown` turns
/// true: at most [`MAX_CONNECTIONS`] at once, each cut off after
/// [`HEAD_TIMEOUT`] without a whole request head.
pub async fn serve<H, F>(listener: TcpListener, answer: H, mut shutdown: watch::Receiver<bool>)
where
    H: Fn(Request<Incoming>) -> F + Send + Sync + 'static,
    F: Future<Output = Response<Body>> + Send + 'static,
{
    let answer = Arc::new(answer);
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let mut failing = false;
    loop {
        let slot = tokio::select! {
            s = slots.clone().acquire_owned() => s,
            _ = shutdown.changed() => return,
        };
        let Ok(slot) = slot else { return };
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = shutdown.changed() => return,
        };
        let stream = match accepted {
            Ok((stream, _)) => {
                failing = false;
                stream
            }
            Err(e) => {
                // Out of files, most likely: retried after a pause, not at
                // once (which spins a core and helps nobody).
                if !failing {
                    tracing::warn!("a connection could not be taken: {e}");
                }
                failing = true;
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let answer = answer.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let answer = answer.clone();
                async move { Ok::<_, Infallible>(answer(req).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEAD_TIMEOUT)
                .max_headers(64)
                .serve_connection(TokioIo::new(stream), service)
                .await;
            drop(slot);
        });
    }
}
