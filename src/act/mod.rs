//! The executor: turns the model's commands into real input on the live page,
//! through the element table of the last observation.
//!
//! A batch is planned for one page state. After every command the executor
//! waits for the page to settle and looks again; when the page signature moved
//! (a dropdown opened, a new page loaded) the rest of the batch is dropped and
//! reported, so no command runs on a page it was not planned for. Every command
//! ends in an [`Outcome`](crate::records::Outcome) the model can act on: done (with what changed), no
//! visible effect, or failed (with why).

mod actions;
mod carry;
mod checkpoint;
mod effects;
mod execute;
mod guard;
mod input;
mod locate;
mod points;
mod read_command;
mod sequence;
mod settle;
mod stuck;
mod tabs;
mod urls;
mod watch;
mod zoom;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use crate::browser::Session;
use crate::commands::Step;
use crate::perceive::{self, Element, Observation, PerceiveError, PerceiveOptions};
use crate::records::{Download, Outcome};
use crate::safety::{Blocked, ConfirmGuard, DomainPolicy, Secrets};

pub use actions::match_option;
pub use checkpoint::same_name as same_checkpoint_name;
pub use points::{element_at, to_css, to_image, OutsideImage};
pub use sequence::MAX_COMMANDS;
pub use tabs::{tabs_note, TabError, TabInfo};
pub use urls::{fetch_target, host_of, FetchUrlError, DEFAULT_FETCH_SCHEMES};
pub use watch::DialogPolicy;
pub use zoom::magnification_words;

/// Why the element a command names cannot be acted on (the model is told it).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum ElementError {
    /// The page changed since the ids were given: why.
    #[error("element ids refer to an earlier view of the page ({0}); look at the new page and use its ids")]
    Stale(String),
    /// No look at the page yet.
    #[error("nothing was observed yet")]
    NothingObserved,
    /// An id the table does not have (of `count` ids).
    #[error(
        "there is no element {id}: {}",
        if *count == 0 {
            "the page shows no interactive elements".to_string()
        } else {
            format!("this page's ids run from 1 to {count}")
        }
    )]
    NoElement {
        /// The id.
        id: u32,
        /// How many the table has.
        count: usize,
    },
    /// The name the command echoed is not the element's: its role and name.
    #[error("element {id} is {} \"{}\", not \"{echo}\"; nothing was done", is.0, is.1)]
    NotEchoed {
        /// The id.
        id: u32,
        /// Its role and name.
        is: (String, String),
        /// The name the command gave.
        echo: String,
    },
    /// The page crashed or the browser went: which.
    #[error("{0}")]
    PageGone(&'static str),
    /// The page did not say in time which node the element is.
    #[error("the page did not tell which node element {0} is")]
    Untold(u32),
    /// Its node left the page.
    #[error(
        "element {0} is gone from the page since it was seen; look at the page again and use its new ids"
    )]
    Gone(u32),
}

/// The download size cap unless told otherwise, in MB.
pub const DEFAULT_MAX_DOWNLOAD_MB: u64 = 100;

/// How the executor behaves.
#[derive(Debug, Clone)]
pub struct ActOptions {
    /// Longest wait for the page to settle after a command.
    pub settle_timeout: Duration,
    /// How long the DOM and the network must stay still to count as settled.
    pub quiet: Duration,
    /// Longest wait for a `FETCH` or `BACK` navigation to load.
    pub navigation_timeout: Duration,
    /// How confirm and prompt dialogs are answered.
    pub dialogs: DialogPolicy,
    /// What an accepted prompt dialog is given.
    pub prompt_text: String,
    /// Where downloads are saved; `None` refuses them (they are still
    /// recorded). A run saves them in its directory's `downloads/` unless
    /// told otherwise.
    pub download_dir: Option<PathBuf>,
    /// Largest download kept, in bytes: one that passes it is stopped and
    /// what came of it removed.
    pub max_download_bytes: u64,
    /// The only folder UPLOAD takes files from (`--files`); `None` refuses
    /// every UPLOAD.
    pub files: Option<crate::files::UploadFolder>,
    /// URL schemes `FETCH` may open.
    pub fetch_schemes: Vec<String>,
    /// How perception runs after each command.
    pub perceive: PerceiveOptions,
    /// Look at a document the page had not shown before while the page
    /// settles after a command, so that the look after the command finds it
    /// warm (see `perceive::prime`). Off, that look does all the work.
    pub prime: bool,
    /// Hosts FETCH and new tabs may reach (the domain guard enforces it for
    /// every request when the browser was launched with it).
    pub domains: DomainPolicy,
    /// Values TYPE puts in for `{{secret:NAME}}`.
    pub secrets: Secrets,
    /// Which clicks and keys wait for a person's yes.
    pub confirm: ConfirmGuard,
    /// The domain guard's record of refused requests, to report them.
    pub blocked: Option<Arc<Mutex<Vec<Blocked>>>>,
    /// Most characters one `READ` gives (the next part with `READ:more`).
    pub read_chars: usize,
    /// The JSON Schema an `ANSWER` must follow, if the person gave one.
    pub answer_schema: Option<Arc<crate::schema::AnswerSchema>>,
}

impl Default for ActOptions {
    fn default() -> Self {
        Self {
            settle_timeout: Duration::from_secs(5),
            quiet: Duration::from_millis(200),
            navigation_timeout: Duration::from_secs(20),
            dialogs: DialogPolicy::default(),
            prompt_text: String::new(),
            download_dir: None,
            max_download_bytes: DEFAULT_MAX_DOWNLOAD_MB * 1_000_000,
            files: None,
            fetch_schemes: DEFAULT_FETCH_SCHEMES
                .iter()
                .map(|s| s.to_string())
                .collect(),
            perceive: PerceiveOptions::default(),
            prime: true,
            domains: DomainPolicy::default(),
            secrets: Secrets::default(),
            confirm: ConfirmGuard::default(),
            blocked: None,
            read_chars: crate::read::DEFAULT_READ_CHARS,
            answer_schema: None,
        }
    }
}

/// Shortest time between the look a batch was planned on and the look right
/// before it acts, when the page's watcher cannot say whether anything
/// changed in between: long enough for a ticking line to tick.
pub const AMBIENT_GAP: Duration = Duration::from_millis(300);

/// How long after its load a page showing no control is waited for.
const FIRST_CONTENT: Duration = Duration::from_secs(3);

/// Errors that stop the executor itself (not a command: those are outcomes).
#[derive(Debug, thiserror::Error)]
pub enum ActError {
    /// The page could not be perceived.
    #[error(transparent)]
    Perceive(#[from] PerceiveError),
}

/// The executor: the last observation, the page watchers, and the options.
pub struct Executor {
    options: ActOptions,
    watch: watch::Watch,
    /// What the model's ids refer to.
    seen: Option<Observation>,
    /// The latest look at the page (after the last command), for diffs.
    last: Option<Observation>,
    /// Why the ids of `seen` no longer hold, once the page moved on.
    stale: Option<String>,
    /// When `seen` was taken, and the page's mutation count then.
    seen_at: Instant,
    seen_mutations: Option<i64>,
    /// Whether a command ran since `seen` was taken.
    acted: bool,
    /// The lines of this page that change on their own.
    ambient: perceive::Ambient,
    /// Tabs left behind when an action opened a new one, newest last.
    previous_pages: Vec<chromiumoxide::Page>,
    /// The session's tabs (their target ids) in the order they opened: a
    /// tab's number in the list.
    tab_order: Vec<String>,
    /// What the guard keeps between commands (see [`guard::GuardBook`]).
    book: guard::GuardBook,
    /// The last reading, to go on with at `READ:more`.
    reader: Option<crate::read::Reader>,
    /// Whether an answer that follows the schema was given.
    data_given: bool,
    /// The plan's phases kept with `CHECKPOINT`, oldest first.
    checkpoints: Vec<checkpoint::Checkpoint>,
    /// Whether commands settle briskly (see [`Executor::set_brisk`]).
    brisk: bool,
}

impl Executor {
    /// Starts watching the session's page (dialogs, requests, crashes, downloads).
    pub async fn new(session: &Session, options: ActOptions) -> Executor {
        let watch = watch::Watch::start(
            session,
            options.dialogs,
            &options.prompt_text,
            options
                .download_dir
                .clone()
                .map(|dir| watch::DownloadRules {
                    dir,
                    max_bytes: options.max_download_bytes,
                }),
        )
        .await;
        let book = guard::GuardBook::new(options.blocked.clone().unwrap_or_default());
        Executor {
            options,
            watch,
            seen: None,
            last: None,
            stale: None,
            seen_at: Instant::now(),
            seen_mutations: None,
            acted: false,
            ambient: perceive::Ambient::default(),
            previous_pages: Vec::new(),
            tab_order: vec![session.page().target_id().inner().clone()],
            book,
            reader: None,
            data_given: false,
            checkpoints: Vec::new(),
            brisk: false,
        }
    }

    /// Settle briskly after each command from now on: the page must still
    /// be loaded, off the network and past the timers the command set, but
    /// the quiet window is a sixteenth as long and does not grow (see
    /// `settle::Quiet::brisk`). For commands whose next
    /// targets are known beforehand (a skill's), whose next look checks
    /// them: when that look does not find them, [`Executor::settle_fully`]
    /// gives the page the usual wait before anyone concludes the page
    /// changed.
    pub fn set_brisk(&mut self, brisk: bool) {
        self.brisk = brisk;
    }

    /// Waits for the page to be quiet for the usual window at its longest
    /// ([`ActOptions::quiet`]), however the last command settled.
    pub async fn settle_fully(&self, session: &Session) {
        let quiet = settle::Quiet::longest(self.options.quiet);
        let bound = self.options.settle_timeout;
        self.settle_with(session, quiet, bound, SystemTime::now(), false)
            .await;
    }

    /// The secrets to type and keep out of text from now on (a person's
    /// answer can add one).
    pub fn set_secrets(&mut self, secrets: crate::safety::Secrets) {
        self.options.secrets = secrets;
    }

    /// Perceives the page; the model's ids refer to this observation from now on.
    pub async fn observe(&mut self, session: &Session) -> Result<&Observation, ActError> {
        let page = session.page().clone();
        let (obs, stopped) = stuck::watched(&page, self.observe_unwatched(session)).await;
        let obs = obs?;
        obs.notes.extend(stopped);
        Ok(obs)
    }

    /// [`Executor::observe`], without the watch for a page held by a script.
    async fn observe_unwatched(&mut self, session: &Session) -> Result<&mut Observation, ActError> {
        let mut obs = perceive::perceive(session, &self.options.perceive).await?;
        // A page that has just loaded may not have drawn its controls yet:
        // wait for its first content, as after a command, for a while.
        // So may frames still loading (nested frames that each load an app).
        while (obs.table.is_empty() || frames_loading(session).await)
            && document_age(session)
                .await
                .is_some_and(|a| a < FIRST_CONTENT)
        {
            tokio::time::sleep(Duration::from_millis(100)).await;
            self.settle(session, FIRST_CONTENT).await;
            obs = perceive::perceive(session, &self.options.perceive).await?;
        }
        // Nothing was done since the last look (the one after the last
        // command, or the last observation when no command ran since): what
        // changed, changed on its own.
        let before = match (&self.last, self.acted) {
            (Some(last), _) => Some(last),
            (None, false) => self.seen.as_ref(),
            (None, true) => None,
        };
        if let Some(before) = before {
            self.ambient.learn(before, &obs);
        }
        self.acted = false;
        self.stale = None;
        self.last = None;
        self.seen_at = Instant::now();
        self.seen_mutations = perceive::mutation_count(session.page()).await;
        Ok(self.seen.insert(obs))
    }

    /// Looks at the page once more right before a batch acts on it, unless
    /// lines of this page are known to tick already (two looks that saw no
    /// tick prove nothing: they may have fallen between two): what changed in between
    /// changed on its own (the model only thought), and is told apart from
    /// what the commands change. When nothing changed since the look (its
    /// watcher saw no mutation), there is nothing to tell apart and the
    /// batch acts at once; when something did, the look is taken at once;
    /// when the page cannot say, at least [`AMBIENT_GAP`] after the look
    /// the batch was planned on.
    async fn look_before_acting(&mut self, session: &Session) {
        let Some(seen) = self.seen.as_ref() else {
            return;
        };
        if self.last.is_some() || self.stale.is_some() || self.ambient.ticks(&seen.url) {
            return;
        }
        // A crashed page answers nothing, and the browser may tell of the
        // crash only later: a question it leaves unanswered would wait out the
        // protocol's request timeout (a minute) before the command is told.
        // The count takes a millisecond on a live page.
        let asked = tokio::select! {
            r = tokio::time::timeout(LIVE_ANSWER, perceive::mutation_count(session.page())) => r.ok(),
            _ = gone(&self.watch.events) => None,
        };
        let Some(now) = asked else {
            return;
        };
        if now.is_some() && now == self.seen_mutations {
            return;
        }
        if now.is_none() {
            if let Some(rest) = AMBIENT_GAP.checked_sub(self.seen_at.elapsed()) {
                tokio::time::sleep(rest).await;
            }
        }
        // A page that crashed answers no look: the crash, told a moment
        // later, ends the wait (it once waited out the protocol's timeout).
        let glanced = tokio::select! {
            r = perceive::glance(session.page(), session.viewport(), &self.options.perceive) => r.ok(),
            _ = gone(&self.watch.events) => None,
        };
        if let Some(now) = glanced {
            self.ambient.learn(seen, &now);
            self.last = Some(now);
        }
    }

    /// The observation the ids refer to.
    pub fn observation(&self) -> Option<&Observation> {
        self.seen.as_ref()
    }

    /// The downloads after the first `n` that the session's own tabs started
    /// (in a shared browser, other runs' downloads are heard too).
    async fn downloads_since(&self, session: &Session, n: usize) -> Vec<Download> {
        let heard = watch::lock(&self.watch.events)
            .downloads
            .get(n..)
            .unwrap_or_default()
            .to_vec();
        let mut mine = Vec::new();
        for d in heard {
            if session.owns_frame(&d.frame).await {
                mine.push(d);
            }
        }
        mine
    }

    /// The downloads after the first `n`, once each has ended (saved,
    /// refused, stopped), or the load time has passed: the model is told
    /// of a file that is there.
    async fn finished_downloads(&self, session: &Session, n: usize) -> Vec<Download> {
        let until = Instant::now() + self.options.navigation_timeout;
        loop {
            let mine = self.downloads_since(session, n).await;
            if Instant::now() >= until || mine.iter().all(|d| d.state != "in progress") {
                return mine;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The element a command names, checked: the table is current, the id is
    /// in it, and the echoed name (if any) matches; with its node identity,
    /// asked for now if the look left it unknown.
    async fn element(
        &mut self,
        page: &chromiumoxide::Page,
        id: u32,
        step: &Step,
    ) -> Result<Element, ElementError> {
        let e = self.listed(id, step)?;
        if e.backend_node_id != 0 {
            return Ok(e);
        }
        // A crashed page would never answer.
        if let Some(why) = watch::lock(&self.watch.events).gone() {
            return Err(ElementError::PageGone(why));
        }
        let Some(seen) = self.seen.as_mut() else {
            return Ok(e);
        };
        let i = seen.table.elements.iter().position(|x| x.id == id);
        if let Some(i) = i {
            let one = &mut seen.table.elements[i..=i];
            match tokio::time::timeout(LIVE_ANSWER, perceive::identify(page, one)).await {
                Ok(Ok(())) => {}
                Ok(Err(why)) => tracing::debug!("element {id} not identified: {why}"),
                Err(_) => return Err(ElementError::Untold(id)),
            }
            if one[0].backend_node_id != 0 {
                return Ok(one[0].clone());
            }
        }
        Err(ElementError::Gone(id))
    }

    /// The element a command names, as listed in the table: the table is
    /// current, the id is in it, and the echoed name (if any) matches.
    fn listed(&self, id: u32, step: &Step) -> Result<Element, ElementError> {
        if let Some(why) = &self.stale {
            return Err(ElementError::Stale(why.clone()));
        }
        let table = &self
            .seen
            .as_ref()
            .ok_or(ElementError::NothingObserved)?
            .table;
        let Some(e) = table.get(id) else {
            return Err(ElementError::NoElement {
                id,
                count: table.len(),
            });
        };
        if let Some(echo) = &step.echo {
            if !names_match(echo, &e.name) {
                return Err(ElementError::NotEchoed {
                    id,
                    is: (e.role.clone(), e.name.clone()),
                    echo: echo.clone(),
                });
            }
        }
        Ok(e.clone())
    }

    /// Waits for the session's page to be quiet, at most `bound`.
    async fn settle(&self, session: &Session, bound: Duration) -> settle::Settled {
        self.settle_with(session, self.quiet(), bound, SystemTime::now(), true)
            .await
    }

    /// The quiet window a command settles on now: brisk or the usual one.
    fn quiet(&self) -> settle::Quiet {
        if self.brisk {
            settle::Quiet::brisk(self.options.quiet)
        } else {
            settle::Quiet::usual(self.options.quiet)
        }
    }

    /// Waits for the session's page to be quiet for `quiet` after a command
    /// that began at `since`, at most `bound`; with `prime` (and priming on),
    /// a new document is primed meanwhile.
    async fn settle_with(
        &self,
        session: &Session,
        quiet: settle::Quiet,
        bound: Duration,
        since: SystemTime,
        prime: bool,
    ) -> settle::Settled {
        let prime =
            (prime && self.options.prime).then(|| (session.viewport(), &self.options.perceive));
        settle::settle(
            session.page(),
            &self.watch.events,
            quiet,
            bound,
            since,
            prime,
        )
        .await
    }

    /// Watches the page the session shows now (after a switch of tabs).
    async fn watch_shown_page(&mut self, session: &Session) {
        self.watch
            .follow(
                session.page(),
                self.options.dialogs,
                &self.options.prompt_text,
            )
            .await;
    }

    /// Follows a tab the action opened; the old one is kept to come back to.
    async fn follow_tabs(&mut self, session: &mut Session, before: &[String]) -> Option<String> {
        let pages = session.tabs().await.ok()?;
        let mine = session.page().target_id().clone();
        let fresh = pages.into_iter().find(|p| {
            !before.contains(p.target_id().inner())
                && p.opener_id().as_ref().is_none_or(|o| *o == mine)
        })?;
        let fresh_url = actions::page_url(&fresh).await;
        if let Some(why) = self.options.domains.url_refusal(&fresh_url) {
            let _ = tokio::time::timeout(Duration::from_secs(2), fresh.close()).await;
            return Some(format!("a new tab to {fresh_url} was closed: {why}"));
        }
        let old = session.page().clone();
        session.switch_to(fresh).await.ok()?;
        self.previous_pages.push(old);
        self.watch_shown_page(session).await;
        self.settle(session, self.options.navigation_timeout).await;
        let url = actions::page_url(session.page()).await;
        Some(format!("a new tab opened at {url}; working in it now"))
    }

    /// A crashed page is replaced by a blank tab; a tab that closed itself gives
    /// way to the one it came from. Says what happened, or `None` if the page is fine.
    async fn recover_lost_page(&mut self, session: &mut Session) -> Option<String> {
        let crashed = watch::lock(&self.watch.events).crashed;
        let closed = !crashed && {
            let mine = session.page().target_id().clone();
            match session.tabs().await {
                Ok(pages) => !pages.iter().any(|p| *p.target_id() == mine),
                Err(_) => false,
            }
        };
        if !crashed && !closed {
            return None;
        }
        let mut message = if crashed {
            "the page crashed".to_string()
        } else {
            "the tab closed".to_string()
        };
        let back = if closed {
            self.previous_pages.pop()
        } else {
            None
        };
        let restored = match back {
            Some(page) => session.switch_to(page).await.is_ok(),
            None => false,
        };
        if restored {
            message.push_str("; back in the previous tab");
        } else if session.replace_page().await.is_ok() {
            message.push_str("; a blank tab replaced it: FETCH a page to go on");
        } else {
            message.push_str("; no page could be opened again");
        }
        self.watch_shown_page(session).await;
        self.last = None;
        Some(message)
    }
}

/// Longest a live page takes to answer a small question (a count, a node's
/// identity), with room for a loaded machine: a millisecond is usual.
const LIVE_ANSWER: Duration = Duration::from_secs(10);

/// Resolves once the page is gone (its renderer crashed, or the browser
/// was lost), with why.
async fn gone(events: &std::sync::Mutex<watch::Events>) -> &'static str {
    loop {
        if let Some(why) = watch::lock(events).gone() {
            return why;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// How long ago the page's document started loading, if it says.
async fn document_age(session: &Session) -> Option<Duration> {
    let mut params =
        chromiumoxide::cdp::js_protocol::runtime::EvaluateParams::new("performance.now()");
    params.return_by_value = Some(true);
    let reply = session.page().execute(params).await.ok()?;
    let ms = reply.result.result.value.as_ref()?.as_f64()?;
    Some(Duration::from_secs_f64(ms.max(0.0) / 1e3))
}

/// Whether a frame of the page (of its origin: others cannot be asked from
/// here) is still loading: its document not complete, or a frame given a
/// source still showing the blank page it starts with.
async fn frames_loading(session: &Session) -> bool {
    const LOADING_JS: &str = "(() => { const busy = (w, depth) => { try { \
        const d = w.document; if (d.readyState !== 'complete') return true; if (depth > 16) return false; \
        for (const f of d.querySelectorAll('iframe, frame')) { \
          const src = f.getAttribute('src'); \
          try { \
            if (src && src !== 'about:blank' && f.contentWindow.location.href === 'about:blank') return true; \
            if (busy(f.contentWindow, depth + 1)) return true; \
          } catch (e) { /* another origin */ } } \
      } catch (e) {} return false; }; return busy(window, 0); })()";
    let mut params = chromiumoxide::cdp::js_protocol::runtime::EvaluateParams::new(LOADING_JS);
    params.return_by_value = Some(true);
    let Ok(reply) = tokio::time::timeout(LIVE_ANSWER, session.page().execute(params)).await else {
        return false;
    };
    reply
        .ok()
        .and_then(|r| r.result.result.value.as_ref().and_then(|v| v.as_bool()))
        .unwrap_or(false)
}

/// Target ids of the browser's tabs.
async fn tab_ids(session: &Session) -> Vec<String> {
    match session.tabs().await {
        Ok(pages) => pages
            .iter()
            .map(|p| p.target_id().inner().clone())
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// Why the rest of a batch is not run after a page command: it failed, or
/// the page changed under the ids the batch was planned with.
fn stop_after(outcome: &Outcome) -> Option<String> {
    if outcome.status.is_failure() {
        Some(failed_stop(outcome))
    } else if outcome.page_changed {
        Some(format!(
            "the page changed after {}; look at the new page before going on",
            outcome.command
        ))
    } else {
        None
    }
}

/// Why the rest of a batch is dropped after a failed command.
fn failed_stop(outcome: &Outcome) -> String {
    format!(
        "{} failed; the rest of the plan may not fit any more",
        outcome.command
    )
}

/// Whether the name the model echoed is the element's: the same words,
/// ignoring case, spacing and quotes; a model may shorten a long name, so a
/// prefix of at least four characters also matches.
pub fn names_match(echo: &str, name: &str) -> bool {
    let norm = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .trim_matches(|c: char| c == '"' || c == '\'' || c == '…' || c == '.')
            .to_lowercase()
    };
    let (e, n) = (norm(echo), norm(name));
    e == n || (e.chars().count() >= 4 && n.starts_with(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echoed_names_match_loosely_but_not_wrongly() {
        assert!(names_match("Submit", "submit"));
        assert!(names_match("  Buy   now ", "Buy now"));
        assert!(names_match("Search flights…", "Search flights and hotels"));
        assert!(!names_match("Submit", "Cancel"));
        assert!(!names_match("Go", "Google"));
    }
}
