//! WebGames (Convergence's public suite of web challenges, "easy for
//! humans, hard for agents") as a batch: its built app served on 127.0.0.1
//! as it wants to be (every path that is not a file answers `index.html`;
//! `POST /api/…` answers `200 {}`), and its task file (JSON lines of
//! `id`, `path`, `description`, `password`, …) read into tasks. Each task
//! is its description and the request to give the password the page shows
//! when it is solved; a run passes when its answer holds the password.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::suite_error::SuiteError;
use super::task::{Check, TaskSpec};
use crate::serve::StaticServer;

/// One challenge of the task file, as published (other fields ignored).
#[derive(Debug, Deserialize)]
struct Challenge {
    id: String,
    path: String,
    description: String,
    password: String,
}

/// A WebGames folder being served: `site/` (the built app) and
/// `tasks.jsonl`.
#[derive(Debug)]
pub struct ServedWebGames {
    /// The folder given.
    pub root: PathBuf,
    server: StaticServer,
}

/// What every task adds to its challenge's description.
pub const ASK_FOR_PASSWORD: &str =
    "When the challenge is solved, the page shows a password: give it with ANSWER.";

impl ServedWebGames {
    /// Serves the app of the WebGames folder `dir` (its `site/`).
    pub async fn serve(dir: &Path) -> Result<ServedWebGames, SuiteError> {
        let site = dir.join("site");
        if !site.join("index.html").is_file() || !dir.join("tasks.jsonl").is_file() {
            return Err(SuiteError::NotWebGames(dir.to_path_buf()));
        }
        let server = StaticServer::start_app(site.clone())
            .await
            .map_err(|cause| SuiteError::Serve {
                dir: site.clone(),
                cause,
            })?;
        Ok(ServedWebGames {
            root: dir.to_path_buf(),
            server,
        })
    }

    /// The tasks: `only` these ids (all when empty; an unknown id is an
    /// error that names the known ones' count), in the file's order.
    pub fn tasks(&self, only: &[String]) -> Result<Vec<TaskSpec>, SuiteError> {
        let file = self.root.join("tasks.jsonl");
        let text = std::fs::read_to_string(&file).map_err(|cause| SuiteError::Read {
            path: file.clone(),
            cause,
        })?;
        let bad_line = |line: usize, why: String| SuiteError::Line {
            file: file.clone(),
            line,
            why,
        };
        let mut all = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let mut c: Challenge = serde_json::from_str(line)
                .map_err(|e| bad_line(i + 1, format!("not a WebGames task: {e}")))?;
            // An id is a run directory's name: `maze/*` (a route's pattern)
            // becomes `maze`.
            c.id =
                c.id.split(|ch: char| !(ch.is_ascii_alphanumeric() || "._-".contains(ch)))
                    .filter(|part| !part.is_empty())
                    .collect::<Vec<_>>()
                    .join("-");
            super::task::valid_id(&c.id).map_err(|e| bad_line(i + 1, e.to_string()))?;
            all.push(c);
        }
        let unknown: Vec<String> = only
            .iter()
            .filter(|id| !all.iter().any(|c| &c.id == *id))
            .cloned()
            .collect();
        if !unknown.is_empty() {
            return Err(SuiteError::Unknown {
                suite: "WebGames",
                names: unknown,
                place: file,
                has: format!("it has {} tasks", all.len()),
            });
        }
        Ok(all
            .into_iter()
            .filter(|c| only.is_empty() || only.contains(&c.id))
            .map(|c| TaskSpec {
                task: format!(
                    "{}{} {ASK_FOR_PASSWORD}",
                    c.description.trim(),
                    if c.description.trim().ends_with(['.', '!', '?']) {
                        ""
                    } else {
                        "."
                    }
                ),
                // `maze/*`: the route's pattern; its start is `maze`.
                url: self.server.url(c.path.trim_end_matches("/*")),
                check: Some(Check::AnswerContains(c.password)),
                id: c.id,
                ..TaskSpec::default()
            })
            .collect())
    }
}
