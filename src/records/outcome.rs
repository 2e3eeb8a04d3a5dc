//! What the executor tells of the commands it ran: each command's
//! [`Outcome`](crate::records::Outcome), and a sequence's [`BatchReport`](crate::records::BatchReport) with what came with it
//! (dialogs, downloads, refused requests, confirmations, checkpoints). The
//! executor writes them; the loop, MCP, the report and resume read them.

use serde::{Deserialize, Serialize};

use super::CheckpointRecord;
use crate::commands::Step;
use crate::files::DownloadedFile;
use crate::perceive::Rect;
use crate::safety::{Blocked, Decision};

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// It ran and something changed (see the outcome's changes).
    Done,
    /// It ran and nothing visible changed.
    NoEffect,
    /// It could not run; the reason says why and what to do.
    Failed,
    /// A destructive action held for a person's confirmation and not allowed.
    Held,
    /// Refused by the domain policy before it ran.
    Refused,
    /// A COMPLETE the run's checks did not accept: the task is not done yet.
    NotAccepted,
}

impl Status {
    /// Whether the command did not run as asked (failed, held or refused):
    /// the batch stops there and the step counts as failed.
    pub fn is_failure(self) -> bool {
        matches!(
            self,
            Status::Failed | Status::Held | Status::Refused | Status::NotAccepted
        )
    }
}

/// The result of one command, written for the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// The command as written canonically, e.g. `CLICK:3`.
    pub command: String,
    /// Done, no effect, or failed.
    pub status: Status,
    /// What happened, in a sentence: what was done, or why it failed.
    pub message: String,
    /// What changed on the page: navigations, elements that appeared, values set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<String>,
    /// The page signature moved: what the batch was planned for is gone.
    pub page_changed: bool,
    /// Milliseconds from the start of the command to the settled page.
    pub ms: f64,
}

impl Outcome {
    /// The outcome of `step`, with nothing changed yet and no time taken.
    pub fn new(step: &Step, status: Status, message: impl Into<String>) -> Self {
        Self {
            command: step.command.to_string(),
            status,
            message: message.into(),
            changes: Vec::new(),
            page_changed: false,
            ms: 0.0,
        }
    }

    /// One line for the model: `CLICK:3 → done: clicked button "Go"; navigated to …`.
    pub fn line(&self) -> String {
        let status = match self.status {
            Status::Done => "done",
            Status::NoEffect => "no visible effect",
            Status::Failed => "FAILED",
            Status::Held => "HELD",
            Status::Refused => "REFUSED",
            Status::NotAccepted => "NOT ACCEPTED",
        };
        let mut s = format!("{} → {status}: {}", self.command, self.message);
        if !self.changes.is_empty() {
            s.push_str("; ");
            s.push_str(&self.changes.join("; "));
        }
        s
    }
}

/// How the task ended, when a command ended it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Finish {
    /// `COMPLETE`: the task is done.
    Complete {
        /// What was done.
        summary: String,
    },
    /// `STOP`: an impasse.
    Stop {
        /// Why.
        reason: String,
    },
    /// `ASK`: the person must answer first.
    Ask {
        /// The question.
        question: String,
    },
    /// `HANDS`: a person must act in the browser first.
    Hands {
        /// Why.
        reason: String,
    },
}

/// What a batch did: the commands that ran, and those dropped and why.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BatchReport {
    /// Outcomes of the commands that ran, in order.
    pub outcomes: Vec<Outcome>,
    /// Commands not run, as written.
    pub dropped: Vec<String>,
    /// Why they were dropped.
    #[serde(default)]
    pub dropped_because: Option<String>,
    /// Whether a page command changed something (WAIT and the commands that
    /// end a task do not count): what the orchestrator calls progress.
    pub progress: bool,
    /// Information the model gave with `ANSWER`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answers: Vec<String>,
    /// What each `READ` gave (Markdown of the page, a part of it), for the
    /// model's next step: page text, to show only as page data.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub readings: Vec<String>,
    /// The region the last `ZOOM` asked to see closer, for the next look.
    #[serde(default)]
    pub zoom: Option<ZoomRequest>,
    /// A downloaded image a `READ:download` asked to see, for the next look.
    #[serde(default)]
    pub shown: Option<ShownFile>,
    /// The answer as data: the JSON value of the last `ANSWER` that followed
    /// the schema (with a schema only).
    #[serde(default)]
    pub data: Option<serde_json::Value>,
    /// `COMPLETE` or `STOP`, when one ran.
    #[serde(default)]
    pub finish: Option<Finish>,
    /// JS dialogs the page opened during the batch.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dialogs: Vec<Dialog>,
    /// Downloads the batch started.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub downloads: Vec<Download>,
    /// Requests the domain policy refused during the batch.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocked: Vec<Blocked>,
    /// Destructive actions held for confirmation, and what was decided.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub confirmations: Vec<Decision>,
    /// Checkpoints kept or gone back to, for the journal's own records
    /// (their `step` left for the journal's writer to set).
    #[serde(skip)]
    pub checkpoints: Vec<CheckpointRecord>,
}

impl BatchReport {
    /// Whether a command failed.
    pub fn failed(&self) -> bool {
        self.outcomes.iter().any(|o| o.status.is_failure())
    }

    /// The report as the model reads it next step.
    pub fn feedback(&self) -> String {
        let mut lines: Vec<String> = self.outcomes.iter().map(Outcome::line).collect();
        if !self.dropped.is_empty() {
            lines.push(format!(
                "not run: {} ({})",
                self.dropped.join("; "),
                self.dropped_because.as_deref().unwrap_or("dropped")
            ));
        }
        lines.join("\n")
    }
}

/// A JS dialog the page opened, and how it was answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dialog {
    /// `alert`, `confirm`, `prompt` or `beforeunload`.
    pub kind: String,
    /// The dialog's text.
    pub message: String,
    /// Whether it was accepted (OK) rather than dismissed.
    pub accepted: bool,
}

/// A download an action started.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Download {
    /// Where it came from.
    pub url: String,
    /// The name the site suggested (before sanitizing).
    pub file_name: String,
    /// `in progress`, `completed`, `canceled`, `refused` (downloads off)
    /// or `too large` (it passed the cap, and what came was removed).
    pub state: String,
    /// The file it became, once completed.
    #[serde(default)]
    pub saved: Option<DownloadedFile>,
    /// The frame that started it: in a browser other runs share, it tells
    /// whose download it is.
    #[serde(skip)]
    pub(crate) frame: String,
}

impl Download {
    /// What the model is told of it: `downloaded report.csv (36 B, text/csv)`.
    pub fn describe(&self) -> String {
        match (&self.saved, self.state.as_str()) {
            (Some(file), _) => format!("downloaded {}", file.describe()),
            (None, "refused") => {
                format!("download of {} refused (downloads are off)", self.file_name)
            }
            (None, "too large") => format!(
                "download of {} stopped: it passed the download size cap (--max-download-mb), \
                 and the part that came was removed",
                self.file_name
            ),
            (None, "in progress") => format!("download of {} still in progress", self.file_name),
            (None, state) => format!("download of {} {state}", self.file_name),
        }
    }
}

/// A downloaded image to show the model in the next step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShownFile {
    /// Its name among the downloads.
    pub name: String,
    /// Where it was saved.
    pub path: std::path::PathBuf,
    /// Its MIME type.
    pub mime: String,
}

/// A close look asked for: the region of the viewport, in CSS pixels.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ZoomRequest {
    /// The region of the viewport, in CSS pixels.
    pub region: Rect,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::Command;

    #[test]
    fn outcome_lines_read_as_sentences() {
        let step = Step {
            command: Command::Click { id: 3 },
            echo: None,
        };
        let mut o = Outcome::new(&step, Status::Done, "clicked button \"Go\"");
        o.changes.push("navigated to http://x/".into());
        assert_eq!(
            o.line(),
            "CLICK:3 → done: clicked button \"Go\"; navigated to http://x/"
        );
    }
}
