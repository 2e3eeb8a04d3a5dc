//! The live view's page and routes: the frames (each asked for after the
//! last one the viewer has, so that a slow viewer gets fewer and slows
//! nothing else), the state, and a person's take-over, input and hand-back.
//! Every path is relative to the page, so that `seamark serve` can pass a
//! session's view on under its own path.

use std::net::SocketAddr;
use std::time::Duration;

use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use serde::Deserialize;
use tokio::net::TcpListener;
use tokio::sync::watch;

use super::{Live, LiveError, PersonInput};
use crate::listen::{error, json_response, respond, Body, Gate};

/// How long a request for the next frame or state waits for one.
const LONG_POLL: Duration = Duration::from_secs(15);

/// The largest body a viewer posts (an input, a note).
const MAX_BODY: usize = 64 * 1024;

/// The page: no script of anyone's but its own, nothing from elsewhere,
/// framed only by its own server (the sessions page shows it).
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; \
                      img-src 'self' blob:; connect-src 'self'; frame-ancestors 'self'; \
                      base-uri 'none'; form-action 'none'";

const PAGE: &str = include_str!("page.html");
const SCRIPT: &str = include_str!("live.js");

/// Why the live view could not be served.
#[derive(Debug, thiserror::Error)]
pub enum LiveServerError {
    /// The address could not be listened on.
    #[error("cannot listen on {address} for the live view: {cause}")]
    Listen {
        /// The address.
        address: SocketAddr,
        /// Why.
        cause: std::io::Error,
    },
    /// Off loopback without a token.
    #[error(
        "a live view others can reach ({0}) wants a token: the system gave no random bytes for one"
    )]
    NoToken(SocketAddr),
}

/// A live view served on a port.
pub struct LiveServer {
    address: SocketAddr,
    /// The token it made itself (one given is the giver's to hand out).
    made_token: Option<String>,
    shutdown: watch::Sender<bool>,
}

impl Drop for LiveServer {
    fn drop(&mut self) {
        self.shutdown.send_replace(true);
    }
}

impl LiveServer {
    /// Serves `live` on `listen` (port 0: any free one). Off loopback it
    /// wants `token` (a new one when none is given); on loopback only when
    /// one is given. It answers to loopback's names, its own address, and
    /// `hosts`.
    pub async fn start(
        live: Live,
        listen: SocketAddr,
        token: Option<String>,
        hosts: &[String],
    ) -> Result<LiveServer, LiveServerError> {
        let made_token = match token {
            None if !listen.ip().is_loopback() => {
                Some(crate::listen::new_token().ok_or(LiveServerError::NoToken(listen))?)
            }
            _ => None,
        };
        let token = token.or_else(|| made_token.clone());
        let listener =
            TcpListener::bind(listen)
                .await
                .map_err(|cause| LiveServerError::Listen {
                    address: listen,
                    cause,
                })?;
        let address = listener
            .local_addr()
            .map_err(|cause| LiveServerError::Listen {
                address: listen,
                cause,
            })?;
        let mut names = Gate::default_hosts(address);
        names.extend(hosts.iter().cloned());
        let gate = std::sync::Arc::new(Gate {
            token: token.clone(),
            hosts: names,
            cookie: "seamark_live",
        });
        let (shutdown, stop) = watch::channel(false);
        let answer = move |req: Request<Incoming>| {
            let (live, gate) = (live.clone(), gate.clone());
            async move {
                let response = match gate.refused(&req) {
                    Some(refused) => refused,
                    None => route(req, &live).await,
                };
                guarded(response)
            }
        };
        tokio::spawn(crate::listen::serve(listener, answer, stop));
        Ok(LiveServer {
            address,
            made_token,
            shutdown,
        })
    }

    /// Where it listens.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The page's address, with the token it made (once: the page keeps it
    /// in a cookie) when it made one.
    pub fn url(&self) -> String {
        let host = match self.address.ip() {
            ip if ip.is_unspecified() => "127.0.0.1".to_string(),
            std::net::IpAddr::V6(ip) => format!("[{ip}]"),
            ip => ip.to_string(),
        };
        let base = format!("http://{host}:{}/", self.address.port());
        match &self.made_token {
            Some(t) => format!("{base}?token={t}"),
            None => base,
        }
    }
}

/// The headers every answer has: no sniffing, no referrer, the page's policy.
fn guarded(mut response: Response<Body>) -> Response<Body> {
    let headers = response.headers_mut();
    for (name, value) in [
        ("x-content-type-options", "nosniff"),
        ("referrer-policy", "same-origin"),
        ("x-frame-options", "SAMEORIGIN"),
        ("content-security-policy", POLICY),
    ] {
        if let Ok(v) = value.parse() {
            headers.insert(name, v);
        }
    }
    response
}

/// A number from the query (`after=`), 0 when there is none.
fn after(req: &Request<Incoming>) -> u64 {
    url::form_urlencoded::parse(req.uri().query().unwrap_or_default().as_bytes())
        .find(|(k, _)| k == "after")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0)
}

#[derive(Deserialize)]
struct HandBack {
    #[serde(default)]
    note: Option<String>,
}

async fn route(req: Request<Incoming>, live: &Live) -> Response<Body> {
    let path = req.uri().path().to_string();
    match (req.method().clone(), path.as_str()) {
        (Method::GET, "/") => respond(StatusCode::OK, "text/html; charset=utf-8", PAGE),
        (Method::GET, "/live.js") => {
            respond(StatusCode::OK, "text/javascript; charset=utf-8", SCRIPT)
        }
        (Method::GET, "/state") => {
            let state = live.state_after(after(&req), LONG_POLL).await;
            json_response(StatusCode::OK, serde_json::json!(state))
        }
        (Method::GET, "/frame") => match live.frame_after(after(&req), LONG_POLL).await {
            Some(frame) => {
                let mut r = respond(StatusCode::OK, "image/jpeg", frame.jpeg.clone());
                let headers = r.headers_mut();
                for (name, value) in [
                    ("x-seq", frame.seq.to_string()),
                    ("x-css-width", format!("{:.0}", frame.css_width)),
                    ("x-css-height", format!("{:.0}", frame.css_height)),
                ] {
                    if let Ok(v) = value.parse() {
                        headers.insert(name, v);
                    }
                }
                r
            }
            None => respond(StatusCode::NO_CONTENT, "text/plain", ""),
        },
        (Method::POST, "/take") => match live.take_over() {
            Ok(state) => json_response(StatusCode::OK, serde_json::json!(state)),
            Err(e) => error(StatusCode::CONFLICT, e),
        },
        (Method::POST, "/back") => match body::<HandBack>(req).await {
            Ok(back) => json_response(StatusCode::OK, serde_json::json!(live.hand_back(back.note))),
            Err(r) => r,
        },
        (Method::POST, "/input") => match body::<PersonInput>(req).await {
            Ok(input) => match live.input(input).await {
                Ok(()) => respond(StatusCode::NO_CONTENT, "text/plain", ""),
                Err(e @ (LiveError::NotYours | LiveError::Ended)) => error(StatusCode::CONFLICT, e),
                Err(e) => error(StatusCode::SERVICE_UNAVAILABLE, e),
            },
            Err(r) => r,
        },
        (_, "/" | "/live.js" | "/state" | "/frame" | "/take" | "/back" | "/input") => error(
            StatusCode::METHOD_NOT_ALLOWED,
            "this method is not taken here",
        ),
        _ => error(StatusCode::NOT_FOUND, format!("no route {path}")),
    }
}

/// A request's JSON body, at most [`MAX_BODY`]; an empty body is `{}`.
async fn body<T: serde::de::DeserializeOwned>(req: Request<Incoming>) -> Result<T, Response<Body>> {
    let bytes = Limited::new(req.into_body(), MAX_BODY)
        .collect()
        .await
        .map_err(|e| error(StatusCode::PAYLOAD_TOO_LARGE, e))?
        .to_bytes();
    let text = if bytes.is_empty() { &b"{}"[..] } else { &bytes };
    serde_json::from_slice(text).map_err(|e| error(StatusCode::BAD_REQUEST, e))
}
