//! What an MCP session leaves in its run directory: each call that acts as
//! a step of a run, the browser's state, and the session's end.

use std::path::PathBuf;
use std::time::Duration;

use crate::agent::{self, RunResult, RunStatus, StepRecord, StepTimings};
use crate::browser::Session;
use crate::commands::Step;
use crate::records::{BatchReport, StepMark};
use crate::storage::StorageState;

use super::desk::Desk;

impl Desk {
    pub(super) fn journal_step(
        &mut self,
        answer: &str,
        steps: &[Step],
        report: &BatchReport,
        act_ms: f64,
        skill: Option<StepMark>,
    ) {
        self.steps += 1;
        let shown = self.shown.take().unwrap_or_default();
        let record = StepRecord {
            answer: Some(answer.to_string()),
            commands: steps.iter().map(|s| s.to_string()).collect(),
            report: Some(report.clone()),
            skill,
            timings: StepTimings {
                act_ms,
                ..StepTimings::default()
            },
            ..StepRecord::new(self.steps, shown)
        };
        if let Err(e) = self.journal.write(&record) {
            tracing::warn!("the session's journal could not be written: {e}");
        }
        for file in report.downloads.iter().filter_map(|d| d.saved.clone()) {
            let record = crate::records::DownloadRecord {
                kind: "download",
                step: self.steps,
                file: file.clone(),
            };
            if let Err(e) = self.journal.write(&record) {
                tracing::warn!("the session's journal could not be written: {e}");
            }
            self.downloads.push(file);
        }
        for checkpoint in &report.checkpoints {
            let checkpoint = crate::records::CheckpointRecord {
                step: self.steps,
                ..checkpoint.clone()
            };
            if let Err(e) = self.journal.write(&checkpoint) {
                tracing::warn!("the session's journal could not be written: {e}");
            }
        }
    }

    /// Writes the browser's state to `--save-storage-state`'s file, when
    /// asked; one that cannot be written is said in the log, and costs the
    /// session nothing else.
    async fn save_state(&mut self, session: &Session) {
        let Some(path) = &self.options.save_storage_state else {
            return;
        };
        let saved = match tokio::time::timeout(
            Duration::from_secs(10),
            StorageState::capture(session, &mut self.local_storage),
        )
        .await
        {
            Ok(Ok(state)) => state.write(path, &self.options.act.secrets),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(crate::storage::StorageError::Browser("read in 10 s".into())),
        };
        match saved {
            Ok(()) => tracing::info!("the browser's state was saved to {}", path.display()),
            Err(e) => tracing::warn!("the storage state was not saved: {e}"),
        }
    }

    /// Ends the session: the end record, the report, the browser closed.
    /// Once: a desk already finished is left as it is.
    pub async fn finish(&mut self) -> PathBuf {
        if std::mem::replace(&mut self.finished, true) {
            return self.dir();
        }
        agent::drop_empty_downloads(&self.dir());
        let result = RunResult {
            success: true,
            status: RunStatus::Done,
            answer: None,
            reason: "the MCP session ended".into(),
            steps: self.steps,
            tokens: Default::default(),
            cost_usd: None,
            run_dir: self.dir(),
            wall_time_s: self.started.elapsed().as_secs_f64(),
            model: "mcp client".into(),
            divergences: Vec::new(),
            data: None,
            prompt_tokens: Vec::new(),
            report: None,
            skill: None,
            downloads: self.downloads.clone(),
            judge: None,
            site: None,
        };
        if let Some(s) = self.session.take() {
            self.save_state(&s).await;
            let _ = tokio::time::timeout(Duration::from_secs(10), s.close()).await;
        }
        let result = RunResult {
            site: self.site.as_ref().and_then(|hold| {
                hold.finish(&self.dir())
                    .map_err(|e| tracing::warn!("the session's site was not kept: {e}"))
                    .ok()
            }),
            ..result
        };
        if let Err(e) = agent::write_end(&mut self.journal, result, true) {
            tracing::warn!("the session's end could not be written: {e}");
        }
        self.dir()
    }
}
