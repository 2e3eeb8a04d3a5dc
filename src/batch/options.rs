//! How a batch runs: its directory, concurrency, repeats, shard and each
//! run's options, and why they cannot run.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

use crate::agent::AgentOptions;
use crate::brain::{Brain, BrainError};
use crate::browser::{BrowserError, Pool};

use super::TaskSpec;

/// Errors that keep a batch from running. Once it runs, every run's ending,
/// failures included, is a [`RunRecord`](crate::batch::RunRecord).
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    /// The batch directory cannot be used.
    #[error("{0}")]
    Dir(String),
    /// The browsers could not be started or reached.
    #[error(transparent)]
    Browser(#[from] BrowserError),
    /// The options do not go together.
    #[error("{0}")]
    Config(String),
}

/// Which part of a suite one machine runs: every `count`-th task from the
/// `index`-th (1-based), so that a job runner spreads a suite over machines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// 1 to `count`.
    pub index: usize,
    /// How many shards.
    pub count: usize,
}

impl Shard {
    /// Whether the task at `position` (0-based, in the file's order) is this shard's.
    pub fn holds(&self, position: usize) -> bool {
        position % self.count == self.index - 1
    }
}

/// Why a text is no shard.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    /// Not `I/N`.
    #[error("{0:?} is not a shard: write I/N, as 1/4 (the first of four)")]
    Form(String),
    /// An `I` out of `1..=N`.
    #[error("shard {0}: I must be 1 to N")]
    Range(String),
}

impl std::str::FromStr for Shard {
    type Err = ShardError;

    fn from_str(s: &str) -> Result<Self, ShardError> {
        let bad = || ShardError::Form(s.to_string());
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count): (usize, usize) = (
            i.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if count == 0 || index == 0 || index > count {
            return Err(ShardError::Range(s.to_string()));
        }
        Ok(Shard { index, count })
    }
}

/// How a batch runs.
#[derive(Debug, Clone)]
pub struct BatchOptions {
    /// The batch directory: `results.jsonl`, the summary, and `runs/<id>/<k>/`.
    pub dir: PathBuf,
    /// Runs at once, each in its own browser context.
    pub concurrency: usize,
    /// Runs of each task (K).
    pub repeat: usize,
    /// Only this part of the tasks.
    pub shard: Option<Shard>,
    /// Go on with the batch in `dir`: the runs it finished are skipped. Else
    /// `dir` must hold no results yet.
    pub resume: bool,
    /// DevTools URLs of remote browsers to spread the runs over, instead of
    /// one browser seamark launches.
    pub remote: Vec<String>,
    /// Browsers started already (a MiniWoB++ suite's, which read its
    /// episodes in them); else they are started from `agent.browser` and
    /// `remote`, and closed at the end.
    pub pool: Option<Arc<Pool>>,
    /// Each run's options: budgets, policies, browser (its `out` is the run's
    /// own directory, set per run). A task's own `max_steps`, `max_time`,
    /// `schema` and `secrets` take their place for it.
    pub agent: AgentOptions,
}

impl BatchOptions {
    /// Whether the options can run: at least one run at a time and one
    /// attempt, and a shard `I/N` with I from 1 to N.
    pub fn check(&self) -> Result<(), BatchError> {
        if self.concurrency == 0 || self.repeat == 0 {
            return Err(BatchError::Config(
                "concurrency and repeat must be 1 or more".into(),
            ));
        }
        if let Some(s) = self.shard {
            if s.count == 0 || s.index == 0 || s.index > s.count {
                return Err(BatchError::Config(format!(
                    "shard {}/{}: I must be 1 to N",
                    s.index, s.count
                )));
            }
        }
        Ok(())
    }

    /// The runs of the tasks `ids` this batch (its shard) still has to do:
    /// each attempt not among those `done` before.
    pub(super) fn runs_left(&self, ids: &[String], done: &HashSet<(String, usize)>) -> usize {
        ids.iter()
            .enumerate()
            .filter(|(i, _)| self.shard.is_none_or(|s| s.holds(*i)))
            .map(|(_, id)| {
                (1..=self.repeat)
                    .filter(|k| !done.contains(&(id.clone(), *k)))
                    .count()
            })
            .sum()
    }

    /// One run at a time, once per task, into `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            concurrency: 1,
            repeat: 1,
            shard: None,
            resume: false,
            remote: Vec::new(),
            pool: None,
            agent: AgentOptions::default(),
        }
    }
}

/// Makes the model of each run (a run needs one of its own).
pub type BrainMaker = Arc<dyn Fn(&TaskSpec) -> Result<Box<dyn Brain>, BrainError> + Send + Sync>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_reads_as_i_of_n_and_holds_every_nth_task() {
        let shard: Shard = " 2 / 3 ".parse().unwrap();
        assert_eq!(shard, Shard { index: 2, count: 3 });
        let held: Vec<usize> = (0..8).filter(|&p| shard.holds(p)).collect();
        assert_eq!(held, [1, 4, 7]);
    }

    #[test]
    fn a_shard_out_of_range_or_of_another_form_is_refused_with_why() {
        for (text, range) in [("0/3", true), ("4/3", true), ("1/0", true), ("1-3", false)] {
            let err = text.parse::<Shard>().unwrap_err();
            assert_eq!(matches!(err, ShardError::Range(_)), range, "{text}: {err}");
        }
        assert!("x/2"
            .parse::<Shard>()
            .unwrap_err()
            .to_string()
            .contains("1/4"));
    }

    #[test]
    fn the_runs_left_are_the_shards_attempts_not_done_before() {
        let options = BatchOptions {
            repeat: 2,
            shard: Some(Shard { index: 1, count: 2 }),
            ..BatchOptions::new("unused")
        };
        let ids: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let done = HashSet::from([("a".to_string(), 1), ("b".to_string(), 1)]);
        // a and c are this shard's: a's second attempt, c's two.
        assert_eq!(options.runs_left(&ids, &done), 3);
    }

    #[test]
    fn options_with_no_run_at_a_time_do_not_check() {
        let options = BatchOptions {
            concurrency: 0,
            ..BatchOptions::new("unused")
        };
        assert!(matches!(options.check(), Err(BatchError::Config(_))));
        assert!(BatchOptions::new("unused").check().is_ok());
    }
}
