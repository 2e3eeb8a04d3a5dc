//! A batch's runs in the folder layout another suite's judge reads.
//!
//! Online-Mind2Web's WebJudge (`src/run.py` of OSU-NLP-Group/Online-Mind2Web)
//! reads, for each task, a folder named by its `task_id` holding
//! `result.json` (`task`, `action_history`, `thoughts`,
//! `final_result_response`) and `trajectory/`, the step screenshots, which
//! it orders by the first number in their names. With `--repeat K` over 1,
//! each attempt gets a folder of its own (`attempt-<k>/<task_id>/`), each a
//! whole input for the judge.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::results::RunRecord;

/// A layout seamark writes a batch's runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Export {
    /// Online-Mind2Web's, for WebJudge.
    OnlineMind2Web,
}

impl std::str::FromStr for Export {
    type Err = crate::errors::UnknownWord;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "online-mind2web" => Ok(Export::OnlineMind2Web),
            other => Err(crate::errors::UnknownWord::new(
                other,
                "--export",
                "online-mind2web",
            )),
        }
    }
}

/// Commands that are the agent's output rather than an action on the page
/// (WebJudge is told of actions only).
const OUTPUTS: &[&str] = &["COMPLETE", "ANSWER", "STOP", "ASK", "HANDS"];

/// Why a run could not be laid out for a judge.
#[derive(Debug, thiserror::Error)]
#[error("{}: {what}: {cause}", .folder.display())]
pub struct ExportError {
    /// The run's folder in the layout.
    pub folder: PathBuf,
    /// What could not be read or written there.
    pub what: String,
    /// Why.
    pub cause: std::io::Error,
}

/// Writes the runs `records` of the batch in `batch_dir` into `out`, in
/// `layout`; gives how many runs it wrote.
pub fn write(
    layout: Export,
    batch_dir: &Path,
    records: &[RunRecord],
    out: &Path,
) -> Result<usize, ExportError> {
    let Export::OnlineMind2Web = layout;
    let repeated = records.iter().any(|r| r.attempt > 1);
    for r in records {
        let folder = folder_of(out, r, repeated);
        let run_dir = match r.run_dir.is_absolute() {
            true => r.run_dir.clone(),
            false => batch_dir.join(&r.run_dir),
        };
        run_folder(r, &run_dir, &folder).map_err(|(what, cause)| ExportError {
            folder: folder.clone(),
            what,
            cause,
        })?;
    }
    Ok(records.len())
}

/// One run's folder: `result.json` and `trajectory/`.
/// On failure: what could not be read or written, and why.
fn run_folder(
    r: &RunRecord,
    run_dir: &Path,
    folder: &Path,
) -> Result<(), (String, std::io::Error)> {
    let on = |what: &str| {
        let what = what.to_string();
        move |e| (what, e)
    };
    let trajectory = folder.join("trajectory");
    std::fs::create_dir_all(&trajectory).map_err(on("trajectory"))?;
    let journal = std::fs::read_to_string(run_dir.join(crate::journal::JOURNAL))
        .map_err(on("the run's journal"))?;
    let steps: Vec<Value> = journal
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["kind"] == "step")
        .collect();
    let mut actions = Vec::new();
    let mut thoughts = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        if let Some(shot) = step["screenshot"].as_str().filter(|s| !s.is_empty()) {
            let to = trajectory.join(format!("{i}_screenshot.png"));
            std::fs::copy(run_dir.join(shot), &to).map_err(on(shot))?;
        }
        thoughts.push(step["plan"].as_str().unwrap_or_default().to_string());
        for o in step["report"]["outcomes"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            let command = o["command"].as_str().unwrap_or_default();
            let verb = command.split(':').next().unwrap_or_default();
            if OUTPUTS.contains(&verb) {
                continue;
            }
            actions.push(format!(
                "{command} → {}: {}",
                o["status"].as_str().unwrap_or_default(),
                o["message"].as_str().unwrap_or_default()
            ));
        }
    }
    let result = json!({
        "task_id": r.id,
        "task": r.task,
        "final_result_response": r.answer.clone().unwrap_or_else(|| r.reason.clone()),
        "action_history": actions,
        "thoughts": thoughts,
    });
    let text =
        serde_json::to_string_pretty(&result).map_err(|e| ("result.json".to_string(), e.into()))?;
    std::fs::write(folder.join("result.json"), text).map_err(on("result.json"))
}

/// Where the record `r`'s folder goes in `out`.
fn folder_of(out: &Path, r: &RunRecord, repeated: bool) -> PathBuf {
    match repeated {
        true => out.join(format!("attempt-{}", r.attempt)).join(&r.id),
        false => out.join(&r.id),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_names_are_read_and_others_refused() {
        assert_eq!("online-mind2web".parse(), Ok(Export::OnlineMind2Web));
        assert!("webvoyager".parse::<Export>().is_err());
    }
}
