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
pub mod results;
pub mod score;
pub mod served;
pub mod suite_error;
pub mod suites;
pub mod summary;
pub mod task;
pub mod webgames;

use std::collections::HashSet;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};
use tracing::Instrument;

use futures::{Stream, StreamExt};
use tokio::sync::{mpsc, watch, Semaphore};

use crate::agent::{Agent, AgentOptions, Interrupt, LastLook, LearnedSkill, RunResult, RunStatus};
use crate::brain::{Brain, BrainError, Usage};
use crate::browser::{BrowserError, Pool, Session};
use crate::clock::utc_rfc3339;
use crate::journal::Journal;
use crate::safety::{Secret, Secrets};
use crate::schema::AnswerSchema;

pub use export::Export;
pub use results::{RunRecord, RESULTS};
pub use score::Score;
pub use suites::{read_suite, SuiteFormat};
pub use summary::{Summary, SUMMARY_JSON, SUMMARY_MD};
pub use task::{parse_tasks, read_tasks, Check, LineError, LocalFiles, TaskSpec, TasksError};

/// Errors that keep a batch from running. Once it runs, every run's ending,
/// failures included, is a [`RunRecord`].
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
    fn runs_left(&self, ids: &[String], done: &HashSet<(String, usize)>) -> usize {
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

/// Where a batch stands, as progress shows it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    /// Runs planned in this process (finished earlier ones not counted);
    /// for a stream of tasks, those started so far.
    pub planned: usize,
    /// Runs finished so far.
    pub done: usize,
    /// Of those, passed.
    pub passed: usize,
    /// Of those, failed.
    pub failed: usize,
    /// Runs under way.
    pub running: usize,
    /// Tokens spent so far.
    pub tokens: Usage,
    /// USD spent so far, when the model's price is known.
    pub cost_usd: Option<f64>,
}

impl Tally {
    /// Counts a finished run.
    pub fn count(&mut self, record: &RunRecord) {
        self.done += 1;
        if record.passed {
            self.passed += 1;
        } else {
            self.failed += 1;
        }
        self.tokens += record.tokens;
        if let Some(c) = record.cost_usd {
            self.cost_usd = Some(self.cost_usd.unwrap_or(0.0) + c);
        }
    }
}

/// Hears about a batch as it goes (the CLI draws its progress bar from it).
pub trait BatchProgress: Send + Sync {
    /// The plan: runs to do (unknown for a stream of tasks), and runs a
    /// resumed batch had finished already.
    fn planned(&self, _runs: Option<usize>, _finished_before: usize) {}
    /// A run started.
    fn started(&self, _id: &str, _attempt: usize, _tally: &Tally) {}
    /// A run finished (and is in `results.jsonl`).
    fn finished(&self, _record: &RunRecord, _tally: &Tally) {}
    /// Something worth telling that is no run's result (a results line that
    /// could not be read, a run that could not be recorded).
    fn note(&self, _message: &str) {}
}

struct Silent;
impl BatchProgress for Silent {}

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
            progress: Arc::new(Silent),
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
        let (tx, writer) = write_results(shared.clone(), file);
        let total = ids.map(|ids| o.runs_left(&ids, &done_before));
        self.progress.planned(total, done_before.len());
        lock(&shared.tally).planned = total.unwrap_or(0);
        let units = plan(
            tasks,
            o.repeat,
            o.shard,
            done_before.clone(),
            self.progress.clone(),
        );
        let mut interrupt = self.interrupt.take();
        let Started {
            planned,
            mut running,
            mut stopped_by,
        } = start_runs(&shared, units, o.concurrency, &mut interrupt, &tx).await;
        // Runs under way go on to their end, unless the interrupt comes:
        // then they end as interrupted (not recorded: --resume runs them again).
        if stopped_by.is_some() {
            let _ = stop_tx.send(stopped_by.clone());
        }
        let signal = interrupt.filter(|_| stopped_by.is_none());
        let progress = self.progress.as_ref();
        let interrupted_runs =
            wait_for_runs(progress, &mut running, signal, &stop_tx, &mut stopped_by).await;
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

/// Waits for the runs under way to end, counting those that ended
/// interrupted. An interrupt that comes meanwhile (`signal`) stops them
/// and is kept in `stopped_by`.
async fn wait_for_runs(
    progress: &dyn BatchProgress,
    running: &mut tokio::task::JoinSet<bool>,
    mut signal: Option<Interrupt>,
    stop_tx: &watch::Sender<Option<String>>,
    stopped_by: &mut Option<String>,
) -> usize {
    let mut interrupted_runs = 0;
    while !running.is_empty() {
        let joined = match signal.as_mut() {
            Some(s) => tokio::select! {
                j = running.join_next() => Ok(j),
                cause = s.as_mut() => Err(cause),
            },
            None => Ok(running.join_next().await),
        };
        let joined = match joined {
            Ok(joined) => joined,
            Err(cause) => {
                signal = None;
                let _ = stop_tx.send(Some(cause.clone()));
                *stopped_by = Some(cause);
                continue;
            }
        };
        match joined {
            Some(Ok(true)) => interrupted_runs += 1,
            Some(Err(e)) => progress.note(&format!("a run ended without a result: {e}")),
            _ => {}
        }
    }
    interrupted_runs
}

/// The runs started, and why starting stopped early, if it did.
struct Started {
    /// How many were started.
    planned: usize,
    /// The runs, each ending in whether it was interrupted.
    running: tokio::task::JoinSet<bool>,
    /// What interrupted the batch while runs were being started.
    stopped_by: Option<String>,
}

/// Starts each unit as a place among `concurrency` frees, until the units
/// end or the interrupt comes; each run's result goes to `tx`.
async fn start_runs(
    shared: &Arc<Shared>,
    units: impl Stream<Item = Unit> + Send,
    concurrency: usize,
    interrupt: &mut Option<Interrupt>,
    tx: &mpsc::UnboundedSender<(RunRecord, String)>,
) -> Started {
    let mut units = Box::pin(units);
    let semaphore = Arc::new(Semaphore::new(concurrency));
    let mut started = Started {
        planned: 0,
        running: tokio::task::JoinSet::new(),
        stopped_by: None,
    };
    loop {
        // The next run, once a place is free, unless the interrupt comes first.
        let next = async {
            let permit = semaphore.clone().acquire_owned().await.ok()?;
            units.next().await.map(|u| (u, permit))
        };
        let got = match interrupt.as_mut() {
            Some(signal) => tokio::select! {
                n = next => n,
                cause = signal.as_mut() => { started.stopped_by = Some(cause); None }
            },
            None => next.await,
        };
        let Some((unit, permit)) = got else { break };
        started.planned += 1;
        {
            let mut t = lock(&shared.tally);
            t.planned = t.planned.max(started.planned);
            t.running += 1;
            shared.progress.started(&unit.spec.id, unit.attempt, &t);
        }
        let (shared, tx) = (shared.clone(), tx.clone());
        // Each run's span is the batch's child, on whichever thread it runs.
        let span = tracing::Span::current();
        started.running.spawn(async move {
            let out = run_one(&shared, &unit).instrument(span).await;
            drop(permit);
            lock(&shared.tally).running -= 1;
            match out {
                Some(done) => {
                    let _ = tx.send(done);
                    false
                }
                None => true,
            }
        });
    }
    started
}

/// The one writer of results, in the order runs end: a run counts as
/// finished once its line is written. Gives the sender runs' results go to,
/// and the writer, which ends with the records it wrote once every sender
/// is dropped.
fn write_results(
    shared: Arc<Shared>,
    mut file: results::ResultsFile,
) -> (
    mpsc::UnboundedSender<(RunRecord, String)>,
    tokio::task::JoinHandle<Vec<RunRecord>>,
) {
    let (tx, mut rx) = mpsc::unbounded_channel::<(RunRecord, String)>();
    let writer = tokio::spawn(async move {
        let mut new = Vec::new();
        while let Some((record, line)) = rx.recv().await {
            if let Err(e) = file.append(&line) {
                shared.progress.note(&format!(
                    "the result of {} could not be written to {}: {e}",
                    record.name(),
                    file.path().display()
                ));
            }
            let mut t = lock(&shared.tally);
            t.count(&record);
            shared.progress.finished(&record, &t);
            drop(t);
            new.push(record);
        }
        new
    });
    (tx, writer)
}

/// The runs to do, in order: each of the shard's tasks K times, less those
/// finished before. A task whose id cannot name a directory, or came before
/// in the stream, is left out and told to `progress`.
fn plan(
    tasks: impl Stream<Item = TaskSpec> + Send,
    repeat: usize,
    shard: Option<Shard>,
    done: HashSet<(String, usize)>,
    progress: Arc<dyn BatchProgress>,
) -> impl Stream<Item = Unit> + Send {
    let mut seen = HashSet::new();
    tasks
        .enumerate()
        .filter(move |(i, _)| std::future::ready(shard.is_none_or(|s| s.holds(*i))))
        .filter(move |(_, spec)| {
            let why = match task::valid_id(&spec.id) {
                Err(e) => Some(e.to_string()),
                Ok(()) if !seen.insert(spec.id.clone()) => {
                    Some(format!("id {:?} came before", spec.id))
                }
                Ok(()) => None,
            };
            if let Some(why) = &why {
                progress.note(&format!("a task was left out: {why}"));
            }
            std::future::ready(why.is_none())
        })
        .flat_map(move |(position, spec)| {
            let spec = Arc::new(spec);
            let units: Vec<Unit> = (1..=repeat)
                .filter(|k| !done.contains(&(spec.id.clone(), *k)))
                .map(|attempt| Unit {
                    spec: spec.clone(),
                    position,
                    attempt,
                })
                .collect();
            futures::stream::iter(units)
        })
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

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Runs one unit to its record and the record's line (secrets redacted), or
/// `None` when it was interrupted.
async fn run_one(shared: &Shared, unit: &Unit) -> Option<(RunRecord, String)> {
    let spec = &unit.spec;
    let rel = PathBuf::from("runs")
        .join(&spec.id)
        .join(unit.attempt.to_string());
    let run_dir = shared.dir.join(&rel);
    // What an interrupted earlier try left is replaced: it was never recorded.
    if run_dir.exists() {
        let _ = std::fs::remove_dir_all(&run_dir);
    }
    let started = Instant::now();
    let fail = |reason: String, secrets: &Secrets| {
        let wall_time_s = started.elapsed().as_secs_f64();
        let result = RunResult::failed_to_start(reason, run_dir.clone(), wall_time_s);
        Some(record(unit, &rel, &result, FinalLook::default(), secrets))
    };
    let options = match run_options(shared, unit, &run_dir) {
        Ok(o) => o,
        Err(why) => return fail(format!("the task cannot run: {why}"), &Secrets::default()),
    };
    let secrets = options.act.secrets.clone();
    let brain = match (shared.brains)(spec) {
        Ok(b) => b,
        Err(e) => return fail(format!("no model: {e}"), &secrets),
    };
    let look: Arc<Mutex<FinalLook>> = Arc::default();
    let mut builder = Agent::builder()
        .task(spec.task.clone())
        .url(spec.url.clone())
        .brain(brain)
        .options(options)
        .pool(shared.pool.clone())
        .interrupt(stopped(shared.stop.clone()));
    if let Some(js) = &spec.setup {
        builder = builder.setup(js.clone());
    }
    if let Some((judges, images)) = &shared.judges {
        match judges(spec) {
            Ok(b) => builder = builder.judge(crate::judge::Judge::new(b, *images)),
            Err(e) => return fail(format!("no judge model: {e}"), &secrets),
        }
    }
    // A skill is learned from a run that passes its check, known only once
    // the run is scored.
    let learned: LearnedSkill = Arc::default();
    if shared.agent.skills.is_some() {
        builder = builder.learn_into(learned.clone());
    }
    builder = builder.last_look(final_look(
        spec.check.clone().filter(Check::needs_page),
        look.clone(),
    ));
    let result = match builder.build() {
        Ok(agent) => agent.run().await,
        Err(e) => return fail(e.to_string(), &secrets),
    };
    let result = match result {
        Ok(r) => r,
        Err(e) => return fail(e.to_string(), &secrets),
    };
    if result.status == RunStatus::Interrupted {
        return None;
    }
    let seen = std::mem::take(&mut *lock(&look));
    let scored = record(unit, &rel, &result, seen, &secrets);
    keep_verdict(&run_dir, &result, &scored.0, spec.check.as_ref(), &secrets);
    let learned = lock(&learned).take();
    if let (true, Some(dir), Some(skill)) = (scored.0.passed, &shared.agent.skills, learned) {
        if let Err(why) = crate::skill::SkillStore::new(dir).save(&skill) {
            tracing::warn!("run {}: the skill learned was not saved: {why}", spec.id);
        }
    }
    Some(scored)
}

/// Writes a run's verdict into its own journal, as a check record after its
/// last step, and its report again with it: the run's report shows how the
/// batch scored it.
fn keep_verdict(
    run_dir: &Path,
    result: &RunResult,
    scored: &RunRecord,
    check: Option<&Check>,
    secrets: &Secrets,
) {
    let record = crate::records::CheckRecord::new(
        result.steps,
        &scored.verdict.check,
        check.map_or("done", Check::wanted),
        scored.passed,
        scored.verdict.detail.clone(),
    );
    let written = Journal::create(run_dir).and_then(|mut journal| {
        journal.redact(secrets.clone());
        journal.write(&record)
    });
    if let Err(e) = written {
        tracing::warn!(
            "run {}: its verdict was not kept in its journal: {e}",
            scored.id
        );
        return;
    }
    if result.report.is_some() {
        if let Err(e) = crate::report::write(run_dir) {
            tracing::warn!("run {}: its report was not written again: {e}", scored.id);
        }
    }
}

/// What the last look at a run's final page found.
#[derive(Default)]
struct FinalLook {
    /// What the check asked of the page, when it looks at one.
    page: Option<score::PageLook>,
    /// The browser the run was in.
    browser: Option<String>,
}

/// The last look at the final page: the browser it is in and, for a check
/// that needs it, what the check asks of it; kept in `slot`.
fn final_look(check: Option<Check>, slot: Arc<Mutex<FinalLook>>) -> LastLook {
    Box::new(move |session: &Session| {
        Box::pin(async move {
            let page = match &check {
                Some(c) => Some(score::look(session, c).await),
                None => None,
            };
            *lock(&slot) = FinalLook {
                page,
                browser: Some(session.origin().to_string()),
            };
        })
    })
}

/// Resolves once the batch is told to stop, with what stopped it.
async fn stopped(mut stop: watch::Receiver<Option<String>>) -> String {
    loop {
        if let Some(cause) = stop.borrow_and_update().clone() {
            return cause;
        }
        if stop.changed().await.is_err() {
            // The batch is gone without stopping: never interrupt.
            std::future::pending::<()>().await;
        }
    }
}

/// The run's options: the batch's, with the task's own budget, schema and
/// secrets, in its own run directory (downloads in a folder of its own).
fn run_options(shared: &Shared, unit: &Unit, run_dir: &Path) -> Result<AgentOptions, String> {
    let spec = &unit.spec;
    let mut options = shared.agent.clone();
    options.out = Some(run_dir.to_path_buf());
    if let Some(n) = spec.max_steps {
        options.max_steps = n;
    }
    if let Some(s) = spec.max_time {
        options.max_time = Some(std::time::Duration::from_secs_f64(s));
    }
    if let Some(schema) = &spec.schema {
        let schema = AnswerSchema::new(schema.clone()).map_err(|e| format!("schema: {e}"))?;
        options.act.answer_schema = Some(Arc::new(schema));
    }
    if !spec.secrets.is_empty() {
        let own = spec
            .secrets
            .iter()
            .map(|s| s.parse::<Secret>())
            .collect::<Result<Vec<_>, _>>()
            .and_then(|own| options.act.secrets.and(own))
            .map_err(|e| format!("secrets: {e}"))?;
        options.act.secrets = own;
    }
    if let Some(d) = &options.act.download_dir {
        options.act.download_dir = Some(d.join(&spec.id).join(unit.attempt.to_string()));
    }
    if !spec.expect.is_empty() {
        options.expect = spec.expect.clone();
    }
    if let Some(har) = &spec.site {
        options.site = crate::site::SiteUse::Replay(har.into());
    }
    if let Some(clock) = &spec.fixed_clock {
        let replayed = matches!(options.site, crate::site::SiteUse::Replay(_));
        let start = crate::site::ClockStart::parse(clock, replayed).map_err(|e| e.to_string())?;
        options.fixed_clock = Some(start);
    }
    Ok(options)
}

/// How many times a run asked its model: its steps, less those a skill did.
pub fn model_calls(result: &RunResult) -> usize {
    result
        .steps
        .saturating_sub(result.skill.as_ref().map_or(0, |s| s.steps))
}

/// The record of a finished run, and its line with the run's secrets redacted.
fn record(
    unit: &Unit,
    rel: &Path,
    result: &RunResult,
    seen: FinalLook,
    secrets: &Secrets,
) -> (RunRecord, String) {
    let verdict = score::verdict(unit.spec.check.as_ref(), result, seen.page);
    let report = result
        .report
        .as_ref()
        .and_then(|p| p.file_name())
        .map(|name| rel.join(name));
    let record = RunRecord {
        id: unit.spec.id.clone(),
        attempt: unit.attempt,
        position: unit.position,
        task: unit.spec.task.clone(),
        passed: verdict.passed,
        verdict,
        status: result.status,
        reason: result.reason.clone(),
        answer: result.answer.clone(),
        data: result.data.clone(),
        steps: result.steps,
        tokens: result.tokens,
        cost_usd: result.cost_usd,
        wall_time_s: result.wall_time_s,
        model: result.model.clone(),
        run_dir: rel.to_path_buf(),
        report,
        browser: seen.browser,
        downloads: result.downloads.clone(),
        judge: result.judge.clone(),
        finished: utc_rfc3339(SystemTime::now()),
        model_calls: Some(model_calls(result)),
    };
    // The record given back is the one written: secrets redacted. One that
    // no longer reads as a record once redacted (a secret that equals a
    // status word) keeps its numbers and withholds its texts.
    let record = secrets.redacted(&record).unwrap_or_else(|_| {
        let withheld = "(withheld: a secret equals a word of this record)".to_string();
        RunRecord {
            task: secrets.redact(&record.task),
            reason: withheld.clone(),
            answer: None,
            data: None,
            verdict: Score {
                detail: withheld,
                ..record.verdict
            },
            ..record
        }
    });
    let line = serde_json::to_string(&record).unwrap_or_default();
    (record, line)
}
