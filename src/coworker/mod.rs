//! `seamark serve`: sessions that outlast a process. A session is a task
//! with its options, its state and the run directory that is its journal,
//! kept in a database (a SQLite file, or PostgreSQL shared by many
//! machines). Workers take sessions under a lease they renew and run each
//! as a `seamark run` (or `seamark resume`) process of its own; a question
//! to a person parks the session with nothing held; a lease that lapses
//! lets another worker go on from the journal.

pub mod accounts;
pub mod api;
pub mod client;
pub mod http;
pub mod kept_browser;
mod live_view;
pub mod page;
pub mod request;
pub mod runs;
pub mod skills;
pub mod store;
pub mod worker;

use serde::{Deserialize, Serialize};

pub use accounts::{Account, AccountSpec};
pub use client::Client;
pub use request::{OptionKind, OptionSpec, SessionRequest};
pub use skills::ServedSkill;
pub use store::Store;
pub use worker::{Worker, WorkerConfig};

/// Where a session is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionState {
    /// Waiting for a worker.
    Queued,
    /// A worker runs it, under a lease.
    Active,
    /// Waiting for a person: a question, or a destructive action to approve.
    Waiting,
    /// The task was done.
    Done,
    /// The run failed, ran out of budget, or was not verified.
    Failed,
    /// A person stopped it, or the model stopped at an impasse.
    Stopped,
    /// A step was cut off and what it did cannot be checked: a person must
    /// look before anything runs again.
    Review,
}

impl SessionState {
    /// The word stored and shown.
    pub fn word(self) -> &'static str {
        match self {
            SessionState::Queued => "queued",
            SessionState::Active => "active",
            SessionState::Waiting => "waiting",
            SessionState::Done => "done",
            SessionState::Failed => "failed",
            SessionState::Stopped => "stopped",
            SessionState::Review => "review",
        }
    }

    /// The state a stored word names.
    pub fn from_word(word: &str) -> Option<SessionState> {
        [
            SessionState::Queued,
            SessionState::Active,
            SessionState::Waiting,
            SessionState::Done,
            SessionState::Failed,
            SessionState::Stopped,
            SessionState::Review,
        ]
        .into_iter()
        .find(|s| s.word() == word)
    }

    /// Whether nothing more happens to the session.
    pub fn ended(self) -> bool {
        matches!(
            self,
            SessionState::Done
                | SessionState::Failed
                | SessionState::Stopped
                | SessionState::Review
        )
    }
}

impl std::fmt::Display for SessionState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.word())
    }
}

/// A session, as the API gives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    /// Its id.
    pub id: String,
    /// Where it is.
    pub status: SessionState,
    /// The task, in plain words.
    pub task: String,
    /// The start URL.
    pub url: String,
    /// The account it runs as, if any.
    #[serde(default)]
    pub account: Option<String>,
    /// The run options, named as `seamark run`'s flags in snake case.
    pub options: serde_json::Map<String, serde_json::Value>,
    /// Why it is where it is (the last state change's reason).
    pub reason: String,
    /// The question it waits on (state `waiting`).
    pub question: Option<String>,
    /// The destructive action it waits on a yes or a no for, when the
    /// question is one.
    pub hold: Option<serde_json::Value>,
    /// The person's last answer (a secret one is never kept: `!(secret)`).
    pub answer: Option<String>,
    /// The run's result, when it ended (`seamark run --json`'s object).
    pub result: Option<serde_json::Value>,
    /// The run directory: the session's journal.
    pub run_dir: String,
    /// Steps taken so far.
    pub steps: i64,
    /// USD spent so far, when the model's price is known.
    pub cost_usd: Option<f64>,
    /// The worker that holds it (state `active`).
    pub worker: Option<String>,
    /// How many times a worker took it.
    pub attempts: i64,
    /// When it was submitted (RFC 3339, UTC).
    pub created: String,
    /// When it last changed.
    pub updated: String,
    /// Since when it waits (state `waiting`).
    pub waiting_since: Option<String>,
    /// Where its browser is shown live on this server, while its run has
    /// a live view (its path).
    #[serde(default)]
    pub live: Option<String>,
}

/// A state change of a session, with its time and reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionEvent {
    /// Its number, rising over all sessions.
    pub seq: i64,
    /// The session.
    pub session: String,
    /// When (RFC 3339, UTC, to the millisecond).
    pub at: String,
    /// When, in milliseconds since the Unix epoch.
    pub at_ms: i64,
    /// The state it went to, or `step` for a step taken.
    pub state: String,
    /// Why.
    pub reason: String,
}

/// What went wrong with a session or its store.
#[derive(Debug, thiserror::Error)]
pub enum CoworkerError {
    /// The database.
    #[error("the session database: {0}")]
    Db(sqlx::Error),
    /// No session has this id.
    #[error("no session {0}")]
    NotFound(String),
    /// The session is not in a state that allows this.
    #[error("{0}")]
    Conflict(String),
    /// The request is wrong, and why.
    #[error("{0}")]
    BadRequest(String),
    /// A stored row that cannot be read (the raw value kept).
    #[error("a stored session cannot be read: {0}")]
    Corrupt(String),
}

// Written out, not `#[from]`: the message says the cause, so it is not the source too.
impl From<sqlx::Error> for CoworkerError {
    fn from(e: sqlx::Error) -> Self {
        CoworkerError::Db(e)
    }
}
