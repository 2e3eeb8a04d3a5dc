//! A session's live view under `seamark serve`: each run serves its own
//! (`seamark run --live`, on its worker's machine, with a token of its
//! own); the worker learns its address and keeps it in the database, and
//! follows it: a run that asks for a person's hands makes its session
//! `waiting` (its browser kept open, its worker still holding it) until a
//! person takes the browser. The page's requests for `/sessions/{id}/live/`
//! are passed on to the run's view, with its token, which never leaves
//! the server.

use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::Duration;

use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use sqlx::Row;
use tokio::process::Command;

use super::http::{respond, status_of, Body};
use super::store::{noted, now_ms, Store};
use super::{CoworkerError, SessionState};
use crate::listen::error;
use crate::live::{ANNOUNCE_ENV, TOKEN_ENV};

/// The paths of a run's live view the page may ask for.
const ROUTES: &[&str] = &["", "live.js", "state", "frame", "take", "back", "input"];

/// The largest body passed on (an input, a note).
const MAX_BODY: usize = 64 * 1024;

/// Where a person's hands are, as the session shows it.
#[derive(Debug, Clone, PartialEq)]
enum Hands {
    /// The agent asks for them: the session waits.
    Asked(String),
    /// A person has the browser.
    Taken,
    /// The agent has it again.
    Back,
}

impl Store {
    /// Keeps where session `id`'s run serves its live view, and its token.
    async fn set_live(
        &self,
        id: &str,
        worker: &str,
        url: &str,
        token: &str,
    ) -> Result<(), CoworkerError> {
        sqlx::query(
            "UPDATE sessions SET live_url = $1, live_token = $2 WHERE id = $3 AND worker = $4",
        )
        .bind(url)
        .bind(token)
        .bind(id)
        .bind(worker)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Where session `id`'s live view is served, and its token, while its
    /// run has one.
    async fn live_of(&self, id: &str) -> Result<Option<(String, String)>, CoworkerError> {
        let row = sqlx::query(
            "SELECT live_url, live_token FROM sessions WHERE id = $1 AND worker IS NOT NULL",
        )
        .bind(id)
        .fetch_optional(self.pool())
        .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let url: Option<String> = row.try_get("live_url")?;
        let token: Option<String> = row.try_get("live_token")?;
        Ok(url.zip(token))
    }

    /// The session follows its run's hands: waiting while the agent asks
    /// for them, active again once a person has the browser or the agent
    /// goes on.
    async fn hands(&self, id: &str, worker: &str, hands: &Hands) -> Result<(), CoworkerError> {
        let (state, reason, question) = match hands {
            Hands::Asked(why) => (
                SessionState::Waiting,
                format!("waiting for a person's hands in its live view: {why}"),
                Some(why.as_str()),
            ),
            Hands::Taken => (
                SessionState::Active,
                "a person has the browser".to_string(),
                None,
            ),
            Hands::Back => (
                SessionState::Active,
                "a person handed the browser back: the agent goes on".to_string(),
                None,
            ),
        };
        let now = now_ms();
        let mut tx = self.pool().begin().await?;
        let changed = sqlx::query(
            "UPDATE sessions SET state = $1, reason = $2, question = $3,
                waiting_since = CASE WHEN $1 = 'waiting' THEN $4 ELSE NULL END, updated = $4
             WHERE id = $5 AND worker = $6 AND state IN ('active', 'waiting')",
        )
        .bind(state.word())
        .bind(&reason)
        .bind(question)
        .bind(now)
        .bind(id)
        .bind(worker)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if changed == 1 {
            noted(&mut tx, id, state.word(), &reason).await?;
        }
        tx.commit().await?;
        Ok(())
    }
}

/// What a worker gives a run so that its live view is known: the address
/// it serves on, its token, and the file it names its address in.
pub(super) struct LiveLink {
    announce: tempfile::TempPath,
    token: String,
}

impl LiveLink {
    /// A link for one run; none when the system has no random bytes for a
    /// token (the run goes on without a live view).
    pub(super) fn new() -> Option<LiveLink> {
        let token = crate::listen::new_token()?;
        let announce = tempfile::NamedTempFile::new().ok()?.into_temp_path();
        Some(LiveLink { announce, token })
    }

    /// The run's arguments for its live view on `listen`, with HANDS
    /// waiting `hands` for a person.
    pub(super) fn args(listen: SocketAddr, hands: Duration) -> Vec<String> {
        vec![
            "--live".into(),
            listen.to_string(),
            "--hands-timeout".into(),
            hands.as_secs().max(1).to_string(),
        ]
    }

    /// Gives the run its token and where to say its address (in its
    /// environment: never on a command line).
    pub(super) fn give_to(&self, command: &mut Command) {
        command
            .env(TOKEN_ENV, &self.token)
            .env(ANNOUNCE_ENV, self.announce.as_os_str());
    }

    /// The run's live view address, once it says it.
    fn address(&self) -> Option<String> {
        let text = std::fs::read_to_string(&self.announce).ok()?;
        let url = text.trim();
        url.starts_with("http://").then(|| url.to_string())
    }

    /// Follows the run's live view for as long as it lasts: its address
    /// kept, and its hands shown on the session. `asked` is told of each
    /// time the agent asks for hands (the webhook).
    pub(super) async fn follow<F>(
        &self,
        store: &Store,
        id: &str,
        worker: &str,
        asked: impl Fn(String) -> F,
    ) -> std::convert::Infallible
    where
        F: std::future::Future<Output = ()>,
    {
        let url = loop {
            match self.address() {
                Some(url) => break url,
                None => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        };
        if let Err(e) = store.set_live(id, worker, &url, &self.token).await {
            tracing::warn!("session {id}: its live view was not kept: {e}");
        }
        let mut version = 0;
        let mut lent = 0;
        let mut shown = Hands::Back;
        loop {
            let state = client()
                .get(format!("{url}state?after={version}"))
                .bearer_auth(&self.token)
                .timeout(Duration::from_secs(30))
                .send()
                .await
                .and_then(reqwest::Response::error_for_status);
            let state: serde_json::Value = match state {
                Ok(r) => r.json().await.unwrap_or_default(),
                Err(_) => {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
            };
            version = state["version"].as_u64().unwrap_or(version);
            let now = match (state["control"].as_str(), state["asked"].as_str()) {
                (Some("person"), _) => Hands::Taken,
                (_, Some(why)) => Hands::Asked(why.to_string()),
                _ => Hands::Back,
            };
            // A hand-over between two looks is shown all the same.
            let now_lent = state["lent"].as_u64().unwrap_or(lent);
            let was_lent = std::mem::replace(&mut lent, now_lent);
            if lent > was_lent && shown != Hands::Taken && now != Hands::Taken {
                if let Err(e) = store.hands(id, worker, &Hands::Taken).await {
                    tracing::warn!("session {id}: its hands were not shown: {e}");
                }
                shown = Hands::Taken;
            }
            if now == shown {
                continue;
            }
            if let Err(e) = store.hands(id, worker, &now).await {
                tracing::warn!("session {id}: its hands were not shown: {e}");
            }
            if let Hands::Asked(why) = &now {
                asked(why.clone()).await;
            }
            shown = now;
        }
    }
}

/// The client requests to runs' live views go out on.
fn client() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(reqwest::Client::new)
}

/// A request of the page for session `id`'s live view (`rest`: its path
/// there), passed on to the run's own with its token; the answer passed
/// back with the headers that say what it is and may do.
pub(super) async fn pass_on(
    store: &Store,
    id: &str,
    rest: &[&str],
    req: Request<Incoming>,
) -> Response<Body> {
    let path = rest.join("/");
    if !ROUTES.contains(&path.as_str()) {
        return error(
            StatusCode::NOT_FOUND,
            format!("no live view route {path:?}"),
        );
    }
    let (url, token) = match store.live_of(id).await {
        Ok(Some(live)) => live,
        Ok(None) => {
            return error(
                StatusCode::NOT_FOUND,
                format!("session {id} has no live view now: no run of it is under way"),
            )
        }
        Err(e) => return error(status_of(&e), e),
    };
    let query = req
        .uri()
        .query()
        .map(|q| format!("?{q}"))
        .unwrap_or_default();
    let method = req.method().clone();
    let kind = req.headers().get("content-type").cloned();
    let body = match Limited::new(req.into_body(), MAX_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => return error(StatusCode::PAYLOAD_TOO_LARGE, e),
    };
    let mut ask = client()
        .request(method, format!("{url}{path}{query}"))
        .bearer_auth(token)
        .timeout(Duration::from_secs(30))
        .body(body);
    if let Some(kind) = kind {
        ask = ask.header("content-type", kind);
    }
    let answer = match ask.send().await {
        Ok(a) => a,
        Err(e) => {
            return error(
                StatusCode::BAD_GATEWAY,
                format!("session {id}'s live view cannot be reached: {e}"),
            )
        }
    };
    let status = answer.status();
    let headers = answer.headers().clone();
    let bytes = answer.bytes().await.unwrap_or_default();
    let kind = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/octet-stream")
        .to_string();
    let mut r = respond(status, &kind, bytes);
    for name in [
        "x-seq",
        "x-css-width",
        "x-css-height",
        "content-security-policy",
        "x-frame-options",
    ] {
        if let Some(v) = headers.get(name) {
            r.headers_mut().insert(name, v.clone());
        }
    }
    r
}
