//! Why a run could not start, or what it goes through could not be set up.

use crate::brain::BrainError;
use crate::journal::JournalError;

/// Errors that keep a run from starting. Once it runs, every ending is a
/// [`RunResult`](super::RunResult).
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The builder lacks something.
    #[error("{0}")]
    Config(String),
    /// No model, or an unusable one.
    #[error(transparent)]
    Brain(#[from] BrainError),
    /// The run directory could not be written.
    #[error(transparent)]
    Journal(#[from] JournalError),
}

/// Why what a run goes through (its domain guard, its recorded site) could
/// not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The guard's proxy could not listen.
    #[error("the domain guard could not start: {0}")]
    Guard(std::io::Error),
    /// The start page is outside the domain policy.
    #[error("the start URL is refused by the domain policy: {0}")]
    StartRefused(String),
    /// The recording could not be opened or begun.
    #[error("{0}")]
    Site(crate::site::SiteError),
}
