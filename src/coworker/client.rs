//! A client of `seamark serve`'s API, for `seamark sessions` and
//! `seamark batch --serve`. A reply that is not what the API gives keeps its
//! raw body in the error.

use std::time::Duration;

use serde_json::Value;

use super::Session;

/// Why a call to the API failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
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
        /// The server's `error`, or its raw body.
        reason: String,
    },
    /// The reply could not be read; the raw body is kept.
    #[error("the reply could not be read ({why}): {body}")]
    Unreadable {
        /// Why.
        why: String,
        /// The body as it came.
        body: String,
    },
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
    /// token if it wants one.
    pub fn new(base: &str, token: Option<String>) -> Client {
        Client {
            base: base.trim_end_matches('/').to_string(),
            token,
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(30))
                .build()
                .unwrap_or_default(),
        }
    }

    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, ClientError> {
        let url = format!("{}{path}", self.base);
        let mut request = self.http.request(method, &url);
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let reply = request
            .send()
            .await
            .map_err(|source| ClientError::Unreachable {
                url: url.clone(),
                cause: source,
            })?;
        let status = reply.status();
        let body = reply
            .text()
            .await
            .map_err(|source| ClientError::Unreachable {
                url: url.clone(),
                cause: source,
            })?;
        let value: Option<Value> = serde_json::from_str(&body).ok();
        if !status.is_success() {
            let reason = value
                .as_ref()
                .and_then(|v| v["error"].as_str())
                .map(str::to_string)
                .unwrap_or(body);
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
        serde_json::from_value(value.clone()).map_err(|e| ClientError::Unreadable {
            why: e.to_string(),
            body: value.to_string(),
        })
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
            self.call(reqwest::Method::GET, &format!("/api/sessions/{id}"), None)
                .await?,
        )
    }

    /// The sessions, newest first (`state`: only those).
    pub async fn list(&self, state: Option<&str>) -> Result<Vec<Session>, ClientError> {
        let path = match state {
            Some(s) => format!("/api/sessions?state={s}&limit=500"),
            None => "/api/sessions?limit=500".into(),
        };
        let reply = self.call(reqwest::Method::GET, &path, None).await?;
        serde_json::from_value(reply["sessions"].clone()).map_err(|e| ClientError::Unreadable {
            why: e.to_string(),
            body: reply.to_string(),
        })
    }

    /// Answers a waiting session.
    pub async fn answer(&self, id: &str, answer: &str) -> Result<Session, ClientError> {
        Self::session(
            self.call(
                reqwest::Method::POST,
                &format!("/api/sessions/{id}/answer"),
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
                &format!("/api/sessions/{id}/stop"),
                None,
            )
            .await?,
        )
    }
}
