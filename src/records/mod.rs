//! The records of a run's journal: what the loop writes at each step, and
//! what the report, `seamark resume`, batch and MCP read back. They sit below
//! both their writer (`agent`) and their readers (`report`), so that neither
//! imports the other for them.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

mod events;
mod outcome;

pub use events::{
    CheckRecord, CheckpointEvent, CheckpointRecord, HandsEnd, HandsRecord, SkillEvent, SkillRecord,
    StepMark,
};
pub use outcome::{BatchReport, Dialog, Download, Finish, Outcome, ShownFile, Status, ZoomRequest};

use crate::brain::{self, Usage};
use crate::browser::Viewport;
use crate::files::DownloadedFile;
use crate::safety::{self, ConfirmPolicy};

/// Tokens and, when the price is known, cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Spend {
    /// Tokens in and out.
    pub tokens: Usage,
    /// USD, when the model has a price.
    pub cost_usd: Option<f64>,
}

impl std::ops::AddAssign for Spend {
    /// Tokens add up; so does cost, where either side knows one.
    fn add_assign(&mut self, other: Spend) {
        self.tokens += other.tokens;
        self.cost_usd = match (self.cost_usd, other.cost_usd) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
    }
}

/// How a run ended, in one word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// The task was completed (COMPLETE, or the answer given again).
    Done,
    /// The model stopped with a reason (STOP), or an impasse persisted.
    Stopped,
    /// A budget ran out: steps, time or cost.
    Budget,
    /// Something failed: the browser, the model, the page, answers that
    /// could not be read, commands that failed step after step, a loop.
    Failed,
    /// The run was interrupted (Ctrl-C) before it ended.
    Interrupted,
    /// The model asked the person something (ASK) and no one could answer:
    /// the reason is the question; `seamark resume --answer` goes on.
    NeedsInput,
    /// The model said the task was done, but the run's checks did not hold,
    /// twice.
    Unverified,
}

impl RunStatus {
    /// The word the report and the terminal show.
    pub fn word(self) -> &'static str {
        match self {
            RunStatus::Done => "done",
            RunStatus::Stopped => "stopped",
            RunStatus::Budget => "out of budget",
            RunStatus::Failed => "failed",
            RunStatus::Interrupted => "interrupted",
            RunStatus::NeedsInput => "needs input",
            RunStatus::Unverified => "unverified",
        }
    }
}

/// How a run ended.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// The task was completed.
    pub success: bool,
    /// How the run ended, in one word.
    pub status: RunStatus,
    /// What the model gave with ANSWER (the last one, when several).
    #[serialize_always]
    pub answer: Option<String>,
    /// Why the run ended: the completion summary, the STOP reason, or the budget.
    pub reason: String,
    /// Steps taken.
    pub steps: usize,
    /// Tokens, in and out.
    pub tokens: Usage,
    /// USD, when the model's price is known.
    #[serialize_always]
    pub cost_usd: Option<f64>,
    /// The run directory.
    pub run_dir: PathBuf,
    /// Seconds from start to end.
    pub wall_time_s: f64,
    /// The model.
    pub model: String,
    /// For a replay: where the live pages differed from the recording.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub divergences: Vec<String>,
    /// With a schema: the answer as the JSON value that followed it.
    #[serde(default)]
    pub data: Option<serde_json::Value>,
    /// Each step's prompt in tokens, counted before it was sent.
    pub prompt_tokens: Vec<brain::PromptTokens>,
    /// The run's `report.html`, once it is written (the journal's end record,
    /// written before it, never has it).
    #[serde(default)]
    pub report: Option<PathBuf>,
    /// What the run did with skills.
    #[serde(default)]
    pub skill: Option<SkillReport>,
    /// The files the run downloaded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub downloads: Vec<DownloadedFile>,
    /// The judge's part, when a judge model was asked (`--judge`).
    #[serde(default)]
    pub judge: Option<JudgeReport>,
    /// What the run did with the site's traffic: recorded it
    /// (`--record-site`), or was answered from a recording (`--site`).
    #[serde(default)]
    pub site: Option<crate::site::SiteReport>,
}

/// What the judge model said of a run, and what asking it cost: counted on
/// its own, apart from the agent's model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeReport {
    /// The judge model, e.g. `openai/gpt-4o`.
    pub model: String,
    /// Its last verdict; none when its answer could not be read or it could
    /// not be asked.
    pub verdict: Option<crate::judge::Verdict>,
    /// Its reason, or why there is no verdict.
    pub reason: String,
    /// How many times it was asked for a verdict (each COMPLETE it judged).
    pub judged: usize,
    /// Tokens and cost of every ask.
    pub spend: Spend,
}

/// The journal's record of a file a download saved (a kind readers older
/// than it skip).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DownloadRecord {
    /// Always `download`.
    #[serde(skip_deserializing)]
    pub kind: &'static str,
    /// The step whose commands started it.
    pub step: usize,
    /// The file.
    #[serde(flatten)]
    pub file: DownloadedFile,
}

impl RunResult {
    /// A run that failed before it began (no model, no judge, a task that
    /// cannot run): `reason`, its directory, and the time it took to fail.
    pub fn failed_to_start(reason: String, run_dir: PathBuf, wall_time_s: f64) -> RunResult {
        RunResult {
            success: false,
            status: RunStatus::Failed,
            answer: None,
            reason,
            steps: 0,
            tokens: Usage::default(),
            cost_usd: None,
            run_dir,
            wall_time_s,
            model: String::new(),
            divergences: Vec::new(),
            data: None,
            prompt_tokens: Vec::new(),
            report: None,
            skill: None,
            downloads: Vec::new(),
            judge: None,
            site: None,
        }
    }
}

/// What a run did with skills: the one it followed, how far, and the one it
/// learned.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SkillReport {
    /// The skill it followed.
    #[serde(default)]
    pub followed: Option<String>,
    /// Steps done from the skill, with no model call.
    #[serde(default)]
    pub steps: usize,
    /// Why the model took over, when it did.
    #[serde(default)]
    pub took_over: Option<String>,
    /// The skill file learned or updated from the run.
    #[serde(default)]
    pub learned: Option<PathBuf>,
}

/// Timings of one step, in milliseconds.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct StepTimings {
    /// Perception.
    pub perceive_ms: f64,
    /// Marking and encoding the image.
    pub mark_ms: f64,
    /// The model call.
    pub model_ms: f64,
    /// Running the commands.
    pub act_ms: f64,
}

/// The journal's first record: what the run was asked to do.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StartRecord {
    /// Always `start`.
    #[serde(skip_deserializing)]
    pub kind: &'static str,
    /// The task, in plain words.
    pub task: String,
    /// The start URL (or file) as given.
    pub url: String,
    /// The model.
    pub model: String,
    /// When the run started, RFC 3339 UTC.
    pub started: String,
    /// The version of seamark that ran it.
    pub seamark: String,
    /// The step budget.
    pub max_steps: usize,
    /// The rules it runs under (what `seamark resume` restores).
    #[serde(default)]
    pub policy: Option<RunPolicy>,
}

/// A model's answer as a step's record keeps it (and so the report shows):
/// whole up to [`crate::commands::MAX_TEXT_CHARS`], else cut there, with
/// the cut said.
pub fn kept_answer(text: &str) -> String {
    crate::commands::kept_text(text, "model's answer")
}

/// The journal record of one step.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepRecord {
    /// Always `step`.
    #[serde(skip_deserializing)]
    pub kind: &'static str,
    /// 1-based.
    pub step: usize,
    /// Page URL.
    pub url: String,
    /// Page title.
    pub title: String,
    /// Page signature.
    pub signature: String,
    /// The element list as the model read it.
    pub elements: String,
    /// What the model was told about the page besides the list: impasses,
    /// secrets it may type, blocked requests, where to READ.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The marked screenshot's file in the run directory.
    pub screenshot: String,
    /// The close look (`ZOOM`) the model was shown beside it, if any: its
    /// file in the run directory.
    #[serde(default)]
    pub close_look: Option<String>,
    /// Characters of prompt text sent.
    pub prompt_chars: usize,
    /// The prompt in tokens, counted before it was sent (see
    /// [`brain::tokens`]).
    pub prompt_tokens: brain::PromptTokens,
    /// Images sent.
    pub images: usize,
    /// The model's raw answer.
    #[serialize_always]
    pub answer: Option<String>,
    /// The plan after this step.
    #[serde(default)]
    pub plan: Option<String>,
    /// The commands as parsed.
    pub commands: Vec<String>,
    /// Why the answer could not be parsed.
    #[serde(default)]
    pub parse_error: Option<String>,
    /// What the commands did.
    #[serde(default)]
    pub report: Option<BatchReport>,
    /// Requests the domain policy refused outside the commands (while a page
    /// loaded, or from its timers).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocked: Vec<safety::Blocked>,
    /// Cookie banners answered by rule since the last step (`--consent`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub consent: Vec<crate::browser::ConsentRecord>,
    /// Tokens and cost of this step.
    pub spend: Spend,
    /// Where the page differs from a replayed recording.
    #[serde(default)]
    pub divergence: Option<String>,
    /// An error that ended the run at this step.
    #[serde(default)]
    pub error: Option<String>,
    /// The page's URL after the commands (where a resumed run opens it again).
    #[serde(default)]
    pub url_after: Option<String>,
    /// What the model asked the person (ASK), and the answer when one came.
    #[serde(default)]
    pub asked: Option<Asked>,
    /// A step done from a skill (no model call), or where the model took
    /// over from one and why.
    #[serde(default)]
    pub skill: Option<StepMark>,
    /// Costs.
    pub timings: StepTimings,
}

/// What a step was shown of the page: where it was, and what the model (or
/// the MCP client) read of it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Shown {
    /// Page URL.
    pub url: String,
    /// Page title.
    pub title: String,
    /// Page signature.
    pub signature: String,
    /// The element list as it was read.
    pub elements: String,
    /// What was told about the page besides the list.
    pub notes: Vec<String>,
    /// The marked screenshot's file in the run directory.
    pub screenshot: String,
}

impl StepRecord {
    /// The record of step `step` on the page `shown`, before anything is
    /// asked or done: the loop, MCP and the benchmarks fill in the rest as
    /// the step goes.
    pub fn new(step: usize, shown: Shown) -> StepRecord {
        let Shown {
            url,
            title,
            signature,
            elements,
            notes,
            screenshot,
        } = shown;
        StepRecord {
            kind: "step",
            step,
            url,
            title,
            signature,
            elements,
            notes,
            screenshot,
            close_look: None,
            prompt_chars: 0,
            prompt_tokens: brain::PromptTokens::default(),
            images: 0,
            answer: None,
            plan: None,
            commands: Vec::new(),
            parse_error: None,
            report: None,
            blocked: Vec::new(),
            consent: Vec::new(),
            spend: Spend::default(),
            divergence: None,
            error: None,
            url_after: None,
            asked: None,
            skill: None,
            timings: StepTimings::default(),
        }
    }
}

/// A question put to the person, and its answer (a secret's placeholder for
/// a secret answer; none when no one could answer).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Asked {
    /// The question.
    pub question: String,
    /// The answer.
    #[serde(default)]
    pub answer: Option<String>,
}

/// A run's rules, as its journal keeps them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunPolicy {
    /// Most failed steps in a row.
    pub max_failures: usize,
    /// The cost budget, USD.
    #[serde(default)]
    pub max_cost: Option<f64>,
    /// The time budget, seconds.
    #[serde(default)]
    pub max_time_s: Option<f64>,
    /// Screenshots sent per step.
    pub images: usize,
    /// Most elements in a list.
    pub list_cap: usize,
    /// Personal data tagged in what the model reads.
    pub scrub: bool,
    /// Hosts that may be reached (`--allow-domain`).
    #[serde(default)]
    pub allow_domains: Vec<String>,
    /// Hosts never reached (`--block-domain`).
    #[serde(default)]
    pub block_domains: Vec<String>,
    /// What a destructive action does without a person's yes.
    pub confirm: ConfirmPolicy,
    /// The words that make an action destructive.
    #[serde(default)]
    pub confirm_words: Vec<String>,
    /// The names of the run's secrets (never their values).
    #[serde(default)]
    pub secrets: Vec<String>,
    /// Confirm and prompt dialogs answered with Cancel.
    #[serde(default)]
    pub dismiss_dialogs: bool,
    /// Where downloads are kept.
    #[serde(default)]
    pub download_dir: Option<PathBuf>,
    /// The folder UPLOAD takes files from (`--files`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<PathBuf>,
    /// Most characters one READ gives.
    pub read_chars: usize,
    /// The schema the answer follows.
    #[serde(default)]
    pub schema: Option<serde_json::Value>,
    /// The viewport.
    pub viewport: Viewport,
    /// The phone or tablet the run was (`--device`), by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// What had to hold before COMPLETE was taken (`--expect-*`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expect: Vec<crate::check::Check>,
    /// The site's responses were recorded into `site.har` (`--record-site`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub record_site: bool,
}

/// The journal record written before a step's commands run, so that a run
/// that dies before their outcome is recorded knows they may have run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActRecord {
    /// Always `act`.
    #[serde(skip_deserializing)]
    pub kind: &'static str,
    /// The step.
    pub step: usize,
    /// The commands about to run.
    pub commands: Vec<String>,
}

/// The journal record of a run going on (`seamark resume`).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResumeRecord {
    /// Always `resume`.
    #[serde(skip_deserializing)]
    pub kind: &'static str,
    /// When, RFC 3339 UTC.
    pub started: String,
    /// The first step of the part that goes on.
    pub from_step: usize,
    /// How the run had ended before.
    pub after: String,
    /// The person's answer given now (a secret's placeholder for a secret).
    #[serde(default)]
    pub answer: Option<String>,
    /// Commands whose outcome was never recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown: Vec<String>,
}
