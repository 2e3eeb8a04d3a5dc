//! Frames that run in processes of their own (out-of-process iframes).
//!
//! A browser that isolates sites runs a frame of another site in a renderer
//! process of its own, and the page's DevTools session does not reach into
//! it: its nodes, its scripts and its boxes answer only on a session attached
//! to the frame's own target. chromiumoxide attaches such sessions (it must,
//! to let the frames run) but keeps no handle to them, and sends commands on
//! its page sessions only. So seamark keeps a connection of its own to the
//! browser, attaches to the frame targets of the pages it drives
//! (`Target.attachToTarget` with `flatten`, as Playwright does), and sends a
//! frame's commands over it: a [`Link`] says where a frame's commands go.
//!
//! Only frames whose parent chain reaches a page seamark drives are ever
//! attached to: in a person's browser, their other tabs' frames are not
//! touched.
//!
//! When the requests of seamark's tabs are checked (domain limits in a
//! browser it attached to, see intercept.rs), the same connection has the
//! browser hold every new tab and every frame of another site in seamark's
//! tabs before its first request, turns the checks on in it, and lets it
//! run: a tab opened from seamark's is checked from its first request; a tab
//! the person opens is let go at once and detached.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use async_tungstenite::tungstenite::Message;
use chromiumoxide::cdp::browser_protocol::page::FrameId;
use chromiumoxide::cdp::js_protocol::runtime::ExecutionContextId;
use chromiumoxide::error::CdpError;
use chromiumoxide::types::Command;
use chromiumoxide::Page;
use futures::StreamExt;
use serde_json::{json, Value};
use tokio::sync::oneshot;

use super::intercept::{decision, every_request_json, seal_steps, RequestFilter};

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

/// What a command answered: its result, as chromiumoxide's responses hold it.
#[derive(Debug)]
pub struct CdpReply<T> {
    /// The command's result.
    pub result: T,
}

/// Where the protocol commands about one frame's nodes and scripts go.
#[derive(Debug, Clone)]
pub enum Link {
    /// The page's own session: its main frame and the frames in its process.
    Page(Page),
    /// The session of an out-of-process frame, on seamark's side connection.
    Remote(RemoteSession),
}

/// A session attached to an out-of-process frame's target.
#[derive(Debug, Clone)]
pub struct RemoteSession {
    channel: Arc<Channel>,
    session: String,
    target: String,
}

impl Link {
    /// Sends `cmd` where this link's frames answer.
    pub async fn execute<T: Command>(&self, cmd: T) -> Result<CdpReply<T::Response>, CdpError> {
        match self {
            Link::Page(page) => Ok(CdpReply {
                result: page.execute(cmd).await?.result,
            }),
            Link::Remote(r) => {
                let method = cmd.identifier();
                let params = serde_json::to_value(&cmd)?;
                let value = r
                    .channel
                    .call(Some(&r.session), &method, params)
                    .await
                    .map_err(|e| CdpError::msg(e.to_string()))?;
                Ok(CdpReply {
                    result: T::response_from_value(value)?,
                })
            }
        }
    }

    /// The main world's script context of `frame`, one of this link's frames.
    pub async fn frame_execution_context(
        &self,
        frame: FrameId,
    ) -> Result<Option<ExecutionContextId>, CdpError> {
        match self {
            Link::Page(page) => page.frame_execution_context(frame).await,
            Link::Remote(r) => Ok(r
                .channel
                .contexts
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .get(&(r.session.clone(), frame.inner().clone()))
                .map(|&id| ExecutionContextId::new(id))),
        }
    }

    /// The target this link's session is attached to (the page's, or the frame's).
    pub fn target_id(&self) -> &str {
        match self {
            Link::Page(page) => page.target_id().inner(),
            Link::Remote(r) => &r.target,
        }
    }

    /// Whether this is an out-of-process frame's session.
    pub fn is_remote(&self) -> bool {
        matches!(self, Link::Remote(_))
    }
}

type Sink = async_tungstenite::WebSocketSender<async_tungstenite::tokio::ConnectStream>;

/// What checks the requests of the frames' sessions, once set.
type Filter = Arc<Mutex<Option<RequestFilter>>>;

/// Page targets whose new tabs are checked too (seamark's tabs).
type Tabs = Arc<Mutex<Vec<String>>>;

/// Frame target → its session on the side connection.
type Sessions = Arc<Mutex<HashMap<String, String>>>;

/// The sending half of the side connection, and the commands waiting for
/// their answers.
struct Wire {
    sink: tokio::sync::Mutex<Sink>,
    next_id: AtomicU64,
    waiting: Mutex<HashMap<u64, oneshot::Sender<Result<Value, Value>>>>,
}

impl Wire {
    /// Writes command `id`, `method` (on `session`, or to the browser).
    async fn write(
        &self,
        id: u64,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<(), RemoteError> {
        let mut command = json!({ "id": id, "method": method, "params": params });
        if let Some(s) = session {
            command["sessionId"] = json!(s);
        }
        self.sink
            .lock()
            .await
            .send(Message::Text(command.to_string().into()))
            .await
            .map_err(|e| RemoteError::Send {
                method: method.to_string(),
                cause: e.to_string(),
            })
    }

    /// Sends `method` without waiting for its answer.
    async fn send(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<(), RemoteError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.write(id, session, method, params).await
    }

    /// Sends `method` and waits for its result.
    async fn call(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, RemoteError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        // Registered before it is sent: the answer may come first.
        lock(&self.waiting).insert(id, tx);
        if let Err(e) = self.write(id, session, method, params).await {
            lock(&self.waiting).remove(&id);
            return Err(e);
        }
        match tokio::time::timeout(COMMAND_BOUND, rx).await {
            Ok(Ok(answer)) => answer.map_err(|error| RemoteError::Refused {
                method: method.to_string(),
                error,
            }),
            Ok(Err(_)) => Err(RemoteError::Closed(method.to_string())),
            Err(_) => {
                lock(&self.waiting).remove(&id);
                Err(RemoteError::Unanswered(method.to_string()))
            }
        }
    }

    /// Lets a target the browser holds at its start run (`session`), its
    /// requests checked first and its scripts sealed when it has a `guard`.
    async fn release(&self, session: &str, guard: Option<&RequestFilter>, what: Held) {
        let worker = matches!(what, Held::Worker);
        let what = match what {
            Held::Worker => "a worker",
            Held::Tab => "a new tab",
        };
        if let Some(guard) = guard {
            if let Err(e) = self
                .call(Some(session), "Fetch.enable", every_request_json())
                .await
            {
                tracing::debug!("{what}'s requests are not checked: {e}");
            }
            // Not waited for: a tab opened without an opener answers it only
            // once it runs (15 s of COMMAND_BOUND a tab, else). Its session
            // takes its commands in order: the seal is in before it runs.
            if let Some((method, params)) = seal_steps(guard, worker) {
                if let Err(e) = self.send(Some(session), method, params).await {
                    tracing::debug!("{what} is not sealed: {e}");
                }
            }
        }
        let _ = self
            .call(Some(session), "Runtime.runIfWaitingForDebugger", json!({}))
            .await;
    }

    /// Follows the scripts of a frame's `session` and, with a `guard`, seals
    /// them and holds
    /// its requests for the filter: each is asked for even when one before
    /// it failed, and the first failure is given back.
    async fn follow(
        &self,
        session: &str,
        guard: Option<&RequestFilter>,
    ) -> Result<(), RemoteError> {
        let mut steps = vec![("Runtime.enable", json!({}))];
        if let Some(guard) = guard {
            steps.push(("Fetch.enable", every_request_json()));
            steps.extend(seal_steps(guard, false));
        }
        let mut first = Ok(());
        for (method, params) in steps {
            if let Err(e) = self.call(Some(session), method, params).await {
                first = first.and(Err(e));
            }
        }
        first
    }

    /// Hands an answer to the command waiting for it.
    fn answered(&self, id: u64, message: &Value) {
        if let Some(tx) = lock(&self.waiting).remove(&id) {
            let answer = match message.get("error") {
                Some(error) => Err(error.clone()),
                None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
            };
            let _ = tx.send(answer);
        }
    }
}

/// seamark's own connection to the browser endpoint, for frame sessions.
struct Channel {
    wire: Arc<Wire>,
    /// (session, frame) → the frame's main-world script context, from the
    /// sessions' `Runtime.executionContextCreated` events.
    contexts: Arc<Mutex<HashMap<(String, String), i64>>>,
    reader: tokio::task::JoinHandle<()>,
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

/// Locks a map, through a poisoned lock (a panic elsewhere leaves the map whole).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
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
            Some("Fetch.requestPaused") => {
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
                let (method, params) = decision(&filter, request, url);
                if let Err(e) = self.wire.send(Some(session), method, params).await {
                    tracing::debug!("a paused request was not answered: {e}");
                }
            }
            // A new tab, held before its first request (see
            // `watch_new_tabs`); not a frame this connection attached to.
            Some("Target.attachedToTarget")
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
            Some("Target.attachedToTarget")
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
            Some("Target.attachedToTarget") if message.get("sessionId").is_some() => {
                let guard = lock(&self.filter).clone();
                tokio::spawn(new_worker(
                    self.wire.clone(),
                    guard,
                    message["params"].clone(),
                ));
            }
            Some("Target.detachedFromTarget") => {
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
    async fn open(
        browser_ws: String,
        filter: Filter,
        tabs: Tabs,
        sessions: Sessions,
        watched: Tabs,
    ) -> Result<Arc<Channel>, RemoteError> {
        let (socket, _) = async_tungstenite::tokio::connect_async(&browser_ws)
            .await
            .map_err(|e| RemoteError::Connect {
                url: browser_ws.clone(),
                cause: e.to_string(),
            })?;
        let (sink, mut stream) = socket.split();
        let wire = Arc::new(Wire {
            sink: tokio::sync::Mutex::new(sink),
            next_id: AtomicU64::new(1),
            waiting: Mutex::default(),
        });
        let contexts: Arc<Mutex<HashMap<(String, String), i64>>> = Arc::default();
        let w = wire.clone();
        let events = Events {
            wire: wire.clone(),
            filter,
            tabs,
            sessions,
            watched,
            contexts: contexts.clone(),
        };
        let reader = tokio::spawn(async move {
            while let Some(Ok(message)) = stream.next().await {
                let Message::Text(text) = message else {
                    continue;
                };
                let Ok(message) = serde_json::from_str::<Value>(&text) else {
                    continue;
                };
                if let Some(id) = message.get("id").and_then(Value::as_u64) {
                    w.answered(id, &message);
                    continue;
                }
                events.heard(&message).await;
            }
            // The connection is gone: every command still waiting fails.
            lock(&w.waiting).clear();
        });
        Ok(Arc::new(Channel {
            wire,
            contexts,
            reader,
        }))
    }

    /// Sends `method` (on `session`, or to the browser) and waits for its result.
    async fn call(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, RemoteError> {
        self.wire.call(session, method, params).await
    }

    /// Attaches to target `target` (flattened: its session's messages come
    /// on this connection) and gives its session id.
    async fn attach(&self, target: &str) -> Result<String, RemoteError> {
        let attached = self
            .call(
                None,
                "Target.attachToTarget",
                json!({ "targetId": target, "flatten": true }),
            )
            .await?;
        attached["sessionId"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| RemoteError::NoSession(target.to_string()))
    }
}

/// Child targets attached as they start, held until told to run.
fn hold_children() -> Value {
    json!({ "autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true })
}

/// A frame of another site in one of seamark's checked tabs, held before its
/// first request: its requests are checked and its scripts sealed (with a
/// `guard`), its scripts
/// followed and its own frames held in turn; then it runs. Perception finds
/// its session ready.
async fn new_frame(
    wire: Arc<Wire>,
    sessions: Sessions,
    guard: Option<RequestFilter>,
    params: Value,
) {
    let (Some(session), Some(target)) = (
        params["sessionId"].as_str(),
        params["targetInfo"]["targetId"].as_str(),
    ) else {
        return;
    };
    let followed = wire.follow(session, guard.as_ref()).await;
    let held = wire
        .call(Some(session), "Target.setAutoAttach", hold_children())
        .await;
    if let Err(e) = followed.and(held.map(|_| ())) {
        tracing::debug!("frame {target}: {e}");
    }
    lock(&sessions)
        .entry(target.to_string())
        .or_insert_with(|| session.to_string());
    let _ = wire
        .call(Some(session), "Runtime.runIfWaitingForDebugger", json!({}))
        .await;
}

/// A worker (or any target but a frame) that a frame held at its start:
/// its requests are checked and its scripts sealed when seamark's are
/// (`guard`), and it runs.
async fn new_worker(wire: Arc<Wire>, guard: Option<RequestFilter>, params: Value) {
    if let Some(session) = params["sessionId"].as_str() {
        wire.release(session, guard.as_ref(), Held::Worker).await;
    }
}

/// What the browser held at its start, for [`Wire::release`]: a worker's
/// seal runs at once, a tab's in each of its documents.
enum Held {
    Worker,
    Tab,
}

/// Has the browser hold every new tab before its first request and tell
/// this connection (see [`new_tab`]): a tab opened from seamark's tab must
/// have its requests checked before it sends one.
async fn watch_new_tabs(channel: &Channel) -> Result<(), RemoteError> {
    channel
        .call(
            None,
            "Target.setAutoAttach",
            json!({
                "autoAttach": true,
                "waitForDebuggerOnStart": true,
                "flatten": true,
                "filter": [{ "type": "page" }],
            }),
        )
        .await
        .map(|_| ())
}

/// A tab the browser holds before its first request, told by the browser
/// since `watch_new_tabs`: one opened from seamark's tabs has its requests
/// checked from the first; a tab of the person's is let go at once, and
/// left alone.
async fn new_tab(wire: Arc<Wire>, tabs: Tabs, guard: Option<RequestFilter>, params: Value) {
    let Some(session) = params["sessionId"].as_str() else {
        return;
    };
    let info = &params["targetInfo"];
    let (target, opener) = (
        info["targetId"].as_str().unwrap_or_default(),
        info["openerId"].as_str().unwrap_or_default(),
    );
    let ours = {
        let mut tabs = lock(&tabs);
        let ours = tabs.iter().any(|t| t == opener || t == target);
        if ours && !tabs.iter().any(|t| t == target) {
            tabs.push(target.to_string());
        }
        ours
    };
    let guard = guard.filter(|_| ours);
    wire.release(session, guard.as_ref(), Held::Tab).await;
    if !ours {
        let _ = wire
            .send(
                None,
                "Target.detachFromTarget",
                json!({ "sessionId": session }),
            )
            .await;
    }
}

/// Keeps the main-world script contexts of the frame sessions up to date.
fn note_event(contexts: &Mutex<HashMap<(String, String), i64>>, message: &Value) {
    let (Some(method), Some(session)) = (
        message.get("method").and_then(Value::as_str),
        message.get("sessionId").and_then(Value::as_str),
    ) else {
        return;
    };
    let params = &message["params"];
    let mut contexts = lock(contexts);
    match method {
        "Runtime.executionContextCreated" => {
            let context = &params["context"];
            let aux = &context["auxData"];
            if aux["isDefault"] == Value::Bool(true) {
                if let (Some(frame), Some(id)) = (aux["frameId"].as_str(), context["id"].as_i64()) {
                    contexts.insert((session.to_string(), frame.to_string()), id);
                }
            }
        }
        "Runtime.executionContextDestroyed" => {
            let gone = params["executionContextId"].as_i64();
            contexts.retain(|(s, _), id| !(s == session && Some(*id) == gone));
        }
        "Runtime.executionContextsCleared" => contexts.retain(|(s, _), _| s != session),
        _ => {}
    }
}

/// One browser's out-of-process frames, as seamark follows them: the side
/// connection (opened when first needed) and the sessions attached on it.
#[derive(Debug)]
pub struct RemoteFrames {
    browser_ws: String,
    /// The runtime the browser was started on, which the side connection
    /// lives on too: a session may be driven from another runtime (a program
    /// with a runtime per task, the tests with one per test), and a
    /// connection opened there would die with it, under the other sessions.
    runtime: Option<tokio::runtime::Handle>,
    channel: tokio::sync::Mutex<Option<Arc<Channel>>>,
    /// Frame target → its session on the channel.
    sessions: Sessions,
    /// What checks the frames' requests, when seamark's tabs' are checked
    /// (see intercept.rs).
    filter: Filter,
    /// seamark's tabs in this browser: the tabs they open are checked too.
    tabs: Tabs,
    /// The tabs this connection attached to itself, to have their frames
    /// attached ([`RemoteFrames::attach_frames`]): not new tabs.
    watched: Tabs,
    /// Page target → its out-of-process frames as last found.
    found: Mutex<HashMap<String, Vec<RemoteFrame>>>,
}

impl RemoteFrames {
    /// For the browser whose DevTools endpoint is `browser_ws`.
    pub fn new(browser_ws: &str) -> Arc<RemoteFrames> {
        Arc::new(RemoteFrames {
            browser_ws: browser_ws.to_string(),
            runtime: tokio::runtime::Handle::try_current().ok(),
            channel: tokio::sync::Mutex::default(),
            sessions: Sessions::default(),
            filter: Filter::default(),
            tabs: Tabs::default(),
            watched: Tabs::default(),
            found: Mutex::default(),
        })
    }

    /// Checks the requests of every frame attached from now on with `filter`,
    /// and of every tab seamark's tabs open, from its first request.
    pub async fn check_requests(&self, filter: RequestFilter) -> Result<(), RemoteError> {
        let first = lock(&self.filter).replace(filter).is_none();
        let channel = self.channel().await?;
        if first {
            watch_new_tabs(&channel).await?;
        }
        Ok(())
    }

    async fn channel(&self) -> Result<Arc<Channel>, RemoteError> {
        let mut slot = self.channel.lock().await;
        if let Some(c) = slot.as_ref().filter(|c| !c.reader.is_finished()) {
            return Ok(c.clone());
        }
        lock(&self.sessions).clear();
        let open = Channel::open(
            self.browser_ws.clone(),
            self.filter.clone(),
            self.tabs.clone(),
            self.sessions.clone(),
            self.watched.clone(),
        );
        let opened = match &self.runtime {
            Some(runtime) => runtime
                .spawn(open)
                .await
                .map_err(|e| RemoteError::NotOpened(e.to_string()))??,
            None => open.await?,
        };
        if lock(&self.filter).is_some() {
            watch_new_tabs(&opened).await?;
        }
        *slot = Some(opened.clone());
        Ok(opened)
    }

    /// Has the browser attach the frames of other sites in `page` to this
    /// connection as they start, and those already there at once: each is
    /// followed as [`new_frame`] says. A first look at a page then finds its
    /// frames' sessions ready, instead of attaching to each one (27-72 ms on
    /// felixge.de's saved page, two sandboxed frames in processes of their
    /// own). When the requests are checked, the frames are held until their
    /// checks are on, so that the first request of each is checked too.
    /// Frames this misses are attached on first use (see
    /// [`RemoteFrames::session`]).
    pub async fn attach_frames(&self, page: &Page) -> Result<(), RemoteError> {
        let channel = self.channel().await?;
        let target = page.target_id().inner();
        {
            let mut watched = lock(&self.watched);
            if !watched.contains(target) {
                watched.push(target.clone());
            }
        }
        let session = channel.attach(target).await?;
        let hold = lock(&self.filter).is_some();
        // A checked tab's workers are held too: their WebSockets are sealed
        // before they run (see intercept.rs).
        let mut kinds = vec![json!({ "type": "iframe" })];
        if hold {
            kinds.push(json!({ "type": "worker" }));
        }
        channel
            .call(
                Some(&session),
                "Target.setAutoAttach",
                json!({
                    "autoAttach": true,
                    "waitForDebuggerOnStart": hold,
                    "flatten": true,
                    "filter": kinds,
                }),
            )
            .await
            .map(|_| ())
    }

    /// The session of frame target `target`, attached (and its scripts
    /// followed) on first use.
    async fn session(&self, channel: &Arc<Channel>, target: &str) -> Result<String, RemoteError> {
        if let Some(s) = lock(&self.sessions).get(target) {
            return Ok(s.clone());
        }
        let session = channel.attach(target).await?;
        // Contexts come as events before this answers.
        let guard = lock(&self.filter).clone();
        channel.wire.follow(&session, guard.as_ref()).await?;
        lock(&self.sessions).insert(target.to_string(), session.clone());
        Ok(session)
    }
}

/// A frame of a page that runs in a process of its own, or in the process of
/// one that does.
#[derive(Debug, Clone)]
pub struct RemoteFrame {
    /// Its frame id.
    pub id: String,
    /// The frame it is in.
    pub parent: String,
    /// Where its commands go.
    pub link: Link,
    /// Whether it is the root of its process's part of the page (its owner
    /// element is in another process, the parent's).
    pub is_root: bool,
}

/// Which browser's frames each driven page's are: page target → its browser's.
static PAGES: Mutex<Vec<(String, Weak<RemoteFrames>)>> = Mutex::new(Vec::new());

/// Notes that `page` lives in the browser `frames` follows.
pub fn follow(page: &Page, frames: &Arc<RemoteFrames>) {
    {
        let mut tabs = lock(&frames.tabs);
        let target = page.target_id().inner();
        if !tabs.contains(target) {
            tabs.push(target.clone());
        }
    }
    let mut pages = lock(&PAGES);
    pages.retain(|(_, w)| w.strong_count() > 0);
    let target = page.target_id().inner().clone();
    pages.retain(|(t, _)| *t != target);
    pages.push((target, Arc::downgrade(frames)));
}

fn frames_of(page: &Page) -> Option<Arc<RemoteFrames>> {
    let target = page.target_id().inner();
    lock(&PAGES)
        .iter()
        .find(|(t, _)| t == target)
        .and_then(|(_, w)| w.upgrade())
}

/// The frames of `page` in processes of their own (and in theirs), parents
/// before children. `known` are the frames the page's own session holds.
/// Empty when the page has none, or seamark does not drive it through a
/// session (nothing to attach with). An error when some could not be
/// followed: the connection could not be opened, or a frame not attached to.
pub async fn remote_frames(page: &Page, known: &[String]) -> Result<Vec<RemoteFrame>, RemoteError> {
    let Some(frames) = frames_of(page) else {
        return Ok(Vec::new());
    };
    let mut missed = None;
    let channel = frames.channel().await?;
    let targets = channel.call(None, "Target.getTargets", json!({})).await?;
    let iframes: Vec<(String, String)> = targets["targetInfos"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter(|t| t["type"] == "iframe")
        .filter_map(|t| {
            Some((
                t["targetId"].as_str()?.to_string(),
                t["parentFrameId"].as_str()?.to_string(),
            ))
        })
        .collect();
    let mut ours: Vec<String> = known.to_vec();
    let mut out = Vec::new();
    // A frame's target is found once its parent is known: until no frame is added.
    loop {
        let before = out.len();
        for (target, parent) in &iframes {
            // The page's own session may list a frame of another process
            // too (as a frame without a document): it is taken from here.
            if out.iter().any(|f: &RemoteFrame| f.id == *target) || !ours.contains(parent) {
                continue;
            }
            let session = match frames.session(&channel, target).await {
                Ok(s) => s,
                Err(e) => {
                    missed = Some(RemoteError::Frame {
                        target: target.clone(),
                        cause: Box::new(e),
                    });
                    continue;
                }
            };
            let link = Link::Remote(RemoteSession {
                channel: channel.clone(),
                session: session.clone(),
                target: target.clone(),
            });
            ours.push(target.clone());
            out.push(RemoteFrame {
                id: target.clone(),
                parent: parent.clone(),
                link: link.clone(),
                is_root: true,
            });
            // The frames in its process below it.
            let tree = channel
                .call(Some(&session), "Page.getFrameTree", json!({}))
                .await
                .unwrap_or_default();
            frames_below(&tree["frameTree"], target, &link, &mut out, &mut ours);
        }
        if out.len() == before {
            break;
        }
    }
    lock(&frames.found).insert(page.target_id().inner().clone(), out.clone());
    match missed {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// The frames below `root` in its process, from its frame tree `tree`,
/// added to `out` (and their ids to `ours`), each reached through `link`.
fn frames_below(
    tree: &Value,
    root: &str,
    link: &Link,
    out: &mut Vec<RemoteFrame>,
    ours: &mut Vec<String>,
) {
    let mut pending = vec![(tree, root.to_string())];
    while let Some((node, parent)) = pending.pop() {
        for child in node["childFrames"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            let Some(id) = child["frame"]["id"].as_str() else {
                continue;
            };
            if out.iter().any(|f| f.id == id) {
                continue;
            }
            ours.push(id.to_string());
            out.push(RemoteFrame {
                id: id.to_string(),
                parent: parent.clone(),
                link: link.clone(),
                is_root: false,
            });
            pending.push((child, id.to_string()));
        }
    }
}

/// The out-of-process frames of `page` as last found (those followed).
pub fn found_frames(page: &Page) -> Vec<RemoteFrame> {
    frames_of(page)
        .and_then(|frames| lock(&frames.found).get(page.target_id().inner()).cloned())
        .unwrap_or_default()
}

/// The out-of-process frame `frame` of `page` as last found, if it is one.
pub fn remote_frame(page: &Page, frame: &str) -> Option<RemoteFrame> {
    let frames = frames_of(page)?;
    let found = lock(&frames.found);
    found
        .get(page.target_id().inner())?
        .iter()
        .find(|f| f.id == frame)
        .cloned()
}

/// Where the commands about frame `frame` of `page` go: its process's
/// session when it runs in one of its own, else the page's.
pub fn link_of(page: &Page, frame: &str) -> Link {
    remote_frame(page, frame).map_or_else(|| Link::Page(page.clone()), |f| f.link)
}

#[cfg(test)]
mod tests {
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
