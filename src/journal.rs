//! The run directory: `runs/<timestamp>-<slug>/` (or a directory given), with
//! `journal.jsonl`, one JSON record per line (a `start`, one `step` per step,
//! an `end`), and each step's marked screenshot, `step-001.png`, … Every record
//! is flushed and synced as it is written, so a crash never loses the steps
//! before it. The replay brain reads it back.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;

use crate::clock::utc_stamp;
use crate::safety::Secrets;

/// The journal's file name inside a run directory.
pub const JOURNAL: &str = "journal.jsonl";

/// Errors of the run directory.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// The directory or a file in it could not be written.
    #[error("cannot write the run directory {path}: {cause}")]
    Write {
        /// What was written.
        path: PathBuf,
        /// Why it failed.
        cause: std::io::Error,
    },
    /// A record could not be serialized (never expected; kept for honesty).
    #[error("cannot serialize a journal record: {0}")]
    Serialize(serde_json::Error),
}

// Written out, not `#[from]`: the message says the cause, so it is not the source too.
impl From<serde_json::Error> for JournalError {
    fn from(e: serde_json::Error) -> Self {
        JournalError::Serialize(e)
    }
}

/// An open run directory.
#[derive(Debug)]
pub struct Journal {
    dir: PathBuf,
    file: File,
    /// Secret values never reach the disk: replaced by their placeholders.
    secrets: Secrets,
}

impl Journal {
    /// Creates `dir` (which may exist, empty or not) and its journal.
    pub fn create(dir: &Path) -> Result<Journal, JournalError> {
        let fail = |source| JournalError::Write {
            path: dir.to_path_buf(),
            cause: source,
        };
        std::fs::create_dir_all(dir).map_err(fail)?;
        let path = dir.join(JOURNAL);
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|cause| JournalError::Write { path, cause })?;
        Ok(Journal {
            dir: dir.to_path_buf(),
            file,
            secrets: Secrets::default(),
        })
    }

    /// A new directory under `root` named after the time and the task.
    pub fn create_in(root: &Path, task: &str) -> Result<Journal, JournalError> {
        let base = format!("{}-{}", utc_stamp(SystemTime::now()), slug(task));
        let mut dir = root.join(&base);
        let mut n = 2;
        while dir.exists() {
            dir = root.join(format!("{base}-{n}"));
            n += 1;
        }
        Journal::create(&dir)
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Redacts these secrets from every record written from now on.
    pub fn redact(&mut self, secrets: Secrets) {
        self.secrets = secrets;
    }

    /// Appends one record as a line, flushed and synced.
    pub fn write(&mut self, record: &impl Serialize) -> Result<(), JournalError> {
        let mut line = serde_json::to_vec(&self.secrets.redacted_json(record)?)?;
        line.push(b'\n');
        let path = self.dir.join(JOURNAL);
        self.file
            .write_all(&line)
            .and_then(|()| self.file.flush())
            .and_then(|()| self.file.sync_data())
            // Mirrored to the worker that runs this session, if one does,
            // before the run goes on (what it records is about to happen).
            .and_then(|()| crate::mirror::send(crate::mirror::FrameKind::Line, "", &line))
            .map_err(|cause| JournalError::Write { path, cause })
    }

    /// Saves a step's image and returns its file name.
    pub fn save_image(&self, step: usize, ext: &str, bytes: &[u8]) -> Result<String, JournalError> {
        self.save_file(format!("step-{step:03}.{ext}"), bytes)
    }

    /// Saves the close look (`ZOOM`) a step showed; returns its file name.
    pub fn save_close_look(&self, step: usize, bytes: &[u8]) -> Result<String, JournalError> {
        self.save_file(format!("step-{step:03}-zoom.png"), bytes)
    }

    fn save_file(&self, name: String, bytes: &[u8]) -> Result<String, JournalError> {
        let path = self.dir.join(&name);
        std::fs::write(&path, bytes)
            .and_then(|()| crate::mirror::send(crate::mirror::FrameKind::File, &name, bytes))
            .map_err(|cause| JournalError::Write { path, cause })?;
        Ok(name)
    }
}

/// Reads a journal's records (lines that do not parse, such as a line cut by
/// a crash, are skipped).
pub fn read_records(dir: &Path) -> Result<Vec<serde_json::Value>, std::io::Error> {
    let path = dir.join(JOURNAL);
    // A FIFO or a device in its place would be waited on, or read without end.
    if !std::fs::metadata(&path)?.is_file() {
        return Err(std::io::Error::other(format!(
            "{} is not a regular file",
            path.display()
        )));
    }
    let text = std::fs::read_to_string(&path)?;
    Ok(text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect())
}

/// A file-name-safe slug of the task: lower-case words joined by `-`, bounded.
pub fn slug(task: &str) -> String {
    let mut out = String::new();
    for word in task
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let word = word.to_lowercase();
        if out.len() + word.len() + 1 > 40 {
            break;
        }
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(&word);
    }
    if out.is_empty() {
        "run".into()
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs() {
        assert_eq!(
            slug("Find the pricing of each npm plan!"),
            "find-the-pricing-of-each-npm-plan"
        );
        assert_eq!(slug("???"), "run");
        assert!(slug(&"word ".repeat(50)).len() <= 40);
    }

    #[test]
    fn records_survive_a_cut_last_line() {
        let dir = tempfile::tempdir().unwrap();
        let mut j = Journal::create(dir.path()).unwrap();
        j.write(&serde_json::json!({"kind": "start"})).unwrap();
        j.write(&serde_json::json!({"kind": "step", "step": 1}))
            .unwrap();
        drop(j);
        let mut f = OpenOptions::new()
            .append(true)
            .open(dir.path().join(JOURNAL))
            .unwrap();
        f.write_all(b"{\"kind\": \"step\", \"st").unwrap();
        let records = read_records(dir.path()).unwrap();
        assert_eq!(records.len(), 2);
        assert_eq!(records[1]["step"], 1);
    }
}
