//! `results.jsonl`: one line per finished run, appended and synced as each
//! run ends, so that a batch cut short keeps what it did and `--resume` skips
//! it; read back for the summary and by `--merge`.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::score::Score;
use crate::agent::RunStatus;
use crate::brain::Usage;

/// The results file's name in a batch directory.
pub const RESULTS: &str = "results.jsonl";

/// One finished run of a batch: a line of `results.jsonl`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The task's id.
    pub id: String,
    /// Which of the task's runs (1 to `--repeat`).
    pub attempt: usize,
    /// The task's place in the suite (0-based: its line among the tasks),
    /// which orders the summary.
    #[serde(default)]
    pub position: usize,
    /// The task, in plain words.
    pub task: String,
    /// Whether the run passed its check (or, without one, ended done).
    pub passed: bool,
    /// How it was scored.
    pub verdict: Score,
    /// How the run ended.
    pub status: RunStatus,
    /// Why it ended.
    pub reason: String,
    /// What the model answered.
    #[serde(default)]
    pub answer: Option<String>,
    /// The answer as data, with a schema.
    #[serde(default)]
    pub data: Option<serde_json::Value>,
    /// Steps taken.
    pub steps: usize,
    /// Tokens in and out.
    pub tokens: Usage,
    /// USD, when the model's price is known.
    #[serialize_always]
    pub cost_usd: Option<f64>,
    /// Seconds the run took.
    pub wall_time_s: f64,
    /// The model.
    pub model: String,
    /// The run directory, relative to the batch directory (absolute in a merge).
    pub run_dir: PathBuf,
    /// Its report, when one was written.
    #[serde(default)]
    pub report: Option<PathBuf>,
    /// The browser it ran in (the binary launched, or the DevTools URL),
    /// when it had a page.
    #[serde(default)]
    pub browser: Option<String>,
    /// The files the run downloaded (their paths in the batch directory).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub downloads: Vec<crate::files::DownloadedFile>,
    /// What the judge model said of the run, when it was asked.
    #[serde(default)]
    pub judge: Option<crate::records::JudgeReport>,
    /// When it ended, RFC 3339 UTC.
    pub finished: String,
    /// How many times the model was asked: its steps, less those done from
    /// a skill. `None` in results written before it was kept.
    #[serde(default)]
    pub model_calls: Option<usize>,
}

impl RunRecord {
    /// Its model calls; a record that did not keep them counts a call a step.
    pub fn calls(&self) -> usize {
        self.model_calls.unwrap_or(self.steps)
    }

    /// `id#attempt`, as the summary names a run.
    pub fn name(&self) -> String {
        format!("{}#{}", self.id, self.attempt)
    }
}

/// The records of a results file, and the lines that were no record (a line
/// cut by a crash), each with its number.
pub fn read(dir: &Path) -> Result<(Vec<RunRecord>, Vec<String>), std::io::Error> {
    let text = match std::fs::read_to_string(dir.join(RESULTS)) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e),
    };
    let mut records = Vec::new();
    let mut problems = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<RunRecord>(line) {
            Ok(r) => records.push(r),
            Err(e) => problems.push(format!(
                "{}: line {} is no run record and was skipped ({e})",
                dir.join(RESULTS).display(),
                i + 1
            )),
        }
    }
    Ok((records, problems))
}

/// The runs a results file holds, as `(id, attempt)`.
pub fn finished(records: &[RunRecord]) -> HashSet<(String, usize)> {
    records.iter().map(|r| (r.id.clone(), r.attempt)).collect()
}

/// The results file, open for appending.
#[derive(Debug)]
pub struct ResultsFile {
    path: PathBuf,
    file: File,
}

impl ResultsFile {
    /// Opens (or creates) the batch directory's results file.
    pub fn open(dir: &Path) -> Result<ResultsFile, std::io::Error> {
        let path = dir.join(RESULTS);
        let mut file = OpenOptions::new().create(true).append(true).open(&path)?;
        // A line a crash cut short must not swallow the next record.
        let len = file.metadata()?.len();
        if len > 0 && !ends_with_newline(&path)? {
            file.write_all(b"\n")?;
        }
        Ok(ResultsFile { path, file })
    }

    /// Appends one line (a record, already serialized), flushed and synced.
    pub fn append(&mut self, line: &str) -> Result<(), std::io::Error> {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        self.file.write_all(&bytes)?;
        self.file.flush()?;
        self.file.sync_data()
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn ends_with_newline(path: &Path) -> Result<bool, std::io::Error> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = File::open(path)?;
    f.seek(SeekFrom::End(-1))?;
    let mut last = [0u8; 1];
    f.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_line_is_skipped_and_the_next_record_starts_on_its_own_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(RESULTS), "{\"id\": \"a\", \"att").unwrap();
        let mut file = ResultsFile::open(dir.path()).unwrap();
        let record = RunRecord {
            judge: None,
            id: "b".into(),
            attempt: 1,
            position: 0,
            task: "t".into(),
            passed: true,
            verdict: Score {
                check: "ending".into(),
                passed: true,
                detail: "the run ended done".into(),
            },
            status: RunStatus::Done,
            reason: "done".into(),
            answer: None,
            data: None,
            steps: 1,
            tokens: Usage::default(),
            cost_usd: None,
            wall_time_s: 1.0,
            model: "m".into(),
            run_dir: "runs/b/1".into(),
            report: None,
            browser: None,
            downloads: Vec::new(),
            finished: "2026-12-02T00:00:00Z".into(),
            model_calls: Some(1),
        };
        file.append(&serde_json::to_string(&record).unwrap())
            .unwrap();
        let (records, problems) = read(dir.path()).unwrap();
        assert_eq!(records, vec![record]);
        assert_eq!(problems.len(), 1);
        assert!(
            problems[0].contains("line 1 is no run record"),
            "{problems:?}"
        );
    }
}
