//! One JSON POST with timeouts and retries: 429, 5xx, timeouts and dropped
//! connections are retried with exponential backoff, honoring `Retry-After`;
//! 401/403/404 and other 4xx fail at once with the provider's message. Headers
//! (where the key is) never reach an error or a log, and neither does the
//! key when a provider echoes it in its body ("Incorrect API key provided:
//! sk-…"): every message and body is sealed of it, in every form a body may
//! hold it (as it is, %-encoded, JSON-escaped, reversed).

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderValue, RETRY_AFTER};
use reqwest::StatusCode;
use serde_json::Value;

use super::{BrainError, Reply, Usage};
use crate::safety::{Secret, Secrets};

/// Timeouts and retries of model calls.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HttpPolicy {
    /// Upper bound for one HTTP exchange.
    pub timeout: Duration,
    /// Retries after the first attempt.
    pub retries: u32,
    /// First backoff; doubled for each retry.
    pub backoff: Duration,
    /// Longest wait between two attempts (also caps `Retry-After`).
    pub max_wait: Duration,
}

impl Default for HttpPolicy {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(120),
            retries: 4,
            backoff: Duration::from_millis(500),
            max_wait: Duration::from_secs(60),
        }
    }
}

/// What sets a provider's HTTP apart from the others': where it is, how
/// it takes the key, what headers it wants, and where its answers count
/// tokens. The rest (the client, retries, sealing the key out of errors,
/// usage) is [`Endpoint`]'s, the same for every provider.
pub(super) struct Dialect {
    /// The base URL when none is given.
    pub default_base: &'static str,
    /// The path under the base URL.
    pub path: &'static str,
    /// The header the key goes in, and the text before the key there.
    pub key_header: &'static str,
    pub key_prefix: &'static str,
    /// The variable a person sets the key in, to name in an error.
    pub key_var: &'static str,
    /// Headers every request carries.
    pub headers: &'static [(&'static str, &'static str)],
    /// Where an answer counts its input and output tokens (JSON pointers).
    pub input_tokens: &'static str,
    pub output_tokens: &'static str,
}

/// A provider's endpoint for one model: where to POST, with which key and
/// policy. Both providers are one of these plus their own body and the
/// place of the answer's text.
pub(super) struct Endpoint {
    /// The model's name at the provider.
    pub model: String,
    dialect: &'static Dialect,
    /// The headers every request carries, the key among them.
    headers: HeaderMap,
    url: String,
    policy: HttpPolicy,
    client: reqwest::Client,
    /// The key, to seal out of what the provider says back.
    sealed: Secrets,
}

impl Endpoint {
    /// The dialect's path under `base_url` (else its default base), with a
    /// client that has the policy's timeout and the key in its header.
    pub fn new(
        dialect: &'static Dialect,
        model: &str,
        key: Option<String>,
        base_url: Option<String>,
        policy: HttpPolicy,
    ) -> Result<Self, BrainError> {
        let base = base_url.unwrap_or_else(|| dialect.default_base.to_string());
        let client = reqwest::Client::builder()
            .timeout(policy.timeout)
            .connect_timeout(policy.timeout.min(Duration::from_secs(20)))
            .build()
            .map_err(|e| BrainError::NotConfigured(format!("cannot set up HTTP: {e}")))?;
        let sealed = key
            .as_deref()
            .and_then(|k| Secret::plain("API_KEY", k))
            .map(|k| Secrets::new(vec![k]))
            .transpose()
            .map_err(|e| BrainError::NotConfigured(e.to_string()))?
            .unwrap_or_default();
        let mut headers = HeaderMap::new();
        for (name, value) in dialect.headers {
            headers.insert(*name, HeaderValue::from_static(value));
        }
        if let Some(key) = &key {
            let mut value = HeaderValue::from_str(&format!("{}{key}", dialect.key_prefix))
                .map_err(|_| {
                    BrainError::NotConfigured(format!(
                        "{} holds characters a header cannot",
                        dialect.key_var
                    ))
                })?;
            value.set_sensitive(true);
            headers.insert(dialect.key_header, value);
        }
        Ok(Self {
            model: model.to_string(),
            dialect,
            headers,
            sealed,
            url: format!("{}{}", base.trim_end_matches('/'), dialect.path),
            policy,
            client,
        })
    }

    /// POSTs `body` under the policy and reads the answer: its text where
    /// `text` finds it, and the tokens it counts.
    pub async fn ask(
        &self,
        body: &Value,
        text: fn(&Value) -> Result<String, BrainError>,
    ) -> Result<Reply, BrainError> {
        let answer = post_json(
            &self.client,
            &self.policy,
            &self.url,
            self.headers.clone(),
            body,
        )
        .await
        .map_err(|e| seal(e, &self.sealed))?;
        reply(self.dialect, &answer, text)
    }
}

/// An answer as a [`Reply`]: its text where `text` finds it, and its usage
/// where the dialect counts it (0 where it does not).
pub(super) fn reply(
    dialect: &Dialect,
    answer: &Value,
    text: fn(&Value) -> Result<String, BrainError>,
) -> Result<Reply, BrainError> {
    let n = |p: &str| answer.pointer(p).and_then(Value::as_u64).unwrap_or(0);
    Ok(Reply {
        text: text(answer)?,
        usage: Usage {
            input: n(dialect.input_tokens),
            output: n(dialect.output_tokens),
        },
        divergence: None,
    })
}

/// `error` with the key replaced wherever the provider's words put it.
fn seal(error: BrainError, key: &Secrets) -> BrainError {
    let s = |text: String| key.redact(&text);
    match error {
        BrainError::Unauthorized { status, message } => BrainError::Unauthorized {
            status,
            message: s(message),
        },
        BrainError::NotFound { url, message } => BrainError::NotFound {
            url: s(url),
            message: s(message),
        },
        BrainError::Http { status, message } => BrainError::Http {
            status,
            message: s(message),
        },
        BrainError::Exhausted { attempts, last } => BrainError::Exhausted {
            attempts,
            last: s(last),
        },
        BrainError::Malformed { reason, body } => BrainError::Malformed {
            reason: s(reason),
            body: s(body),
        },
        other => other,
    }
}

/// The provider's error message in a body (`{"error": {"message": …}}`, both
/// OpenAI's and Anthropic's shape), else the body itself, bounded.
pub(super) fn message_of(body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let msg = parsed.as_ref().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.pointer("/message"))
            .or_else(|| v.get("error").filter(|e| e.is_string()))
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    let text = msg.unwrap_or_else(|| body.trim().to_string());
    if text.chars().count() > 500 {
        format!("{}…", text.chars().take(500).collect::<String>())
    } else if text.is_empty() {
        "(empty body)".into()
    } else {
        text
    }
}

/// Seconds from a `Retry-After` header (the delay form; a date is ignored).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let v = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    let secs: f64 = v.parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs))
}

/// POSTs `body` to `url` with `headers` and returns the JSON answer.
async fn post_json(
    client: &reqwest::Client,
    policy: &HttpPolicy,
    url: &str,
    headers: HeaderMap,
    body: &Value,
) -> Result<Value, BrainError> {
    let mut attempt = 0u32;
    loop {
        attempt += 1;
        let sent = client
            .post(url)
            .headers(headers.clone())
            .json(body)
            .send()
            .await;
        let (last, wait) = match sent {
            Err(e) => {
                // Without the URL: reqwest's message is enough, and shorter.
                let what = if e.is_timeout() {
                    format!("no answer within {} s", policy.timeout.as_secs())
                } else {
                    format!("cannot reach {url}: {}", e.without_url())
                };
                (what, None)
            }
            Ok(resp) => {
                let status = resp.status();
                let wait = retry_after(resp.headers());
                let text = resp.text().await.unwrap_or_default();
                if status.is_success() {
                    return serde_json::from_str(&text).map_err(|e| BrainError::Malformed {
                        reason: format!("not JSON: {e}"),
                        body: text,
                    });
                }
                match status {
                    StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
                        return Err(BrainError::Unauthorized {
                            status: status.as_u16(),
                            message: message_of(&text),
                        })
                    }
                    StatusCode::NOT_FOUND => {
                        return Err(BrainError::NotFound {
                            url: url.to_string(),
                            message: message_of(&text),
                        })
                    }
                    s if s == StatusCode::TOO_MANY_REQUESTS
                        || s.is_server_error()
                        || s == StatusCode::REQUEST_TIMEOUT =>
                    {
                        (format!("HTTP {}: {}", s.as_u16(), message_of(&text)), wait)
                    }
                    s => {
                        return Err(BrainError::Http {
                            status: s.as_u16(),
                            message: message_of(&text),
                        })
                    }
                }
            }
        };
        if attempt > policy.retries {
            return Err(BrainError::Exhausted {
                attempts: attempt,
                last,
            });
        }
        let backoff = policy
            .backoff
            .saturating_mul(2u32.saturating_pow(attempt - 1));
        let wait = wait.unwrap_or(backoff).min(policy.max_wait);
        tracing::info!("model call failed ({last}); retrying in {wait:?}");
        tokio::time::sleep(wait).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_messages_are_found_in_both_shapes() {
        assert_eq!(
            message_of(r#"{"error":{"message":"Incorrect API key","type":"x"}}"#),
            "Incorrect API key"
        );
        assert_eq!(
            message_of(
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
            ),
            "Overloaded"
        );
        assert_eq!(
            message_of("<html>bad gateway</html>"),
            "<html>bad gateway</html>"
        );
        assert_eq!(message_of(""), "(empty body)");
        assert!(message_of(&"x".repeat(2000)).chars().count() <= 501);
    }

    #[test]
    fn retry_after_in_seconds() {
        let mut h = HeaderMap::new();
        h.insert(RETRY_AFTER, "2".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert(
            RETRY_AFTER,
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&h), None);
    }
}
