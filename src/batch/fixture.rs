//! A run becomes a fixture: its task, start page and checks as a line of a
//! tasks file, beside the recording of the site it ran on (`--record-site`),
//! so that `seamark batch` runs it again offline, as often as asked.
//!
//! A folder of fixtures is one `tasks.jsonl` and one folder per fixture
//! holding its `site.har`; a fixture made again under the same id replaces
//! its line.

use std::path::{Path, PathBuf};

use super::task::{valid_id, TaskSpec};
use crate::journal::read_records;
use crate::records::{RunResult, StartRecord};
use crate::site::HAR_FILE;

/// The tasks file of a folder of fixtures.
pub const FIXTURES_TASKS: &str = "tasks.jsonl";

/// Why a run cannot become a fixture.
#[derive(Debug, thiserror::Error)]
pub enum FixtureError {
    /// The folder holds no run seamark can read.
    #[error("{dir} holds no run: {reason}")]
    NoRun {
        /// The folder.
        dir: PathBuf,
        /// Why.
        reason: String,
    },
    /// The run did not record its site.
    #[error(
        "{0} has no {HAR_FILE}: the run did not record the site; run it again with --record-site"
    )]
    NotRecorded(PathBuf),
    /// The id asked for cannot name a task.
    #[error("--id: {0}")]
    Id(super::task::IdError),
    /// Writing the fixture failed.
    #[error("cannot write the fixture into {dir}: {cause}")]
    Write {
        /// The folder.
        dir: PathBuf,
        /// Why.
        cause: std::io::Error,
    },
}

/// A fixture made from a run.
#[derive(Debug, Clone)]
pub struct Fixture {
    /// Its line, as written.
    pub line: TaskSpec,
    /// The tasks file the line is in.
    pub tasks: PathBuf,
    /// Its recording.
    pub har: PathBuf,
    /// What a person should know of it: how it is scored.
    pub notes: Vec<String>,
}

/// The environment variable a fixture's secret `name` is read from.
pub fn secret_variable(name: &str) -> String {
    format!("SECRET_{}", name.to_ascii_uppercase())
}

/// An id from a run directory's name: its letters, digits, `.`, `_` and
/// `-`, the rest as `-`.
fn id_of(dir: &Path) -> String {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let id: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .take(100)
        .collect();
    let id = id.trim_start_matches('.').to_string();
    if id.is_empty() {
        "fixture".into()
    } else {
        id
    }
}

/// What a fixture of a run with no check is told: how its runs are scored.
fn unchecked_note(result: Option<&RunResult>) -> String {
    match result.and_then(|r| r.judge.as_ref()) {
        Some(judge) => format!(
            "the run had no check; {} judged it {}: run the fixture with --judge {} to \
             have each run judged again, and scored by the verdict",
            judge.model,
            judge.verdict.map_or("with no verdict", |v| v.word()),
            judge.model
        ),
        None => "the run had no check: the fixture passes when a run ends done; add a \
                 check to its line to ask more"
            .into(),
    }
}

/// Puts `line` in the fixtures' task file, in place of the line of task `id`
/// if there is one.
fn put_line(tasks: &Path, id: &str, line: String) -> std::io::Result<()> {
    let mut lines: Vec<String> = match std::fs::read_to_string(tasks) {
        Ok(text) => text
            .lines()
            .filter(|l| {
                serde_json::from_str::<serde_json::Value>(l)
                    .map_or(true, |v| v["id"].as_str() != Some(id))
            })
            .filter(|l| !l.trim().is_empty())
            .map(str::to_string)
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e),
    };
    lines.push(line);
    std::fs::write(tasks, lines.join("\n") + "\n")
}

/// Makes the run in `run_dir` a fixture in the folder `out`, under `id`
/// (else the run directory's name).
pub fn make_fixture(run_dir: &Path, out: &Path, id: Option<&str>) -> Result<Fixture, FixtureError> {
    let no_run = |reason: String| FixtureError::NoRun {
        dir: run_dir.to_path_buf(),
        reason,
    };
    let records = read_records(run_dir).map_err(|e| no_run(e.to_string()))?;
    let of_kind = |kind: &'static str| records.iter().filter(move |r| r["kind"] == kind);
    let start: StartRecord = of_kind("start")
        .next()
        .ok_or_else(|| no_run("its journal has no start record".into()))
        .and_then(|r| {
            serde_json::from_value(r.clone()).map_err(|e| no_run(format!("its start: {e}")))
        })?;
    let result: Option<RunResult> = of_kind("end")
        .next_back()
        .and_then(|r| serde_json::from_value(r["result"].clone()).ok());
    let recorded = run_dir.join(HAR_FILE);
    // A run killed outright left its entries, not its HAR: it is written now.
    if !recorded.is_file() {
        if let Some(rebuilt) = crate::site::rebuild(run_dir) {
            rebuilt.map_err(|e| no_run(e.to_string()))?;
        }
    }
    if !recorded.is_file() {
        return Err(FixtureError::NotRecorded(run_dir.to_path_buf()));
    }
    // The run's own file, and a recording: a link could name any file of
    // this machine, and the fixtures folder is meant to be committed.
    let linked = std::fs::symlink_metadata(&recorded).is_ok_and(|m| m.file_type().is_symlink());
    if linked {
        return Err(no_run(format!(
            "its {HAR_FILE} is a link; a fixture copies only a run's own recording"
        )));
    }
    crate::site::read_har(&recorded).map_err(|e| no_run(e.to_string()))?;
    let id = match id {
        Some(id) => {
            valid_id(id).map_err(FixtureError::Id)?;
            id.to_string()
        }
        None => id_of(run_dir),
    };
    let (expect, secrets) = start
        .policy
        .map(|p| (p.expect, p.secrets))
        .unwrap_or_default();
    let url = crate::start_url::to_url(&start.url).unwrap_or(start.url);
    let mut notes = Vec::new();
    if expect.is_empty() {
        notes.push(unchecked_note(result.as_ref()));
    }
    let line = TaskSpec {
        id: id.clone(),
        task: start.task,
        url,
        expect,
        max_steps: Some(start.max_steps),
        secrets: secrets
            .iter()
            .map(|name| format!("{name}=env:{}", secret_variable(name)))
            .collect(),
        site: Some(format!("{id}/{HAR_FILE}")),
        fixed_clock: Some("recording".into()),
        ..TaskSpec::default()
    };
    let write = |source| FixtureError::Write {
        dir: out.to_path_buf(),
        cause: source,
    };
    let own = out.join(&id);
    std::fs::create_dir_all(&own).map_err(write)?;
    let har = own.join(HAR_FILE);
    std::fs::copy(&recorded, &har).map_err(write)?;
    let tasks = out.join(FIXTURES_TASKS);
    let text = serde_json::to_string(&line).map_err(|e| write(std::io::Error::other(e)))?;
    put_line(&tasks, &id, text).map_err(write)?;
    Ok(Fixture {
        line,
        tasks,
        har,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_directory_names_its_fixture_with_what_an_id_may_hold() {
        assert_eq!(
            id_of(Path::new("runs/20261206-150101-sign in & send")),
            "20261206-150101-sign-in---send"
        );
        assert_eq!(id_of(Path::new("/")), "fixture");
        assert_eq!(secret_variable("desk_pw"), "SECRET_DESK_PW");
    }

    #[test]
    fn a_run_that_was_not_recorded_is_told_how_to_be() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        std::fs::create_dir_all(&run).unwrap();
        let err = make_fixture(&run, dir.path(), None).unwrap_err();
        assert!(err.to_string().contains("holds no run"), "{err}");
        std::fs::write(
            run.join(crate::journal::JOURNAL),
            "{\"kind\":\"start\",\"task\":\"t\",\"url\":\"http://x.test/\",\"model\":\"m\",\
             \"started\":\"2026-01-01T00:00:00Z\",\"seamark\":\"0\",\"max_steps\":3}\n",
        )
        .unwrap();
        let err = make_fixture(&run, dir.path(), None).unwrap_err();
        assert!(err.to_string().contains("--record-site"), "{err}");
        // A link out of the run, and a file that is no HAR, are refused.
        std::os::unix::fs::symlink("/etc/passwd", run.join(HAR_FILE)).unwrap();
        let err = make_fixture(&run, dir.path(), None).unwrap_err();
        assert!(err.to_string().contains("is a link"), "{err}");
        std::fs::remove_file(run.join(HAR_FILE)).unwrap();
        std::fs::write(run.join(HAR_FILE), "root:x:0:0").unwrap();
        let err = make_fixture(&run, dir.path(), None).unwrap_err();
        assert!(err.to_string().contains("not a HAR 1.2 recording"), "{err}");
    }

    #[test]
    fn a_journal_that_is_a_fifo_is_refused_not_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join(crate::journal::JOURNAL);
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo(3) on a path of our own.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let err = make_fixture(dir.path(), &dir.path().join("out"), None).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }
}
