//! The journal's records of events beside the steps: checkpoints kept or
//! gone back to, checks run on a run's end, and what happened to skills.

use serde::{Deserialize, Serialize};

/// What happened to a checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckpointEvent {
    /// `CHECKPOINT:name` kept the page.
    Kept,
    /// `BACK:checkpoint` went back to it.
    Back,
}

/// The journal's record of a checkpoint kept or gone back to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckpointRecord {
    /// Always `checkpoint`.
    #[serde(skip_deserializing)]
    pub kind: &'static str,
    /// The step whose command it was (set by whoever journals it).
    pub step: usize,
    /// Kept, or gone back to.
    pub event: CheckpointEvent,
    /// The phase's name.
    pub name: String,
    /// The checkpoint's URL.
    pub url: String,
    /// Its page's title.
    pub title: String,
    /// What was kept, or how the page came back.
    pub detail: String,
}

/// The journal's record of a check run on a run's page or answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckRecord {
    /// Always `check`.
    #[serde(skip_deserializing)]
    pub kind: &'static str,
    /// The step whose COMPLETE it judged.
    pub step: usize,
    /// The check's kind (`url_contains`, `js`, …).
    pub check: String,
    /// What it asks for, as written.
    pub wanted: String,
    /// Whether it held.
    pub passed: bool,
    /// What was found.
    pub detail: String,
}

impl CheckRecord {
    /// The record of a check of the step `step`.
    pub fn new(step: usize, check: &str, wanted: &str, passed: bool, detail: String) -> Self {
        Self {
            kind: "check",
            step,
            check: check.to_string(),
            wanted: wanted.to_string(),
            passed,
            detail,
        }
    }
}

/// How a step of a run stands to a skill: done from it, or where the model
/// took over from it.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepMark {
    /// The skill.
    pub name: String,
    /// The skill's step this run step did, when it was done from the skill.
    #[serde(default)]
    pub step: Option<usize>,
    /// Why the model took over at this step, when it did.
    #[serde(default)]
    pub took_over: Option<String>,
}

/// What happened to skills in a run, as the journal records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillEvent {
    /// The run follows a skill.
    Follow,
    /// A skill file, or a match, was left alone: the detail says why.
    Ignored,
    /// A new skill was learned from the run.
    Learned,
    /// The skill the run followed was learned again (the model took over).
    Updated,
    /// The run ended done but was not learned: the detail says why.
    NotLearned,
}

/// The journal's record of a skill event.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SkillRecord {
    /// Always `skill`.
    #[serde(skip_deserializing)]
    pub kind: &'static str,
    /// What happened.
    pub event: SkillEvent,
    /// The skill, when one is named.
    #[serde(default)]
    pub name: Option<String>,
    /// In a sentence.
    pub detail: String,
}

impl SkillRecord {
    /// A record of `event`.
    pub fn new(event: SkillEvent, name: Option<&str>, detail: impl Into<String>) -> Self {
        Self {
            kind: "skill",
            event,
            name: name.map(str::to_string),
            detail: detail.into(),
        }
    }
}

/// How a time a person had the browser ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HandsEnd {
    /// They handed it back.
    HandedBack,
    /// They stopped acting for the time allowed without handing it back.
    TimedOut,
    /// The agent asked for hands and nobody took the browser in time.
    NobodyCame,
}

/// The journal's record of a time a person had the browser (taken over in
/// the live view, or lent when the agent asked with `HANDS`): what they
/// did, never what they typed.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HandsRecord {
    /// Always `hands`.
    #[serde(skip_deserializing)]
    pub kind: &'static str,
    /// The last step before the person had the browser.
    pub step: usize,
    /// Why the agent asked for hands, when it did.
    #[serde(default)]
    pub asked: Option<String>,
    /// When the person took the browser (or the agent began to wait), UTC.
    pub started: String,
    /// How long they had it (or the agent waited), in seconds.
    pub seconds: f64,
    /// The pages they were on, in order, each once.
    #[serde(default)]
    pub pages: Vec<String>,
    /// The fields they typed into, described by their labels.
    #[serde(default)]
    pub typed_into: Vec<String>,
    /// Their clicks.
    #[serde(default)]
    pub clicks: usize,
    /// Their key presses.
    #[serde(default)]
    pub keys: usize,
    /// What they said when they handed the browser back.
    #[serde(default)]
    pub note: Option<String>,
    /// How it ended.
    pub ended: HandsEnd,
}

impl HandsRecord {
    /// What the model is told of it in its next prompt.
    pub fn told(&self) -> String {
        if self.ended == HandsEnd::NobodyCame {
            return format!(
                "Nobody took the browser in {:.0} s after you asked for a person's hands",
                self.seconds
            );
        }
        let mut told = format!(
            "A PERSON HAD THE BROWSER for {:.0} s{} and has handed it back{}.",
            self.seconds,
            self.asked
                .as_ref()
                .map(|a| format!(" (you asked: {a})"))
                .unwrap_or_default(),
            match self.ended {
                HandsEnd::TimedOut => " after they stopped acting",
                _ => "",
            }
        );
        if !self.pages.is_empty() {
            told.push_str(&format!(" Pages: {}.", self.pages.join(" → ")));
        }
        told.push_str(&format!(" They clicked {} times", self.clicks));
        if self.typed_into.is_empty() {
            told.push_str(" and typed nothing.");
        } else {
            told.push_str(&format!(
                " and typed into: {} (what they typed is not told).",
                self.typed_into.join(", ")
            ));
        }
        if let Some(note) = &self.note {
            told.push_str(&format!(" Their note: {note}"));
        }
        told.push_str(" The page as it is now is below: go on from it.");
        told
    }
}
