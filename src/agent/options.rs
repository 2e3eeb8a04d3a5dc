//! What a run is given: its limits and knobs, who hears of its progress, a
//! last look at its page and a signal that ends it.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::time::Duration;

use crate::act::ActOptions;
use crate::brain::Prices;
use crate::browser::{BrowserOptions, Session};
use crate::perceive;
use crate::site::{ClockStart, SiteUse};

use super::StepRecord;

/// Limits and knobs of a run.
#[derive(Debug, Clone)]
pub struct AgentOptions {
    /// Most steps (one model call each).
    pub max_steps: usize,
    /// Most steps in a row whose answer could not be read or whose commands failed.
    pub max_failures: usize,
    /// Stop once the run has cost this much (USD), when the model's price is known.
    pub max_cost: Option<f64>,
    /// Stop once the run has taken this long.
    pub max_time: Option<Duration>,
    /// Screenshots a step may send: the current one, and the ones before it
    /// when the last step's changes are not all told in words.
    pub images: usize,
    /// Past steps shown in full in the history; older ones are folded to a
    /// line each, the oldest into ranges (see `agent/history.rs`).
    pub history: usize,
    /// Most elements in the list the model reads.
    pub list_cap: usize,
    /// The exact run directory; else a new one under `runs_root`.
    pub out: Option<PathBuf>,
    /// Where run directories go.
    pub runs_root: PathBuf,
    /// How the browser starts.
    pub browser: BrowserOptions,
    /// How commands run.
    pub act: ActOptions,
    /// Prices for cost accounting.
    pub prices: Prices,
    /// Tag emails, phone numbers, card numbers and tokens in what the model reads.
    pub scrub: bool,
    /// Write `report.html` and `run.gif` into the run directory when the run ends.
    pub report: bool,
    /// Cookies and localStorage to load before the first page (Playwright's
    /// `storageState` file).
    pub storage_state: Option<PathBuf>,
    /// Where to write the browser's cookies and localStorage when the run
    /// ends (mode 0600).
    pub save_storage_state: Option<PathBuf>,
    /// Hand the browser over to the person (the [`Asker`](super::Asker)) when a CAPTCHA
    /// stands in the way: only when they can see it (a headful browser).
    pub hand_over: bool,
    /// The skills folder: a task that fits one of its skills is done from
    /// it without the model while the pages fit, and a run that ends done
    /// is learned into it (see [`crate::skill`]). None: no skills.
    pub skills: Option<PathBuf>,
    /// What a run learns waits in the skills folder's `proposed/` for a
    /// person's approval, and is not followed until then.
    pub review_skills: bool,
    /// What must hold before COMPLETE is taken: each is checked on the live
    /// page (or the answer) when the model says the task is done; one that
    /// fails refuses COMPLETE, and a second refusal ends the run
    /// [`RunStatus::Unverified`](super::RunStatus::Unverified).
    pub expect: Vec<crate::check::Check>,
    /// The network as it is, recorded into the run directory's `site.har`,
    /// or a recording instead of it (see [`crate::site`]).
    pub site: SiteUse,
    /// The pages' clock and `Math.random` fixed, from this start.
    pub fixed_clock: Option<ClockStart>,
}

impl Default for AgentOptions {
    fn default() -> Self {
        Self {
            max_steps: 30,
            max_failures: 3,
            max_cost: None,
            max_time: None,
            images: 2,
            history: 5,
            list_cap: perceive::DEFAULT_LIST_CAP,
            out: None,
            runs_root: PathBuf::from("runs"),
            browser: BrowserOptions::default(),
            act: ActOptions::default(),
            prices: Prices::built_in(),
            scrub: true,
            report: true,
            storage_state: None,
            save_storage_state: None,
            hand_over: false,
            skills: None,
            review_skills: false,
            expect: Vec::new(),
            site: SiteUse::Live,
            fixed_clock: None,
        }
    }
}

/// Hears about a run as it goes (the CLI prints progress from it).
pub trait Progress: Send + Sync {
    /// The model is about to be asked.
    fn thinking(&self, _step: usize, _max_steps: usize, _url: &str) {}
    /// The model answered (or failed to): its commands are about to run,
    /// and may put a question to the person.
    fn answered(&self, _step: usize) {}
    /// A step is done from a skill: no model is asked.
    fn following(&self, _step: usize, _max_steps: usize, _url: &str, _skill: &str) {}
    /// Something the person should know about skills: the one used, one
    /// ignored and why, one learned.
    fn skill_note(&self, _note: &str) {}
    /// A step ended.
    fn step(&self, _record: &StepRecord, _max_steps: usize) {}
}

/// Progress that goes nowhere.
pub(super) struct Silent;
impl Progress for Silent {}

/// A look at the final page after the last step, before the browser closes
/// (a batch scores the run on it). It is not called when the run never had a
/// page, or was interrupted.
pub type LastLook =
    Box<dyn for<'a> FnOnce(&'a Session) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> + Send>;

/// A signal that ends a run early (Ctrl-C, SIGTERM or SIGHUP in the CLI):
/// when it resolves, the step under way is dropped, the browser closed, and
/// the run ends as [`RunStatus::Interrupted`](super::RunStatus::Interrupted) with its end record and report
/// written. It resolves with what ended the run ("Ctrl-C", "SIGTERM"), which
/// the run's reason names.
pub type Interrupt = Pin<Box<dyn Future<Output = String> + Send>>;
