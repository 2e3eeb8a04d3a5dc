//! Requests of seamark's own tabs, checked before they leave a browser it
//! did not launch.
//!
//! A browser seamark launches sends every request through the domain guard
//! (a proxy). A person's running browser cannot be given a proxy, and must
//! not be: their other tabs are none of seamark's business. So there the
//! guard sits in the DevTools sessions of seamark's tabs (and of the frames
//! of other sites in them, see remote.rs; a tab's own loop is traffic.rs's):
//! `Fetch.enable` pauses each request, the filter says whether it may go,
//! and it is let go or failed as blocked by the client. The filter records
//! its own refusals.

use std::sync::Arc;

use super::wire::Call;
use chromiumoxide::cdp::browser_protocol::fetch::{
    ContinueRequestParams, EnableParams, FailRequestParams, RequestId, RequestPattern,
};
use chromiumoxide::cdp::browser_protocol::network::ErrorReason;
use chromiumoxide::cdp::browser_protocol::page::AddScriptToEvaluateOnNewDocumentParams;
use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use chromiumoxide::error::CdpError;
use chromiumoxide::Page;

/// Says whether a request to a URL may leave the browser (and records a
/// refusal where its maker keeps them), with the seal for the routes out
/// that request interception does not see.
#[derive(Clone)]
pub struct RequestFilter {
    allows: Arc<dyn Fn(&str) -> bool + Send + Sync>,
    /// A script run in every document and worker of a checked tab before
    /// its own scripts: `Fetch` pauses no WebSocket, WebTransport or WebRTC
    /// connection, so the script checks those where they are made.
    seal: Option<Arc<str>>,
}

impl RequestFilter {
    /// A filter that lets a request to `url` go when `allows(url)`.
    pub fn new(allows: impl Fn(&str) -> bool + Send + Sync + 'static) -> RequestFilter {
        RequestFilter {
            allows: Arc::new(allows),
            seal: None,
        }
    }

    /// The same, with `seal` run in each document and worker it checks.
    pub fn sealed_with(self, seal: String) -> RequestFilter {
        RequestFilter {
            seal: Some(seal.into()),
            ..self
        }
    }

    /// Whether a request to `url` may go.
    pub fn allows(&self, url: &str) -> bool {
        (self.allows)(url)
    }

    /// The script every document and worker it checks runs first, if any.
    pub fn seal(&self) -> Option<&str> {
        self.seal.as_deref()
    }
}

impl std::fmt::Debug for RequestFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RequestFilter")
    }
}

/// Every request, at its start (before it is sent).
pub(crate) fn every_request() -> EnableParams {
    EnableParams::builder()
        .pattern(RequestPattern::builder().url_pattern("*").build())
        .build()
}

/// The call that seals a document target's (a frame's, a tab's) scripts
/// from its first document on, or a held worker's at once, when `filter`
/// has a seal.
pub(crate) fn seal_call(filter: &RequestFilter, worker: bool) -> Option<Call> {
    let seal = filter.seal()?;
    Some(if worker {
        Call::of(&EvaluateParams::new(seal))
    } else {
        let mut add = AddScriptToEvaluateOnNewDocumentParams::new(seal);
        add.run_immediately = Some(true);
        Call::of(&add)
    })
}

/// What to answer a paused request to `url`: go on, or fail as blocked.
pub(crate) fn decision(filter: &RequestFilter, request_id: &str, url: &str) -> Call {
    let request = RequestId::new(request_id);
    if filter.allows(url) {
        Call::of(&ContinueRequestParams::new(request))
    } else {
        Call::of(&FailRequestParams::new(
            request,
            ErrorReason::BlockedByClient,
        ))
    }
}

/// Runs `script` in each document of `page` before its own scripts, from the
/// one it shows now on.
pub(crate) async fn script_first(page: &Page, script: &str) -> Result<(), CdpError> {
    page.execute(
        AddScriptToEvaluateOnNewDocumentParams::builder()
            .source(script)
            .run_immediately(true)
            .build()
            .map_err(CdpError::msg)?,
    )
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paused_request_goes_on_or_fails_as_blocked_by_the_client() {
        let filter = RequestFilter::new(|url| !url.contains("tracker"));
        let call = decision(&filter, "R1", "http://site.test/a");
        assert_eq!(
            (call.method.as_ref(), &call.params["requestId"]),
            ("Fetch.continueRequest", &serde_json::json!("R1"))
        );
        let call = decision(&filter, "R2", "http://tracker.test/b");
        assert_eq!(call.method, "Fetch.failRequest");
        assert_eq!(call.params["errorReason"], "BlockedByClient");
        let every = Call::of(&every_request());
        assert_eq!(every.method, "Fetch.enable");
        assert_eq!(every.params["patterns"][0]["urlPattern"], "*");
    }

    #[test]
    fn a_seal_runs_at_once_in_a_worker_and_in_each_new_document_of_a_page() {
        let filter = RequestFilter::new(|_| true);
        assert_eq!(seal_call(&filter, false), None);
        let filter = filter.sealed_with("seal()".into());
        let worker = seal_call(&filter, true).unwrap();
        assert_eq!(worker.method, "Runtime.evaluate");
        assert_eq!(worker.params["expression"], "seal()");
        let page = seal_call(&filter, false).unwrap();
        assert_eq!(page.method, "Page.addScriptToEvaluateOnNewDocument");
        assert_eq!(page.params["runImmediately"], true);
    }
}
