//! The state of a run between steps, and how it ended.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::Duration;

use crate::brain::{self, Image};
use crate::safety;

use super::{history, skill_use, Resume, RunStatus, Spend};

/// The state of a run between steps.
pub(super) struct Run {
    /// The system prompt, the same every step.
    pub(super) system: String,
    pub(super) plan: Option<String>,
    pub(super) history: history::History,
    pub(super) images: VecDeque<Image>,
    /// Whether the last step's changes are not all told in words (a command
    /// at a point, or one with no effect on the page's elements): then the
    /// screenshots before the current one are sent too.
    pub(super) shows_before: bool,
    pub(super) feedback: Option<String>,
    pub(super) failures: usize,
    pub(super) spend: Spend,
    pub(super) answer: Option<String>,
    /// How often each (page signature, commands, outcome) came up.
    pub(super) repeats: HashMap<(String, String, String), usize>,
    /// Whether the last step's commands changed anything on the page.
    pub(super) progressed: bool,
    /// Whether the last batch was a skill's, settled briskly (see
    /// [`crate::act::Executor::set_brisk`]).
    pub(super) settled_briskly: bool,
    pub(super) divergences: Vec<String>,
    /// The impasse of the last steps, and for how many steps in a row.
    pub(super) impasse: Option<(safety::Impasse, usize)>,
    /// Refusals of the domain guard already told.
    pub(super) blocked_told: usize,
    /// Cookie banners answered by rule already told.
    pub(super) consent_told: usize,
    /// What the last step's READ commands gave, for the next prompt.
    pub(super) readings: Vec<String>,
    /// The region the last step's ZOOM asked to see closer.
    pub(super) zoom: Option<crate::records::ZoomRequest>,
    /// The date and time this step's prompt tells, in the page's zone.
    pub(super) now: String,
    /// A downloaded image the last step's READ asked to see.
    pub(super) shown: Option<crate::records::ShownFile>,
    /// This step's extra images (a close look, a downloaded image), sent
    /// just before its screenshot only.
    pub(super) close_look: Vec<Image>,
    /// The last answer that followed the schema.
    pub(super) data: Option<serde_json::Value>,
    /// Each step's prompt in tokens.
    pub(super) prompt_tokens: Vec<brain::PromptTokens>,
    /// The step under way (`before` until the first).
    pub(super) step: usize,
    /// Steps taken before this process went on with the run (resumed).
    pub(super) before: usize,
    /// Each origin's localStorage, as the looks after each step found it.
    pub(super) local_storage: BTreeMap<String, Vec<crate::storage::Item>>,
    /// The skills folder's part in the run, when it has one.
    pub(super) skills: Option<skill_use::Skills>,
    /// COMPLETEs the run's checks refused so far.
    pub(super) refusals: usize,
    /// The checkpoints kept, as the prompt shows them: name, URL, step.
    pub(super) checkpoints: Vec<(String, String, usize)>,
    /// The files downloads saved.
    pub(super) downloads: Vec<crate::files::DownloadedFile>,
    /// What the judge said so far, and what it cost.
    pub(super) judge: Option<crate::records::JudgeReport>,
    /// What was done with the site's traffic, at the end.
    pub(super) site: Option<crate::site::SiteReport>,
}

impl Run {
    /// A run about to take its first step, with this system prompt.
    pub(super) fn new(system: String) -> Run {
        Run {
            system,
            plan: None,
            history: history::History::default(),
            images: VecDeque::new(),
            shows_before: false,
            feedback: None,
            failures: 0,
            spend: Spend::default(),
            answer: None,
            repeats: HashMap::new(),
            progressed: false,
            settled_briskly: false,
            divergences: Vec::new(),
            impasse: None,
            blocked_told: 0,
            consent_told: 0,
            readings: Vec::new(),
            zoom: None,
            now: String::new(),
            shown: None,
            close_look: Vec::new(),
            data: None,
            prompt_tokens: Vec::new(),
            step: 0,
            before: 0,
            local_storage: BTreeMap::new(),
            skills: None,
            refusals: 0,
            checkpoints: Vec::new(),
            downloads: Vec::new(),
            judge: None,
            site: None,
        }
    }

    /// The screenshots the next prompt sends: every one kept when the last
    /// step's changes are not all told in words, else the current one.
    pub(super) fn images_to_send(&self) -> impl Iterator<Item = &Image> {
        let skip = if self.shows_before {
            0
        } else {
            self.images.len().saturating_sub(1)
        };
        self.images.iter().skip(skip)
    }

    /// Counts what a model call cost.
    pub(super) fn add_spend(&mut self, spend: Spend) {
        self.spend += spend;
    }

    /// A run going on from where `r` left it.
    pub(super) fn resumed(system: String, r: &Resume) -> Run {
        let mut run = Run::new(system);
        run.plan = r.plan.clone();
        run.history = r.history.clone();
        run.spend = r.spend;
        run.answer = r.answer.clone();
        run.data = r.data.clone();
        run.prompt_tokens = r.prompt_tokens.clone();
        run.before = r.first_step.saturating_sub(1);
        run.step = run.before;
        run.downloads = r.downloads.clone();
        run
    }

    /// The ending of a run that `cause` interrupted now, and the steps it
    /// finished.
    pub(super) fn interrupted(&self, cause: &str) -> (Ending, usize) {
        let reason = if self.step == self.before {
            format!("interrupted ({cause}) before step {}", self.before + 1)
        } else {
            format!(
                "interrupted ({cause}) during step {}, whose record was not written",
                self.step
            )
        };
        (
            Ending::new(RunStatus::Interrupted, reason),
            self.step.saturating_sub(1).max(self.before),
        )
    }

    /// The ending of a run whose time budget `limit` ran out now, in the
    /// middle of whatever it was doing, and the steps it finished.
    pub(super) fn out_of_time(&self, limit: Duration) -> (Ending, usize) {
        let during = if self.step == self.before {
            "while the start page was opened".to_string()
        } else {
            format!("during step {}", self.step)
        };
        (
            Ending::new(
                RunStatus::Budget,
                format!("the time budget of {} s ran out {during}", limit.as_secs()),
            ),
            self.step.saturating_sub(1).max(self.before),
        )
    }
}

/// How the loop ended.
pub(super) struct Ending {
    pub(super) status: RunStatus,
    pub(super) reason: String,
}

impl Ending {
    pub(super) fn new(status: RunStatus, reason: String) -> Self {
        Self { status, reason }
    }

    pub(super) fn failed(reason: String) -> Self {
        Self::new(RunStatus::Failed, reason)
    }

    /// This ending with what else went wrong after the loop (`also`): a
    /// run done is failed by it, any other ending says it too.
    pub(super) fn and(self, also: Option<String>) -> Self {
        match also {
            Some(why) if self.status == RunStatus::Done => {
                Ending::failed(format!("{}; but {why}", self.reason))
            }
            Some(why) => Ending::new(self.status, format!("{}; and {why}", self.reason)),
            None => self,
        }
    }
}
