//! What happens around an action that the action itself does not return: JS
//! dialogs (answered by the session under the executor's policy, so the
//! page never hangs; recorded here for the model), requests in flight
//! (for settling), a crashed renderer, and downloads.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chromiumoxide::cdp::browser_protocol::browser::{
    CancelDownloadParams, DownloadProgressState, EventDownloadProgress, EventDownloadWillBegin,
    SetDownloadBehaviorBehavior, SetDownloadBehaviorParams,
};
use chromiumoxide::cdp::browser_protocol::inspector::{
    EnableParams as InspectorEnableParams, EventTargetCrashed,
};
use chromiumoxide::cdp::browser_protocol::network::{
    EventLoadingFailed, EventLoadingFinished, EventRequestWillBeSent, ResourceType,
};
use chromiumoxide::cdp::browser_protocol::page::{
    AddScriptToEvaluateOnNewDocumentParams, EventJavascriptDialogOpening,
};
use chromiumoxide::Page;

use crate::browser::{DialogAnswer, Session};
use crate::files::downloads::{mime_of, safe_file_name, unique_path};
use crate::files::{sha256_of, DownloadedFile};
use crate::records::{Dialog, Download};
use futures::StreamExt;
use tokio::task::JoinHandle;

/// How JS dialogs are answered. An alert is always accepted (it has one button).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DialogPolicy {
    /// OK on confirm and prompt (the prompt gets [`super::ActOptions::prompt_text`]).
    #[default]
    Accept,
    /// Cancel on confirm and prompt.
    Dismiss,
}

/// Shared record of events, filled by the watcher tasks.
#[derive(Debug, Default)]
pub(super) struct Events {
    pub dialogs: Vec<Dialog>,
    pub downloads: Vec<Download>,
    guids: HashMap<String, usize>,
    /// Requests in flight and when each started.
    inflight: HashMap<String, Instant>,
    /// Requests whose end was told before their start, and when: Chromium
    /// tells some data: URLs' ends first.
    ended_first: HashMap<String, Instant>,
    /// Last time a request started or ended.
    pub last_network: Option<Instant>,
    pub crashed: bool,
    /// Set when the connection to the browser broke.
    pub browser_lost: Arc<std::sync::atomic::AtomicBool>,
}

impl Events {
    /// The page is gone: its renderer crashed, or the browser was lost.
    pub fn gone(&self) -> Option<&'static str> {
        if self.browser_lost.load(std::sync::atomic::Ordering::SeqCst) {
            Some("the browser was lost (it crashed, or was killed or closed)")
        } else if self.crashed {
            Some("the page crashed")
        } else {
            None
        }
    }
}

/// A request starting or ending, by its id, as the browser tells it.
#[derive(Debug, Clone, PartialEq)]
enum Request {
    /// It started; `false` for a stream, which never ends.
    Started(String, bool),
    /// It finished or failed.
    Ended(String),
}

/// How long an end told before its start is kept for the start to come.
const ENDED_FIRST_KEPT: Duration = Duration::from_secs(10);

impl Events {
    /// Notes a request's start or end, in whichever order they come. A
    /// request whose end came first is not in flight when it starts: it
    /// held half the clicks that loaded the saved github page 2 s, until it
    /// counted as a long poll.
    fn record(&mut self, change: Request) {
        let now = Instant::now();
        self.last_network = Some(now);
        match change {
            Request::Started(id, counts) => {
                if self.ended_first.remove(&id).is_none() && counts {
                    self.inflight.insert(id, now);
                }
            }
            Request::Ended(id) => {
                if self.inflight.remove(&id).is_none() {
                    self.ended_first
                        .retain(|_, t| t.elapsed() < ENDED_FIRST_KEPT);
                    self.ended_first.insert(id, now);
                }
            }
        }
    }

    /// Requests in flight that started less than `recent` ago: a long poll or a
    /// stream that never ends must not keep the page "busy" forever.
    pub fn recent_inflight(&self, recent: Duration) -> usize {
        self.inflight
            .values()
            .filter(|t| t.elapsed() < recent)
            .count()
    }
}

/// The watcher tasks of the page being driven, and the shared record.
pub(super) struct Watch {
    pub events: Arc<Mutex<Events>>,
    page_tasks: Vec<JoinHandle<()>>,
    browser_tasks: Vec<JoinHandle<()>>,
}

impl Drop for Watch {
    fn drop(&mut self) {
        for t in self.page_tasks.iter().chain(&self.browser_tasks) {
            t.abort();
        }
    }
}

/// Locks the record; a poisoned lock (a watcher panicked) still holds usable data.
pub(super) fn lock(events: &Mutex<Events>) -> std::sync::MutexGuard<'_, Events> {
    events
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Watch {
    /// Starts watching the browser (downloads) and its page.
    pub async fn start(
        session: &Session,
        dialogs: DialogPolicy,
        prompt_text: &str,
        downloads: Option<DownloadRules>,
    ) -> Watch {
        let events = Arc::new(Mutex::new(Events {
            browser_lost: session.lost_flag(),
            ..Events::default()
        }));
        session.answer_dialogs(answer(dialogs, prompt_text));
        let browser_tasks = watch_downloads(session, downloads, &events).await;
        let mut watch = Watch {
            events,
            page_tasks: Vec::new(),
            browser_tasks,
        };
        watch.follow(session.page(), dialogs, prompt_text).await;
        watch
    }

    /// Watches `page` instead of the previous one (a new tab, a fresh page).
    pub async fn follow(&mut self, page: &Page, dialogs: DialogPolicy, prompt_text: &str) {
        for t in self.page_tasks.drain(..) {
            t.abort();
        }
        {
            let mut ev = lock(&self.events);
            ev.inflight.clear();
            ev.ended_first.clear();
            ev.crashed = false;
        }
        // Timers are counted from the page's next document on, and in the
        // one it shows now.
        let count_timers = AddScriptToEvaluateOnNewDocumentParams::new(TIMERS_JS);
        let _ = page.execute(count_timers).await;
        let _ = crate::browser::evaluate(page, TIMERS_JS).await;
        let ev = &self.events;
        let tasks = [
            watch_dialogs(page, dialogs, prompt_text.to_string(), ev.clone()).await,
            watch_requests(page, ev.clone()).await,
            watch_crash(page, ev.clone()).await,
        ];
        self.page_tasks = tasks.into_iter().flatten().collect();
    }
}

/// The session's answer to dialogs under `policy`.
fn answer(policy: DialogPolicy, prompt_text: &str) -> DialogAnswer {
    DialogAnswer {
        accept: policy == DialogPolicy::Accept,
        prompt_text: prompt_text.to_string(),
    }
}

/// Records the page's dialogs as the session answers them.
async fn watch_dialogs(
    page: &Page,
    policy: DialogPolicy,
    prompt_text: String,
    events: Arc<Mutex<Events>>,
) -> Option<JoinHandle<()>> {
    let mut opened = page
        .event_listener::<EventJavascriptDialogOpening>()
        .await
        .ok()?;
    let answer = answer(policy, &prompt_text);
    Some(tokio::spawn(async move {
        while let Some(d) = opened.next().await {
            let mut ev = lock(&events);
            // A page that opens dialogs in a loop is told in a bounded list.
            if ev.dialogs.len() < MAX_DIALOGS_KEPT {
                ev.dialogs.push(Dialog {
                    kind: d.r#type.as_ref().to_lowercase(),
                    message: d.message.clone(),
                    accepted: answer.accepts(&d.r#type),
                });
            }
        }
    }))
}

/// Most dialogs the watch keeps a record of.
const MAX_DIALOGS_KEPT: usize = 100;

async fn watch_requests(page: &Page, events: Arc<Mutex<Events>>) -> Option<JoinHandle<()>> {
    let mut sent = page.event_listener::<EventRequestWillBeSent>().await.ok()?;
    let mut finished = page.event_listener::<EventLoadingFinished>().await.ok()?;
    let mut failed = page.event_listener::<EventLoadingFailed>().await.ok()?;
    Some(tokio::spawn(async move {
        loop {
            let change = tokio::select! {
                Some(e) = sent.next() => {
                    // Streams never "finish": they must not hold the page busy.
                    let streaming = matches!(
                        e.r#type,
                        Some(ResourceType::WebSocket | ResourceType::EventSource)
                    );
                    Request::Started(e.request_id.inner().clone(), !streaming)
                }
                Some(e) = finished.next() => Request::Ended(e.request_id.inner().clone()),
                Some(e) = failed.next() => Request::Ended(e.request_id.inner().clone()),
                else => break,
            };
            lock(&events).record(change);
        }
    }))
}

async fn watch_crash(page: &Page, events: Arc<Mutex<Events>>) -> Option<JoinHandle<()>> {
    let mut crashed = page.event_listener::<EventTargetCrashed>().await.ok()?;
    // Inspector events (the crash) come only once the domain is enabled.
    let _ = page.execute(InspectorEnableParams::default()).await;
    Some(tokio::spawn(async move {
        if crashed.next().await.is_some() {
            lock(&events).crashed = true;
        }
    }))
}

/// Where downloads go and how large one may be.
#[derive(Debug, Clone)]
pub(super) struct DownloadRules {
    pub dir: PathBuf,
    pub max_bytes: u64,
}

/// Downloads are allowed into the rules' folder when given, else denied;
/// either way they are recorded and never wait for a person. Chromium
/// saves each under its GUID (`allowAndName`): the site's name is made safe
/// and unique here once it completes, so no name the site chose can leave
/// the folder or overwrite a file. The behavior is the session's context's
/// when it has one; the events are the whole browser's, each with the frame
/// it came from.
async fn watch_downloads(
    session: &Session,
    rules: Option<DownloadRules>,
    events: &Arc<Mutex<Events>>,
) -> Vec<JoinHandle<()>> {
    let browser = session.browser();
    // The browser takes an absolute folder, and the files named in results
    // are found from anywhere.
    let rules = rules.map(|mut r| {
        if let Err(e) = std::fs::create_dir_all(&r.dir) {
            tracing::warn!("downloads folder {} cannot be made: {e}", r.dir.display());
        }
        if let Ok(abs) = std::fs::canonicalize(&r.dir) {
            r.dir = abs;
        }
        r
    });
    let behavior = SetDownloadBehaviorParams {
        behavior: if rules.is_some() {
            SetDownloadBehaviorBehavior::AllowAndName
        } else {
            SetDownloadBehaviorBehavior::Deny
        },
        browser_context_id: session.context().cloned(),
        download_path: rules.as_ref().map(|r| r.dir.to_string_lossy().into_owned()),
        events_enabled: Some(true),
    };
    if let Err(e) = browser.execute(behavior).await {
        tracing::debug!("download behavior not set: {e}");
    }
    let Ok(mut begin) = browser.event_listener::<EventDownloadWillBegin>().await else {
        return Vec::new();
    };
    let mut progress = match rules {
        Some(_) => browser.event_listener::<EventDownloadProgress>().await.ok(),
        None => None,
    };
    let events = events.clone();
    let (host, context) = (session.weak_browser(), session.context().cloned());
    // One task for both streams, a download's beginning first: a small
    // file's end, heard before its beginning by a task of its own, was
    // never matched, and the file kept Chromium's name (a GUID).
    vec![tokio::spawn(async move {
        loop {
            tokio::select! {
                biased;
                Some(d) = begin.next() => {
                    let mut ev = lock(&events);
                    let index = ev.downloads.len();
                    ev.guids.insert(d.guid.clone(), index);
                    ev.downloads.push(Download {
                        url: d.url.clone(),
                        file_name: d.suggested_filename.clone(),
                        saved: None,
                        frame: d.frame_id.inner().clone(),
                        state: if rules.is_some() { "in progress" } else { "refused" }.into(),
                    });
                }
                Some(p) = next_or_never(&mut progress) => {
                    if let Some(rules) = &rules {
                        on_progress(&p, rules, &events, &host, context.as_ref()).await;
                    }
                }
                else => break,
            }
        }
    })]
}

/// The next event of a stream there may not be; never, when there is none.
async fn next_or_never<S: futures::Stream + Unpin>(stream: &mut Option<S>) -> Option<S::Item> {
    match stream {
        Some(s) => s.next().await,
        None => std::future::pending().await,
    }
}

/// A download went on: one that passed the cap is stopped and what came
/// removed; one that completed is kept under its safe name.
async fn on_progress(
    p: &EventDownloadProgress,
    rules: &DownloadRules,
    events: &Mutex<Events>,
    host: &std::sync::Weak<crate::browser::SharedBrowser>,
    context: Option<&chromiumoxide::cdp::browser_protocol::browser::BrowserContextId>,
) {
    let (index, download) = {
        let ev = lock(events);
        let Some(&i) = ev.guids.get(&p.guid) else {
            return;
        };
        match ev.downloads.get(i) {
            Some(d) if d.state == "in progress" => (i, d.clone()),
            _ => return,
        }
    };
    let partial = rules.dir.join(&p.guid);
    let state = match p.state {
        DownloadProgressState::InProgress if p.received_bytes > rules.max_bytes as f64 => {
            let cancel = CancelDownloadParams {
                guid: p.guid.clone(),
                browser_context_id: context.cloned(),
            };
            if let Some(host) = host.upgrade() {
                if let Err(e) = host.browser().execute(cancel).await {
                    tracing::debug!("download not cancelled: {e}");
                }
            }
            remove_partial(&partial);
            "too large"
        }
        DownloadProgressState::InProgress => return,
        DownloadProgressState::Completed => "completed",
        DownloadProgressState::Canceled => {
            remove_partial(&partial);
            "canceled"
        }
    };
    let saved = if state == "completed" {
        let (dir, max) = (rules.dir.clone(), rules.max_bytes);
        tokio::task::spawn_blocking(move || keep(&dir, &partial, &download, max))
            .await
            .unwrap_or_else(|e| Err(e.to_string()))
    } else {
        Err(String::new())
    };
    let mut ev = lock(events);
    if let Some(d) = ev.downloads.get_mut(index) {
        d.state = match saved {
            Ok(file) => {
                d.saved = Some(file);
                state.into()
            }
            // One that came whole but larger than the cap is removed as one
            // that passed it on its way.
            Err(why) if why == TOO_LARGE => "too large".into(),
            Err(why) if state == "completed" => format!("failed: {why}"),
            Err(_) => state.into(),
        };
    }
}

/// What [`keep`] says of a whole file over the cap.
const TOO_LARGE: &str = "too large";

/// Gives a completed download its safe, unique name in `dir`, and says
/// what it is.
fn keep(
    dir: &std::path::Path,
    partial: &std::path::Path,
    d: &Download,
    max_bytes: u64,
) -> Result<DownloadedFile, String> {
    let size = std::fs::metadata(partial).map_err(|e| e.to_string())?.len();
    if size > max_bytes {
        remove_partial(partial);
        return Err(TOO_LARGE.into());
    }
    let name = safe_file_name(&d.file_name);
    let path = unique_path(dir, &name);
    std::fs::rename(partial, &path).map_err(|e| e.to_string())?;
    let sha256 = sha256_of(&path).map_err(|e| e.to_string())?;
    Ok(DownloadedFile {
        name: path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or(name),
        mime: mime_of(&path.to_string_lossy()).into(),
        path,
        size,
        sha256,
        url: d.url.clone(),
    })
}

/// Removes what a stopped download left (Chromium may name it `.crdownload`).
fn remove_partial(partial: &std::path::Path) {
    let _ = std::fs::remove_file(partial);
    let _ = std::fs::remove_file(partial.with_extension("crdownload"));
}

/// Counts the timers a page sets a short wait away (≤ 500 ms: a debounce,
/// a deferred render), in the page's own world before its scripts run:
/// `__seamarkTimers(since, until)` says how many of those set between the
/// two (ms since the epoch) are still to fire, or fired less than 100 ms
/// ago: a debounce's callback starts a fetch that the browser tells of a
/// moment later, and until then the page would look quiet. A timer set
/// from a timer's callback is one more link of a chain, and a chain of more
/// than three links is a loop (a clock, a poll), not the command's doing: it
/// is not counted.
const TIMERS_JS: &str = r#"(() => {
  const w = window;
  if (w.__seamarkTimers) return;
  const set = w.setTimeout, clear = w.clearTimeout, due = new Map(), fired = new Map();
  const GRACE = 100;
  const forget = (now) => { for (const [id, f] of fired) if (now - f.at > GRACE) fired.delete(id); };
  let link = 0;
  w.setTimeout = function (fn, ms, ...args) {
    if (typeof fn !== 'function') return set.call(w, fn, ms, ...args);
    const mine = link + 1;
    let id;
    const run = function () {
      const t = due.get(id);
      if (t !== undefined) {
        due.delete(id);
        const now = Date.now();
        if (fired.size > 64) forget(now);
        fired.set(id, { set: t, at: now });
      }
      const outer = link;
      link = mine;
      try { return fn.apply(this, arguments); } finally { link = outer; }
    };
    id = set.call(w, run, ms, ...args);
    if ((+ms || 0) <= 500 && mine <= 3) due.set(id, Date.now());
    return id;
  };
  w.clearTimeout = function (id) { due.delete(id); return clear.call(w, id); };
  Object.defineProperty(w, '__seamarkTimers', { value: (since, until) => {
    forget(Date.now());
    let n = 0;
    for (const t of due.values()) if (t >= since && t <= until) n++;
    for (const f of fired.values()) if (f.set >= since && f.set <= until) n++;
    return n;
  } });
})()"#;

#[cfg(test)]
mod tests {
    use super::*;

    /// Chromium told the end of some of the saved github page's data:
    /// images before their start, and each stayed in flight.
    #[test]
    fn a_request_whose_end_is_told_before_its_start_is_not_in_flight() {
        let mut events = Events::default();
        events.record(Request::Ended("early".into()));
        events.record(Request::Started("early".into(), true));
        assert_eq!(events.recent_inflight(Duration::from_secs(60)), 0);
        // Told in order, a request is in flight until it ends.
        events.record(Request::Started("usual".into(), true));
        assert_eq!(events.recent_inflight(Duration::from_secs(60)), 1);
        events.record(Request::Ended("usual".into()));
        assert_eq!(events.recent_inflight(Duration::from_secs(60)), 0);
        // A stream is never in flight.
        events.record(Request::Started("stream".into(), false));
        assert_eq!(events.recent_inflight(Duration::from_secs(60)), 0);
    }
}
