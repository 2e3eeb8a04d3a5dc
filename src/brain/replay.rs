//! The replay brain: answers from a recorded run directory, step by step, and
//! says where the live page differs from the recording.

use std::path::Path;

use futures::future::BoxFuture;
use serde_json::Value;

use super::{Brain, BrainError, Prompt, Reply, Usage};
use crate::journal;

/// One recorded step: the page it saw and what the model answered.
#[derive(Debug, Clone, PartialEq)]
struct Recorded {
    signature: String,
    answer: String,
}

/// How a replay names its model: `replay of ` and the recorded model.
const REPLAY_OF: &str = "replay of ";

/// Whether a run's model (as its journal names it) was a replay of a
/// recording, which calls no model.
pub fn is_replay(model: &str) -> bool {
    model.starts_with(REPLAY_OF)
}

/// A run's cost as people read it: in dollars, none for a replay, or
/// unknown when the model has no price.
pub fn cost_text(cost_usd: Option<f64>, model: &str) -> String {
    match cost_usd {
        Some(c) => format!("${c:.4}"),
        None if is_replay(model) => "none (a replay calls no model)".into(),
        None => format!("unknown (no price for {model})"),
    }
}

/// Answers a run's recorded answers in order.
#[derive(Debug, Clone)]
pub struct Replay {
    steps: Vec<Recorded>,
    /// The recorded task.
    pub task: String,
    /// The recorded start URL.
    pub url: String,
    /// The model that was recorded.
    pub model: String,
    /// Answering to make a new recording: the pages are not compared, and
    /// the answers go under the recorded model's own name.
    rerecord: bool,
}

impl Replay {
    /// Reads a run directory's journal.
    pub fn open(dir: &Path) -> Result<Replay, BrainError> {
        let records = journal::read_records(dir).map_err(|e| {
            BrainError::Replay(format!(
                "cannot read {}: {e}",
                dir.join(journal::JOURNAL).display()
            ))
        })?;
        Self::from_records(&records, &dir.display().to_string())
    }

    /// Reads a journal's text (`name` says where it came from in errors).
    pub fn from_journal(text: &str, name: &str) -> Result<Replay, BrainError> {
        let records: Vec<Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        Self::from_records(&records, name)
    }

    /// Answers the recorded answers without comparing the pages, under the
    /// recorded model's name: for making the recording anew, on purpose.
    pub fn rerecording(mut self) -> Replay {
        self.rerecord = true;
        self
    }

    fn from_records(records: &[Value], name: &str) -> Result<Replay, BrainError> {
        let start = records
            .iter()
            .find(|r| r["kind"] == "start")
            .ok_or_else(|| BrainError::Replay(format!("{name} has no start record")))?;
        let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
        let steps: Vec<Recorded> = records
            .iter()
            .filter(|r| r["kind"] == "step")
            .map(|r| Recorded {
                signature: text(&r["signature"]),
                answer: text(&r["answer"]),
            })
            .collect();
        Ok(Replay {
            steps,
            task: text(&start["task"]),
            url: text(&start["url"]),
            model: text(&start["model"]),
            rerecord: false,
        })
    }
}

impl Brain for Replay {
    fn name(&self) -> String {
        if self.rerecord {
            self.model.clone()
        } else {
            format!("{REPLAY_OF}{}", self.model)
        }
    }

    fn answer<'a>(&'a mut self, prompt: &'a Prompt) -> BoxFuture<'a, Result<Reply, BrainError>> {
        Box::pin(async move {
            let Some(rec) = prompt.step.checked_sub(1).and_then(|i| self.steps.get(i)) else {
                return Err(BrainError::Replay(format!(
                    "the recording has {} steps; step {} is not in it",
                    self.steps.len(),
                    prompt.step
                )));
            };
            let divergence = (!self.rerecord && rec.signature != prompt.signature).then(|| {
                format!(
                    "step {}: the page differs from the recording (signature {} live, {} recorded)",
                    prompt.step, prompt.signature, rec.signature
                )
            });
            Ok(Reply {
                text: rec.answer.clone(),
                usage: Usage::default(),
                divergence,
            })
        })
    }
}
