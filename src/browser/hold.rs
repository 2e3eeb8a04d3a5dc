//! Targets the browser holds at their start for the side connection: a new
//! tab, a frame of another site, a worker. Each is checked (its requests,
//! its scripts sealed) when seamark's tabs are, followed, and let run.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use chromiumoxide::cdp::browser_protocol::target::{
    DetachFromTargetParams, FilterEntry, SessionId, SetAutoAttachParams, TargetFilter,
};
use chromiumoxide::cdp::js_protocol::runtime::{self, RunIfWaitingForDebuggerParams};
use serde_json::Value;

use super::intercept::{every_request, seal_call, RequestFilter};
use super::wire::{lock, Call, RemoteError, Wire};

/// What checks the requests of the frames' sessions, once set.
pub(super) type Filter = Arc<Mutex<Option<RequestFilter>>>;

/// Page targets whose new tabs are checked too (seamark's tabs).
pub(super) type Tabs = Arc<Mutex<Vec<String>>>;

/// Frame target → its session on the side connection.
pub(super) type Sessions = Arc<Mutex<HashMap<String, String>>>;

/// Has targets of `kinds` (`iframe`, `worker`, `page`; all when empty)
/// attached to the session as they start, held until told to run when
/// `hold`.
pub(super) fn auto_attach(kinds: &[&str], hold: bool) -> SetAutoAttachParams {
    let mut params = SetAutoAttachParams::new(true, hold);
    params.flatten = Some(true);
    if !kinds.is_empty() {
        params.filter = Some(TargetFilter::new(
            kinds
                .iter()
                .map(|k| FilterEntry::builder().r#type(*k).build())
                .collect::<Vec<_>>(),
        ));
    }
    params
}

/// A frame of another site in one of seamark's checked tabs, held before its
/// first request: its requests are checked and its scripts sealed (with a
/// `guard`), its scripts followed and its own frames held in turn; then it
/// runs. Perception finds its session ready.
pub(super) async fn new_frame(
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
    let followed = follow(&wire, session, guard.as_ref()).await;
    let held = wire.execute(Some(session), auto_attach(&[], true)).await;
    if let Err(e) = followed.and(held.map(|_| ())) {
        tracing::debug!("frame {target}: {e}");
    }
    lock(&sessions)
        .entry(target.to_string())
        .or_insert_with(|| session.to_string());
    let _ = wire
        .execute(Some(session), RunIfWaitingForDebuggerParams::default())
        .await;
}

/// A worker (or any target but a frame) that a frame held at its start:
/// its requests are checked and its scripts sealed when seamark's are
/// (`guard`), and it runs.
pub(super) async fn new_worker(wire: Arc<Wire>, guard: Option<RequestFilter>, params: Value) {
    if let Some(session) = params["sessionId"].as_str() {
        release(&wire, session, guard.as_ref(), Held::Worker).await;
    }
}

/// What the browser held at its start, for [`release`]: a worker's seal
/// runs at once, a tab's in each of its documents.
enum Held {
    Worker,
    Tab,
}

/// A tab the browser holds before its first request, told by the browser
/// since the side connection watches new tabs: one opened from seamark's
/// tabs has its requests checked from the first; a tab of the person's is
/// let go at once, and left alone.
pub(super) async fn new_tab(
    wire: Arc<Wire>,
    tabs: Tabs,
    guard: Option<RequestFilter>,
    params: Value,
) {
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
    release(&wire, session, guard.as_ref(), Held::Tab).await;
    if !ours {
        let detach = DetachFromTargetParams {
            session_id: Some(SessionId::new(session)),
        };
        let _ = wire.send(None, Call::of(&detach)).await;
    }
}

/// Lets a target the browser holds at its start run (`session`), its
/// requests checked first and its scripts sealed when it has a `guard`.
async fn release(wire: &Wire, session: &str, guard: Option<&RequestFilter>, what: Held) {
    let worker = matches!(what, Held::Worker);
    let what = match what {
        Held::Worker => "a worker",
        Held::Tab => "a new tab",
    };
    if let Some(guard) = guard {
        if let Err(e) = wire.execute(Some(session), every_request()).await {
            tracing::debug!("{what}'s requests are not checked: {e}");
        }
        // Not waited for: a tab opened without an opener answers it only
        // once it runs (15 s of COMMAND_BOUND a tab, else). Its session
        // takes its commands in order: the seal is in before it runs.
        if let Some(seal) = seal_call(guard, worker) {
            if let Err(e) = wire.send(Some(session), seal).await {
                tracing::debug!("{what} is not sealed: {e}");
            }
        }
    }
    let _ = wire
        .execute(Some(session), RunIfWaitingForDebuggerParams::default())
        .await;
}

/// Follows the scripts of a frame's `session` and, with a `guard`, seals
/// them and holds its requests for the filter: each is asked for even when
/// one before it failed, and the first failure is given back.
pub(super) async fn follow(
    wire: &Wire,
    session: &str,
    guard: Option<&RequestFilter>,
) -> Result<(), RemoteError> {
    let mut steps = vec![Call::of(&runtime::EnableParams::default())];
    if let Some(guard) = guard {
        steps.push(Call::of(&every_request()));
        steps.extend(seal_call(guard, false));
    }
    let mut first = Ok(());
    for step in steps {
        if let Err(e) = wire.call(Some(session), step).await {
            first = first.and(Err(e));
        }
    }
    first
}
