//! A client of `seamark serve`'s API, for `seamark sessions` and
//! `seamark batch --serve`. A reply that is not what the API gives keeps its
//! raw body in the error.

use std::time::Duration;

use serde_json::Value;

use super::{Account, ServedSkill, Session, SessionEvent};

/// What a path segment escapes: everything but unreserved characters.
const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// The most of a reply read: a larger one is not the API's answer.
pub const MAX_REPLY: usize = 64 << 20;

/// How much of a reply that is not the API's an error shows.
const SHOWN: usize = 200;

/// Why a call to the API failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The server's address is not one (`--server`): a usage error.
    #[error("{given:?} is not a server's address: {why}")]
    BadServer {
        /// The address as given.
        given: String,
        /// Why.
        why: String,
    },
    /// A session id that names no session's path (empty, `.` or `..`).
    #[error("{0:?} is not a session's id")]
    BadId(String),
    /// The server could not be reached.
    #[error("{url}: {cause}")]
    Unreachable {
        /// The address called.
        url: String,
        /// Why.
        cause: reqwest::Error,
    },
    /// The server refused, with its reason.
    #[error("{status}: {reason}")]
    Refused {
        /// The HTTP status.
        status: u16,
        /// The server's `error`, or the start of its raw body.
        reason: String,
    },
    /// The reply could not be read; the raw body is kept (the message
    /// shows its size and its start, on one line).
    #[error("the reply could not be read ({why}): {} bytes: {}", .body.len(), glimpse(.body))]
    Unreadable {
        /// Why.
        why: String,
        /// The body as it came (at most [`MAX_REPLY`] bytes).
        body: String,
    },
}

/// The start of a body, on one line, for a message.
fn glimpse(body: &str) -> String {
    let start: String = body.chars().take(SHOWN).collect();
    let line = start.escape_debug().to_string();
    if body.chars().count() > SHOWN {
        format!("{line}…")
    } else {
        line
    }
}

/// The API of one server.
#[derive(Debug, Clone)]
pub struct Client {
    base: String,
    token: Option<String>,
    http: reqwest::Client,
}

impl Client {
    /// A client of the server at `base` (`http://127.0.0.1:8470`), with its
    /// token if it wants one; an address that is no http(s) server's is
    /// refused.
    pub fn new(base: &str, token: Option<String>) -> Result<Client, ClientError> {
        let bad = |why: &str| ClientError::BadServer {
            given: base.to_string(),
            why: why.to_string(),
        };
        let url = url::Url::parse(base).map_err(|e| bad(&e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") || !url.has_host() {
            return Err(bad("give http://host:port or https://host"));
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(bad("a server's address has no query and no fragment"));
        }
        Ok(Client {
            base: base.trim_end_matches('/').to_string(),
            token,
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(30))
                // Idle for less than the server keeps an idle connection
                // (`listen::HEAD_TIMEOUT`): a call never goes out on one the
                // server is closing.
                .pool_idle_timeout(crate::listen::HEAD_TIMEOUT / 2)
                .build()
                .unwrap_or_default(),
        })
    }

    /// The API path of a session (`/api/sessions/ID`, then `tail`): the id
    /// is one segment of the path, whatever it holds.
    fn session_path(id: &str, tail: &str) -> Result<String, ClientError> {
        if id.is_empty() || id == "." || id == ".." {
            return Err(ClientError::BadId(id.to_string()));
        }
        let id = percent_encoding::utf8_percent_encode(id, SEGMENT);
        Ok(format!("/api/sessions/{id}{tail}"))
    }

    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, ClientError> {
        let url = format!("{}{path}", self.base);
        let unreachable = |cause| ClientError::Unreachable {
            url: url.clone(),
            cause,
        };
        // JSON, where a route also streams (a session's events).
        let mut request = self
            .http
            .request(method, &url)
            .header("accept", "application/json");
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let mut reply = request.send().await.map_err(unreachable)?;
        let status = reply.status();
        let mut bytes = Vec::new();
        while let Some(chunk) = reply.chunk().await.map_err(unreachable)? {
            bytes.extend_from_slice(&chunk);
            if bytes.len() > MAX_REPLY {
                return Err(ClientError::Unreadable {
                    why: format!("over {MAX_REPLY} bytes, so not the API's answer"),
                    body: String::from_utf8_lossy(&bytes[..SHOWN * 4]).into_owned(),
                });
            }
        }
        let body = String::from_utf8_lossy(&bytes).into_owned();
        let value: Option<Value> = serde_json::from_str(&body).ok();
        if !status.is_success() {
            let reason = value
                .as_ref()
                .and_then(|v| v["error"].as_str())
                .map(str::to_string)
                .unwrap_or_else(|| glimpse(&body));
            return Err(ClientError::Refused {
                status: status.as_u16(),
                reason,
            });
        }
        value.ok_or_else(|| ClientError::Unreadable {
            why: "not JSON".into(),
            body,
        })
    }

    fn session(value: Value) -> Result<Session, ClientError> {
        decoded(&value)
    }

    /// Submits a session: `{"task", "url", …options}`. Gives its id.
    pub async fn submit(&self, session: Value) -> Result<String, ClientError> {
        let reply = self
            .call(reqwest::Method::POST, "/api/sessions", Some(session))
            .await?;
        reply["id"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| ClientError::Unreadable {
                why: "no id".into(),
                body: reply.to_string(),
            })
    }

    /// One session.
    pub async fn get(&self, id: &str) -> Result<Session, ClientError> {
        Self::session(
            self.call(reqwest::Method::GET, &Self::session_path(id, "")?, None)
                .await?,
        )
    }

    /// The sessions, newest first (`state`: only those).
    pub async fn list(&self, state: Option<&str>) -> Result<Vec<Session>, ClientError> {
        let path = match state {
            Some(s) => format!(
                "/api/sessions?{}",
                url::form_urlencoded::Serializer::new(String::new())
                    .append_pair("state", s)
                    .append_pair("limit", "500")
                    .finish()
            ),
            None => "/api/sessions?limit=500".into(),
        };
        let reply = self.call(reqwest::Method::GET, &path, None).await?;
        decoded(&reply["sessions"])
    }

    /// The accounts.
    pub async fn accounts(&self) -> Result<Vec<Account>, ClientError> {
        let reply = self
            .call(reqwest::Method::GET, "/api/accounts", None)
            .await?;
        decoded(&reply["accounts"])
    }

    /// Defines an account (`{"name", "secrets"}`), or changes its secrets.
    pub async fn define_account(&self, spec: Value) -> Result<Account, ClientError> {
        let reply = self
            .call(reqwest::Method::POST, "/api/accounts", Some(spec))
            .await?;
        decoded(&reply)
    }

    /// The server's skills, proposals first.
    pub async fn skills(&self) -> Result<Vec<ServedSkill>, ClientError> {
        let reply = self.call(reqwest::Method::GET, "/api/skills", None).await?;
        decoded(&reply["skills"])
    }

    /// Approves (or refuses) a proposed skill.
    pub async fn decide_skill(&self, name: &str, approve: bool) -> Result<(), ClientError> {
        let name = percent_encoding::utf8_percent_encode(name, SEGMENT);
        let verb = if approve { "approve" } else { "refuse" };
        self.call(
            reqwest::Method::POST,
            &format!("/api/skills/{name}/{verb}"),
            None,
        )
        .await
        .map(drop)
    }

    /// A session's events so far, in the order they happened.
    pub async fn events(&self, id: &str) -> Result<Vec<SessionEvent>, ClientError> {
        let path = Self::session_path(id, "/events")?;
        let reply = self.call(reqwest::Method::GET, &path, None).await?;
        decoded(&reply["events"])
    }

    /// Answers a waiting session.
    pub async fn answer(&self, id: &str, answer: &str) -> Result<Session, ClientError> {
        Self::session(
            self.call(
                reqwest::Method::POST,
                &Self::session_path(id, "/answer")?,
                Some(serde_json::json!({ "answer": answer })),
            )
            .await?,
        )
    }

    /// Stops a session.
    pub async fn stop(&self, id: &str) -> Result<Session, ClientError> {
        Self::session(
            self.call(
                reqwest::Method::POST,
                &Self::session_path(id, "/stop")?,
                None,
            )
            .await?,
        )
    }
}

/// A part of the API's answer as the type it holds.
fn decoded<T: serde::de::DeserializeOwned>(value: &Value) -> Result<T, ClientError> {
    serde_json::from_value(value.clone()).map_err(|e| ClientError::Unreadable {
        why: e.to_string(),
        body: value.to_string(),
    })
}
