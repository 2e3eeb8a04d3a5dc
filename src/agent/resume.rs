//! Going on with a run that was cut off: killed, crashed, out of budget, or
//! waiting for a person's answer. Everything comes from its run directory:
//! the task, plan, history, spend and rules from the journal, the browser's
//! state from the storage state kept after every step, the page from the
//! last URL. Commands that were sent but whose outcome was never recorded
//! are not repeated blindly: the model is told, and a destructive action
//! waits for a person again.

use std::path::{Path, PathBuf};

use super::{RunStatus, Spend};
use crate::brain::PromptTokens;
use crate::records::RunPolicy;
use crate::report::{ReportError, RunLog};

/// Why a run cannot be resumed.
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    /// The directory is not a run seamark can read.
    #[error(transparent)]
    NotARun(#[from] ReportError),
    /// The run cannot go on, and why.
    #[error("{0}")]
    Refused(String),
}

/// Where a run goes on from.
#[derive(Debug, Clone)]
pub struct Resume {
    /// The run directory.
    pub dir: PathBuf,
    /// The task.
    pub task: String,
    /// The start URL, as given.
    pub url: String,
    /// The model that ran it.
    pub model: String,
    /// Its rules (none for a run of a seamark that did not record them).
    pub policy: Option<RunPolicy>,
    /// Its step budget.
    pub max_steps: usize,
    /// The step to go on with.
    pub first_step: usize,
    pub(crate) plan: Option<String>,
    pub(crate) history: super::history::History,
    pub(crate) spend: Spend,
    pub(crate) answer: Option<String>,
    pub(crate) data: Option<serde_json::Value>,
    pub(crate) prompt_tokens: Vec<PromptTokens>,
    /// The page to open.
    pub open_url: String,
    /// The commands of the step under way when the run died: sent, their
    /// outcome never recorded.
    pub unknown: Vec<String>,
    /// The question a run that needs input asked.
    pub question: Option<String>,
    /// The destructive action the question is about, when the run was
    /// parked on it (`--confirm park`): the answer is a yes or a no.
    pub parked: Option<crate::safety::Hold>,
    /// How it ended before, in words.
    pub after: String,
    /// The files its downloads saved so far.
    pub(crate) downloads: Vec<crate::files::DownloadedFile>,
}

/// The start of a run that can be resumed, or why it cannot: no start, an
/// MCP session, a replay, or a run that is complete.
fn resumable(log: &RunLog, dir: &Path) -> Result<crate::records::StartRecord, String> {
    let Some(start) = log.start.clone() else {
        // A start record that is there but broken is told as such.
        if let Some(broken) = log.problems.iter().find(|p| p.contains("a start record")) {
            return Err(format!(
                "{}: its journal's start record cannot be read, so the run cannot go on: {broken}",
                dir.display()
            ));
        }
        return Err(format!(
            "{}: its journal has no start record: there is no run to go on with",
            dir.display()
        ));
    };
    if start.model == "mcp client" {
        return Err("an MCP session cannot be resumed: its client gave the commands".into());
    }
    if crate::brain::is_replay(&start.model) {
        return Err("a replay is not resumed: run seamark replay again".into());
    }
    if let Some(end) = &log.end {
        if end.status == RunStatus::Done {
            return Err(format!(
                "the run is complete ({}): there is nothing to resume",
                end.reason
            ));
        }
    }
    Ok(start)
}

impl Resume {
    /// Reads a run directory to go on with it. A run that is done, an MCP
    /// session and a replay cannot be resumed; a directory that holds no run
    /// is an error too.
    pub fn read(dir: &Path) -> Result<Resume, ResumeError> {
        let log = RunLog::read(dir)?;
        let start = resumable(&log, dir).map_err(ResumeError::Refused)?;
        let last = log.steps.iter().map(|s| s.step).max().unwrap_or(0);
        let unknown = log
            .acts
            .iter()
            .rfind(|a| a.step > last)
            .map(|a| a.commands.clone())
            .unwrap_or_default();
        let mut spend = Spend::default();
        let (mut answer, mut data, mut history, mut prompt_tokens) =
            (None, None, super::history::History::default(), Vec::new());
        for s in &log.steps {
            spend += s.spend;
            prompt_tokens.push(s.prompt_tokens);
            match &s.report {
                Some(report) => {
                    if let Some(a) = report.answers.last() {
                        answer = Some(a.clone());
                    }
                    if report.data.is_some() {
                        data = report.data.clone();
                    }
                    history.push(s.step, &s.url, report);
                }
                None => history.push_unreadable(s.step, &s.url),
            }
            if let Some(crate::records::Asked {
                question,
                answer: Some(answer),
            }) = &s.asked
            {
                history.answered(question, answer);
            }
        }
        let open_url = log
            .steps
            .last()
            .map(|s| s.url_after.clone().unwrap_or_else(|| s.url.clone()))
            .filter(|u| !u.is_empty() && u != "about:blank")
            .unwrap_or_else(|| start.url.clone());
        let question = log
            .end
            .as_ref()
            .filter(|e| e.status == RunStatus::NeedsInput)
            .map(|e| e.reason.clone());
        let parked = question
            .as_ref()
            .and_then(|_| log.steps.last())
            .and_then(|s| s.report.as_ref())
            .and_then(|r| r.confirmations.iter().find(|d| d.parked()))
            .map(|d| d.hold.clone());
        let after = match &log.end {
            Some(e) => format!("it ended {}: {}", e.status.word(), e.reason),
            None => format!(
                "it was killed or crashed during step {} (its journal stops there)",
                last + 1
            ),
        };
        Ok(Resume {
            dir: dir.to_path_buf(),
            task: start.task,
            url: start.url,
            model: start.model,
            policy: start.policy,
            max_steps: start.max_steps,
            first_step: last + 1,
            plan: log.steps.last().and_then(|s| s.plan.clone()),
            history,
            spend,
            answer,
            data,
            prompt_tokens,
            open_url,
            unknown,
            question,
            parked,
            after,
            downloads: log.downloads.iter().map(|d| d.file.clone()).collect(),
        })
    }

    /// What the model is told first: that the run goes on, and what is
    /// unknown about its last commands.
    pub(crate) fn note(&self) -> String {
        let mut note = format!(
            "The run was cut off ({}) and goes on now; the page was opened again at {}.",
            self.after, self.open_url
        );
        if !self.unknown.is_empty() {
            note.push_str(&format!(
                " The commands of the step under way were sent but their outcome is UNKNOWN \
                 (never recorded): {}. Look at the page first and check whether they took \
                 effect before repeating any of them; an action that sends, pays, orders or \
                 deletes must not be done twice.",
                self.unknown.join("; ")
            ));
        }
        note
    }
}

/// A person's yes or no to a parked action (`approve` and `refuse` too, as
/// `seamark serve`'s page words them).
pub fn yes_or_no(answer: &str) -> Option<bool> {
    match answer.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" | "approve" | "approved" => Some(true),
        "n" | "no" | "refuse" | "refused" => Some(false),
        _ => None,
    }
}
