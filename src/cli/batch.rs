//! `seamark batch`: many tasks, several at once, each scored by its check;
//! progress on stderr, the summary table on stdout.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use seamark::batch::miniwob::ServedMiniwob;
use seamark::batch::summary::{plural, thousands};
use seamark::batch::webgames;
use seamark::batch::{
    self, Batch, BatchOptions, BatchOutcome, BatchProgress, RunRecord, Shard, Tally, TaskSpec,
};
use seamark::brain;
use seamark::browser::Pool;
use seamark::clock::utc_stamp;
use seamark::journal::slug;
use seamark::safety::{ConfirmPolicy, Confirmer, Hold};

use super::person::TerminalConfirmer;
use super::run::{model_name, CommonArgs, JudgeArgs};
use super::UsageError;

#[derive(Debug, Args)]
pub struct BatchArgs {
    /// The tasks: one JSON object per line, {"id", "task", "url"} and
    /// optionally "check" ({"url_contains": …}, {"text_contains": …},
    /// {"answer_contains": …}, {"answer_regex": …} or {"js": …}),
    /// "max_steps", "max_time", "schema", "secrets", "setup".
    #[arg(
        value_name = "TASKS.jsonl",
        id = "tasks_file",
        required_unless_present_any = ["miniwob", "merge", "suite", "webgames"]
    )]
    tasks_file: Option<PathBuf>,
    /// Let a task's url open any local file. Without it, a tasks file's
    /// tasks open local files only in its own folder, and a suite's none.
    #[arg(long)]
    local_files: bool,
    /// Runs at once, each in a browser context of its own (cookies, storage,
    /// cache and permissions apart) of one browser, or spread over --cdp ones.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = super::at_least_one)]
    concurrency: usize,
    /// Run each task K times: a task passes k/K, and pass^K counts the
    /// tasks that passed all K.
    #[arg(long, value_name = "K", default_value_t = 1, value_parser = super::at_least_one)]
    repeat: usize,
    /// Run only every N-th task from the I-th (1-based), to spread a suite
    /// over machines; join the results with --merge.
    #[arg(long, value_name = "I/N")]
    shard: Option<Shard>,
    /// Go on with the batch in DIR: the runs in its results.jsonl are
    /// skipped, the others (interrupted, never started) run.
    #[arg(long, value_name = "DIR", conflicts_with = "out")]
    resume: Option<PathBuf>,
    /// Join the results of batch directories (shards) into one summary, in
    /// --out (default batches/<time>-merged); nothing runs.
    #[arg(long, value_name = "DIR", num_args = 1.., conflicts_with_all = ["tasks_file", "miniwob", "resume"])]
    merge: Vec<PathBuf>,
    /// Make the tasks from a MiniWoB++ checkout's task pages (served on
    /// 127.0.0.1): the episode started with a fixed seed, its instruction as
    /// the task, its raw reward (above 0) as the check, its time limit kept.
    #[arg(long, value_name = "DIR", conflicts_with = "tasks_file")]
    miniwob: Option<PathBuf>,
    /// Make the tasks from a WebGames folder (its built app in site/, served
    /// on 127.0.0.1, and its tasks.jsonl): each challenge's description and
    /// the request for the password it shows when solved; a run passes when
    /// its answer holds the password.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["tasks_file", "miniwob", "suite", "merge"])]
    webgames: Option<PathBuf>,
    /// A public suite's task file, read as published, its ids kept:
    /// `webvoyager FILE` (JSON lines of web_name, id, ques, web) or
    /// `online-mind2web FILE` (a JSON array of task_id, confirmed_task,
    /// website, reference_length, level). Its tasks have no check: they are
    /// scored by their ending, or by --judge.
    #[arg(
        long,
        num_args = 2,
        value_names = ["SUITE", "FILE"],
        conflicts_with_all = ["tasks_file", "miniwob"]
    )]
    suite: Vec<String>,
    /// After the batch, also write its runs in another suite's layout for
    /// that suite's own judge: `online-mind2web DIR` writes the folders
    /// WebJudge reads (DIR/<task_id>/result.json and trajectory/).
    #[arg(long, num_args = 2, value_names = ["LAYOUT", "DIR"])]
    export: Vec<String>,
    /// With --miniwob or --webgames: only these tasks (comma-separated
    /// names, or WebGames ids).
    #[arg(long = "tasks", value_name = "NAME,…", value_delimiter = ',')]
    miniwob_tasks: Vec<String>,
    /// With --miniwob: seeds 0 to N-1, each an episode (a task of its own).
    #[arg(long, value_name = "N", default_value_t = 1, requires = "miniwob", value_parser = super::at_least_one)]
    seeds: usize,
    /// With --miniwob: each episode's time limit in seconds, instead of the
    /// page's own (10 s for most tasks; a slow model needs more).
    #[arg(long, value_name = "SECONDS", requires = "miniwob")]
    episode_time: Option<f64>,
    /// The model of every run: openai/<model> or anthropic/<model> (else env
    /// SEAMARK_MODEL), as for run.
    #[arg(long, value_name = "PROVIDER/MODEL")]
    model: Option<String>,
    /// A skills folder (as for run, e.g. skills): each task that fits one of
    /// its skills is done from it without the model while the pages fit,
    /// and each run that passes its check is learned into it. Off unless
    /// given.
    #[arg(long, value_name = "DIR")]
    skills: Option<PathBuf>,
    /// Submit the tasks as sessions of this `seamark serve` (its address),
    /// so that every worker of its queue runs them; the scores and summary
    /// come out here as for a batch run here. A task's check goes with its
    /// session as the run's --expect-*; tasks with a setup script, a schema
    /// or a local file cannot go.
    #[arg(long, value_name = "URL", conflicts_with_all = ["miniwob", "resume", "skills", "merge"])]
    serve: Option<String>,
    /// The server's token (else env SEAMARK_TOKEN).
    #[arg(long, value_name = "TOKEN", requires = "serve")]
    token: Option<String>,
    #[command(flatten)]
    judging: JudgeArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub async fn run(args: BatchArgs) -> anyhow::Result<ExitCode> {
    if !args.merge.is_empty() {
        let out = args
            .common
            .out
            .clone()
            .unwrap_or_else(|| default_dir("merged"));
        let outcome = batch::merge(&args.merge, &out).map_err(|e| UsageError(e.to_string()))?;
        return finish(&outcome, args.common.json);
    }
    refuse_what_a_batch_cannot_do(&args)?;
    if let Some(server) = &args.serve {
        return served(&args, server).await;
    }
    let model = model_name(args.model.as_ref())?;
    let http = args.common.http();
    // A model that cannot be made is told once, before anything runs.
    brain::from_model_name(&model, http).map_err(|e| UsageError(e.to_string()))?;
    let brains: batch::BrainMaker =
        Arc::new(move |_: &TaskSpec| brain::from_model_name(&model, http));
    let judges = args.judging.judges(http)?;
    let export = export_of(&args)?;

    let tty = std::io::stderr().is_terminal();
    let bar = tty.then(new_bar);
    let confirmer = (args.common.confirm == ConfirmPolicy::Ask && std::io::stdin().is_terminal())
        .then(|| Arc::new(BarConfirmer(bar.clone())) as Arc<dyn Confirmer>);
    let mut agent = args
        .common
        .options_with(args.common.browser.launch_options()?, confirmer)?;
    agent.out = None;
    agent.skills = args.skills.clone();
    let remote = args.common.browser.remotes().await?;
    let (dir, resume) = batch_dir(&args)?;
    // A tasks file is checked before a browser starts.
    let listed = listed_tasks(&args)?;
    let pool = Arc::new(
        Pool::start(&agent.browser, &remote)
            .await
            .map_err(|e| UsageError(e.to_string()))?,
    );
    // A suite's server lives as long as the batch.
    let (tasks, _served) = tasks_of(&args, listed, &pool, &agent.browser).await?;

    let progress = Arc::new(Term {
        bar,
        concurrency: args.concurrency,
    });
    let options = BatchOptions {
        concurrency: args.concurrency,
        repeat: args.repeat,
        shard: args.shard,
        resume,
        remote,
        pool: Some(pool.clone()),
        agent,
        ..BatchOptions::new(dir)
    };
    let mut batch = Batch::new(options, brains);
    if let Some((judges, images)) = judges {
        batch = batch.judge(judges, images);
    }
    let outcome = batch
        .progress(progress.clone())
        .interrupt(ended_by_a_signal())
        .run(tasks)
        .await;
    pool.close().await;
    if let Some(bar) = &progress.bar {
        bar.finish_and_clear();
    }
    let outcome = outcome.map_err(|e| UsageError(e.to_string()))?;
    if let Some((layout, to)) = export {
        let written = batch::export::write(layout, &outcome.dir, &outcome.records, &to)
            .map_err(|e| anyhow::anyhow!("the export to {} failed: {e}", to.display()))?;
        tell!(
            "seamark: {written} run{} written for its judge in {}",
            plural(written),
            to.display()
        );
    }
    finish(&outcome, args.common.json)
}

/// `--serve URL`: the tasks as sessions of that server.
async fn served(args: &BatchArgs, server: &str) -> anyhow::Result<ExitCode> {
    let tasks = listed_tasks(args)?.unwrap_or_default();
    let cannot: Vec<String> = tasks
        .iter()
        .filter_map(|t| batch::served::unservable(t).map(|why| format!("{}: {why}", t.id)))
        .collect();
    if !cannot.is_empty() {
        return Err(UsageError(format!(
            "--serve: these tasks cannot go to a server:\n  {}",
            cannot.join("\n  ")
        ))
        .into());
    }
    if args.judging.judge.is_some() {
        return Err(UsageError(
            "--judge with --serve: give the judge to the sessions' runs instead (the workers \
             judge with their own keys)"
                .into(),
        )
        .into());
    }
    let (dir, _) = batch_dir(args)?;
    let mut options = args.common.session_options();
    if let Some(model) = &args.model {
        options.insert("model".into(), model.clone().into());
    }
    options.insert("no_skills".into(), true.into());
    let token = args
        .token
        .clone()
        .or_else(|| std::env::var("SEAMARK_TOKEN").ok());
    let client = seamark::coworker::Client::new(server, token)
        .map_err(|e| UsageError(format!("--serve: {e}")))?;
    let progress = Arc::new(Term {
        bar: std::io::stderr().is_terminal().then(new_bar),
        concurrency: 1,
    });
    let outcome = batch::served::run(
        &client,
        tasks,
        batch::served::ServedOptions {
            dir,
            repeat: args.repeat,
            shard: args.shard,
            options,
            poll: Duration::from_millis(300),
        },
        progress.clone(),
        Some(Box::pin(ended_by_a_signal())),
    )
    .await;
    if let Some(bar) = &progress.bar {
        bar.finish_and_clear();
    }
    finish(
        &outcome.map_err(|e| UsageError(e.to_string()))?,
        args.common.json,
    )
}

/// The options a batch refuses before anything starts: an episode time
/// out of range, and what belongs to one browser or one run.
fn refuse_what_a_batch_cannot_do(args: &BatchArgs) -> Result<(), UsageError> {
    if args
        .episode_time
        .is_some_and(|t| !(t > 0.0 && t <= 2_147_483.0))
    {
        return Err(UsageError(
            "--episode-time must be a number of seconds above 0 (at most 2147483)".into(),
        ));
    }
    if args.common.browser.profile.is_some() {
        return Err(UsageError(
            "--profile is one browser's: a batch runs each task in a fresh context (give \
             --storage-state to start every run signed in)"
                .into(),
        ));
    }
    if args.common.storage.save_storage_state.is_some() {
        return Err(UsageError(
            "--save-storage-state is for one run: each run of a batch keeps its own in its \
             run directory"
                .into(),
        ));
    }
    Ok(())
}

/// A suite's server, serving until it is dropped (after the batch).
type Served = Box<dyn Send>;

/// The tasks to run: those listed, or the MiniWoB++ episodes of `--miniwob`,
/// or the challenges of `--webgames`, with the suite's server.
async fn tasks_of(
    args: &BatchArgs,
    listed: Option<Vec<TaskSpec>>,
    pool: &Arc<Pool>,
    browser: &seamark::browser::BrowserOptions,
) -> Result<(Vec<TaskSpec>, Option<Served>), UsageError> {
    if !args.miniwob_tasks.is_empty() && args.miniwob.is_none() && args.webgames.is_none() {
        return Err(UsageError(
            "--tasks goes with --miniwob or --webgames".into(),
        ));
    }
    Ok(match (listed, &args.miniwob, &args.webgames) {
        (Some(tasks), _, _) => (tasks, None),
        (None, Some(checkout), _) => {
            let suite = ServedMiniwob::serve(checkout)
                .await
                .map_err(UsageError::of)?;
            tell!(
                "seamark: reading the MiniWoB++ episodes of {}",
                suite.root.display()
            );
            let episode_time = args.episode_time.map(Duration::from_secs_f64);
            let tasks = suite
                .tasks(
                    &args.miniwob_tasks,
                    args.seeds,
                    episode_time,
                    pool,
                    browser,
                    args.concurrency,
                )
                .await
                .map_err(UsageError::of)?;
            (tasks, Some(Box::new(suite) as Served))
        }
        (None, None, Some(dir)) => {
            let suite = webgames::ServedWebGames::serve(dir)
                .await
                .map_err(UsageError::of)?;
            let tasks = suite.tasks(&args.miniwob_tasks).map_err(UsageError::of)?;
            (tasks, Some(Box::new(suite) as Served))
        }
        (None, None, None) => {
            return Err(UsageError(
                "give a tasks file, --miniwob DIR or --webgames DIR".into(),
            ))
        }
    })
}

/// `--export LAYOUT DIR`, read.
fn export_of(args: &BatchArgs) -> Result<Option<(batch::Export, PathBuf)>, UsageError> {
    Ok(match args.export.as_slice() {
        [layout, dir] => Some((
            layout.parse::<batch::Export>().map_err(UsageError::of)?,
            PathBuf::from(dir),
        )),
        _ => None,
    })
}

/// The batch's directory, and whether it goes on with one (`--resume`):
/// `--out`, else one named after the tasks file or suite.
fn batch_dir(args: &BatchArgs) -> Result<(PathBuf, bool), UsageError> {
    let (dir, resume) = match (&args.resume, &args.common.out) {
        (Some(d), _) => (d.clone(), true),
        (None, Some(d)) => (d.clone(), false),
        (None, None) => {
            let file = args
                .tasks_file
                .clone()
                .or_else(|| args.suite.get(1).map(PathBuf::from));
            let name = match file {
                Some(f) => f
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                None => "miniwob".into(),
            };
            (default_dir(&slug(&name)), false)
        }
    };
    if resume && !dir.join(batch::RESULTS).is_file() {
        return Err(UsageError(format!(
            "{} is not a batch directory (it holds no {}): nothing to resume",
            dir.display(),
            batch::RESULTS
        )));
    }
    super::writable_folder("--out", &dir)?;
    Ok((dir, resume))
}

/// The tasks of a tasks file or a suite's file (none for MiniWoB++).
fn listed_tasks(args: &BatchArgs) -> Result<Option<Vec<TaskSpec>>, UsageError> {
    let local = if args.local_files {
        batch::LocalFiles::Any
    } else {
        batch::LocalFiles::InFolder
    };
    Ok(match (&args.tasks_file, args.suite.as_slice()) {
        (Some(file), _) => {
            Some(batch::read_tasks(file, local).map_err(|e| UsageError(e.to_string()))?)
        }
        (None, [suite, file]) => {
            let suite: batch::SuiteFormat = suite.parse().map_err(UsageError::of)?;
            let file = PathBuf::from(file);
            Some(batch::read_suite(suite, &file, local).map_err(|e| UsageError(e.to_string()))?)
        }
        _ => None,
    })
}

/// The interrupt of a batch: the first SIGINT, SIGTERM or SIGHUP, told.
fn ended_by_a_signal() -> impl std::future::Future<Output = String> + Send + 'static {
    let signals = super::signals::Signals::listen();
    async move {
        let stop = signals.first().await;
        tell!(
            "\nseamark: ended by {}; ending the runs under way and writing the summary",
            stop.name()
        );
        stop.cause().to_string()
    }
}

/// Prints the summary (the table, or JSON) and the exit status it makes.
fn finish(outcome: &BatchOutcome, json: bool) -> anyhow::Result<ExitCode> {
    if json {
        show!("{}", serde_json::to_string(&outcome.summary)?);
    } else {
        let title = format!("seamark batch {}", outcome.dir.display());
        show!("{}", outcome.summary.markdown(&title));
        show!("batch directory: {}", outcome.dir.display());
    }
    let s = &outcome.summary;
    Ok(if outcome.interrupted {
        super::signals::interrupted()
    } else if s.failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `batches/<time>-<name>`.
fn default_dir(name: &str) -> PathBuf {
    PathBuf::from("batches").join(format!("{}-{name}", utc_stamp(SystemTime::now())))
}

/// The bar, drawn once the plan is known.
fn new_bar() -> ProgressBar {
    let bar = ProgressBar::hidden();
    if let Ok(style) = ProgressStyle::with_template("{elapsed:>4} [{bar:20}] {pos}/{len} {msg}") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// Progress on stderr: a bar with done / passed / failed / running and the
/// spend so far, or plain lines when stderr is not a terminal.
struct Term {
    bar: Option<ProgressBar>,
    concurrency: usize,
}

impl Term {
    fn say(&self, line: &str) {
        match &self.bar {
            Some(bar) if !bar.is_hidden() => bar.println(line),
            _ => tell!("{line}"),
        }
    }
}

/// `passed 3 · failed 1 · running 2 · 12,345 tokens · $0.0123`.
fn tally_line(t: &Tally) -> String {
    let cost = t
        .cost_usd
        .map_or_else(|| "cost unknown".to_string(), |c| format!("${c:.4}"));
    format!(
        "passed {} · failed {} · running {} · {} tokens · {cost}",
        t.passed,
        t.failed,
        t.running,
        thousands(t.tokens.input + t.tokens.output)
    )
}

impl BatchProgress for Term {
    fn planned(&self, runs: Option<usize>, finished_before: usize) {
        if finished_before > 0 {
            self.say(&format!(
                "seamark: resuming: {finished_before} run{} finished before {} kept",
                plural(finished_before),
                if finished_before == 1 { "is" } else { "are" }
            ));
        }
        if let Some(n) = runs {
            match &self.bar {
                Some(bar) => {
                    bar.set_length(n as u64);
                    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
                    bar.enable_steady_tick(Duration::from_millis(250));
                }
                None => tell!(
                    "seamark: {n} run{}, {} at once",
                    plural(n),
                    self.concurrency
                ),
            }
        }
    }

    fn started(&self, _id: &str, _attempt: usize, tally: &Tally) {
        if let Some(bar) = &self.bar {
            bar.set_message(tally_line(tally));
        }
    }

    fn finished(&self, r: &RunRecord, tally: &Tally) {
        let line = format!(
            "{} {} {} ({}, {} step{}, {:.1} s){}",
            if r.passed { "✓" } else { "✗" },
            r.name(),
            if r.passed { "passed" } else { "failed" },
            r.status.word(),
            r.steps,
            plural(r.steps),
            r.wall_time_s,
            if r.passed {
                String::new()
            } else {
                format!(": {}", r.verdict.detail)
            }
        );
        match &self.bar {
            Some(bar) => {
                bar.inc(1);
                bar.set_message(tally_line(tally));
                bar.println(line);
            }
            None => tell!(
                "seamark: [{}/{}] {line} · {}",
                tally.done,
                tally.planned.max(tally.done),
                tally_line(tally)
            ),
        }
    }

    fn note(&self, message: &str) {
        self.say(&format!("seamark: note: {message}"));
    }
}

/// Asks at the terminal with the progress bar out of the way.
struct BarConfirmer(Option<ProgressBar>);

impl Confirmer for BarConfirmer {
    fn confirm(&self, hold: &Hold) -> bool {
        match &self.0 {
            Some(bar) => bar.suspend(|| TerminalConfirmer.confirm(hold)),
            None => TerminalConfirmer.confirm(hold),
        }
    }
}
