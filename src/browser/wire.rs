//! The side connection's wire: seamark's own websocket to the browser,
//! its commands (chromiumoxide's typed ones) written and their answers
//! handed back, and why one did not get its result.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_tungstenite::tungstenite::Message;
use chromiumoxide::types::Command;
use serde_json::{json, Value};
use tokio::sync::oneshot;

/// How long a command on the side connection may take.
const COMMAND_BOUND: Duration = Duration::from_secs(15);

/// Why a command on a connection of seamark's own to the browser (the side
/// connection, for frames of other processes and new tabs, or a page's
/// camera) did not get its result.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RemoteError {
    /// The connection could not be opened.
    #[error("cannot connect to {url}: {cause}")]
    Connect {
        /// The browser's websocket.
        url: String,
        /// Why, as the websocket told it.
        cause: String,
    },
    /// The task that opens it ended before it did.
    #[error("the side connection was not opened: {0}")]
    NotOpened(String),
    /// A command could not be written.
    #[error("cannot send {method} to the browser: {cause}")]
    Send {
        /// The command.
        method: String,
        /// Why, as the websocket told it.
        cause: String,
    },
    /// The browser answered with an error: its error object, as it came.
    #[error("the browser refused {method}: {error}")]
    Refused {
        /// The command.
        method: String,
        /// The browser's `error`, raw.
        error: Value,
    },
    /// The connection closed first.
    #[error("the connection closed before {0} was answered")]
    Closed(String),
    /// No answer in time.
    #[error("{0} was not answered in {secs} s", secs = COMMAND_BOUND.as_secs())]
    Unanswered(String),
    /// An answer that is not JSON, or not the one asked for: its start, raw.
    #[error("unreadable answer: {0}")]
    Unreadable(String),
    /// Nothing answered in the time given.
    #[error("timed out after {} s", .0.as_secs_f64())]
    TimedOut(Duration),
    /// Attached without a session id.
    #[error("attached to {0} without a session")]
    NoSession(String),
    /// A frame of the page that could not be followed.
    #[error("frame {target} not attached: {cause}")]
    Frame {
        /// The frame's target.
        target: String,
        /// Why.
        cause: Box<RemoteError>,
    },
}

/// A command as it goes on the wire: its method and parameters, made from
/// one of chromiumoxide's typed commands (so that no method name is
/// spelled by hand).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Call {
    /// The protocol method, as `Domain.method`.
    pub method: Cow<'static, str>,
    /// Its parameters.
    pub params: Value,
}

impl Call {
    /// The call `command` is.
    pub(crate) fn of<T: Command>(command: &T) -> Call {
        Call {
            method: command.identifier(),
            // A typed command always serializes; `{}` keeps the call valid if not.
            params: serde_json::to_value(command).unwrap_or_else(|_| json!({})),
        }
    }
}

pub(super) type Sink = async_tungstenite::WebSocketSender<async_tungstenite::tokio::ConnectStream>;

/// The reading half of a connection of seamark's own.
pub(super) type Receiver =
    async_tungstenite::WebSocketReceiver<async_tungstenite::tokio::ConnectStream>;

/// A websocket to `url` (a browser's or a page target's DevTools endpoint).
pub(super) async fn connect(
    url: &str,
) -> Result<async_tungstenite::WebSocketStream<async_tungstenite::tokio::ConnectStream>, RemoteError>
{
    async_tungstenite::tokio::connect_async(url)
        .await
        .map(|(socket, _)| socket)
        .map_err(|e| RemoteError::Connect {
            url: url.to_string(),
            cause: e.to_string(),
        })
}

/// Reads a connection to its end: each answer handed to the command
/// waiting for it, each event to `heard`; then every command still waiting
/// fails.
pub(super) async fn read(
    mut stream: Receiver,
    wire: Arc<Wire>,
    mut heard: impl AsyncFnMut(&Value),
) {
    use futures::StreamExt;
    while let Some(Ok(message)) = stream.next().await {
        let Message::Text(text) = message else {
            continue;
        };
        let Ok(message) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        if let Some(id) = message.get("id").and_then(Value::as_u64) {
            wire.answered(id, &message);
            continue;
        }
        heard(&message).await;
    }
    lock(&wire.waiting).clear();
}

/// The sending half of the side connection, and the commands waiting for
/// their answers.
pub(super) struct Wire {
    pub(super) sink: tokio::sync::Mutex<Sink>,
    pub(super) next_id: AtomicU64,
    pub(super) waiting: Mutex<HashMap<u64, oneshot::Sender<Result<Value, Value>>>>,
}

impl Wire {
    /// The wire over a connection's sending half.
    pub(super) fn over(sink: Sink) -> Arc<Wire> {
        Arc::new(Wire {
            sink: tokio::sync::Mutex::new(sink),
            next_id: AtomicU64::new(1),
            waiting: Mutex::default(),
        })
    }

    /// Writes `call` as command `id` (on `session`, or to the browser).
    async fn write(&self, id: u64, session: Option<&str>, call: &Call) -> Result<(), RemoteError> {
        let mut command = json!({ "id": id, "method": call.method, "params": call.params });
        if let Some(s) = session {
            command["sessionId"] = json!(s);
        }
        self.sink
            .lock()
            .await
            .send(Message::Text(command.to_string().into()))
            .await
            .map_err(|e| RemoteError::Send {
                method: call.method.to_string(),
                cause: e.to_string(),
            })
    }

    /// Sends `call` without waiting for its answer.
    pub(super) async fn send(&self, session: Option<&str>, call: Call) -> Result<(), RemoteError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.write(id, session, &call).await
    }

    /// Sends `call` and waits for its result, as the browser gave it.
    pub(super) async fn call(
        &self,
        session: Option<&str>,
        call: Call,
    ) -> Result<Value, RemoteError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        // Registered before it is sent: the answer may come first.
        lock(&self.waiting).insert(id, tx);
        if let Err(e) = self.write(id, session, &call).await {
            lock(&self.waiting).remove(&id);
            return Err(e);
        }
        let method = call.method.into_owned();
        match tokio::time::timeout(COMMAND_BOUND, rx).await {
            Ok(Ok(answer)) => answer.map_err(|error| RemoteError::Refused { method, error }),
            Ok(Err(_)) => Err(RemoteError::Closed(method)),
            Err(_) => {
                lock(&self.waiting).remove(&id);
                Err(RemoteError::Unanswered(method))
            }
        }
    }

    /// Sends `command` and waits for its typed response.
    pub(super) async fn execute<T: Command>(
        &self,
        session: Option<&str>,
        command: T,
    ) -> Result<T::Response, RemoteError> {
        let value = self.call(session, Call::of(&command)).await?;
        let start: String = value.to_string().chars().take(200).collect();
        T::response_from_value(value).map_err(|_| RemoteError::Unreadable(start))
    }

    /// Hands an answer to the command waiting for it.
    pub(super) fn answered(&self, id: u64, message: &Value) {
        if let Some(tx) = lock(&self.waiting).remove(&id) {
            let answer = match message.get("error") {
                Some(error) => Err(error.clone()),
                None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
            };
            let _ = tx.send(answer);
        }
    }
}

/// Locks a map, through a poisoned lock (a panic elsewhere leaves the map whole).
pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
