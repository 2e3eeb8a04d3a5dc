//! Many tasks at once: each run in a browser context of its own in a shared
//! browser (or spread over remote ones), scored by its check, recorded in
//! `results.jsonl` as it ends, and summed up in `summary.json` and
//! `summary.md`. One failure stays one failure: a run whose browser, context
//! or model fails is a failed run, and the batch goes on.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use seamark::batch::{Batch, BatchOptions, TaskSpec};
//!
//! let tasks = seamark::batch::read_tasks("tasks.jsonl".as_ref(), seamark::batch::LocalFiles::InFolder)?;
//! let brains = Arc::new(|_: &TaskSpec| {
//!     seamark::brain::from_model_name("openai/gpt-4o", Default::default())
//! });
//! let outcome = Batch::new(
//!     BatchOptions { concurrency: 4, ..BatchOptions::new("batches/nightly") },
//!     brains,
//! )
//! .run(tasks)
//! .await?;
//! println!("{} of {} passed", outcome.summary.passed, outcome.summary.runs);
//! # Ok(())
//! # }
//! ```

pub mod export;
pub mod fixture;
pub mod miniwob;
mod options;
mod outcome;
mod progress;
pub mod results;
mod run_one;
mod schedule;
pub mod score;
pub mod served;
pub mod suite_error;
pub mod suites;
pub mod summary;
pub mod task;
pub mod webgames;

use std::collections::HashSet;
use std::future::Future;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tracing::Instrument;

use futures::Stream;
use tokio::sync::watch;

use crate::agent::{AgentOptions, Interrupt};
use crate::browser::Pool;

pub use export::Export;
pub use options::{BatchError, BatchOptions, BrainMaker, Shard, ShardError};
pub use outcome::{merge, write_summary, BatchOutcome};
pub use progress::{BatchProgress, Tally};
pub use results::{RunRecord, RESULTS};
pub use run_one::model_calls;
pub use score::Score;
pub use suites::{read_suite, SuiteFormat};
pub use summary::{Summary, SUMMARY_JSON, SUMMARY_MD};
pub use task::{parse_tasks, read_tasks, Check, LineError, LocalFiles, TaskSpec, TasksError};

/// A batch of tasks.
pub struct Batch {
    options: BatchOptions,
    brains: BrainMaker,
    judges: Option<(BrainMaker, usize)>,
    progress: Arc<dyn BatchProgress>,
    interrupt: Option<Interrupt>,
}

/// One run to do: a task, its place in the suite, and which of its K runs.
struct Unit {
    spec: Arc<TaskSpec>,
    position: usize,
    attempt: usize,
}

/// What every run shares.
struct Shared {
    dir: PathBuf,
    pool: Arc<Pool>,
    brains: BrainMaker,
    /// Each run's judge model and the screenshots it sees, when runs are judged.
    judges: Option<(BrainMaker, usize)>,
    agent: AgentOptions,
    progress: Arc<dyn BatchProgress>,
    tally: Mutex<Tally>,
    /// Set at the interrupt, to what ended the batch: running agents end as
    /// interrupted.
    stop: watch::Receiver<Option<String>>,
}

impl Batch {
    /// A batch with these options, each run's model made by `brains`.
    pub fn new(options: BatchOptions, brains: BrainMaker) -> Self {
        Self {
            options,
            brains,
            judges: None,
            progress: Arc::new(progress::Silent),
            interrupt: None,
        }
    }

    /// Judges each run with a model `judges` makes, shown the last `images`
    /// screenshots (see [`crate::judge`]): a task without a check is scored
    /// by its verdict.
    pub fn judge(mut self, judges: BrainMaker, images: usize) -> Self {
        self.judges = Some((judges, images));
        self
    }

    /// Where progress goes.
    pub fn progress(mut self, progress: Arc<dyn BatchProgress>) -> Self {
        self.progress = progress;
        self
    }

    /// A signal (Ctrl-C, SIGTERM or SIGHUP in the CLI) that stops starting
    /// runs and ends those running; the summary of what finished is still
    /// written. It resolves with what ended the batch, which the runs'
    /// reasons name (see [`Interrupt`]).
    pub fn interrupt(mut self, signal: impl Future<Output = String> + Send + 'static) -> Self {
        self.interrupt = Some(Box::pin(signal));
        self
    }

    /// Runs these tasks (checked first: a bad one is an error).
    pub async fn run(self, tasks: Vec<TaskSpec>) -> Result<BatchOutcome, BatchError> {
        let mut ids = HashSet::new();
        for t in &tasks {
            task::valid_id(&t.id).map_err(|e| BatchError::Config(e.to_string()))?;
            if !ids.insert(t.id.clone()) {
                return Err(BatchError::Config(format!(
                    "task id {:?} is used twice",
                    t.id
                )));
            }
        }
        let ids: Vec<String> = tasks.iter().map(|t| t.id.clone()).collect();
        let span = crate::traces::batch_span(Some(ids.len()));
        self.execute(futures::stream::iter(tasks), Some(ids))
            .instrument(span)
            .await
    }

    /// Runs tasks as they come (from a program's own queue) until the
    /// stream ends. A task whose id cannot name a directory, or came before,
    /// is left out with a note to the progress; one that cannot run (a bad
    /// schema or secret) is a failed run that says why.
    pub async fn run_stream(
        self,
        tasks: impl Stream<Item = TaskSpec> + Send,
    ) -> Result<BatchOutcome, BatchError> {
        self.execute(tasks, None)
            .instrument(crate::traces::batch_span(None))
            .await
    }

    /// Runs the tasks; `ids`, when the tasks are known ahead, tells how many
    /// runs there are to do.
    async fn execute(
        mut self,
        tasks: impl Stream<Item = TaskSpec> + Send,
        ids: Option<Vec<String>>,
    ) -> Result<BatchOutcome, BatchError> {
        let started = Instant::now();
        self.options.check()?;
        let o = &self.options;
        let dir = o.dir.clone();
        let (earlier, file) = self.open_dir()?;
        let done_before = results::finished(&earlier);
        let (pool, own_pool) = match &o.pool {
            Some(p) => (p.clone(), false),
            None => (
                Arc::new(Pool::start(&o.agent.browser, &o.remote).await?),
                true,
            ),
        };
        let (stop_tx, stop) = watch::channel(None);
        let shared = Arc::new(Shared {
            dir: dir.clone(),
            pool: pool.clone(),
            brains: self.brains.clone(),
            judges: self.judges.clone(),
            agent: o.agent.clone(),
            progress: self.progress.clone(),
            tally: Mutex::new(Tally::default()),
            stop,
        });
        let (tx, writer) = schedule::write_results(shared.clone(), file);
        let total = ids.map(|ids| o.runs_left(&ids, &done_before));
        self.progress.planned(total, done_before.len());
        lock(&shared.tally).planned = total.unwrap_or(0);
        let units = schedule::plan(
            tasks,
            o.repeat,
            o.shard,
            done_before.clone(),
            self.progress.clone(),
        );
        let mut interrupt = self.interrupt.take();
        let schedule::Started {
            planned,
            mut running,
            mut stopped_by,
        } = schedule::start_runs(&shared, units, o.concurrency, &mut interrupt, &tx).await;
        // Runs under way go on to their end, unless the interrupt comes:
        // then they end as interrupted (not recorded: --resume runs them again).
        if stopped_by.is_some() {
            let _ = stop_tx.send(stopped_by.clone());
        }
        let signal = interrupt.filter(|_| stopped_by.is_none());
        let progress = self.progress.as_ref();
        let interrupted_runs =
            schedule::wait_for_runs(progress, &mut running, signal, &stop_tx, &mut stopped_by)
                .await;
        drop(tx);
        let new = writer.await.unwrap_or_default();
        // What the plan held beyond what started (unknown for a stream, which
        // may never end).
        let not_started = total.map_or(0, |t: usize| t.saturating_sub(planned));
        if own_pool {
            pool.close().await;
        }

        let mut records = earlier;
        records.extend(new);
        let summary = Summary::of(
            &records,
            interrupted_runs,
            not_started,
            // A resumed batch's wall time is not all this process's.
            done_before
                .is_empty()
                .then(|| started.elapsed().as_secs_f64()),
        );
        BatchOutcome::written(dir, records, summary, stopped_by.is_some())
    }

    /// The batch's directory, created, with the results written there
    /// before (told when a line cannot be read) and the results file open
    /// to add to. Results there without `--resume` are an error.
    fn open_dir(&self) -> Result<(Vec<RunRecord>, results::ResultsFile), BatchError> {
        let dir = &self.options.dir;
        let (earlier, problems) = results::read(dir)
            .map_err(|e| BatchError::Dir(format!("cannot read {}: {e}", dir.display())))?;
        for p in &problems {
            self.progress.note(p);
        }
        let written =
            std::fs::read_to_string(dir.join(RESULTS)).is_ok_and(|t| !t.trim().is_empty());
        if !self.options.resume && written {
            return Err(BatchError::Dir(format!(
                "{} holds the results of a batch already: go on with it with --resume {0}, or \
                 choose another directory",
                dir.display()
            )));
        }
        std::fs::create_dir_all(dir)
            .map_err(|e| BatchError::Dir(format!("cannot create {}: {e}", dir.display())))?;
        let file = results::ResultsFile::open(dir).map_err(|e| {
            BatchError::Dir(format!("cannot write {}: {e}", dir.join(RESULTS).display()))
        })?;
        Ok((earlier, file))
    }
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
