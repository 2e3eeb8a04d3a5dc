//! A run's browser, watched live and lent to a person's hands.
//!
//! [`Live`] sits between a run and the people looking at it. The run tells
//! it, step by step, which page it drives, where, and what it is doing; the
//! frames of that page are streamed from Chromium's screencast while
//! anyone looks (`frames.rs`), with the fields holding a secret painted
//! over as in the screenshots. A person may take the browser over: the run
//! stops at its next step boundary and waits while their pointer and keys
//! go to the page as real input events (`input.rs`), until they hand it
//! back; the run then goes on from a fresh look, told what they did (never
//! what they typed). The agent may ask for hands itself (`HANDS:reason`)
//! and waits for a person as long as it is given. `server.rs` is the page
//! and the routes a viewer uses.

mod frames;
mod input;
mod server;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use serde::Serialize;
use tokio::sync::watch;

use crate::browser::{Screencast, Session, Viewport};
use crate::perceive::{Point, Rect};
use crate::records::{HandsEnd, HandsRecord};

pub use frames::LiveFrame;
pub use input::{Button, KeyAction, MouseAction, PersonInput};
pub use server::{LiveServer, LiveServerError};

/// The variable a run's live view takes its token from (else: none on
/// loopback, a new one off it).
pub const TOKEN_ENV: &str = "SEAMARK_LIVE_TOKEN";

/// The variable naming the file a run writes its live view's address to,
/// once it listens (`seamark serve`'s worker reads it there).
pub const ANNOUNCE_ENV: &str = "SEAMARK_LIVE_ANNOUNCE";

/// How long a person may leave the browser untouched, or the agent wait
/// for one, by default.
pub const HANDS_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// Who drives the browser.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Control {
    /// The agent.
    #[default]
    Agent,
    /// A person asked for it: the agent stops at its next step boundary.
    Wanted,
    /// A person.
    Person,
}

/// What a viewer is shown beside the frames.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LiveState {
    /// Bumped on every change: a viewer asks for the state after the one
    /// it has.
    pub version: u64,
    /// Who drives.
    pub control: Control,
    /// Why the agent asks for a person's hands, while it does.
    pub asked: Option<String>,
    /// The page's URL.
    pub url: String,
    /// Its title, as of the last step.
    pub title: String,
    /// The step under way (0 before the first).
    pub step: usize,
    /// What the agent is doing.
    pub doing: String,
    /// Whether the run has ended.
    pub ended: bool,
    /// How many times a person has had the browser: a follower that missed
    /// one (taken and handed back between two looks) still sees it.
    pub lent: u64,
}

/// Why a person's request was not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LiveError {
    /// Input while the agent drives.
    #[error("the agent has the browser: take it over first")]
    NotYours,
    /// Input before the page could be reached.
    #[error("the page cannot be reached yet: {0}")]
    NoPage(String),
    /// The run is over.
    #[error("the run has ended")]
    Ended,
}

/// The page the frames come from: the browser's endpoint and the target.
#[derive(Debug, Clone, PartialEq)]
struct Target {
    browser_ws: String,
    target: String,
    viewport: Viewport,
}

/// The boxes no frame shows (CSS pixels, as the last look saw them) and
/// the scroll they were seen at.
#[derive(Debug, Clone, Default)]
struct Hidden {
    rects: Vec<Rect>,
    scroll: Point,
}

/// What a person did with the browser so far.
#[derive(Debug, Default)]
struct HandLog {
    pages: Vec<String>,
    typed_into: Vec<String>,
    clicks: usize,
    keys: usize,
    note: Option<String>,
    last_input: Option<Instant>,
}

impl HandLog {
    fn page(&mut self, url: &str) {
        if !url.is_empty() && self.pages.last().map(String::as_str) != Some(url) {
            self.pages.push(url.to_string());
        }
    }
}

struct Inner {
    state: watch::Sender<LiveState>,
    target: watch::Sender<Option<Target>>,
    frames: watch::Sender<Option<Arc<LiveFrame>>>,
    hidden: Mutex<Hidden>,
    cast: Mutex<Option<Arc<Screencast>>>,
    log: Mutex<HandLog>,
    /// Frame requests under way, and when the last one came: the
    /// screencast runs while anyone looks.
    watching: AtomicUsize,
    last_view_ms: AtomicU64,
    born: Instant,
    hands_timeout: Duration,
    pump: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(pump) = lock(&self.pump).take() {
            pump.abort();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A run's live view and the hands lent to it (cloned, it is the same).
#[derive(Clone)]
pub struct Live {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live").finish_non_exhaustive()
    }
}

impl Live {
    /// A live view whose person may leave the browser untouched, and whose
    /// agent waits for hands, `hands_timeout` at most. Starts the task that
    /// streams frames while anyone looks (within a Tokio runtime).
    pub fn new(hands_timeout: Duration) -> Live {
        let inner = Arc::new(Inner {
            // Version 1: a viewer that has none (0) gets the state at once.
            state: watch::channel(LiveState {
                version: 1,
                ..LiveState::default()
            })
            .0,
            target: watch::channel(None).0,
            frames: watch::channel(None).0,
            hidden: Mutex::default(),
            cast: Mutex::default(),
            log: Mutex::default(),
            watching: AtomicUsize::new(0),
            last_view_ms: AtomicU64::new(0),
            born: Instant::now(),
            hands_timeout,
            pump: Mutex::default(),
        });
        let pump = tokio::spawn(frames::pump(Arc::downgrade(&inner)));
        *lock(&inner.pump) = Some(pump);
        Live { inner }
    }

    fn change(&self, f: impl FnOnce(&mut LiveState)) {
        self.inner.state.send_modify(|s| {
            f(s);
            s.version += 1;
        });
    }

    /// The state as it is now.
    pub fn state(&self) -> LiveState {
        self.inner.state.borrow().clone()
    }

    // The run's side.

    /// The page the run drives and how it looked at step `step`: where it
    /// is, and the boxes (CSS pixels, at scroll `scroll`) no frame may show.
    pub fn show(&self, session: &Session, step: usize, url: &str, title: &str, hide: Hide) {
        self.watch(session);
        *lock(&self.inner.hidden) = Hidden {
            rects: hide.rects,
            scroll: hide.scroll,
        };
        self.change(|s| {
            s.step = step;
            s.url = url.to_string();
            s.title = title.to_string();
        });
    }

    /// The page the run drives, from its start: viewers see it load.
    pub fn watch(&self, session: &Session) {
        let target = Target {
            browser_ws: session.browser().websocket_address().to_string(),
            target: session.page().target_id().inner().clone(),
            viewport: session.viewport(),
        };
        self.inner.target.send_if_modified(|t| {
            let new = t.as_ref() != Some(&target);
            if new {
                *t = Some(target);
            }
            new
        });
    }

    /// What the agent is doing now.
    pub fn doing(&self, what: impl Into<String>) {
        let what = what.into();
        self.change(|s| s.doing = what);
    }

    /// The run is over: viewers are told, and input is refused.
    pub fn ended(&self) {
        self.change(|s| {
            s.ended = true;
            s.control = Control::Agent;
            s.asked = None;
            s.doing = "the run has ended".into();
        });
    }

    /// Whether a person asked for the browser (the agent stops at its next
    /// step boundary).
    pub fn wanted(&self) -> bool {
        self.inner.state.borrow().control == Control::Wanted
    }

    /// Lends the browser to a person after step `step`: when `asked`, the
    /// agent asks for hands and waits for someone to take it, at most the
    /// hands timeout; then (or at once, when a person asked for it) the
    /// person has it until they hand it back, or leave it untouched for the
    /// hands timeout. What they did is the record.
    pub async fn lend_hands(&self, step: usize, asked: Option<&str>) -> HandsRecord {
        let started = crate::clock::now();
        let t = Instant::now();
        let mut state = self.inner.state.subscribe();
        if let Some(reason) = asked {
            let reason = reason.to_string();
            self.change(|s| {
                s.asked = Some(reason);
                s.doing = "waiting for a person's hands".into();
            });
            let came = tokio::time::timeout(
                self.inner.hands_timeout,
                state.wait_for(|s| s.control != Control::Agent),
            )
            .await;
            if !matches!(came, Ok(Ok(_))) {
                self.change(|s| s.asked = None);
                return self.record(step, asked, started, t, HandsEnd::NobodyCame);
            }
        }
        *lock(&self.inner.log) = HandLog {
            last_input: Some(Instant::now()),
            ..HandLog::default()
        };
        let url = self.state().url;
        lock(&self.inner.log).page(&url);
        self.change(|s| {
            s.control = Control::Person;
            s.lent += 1;
            s.doing = "a person has the browser".into();
        });
        let ended = self.until_handed_back(&mut state).await;
        self.change(|s| {
            s.control = Control::Agent;
            s.asked = None;
            s.doing = "the agent looks at the page again".into();
        });
        self.record(step, asked, started, t, ended)
    }

    /// Waits until the person hands the browser back, or leaves it
    /// untouched for the hands timeout.
    async fn until_handed_back(&self, state: &mut watch::Receiver<LiveState>) -> HandsEnd {
        loop {
            let idle = lock(&self.inner.log)
                .last_input
                .map_or(Duration::ZERO, |t| t.elapsed());
            let left = self.inner.hands_timeout.saturating_sub(idle);
            if left.is_zero() {
                return HandsEnd::TimedOut;
            }
            match tokio::time::timeout(left, state.wait_for(|s| s.control == Control::Agent)).await
            {
                Ok(Ok(_)) => return HandsEnd::HandedBack,
                // The sender lives as long as this does.
                Ok(Err(_)) => return HandsEnd::HandedBack,
                Err(_) => continue,
            }
        }
    }

    fn record(
        &self,
        step: usize,
        asked: Option<&str>,
        started: SystemTime,
        t: Instant,
        ended: HandsEnd,
    ) -> HandsRecord {
        let log = std::mem::take(&mut *lock(&self.inner.log));
        HandsRecord {
            kind: "hands",
            step,
            asked: asked.map(str::to_string),
            started: crate::clock::utc_rfc3339(started),
            seconds: (t.elapsed().as_secs_f64() * 10.0).round() / 10.0,
            pages: log.pages,
            typed_into: log.typed_into,
            clicks: log.clicks,
            keys: log.keys,
            note: log.note,
            ended,
        }
    }

    // A person's side.

    /// A person asks for the browser: the agent stops at its next step
    /// boundary (or, waiting for hands, at once).
    pub fn take_over(&self) -> Result<LiveState, LiveError> {
        if self.inner.state.borrow().ended {
            return Err(LiveError::Ended);
        }
        self.change(|s| {
            if s.control == Control::Agent {
                s.control = Control::Wanted;
                s.doing = "a person asked for the browser: the agent stops after this step".into();
            }
        });
        Ok(self.state())
    }

    /// The person hands the browser back, with a note for the agent.
    pub fn hand_back(&self, note: Option<String>) -> LiveState {
        lock(&self.inner.log).note = note
            .map(|n| n.trim().chars().take(2000).collect::<String>())
            .filter(|n| !n.is_empty());
        self.change(|s| {
            if s.control != Control::Agent {
                s.control = Control::Agent;
            }
        });
        self.state()
    }

    /// A person's pointer, key or text, into the page while they have it.
    pub async fn input(&self, input: PersonInput) -> Result<(), LiveError> {
        if self.inner.state.borrow().control != Control::Person {
            return Err(LiveError::NotYours);
        }
        let cast = lock(&self.inner.cast).clone();
        let Some(cast) = cast else {
            return Err(LiveError::NoPage("no view of it is open".into()));
        };
        let frame = self.inner.frames.borrow().clone();
        let size = match &frame {
            Some(f) => (f.css_width, f.css_height),
            None => match self.inner.target.borrow().as_ref() {
                Some(t) => (f64::from(t.viewport.width), f64::from(t.viewport.height)),
                None => return Err(LiveError::NoPage("no page yet".into())),
            },
        };
        let done = input::dispatch(&cast, &input, size)
            .await
            .map_err(|e| LiveError::NoPage(e.to_string()))?;
        let field = if done.typed {
            input::focused_field(&cast).await
        } else {
            None
        };
        let url = cast.url();
        let mut log = lock(&self.inner.log);
        log.last_input = Some(Instant::now());
        log.clicks += done.clicks;
        log.keys += done.keys;
        log.page(&url);
        if let Some(field) = field.filter(|f| !log.typed_into.contains(f)) {
            log.typed_into.push(field);
        }
        drop(log);
        if !url.is_empty() && url != self.state().url {
            self.change(|s| s.url = url);
        }
        Ok(())
    }

    /// The first frame numbered after `after`, waiting for it up to `wait`;
    /// the viewer counts as looking meanwhile.
    pub async fn frame_after(&self, after: u64, wait: Duration) -> Option<Arc<LiveFrame>> {
        let inner = &self.inner;
        inner.watching.fetch_add(1, Ordering::SeqCst);
        self.viewed();
        let mut frames = inner.frames.subscribe();
        let got = tokio::time::timeout(
            wait,
            frames.wait_for(|f| f.as_ref().is_some_and(|f| f.seq > after)),
        )
        .await;
        let frame = match got {
            Ok(Ok(f)) => f.clone(),
            _ => None,
        };
        inner.watching.fetch_sub(1, Ordering::SeqCst);
        self.viewed();
        frame
    }

    /// The state after version `after`, waiting for a change up to `wait`.
    pub async fn state_after(&self, after: u64, wait: Duration) -> LiveState {
        let mut state = self.inner.state.subscribe();
        let _ = tokio::time::timeout(wait, state.wait_for(|s| s.version > after)).await;
        self.state()
    }

    fn viewed(&self) {
        let ms = self.inner.born.elapsed().as_millis() as u64;
        self.inner.last_view_ms.store(ms, Ordering::SeqCst);
    }
}

/// The boxes the frames hide, and the scroll they were seen at.
#[derive(Debug, Clone, Default)]
pub struct Hide {
    /// The boxes, CSS pixels of the viewport.
    pub rects: Vec<Rect>,
    /// The document's scroll when they were seen.
    pub scroll: Point,
}
