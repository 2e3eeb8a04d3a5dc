//! The side connection: seamark's own connection to the browser endpoint,
//! opened once per browser, with the events it is sent handled as they come
//! (paused requests answered, new targets held and checked, the frame
//! sessions' script contexts kept).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use chromiumoxide::cdp::browser_protocol::fetch::EventRequestPaused;
use chromiumoxide::cdp::browser_protocol::target::{
    AttachToTargetParams, EventAttachedToTarget, EventDetachedFromTarget, TargetId,
};
use chromiumoxide::cdp::js_protocol::runtime::{
    EventExecutionContextCreated, EventExecutionContextDestroyed, EventExecutionContextsCleared,
};
use chromiumoxide::types::Command;
use serde_json::Value;

use super::hold::{new_frame, new_tab, new_worker, Filter, Sessions, Tabs};
use super::intercept::decision;
use super::wire::{self, lock, RemoteError, Wire};

/// seamark's own connection to the browser endpoint, for frame sessions.
pub(super) struct Channel {
    pub(super) wire: Arc<Wire>,
    /// (session, frame) → the frame's main-world script context, from the
    /// sessions' `Runtime.executionContextCreated` events.
    pub(super) contexts: Arc<Mutex<HashMap<(String, String), i64>>>,
    pub(super) reader: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for Channel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Channel").finish_non_exhaustive()
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// What the side connection does with the events it is sent.
struct Events {
    wire: Arc<Wire>,
    filter: Filter,
    tabs: Tabs,
    sessions: Sessions,
    watched: Tabs,
    contexts: Arc<Mutex<HashMap<(String, String), i64>>>,
}

impl Events {
    /// Handles one event: a paused request answered, a new tab, frame or
    /// worker held and checked, a session gone, or a script context noted.
    async fn heard(&self, message: &Value) {
        match message["method"].as_str() {
            Some(EventRequestPaused::IDENTIFIER) => {
                let filter = lock(&self.filter).clone();
                let (Some(filter), Some(session), Some(request), Some(url)) = (
                    filter,
                    message["sessionId"].as_str(),
                    message["params"]["requestId"].as_str(),
                    message["params"]["request"]["url"].as_str(),
                ) else {
                    return;
                };
                // Its answer is not waited for: nothing is to be done with it.
                let answer = decision(&filter, request, url);
                if let Err(e) = self.wire.send(Some(session), answer).await {
                    tracing::debug!("a paused request was not answered: {e}");
                }
            }
            // A new tab, held before its first request (see
            // `watch_new_tabs`); not a frame this connection attached to.
            Some(EventAttachedToTarget::IDENTIFIER)
                if message.get("sessionId").is_none()
                    && message["params"]["targetInfo"]["type"] == "page"
                    && !message["params"]["targetInfo"]["targetId"]
                        .as_str()
                        .is_some_and(|t| lock(&self.watched).iter().any(|w| w == t)) =>
            {
                let guard = lock(&self.filter).clone();
                tokio::spawn(new_tab(
                    self.wire.clone(),
                    self.tabs.clone(),
                    guard,
                    message["params"].clone(),
                ));
            }
            // A frame of another site in one of those tabs (or in
            // such a frame), held before its first request.
            Some(EventAttachedToTarget::IDENTIFIER)
                if message.get("sessionId").is_some()
                    && message["params"]["targetInfo"]["type"] == "iframe" =>
            {
                let guard = lock(&self.filter).clone();
                tokio::spawn(new_frame(
                    self.wire.clone(),
                    self.sessions.clone(),
                    guard,
                    message["params"].clone(),
                ));
            }
            // Anything else such a frame started (a worker), held
            // at its start the same way: checked too, and let run.
            Some(EventAttachedToTarget::IDENTIFIER) if message.get("sessionId").is_some() => {
                let guard = lock(&self.filter).clone();
                tokio::spawn(new_worker(
                    self.wire.clone(),
                    guard,
                    message["params"].clone(),
                ));
            }
            Some(EventDetachedFromTarget::IDENTIFIER) => {
                if let Some(gone) = message["params"]["sessionId"].as_str() {
                    lock(&self.sessions).retain(|_, s| s != gone);
                    lock(&self.contexts).retain(|(s, _), _| s != gone);
                }
            }
            _ => note_event(&self.contexts, message),
        }
    }
}

impl Channel {
    /// Connects. Requests paused in its sessions are answered as `filter`
    /// says; new tabs it is told of are checked when opened from `tabs`.
    pub(super) async fn open(
        browser_ws: String,
        filter: Filter,
        tabs: Tabs,
        sessions: Sessions,
        watched: Tabs,
    ) -> Result<Arc<Channel>, RemoteError> {
        let (sink, stream) = wire::connect(&browser_ws).await?.split();
        let wire = Wire::over(sink);
        let contexts: Arc<Mutex<HashMap<(String, String), i64>>> = Arc::default();
        let events = Events {
            wire: wire.clone(),
            filter,
            tabs,
            sessions,
            watched,
            contexts: contexts.clone(),
        };
        let reader = tokio::spawn(wire::read(stream, wire.clone(), async move |message| {
            events.heard(message).await;
        }));
        Ok(Arc::new(Channel {
            wire,
            contexts,
            reader,
        }))
    }

    /// Sends `command` (on `session`, or to the browser) and waits for its
    /// typed response.
    pub(super) async fn execute<T: Command>(
        &self,
        session: Option<&str>,
        command: T,
    ) -> Result<T::Response, RemoteError> {
        self.wire.execute(session, command).await
    }

    /// Attaches to target `target` (flattened: its session's messages come
    /// on this connection) and gives its session id.
    pub(super) async fn attach(&self, target: &str) -> Result<String, RemoteError> {
        let mut attach = AttachToTargetParams::new(TargetId::new(target));
        attach.flatten = Some(true);
        let attached = self.execute(None, attach).await?;
        Ok(attached.session_id.inner().clone())
    }
}

/// Keeps the main-world script contexts of the frame sessions up to date.
pub(super) fn note_event(contexts: &Mutex<HashMap<(String, String), i64>>, message: &Value) {
    let (Some(method), Some(session)) = (
        message.get("method").and_then(Value::as_str),
        message.get("sessionId").and_then(Value::as_str),
    ) else {
        return;
    };
    let params = &message["params"];
    let mut contexts = lock(contexts);
    match method {
        EventExecutionContextCreated::IDENTIFIER => {
            let context = &params["context"];
            let aux = &context["auxData"];
            if aux["isDefault"] == Value::Bool(true) {
                if let (Some(frame), Some(id)) = (aux["frameId"].as_str(), context["id"].as_i64()) {
                    contexts.insert((session.to_string(), frame.to_string()), id);
                }
            }
        }
        EventExecutionContextDestroyed::IDENTIFIER => {
            let gone = params["executionContextId"].as_i64();
            contexts.retain(|(s, _), id| !(s == session && Some(*id) == gone));
        }
        EventExecutionContextsCleared::IDENTIFIER => contexts.retain(|(s, _), _| s != session),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn event(method: &str, session: &str, params: Value) -> Value {
        json!({ "method": method, "sessionId": session, "params": params })
    }

    #[test]
    fn a_frames_main_world_is_kept_until_its_context_goes() {
        let contexts = Mutex::new(HashMap::new());
        let created = |id: i64, frame: &str, default: bool| {
            event(
                "Runtime.executionContextCreated",
                "S1",
                json!({ "context": { "id": id, "auxData": { "frameId": frame, "isDefault": default } } }),
            )
        };
        note_event(&contexts, &created(7, "F1", true));
        // An isolated world is not the main one.
        note_event(&contexts, &created(8, "F1", false));
        note_event(&contexts, &created(9, "F2", true));
        let key = |f: &str| ("S1".to_string(), f.to_string());
        assert_eq!(lock(&contexts).get(&key("F1")), Some(&7));
        note_event(
            &contexts,
            &event(
                "Runtime.executionContextDestroyed",
                "S1",
                json!({ "executionContextId": 7 }),
            ),
        );
        assert_eq!(lock(&contexts).get(&key("F1")), None);
        assert_eq!(lock(&contexts).get(&key("F2")), Some(&9));
        note_event(
            &contexts,
            &event("Runtime.executionContextsCleared", "S1", json!({})),
        );
        assert!(lock(&contexts).is_empty());
        // An event without a session is the browser's: nothing to keep.
        note_event(
            &contexts,
            &json!({ "method": "Runtime.executionContextCreated" }),
        );
        assert!(lock(&contexts).is_empty());
    }
}
