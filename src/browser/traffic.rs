//! What a session does with its tabs' traffic besides the domain guard:
//! hands every response to a [`Tap`] as it arrives (`--record-site`), or
//! answers every request from a [`Responder`] instead of the network
//! (`--site`).
//!
//! Both sit in the DevTools session of each of the session's tabs, beside
//! the guard of an attached browser (intercept.rs's filter), which is made
//! here too: `Fetch.enable` pauses each request, at its start to be checked
//! or answered, or once its response is in to be read. A tab has one
//! `Fetch.enable`, so one loop serves all three.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use chromiumoxide::cdp::browser_protocol::fetch::{
    ContinueRequestParams, EnableParams, EventRequestPaused, FailRequestParams,
    FulfillRequestParams, GetResponseBodyParams, HeaderEntry, RequestPattern, RequestStage,
};
use chromiumoxide::cdp::browser_protocol::network::ErrorReason;
use chromiumoxide::error::CdpError;
use chromiumoxide::Page;
use futures::StreamExt;
use tokio::task::JoinHandle;

use super::intercept::RequestFilter;

/// Largest response body kept: a bigger one (a video, an archive) is
/// recorded without its body.
pub const MAX_BODY: usize = 32 << 20;

/// How long a body may take to arrive before it is recorded without one
/// (a stream that never ends).
const BODY_WITHIN: Duration = Duration::from_secs(20);

/// What a session does with its tabs' requests.
#[derive(Clone)]
pub enum Traffic {
    /// Every response goes to the tap as it arrives; requests go out.
    Record(Arc<dyn Tap>),
    /// Every request is answered by the responder; none goes out.
    Replay(Arc<dyn Responder>),
}

impl std::fmt::Debug for Traffic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Traffic::Record(_) => "Traffic::Record",
            Traffic::Replay(_) => "Traffic::Replay",
        })
    }
}

/// A request as the page made it.
#[derive(Debug, Clone, PartialEq)]
pub struct Asked {
    /// `GET`, `POST`, …
    pub method: String,
    /// The whole URL, its fragment left out.
    pub url: String,
    /// The headers the browser sent.
    pub headers: Vec<(String, String)>,
    /// The body of a POST or PUT, when it had one.
    pub body: Option<Vec<u8>>,
    /// What asked: `Document`, `Script`, `XHR`, `Fetch`, `Image`, …
    pub resource: String,
}

/// One request and what came back.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    /// The request.
    pub asked: Asked,
    /// When it was paused at its response.
    pub at: SystemTime,
    /// What came back: the response, or why none did.
    pub got: Got,
}

/// What came back for a request.
#[derive(Debug, Clone, PartialEq)]
pub enum Got {
    /// A response.
    Response {
        /// The HTTP status.
        status: i64,
        /// Its phrase (`OK`), when the browser kept one.
        status_text: String,
        /// The headers as received.
        headers: Vec<(String, String)>,
        /// The body, decoded; `None` for a redirect, a stream, a body past
        /// [`MAX_BODY`] or one the browser could not give.
        body: Option<Vec<u8>>,
    },
    /// No response: the network's error (`ConnectionRefused`) or the
    /// guard's refusal (`BlockedByClient`).
    Failed(String),
}

/// What records responses (`--record-site`).
pub trait Tap: Send + Sync {
    /// One exchange, as it happened.
    fn took(&self, exchange: Exchange);
}

/// How a request is answered without the network.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// With this response.
    Respond {
        /// The HTTP status.
        status: i64,
        /// Its headers.
        headers: Vec<(String, String)>,
        /// Its body.
        body: Vec<u8>,
    },
    /// With this network error (a `Network.ErrorReason` name).
    Fail(String),
}

/// What answers requests (`--site`).
pub trait Responder: Send + Sync {
    /// The answer to `asked`.
    fn answer(&self, asked: &Asked) -> Answer;
}

/// Headers as pairs, from the protocol's object.
fn pairs(headers: &serde_json::Value) -> Vec<(String, String)> {
    headers
        .as_object()
        .map(|h| {
            h.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// The request of a paused event.
fn asked_of(event: &EventRequestPaused) -> Asked {
    use base64::Engine;
    let request = &event.request;
    let body: Vec<u8> = request
        .post_data_entries
        .iter()
        .flatten()
        .filter_map(|e| e.bytes.as_ref())
        .filter_map(|b| {
            base64::engine::general_purpose::STANDARD
                .decode(AsRef::<str>::as_ref(b))
                .ok()
        })
        .flatten()
        .collect();
    Asked {
        method: request.method.clone(),
        url: request.url.clone(),
        headers: pairs(request.headers.inner()),
        body: (request.has_post_data == Some(true) || !body.is_empty()).then_some(body),
        resource: format!("{:?}", event.resource_type),
    }
}

/// A network error's protocol name, as the recording keeps it.
fn reason_name(reason: &ErrorReason) -> String {
    serde_json::to_value(reason)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| format!("{reason:?}"))
}

/// A recorded error's name as the protocol's reason; an unknown one fails
/// as a refused connection.
fn reason_of(name: &str) -> ErrorReason {
    serde_json::from_value(serde_json::Value::String(name.to_string()))
        .unwrap_or(ErrorReason::ConnectionRefused)
}

/// Handles `page`'s requests with the guard's `filter` and `traffic`, each
/// when there is one, from now on, until the returned task is stopped or
/// the page goes.
pub(crate) async fn follow(
    page: &Page,
    filter: Option<RequestFilter>,
    traffic: Option<Traffic>,
) -> Result<JoinHandle<()>, CdpError> {
    let mut paused = page.event_listener::<EventRequestPaused>().await?;
    let stage = |stage| {
        RequestPattern::builder()
            .url_pattern("*")
            .request_stage(stage)
            .build()
    };
    let patterns = match &traffic {
        None | Some(Traffic::Replay(_)) => vec![stage(RequestStage::Request)],
        Some(Traffic::Record(_)) if filter.is_some() => {
            vec![stage(RequestStage::Request), stage(RequestStage::Response)]
        }
        Some(Traffic::Record(_)) => vec![stage(RequestStage::Response)],
    };
    page.execute(EnableParams::builder().patterns(patterns).build())
        .await?;
    if let Some(seal) = filter.as_ref().and_then(RequestFilter::seal) {
        super::intercept::script_first(page, seal).await?;
    }
    let page = page.clone();
    Ok(tokio::spawn(async move {
        while let Some(event) = paused.next().await {
            // Each on its own: a body that takes long holds no other
            // request. The moment is taken now, in the order they came.
            let at = SystemTime::now();
            let (page, filter, traffic) = (page.clone(), filter.clone(), traffic.clone());
            tokio::spawn(async move {
                if let Err(e) = handle(&page, filter.as_ref(), traffic.as_ref(), &event, at).await {
                    tracing::debug!("a paused request was not answered: {e}");
                }
            });
        }
    }))
}

async fn handle(
    page: &Page,
    filter: Option<&RequestFilter>,
    traffic: Option<&Traffic>,
    event: &EventRequestPaused,
    at: SystemTime,
) -> Result<(), CdpError> {
    let id = event.request_id.clone();
    let at_response = event.response_status_code.is_some() || event.response_error_reason.is_some();
    let asked = asked_of(event);
    if !at_response && filter.is_some_and(|f| !f.allows(&asked.url)) {
        if let Some(Traffic::Record(tap)) = traffic {
            tap.took(Exchange {
                asked,
                at,
                got: Got::Failed(reason_name(&ErrorReason::BlockedByClient)),
            });
        }
        page.execute(FailRequestParams::new(id, ErrorReason::BlockedByClient))
            .await?;
        return Ok(());
    }
    match traffic {
        Some(Traffic::Replay(responder)) => match responder.answer(&asked) {
            Answer::Respond {
                status,
                headers,
                body,
            } => {
                use base64::Engine;
                let mut fulfil = FulfillRequestParams::new(id, status);
                fulfil.response_headers = Some(
                    headers
                        .into_iter()
                        .map(|(name, value)| HeaderEntry::new(name, value))
                        .collect(),
                );
                fulfil.body = Some(
                    base64::engine::general_purpose::STANDARD
                        .encode(body)
                        .into(),
                );
                page.execute(fulfil).await?;
            }
            Answer::Fail(reason) => {
                page.execute(FailRequestParams::new(id, reason_of(&reason)))
                    .await?;
            }
        },
        // The guard alone, or a recording before the response: on it goes.
        None => {
            page.execute(ContinueRequestParams::new(id)).await?;
        }
        Some(Traffic::Record(_)) if !at_response => {
            page.execute(ContinueRequestParams::new(id)).await?;
        }
        Some(Traffic::Record(tap)) => {
            let got = match (&event.response_error_reason, event.response_status_code) {
                (Some(reason), _) => Got::Failed(reason_name(reason)),
                (None, status) => {
                    let headers: Vec<(String, String)> = event
                        .response_headers
                        .iter()
                        .flatten()
                        .map(|h| (h.name.clone(), h.value.clone()))
                        .collect();
                    let status = status.unwrap_or(0);
                    let body = if kept_body(status, &headers) {
                        body_of(page, &id).await
                    } else {
                        None
                    };
                    Got::Response {
                        status,
                        status_text: event.response_status_text.clone().unwrap_or_default(),
                        headers,
                        body,
                    }
                }
            };
            tap.took(Exchange { asked, at, got });
            page.execute(ContinueRequestParams::new(id)).await?;
        }
    }
    Ok(())
}

/// Whether a response's body is read: not a redirect's (there is none),
/// not a stream's (it never ends), not one declared past [`MAX_BODY`].
fn kept_body(status: i64, headers: &[(String, String)]) -> bool {
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    let redirect = (300..400).contains(&status) && header("location").is_some();
    let stream = header("content-type").is_some_and(|t| t.contains("text/event-stream"));
    let too_big = header("content-length")
        .and_then(|l| l.trim().parse::<usize>().ok())
        .is_some_and(|l| l > MAX_BODY);
    !(redirect || stream || too_big)
}

/// The body of a response paused at its arrival, decoded, when the browser
/// gives it in time and within [`MAX_BODY`].
async fn body_of(
    page: &Page,
    id: &chromiumoxide::cdp::browser_protocol::fetch::RequestId,
) -> Option<Vec<u8>> {
    use base64::Engine;
    let started = Instant::now();
    let got = tokio::time::timeout(
        BODY_WITHIN,
        page.execute(GetResponseBodyParams::new(id.clone())),
    )
    .await;
    let body = match got {
        Ok(Ok(reply)) => reply.result,
        Ok(Err(e)) => {
            tracing::debug!("a response body was not given: {e}");
            return None;
        }
        Err(_) => {
            tracing::debug!("a response body took over {:?}", started.elapsed());
            return None;
        }
    };
    let bytes = if body.base64_encoded {
        base64::engine::general_purpose::STANDARD
            .decode(&body.body)
            .ok()?
    } else {
        body.body.into_bytes()
    };
    (bytes.len() <= MAX_BODY).then_some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirects_streams_and_declared_giants_are_recorded_without_a_body() {
        let h = |k: &str, v: &str| vec![(k.to_string(), v.to_string())];
        assert!(kept_body(200, &h("Content-Type", "text/html")));
        assert!(!kept_body(302, &h("Location", "/next")));
        assert!(kept_body(304, &[]));
        assert!(!kept_body(200, &h("content-type", "text/event-stream")));
        assert!(!kept_body(200, &h("Content-Length", "999999999")));
    }

    #[test]
    fn an_error_reason_reads_back_as_itself_and_an_unknown_one_as_refused() {
        let name = reason_name(&ErrorReason::BlockedByClient);
        assert_eq!(name, "BlockedByClient");
        assert_eq!(reason_of(&name), ErrorReason::BlockedByClient);
        assert_eq!(reason_of("NoSuchReason"), ErrorReason::ConnectionRefused);
    }
}
