//! The HTTP side of `seamark serve`: the JSON API under `/api/sessions`,
//! server-sent events of a session's changes, and the sessions page (its
//! forms post here too). Every route wants the bearer token when one is
//! set; a POST from a page of another origin is refused, so that no site a
//! person visits can submit or answer a session through their browser.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Limited, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::json;
use tokio::net::TcpListener;
use tokio::sync::watch;

use super::http::{status_of, Body};
use super::page;
use super::request::{OptionSpec, SessionRequest};
use super::store::NewSession;
use super::{AccountSpec, CoworkerError, SessionState, Store};
use crate::listen::{error, json_response, Gate};

/// The largest request body taken (a session's JSON, an answer).
pub const MAX_BODY: usize = 1 << 20;

/// The most sessions one list gives.
const MAX_LIST: i64 = 500;

/// What the server needs besides the store.
#[derive(Debug, Clone)]
pub struct ApiConfig {
    /// Who may ask: the host names the server answers to (the loopback
    /// names and the address it listens on, and those given with
    /// `--allow-host`) and the bearer token every route wants, if any.
    pub gate: Gate,
    /// The run options a session may set.
    pub spec: Arc<Vec<OptionSpec>>,
    /// Checks a session's run as `seamark run` will parse it (its
    /// arguments after `run`): a value a flag refuses is refused at
    /// submission, with the flag's reason.
    pub check: fn(&[String]) -> Result<(), RunArgsRefused>,
}

/// Why a session's run options would not parse as `seamark run`'s: the
/// flag's own reason, as its parser worded it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct RunArgsRefused {
    /// The reason, on one line.
    pub reason: String,
}

/// How long a request's body may take to arrive.
const BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// Serves the API and the page on `listener` until `shutdown` turns true.
pub async fn serve(
    listener: TcpListener,
    store: Store,
    config: ApiConfig,
    shutdown: watch::Receiver<bool>,
) {
    let config = Arc::new(config);
    let answer = move |req| {
        let (store, config) = (store.clone(), config.clone());
        async move { guarded(route(req, &store, &config).await) }
    };
    crate::listen::serve(listener, answer, shutdown).await;
}

/// What no page of the server's may do, on every answer: be sniffed as
/// another type, framed by another site, or tell another site its address
/// (a token may be in it). A page of the server's own runs no script, loads
/// nothing from elsewhere, and posts only to the server; a file of a run
/// says its own policy.
fn guarded(mut response: Response<Body>) -> Response<Body> {
    let unavailable = response.status() == StatusCode::SERVICE_UNAVAILABLE;
    let headers = response.headers_mut();
    if unavailable {
        headers.insert("retry-after", hyper::header::HeaderValue::from_static("5"));
    }
    for (name, value) in [
        ("x-content-type-options", "nosniff"),
        // Not no-referrer: under it a browser sends a form's POST with
        // `Origin: null`, which the origin check refuses.
        ("referrer-policy", "same-origin"),
        ("x-frame-options", "DENY"),
        ("content-security-policy", PAGE_POLICY),
    ] {
        if let (false, Ok(v)) = (headers.contains_key(name), value.parse()) {
            headers.insert(name, v);
        }
    }
    response
}

/// The sessions page's policy: no script, nothing from elsewhere; a
/// session's live view (its own page, with its own policy) in a frame.
const PAGE_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; \
                           frame-src 'self'; form-action 'self'; frame-ancestors 'none'; \
                           base-uri 'none'";

async fn route(req: Request<Incoming>, store: &Store, config: &ApiConfig) -> Response<Body> {
    if let Some(refused) = config.gate.refused(&req) {
        return refused;
    }
    let path = req.uri().path().to_string();
    // Each segment decoded on its own: an id or a file name holds any
    // character, and a `%2F` in one never makes two.
    let decoded: Vec<String> = path
        .trim_matches('/')
        .split('/')
        .map(|p| {
            percent_encoding::percent_decode_str(p)
                .decode_utf8_lossy()
                .into_owned()
        })
        .collect();
    let parts: Vec<&str> = decoded.iter().map(String::as_str).collect();
    match parts.as_slice() {
        ["api", rest @ ..] => api_route(req, store, config, rest, &path).await,
        rest => page_route(req, store, config, rest, &path).await,
    }
}

/// The page's routes: what a person's browser asks for and posts.
async fn page_route(
    req: Request<Incoming>,
    store: &Store,
    config: &ApiConfig,
    parts: &[&str],
    path: &str,
) -> Response<Body> {
    match (req.method().clone(), parts) {
        (Method::GET, [""]) => page::sessions(store, req.uri().query()).await,
        (Method::GET, ["new"]) => page::new_task(store).await,
        (Method::GET, ["skills"]) => page::skills(store).await,
        (Method::GET, ["sessions", id]) => page::session(store, id).await,
        (Method::GET, ["sessions", id, "run", rest @ ..]) => page::run_file(store, id, rest).await,
        (Method::POST, ["sessions", id, "stop"]) => page::stopped(store, id).await,
        // The view's page is at the folder's path: its own paths are relative.
        (Method::GET, ["sessions", id, "live"]) if !path.ends_with('/') => {
            page::see(&format!("/sessions/{id}/live/"))
        }
        (_, ["sessions", id, "live", rest @ ..]) => {
            super::live_view::pass_on(store, id, rest, req).await
        }
        (Method::POST, ["skills", name, verb @ ("approve" | "refuse")]) => {
            page::decided(store, name, *verb == "approve").await
        }
        (Method::POST, ["sessions"]) => match form(req).await {
            Ok(fields) => match accept(store, config, page::task_of_form(&fields)).await {
                Ok(session) => page::see(&format!("/sessions/{}", session.id)),
                Err(e) => page::problem(status_of(&e), e),
            },
            Err(r) => r,
        },
        (Method::POST, ["sessions", id, "answer"]) => match form(req).await {
            Ok(fields) => page::answered(store, id, &fields).await,
            Err(r) => r,
        },
        (Method::POST, ["answers"]) => match form(req).await {
            Ok(fields) => page::answered_all(store, &fields).await,
            Err(r) => r,
        },
        (_, [""] | ["new" | "answers" | "sessions" | "skills", ..]) => error(
            StatusCode::METHOD_NOT_ALLOWED,
            "this method is not taken here",
        ),
        _ => error(StatusCode::NOT_FOUND, format!("no route {path}")),
    }
}

/// The JSON API's routes, under `/api`.
async fn api_route(
    req: Request<Incoming>,
    store: &Store,
    config: &ApiConfig,
    parts: &[&str],
    path: &str,
) -> Response<Body> {
    let listed = |r: Result<serde_json::Value, CoworkerError>| match r {
        Ok(v) => json_response(StatusCode::OK, v),
        Err(e) => error(status_of(&e), e),
    };
    match (req.method().clone(), parts) {
        (Method::GET, ["sessions"]) => list(store, req.uri().query()).await,
        (Method::POST, ["sessions"]) => submit(req, store, config).await,
        (Method::GET, ["sessions", id]) => reply(store.get(id).await),
        (Method::POST, ["sessions", id, "answer"]) => match body_json(req).await {
            Ok(v) => match v.as_object().map(|o| (o.get("answer"), o.len())) {
                Some((Some(serde_json::Value::String(a)), 1)) if !a.trim().is_empty() => {
                    reply(store.answer(id, a).await)
                }
                _ => error(
                    StatusCode::BAD_REQUEST,
                    "the body must be {\"answer\": \"…\"} (a leading ! keeps it secret), and \
                     nothing else",
                ),
            },
            Err(r) => r,
        },
        (Method::POST, ["sessions", id, "stop"]) => reply(store.stop(id).await),
        (Method::GET, ["sessions", id, "events"]) => {
            let after = last_event(&req);
            if wants_json(&req) {
                events_json(store, id, after).await
            } else {
                events(store.clone(), id.to_string(), after).await
            }
        }
        (Method::GET, ["accounts"]) => {
            listed(store.accounts().await.map(|a| json!({ "accounts": a })))
        }
        (Method::POST, ["accounts"]) => define_account(req, store).await,
        (Method::GET, ["skills"]) => listed(store.skills().await.map(|k| json!({ "skills": k }))),
        (Method::POST, ["skills", name, verb @ ("approve" | "refuse")]) => listed(
            store
                .decide_skill(name, *verb == "approve")
                .await
                .map(|()| json!({ "name": name, "decided": verb })),
        ),
        (_, ["sessions" | "accounts" | "skills", ..]) => error(
            StatusCode::METHOD_NOT_ALLOWED,
            "this method is not taken here",
        ),
        _ => error(StatusCode::NOT_FOUND, format!("no route {path}")),
    }
}

fn reply(result: Result<super::Session, CoworkerError>) -> Response<Body> {
    match result {
        Ok(session) => json_response(StatusCode::OK, json!(session)),
        Err(e) => error(status_of(&e), e),
    }
}

/// A request's body, at most [`MAX_BODY`] bytes.
async fn body_bytes(req: Request<Incoming>) -> Result<Bytes, Response<Body>> {
    let read = tokio::time::timeout(
        BODY_TIMEOUT,
        Limited::new(req.into_body(), MAX_BODY).collect(),
    );
    let Ok(read) = read.await else {
        return Err(error(
            StatusCode::REQUEST_TIMEOUT,
            format!("the body did not come within {} s", BODY_TIMEOUT.as_secs()),
        ));
    };
    match read {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(error(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the body is over {MAX_BODY} bytes"),
        )),
        Err(e) => Err(error(
            StatusCode::BAD_REQUEST,
            format!("the body could not be read: {e}"),
        )),
    }
}

async fn body_json(req: Request<Incoming>) -> Result<serde_json::Value, Response<Body>> {
    let json_type = req
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| {
            t.trim()
                .to_ascii_lowercase()
                .starts_with("application/json")
        });
    if !json_type {
        return Err(error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "the body must be JSON, sent as Content-Type: application/json",
        ));
    }
    let bytes = body_bytes(req).await?;
    serde_json::from_slice(&bytes).map_err(|e| {
        error(
            StatusCode::BAD_REQUEST,
            format!("the body is not JSON: {e}"),
        )
    })
}

async fn form(req: Request<Incoming>) -> Result<Vec<(String, String)>, Response<Body>> {
    let bytes = body_bytes(req).await?;
    Ok(url::form_urlencoded::parse(&bytes).into_owned().collect())
}

async fn list(store: &Store, query: Option<&str>) -> Response<Body> {
    let mut state = None;
    let mut limit = 100;
    for (k, v) in url::form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        match k.as_ref() {
            "state" => match SessionState::from_word(&v) {
                Some(s) => state = Some(s),
                None => return error(StatusCode::BAD_REQUEST, format!("no state {v:?}")),
            },
            "limit" => match v.parse::<i64>() {
                Ok(n) if (1..=MAX_LIST).contains(&n) => limit = n,
                _ => {
                    return error(
                        StatusCode::BAD_REQUEST,
                        format!("limit {v:?}: a number from 1 to {MAX_LIST}"),
                    )
                }
            },
            other => {
                return error(
                    StatusCode::BAD_REQUEST,
                    format!("unknown parameter {other:?}"),
                )
            }
        }
    }
    match store.list(state, limit).await {
        Ok(sessions) => json_response(StatusCode::OK, json!({ "sessions": sessions })),
        Err(e) => error(status_of(&e), e),
    }
}

async fn submit(req: Request<Incoming>, store: &Store, config: &ApiConfig) -> Response<Body> {
    let body = match body_json(req).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    match accept(store, config, body).await {
        Ok(session) => json_response(
            StatusCode::CREATED,
            json!({ "id": session.id, "status": session.status }),
        ),
        Err(e) => error(status_of(&e), e),
    }
}

/// A submission (the API's JSON, or the page's form as JSON) checked as
/// `seamark run` will parse it, and queued.
async fn accept(
    store: &Store,
    config: &ApiConfig,
    body: serde_json::Value,
) -> Result<super::Session, CoworkerError> {
    let request = SessionRequest::from_value(body, &config.spec)?;
    let args = request.run_args(&config.spec, None)?;
    (config.check)(&args).map_err(|why| CoworkerError::BadRequest(why.to_string()))?;
    new_session(store, &request).await
}

/// Defines an account (`{"name", "secrets"}`), or changes its secrets.
async fn define_account(req: Request<Incoming>, store: &Store) -> Response<Body> {
    let body = match body_json(req).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let spec = serde_json::from_value::<AccountSpec>(body)
        .map_err(|e| {
            CoworkerError::BadRequest(format!("an account is {{\"name\", \"secrets\"}}: {e}"))
        })
        .and_then(AccountSpec::checked);
    let defined = match spec {
        Ok(spec) => store.define_account(&spec).await,
        Err(e) => Err(e),
    };
    match defined {
        Ok(account) => json_response(StatusCode::OK, json!(account)),
        Err(e) => error(status_of(&e), e),
    }
}

/// Stores a checked submission as a queued session.
pub async fn new_session(
    store: &Store,
    request: &SessionRequest,
) -> Result<super::Session, CoworkerError> {
    let id = new_id();
    let new = NewSession {
        task: &request.task,
        url: &request.url,
        account: request.account.as_deref(),
        options: &request.options,
        // Where it runs is the worker's: its folder, once one takes it.
        run_dir: "",
    };
    store.submit(&id, &new).await
}

/// A new session id: 12 random hex digits.
fn new_id() -> String {
    let mut bytes = [0u8; 6];
    if ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes).is_err() {
        // No randomness: the time, which is unique enough on one server.
        let now = super::store::now_ms().to_be_bytes();
        bytes.copy_from_slice(&now[2..]);
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The event a stream goes on after: `Last-Event-ID`, or `?after=`.
fn last_event(req: &Request<Incoming>) -> i64 {
    let header = req
        .headers()
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok());
    let query = url::form_urlencoded::parse(req.uri().query().unwrap_or_default().as_bytes())
        .find(|(k, _)| k == "after")
        .and_then(|(_, v)| v.parse().ok());
    header.or(query).unwrap_or(0)
}

/// Whether a request asks for JSON (`Accept: application/json`) rather
/// than a stream.
fn wants_json(req: &Request<Incoming>) -> bool {
    req.headers()
        .get_all("accept")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|v| v.split(';').next().unwrap_or_default().trim() == "application/json")
}

/// A session's changes so far (after `after`), as one JSON list in the
/// order they happened.
async fn events_json(store: &Store, id: &str, after: i64) -> Response<Body> {
    let listed = async {
        let session = store.get(id).await?;
        let events = store.events(id, after).await?;
        Ok::<_, CoworkerError>((session, events))
    };
    match listed.await {
        Ok((session, events)) => json_response(
            StatusCode::OK,
            json!({ "status": session.status, "events": events }),
        ),
        Err(e) => error(status_of(&e), e),
    }
}

/// A session's changes as server-sent events, until it has ended: each is
/// `event: <state or step>`, `id: <seq>`, and the change as JSON.
async fn events(store: Store, id: String, after: i64) -> Response<Body> {
    if let Err(e) = store.get(&id).await {
        return error(status_of(&e), e);
    }
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(16);
    tokio::spawn(async move {
        let mut after = after;
        let mut quiet = 0u32;
        loop {
            // The state first: the events read after it hold every change
            // up to it, so an ended session's stream ends complete.
            let ended = match store.get(&id).await {
                Ok(s) => s.status.ended(),
                Err(_) => true,
            };
            let events = match store.events(&id, after).await {
                Ok(events) => events,
                Err(_) => break,
            };
            for e in &events {
                after = e.seq;
                let frame = format!("id: {}\nevent: {}\ndata: {}\n\n", e.seq, e.state, json!(e));
                if tx.send(Bytes::from(frame)).await.is_err() {
                    return;
                }
            }
            if ended {
                break;
            }
            quiet = if events.is_empty() { quiet + 1 } else { 0 };
            // A comment now and then keeps proxies from closing the stream.
            if quiet % 50 == 49
                && tx
                    .send(Bytes::from_static(b": still here\n\n"))
                    .await
                    .is_err()
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    });
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|b| (Ok::<_, Infallible>(Frame::data(b)), rx))
    });
    let mut r = Response::new(BodyExt::boxed(StreamBody::new(stream)));
    let headers = r.headers_mut();
    headers.insert(
        "content-type",
        hyper::header::HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(
        "cache-control",
        hyper::header::HeaderValue::from_static("no-store"),
    );
    r
}
