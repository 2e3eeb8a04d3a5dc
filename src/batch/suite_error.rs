//! Why a suite seamark serves itself (MiniWoB++, WebGames) cannot be served
//! or read.

use std::path::PathBuf;

/// Why a suite seamark serves itself cannot be served or read.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// A folder that holds no MiniWoB++ checkout.
    #[error(
        "{} is not a MiniWoB++ checkout: no core/core.js beside a miniwob/ folder of task \
         pages in it, in html/ or in miniwob/html/",
        .0.display()
    )]
    NotMiniwob(PathBuf),
    /// A folder that holds no WebGames build.
    #[error(
        "{} is no WebGames folder: it needs site/index.html (the built app) and tasks.jsonl",
        .0.display()
    )]
    NotWebGames(PathBuf),
    /// Its pages cannot be served.
    #[error("cannot serve {}: {cause}", .dir.display())]
    Serve {
        /// The folder.
        dir: PathBuf,
        /// Why.
        cause: std::io::Error,
    },
    /// Its task file cannot be read.
    #[error("cannot read {}: {cause}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        cause: std::io::Error,
    },
    /// A line of its task file that is no task.
    #[error("{} line {line}: {why}", .file.display())]
    Line {
        /// The file.
        file: PathBuf,
        /// The line (1-based).
        line: usize,
        /// What is wrong with it.
        why: String,
    },
    /// Tasks asked for that the suite does not have.
    #[error("no {suite} task named {} in {} ({has})", .names.iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", "), .place.display())]
    Unknown {
        /// The suite.
        suite: &'static str,
        /// The names asked for that it lacks.
        names: Vec<String>,
        /// Where its tasks are.
        place: PathBuf,
        /// What it has (`it has: a, b` or `it has 12 tasks`).
        has: String,
    },
    /// An episode that could not be started to read its instruction.
    #[error("MiniWoB++ task {name} (seed {seed}): {why}")]
    Episode {
        /// The task.
        name: String,
        /// The seed.
        seed: usize,
        /// What went wrong.
        why: String,
    },
}
