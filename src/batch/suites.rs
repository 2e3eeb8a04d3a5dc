//! The public suites' task files, read as they are published, their ids
//! kept, into the tasks of a batch:
//! - WebVoyager: JSON lines of `{"web_name", "id", "ques", "web"}`;
//! - Online-Mind2Web: one JSON array of `{"task_id", "confirmed_task",
//!   "website", "reference_length", "level"}`.
//!
//! Their tasks carry no check: a batch scores them by their ending, or by a
//! judge model (`--judge`); Online-Mind2Web's own judge (WebJudge) scores
//! the folder `--export online-mind2web` writes (see export.rs).

use std::path::Path;

use serde::Deserialize;
use serde_json::json;

use super::task::{parse_tasks, read_text, LineError, LocalFiles, TaskSpec, TasksError};

/// A public suite whose task file seamark reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SuiteFormat {
    /// WebVoyager's JSON lines.
    WebVoyager,
    /// Online-Mind2Web's JSON array.
    OnlineMind2Web,
}

impl std::str::FromStr for SuiteFormat {
    type Err = crate::errors::UnknownWord;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "webvoyager" => Ok(SuiteFormat::WebVoyager),
            "online-mind2web" => Ok(SuiteFormat::OnlineMind2Web),
            other => Err(crate::errors::UnknownWord::new(
                other,
                "--suite",
                "webvoyager or online-mind2web",
            )),
        }
    }
}

/// One WebVoyager task, as published.
#[derive(Debug, Deserialize)]
struct WebVoyagerTask {
    id: String,
    ques: String,
    web: String,
}

/// One Online-Mind2Web task, as published.
#[derive(Debug, Deserialize)]
struct OnlineMind2WebTask {
    task_id: String,
    confirmed_task: String,
    website: String,
}

/// Reads a suite's task file into checked tasks (every bad task told at
/// once, by its line or its place in the array).
pub fn read_suite(
    suite: SuiteFormat,
    path: &Path,
    local: LocalFiles,
) -> Result<Vec<TaskSpec>, TasksError> {
    let file = path.display().to_string();
    let text = read_text(path)?;
    // Each task as a line of seamark's own tasks file, checked as those are.
    let lines: Vec<String> = match suite {
        SuiteFormat::WebVoyager => {
            // Line for line (blank ones too), so that a message's line
            // number is the suite file's.
            let mut lines = Vec::new();
            let mut errors = Vec::new();
            for (i, l) in text.lines().enumerate() {
                let task = match serde_json::from_str::<WebVoyagerTask>(l) {
                    _ if l.trim().is_empty() => String::new(),
                    Ok(t) => json!({ "id": t.id, "task": t.ques, "url": t.web }).to_string(),
                    Err(e) => {
                        errors.push(LineError {
                            line: i + 1,
                            message: format!("not a WebVoyager task: {e}"),
                        });
                        String::new()
                    }
                };
                lines.push(task);
            }
            if !errors.is_empty() {
                // Every bad line at once: the tasks' own problems too.
                if let Err(TasksError::Lines { errors: more, .. }) = parse_tasks(
                    &lines.join("\n"),
                    &file,
                    path.parent().unwrap_or(Path::new(".")),
                    suite_files(local),
                ) {
                    errors.extend(more);
                    errors.sort_by_key(|e| e.line);
                }
                return Err(TasksError::Lines { file, errors });
            }
            lines
        }
        SuiteFormat::OnlineMind2Web => {
            let tasks: Vec<OnlineMind2WebTask> =
                serde_json::from_str(&text).map_err(|e| TasksError::Lines {
                    file: file.clone(),
                    errors: vec![LineError {
                        line: e.line(),
                        message: format!("not an Online-Mind2Web task array: {e}"),
                    }],
                })?;
            tasks
                .into_iter()
                .map(|t| {
                    json!({ "id": t.task_id, "task": t.confirmed_task, "url": t.website })
                        .to_string()
                })
                .collect()
        }
    };
    parse_tasks(
        &lines.join("\n"),
        &file,
        path.parent().unwrap_or(Path::new(".")),
        suite_files(local),
    )
}

/// The local files a suite's tasks may open: none, unless any (`--local-files`).
fn suite_files(local: LocalFiles) -> LocalFiles {
    match local {
        LocalFiles::Any => LocalFiles::Any,
        _ => LocalFiles::Refused,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suite_names_are_read_and_others_refused() {
        assert_eq!("webvoyager".parse(), Ok(SuiteFormat::WebVoyager));
        assert_eq!("online-mind2web".parse(), Ok(SuiteFormat::OnlineMind2Web));
        assert!("mind2web".parse::<SuiteFormat>().is_err());
    }
}
