//! What a batch did: its records and summary, written into its directory,
//! and the results of shards merged into one.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::options::BatchError;
use super::{results, RunRecord, Summary, RESULTS, SUMMARY_JSON, SUMMARY_MD};

/// What a batch did.
#[derive(Debug, Clone)]
pub struct BatchOutcome {
    /// The batch directory.
    pub dir: PathBuf,
    /// Every finished run of the batch directory (earlier ones of a resumed
    /// batch too), in the order they finished.
    pub records: Vec<RunRecord>,
    /// Their summary (also in `summary.json` and `summary.md`).
    pub summary: Summary,
    /// Ctrl-C (the interrupt) came before every run was done.
    pub interrupted: bool,
}

impl BatchOutcome {
    /// The outcome, with its summary written to the batch directory.
    pub fn written(
        dir: PathBuf,
        records: Vec<RunRecord>,
        summary: Summary,
        interrupted: bool,
    ) -> Result<BatchOutcome, BatchError> {
        write_summary(&dir, &summary)?;
        Ok(BatchOutcome {
            dir,
            records,
            summary,
            interrupted,
        })
    }
}

/// Writes `summary.json` and `summary.md` into the batch directory.
pub fn write_summary(dir: &Path, summary: &Summary) -> Result<(), BatchError> {
    let json = serde_json::to_string_pretty(summary)
        .map_err(|e| BatchError::Dir(format!("the summary could not be made: {e}")))?;
    let title = format!(
        "seamark batch {}",
        dir.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    );
    for (name, text) in [
        (SUMMARY_JSON, json + "\n"),
        (SUMMARY_MD, summary.markdown(&title)),
    ] {
        std::fs::write(dir.join(name), text).map_err(|e| {
            BatchError::Dir(format!("cannot write {}: {e}", dir.join(name).display()))
        })?;
    }
    Ok(())
}

/// Joins the results of batch directories (the shards of one suite) into
/// `out`: one `results.jsonl` whose run directories are absolute, and its
/// summary. A run found in two directories is counted once (the first).
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<BatchOutcome, BatchError> {
    let mut records: Vec<RunRecord> = Vec::new();
    let mut seen = HashSet::new();
    for dir in dirs {
        if !dir.join(RESULTS).is_file() {
            return Err(BatchError::Dir(format!(
                "{} holds no {RESULTS}: not a batch directory",
                dir.display()
            )));
        }
        let (found, _) = results::read(dir)
            .map_err(|e| BatchError::Dir(format!("cannot read {}: {e}", dir.display())))?;
        let base = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
        for mut r in found {
            if seen.insert((r.id.clone(), r.attempt)) {
                r.run_dir = base.join(&r.run_dir);
                r.report = r.report.map(|p| base.join(p));
                records.push(r);
            }
        }
    }
    if out.join(RESULTS).exists() {
        return Err(BatchError::Dir(format!(
            "{} holds results already: merge into a new directory",
            out.display()
        )));
    }
    std::fs::create_dir_all(out)
        .map_err(|e| BatchError::Dir(format!("cannot create {}: {e}", out.display())))?;
    let mut file = results::ResultsFile::open(out)
        .map_err(|e| BatchError::Dir(format!("cannot write {}: {e}", out.display())))?;
    for r in &records {
        let line = serde_json::to_string(r)
            .map_err(|e| BatchError::Dir(format!("a record could not be written: {e}")))?;
        file.append(&line)
            .map_err(|e| BatchError::Dir(format!("cannot write {}: {e}", out.display())))?;
    }
    let summary = Summary::of(&records, 0, 0, None);
    write_summary(out, &summary)?;
    Ok(BatchOutcome {
        dir: out.to_path_buf(),
        records,
        summary,
        interrupted: false,
    })
}
